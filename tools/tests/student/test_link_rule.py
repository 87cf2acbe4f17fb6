#!/usr/bin/env python3
"""The student's loop links what grading links: in a scratch copy of the workbook, chapter 3 solved
but for 3.3, which hands in lib's compiled softmax_rows through a prototype redeclared by hand (no
#include for the layering guard to refuse). Grading gives that exercise nothing (lib's answers of
chapter 3 and later are not in chapter 3's worker); `./workbook check 3` must say so before the
student hands it in: 3.3 does not link, with a sentence naming the function and the rule, while 3.1
and 3.2 keep passing; the same when another exercise does not compile (the partial link, which
leaves calls unresolved); `run 3` refuses to run the lesson on it. As root, the check is repeated
as uid 65534 in the copy, made that user's.

    test_link_rule.py
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.harness import expect, finish

from tests.student.test_student_loop import CH3, student_tree, workbook

NOBODY = 65534
SAID = ("ex3_softmax_rows.cpp does not link: scalebook::softmax_rows() is an exercise's answer in lib, "
        "and lib's answers of chapter 3 and later are not linked into chapter 3")


def redeclare_lib_softmax(path: Path) -> None:
    """3.3 solved by calling lib's copy of the answer, declared by hand."""
    text = path.read_text()
    text = text.replace("namespace scalebook::ch03 {", "namespace scalebook {\n"
                        "Matrix softmax_rows(const Eigen::Ref<const Matrix>& logits);\n}\n\n"
                        "namespace scalebook::ch03 {", 1)
    signature = "Matrix softmax_rows(const Matrix& scores) {"
    at = text.index(signature)
    text = (text[:at] + signature + "\n  return scalebook::softmax_rows(scores);\n}\n"
            "Matrix unused_original(const Matrix& scores) {" + text[at + len(signature):])
    path.write_text(text)


def line_of(output: str, exercise: str) -> str:
    return next((line.strip() for line in output.splitlines() if re.match(rf"^\s*[✓✗] {re.escape(exercise)}\b", line)), "")


def check_as(tree: Path, user: int | None) -> str:
    prefix = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "--"] if user is not None else []
    env = dict(os.environ, NO_COLOR="1", CCACHE_DISABLE="1") if user is not None else dict(os.environ, NO_COLOR="1")
    result = subprocess.run([*prefix, str(tree / "workbook"), "--timeout", "2", "check", "3"], cwd=tree,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            stdin=subprocess.DEVNULL, timeout=600, env=env)
    print(result.stdout, flush=True)
    expect(result.returncode == 0, f"check 3{' as uid %d' % user if user is not None else ''} exits 0")
    return result.stdout


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="scalebook-link-") as temp:
        tree = student_tree(temp)
        exercises = tree / "exercises" / CH3
        for source in (tree / "solutions" / CH3).glob("*.cpp"):
            shutil.copy2(source, exercises / source.name)
        redeclare_lib_softmax(exercises / "ex3_softmax_rows.cpp")

        out = check_as(tree, None)
        expect(SAID in line_of(out, "3.3") and "write it yourself" in line_of(out, "3.3"),
               "3.3 calling lib's softmax_rows does not link, and the sentence names the function and the rule")
        expect(line_of(out, "3.1") == "✓ 3.1" and line_of(out, "3.2") == "✓ 3.2", "3.1 and 3.2 keep passing")

        entropy = exercises / "ex5_row_entropy.cpp"
        solved = entropy.read_text()
        entropy.write_text(solved + "\nthis line is not C++;\n")
        out = check_as(tree, None)
        expect(SAID in line_of(out, "3.3") and "does not compile" in line_of(out, "3.5"),
               "with 3.5 not compiling (the partial link), 3.3 still does not link, with the same sentence")
        entropy.write_text(solved)

        lesson = workbook(tree, "run", "3")
        expect(lesson.returncode == 1 and "exercise 3.3 does not compile" in lesson.stdout and SAID in lesson.stdout,
               "run 3 names 3.3 and why instead of running the lesson on lib's answer")

        if os.geteuid() != 0:
            print("skip: the run as another user needs root to switch to uid 65534")
        else:
            Path(temp).chmod(0o755)  # a temporary folder is its owner's alone
            for path in [tree, *tree.rglob("*")]:
                os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
            with open(exercises / "ex3_softmax_rows.cpp", "a") as more:
                more.write("// saved again by the student\n")  # compiled and linked again, as that user
            out = check_as(tree, NOBODY)
            expect(SAID in line_of(out, "3.3") and line_of(out, "3.1") == "✓ 3.1",
                   f"as uid {NOBODY}: 3.3 does not link, with the same sentence; 3.1 passes")
    return finish("the student's loop links what grading links")


if __name__ == "__main__":
    sys.exit(main())
