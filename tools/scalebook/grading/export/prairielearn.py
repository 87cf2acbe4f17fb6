"""PrairieLearn: the scores CSV an instructor uploads, and the external grader's results.json.

scores.csv (`./workbook grade --export prairielearn`): the file PrairieLearn's "Upload question
scores" takes (assessment > Students > Upload), `uid,instance,qid,score_perc,feedback`, a row per
roster student with a graded submission and per question (one, or one per chapter with
--per-chapter). What PrairieLearn does with it (PrairieLearn/PrairieLearn at 88fb855;
tools/tests/grading/importers/prairielearn_upload.py replays it on our files):
- apps/prairielearn/src/lib/csv.ts lines 5-40: csv-parse with the header as column names (lower
  case), a byte-order mark dropped, every value trimmed, '' read as null, empty lines skipped;
- apps/prairielearn/src/lib/score-upload.ts lines 67-80: `instance` read with parseInt, `score_perc`
  with parseFloat; lines 247-300: the row names the instance question of the user whose uid is `uid`,
  of assessment instance `instance`, of question `qid` (a qid starting with '@' is read as
  @sharing_name/qid), else the row is an error (the others go on, lines 82-95); lines 187-193 and
  302-311: score_perc must be a number, feedback becomes the submission's manual feedback;
- apps/prairielearn/src/lib/manualGrading.ts lines 660-666: score_perc is the question's percentage
  (its points are score_perc times its maximum over 100), and lines 240-241: feedback is rendered as
  Markdown (HTML allowed, then sanitised): its Markdown characters are escaped here, so that it shows
  as the text it is.
The uid is the roster's email (PrairieLearn's uid is the institution's login, usually that address);
the instance is 1 (a homework-style assessment has one instance per student).

results.json (write): an external grader's result for one submission (docs/externalGrading.md),
for the autograder route that runs this grader inside PrairieLearn's container: score in [0, 1];
gradable false (with format_errors) only when the grader could not grade the submission, so that
the student is charged no attempt; every test has points and max_points, so that PrairieLearn
shows each test's points. PrairieLearn reads it only from /grade/results/ inside its grading job:
it is not an export an instructor can import.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from ...files import atomic_write
from .common import (Options, column_names, feedback, gradebook, number, points, provenance, said, shown, views,
                     write_rows)
from .grades_csv import safe_cell

SCORES_HEADER = ["uid", "instance", "qid", "score_perc", "feedback"]
INSTANCE = "1"
# A question id as PrairieLearn's questions/ folder names one: path parts of letters, digits, '_', '-', '.'.
QID = re.compile(r"[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*")
MARKDOWN = re.compile(r"([\\`*_{}\[\]<>()#+\-.!|$~&])")

SIZE_LIMIT = 1 << 20        # PrairieLearn's limit for results.json


def results(report: dict, options: Options | None = None) -> dict:
    if report.get("refused"):
        return {"gradable": False, "format_errors": [f"Not graded: {report['refused']}"],
                "message": f"Not graded: {report['refused']}"}
    tests = []
    for test in report["tests"]:
        entry = {"name": test["name"], "description": f"exercise {test['exercise']} ({test['chapter']})",
                 "points": test["points"], "max_points": test["max_points"]}
        if test.get("hidden") and not test["exercise"]:  # the hidden checks of a chapter, counted
            entry["description"] = f"hidden checks of {test['chapter']}"
            entry["message"] = test["name"]
        elif shown(test):
            entry["message"] = test["status"] if test["status"] == "passed" else f"{test['status']}: {test['message']}"
            output = [test["message"]] if test["message"] else []
            if test.get("line"):
                output.append(f"{test['file']}:{test['line']}: {test.get('source_line', '')}")
            if test.get("hint"):
                output.append(f"Hint: {test['hint']}")
            entry["output"] = "\n".join(output)
        else:
            entry["message"] = f"{test['status']}: {test['message']}"
        tests.append(entry)
    maximum = report["max_score"]
    return {"gradable": True, "score": report["score"] / maximum if maximum else 0.0,
            "message": f"{number(report['score'])}/{maximum} points; {provenance(report)}.",
            "tests": tests}


def write(reports: list[dict], folder: Path, options: Options) -> list[Path]:
    """FOLDER/NAME/results.json for each record, as its student may see it (PrairieLearn shows every
    test to the student: the hidden checks by the run's policy); one larger than PrairieLearn's 1 MB
    keeps the score and drops the tests' output."""
    written = []
    for report in views(reports, options):
        data = results(report, options)
        text = json.dumps(data, indent=1, ensure_ascii=True) + "\n"
        if len(text) > SIZE_LIMIT:
            for test in data.get("tests", []):
                test.pop("output", None)
            text = json.dumps(data, ensure_ascii=True) + "\n"
        target = folder / report["submission"] / "results.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, text)
        written.append(target)
    return written


def qid_problems(options: Options) -> list[str]:
    """Why PrairieLearn could not read the question ids given (a sentence each)."""
    wanted = len(column_names(options))
    if len(options.qids) != wanted:
        return [f"--prairielearn-qid: {len(options.qids)} question id{'s' if len(options.qids) != 1 else ''} for "
                f"{wanted} column{'s' if wanted != 1 else ''} ({'one per chapter graded' if options.per_chapter else 'the total'})"]
    problems = []
    for qid in options.qids:
        if qid.startswith("@"):
            problems.append(f"--prairielearn-qid '{qid}': PrairieLearn reads a qid starting with '@' as another course's "
                            "shared question (@sharing_name/qid, score-upload.ts lines 253-257)")
        elif not QID.fullmatch(qid):
            problems.append(f"--prairielearn-qid '{qid}' is not a question id (the question's folder under questions/: "
                            "letters, digits, '_', '-', '.', parts separated by '/')")
    return problems


def markdown_text(text: str) -> str:
    """TEXT as Markdown that shows it as it is: every Markdown and HTML character backslash-escaped."""
    return MARKDOWN.sub(r"\\\1", text)


def score_perc(report: dict, chapter: str | None, maximum: int) -> str:
    """The question's percentage score, to four decimals."""
    return number(round(100 * points(report, chapter) / maximum, 4)) if maximum else "0"


def write_scores(reports: list[dict], path: Path, options: Options) -> list[str]:
    """PATH as PrairieLearn's question scores upload (see above); returns what the terminal says of it.
    Question ids PrairieLearn would misread (qid_problems; ./workbook grade refuses them before
    grading) write nothing: the terminal says why."""
    problems = qid_problems(options)
    if problems:
        path.unlink(missing_ok=True)
        return [f"prairielearn: not written: {'; '.join(problems)}"]
    book = gradebook(views(reports, options), options.students)  # the feedback: the students'
    rows = [SCORES_HEADER]
    for student, report in book.rows:
        for index, (_, chapter, maximum) in enumerate(column_names(options)):
            rows.append([student.email, INSTANCE, options.qids[index], score_perc(report, chapter, maximum),
                         safe_cell(markdown_text(feedback(report, chapter)))])
    write_rows(path, rows)
    return said("prairielearn", path, book)
