"""The class roster: a CSV of students, each line checked and refused on its own, deadlines in ISO 8601.

The roster `./workbook collect` and `./workbook grade --roster` read: a UTF-8 CSV whose header is
`id,name,email,repository`, optionally followed by `deadline` (a student's own deadline, for an
extension) and by the columns an LMS export may want (`section`, `login`, `canvas_id`), in any
order. A header that lacks a required column, repeats one or names an unknown one is refused
whole (a typo such as `dealine` would otherwise drop every extension silently). A line with a
problem (an id that cannot be a folder's name, a duplicate, an empty name, a repository that
could be read as an option, a deadline that is not ISO 8601) is refused on its own, naming its line
number; the other students go on.

The columns a gradebook matches students by are identifiers: the exports write them as they are,
never rewritten, so a line is refused here when its value could match nobody, or the wrong student,
in the LMS that reads it (export/canvas.py, export/moodle.py and export/prairielearn.py cite the
importers' code), or when a spreadsheet would compute something from it (export/grades_csv.py's
formula rule): an email Moodle could not hold (PHP's FILTER_VALIDATE_EMAIL, which Moodle's
validate_email uses), a canvas_id that is not Canvas's numeric user id (Canvas reads the column with
Ruby's to_i, so '1O05' would be user 1), a login Canvas's CSV reader would rewrite as a number, a
name Canvas would take for its "Points Possible" row, and an email, login or canvas_id that another
line has too (compared without case, as Moodle compares emails).

Deadlines: `2025-03-01T23:59:00+01:00` or `...Z` is an instant. A time without an offset means
nothing by itself (the machine that collects may be in another zone than the course), so it is
refused unless a zone is given (`--timezone Europe/Berlin`): then it is that zone's wall-clock time,
daylight saving included, and a time that zone skips or repeats (the hour the clocks change) is
refused as ambiguous. A date without a time is refused (which end of the day?).
"""
from __future__ import annotations

import csv
import datetime
import io
import re
import urllib.parse
from pathlib import Path
from typing import NamedTuple

from ..errors import UsageError
from ..verdicts import safe_text
from .export.grades_csv import formula_problem
from .intake import NAME

REQUIRED = ("id", "name", "email", "repository")
OPTIONAL = ("deadline", "section", "login", "canvas_id")
# Files `collect` writes beside the submission folders: no student may be named like them.
COLLECTION_FILES = ("collection.json", "collection.txt")
ROSTER_LIMIT = 16 << 20          # a roster larger than 16 MiB is not a roster


class Student(NamedTuple):
    line: int                    # its line in the roster file (the header is line 1)
    id: str                      # the gradebook's id, and the submission folder's name
    name: str
    email: str
    repository: str              # a path or any URL git can fetch
    deadline: datetime.datetime | None   # this student's own deadline (an extension), aware
    section: str = ""
    login: str = ""
    canvas_id: str = ""


class Refused(NamedTuple):
    line: int
    id: str                      # as written (safe_text), or "" when the line has none
    reason: str


def parse_when(text: str, zone: str | None = None, what: str = "deadline") -> datetime.datetime:
    """TEXT (ISO 8601, a date and a time) as an aware datetime. Without an offset it is ZONE's wall
    time (an IANA name such as Europe/Berlin); without ZONE it is refused. Raises ValueError naming
    WHAT and the problem."""
    text = text.strip()
    if re.fullmatch(r"\d{4}-?\d{2}-?\d{2}", text):
        raise ValueError(f"{what} '{text}' is a date without a time of day: write e.g. {text}T23:59:00+01:00")
    try:
        when = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{what} '{safe_text(text, 60)}' is not an ISO 8601 date and time "
                         "(e.g. 2025-03-01T23:59:00+01:00 or 2025-03-01T22:59:00Z)") from None
    if when.tzinfo is not None:
        return when
    if not zone:
        raise ValueError(f"{what} '{text}' has no offset from UTC: add one (e.g. {text}+01:00 or {text}Z), "
                         "or give --timezone ZONE to read every time without an offset in that zone")
    tz = time_zone(zone)
    first, second = when.replace(tzinfo=tz, fold=0), when.replace(tzinfo=tz, fold=1)
    if first.astimezone(datetime.timezone.utc).astimezone(tz).replace(tzinfo=None) != when:
        raise ValueError(f"{what} '{text}' does not exist in {zone} (the clocks skip it): add an offset")
    if first.utcoffset() != second.utcoffset():
        raise ValueError(f"{what} '{text}' happens twice in {zone} (the clocks go back then): add an offset")
    return first


def time_zone(zone: str) -> datetime.tzinfo:
    """The IANA zone ZONE (from the system's tzdata), or a UsageError naming it."""
    import zoneinfo
    try:
        return zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise UsageError(f"--timezone: no time zone '{safe_text(zone, 60)}' (an IANA name such as "
                         "Europe/Berlin or America/New_York; Debian's tzdata holds them)") from None


def without_credentials(repository: str) -> str:
    """REPOSITORY as reports may show it: a URL's user and password (a token) left out."""
    try:
        parts = urllib.parse.urlsplit(repository)
    except ValueError:
        return safe_text(repository, 300)
    if parts.scheme and parts.netloc and "@" in parts.netloc:
        host = parts.netloc.rsplit("@", 1)[1]
        repository = urllib.parse.urlunsplit(parts._replace(netloc=host))
    return safe_text(repository, 300)


def id_problem(student_id: str) -> str | None:
    """Why STUDENT_ID cannot name a submission folder, or None: grading's rule for a submission's name
    (letters, digits, '.', '_', '-', starting with a letter or digit, at most 64), and not a file
    collect writes beside the folders."""
    if not NAME.match(student_id):
        return ("an id must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit "
                "(it names the student's submission folder)")
    if student_id.lower() in COLLECTION_FILES:
        return f"'{student_id}' is the name of a file collect writes"
    return None


def roster_text(path: Path) -> str:
    """The roster file's text: at most ROSTER_LIMIT bytes of UTF-8 (a spreadsheet's byte-order mark
    dropped), or UsageError naming the file and why."""
    try:
        data = path.read_bytes()[:ROSTER_LIMIT + 1]
    except OSError as error:
        raise UsageError(f"roster {path}: cannot be read ({error.strerror})") from None
    if len(data) > ROSTER_LIMIT:
        raise UsageError(f"roster {path}: larger than {ROSTER_LIMIT >> 20} MiB")
    try:
        return data.decode("utf-8-sig")  # a spreadsheet's byte-order mark is not part of the header
    except UnicodeDecodeError as error:
        line = data[:error.start].count(b"\n") + 1
        raise UsageError(f"roster {path}, line {line}: not UTF-8 (save the roster as CSV UTF-8)") from None


def roster_columns(path: Path, header: list[str] | None) -> list[str]:
    """The header's column names, lower case, or UsageError for an empty file, an unknown, missing
    or repeated column."""
    if not header:
        raise UsageError(f"roster {path}: empty (the first line must be the header id,name,email,repository)")
    columns = [h.strip().lower() for h in header]
    unknown = [c for c in columns if c not in REQUIRED + OPTIONAL]
    missing = [c for c in REQUIRED if c not in columns]
    repeated = sorted({c for c in columns if columns.count(c) > 1})
    if unknown or missing or repeated:
        problems = ([f"unknown column{'s' if len(unknown) > 1 else ''} {', '.join(repr(safe_text(c, 40)) for c in unknown)}"]
                    if unknown else []) + ([f"missing {', '.join(missing)}"] if missing else []) + \
                   ([f"{', '.join(repeated)} given twice"] if repeated else [])
        raise UsageError(f"roster {path}, line 1: {'; '.join(problems)} (the header is id,name,email,repository, "
                         f"then optionally {', '.join(OPTIONAL)})")
    return columns


def read_roster(path: Path, zone: str | None = None,
                deadlines: bool = True) -> tuple[list[Student], list[Refused]]:
    """The students of the roster at PATH and the lines refused (each with its line number and why).
    DEADLINES False: the deadline column is not read (grading needs no deadline). A header, an
    encoding or a file that is not a roster raises UsageError naming the file."""
    rows = csv.reader(io.StringIO(roster_text(path), newline=""), strict=True)
    try:
        header = next(rows, None)
    except csv.Error as error:
        raise UsageError(f"roster {path}, line 1: {error}") from None
    columns = roster_columns(path, header)
    students, refused, seen = [], [], {}
    keys: dict[tuple[str, str], int] = {}  # (column, value without case) -> its first line
    try:
        for row in rows:
            line = rows.line_num
            if not any(cell.strip() for cell in row):
                continue  # a blank line
            if len(row) != len(columns):
                refused.append(Refused(line, "", f"{len(row)} fields where the header has {len(columns)}"))
                continue
            cells = {c: v.strip() for c, v in zip(columns, row)}
            student_id = cells["id"]
            problem = id_problem(student_id)
            if problem is None and student_id.lower() in seen:
                problem = f"the id '{student_id}' is also on line {seen[student_id.lower()]} (ids are compared without case)"
            if problem is None:
                seen[student_id.lower()] = line
                problem = cells_problem(cells) or repeated_key(cells, line, keys)
            deadline = None
            if problem is None and deadlines and cells.get("deadline"):
                try:
                    deadline = parse_when(cells["deadline"], zone)
                except ValueError as error:
                    problem = str(error)
            if problem:
                refused.append(Refused(line, safe_text(student_id, 70), problem))
                continue
            students.append(Student(line, student_id, cells["name"], cells["email"], cells["repository"], deadline,
                                    cells.get("section", ""), cells.get("login", ""), cells.get("canvas_id", "")))
    except csv.Error as error:
        raise UsageError(f"roster {path}, line {rows.line_num}: {error}") from None
    return students, refused


def cells_problem(cells: dict[str, str]) -> str | None:
    """Why a roster line's name, email, repository or gradebook identifiers cannot be used, or None."""
    for column, value in cells.items():
        if safe_text(value, 10_000, one_line=False) != value or any(c in value for c in "\t\r\n"):
            return f"the {column} holds a line break, a tab, or a control or invisible formatting character"
    if not cells["name"]:
        return "the name is empty"
    if not re.fullmatch(r"[^@\s]+@[^@\s]+", cells["email"]):
        return f"'{safe_text(cells['email'], 80)}' is not an email address"
    repository = cells["repository"]
    if not repository:
        return "the repository is empty"
    if repository.startswith("-"):
        return "the repository starts with '-' (git would read it as an option)"
    return identifier_problem(cells)


# Moodle keeps only the addresses its validate_email accepts (lib/weblib.php: PHPMailer's
# validateAddress, whose default is PHP's filter_var(FILTER_VALIDATE_EMAIL)); this is the common
# part of that rule: a dot-atom before '@' (no quoted local part), a domain of letter-or-digit
# labels with at least one dot and a top-level label that starts with a letter. Every address it
# accepts, PHP accepts too (tools/tests/grading/importers/moodle_import.php checks the class's).
_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LABEL = r"[A-Za-z0-9]+(?:-+[A-Za-z0-9]+)*"
MOODLE_EMAIL = re.compile(rf"(?=.{{1,254}}$)(?=[^@]{{1,64}}@){_ATEXT}(?:\.{_ATEXT})*@(?:{_LABEL}\.)+"
                          r"[A-Za-z][A-Za-z0-9]*(?:-+[A-Za-z0-9]+)*")
CANVAS_ID = re.compile(r"0*[1-9][0-9]{0,19}")  # what to_i reads as one user, whole
# Canvas's importer reads every cell through CSV::Converters[:decimal_comma_to_period]
# (app/models/gradebook_importer.rb, lines 110-124): a cell of digits, dots and commas is rewritten.
CANVAS_NUMBER_CELL = re.compile(r"-?[0-9.,]+%?")
KEY_COLUMNS = ("email", "login", "canvas_id")  # one student each: a repeat is refused


def canvas_number(cell: str) -> str:
    """CELL as Canvas's CSV converter decimal_comma_to_period leaves it (gradebook_importer.rb 110-124:
    the last part after a comma or dot is the decimals, the parts before it are joined)."""
    if not CANVAS_NUMBER_CELL.fullmatch(cell):
        return cell
    parts = re.split(r"[,.]", cell)
    last = parts.pop()
    return last if not parts else "".join(parts) + "." + last


def ruby_to_i(text: str) -> int:
    """What Ruby's String#to_i gives for TEXT (its leading whitespace, sign and digits; 0 for none):
    how Canvas reads the ID column (gradebook_importer.rb line 559, `@all_students[student_id.to_i]`)."""
    found = re.match(r"\s*([+-]?\d+(?:_\d+)*)", text)
    return int(found.group(1).replace("_", "")) if found else 0


def identifier_problem(cells: dict[str, str]) -> str | None:
    """Why a line's gradebook identifiers could match nobody or the wrong student, or a spreadsheet
    would compute something from one of them (see the module's docstring), or None."""
    for column in ("name", "email", "section", "login", "canvas_id"):
        problem = formula_problem(cells.get(column, ""))
        if problem:
            return f"the {column} '{safe_text(cells[column], 80)}' {problem} (gradebooks get it as it is)"
    email = cells["email"]
    if not MOODLE_EMAIL.fullmatch(email):
        return (f"'{safe_text(email, 80)}' is not an address Moodle accepts (letters, digits and "
                "!#$%&'*+/=?^_`{|}~- in dot-separated parts, '@', then a domain with a dot): Moodle could "
                "match no user with it")
    canvas_id = cells.get("canvas_id", "")
    if canvas_id and not CANVAS_ID.fullmatch(canvas_id):
        return (f"the canvas_id '{safe_text(canvas_id, 40)}' is not Canvas's user id (a whole number, as Canvas's "
                f"gradebook export shows it in its ID column): Canvas would read it as user {ruby_to_i(canvas_id)}")
    login = cells.get("login", "")
    if login and canvas_number(login) != login:
        return (f"the login '{safe_text(login, 80)}' is a number to Canvas's CSV reader, which would read it as "
                f"'{canvas_number(login)}' and match no SIS Login ID")
    if "Points Possible" in cells["name"]:
        return ("the name holds 'Points Possible': Canvas takes a row whose first cell holds it for the "
                "points possible of each assignment, not for a student")
    return None


def repeated_key(cells: dict[str, str], line: int, keys: dict[tuple[str, str], int]) -> str | None:
    """Why a line's email, login or canvas_id is another line's too (compared without case), or None;
    otherwise the line's keys are noted in KEYS."""
    for column in KEY_COLUMNS:
        value = cells.get(column, "").lower()
        if value and (column, value) in keys:
            return (f"the {column} '{safe_text(cells[column], 80)}' is also on line {keys[(column, value)]} "
                    "(a gradebook would give both lines' grades to one student)")
    for column in KEY_COLUMNS:
        if cells.get(column):
            keys[(column, cells[column].lower())] = line
    return None
