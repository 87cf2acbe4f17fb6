#!/usr/bin/env python3
"""What a student sees of the hidden checks, without a build (seconds): labels, views, no time.

- Every hidden check of the course has a student-facing label (grading/hidden.py's labels(), the
  one parser): it starts with the check's exercise id, differs from the check's name and holds no
  other number. labels() refuses a made-up checks file with a check that has no label, one whose
  label holds a number (an input's size) and one whose label names another exercise.
- student_view by "names" shows each hidden check by its label, passed or failed only (a timed-out
  hidden check is "failed": a time limit says its input was long), never its name or message; by
  "count" one entry per chapter with no name; both keep every chapter's points.
- Nothing in a view depends on how long grading took: two records of one submission that differ
  only in their seconds, the time of day they ended and the bookkeeping of what ran give views
  that are byte for byte the same; the record keeps the seconds.
"""
from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path

from scalebook.course import all_chapters, check_names
from scalebook.config import ROOT
from scalebook.grading.hidden import WITHHELD, LabelError, labels, student_view
from tests.harness import expect, finish


def course_checks() -> None:
    chapters = [c for c in all_chapters() if c.hidden_checks]
    expect(bool(chapters), f"the course has hidden checks ({[c.folder for c in chapters]})")
    for chapter in chapters:
        path = ROOT / "chapters" / chapter.folder / chapter.hidden_checks
        try:
            found, why = labels(path), ""
        except LabelError as error:
            found, why = {}, str(error)
        names = check_names(path)
        expect(list(found) == names and not why, f"{chapter.folder}: every hidden check has a label {why}")
        for name, label in found.items():
            expect(label != name and label.split(" ", 1)[0] == name.split(" ", 1)[0],
                   f"{chapter.folder}: '{label}' is not the name and starts with the exercise of '{name}'")
        expect(len(set(found.values())) == len(found), f"{chapter.folder}: no two hidden checks share a label")


def refusal_checks(base: Path) -> None:
    good = 'TEST_CASE("4.2 over 96 tokens" * doctest::description("4.2 long rows count")) {}\n'
    cases = {
        "a check without a label": good + 'TEST_CASE("4.3 at the lowest double") {}\n',
        "a label with a number": 'TEST_CASE("4.2 over 96 tokens" * doctest::description("4.2 rows of 96 tokens")) {}\n',
        "a label of another exercise": 'TEST_CASE("4.2 over 96 tokens" * doctest::description("4.3 long rows")) {}\n',
        "a label of two literals": 'TEST_CASE("4.2 x" * doctest::description("4.2 long" " rows")) {}\n',
    }
    path = base / "hidden_checks.cpp"
    path.write_text(good)
    expect(labels(path) == {"4.2 over 96 tokens": "4.2 long rows count"}, "labels: a labelled check's label is read")
    for what, text in cases.items():
        path.write_text(text)
        try:
            labels(path)
            said = ""
        except LabelError as error:
            said = str(error)
        expect(bool(said) and str(path) in said, f"labels: refuses {what}: {said[:160]}")


def record() -> dict:
    def test(name, status, points, exercise="4.2", hidden=False, message="", label=None):
        return {"name": name, "chapter": "04-causal-masking", "exercise": exercise, "status": status, "points": points,
                "max_points": 1, "message": message, **({"hidden": True} if hidden else {}),
                **({"label": label} if label else {}), "inputs": "k" + name}
    return {"submission": "alice", "score": 3, "max_score": 6, "seconds": 3.96, "check_seconds": 2.5,
            "date": "2026-12-15T10:11:12+00:00", "commit": "abc1234", "fingerprint": "f",
            "work": {"compiled": 3, "linked": 1, "checks_run": 6, "reused": 0}, "tests": [
                test("4.2 visible one", "passed", 1), test("4.2 visible throws", "passed", 1),
                test("4.2 secret 4711 rows", "failed", 0, hidden=True, message="the input 4711 failed",
                     label="4.2 every allowed entry counts"),
                test("4.3 secret lowest double", "passed", 1, exercise="4.3", hidden=True,
                     label="4.3 masked positions take no weight"),
                test("4.3 secret slow", "timed_out", 0, exercise="4.3", hidden=True,
                     message="timed_out: one call took more than 10 s"),
                test("4.3 visible", "failed", 0, exercise="4.3", message="plain")]}


def view_checks() -> None:
    full = record()
    counted = student_view(full, "count")
    text = json.dumps(counted)
    expect("secret" not in text and "4711" not in text and "inputs" not in text and "fingerprint" not in counted,
           "view (count): no hidden check's name or message, no reuse key, no fingerprint")
    hidden = [t for t in counted["tests"] if t.get("hidden")]
    expect(len(hidden) == 1 and hidden[0]["checks"] == 3 and hidden[0]["passed"] == 1 and hidden[0]["points"] == 1
           and hidden[0]["max_points"] == 3 and hidden[0]["status"] == "failed" and hidden[0]["exercise"] == "",
           f"view (count): one entry for the chapter, how many ran and passed and their points: {hidden}")
    named = student_view(full, "names")
    shown = [t for t in named["tests"] if t.get("hidden")]
    text = json.dumps(named)
    expect([t["name"] for t in shown] == ["4.2 every allowed entry counts", "4.3 masked positions take no weight",
                                          "4.3 a hidden check"]
           and all(t["message"] == WITHHELD for t in shown) and "secret" not in text and "4711" not in text,
           f"view (names): each hidden check by its label (its exercise where it has none), no name, no message: "
           f"{[t['name'] for t in shown]}")
    expect([t["status"] for t in shown] == ["failed", "passed", "failed"] and "timed_out" not in text,
           "view (names): a hidden check is passed or failed, never timed_out")
    for view, policy in ((counted, "count"), (named, "names")):
        expect(sum(t["points"] for t in view["tests"]) == sum(t["points"] for t in full["tests"]) and
               sum(t["max_points"] for t in view["tests"]) == sum(t["max_points"] for t in full["tests"]),
               f"view ({policy}): the points and the maximum are the record's")
    try:
        student_view(full, "everything")
        refused = False
    except ValueError:
        refused = True
    expect(refused, "view: an unknown policy is refused")


def time_checks() -> None:
    fast = record()
    slow = copy.deepcopy(fast)
    slow.update(seconds=7.87, check_seconds=6.4, date="2026-12-15T10:11:16+00:00",
                work={"compiled": 3, "linked": 1, "checks_run": 5, "reused": 1})
    slow["tests"][1]["reused"] = True
    for policy in ("count", "names"):
        a, b = student_view(fast, policy), student_view(slow, policy)
        expect(json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True),
               f"view ({policy}): a slow and a fast grading of one submission give the same bytes")
        expect("seconds" not in a and "check_seconds" not in a and "work" not in a and a["date"] == "2026-12-15"
               and not any("reused" in t for t in a["tests"]),
               f"view ({policy}): no seconds, no work, the day of grading only: {sorted(a)}")
    expect(fast["seconds"] == 3.96 and "tests" in fast, "the record itself keeps its seconds")


def main() -> int:
    course_checks()
    with tempfile.TemporaryDirectory(prefix="scalebook-hidden-") as temp:
        refusal_checks(Path(temp))
    view_checks()
    time_checks()
    return finish("every hidden check is shown by its label and nothing shown depends on time")


if __name__ == "__main__":
    raise SystemExit(main())
