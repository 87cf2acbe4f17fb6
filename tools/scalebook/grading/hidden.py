"""What a student may see of the hidden checks: the instructor's record made into the student's report.

A chapter's hidden checks (its manifest's hidden_checks file; never in the student edition) are
graded and scored with the others, and the instructor's record (DIR/ctest/NAME/record.json) holds
their names, statuses and messages like any check's. Everything a student may be given (their
report.json, junit.xml and feedback page in DIR/NAME/, and the LMS exports) is made from
student_view(record, policy), by the policy the instructor sets (./workbook grade --show-hidden):

  names   each hidden check by its label (below), passed or failed, and its points; its name (which
          tells its input), message, hint and compile details are withheld
  count   only a count per chapter: one entry "hidden checks" with how many ran and passed and their
          points together; no name, no status but passed or not

A hidden check counts towards the score exactly as a visible one does, whatever the policy.

Labels. A check's name is the instructor's ("4.2 a causal mask over 96 tokens ..."): it says what
input the check tries, which is what a hidden check must not tell. Each hidden check therefore
carries a student-facing label, written beside its name as doctest's own description decorator:

    TEST_CASE("4.2 a causal mask over 96 tokens ..." * doctest::description("4.2 long rows ..."))

The label starts with the check's exercise id and says what the check covers, never its input: no
number but that id (labels() refuses a hidden check without one, and a label with another number).

Time. Nothing a student is given depends on how long a check ran: a hidden check's running time is
a channel to its input (a submission that sleeps on long inputs would read their length off the
report's total seconds). The view has no seconds (the record keeps them: DIR/ctest/), the date of
grading to the day only (a time to the second is when that submission's checks ended), the tests
in the kit's order (never in the order they ended), and a hidden check's status is passed or failed
(a time limit's "timed_out" would say that an input was long).
"""
from __future__ import annotations

import re
from pathlib import Path

POLICIES = ("count", "names")
DEFAULT_POLICY = "count"
WITHHELD = "a hidden check: its input and message are shown to instructors only"
# The instructor's bookkeeping, never in a student's view: a record's fields, and each test's.
RECORD_ONLY = ("inputs", "work", "check_seconds", "fingerprint", "seconds", "reused", "compiled", "label")
# A hidden check's name and its label, as its checks file spells them (one parser: labels() below).
LABELLED = re.compile(r'TEST_CASE\s*\(\s*"([^"]+)"\s*(?:\*\s*doctest::description\s*\(\s*"((?:[^"\\\n]|\\.)*)"\s*\))?')
EXERCISE = re.compile(r"\d+\.\d+")


class LabelError(ValueError):
    """A hidden checks file whose checks are not all labelled as students may see them."""


def labels(path: Path) -> dict[str, str]:
    """Check name -> student-facing label for the hidden checks file PATH, in the file's order.
    LabelError names every check without a label, or with one that does not start with the check's
    exercise id or holds another number (an input's size, say)."""
    found, problems = {}, []
    for match in LABELLED.finditer(path.read_text()):
        name, label = match.group(1), match.group(2)
        exercise = EXERCISE.match(name)
        if not label:
            problems.append(f"'{name}' has no label (TEST_CASE(\"NAME\" * doctest::description(\"LABEL\")), "
                            "the label one string literal)")
            continue
        label = re.sub(r"\\(.)", r"\1", label)
        if not exercise or not label.startswith(exercise.group(0) + " "):
            problems.append(f"the label of '{name}' does not start with its exercise id and a space: '{label}'")
        elif re.search(r"\d", label[len(exercise.group(0)):]):
            problems.append(f"the label of '{name}' holds a number, which tells an input: '{label}'")
        found[name] = label
    if problems:
        raise LabelError(f"labels: {path}: " + "; ".join(problems))
    return found


def is_hidden(test: dict) -> bool:
    return bool(test.get("hidden"))


def shown_name(test: dict) -> str:
    """What a student sees as a check's name: a visible check's name, a hidden check's label (or,
    where a record has none, only its exercise)."""
    if not is_hidden(test):
        return test["name"]
    return test.get("label") or f"{test['exercise']} a hidden check"


def aggregate_name(checks: int, passed: int) -> str:
    return f"hidden checks: {passed} of {checks} passed"


def student_view(record: dict, policy: str) -> dict:
    """RECORD (a report as grading wrote it) as its student may see it under POLICY (see above)."""
    if policy not in POLICIES:
        raise ValueError(f"student_view: the policy must be one of {', '.join(POLICIES)}, not {policy!r}")
    view = {key: value for key, value in record.items() if key not in RECORD_ONLY}
    if isinstance(view.get("date"), str):
        view["date"] = view["date"][:10]
    if isinstance(view.get("collected"), dict):  # collect's flags name classmates: the instructor's
        view["collected"] = {key: value for key, value in view["collected"].items() if key != "flags"}
    tests: list[dict] = []
    chapters: dict[str, dict] = {}
    for test in record.get("tests", []):
        if not is_hidden(test):
            tests.append({key: value for key, value in test.items() if key not in RECORD_ONLY})
        elif policy == "names":
            tests.append({"name": shown_name(test), "chapter": test["chapter"], "exercise": test["exercise"],
                          "status": "passed" if test["status"] == "passed" else "failed", "points": test["points"],
                          "max_points": test["max_points"], "message": WITHHELD, "hidden": True})
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
