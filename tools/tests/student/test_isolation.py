"""One isolation rule: ./workbook check and ./workbook grade give the same verdict per exercise on
the same broken trees of one chapter, solved but for the break (the chapter whose exercises define
the functions below, found from the manifests by tests/harness.py; 3.1 to 3.5 of chapter 3 today):

  compile   scaled_scores does not compile          its exercise compile_error, the rest passes
  link      softmax_rows calls what nothing defines compile_error (does not link), the rest passes
  duplicate dot_scores's and row_entropy's files    both compile_error, with the same sentence (both
            both define helper(double)              files and the fix); scaled_scores, which calls
                                                    dot_scores, not_run; the others pass
  blocked   dot_scores does not compile;            dot_scores compile_error, scaled_scores not_run,
            scaled_scores calls it                  the rest passes

The loop runs in a scratch student copy; grading grades the four trees as four submissions of one
run. Before the shared rule (scalebook/isolate.py) the duplicate cost the whole chapter in the loop,
and a broken first exercise cost the loop every later one (its checks, linked without it, crashed first).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from scalebook.isolate import DUPLICATE
from tests.harness import ROOT, WORKBOOK, course_chapter, expect, finish
from tests.student.test_student_loop import student_tree, workbook

SCORES = course_chapter("dot_scores", "scaled_scores", "softmax_rows", "row_entropy")
CH3 = SCORES.folder
DOT, SCALED, SOFTMAX, ENTROPY = (SCORES.id(f) for f in ("dot_scores", "scaled_scores", "softmax_rows", "row_entropy"))
SOLVED = ROOT / "solutions" / CH3
HELPER = "double helper(double x) { return x; }  // defined in two files: neither static nor in an unnamed namespace\n"


def add_before_namespace(path: Path, text: str) -> None:
    source = path.read_text()
    at = source.index(f"namespace {SCORES.namespace} {{")
    path.write_text(source[:at] + text + "\n" + source[at:])


def break_compile(path: Path) -> None:
    add_before_namespace(path, "this is not C++;\n")


def broken_trees() -> dict[str, dict[str, callable]]:
    """Each tree: the files of the chapter changed from the solutions, by what."""
    def calls_missing(path: Path) -> None:
        add_before_namespace(path, f"namespace {SCORES.namespace} {{ double never_written(double); }}\n")
        source = path.read_text()
        signature = "Matrix softmax_rows(const Matrix& scores) {"
        path.write_text(source.replace(signature, signature + "\n  (void)never_written(1.0);", 1))
    def name(function: str) -> str:
        return Path(SCORES.file(function)).name
    return {"compile": {name("scaled_scores"): break_compile},
            "link": {name("softmax_rows"): calls_missing},
            "duplicate": {name("dot_scores"): lambda p: add_before_namespace(p, HELPER),
                          name("row_entropy"): lambda p: add_before_namespace(p, HELPER)},
            "blocked": {name("dot_scores"): break_compile}}


def write_tree(folder: Path, changes: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for source in SOLVED.glob("*.cpp"):
        shutil.copy2(source, folder / source.name)
    for name, change in changes.items():
        change(folder / name)


def loop_verdicts(tree: Path, changes: dict) -> dict[str, tuple[str, str]]:
    write_tree(tree / "exercises" / CH3, changes)
    result = workbook(tree, "--timeout", "5", "check", SCORES.number)
    print(result.stdout, flush=True)
    expect(result.returncode == 0, f"check {SCORES.number} exits 0 (got {result.returncode})")
    record = json.loads((tree / "build" / "student" / "workbook" / f"{CH3}.json").read_text())
    return {e: (v["status"], v["message"]) for e, v in record.items()}


def grading_verdicts(out: Path, name: str) -> dict[str, tuple[set[str], set[str]]]:
    report = json.loads((out / "students" / name / "report.json").read_text())
    found: dict[str, tuple[set[str], set[str]]] = {}
    for test in report["tests"]:
        statuses, messages = found.setdefault(test["exercise"], (set(), set()))
        statuses.add(test["status"])
        messages.add(test["message"])
    return found


def main() -> int:
    trees = broken_trees()
    with tempfile.TemporaryDirectory(prefix="scalebook-isolation-") as temp:
        submissions = Path(temp) / "class"
        for name, changes in trees.items():
            write_tree(submissions / name / "exercises" / CH3, changes)
        out = Path(temp) / "grades"
        graded = subprocess.run([sys.executable, str(WORKBOOK), "grade", "--chapters", SCORES.number, "--out", str(out),
                                 *[str(submissions / n) for n in trees]], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL, timeout=1800)
        print(graded.stdout[-3000:], flush=True)
        expect(graded.returncode == 0, f"grading the four trees exits 0 (got {graded.returncode})")
        tree = student_tree(temp)
        for name, changes in trees.items():
            loop = loop_verdicts(tree, changes)
            grading = grading_verdicts(out, name)
            for exercise in sorted(loop):
                status, message = loop[exercise]
                statuses, messages = grading.get(exercise, (set(), set()))
                expect(statuses == {status}, f"{name}: {exercise} is {status} in the loop and {sorted(statuses)} "
                                             f"in grading")
                if name == "duplicate" and exercise in (DOT, ENTROPY):
                    said = DUPLICATE.format(first=DOT, second=ENTROPY, symbol="helper(double)",
                                            first_file=f"exercises/{SCORES.file('dot_scores')}",
                                            second_file=f"exercises/{SCORES.file('row_entropy')}")
                    expect(messages == {message} == {said},
                           f"duplicate: {exercise}'s sentence is grading's: loop {message!r}, grading {messages}")
            expected = {"compile": {SCALED: "compile_error"}, "link": {SOFTMAX: "compile_error"},
                        "duplicate": {DOT: "compile_error", ENTROPY: "compile_error", SCALED: "not_run"},
                        "blocked": {DOT: "compile_error", SCALED: "not_run"}}[name]
            for exercise, (status, _) in loop.items():
                expect(status == expected.get(exercise, "passed"),
                       f"{name}: {exercise} is {expected.get(exercise, 'passed')} (got {status})")
    return finish("the loop and grading give the same verdicts on the same broken trees")


if __name__ == "__main__":
    sys.exit(main())
