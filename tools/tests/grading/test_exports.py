#!/usr/bin/env python3
"""The exports against their formats' documented fields (lms_formats.py), on a hostile class.

Made-up reports (no grading: a second): a student whose messages hold a spreadsheet formula, HTML,
terminal escapes and a bidirectional override, a refused submission, two hidden checks (one passed, one
failed with a message naming its input), a roster whose identifiers start with '-', '@' or '+' (valid:
written as they are), a student with no report and a report with no student. Each export must follow
its format, carry the scores and maxima of the reports and of the kit (not of whatever a report
holds), show a submission's text as text, and show the hidden checks by the policy (grading/hidden.py):
by policy "count" no hidden check's name or message reaches what a student sees, by "names" their
labels and verdicts but no message. Whether the importers accept the gradebook files is
test_importers.py's question (replays of their own code).
"""
from __future__ import annotations

import csv
import io
import json
import tempfile
from pathlib import Path

from scalebook.course import all_chapters
from scalebook.grading.export import write_exports
from scalebook.grading.export.common import Options
from scalebook.grading.roster import Student
from scalebook.verdicts import safe_text
from tests.grading import lms_formats
from tests.harness import expect, finish

CH3, CH4 = "03-attention-scaling", "04-causal-masking"
HOSTILE = "=HYPERLINK(\"http://evil\") <script>alert(1)</script> \x1b[31mred\u202eevil"
SECRET = "the hidden input 4711 gave 0.25"          # a hidden check's message: never for a student
HIDDEN_NAMES = ("4.1 e", "4.1 f")
HIDDEN_LABELS = ("4.1 what e covers", "4.1 what f covers")   # grading/hidden.py: what "names" shows


def test(name: str, chapter: str, exercise: str, status: str, points: int, maximum: int = 1, **more) -> dict:
    return {"name": f"{exercise} {name}", "chapter": chapter, "exercise": exercise, "status": status, "points": points,
            "max_points": maximum, "message": "" if status == "passed" else safe_text(HOSTILE), "file": "x.cpp", **more}


def report(name: str, tests: list[dict], **more) -> dict:
    return {"submission": name, "score": sum(t["points"] for t in tests), "max_score": sum(t["max_points"] for t in tests),
            "seconds": 3.5, "date": "2025-03-02T10:00:00+00:00", "commit": "abc1234", "refused_files": [], "tests": tests,
            **more}


def make_class() -> tuple[list[dict], list[Student], dict[str, int]]:
    alice = report("alice", [test("a", CH3, "3.1", "passed", 1), test("b <i>x</i>", CH3, "3.1", "failed", 0),
                             test("c", CH3, "3.2", "passed", 2, 2), test("d", CH4, "4.1", "failed", 0, hint="<b>hint</b>"),
                             test("e", CH4, "4.1", "passed", 1, hidden=True, label=HIDDEN_LABELS[0]),
                             dict(test("f", CH4, "4.1", "failed", 0, hidden=True, label=HIDDEN_LABELS[1]), message=SECRET)],
                    collected={"commit": "f" * 40, "commit_date": "2025-03-01T20:00:00+00:00",
                               "collected_at": "2025-03-02T00:05:00+00:00", "later_count": 2})
    bob = report("bob", [test("a", CH3, "3.1", "compile_error", 0, line=3, source_line="int x = ;")])
    refused = {**report("carol", []), "refused": "refused: not a folder (symlinks are refused)", "max_score": 9}
    stray = report("zed", [test("a", CH3, "3.1", "passed", 1)])
    students = [Student(2, "alice", "-Alice =A", "-alice@uni.example", "a.git", None, "+A1", "@alice", "101"),
                Student(3, "bob", "+Bob", "bob@uni.example", "b.git", None),
                Student(4, "carol", "Carol", "carol@uni.example", "c.git", None),
                Student(5, "dave", "Dave", "dave@uni.example", "d.git", None)]
    maxima = {CH3: 6, CH4: 3}  # the kit's: more than any report holds
    return [alice, bob, refused, stray], students, maxima


def main() -> int:
    chapters = [c for c in all_chapters() if c.folder in (CH3, CH4)]
    reports, students, maxima = make_class()
    with tempfile.TemporaryDirectory(prefix="scalebook-exports-") as temp:
        out = Path(temp)
        total = Options(chapters, maxima, students, "Attention", ("87568490",), False, "email", qids=("attention",))
        said = write_exports(reports, out, ["gradescope", "prairielearn-results", "canvas", "moodle", "prairielearn"],
                             total)
        expect(any("zed" in line and "left out" in line for line in said)
               and any("carol (its submission was refused), dave (no submission graded)" in line for line in said),
               f"a report no roster student has, and the roster students with nothing graded, are named as left "
               f"out of the gradebooks: {said}")
        gradescope_checks(out / "exports" / "gradescope")
        prairielearn_checks(out / "exports" / "prairielearn-results")
        canvas_checks((out / "exports" / "canvas.csv").read_text(encoding="utf-8"), with_ids=True, per_chapter=False)
        moodle_checks((out / "exports" / "moodle.csv").read_text(encoding="utf-8"), "Email address", per_chapter=False)
        scores_checks((out / "exports" / "prairielearn.csv").read_text(encoding="utf-8"))
        per = Options(chapters, maxima, students, "Attention", ("111", "222"), True, "idnumber")
        write_exports(reports, out / "per", ["canvas", "moodle"], per)
        canvas_checks((out / "per" / "exports" / "canvas.csv").read_text(encoding="utf-8"), with_ids=True, per_chapter=True)
        moodle_checks((out / "per" / "exports" / "moodle.csv").read_text(encoding="utf-8"), "ID number", per_chapter=True)
        scaled_checks(out / "scaled", reports, chapters, maxima, students)
        names = Options(chapters, maxima, students, "Attention", ("87568490",), False, "email", "names",
                        qids=("attention",))
        write_exports(reports, out / "names", ["gradescope", "prairielearn-results", "moodle", "prairielearn"], names)
        names_checks(out / "names" / "exports", reports[0])
        options_checks(out)
    return finish("every export follows its format")


def options_checks(out: Path) -> None:
    """./workbook grade refuses, before grading anything, an export it could not write."""
    import contextlib
    from scalebook.commands.grade import parse_arguments
    roster = out / "roster.csv"
    roster.write_text("id,name,email,repository\nalice,Alice,alice@uni.example,a.git\n")
    for argv, words in [(["--export", "canvas"], "needs --roster"), (["--export", "gradescope,pdf"], "unknown format pdf"),
                        (["--export", "canvas", "--roster", str(roster), "--chapters", "3,4", "--per-chapter",
                          "--assignment-id", "111"], "1 ids for 2 columns")]:
        said = io.StringIO()
        try:
            with contextlib.redirect_stderr(said):
                parse_arguments([*argv, str(out / "alice")])
            refused = False
        except SystemExit:
            refused = True
        expect(refused and words in said.getvalue(), f"grade {' '.join(argv[:2])}...: refused, saying '{words}'")


def gradescope_checks(folder: Path) -> None:
    alice = json.loads((folder / "alice" / "results.json").read_text())
    problems = lms_formats.validate_gradescope(alice)
    expect(not problems, f"Gradescope: alice's results.json follows the format {problems[:3]}")
    expect(alice["score"] == 4.0 and sum(t["score"] for t in alice["tests"]) == 4.0,
           f"Gradescope: the score is the report's and the tests' sum ({alice['score']})")
    expect([t["number"] for t in alice["tests"]] == ["3.1.1", "3.1.2", "3.2.1", "4.1.1", "4.1.2", "4.1.3", "4.hidden"],
           "Gradescope: tests are numbered exercise.check, in order, the hidden checks' count last")
    expect(all(alice.get(k) == "text" for k in ("output_format", "test_output_format", "test_name_format")),
           "Gradescope: output, test output and test names are declared plain text (no HTML or Markdown rendering)")
    failed = alice["tests"][1]
    expect(failed["status"] == "failed" and failed["score"] == 0 and "\\x1b" in failed["output"]
           and "\x1b" not in failed["output"] and "\\u202e" in failed["output"],
           f"Gradescope: a failed check's output is the message as safe text: {failed['output'][:90]!r}")
    hinted = alice["tests"][3]
    expect("Hint: <b>hint</b>" in hinted["output"], "Gradescope: a failed check's output carries the exercise's hint")
    hidden, failed_hidden, counted = alice["tests"][4], alice["tests"][5], alice["tests"][6]
    expect(hidden["visibility"] == failed_hidden["visibility"] == "hidden" and hidden["score"] == 1.0
           and SECRET in failed_hidden["output"],
           "Gradescope (count): each hidden check has Gradescope's visibility hidden, its score and, for instructors, "
           "its output")
    student_sees = json.dumps([t for t in alice["tests"] if t["visibility"] != "hidden"]) + alice["output"]
    expect(counted["visibility"] == "visible" and counted["score"] == counted["max_score"] == 0
           and counted["status"] == "failed" and "2 further checks" in counted["output"] and "1 passed" in counted["output"]
           and not any(n in student_sees for n in HIDDEN_NAMES) and SECRET not in student_sees,
           f"Gradescope (count): a visible test without points counts the chapter's hidden checks; no hidden name or "
           f"message in what a student sees: {counted}")
    expect(alice["output"].startswith("4/7 points"),
           f"Gradescope (count): the visible output states the total, hidden checks' points included, as the count "
           f"policy shows them (Gradescope alone would hide a total while a test is hidden): {alice['output'][:40]!r}")
    expect("f" * 12 in alice["output"] and "2 later commit" in alice["output"],
           "Gradescope: the output names the collected commit and the later commits")
    bob = json.loads((folder / "bob" / "results.json").read_text())
    expect("x.cpp:3: int x = ;" in bob["tests"][0]["output"], "Gradescope: a compile error shows the file, line and code")
    carol = json.loads((folder / "carol" / "results.json").read_text())
    expect(not lms_formats.validate_gradescope(carol) and carol["score"] == 0.0 and "symlinks are refused" in carol["output"],
           "Gradescope: a refused submission scores 0 and says why")


def prairielearn_checks(folder: Path) -> None:
    text = (folder / "alice" / "results.json").read_text()
    problems = lms_formats.validate_prairielearn(text)
    expect(not problems, f"PrairieLearn: alice's results.json follows the format {problems[:3]}")
    alice = json.loads(text)
    expect(alice["gradable"] is True and abs(alice["score"] - 4 / 7) < 1e-12,
           f"PrairieLearn: score is points over the maximum, in [0, 1] ({alice['score']})")
    expect(all("points" in t and "max_points" in t for t in alice["tests"]), "PrairieLearn: every test has points and max_points")
    counted = alice["tests"][-1]
    expect(len(alice["tests"]) == 5 and counted["points"] == 1 and counted["max_points"] == 2
           and "1 of 2 passed" in counted["message"] and not any(n in text for n in HIDDEN_NAMES)
           and SECRET not in text and HOSTILE not in text,
           f"PrairieLearn (count): the hidden checks are one test, their points and a count; no name, no message, and "
           f"no raw hostile text: {counted}")
    carol_text = (folder / "carol" / "results.json").read_text()
    carol = json.loads(carol_text)
    expect(not lms_formats.validate_prairielearn(carol_text) and carol["gradable"] is False and carol["format_errors"],
           "PrairieLearn: a refused submission is not gradable (no attempt charged) and says why in format_errors")


def canvas_checks(text: str, with_ids: bool, per_chapter: bool) -> None:
    what = "per chapter" if per_chapter else "total"
    problems = lms_formats.validate_canvas(text, 2 if per_chapter else 1, with_ids)
    expect(not problems, f"Canvas ({what}): follows the gradebook format {problems[:3]}")
    rows = list(csv.reader(io.StringIO(text)))
    header, possible, body = rows[0], rows[1], rows[2:]
    if per_chapter:
        expect(header[5:] == [f"Attention {CH3} (111)", f"Attention {CH4} (222)"] and possible[5:] == ["6", "3"],
               f"Canvas (per chapter): a column per chapter with its id, the kit's maxima: {header[5:]} {possible[5:]}")
        expect(body[0][5:] == ["3", "1"], f"Canvas (per chapter): alice's chapter points {body[0][5:]}")
    else:
        expect(header[5:] == ["Attention (87568490)"] and possible[5:] == ["9"],
               f"Canvas: one column 'NAME (ID)', points possible the kit's total: {header[5:]} {possible[5:]}")
        expect(body[0][5:] == ["4"], f"Canvas: alice's total {body[0][5:]}")
    expect([r[2] for r in body] == ["alice", "bob"],
           "Canvas: one row per roster student with a graded submission, in roster order, the id as SIS User ID "
           "(no row for a refused submission, none for a student without one: an empty cell would clear Canvas's "
           "grade; no stray report)")
    expect(body[0][:5] == ["-Alice =A", "101", "alice", "@alice", "+A1"],
           f"Canvas: the roster's identifiers joined, written as they are (a leading apostrophe would make them "
           f"match nobody): {body[0][:5]}")


def moodle_checks(text: str, key: str, per_chapter: bool) -> None:
    columns = 2 if per_chapter else 1
    problems = lms_formats.validate_moodle(text, columns)
    expect(not problems, f"Moodle ({key}): follows the import format {problems[:3]}")
    rows = list(csv.reader(io.StringIO(text)))
    expect(rows[0][0] == key and [r[0] for r in rows[1:]] == (
        ["-alice@uni.example", "bob@uni.example"] if key == "Email address" else ["alice", "bob"]),
        f"Moodle: keyed by {key} as the roster has it, one row per roster student with a graded submission")
    alice = rows[1]
    expect(alice[1] == ("3" if per_chapter else "4"), f"Moodle: alice's grade {alice[1]}")
    said = " | ".join(alice[2::2])
    expect("3.1 b &lt;i&gt;x&lt;/i&gt; (failed)" in alice[2] and "4.1 d (failed)" in said
           and not any(n in said for n in HIDDEN_NAMES) and SECRET not in said and "hidden checks: 1 of 2 passed" in said,
           f"Moodle: feedback names the checks not passed, markup as entities, the hidden ones as a count: {said[:300]!r}")
    expect(len(rows) == 3, "Moodle: no row for a refused submission or none (Moodle commits '' as a grade of NULL, "
                           "which would clear a grade entered by hand)")


def scores_checks(text: str) -> None:
    """PrairieLearn's question scores upload: a row per graded roster student, the percentage, the
    feedback as Markdown that shows it as text; by policy "count", no hidden check named."""
    rows = list(csv.reader(io.StringIO(text)))
    expect(rows[0] == ["uid", "instance", "qid", "score_perc", "feedback"] and [r[:3] for r in rows[1:]]
           == [["-alice@uni.example", "1", "attention"], ["bob@uni.example", "1", "attention"]],
           f"PrairieLearn's scores: uid (the roster's email), instance 1, the qid, for each graded student: {rows[:3]}")
    expect(abs(float(rows[1][3]) - 400 / 9) < 1e-3 and rows[2][3] == "0",
           f"PrairieLearn's scores: score_perc is the points over the kit's maximum, in percent: {rows[1][3]}, {rows[2][3]}")
    expect("3\\.1 b \\<i\\>x\\</i\\> \\(failed\\)" in rows[1][4] and "hidden checks: 1 of 2 passed" in rows[1][4]
           and not any(n in text for n in HIDDEN_NAMES) and SECRET not in text,
           f"PrairieLearn's scores (count): feedback's Markdown and HTML escaped, the hidden checks as a count: "
           f"{rows[1][4][:160]!r}")


def scaled_checks(out: Path, reports: list[dict], chapters, maxima: dict, students) -> None:
    """--scale-to 100: each column out of 100, the points scaled and rounded to two decimals."""
    options = Options(chapters, maxima, students, "Attention", ("111", "222"), True, "email", scale_to=100.0)
    write_exports(reports, out, ["canvas", "moodle"], options)
    canvas = list(csv.reader(io.StringIO((out / "exports" / "canvas.csv").read_text(encoding="utf-8"))))
    moodle = list(csv.reader(io.StringIO((out / "exports" / "moodle.csv").read_text(encoding="utf-8"))))
    expect(canvas[1][5:] == ["100", "100"] and canvas[2][5:] == ["50", "33.33"] and moodle[1][1:4:2] == ["50", "33.33"],
           f"--scale-to 100: points possible 100 a column, alice's 3 of 6 and 1 of 3 as 50 and 33.33: "
           f"{canvas[1][5:]} {canvas[2][5:]} {moodle[1][1:4:2]}")


def names_checks(folder: Path, record: dict) -> None:
    """Policy "names": each hidden check by its label and verdict, never its name or message."""
    alice = json.loads((folder / "gradescope" / "alice" / "results.json").read_text())
    hidden = [t for t in alice["tests"] if "hidden" in t["tags"]]
    expect(not lms_formats.validate_gradescope(alice) and [t["name"] for t in hidden] == list(HIDDEN_LABELS)
           and all(t["visibility"] == "visible" for t in hidden) and [t["status"] for t in hidden] == ["passed", "failed"]
           and SECRET not in json.dumps(alice) and not any(f'"{n}"' in json.dumps(alice) for n in HIDDEN_NAMES),
           f"Gradescope (names): each hidden check visible by label, status and score, no message: {hidden}")
    text = (folder / "prairielearn-results" / "alice" / "results.json").read_text()
    shown = [t for t in json.loads(text)["tests"] if t["name"] in HIDDEN_LABELS]
    expect(not lms_formats.validate_prairielearn(text) and len(shown) == 2 and SECRET not in text
           and shown[1]["points"] == 0 and shown[1]["max_points"] == 1,
           f"PrairieLearn (names): the hidden checks by label and points, no message: {shown}")
    said = (folder / "moodle.csv").read_text(encoding="utf-8")
    expect(f"{HIDDEN_LABELS[1]} (failed)" in said and SECRET not in said,
           f"Moodle (names): feedback labels the hidden check not passed, without its message")
    said = (folder / "prairielearn.csv").read_text(encoding="utf-8")
    expect("4\\.1 what f covers \\(failed\\)" in said and SECRET not in said,
           f"PrairieLearn's scores (names): feedback labels the hidden check not passed, without its message")
    from scalebook.grading.hidden import student_view
    from scalebook.grading.export.junit import write_junit
    for policy in ("count", "names"):
        junit = folder / f"junit-{policy}.xml"
        write_junit(student_view(record, policy), junit)
        xml = junit.read_text()
        expect(SECRET not in xml and not any(f'"{n}"' in xml for n in HIDDEN_NAMES)
               and (all(n in xml for n in HIDDEN_LABELS) if policy == "names" else not any(n in xml for n in HIDDEN_LABELS)),
               f"JUnit ({policy}): the hidden checks {'by label' if policy == 'names' else 'as a count'}, no message")


if __name__ == "__main__":
    raise SystemExit(main())
