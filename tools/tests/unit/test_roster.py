#!/usr/bin/env python3
"""The roster and its deadlines (grading/roster.py): each bad line refused on its own, naming its line.

A header that lacks, repeats or misspells a column is refused whole; a line whose id cannot name a
folder, whose id repeats another's (in any case), whose name, email or repository cannot be used,
or whose deadline is not ISO 8601 with an offset (or a zone) is refused with its line number, and
the others are read. Deadlines without an offset are a zone's wall time, never the machine's.
"""
from __future__ import annotations

import datetime
import tempfile
from pathlib import Path

from scalebook.errors import UsageError
from scalebook.grading.roster import canvas_number, parse_when, read_roster, ruby_to_i, without_credentials
from tests.harness import expect, finish

UTC = datetime.timezone.utc


def refused_by(text: str, zone: str | None = None):
    with tempfile.TemporaryDirectory() as temp:
        path = Path(temp) / "roster.csv"
        path.write_bytes(text.encode() if isinstance(text, str) else text)
        return read_roster(path, zone)


def header_error(text: str | bytes) -> str:
    try:
        refused_by(text)
    except UsageError as error:
        return str(error)
    return ""


def main() -> int:
    # Deadlines.
    expect(parse_when("2025-03-01T23:59:00+01:00") == datetime.datetime(2025, 3, 1, 22, 59, tzinfo=UTC),
           "an offset is read as given")
    expect(parse_when("2025-03-01T22:59:00Z") == datetime.datetime(2025, 3, 1, 22, 59, tzinfo=UTC), "Z is UTC")
    for text, words in [("2025-03-01T23:59", "no offset from UTC"), ("2025-03-01", "without a time of day"),
                        ("next friday", "not an ISO 8601")]:
        try:
            parse_when(text)
            expect(False, f"'{text}' is refused")
        except ValueError as error:
            expect(words in str(error) and "deadline" in str(error), f"'{text}' is refused: {error}")
    berlin = parse_when("2025-07-01T23:59:00", "Europe/Berlin")
    expect(berlin.utcoffset() == datetime.timedelta(hours=2) and berlin.astimezone(UTC).hour == 21,
           "with --timezone a time without an offset is that zone's wall time, summer time included")
    winter = parse_when("2025-01-15T23:59:00", "Europe/Berlin")
    expect(winter.utcoffset() == datetime.timedelta(hours=1), "and winter time in winter")
    for text, words in [("2025-03-30T02:30:00", "does not exist"), ("2025-10-26T02:30:00", "happens twice")]:
        try:
            parse_when(text, "Europe/Berlin")
            expect(False, f"{text} in Europe/Berlin is refused")
        except ValueError as error:
            expect(words in str(error), f"{text} in Europe/Berlin is refused: {error}")
    try:
        parse_when("2025-03-01T23:59:00", "Mars/Olympus")
        expect(False, "an unknown zone is refused")
    except UsageError as error:
        expect("Mars/Olympus" in str(error), f"an unknown zone is refused: {error}")

    # Headers: refused whole, naming the file's line 1.
    expect("missing repository" in header_error("id,name,email\nalice,A,a@x\n"), "a missing column is named")
    expect("'dealine'" in header_error("id,name,email,repository,dealine\n"), "a misspelt column is named")
    expect("given twice" in header_error("id,name,email,repository,id\n"), "a repeated column is named")
    expect("line 3: not UTF-8" in header_error(b"id,name,email,repository\na,A,a@x,r\nb,\xff,b@x,r\n"),
           "a roster that is not UTF-8 is refused naming the line")
    students, refused = refused_by("\ufeffID, Name ,email,repository\nalice,Alice,alice@x.org,a.git\n")
    expect([s.id for s in students] == ["alice"] and not refused,
           "a spreadsheet's byte-order mark, capitals and spaces in the header are accepted")

    # Lines: each refused on its own, with its line number.
    roster = ("id,name,email,repository,deadline,section\n"
              "alice,Alice,alice@x.org,a.git,,A1\n"
              "../etc,Eve,eve@x.org,e.git,,\n"
              "ALICE,Alice Two,a2@x.org,a2.git,,\n"
              "bob,,bob@x.org,b.git,,\n"
              "carol,Carol,not-an-email,c.git,,\n"
              "dave,Dave,dave@x.org,--upload-pack=touch /tmp/x,,\n"
              "erin,Erin,erin@x.org,e.git,2025-03-04T12:00:00,\n"
              "frank,Fr\x1bank,frank@x.org,f.git,,\n"
              "\n"
              "grace,Grace,grace@x.org,g.git,2025-03-04T12:00:00+01:00,B2\n"
              "collection.json,Col,col@x.org,c.git,,\n"
              "heidi,Heidi,heidi@x.org\n")
    students, refused = refused_by(roster)
    expect([(s.id, s.line) for s in students] == [("alice", 2), ("grace", 11)],
           f"only the good lines are read, with their line numbers: {[(s.id, s.line) for s in students]}")
    expect(students[1].deadline == datetime.datetime(2025, 3, 4, 11, tzinfo=UTC) and students[1].section == "B2",
           "a student's own deadline (an extension) and section are read")
    reasons = {r.line: r.reason for r in refused}
    for line, words in [(3, "letters, digits"), (4, "also on line 2"), (5, "name is empty"), (6, "not an email"),
                        (7, "starts with '-'"), (8, "no offset from UTC"), (9, "control"), (12, "file collect writes"),
                        (13, "3 fields where the header has 6")]:
        expect(words in reasons.get(line, ""), f"line {line} is refused: {reasons.get(line)}")
    expect(len(refused) == 9, f"nine lines refused ({len(refused)})")
    students, refused = refused_by(roster, "Europe/Berlin")
    expect("erin" in [s.id for s in students], "with a zone, a deadline without an offset is read")

    # Gradebook identifiers: kept as they are, refused where no gradebook could match them (test_importers.py
    # replays the importers on a whole class; these are the rules' edges).
    students, refused = refused_by("id,name,email,repository,section,login,canvas_id\n"
                                   "kim,-Kim,-kim@uni.example,k.git,@lab,+kim,7\n"
                                   "lee,Lee,Lee@Uni.example,l.git,,+KIM,8\n"
                                   "moe,Moe,moe@uni.example,m.git,,moe,12a\n"
                                   "ned,Ned,ned@uni.example,n.git,,ned,7\n"
                                   "ola,Ola,ola@uni.example,o.git,=1,ola,9\n"
                                   "pia,Pia,pia@uni.example,p.git,,12.5.1,10\n")
    reasons = {r.line: r.reason for r in refused}
    expect([(s.id, s.name, s.email, s.section, s.login) for s in students] == [("kim", "-Kim", "-kim@uni.example", "@lab", "+kim")],
           f"an identifier starting with '-', '@' or '+' is kept as it is: {students}")
    for line, words in [(3, "login '+KIM' is also on line 2"), (4, "would read it as user 12"),
                        (5, "canvas_id '7' is also on line 2"), (6, "section '=1' starts with '='"),
                        (7, "would read it as '125.1'")]:
        expect(words in reasons.get(line, ""), f"line {line} is refused: {reasons.get(line)}")
    expect(ruby_to_i(" 42abc") == 42 and ruby_to_i("1_000x") == 1000 and ruby_to_i("x1") == 0 and ruby_to_i("-3") == -3,
           "Ruby's to_i, as Canvas reads its ID column: leading digits, underscores between them, else 0")
    expect(canvas_number("1,234.5") == "1234.5" and canvas_number("12%") == "12%" and canvas_number("a1.5") == "a1.5",
           "Canvas's decimal_comma_to_period: a cell of digits, dots and commas becomes a decimal number")

    expect(without_credentials("https://student:ghp_SECRET@github.com/org/repo.git") == "https://github.com/org/repo.git",
           "a URL's user and token are left out of what reports show")
    expect(without_credentials("git@github.com:org/repo.git") == "git@github.com:org/repo.git",
           "an ssh address is shown as it is")
    return finish("every roster rule holds")


if __name__ == "__main__":
    raise SystemExit(main())
