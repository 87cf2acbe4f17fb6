"""PrairieLearn's external-grader results.json for one submission (PrairieLearn docs/externalGrading.md).

score in [0, 1]; gradable false (with format_errors) only when the grader could not grade the
submission, so that the student is charged no attempt; every test has points and max_points, so
that PrairieLearn shows each test's points.
"""
from __future__ import annotations

import json
from pathlib import Path

from ...files import atomic_write
from .common import Options, number, provenance, shown, views

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
