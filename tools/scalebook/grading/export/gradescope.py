"""Gradescope's results.json for one submission (autograder_samples docs/specs.md).

Every text field is declared plain text (output_format, test_output_format, test_name_format
"text"), so that nothing a submission wrote is read as HTML or Markdown on Gradescope's page.
"""
from __future__ import annotations

import json
from pathlib import Path

from ...files import atomic_write
from .common import Options, number, provenance, shown


def results(report: dict, options: Options | None = None) -> dict:
    """REPORT as Gradescope's results.json: score, execution_time, output, the text formats, and a
    test per check (name, number, score, max_score, status, output, visibility, tags)."""
    base = {"execution_time": report.get("seconds", 0), "output_format": "text", "test_output_format": "text",
            "test_name_format": "text", "stdout_visibility": "hidden",
            "extra_data": {"submission": report["submission"], "grader_commit": report.get("commit"),
                           "collected": report.get("collected")}}
    if report.get("refused"):
        return {"score": 0.0, **base, "output": f"Not graded: {report['refused']}", "tests": []}
    tests, counters = [], {}
    for test in report["tests"]:
        counters[test["exercise"]] = counters.get(test["exercise"], 0) + 1
        passed = test["status"] == "passed"
        visibility = test.get("visibility", "visible")
        entry = {"name": test["name"], "number": f"{test['exercise']}.{counters[test['exercise']]}",
                 "score": float(test["points"]), "max_score": float(test["max_points"]),
                 "status": "passed" if passed else "failed", "visibility": visibility,
                 "tags": [test["chapter"], f"ex{test['exercise']}", test["status"]]}
        if shown(test):
            lines = [f"{test['status']}: {test['message']}" if test["message"] else test["status"]]
            if test.get("line"):
                lines.append(f"{test['file']}:{test['line']}: {test.get('source_line', '')}")
            if test.get("hint"):
                lines.append(f"Hint: {test['hint']}")
            entry["output"] = "\n".join(lines)
        tests.append(entry)
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
