"""Gradescope's results.json for one submission (autograder_samples docs/specs.md): the autograder's file.

Gradescope reads only /autograder/results/results.json, written by run_autograder inside its
container ("This must be produced as a result of executing run_autograder", specs.md); it imports
no other results file. So this is written for run_autograder (grading/autograder.py runs
`./workbook grade --export gradescope` and copies DIR/exports/gradescope/NAME/results.json there),
not offered to instructors as a gradebook export.

Every text field is declared plain text (output_format, test_output_format, test_name_format
"text"), so that nothing a submission wrote is read as HTML or Markdown on Gradescope's page.
"""
from __future__ import annotations

import json
from pathlib import Path

from ...files import atomic_write
from ..hidden import WITHHELD, shown_name, student_view
from .common import Options, number, provenance


def results(report: dict, options: Options | None = None) -> dict:
    """REPORT (a record) as Gradescope's results.json: score, execution_time, output, the text formats,
    and a test per check (name, number, score, max_score, status, output, visibility, tags). The hidden
    checks, by the run's policy (grading/hidden.py): "names", each visible with its label, status and
    points, its output withheld; "count", each with Gradescope's visibility "hidden" (its whole output
    for instructors; Gradescope shows a student no hidden test), and per chapter one visible test
    without points saying how many ran and passed and their points together. Gradescope itself hides
    the total it would add up from the tests while one is hidden ("If test cases are hidden, students
    will not be able to see their total score", specs.md), but the count policy shows the hidden
    checks' points: so the visible output states the total, the score the student is given."""
    policy = options.hidden_policy if options else "count"
    # No execution_time (optional in the spec): it would tell how long the hidden checks ran (grading/hidden.py).
    base = {"output_format": "text", "test_output_format": "text",
            "test_name_format": "text", "stdout_visibility": "hidden",
            "extra_data": {"submission": report["submission"], "grader_commit": report.get("commit"),
                           "collected": report.get("collected")}}
    if report.get("refused"):
        return {"score": 0.0, **base, "output": f"Not graded: {report['refused']}", "tests": []}
    tests, counters = [], {}
    for test in report["tests"]:
        counters[test["exercise"]] = counters.get(test["exercise"], 0) + 1
        passed = test["status"] == "passed"
        hidden = bool(test.get("hidden"))
        entry = {"name": shown_name(test) if hidden and policy == "names" else test["name"],
                 "number": f"{test['exercise']}.{counters[test['exercise']]}",
                 "score": float(test["points"]), "max_score": float(test["max_points"]),
                 "status": "passed" if passed else "failed",
                 "visibility": "hidden" if hidden and policy == "count" else "visible",
                 "tags": [test["chapter"], f"ex{test['exercise']}",
                          ("passed" if passed else "failed") if hidden else test["status"], *(["hidden"] if hidden else [])]}
        if hidden and policy == "names":
            entry["output"] = WITHHELD
        else:
            lines = [f"{test['status']}: {test['message']}" if test["message"] else test["status"]]
            if test.get("line"):
                lines.append(f"{test['file']}:{test['line']}: {test.get('source_line', '')}")
            if test.get("hint"):
                lines.append(f"Hint: {test['hint']}")
            entry["output"] = "\n".join(lines)
        tests.append(entry)
    if policy == "count":
        for counted in (t for t in student_view(report, "count")["tests"] if t.get("hidden")):
            chapter_number = counted["chapter"].split("-", 1)[0].lstrip("0") or "0"
            tests.append({"name": counted["name"], "number": f"{chapter_number}.hidden", "score": 0.0, "max_score": 0.0,
                          "status": counted["status"], "visibility": "visible",
                          "tags": [counted["chapter"], "hidden"],
                          "output": f"{counted['checks']} further check{'s' if counted['checks'] != 1 else ''} of "
                                    f"{counted['chapter']} ran at grading "
                                    f"(hidden checks): {counted['passed']} passed, {number(counted['points'])} of "
                                    f"{number(counted['max_points'])} points, counted in the score."})
    output = (f"{number(report['score'])}/{report['max_score']} points; {provenance(report)}. "
              "Each check below says what it found; the first hint of a failed exercise follows its message.")
    return {"score": float(report["score"]), **base, "output": output, "tests": tests}


def write(reports: list[dict], folder: Path, options: Options) -> list[Path]:
    """FOLDER/NAME/results.json for each report."""
    written = []
    for report in reports:
        target = folder / report["submission"] / "results.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, json.dumps(results(report, options), indent=1, ensure_ascii=True) + "\n")
        written.append(target)
    return written
