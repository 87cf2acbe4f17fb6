"""./workbook new on the fixture course, without a build (the build of what it writes is
tests/student/test_authoring.py's): an exercise and a chapter written by it break no rule of lint
but what is the author's to write (SCALEBOOK-TODO lines, the bug zoo), every id and name in place;
its remote.def line and declaration carry the signature's types; a function name, a folder and a
signature that are not valid are refused, naming what is wrong; and a refusal half-way (a checks
file without its closing TEST_SUITE line) leaves every file as it was.
"""
from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from scalebook import scaffold
from scalebook.errors import UsageError
from scalebook.lint import lint
from tests.harness import COURSE_FOLDERS, FIXTURE_COURSE, ROOT, expect, finish

SUMS = "chapters/01-fixture-sums"
LEFT_FOR_THE_AUTHOR = ("left to write", "no mutant of", "no bug zoo")


def course(base: Path, name: str) -> Path:
    root = base / name
    for folder in COURSE_FOLDERS:
        shutil.copytree(FIXTURE_COURSE / folder, root / folder)
    (root / "lib").symlink_to(ROOT / "lib")
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and "lib" not in p.relative_to(root).parts[:1]}


def refusal(call) -> str:
    try:
        call()
        return ""
    except UsageError as error:
        return str(error)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="scalebook-new-") as temp:
        base = Path(temp)
        root = course(base, "exercise")
        exercise, written, changed = scaffold.exercise(root, "1", "clipped", "Matrix clipped(const Matrix& x, double limit)")
        names = sorted(str(p.relative_to(root)) for p in written + changed)
        expect(exercise == "1.3" and "exercises/01-fixture-sums/ex3_clipped.cpp" in names and
               "solutions/01-fixture-sums/ex3_clipped.cpp" in names and f"{SUMS}/remote.def" in names,
               f"new exercise 1 clipped writes exercise 1.3's files: {names}")
        problems, _ = lint(root)
        other = [str(p) for p in problems if not any(w in p.message for w in LEFT_FOR_THE_AUTHOR)]
        todo = [p for p in problems if p.message.startswith("left to write")]
        expect(not other and len(todo) >= 6, f"lint finds only what is left to write ({len(todo)} lines): {other[:3]}")
        remote = (root / SUMS / "remote.def").read_text()
        contract = (root / SUMS / "fixture_sums.hpp").read_text()
        expect("SCALEBOOK_REMOTE(1.3, clipped, Matrix, const Matrix&, double)" in remote
               and "Matrix clipped(const Matrix& x, double limit);" in contract,
               "the remote.def line and the declaration carry the signature's types")
        page = (root / SUMS / "lesson.md").read_text()
        expect("(`ex1_total.cpp` to `ex3_clipped.cpp`)" in page, "the page's range of files ends with the new one")

        root = course(base, "chapter")
        written, changed = scaffold.chapter(root, "02-fixture-middle", "middle", None, None)
        problems, _ = lint(root)
        other = [str(p) for p in problems if not any(w in p.message for w in LEFT_FOR_THE_AUTHOR)]
        expect(not other and (root / "chapters/02-fixture-middle/chapter.json").is_file()
               and (root / "exercises/02-fixture-middle/ex1_middle.cpp").is_file(),
               f"new chapter 02-fixture-middle: a chapter numbered into the gap, lint finds only what is left: {other[:3]}")

        root = course(base, "refusals")
        before = snapshot(root)
        for what, call, words in (
                ("a name that is not snake_case", lambda: scaffold.exercise(root, "1", "Clipped", None), "not a function name"),
                ("a C++ keyword", lambda: scaffold.exercise(root, "1", "delete", None), "not a function name"),
                ("a function the chapter has", lambda: scaffold.exercise(root, "1", "total", None), "already a function"),
                ("no such chapter", lambda: scaffold.exercise(root, "2", "f", None), "no chapter '2'"),
                ("a signature of another function", lambda: scaffold.exercise(root, "1", "f", "int g(int a)"), "declares g"),
                ("a parameter without a name", lambda: scaffold.exercise(root, "1", "f", "int f(int)"), "needs a type and a name"),
                ("a signature with a statement", lambda: scaffold.exercise(root, "1", "f", "int f(int a); int x"), "--signature"),
                ("a folder without its number", lambda: scaffold.chapter(root, "fixture-middle", None, None, None), "NN-topic"),
                ("a number taken", lambda: scaffold.chapter(root, "03-other", None, None, None), "is chapters/03-fixture-gap"),
                ("chapter 00", lambda: scaffold.chapter(root, "00-zero", None, None, None), "NN-topic")):
            said = refusal(call)
            expect(words in said, f"{what}: refused, saying {said!r}")
        checks = root / SUMS / "checks.cpp"
        checks.write_text(checks.read_text().replace("}  // TEST_SUITE", "}"))
        before = snapshot(root)
        said = refusal(lambda: scaffold.exercise(root, "1", "clipped", None))
        expect("TEST_SUITE" in said and snapshot(root) == before,
               f"a refusal half-way writes nothing (no stub, no manifest entry): {said!r}")
    return finish("./workbook new writes what lint accepts but the author's part, and refuses what it cannot write whole")


if __name__ == "__main__":
    sys.exit(main())
