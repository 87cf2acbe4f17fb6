"""./workbook new on the fixture course, without a build (the build of what it writes, and its
first checks failing on the scaffold's reference, are tests/student/test_authoring.py's): an
exercise and a chapter written by it break no rule of lint but what is the author's to write
(SCALEBOOK-TODO lines, the bug zoo), every id and name in place; its remote.def line and declaration
carry the signature's types; a function name, a folder and a signature that are not valid are
refused, naming what is wrong; and a refusal half-way (a checks file without its closing TEST_SUITE
line) leaves every file as it was.

Also: a chapter's --title is its page's heading and its files' header lines; its manifest is
written as the course's are (a field a line, an exercise a line) and its contract includes
scalebook/random.hpp only when a signature takes an Rng; a type no header declares, named like a
struct, is written into the contract with its SCALEBOOK_REMOTE_FIELDS line, any other refused; the
first check calls the function on inputs the contract's error rules accept and compares with a
value left to write (never CHECK_NOTHROW on empty inputs, which the scaffold's `return {}`
passes); and what new writes for return and parameter types of every kind compiles
(-fsyntax-only: the checks, the stubs, the references, the grader's proxies and worker table).
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
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


# Signatures of every kind of type: a struct new writes (returned, and taken by reference), an Rng,
# a void function writing through a reference, numbers, a std::vector, a bool.
KINDS = [("grads", "LayerGrads grads(const Matrix& x, const RowVector& gamma, double eps)"),
         ("noisy", "Vector noisy(const Vector& v, Rng& rng)"),
         ("fill", "void fill(Matrix& out, Index n)"),
         ("again", "LayerGrads again(const LayerGrads& g)"),
         ("count", "Index count(const std::vector<double>& v, float f)"),
         ("flag", "bool flag(const Matrix& x, int k)")]
REMOTE_TU = """#include "scalebook/remote.hpp"
#include "{contract}"
namespace scalebook::{ch} {{
#define SCALEBOOK_REMOTE SCALEBOOK_REMOTE_{role}
#include "remote.def"
#undef SCALEBOOK_REMOTE
}}
"""


def compile_errors(root: Path, folder: str, contract: str, ch: str) -> list[str]:
    """What the compiler says of a chapter's files as the build compiles them (syntax and types
    only): its checks, its stubs and its references (each set in one unit) and the grader's proxies
    and worker table from remote.def. Two at a time."""
    chapter, work = root / "chapters" / folder, root / "compile"
    work.mkdir(exist_ok=True)
    eigen = ["-isystem", "/usr/include/eigen3"]
    base = ["c++", "-fsyntax-only", "-std=c++20", "-Wall", "-Wextra", f"-I{chapter}", f"-I{ROOT / 'lib' / 'include'}", *eigen]
    units = {"checks": base + ["-DDOCTEST_CONFIG_REQUIRE_STRINGIFICATION_FOR_ALL_USED_TYPES",
                               f"-I{ROOT / 'lib' / 'testing'}", str(chapter / "checks.cpp")]}
    for track in ("exercises", "solutions"):
        unit = work / f"{track}.cpp"
        unit.write_text("".join(f'#include "{p}"\n' for p in sorted((root / track / folder).glob("*.cpp"))))
        units[track] = base + [str(unit)]
    for role in ("PROXY", "SERVE"):
        unit = work / f"remote_{role.lower()}.cpp"
        unit.write_text(REMOTE_TU.format(contract=contract, ch=ch, role=role))
        units[role.lower()] = base + [f"-I{ROOT / 'lib' / 'remote'}", str(unit)]
    errors, running = [], []
    for name, command in list(units.items()) + [(None, None)]:
        while running and (name is None or len(running) == 2):
            unit, process = running.pop(0)
            said = process.communicate()[0]
            if process.returncode != 0 or re.search(r"warning:", said):
                errors.append(f"{unit}: {said.strip()[:600]}")
        if name:
            running.append((name, subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)))
    return errors


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

        # A chapter's title, its manifest as the course's are written, random.hpp only for an Rng.
        root = course(base, "titled")
        scaffold.chapter(root, "02-fixture-middle", "middle", None, None, "Middles: the median of a row")
        page = (root / "chapters/02-fixture-middle/lesson.md").read_text().splitlines()[0]
        contract = root / "chapters/02-fixture-middle/fixture_middle.hpp"
        stub = (root / "exercises/02-fixture-middle/ex1_middle.cpp").read_text().splitlines()
        expect(page == "Chapter 2 — Middles: the median of a row {#ch02}"
               and contract.read_text().startswith("// Chapter 2 contract — middles: the median of a row.\n")
               and (root / "chapters/02-fixture-middle/checks.cpp").read_text().startswith(
                   "// Chapter 2 checks — middles: the median of a row.")
               and stub[1] == "// Chapter 2: middles: the median of a row.",
               f"--title is the page's heading and the files' header lines: {page!r}, {stub[1]!r}")
        manifest = (root / "chapters/02-fixture-middle/chapter.json").read_text()
        expect('\n  "figures": ["ch02_first_look"],\n' in manifest and
               '\n    {"id": "2.1", "source": "ex1_middle.cpp", "functions": ["middle"], "points": 1}\n  ]' in manifest,
               f"the manifest is written as the course's are (lists on one line, an exercise a line): {manifest}")
        expect("random.hpp" not in contract.read_text(), "a contract with no Rng does not include scalebook/random.hpp")
        scaffold.exercise(root, "2", "jitter", "Matrix jitter(const Matrix& x, Rng& rng)")
        text = contract.read_text()
        expect(text.count('#include "scalebook/random.hpp"') == 1
               and text.index("scalebook/random.hpp") < text.index("namespace scalebook::ch02"),
               "an exercise taking an Rng adds scalebook/random.hpp to the contract's includes, once")
        expect(len(json.loads((root / "chapters/02-fixture-middle/chapter.json").read_text())["exercises"]) == 2
               and '\n    {"id": "2.2", "source": "ex2_jitter.cpp"' in (root / "chapters/02-fixture-middle/chapter.json").read_text(),
               "the next exercise's entry is one line too")

        # Types: a struct no header declares is written with its fields line; the first checks
        # compare with a value left to write; all of it compiles.
        root = course(base, "kinds")
        scaffold.chapter(root, "02-fixture-kinds", KINDS[0][0], KINDS[0][1], None)
        for name, signature in KINDS[1:]:
            scaffold.exercise(root, "2", name, signature)
        contract = (root / "chapters/02-fixture-kinds/fixture_kinds.hpp").read_text()
        expect(contract.count("struct LayerGrads {") == 1
               and "SCALEBOOK_REMOTE_FIELDS(scalebook::ch02::LayerGrads, result);" in contract,
               "a return type no header declares, named like a struct, is written as a struct with its fields line")
        problems, _ = lint(root)
        other = [str(p) for p in problems if not any(w in p.message for w in LEFT_FOR_THE_AUTHOR)]
        expect(not other and any("fixture_kinds.hpp" in p.file and "data members" in p.message for p in problems),
               f"lint lists the struct's members as left to write, and nothing else: {other[:3]}")
        checks = (root / "chapters/02-fixture-kinds/checks.cpp").read_text()
        cases = re.findall(r'TEST_CASE\("2\.\d.*?\n}\n', checks, re.S)
        expect(len(cases) == len(KINDS) and "NOTHROW" not in checks and not re.search(r"\b(Matrix|Vector) \w+\{\};", checks)
               and all("SCALEBOOK-TODO: the value" in c or "as_the_contract_says = false" in c for c in cases),
               "each first check calls on inputs that are not empty and compares with a value left to write "
               "(no CHECK_NOTHROW on empty inputs)")
        errors = compile_errors(root, "02-fixture-kinds", "fixture_kinds.hpp", "ch02")
        expect(not errors, f"the scaffold of every kind of type compiles without a warning: {errors[:2]}")

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
                ("chapter 00", lambda: scaffold.chapter(root, "00-zero", None, None, None), "NN-topic"),
                ("a title of two lines", lambda: scaffold.chapter(root, "02-a", None, None, None, "A\nB"), "--title"),
                ("a title with markup", lambda: scaffold.chapter(root, "02-a", None, None, None, "A {#x}"), "--title"),
                ("a type nobody declares inside a template",
                 lambda: scaffold.exercise(root, "1", "f", "std::vector<Thing> f(double x)"), "uses Thing"),
                ("a type nobody declares, not named like a struct",
                 lambda: scaffold.exercise(root, "1", "f", "thing_t f(double x)"), "uses thing_t")):
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
