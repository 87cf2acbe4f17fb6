"""One isolation rule: ./workbook check and ./workbook grade give the same verdict per exercise on
the same broken trees of chapter 3 (solved but for the break):

  compile   3.2 does not compile                    3.2 compile_error, the rest passes
  link      3.3 calls a function nothing defines    3.3 compile_error (does not link), the rest passes
  duplicate 3.1 and 3.5 both define helper(double)  3.1 and 3.5 compile_error, with the same sentence
                                                    (both files and the fix); 3.2, which calls 3.1,
                                                    not_run; 3.3 and 3.4 pass
  blocked   3.1 does not compile; 3.2 calls it      3.1 compile_error, 3.2 not_run, the rest passes

The loop runs in a scratch student copy; grading grades the four trees as four submissions of one
run. Before the shared rule (scalebook/isolate.py) the duplicate cost the whole chapter in the loop,
and a broken 3.1 cost the loop every later exercise (its checks, linked without 3.1, crashed first).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from scalebook.isolate import DUPLICATE
from tests.harness import ROOT, WORKBOOK, expect, finish
from tests.student.test_student_loop import CH3, student_tree, workbook

SOLVED = ROOT / "solutions" / CH3
HELPER = "double helper(double x) { return x; }  // defined in two files: neither static nor in an unnamed namespace\n"


def add_before_namespace(path: Path, text: str) -> None:
    source = path.read_text()
    at = source.index("namespace scalebook::ch03 {")
    path.write_text(source[:at] + text + "\n" + source[at:])


def break_compile(path: Path) -> None:
    add_before_namespace(path, "this is not C++;\n")


def broken_trees() -> dict[str, dict[str, callable]]:
    """Each tree: the files of chapter 3 changed from the solutions, by what."""
    def calls_missing(path: Path) -> None:
        add_before_namespace(path, "namespace scalebook::ch03 { double never_written(double); }\n")
        source = path.read_text()
        signature = "Matrix softmax_rows(const Matrix& scores) {"
        path.write_text(source.replace(signature, signature + "\n  (void)never_written(1.0);", 1))
    return {"compile": {"ex2_scaled_scores.cpp": break_compile},
            "link": {"ex3_softmax_rows.cpp": calls_missing},
            "duplicate": {"ex1_dot_scores.cpp": lambda p: add_before_namespace(p, HELPER),
                          "ex5_row_entropy.cpp": lambda p: add_before_namespace(p, HELPER)},
            "blocked": {"ex1_dot_scores.cpp": break_compile}}


def write_tree(folder: Path, changes: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for source in SOLVED.glob("*.cpp"):
        shutil.copy2(source, folder / source.name)
    for name, change in changes.items():
        change(folder / name)


def loop_verdicts(tree: Path, changes: dict) -> dict[str, tuple[str, str]]:
    write_tree(tree / "exercises" / CH3, changes)
    result = workbook(tree, "--timeout", "5", "check", "3")
    print(result.stdout, flush=True)
    expect(result.returncode == 0, f"check 3 exits 0 (got {result.returncode})")
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
        graded = subprocess.run([sys.executable, str(WORKBOOK), "grade", "--chapters", "3", "--out", str(out),
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
                if name == "duplicate" and exercise in ("3.1", "3.5"):
                    said = DUPLICATE.format(first="3.1", second="3.5", symbol="helper(double)",
                                            first_file=f"exercises/{CH3}/ex1_dot_scores.cpp",
                                            second_file=f"exercises/{CH3}/ex5_row_entropy.cpp")
                    expect(messages == {message} == {said},
                           f"duplicate: {exercise}'s sentence is grading's: loop {message!r}, grading {messages}")
            expected = {"compile": {"3.2": "compile_error"}, "link": {"3.3": "compile_error"},
                        "duplicate": {"3.1": "compile_error", "3.5": "compile_error", "3.2": "not_run"},
                        "blocked": {"3.1": "compile_error", "3.2": "not_run"}}[name]
            for exercise, (status, _) in loop.items():
                expect(status == expected.get(exercise, "passed"),
                       f"{name}: {exercise} is {expected.get(exercise, 'passed')} (got {status})")
    return finish("the loop and grading give the same verdicts on the same broken trees")


if __name__ == "__main__":
    sys.exit(main())
