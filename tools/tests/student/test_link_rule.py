#!/usr/bin/env python3
"""The student's loop links what grading links: in a scratch copy of the workbook, the chapter of
softmax_rows (chapter 3 today; tests/harness.py finds it from the manifests) solved but for
softmax_rows, which hands in lib's compiled copy through a prototype redeclared by hand (no #include
for the layering guard to refuse). Grading gives that exercise nothing (lib's answers of that chapter
and later are not in its worker); `./workbook check N` must say so before the student hands it in:
the exercise does not link, with a sentence naming the function and the rule, while dot_scores and
scaled_scores keep passing; the same when another exercise does not compile (the partial link, which
leaves calls unresolved); `run N` refuses to run the lesson on it. As root, the check is repeated
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

from tests.harness import course_chapter, expect, finish

from tests.student.test_student_loop import student_tree, workbook

SCORES = course_chapter("dot_scores", "scaled_scores", "softmax_rows", "row_entropy")
CH3, N = SCORES.folder, SCORES.number
DOT, SCALED, SOFTMAX, ENTROPY = (SCORES.id(f) for f in ("dot_scores", "scaled_scores", "softmax_rows", "row_entropy"))
SOFTMAX_FILE = Path(SCORES.file("softmax_rows")).name
NOBODY = 65534
SAID = (f"{SOFTMAX_FILE} does not link: scalebook::softmax_rows() is an exercise's answer in lib, "
        f"and lib's answers of chapter {N} and later are not linked into chapter {N}")


def redeclare_lib_softmax(path: Path) -> None:
    """softmax_rows solved by calling lib's copy of the answer, declared by hand."""
    text = path.read_text()
    opening = f"namespace {SCORES.namespace} {{"
    text = text.replace(opening, "namespace scalebook {\n"
                        "Matrix softmax_rows(const Eigen::Ref<const Matrix>& logits);\n}\n\n" + opening, 1)
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
    result = subprocess.run([*prefix, str(tree / "workbook"), "--timeout", "2", "check", N], cwd=tree,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            stdin=subprocess.DEVNULL, timeout=600, env=env)
    print(result.stdout, flush=True)
    expect(result.returncode == 0, f"check {N}{' as uid %d' % user if user is not None else ''} exits 0")
    return result.stdout


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="scalebook-link-") as temp:
        tree = student_tree(temp)
        exercises = tree / "exercises" / CH3
        for source in (tree / "solutions" / CH3).glob("*.cpp"):
            shutil.copy2(source, exercises / source.name)
        redeclare_lib_softmax(exercises / SOFTMAX_FILE)

        out = check_as(tree, None)
        expect(SAID in line_of(out, SOFTMAX) and "write it yourself" in line_of(out, SOFTMAX),
               f"{SOFTMAX} calling lib's softmax_rows does not link, and the sentence names the function and the rule")
        expect(line_of(out, DOT) == f"✓ {DOT}" and line_of(out, SCALED) == f"✓ {SCALED}",
               f"{DOT} and {SCALED} keep passing")

        entropy = exercises / Path(SCORES.file("row_entropy")).name
        solved = entropy.read_text()
        entropy.write_text(solved + "\nthis line is not C++;\n")
        out = check_as(tree, None)
        expect(SAID in line_of(out, SOFTMAX) and "does not compile" in line_of(out, ENTROPY),
               f"with {ENTROPY} not compiling (the partial link), {SOFTMAX} still does not link, with the same sentence")
        entropy.write_text(solved)

        lesson = workbook(tree, "run", N)
        expect(lesson.returncode == 1 and f"exercise {SOFTMAX} does not compile" in lesson.stdout and SAID in lesson.stdout,
               f"run {N} names {SOFTMAX} and why instead of running the lesson on lib's answer")

        if os.geteuid() != 0:
            print("skip: the run as another user needs root to switch to uid 65534")
        else:
            Path(temp).chmod(0o755)  # a temporary folder is its owner's alone
            for path in [tree, *tree.rglob("*")]:
                os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
            with open(exercises / SOFTMAX_FILE, "a") as more:
                more.write("// saved again by the student\n")  # compiled and linked again, as that user
            out = check_as(tree, NOBODY)
            expect(SAID in line_of(out, SOFTMAX) and line_of(out, DOT) == f"✓ {DOT}",
                   f"as uid {NOBODY}: {SOFTMAX} does not link, with the same sentence; {DOT} passes")
    return finish("the student's loop links what grading links")


if __name__ == "__main__":
    sys.exit(main())
