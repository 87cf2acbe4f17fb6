"""What a student may see of the hidden checks: the instructor's record made into the student's report.

A chapter's hidden checks (its manifest's hidden_checks file; never in the student edition) are
graded and scored with the others, and the instructor's record (DIR/ctest/NAME/record.json) holds
their names, statuses and messages like any check's. Everything a student may be given (their
report.json, junit.xml and feedback page in DIR/NAME/, and the LMS exports) is made from
student_view(record, policy), by the policy the instructor sets (./workbook grade --show-hidden):

  names   each hidden check with its name, status and points; its message (which would tell the
          input it tried), hint and compile details are withheld
  count   only a count per chapter: one entry "hidden checks" with how many ran and passed and their
          points together; no name, no status but passed or not

A hidden check counts towards the score exactly as a visible one does, whatever the policy.
"""
from __future__ import annotations

POLICIES = ("count", "names")
DEFAULT_POLICY = "count"
WITHHELD = "a hidden check: its input and message are shown to instructors only"
RECORD_ONLY = ("inputs", "work", "check_seconds", "fingerprint")   # the instructor's bookkeeping


def is_hidden(test: dict) -> bool:
    return bool(test.get("hidden"))


def aggregate_name(checks: int, passed: int) -> str:
    return f"hidden checks: {passed} of {checks} passed"


def student_view(record: dict, policy: str) -> dict:
    """RECORD (a report as grading wrote it) as its student may see it under POLICY (see above)."""
    if policy not in POLICIES:
        raise ValueError(f"student_view: the policy must be one of {', '.join(POLICIES)}, not {policy!r}")
    view = {key: value for key, value in record.items() if key not in RECORD_ONLY}
    tests: list[dict] = []
    chapters: dict[str, dict] = {}
    for test in record.get("tests", []):
        test = {key: value for key, value in test.items() if key not in RECORD_ONLY}
        if not is_hidden(test):
            tests.append(test)
        elif policy == "names":
            tests.append({"name": test["name"], "chapter": test["chapter"], "exercise": test["exercise"],
                          "status": test["status"], "points": test["points"], "max_points": test["max_points"],
                          "message": WITHHELD, "hidden": True})
        else:
            entry = chapters.get(test["chapter"])
            if entry is None:
                entry = {"name": "", "chapter": test["chapter"], "exercise": "", "status": "passed", "points": 0,
                         "max_points": 0, "message": "", "hidden": True, "checks": 0, "passed": 0}
                chapters[test["chapter"]] = entry
                tests.append(entry)
            entry["checks"] += 1
            entry["passed"] += test["status"] == "passed"
            entry["points"] += test["points"]
            entry["max_points"] += test["max_points"]
            if test["status"] != "passed":
                entry["status"] = "failed"
    for entry in chapters.values():
        entry["name"] = aggregate_name(entry["checks"], entry["passed"])
    view["tests"] = tests
    view["hidden_policy"] = policy
    return view


def hidden_summary(record: dict) -> dict[str, tuple[int, int]]:
    """Chapter -> (hidden checks graded, passed) of a record."""
    found: dict[str, tuple[int, int]] = {}
    for test in record.get("tests", []):
        if is_hidden(test):
            checks, passed = found.get(test["chapter"], (0, 0))
            found[test["chapter"]] = (checks + 1, passed + (test["status"] == "passed"))
    return found
