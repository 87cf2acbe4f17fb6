"""./workbook lint finds every problem an author meets, each planted alone in the fixture course
(tests/fixtures/course), and says it at the right file with the fix; the fixture as shipped has
none (the control: each problem below appears only when planted). The problems are those met when
an exercise 3.6 and a chapter 8 were added by hand: a file the manifest does not name, a function
spelled differently in one place, an id with no advice, a hidden mutant without `# expect:`, a
lesson that writes no data file, a chapter folder without a manifest, a `||` in a code span that
Doxygen takes for a table, a range "ex1 to ex5" left behind by a sixth exercise, and the rest below;
and those met when chapter 8 was written with ./workbook new, which only the build or the docs'
tests found: a return type no header declares (LayerNormGrads) and a struct without its
SCALEBOOK_REMOTE_FIELDS line, \\f$ in a heading and TeX outside $...$ in a caption (the browser
test), a snippet calling a helper the page never shows (docs/tests/check_helpers_shown.py). The
same fixture with the helper shown, and math written $...$ in a heading, has none of them.
Also: a rule added to PLUGINS is run (the prose check plugs in there), and `./workbook lint` itself
prints FILE:LINE: lines and exits 1 on a problem, 0 on none.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scalebook import lint as linting, scaffold
from scalebook.course import read_manifest
from tests.harness import COURSE_FOLDERS, FIXTURE_COURSE, ROOT, expect, finish

SUMS = "chapters/01-fixture-sums"


def edit(root: Path, relative: str, old: str, new: str) -> None:
    path = root / relative
    text = path.read_text()
    assert old in text, f"the fixture's {relative} no longer holds {old!r}: update this test"
    path.write_text(text.replace(old, new, 1))


def write(root: Path, relative: str, text: str) -> None:
    (root / relative).parent.mkdir(parents=True, exist_ok=True)
    (root / relative).write_text(text)


def third_exercise_prose_left(root: Path) -> None:
    """A third exercise scaffolded, and the page's "ex1 ... to ex2 ..." put back as it was."""
    page = root / SUMS / "lesson.md"
    before = page.read_text()
    scaffold.new_exercise(root, read_manifest(root / SUMS), "extra",
                          scaffold.parse_signature("double extra(double x)", "extra"))
    line = next(l for l in before.splitlines() if "to `ex2_scaled.cpp`" in l)
    text = page.read_text()
    page.write_text(text.replace(line.replace("ex2_scaled.cpp", "ex3_extra.cpp"), line))


HELPER = "double ones_total(int n) { return scalebook::ch01::total(scalebook::Matrix::Ones(n, n)); }\n\n"


def snippet_with_helper(root: Path, helper_shown: bool) -> None:
    """The page shows the lesson's loop (\\snippet), which calls a helper of the lesson's own; the
    helper's definition inside the region or not."""
    lesson = f"{SUMS}/lesson.cpp"
    edit(root, lesson, "int main(", ("//! [loop]\n" + HELPER if helper_shown else HELPER + "//! [loop]\n") + "int main(")
    edit(root, lesson, "const double t = scalebook::ch01::total(scalebook::Matrix::Ones(n, n));",
         "const double t = ones_total(n);")
    edit(root, lesson, '    lesson.end("totals");', '    //! [loop]\n    lesson.end("totals");')
    edit(root, f"{SUMS}/lesson.md", "\\snippet 01-fixture-sums/lesson.out totals\n",
         "\\snippet 01-fixture-sums/lesson.out totals\n\n\\snippet chapters/01-fixture-sums/lesson.cpp loop\n")


def struct_result(root: Path, fields: str | None) -> None:
    """1.2 returns a struct of the contract's, with a SCALEBOOK_REMOTE_FIELDS line naming FIELDS (None: none)."""
    edit(root, f"{SUMS}/fixture_sums.hpp", "/// \\brief Exercise 1.2:",
         "/// \\brief A result.\nstruct Scaling {\n  Matrix m;  ///< the matrix\n  double f = 0.0;  ///< its factor\n"
         "  double twice() const { return 2 * f; }\n};\n\n/// \\brief Exercise 1.2:")
    if fields is not None:
        edit(root, f"{SUMS}/fixture_sums.hpp", "}  // namespace scalebook::ch01\n", "}  // namespace scalebook::ch01\n"
             '#if __has_include("scalebook/remote.hpp")\n#include "scalebook/remote.hpp"\n'
             f"SCALEBOOK_REMOTE_FIELDS(scalebook::ch01::Scaling, {fields});\n#endif\n")
    edit(root, f"{SUMS}/remote.def", "SCALEBOOK_REMOTE(1.2, scaled, Matrix,", "SCALEBOOK_REMOTE(1.2, scaled, Scaling,")


def planted_rule(folder: Path):
    return [(folder / "lesson.md", 3, "planted: the plug-in ran")]


# (what is planted, how, the file the problem must name, words its message must say)
PLANTS = [
    ("a stub the manifest does not name", lambda r: write(r, "exercises/01-fixture-sums/ex3_extra.cpp", "//\n"),
     "exercises/01-fixture-sums/ex3_extra.cpp", "not in the manifest"),
    ("a solution missing", lambda r: (r / "solutions/01-fixture-sums/ex2_scaled.cpp").unlink(),
     "solutions/01-fixture-sums/ex2_scaled.cpp", "missing"),
    ("remote.def without an exercise's line", lambda r: edit(r, f"{SUMS}/remote.def",
                                                             "SCALEBOOK_REMOTE(1.2, scaled, Matrix, const Matrix&, double)\n", ""),
     f"{SUMS}/remote.def", "no line for 1.2's scaled"),
    ("a function renamed in its stub only", lambda r: edit(r, "exercises/01-fixture-sums/ex2_scaled.cpp",
                                                           "Matrix scaled(", "Matrix scale("),
     "exercises/01-fixture-sums/ex2_scaled.cpp", "scaled (exercise 1.2) is not defined here"),
    ("a stub calling not_implemented with another exercise's id",
     lambda r: edit(r, "exercises/01-fixture-sums/ex2_scaled.cpp", 'not_implemented("1.2"', 'not_implemented("1.1"'),
     "exercises/01-fixture-sums/ex2_scaled.cpp", 'not_implemented("1.1", "scaled")'),
    ("a contract without a function's declaration", lambda r: edit(r, f"{SUMS}/fixture_sums.hpp",
                                                                  "Matrix scaled(const Matrix& x, double factor);", ""),
     f"{SUMS}/fixture_sums.hpp", "no declaration of scaled"),
    ("a declaration documented as another exercise", lambda r: edit(r, f"{SUMS}/fixture_sums.hpp", "Exercise 1.2:", "Exercise 1.1:"),
     f"{SUMS}/fixture_sums.hpp", "scaled is documented as exercise 1.1; the manifest makes it 1.2"),
    ("a page's bullet naming another function", lambda r: edit(r, f"{SUMS}/lesson.md", "**1.2 `scaled(", "**1.2 `scale("),
     f"{SUMS}/lesson.md", "the bullet of 1.2 names scale"),
    ("hints without an exercise's section", lambda r: edit(r, f"{SUMS}/hints.md", "## 1.2 scaled", "## About scaling"),
     f"{SUMS}/hints.md", "no section for 1.2"),
    ("a hints section titled with another function", lambda r: edit(r, f"{SUMS}/hints.md", "## 1.2 scaled", "## 1.2 scale"),
     f"{SUMS}/hints.md", "titled 'scale'"),
    ("a named mistake without advice", lambda r: edit(r, f"{SUMS}/hints.md", "If the check names [scaled_divided]:", "Then:"),
     f"{SUMS}/hints.md", "[scaled_divided] has no advice"),
    ("advice for an id no check declares", lambda r: edit(r, f"{SUMS}/hints.md", "## 1.2 scaled",
                                                          "If the check names [ghost_id]: nothing.\n\n## 1.2 scaled"),
     f"{SUMS}/hints.md", "advice for [ghost_id]"),
    ("a stub the page does not show", lambda r: edit(r, f"{SUMS}/lesson.md", "\\include exercises/01-fixture-sums/ex2_scaled.cpp", ""),
     f"{SUMS}/lesson.md", "the stub of 1.2 is not shown"),
    ("a solution the instructor's page does not show",
     lambda r: edit(r, f"{SUMS}/lesson.md", "\\include solutions/01-fixture-sums/ex2_scaled.cpp", ""),
     f"{SUMS}/lesson.md", "the reference of 1.2 is not shown"),
    ("a range of files left behind by a new last exercise", third_exercise_prose_left,
     f"{SUMS}/lesson.md", "the last exercise file is now ex3_extra.cpp"),
    ("a hidden mutant without # expect:", lambda r: edit(r, f"{SUMS}/bugzoo/hidden/total_first_row_only.mutant",
                                                         "# expect: known mistake [total_first_row_only]\n", ""),
     f"{SUMS}/bugzoo/hidden/total_first_row_only.mutant", "# expect: TEXT"),
    ("a lesson that writes no data file", lambda r: edit(r, f"{SUMS}/lesson.cpp",
                                                         'lesson.table("ch01_totals.dat", {"n", "total"}, {sizes, totals});', ""),
     f"{SUMS}/lesson.cpp", "writes no data file"),
    ("a chapter folder without a manifest", lambda r: write(r, "chapters/02-half-done/lesson.md", "Chapter 2\n"),
     "chapters/02-half-done", "no chapter.json"),
    ("two chapters with one number", lambda r: shutil.copytree(r / "chapters/03-fixture-gap", r / "chapters/03-fixture-copy"),
     "chapters/03-fixture-gap/chapter.json", "number 3 is also"),
    ("a manifest numbered unlike its folder", lambda r: edit(r, "chapters/03-fixture-gap/chapter.json", '"number": 3', '"number": 4'),
     "chapters/03-fixture-gap/chapter.json", "NN its number 04"),
    ("exercises out of order", lambda r: edit(r, f"{SUMS}/chapter.json", '"id": "1.1"', '"id": "1.3"'),
     f"{SUMS}/chapter.json", "exercise 1's id is '1.3'"),
    ("a manifest that is not JSON", lambda r: edit(r, f"{SUMS}/chapter.json", '"bench": false,', '"bench": false'),
     f"{SUMS}/chapter.json", "not JSON"),
    ("a manifest's bench unlike its CMakeLists.txt", lambda r: edit(r, f"{SUMS}/chapter.json", '"bench": false', '"bench": true'),
     f"{SUMS}/chapter.json", '"bench" is true'),
    ("a check named without its exercise id", lambda r: edit(r, f"{SUMS}/checks.cpp", 'TEST_CASE("1.1 an empty', 'TEST_CASE("an empty'),
     f"{SUMS}/checks.cpp", "must start with its exercise id"),
    ("a check of an exercise the chapter does not have", lambda r: edit(r, f"{SUMS}/checks.cpp", 'TEST_CASE("1.1 an empty', 'TEST_CASE("2.1 an empty'),
     f"{SUMS}/checks.cpp", "2.1 is not an exercise"),
    ("an exercise without a check", lambda r: [edit(r, f"{SUMS}/checks.cpp", 'TEST_CASE("1.2', 'TEST_CASE("1.1') for _ in "ab"],
     f"{SUMS}/checks.cpp", "exercise 1.2 has no check"),
    ("a hidden check named like a visible one", lambda r: edit(r, f"{SUMS}/hidden_checks.cpp", "1.1 a matrix of three rows sums every row",
                                                              "1.1 an empty matrix throws ShapeError"),
     f"{SUMS}/hidden_checks.cpp", "has the name of a visible one"),
    ("a | in a code span of the hints", lambda r: edit(r, f"{SUMS}/hints.md", "`x * factor`", "`!(factor > 0) || !std::isfinite(factor)`"),
     f"{SUMS}/hints.md", "table row"),
    ("something left to write", lambda r: edit(r, f"{SUMS}/hints.md", "2. Eigen's", "2. SCALEBOOK-TODO: a pointer. Eigen's"),
     f"{SUMS}/hints.md", "left to write: a pointer"),
    ("a figure without a title", lambda r: edit(r, f"{SUMS}/figures/ch01_totals.gp", "set title", "set label"),
     f"{SUMS}/figures/ch01_totals.gp", "no `set title`"),
    ("a figure the manifest does not name", lambda r: write(r, f"{SUMS}/figures/ch01_more.gp", 'set title "x"\n'),
     f"{SUMS}/figures/ch01_more.gp", "not in the manifest"),
    ("a figure plotting data the lesson does not write", lambda r: edit(r, f"{SUMS}/figures/ch01_totals.gp",
                                                                        'plot "ch01_totals.dat"', 'plot "ch01_sizes.dat"'),
     f"{SUMS}/figures/ch01_totals.gp", "plots ch01_sizes.dat"),
    ("a mutant of a file that is not a source", lambda r: edit(r, f"{SUMS}/bugzoo/scaled_divided.mutant", "file: ex2_scaled.cpp",
                                                               "file: ex2_scale.cpp"),
     f"{SUMS}/bugzoo/scaled_divided.mutant", "is not one of the chapter's sources"),
    ("an exercise without a bug-zoo mutant", lambda r: (r / SUMS / "bugzoo/scaled_divided.mutant").unlink(),
     f"{SUMS}/bugzoo", "no mutant of ex2_scaled.cpp"),
    ("a mutant whose id no check declares", lambda r: (r / SUMS / "bugzoo/scaled_divided.mutant").rename(
        r / SUMS / "bugzoo/scaled_halved.mutant"),
     f"{SUMS}/bugzoo/scaled_halved.mutant", "[scaled_halved] is not declared"),
    ("a reference left as a stub", lambda r: shutil.copy(r / "exercises/01-fixture-sums/ex1_total.cpp",
                                                         r / "solutions/01-fixture-sums/ex1_total.cpp"),
     "solutions/01-fixture-sums/ex1_total.cpp", "the reference calls not_implemented"),
    ("a variant named like no source", lambda r: write(r, "solutions/01-fixture-sums/variants/ex9_other.cpp", "//\n"),
     "solutions/01-fixture-sums/variants/ex9_other.cpp", "named like the reference file it replaces"),
    ("a track folder of no chapter", lambda r: write(r, "exercises/02-gone/ex1_x.cpp", "//\n"),
     "exercises/02-gone", "no chapter has this folder"),
    ("lib claimed by a manifest that names no lib source", lambda r: edit(r, f"{SUMS}/chapter.json", '"bench": false,',
                                                                          '"bench": false, "lib": ["sums.cpp"],'),
     f"{SUMS}/chapter.json", "sums.cpp, which is not in lib/src"),
    ("a term naming a chapter the course does not have", lambda r: write(r, "term.json", json.dumps({"chapters": [1, 2]})),
     "term.json", "no chapter 2"),
    ("a return type no header declares", lambda r: edit(r, f"{SUMS}/remote.def", "SCALEBOOK_REMOTE(1.2, scaled, Matrix,",
                                                        "SCALEBOOK_REMOTE(1.2, scaled, ScaledGrads,"),
     f"{SUMS}/remote.def", "ScaledGrads (1.2's scaled) is declared neither in the chapter's headers nor in lib"),
    ("a struct crossing to the grader without its fields line", lambda r: struct_result(r, None),
     f"{SUMS}/fixture_sums.hpp", "struct Scaling crosses the grader's process boundary (1.2's scaled) but has no "
                                 "SCALEBOOK_REMOTE_FIELDS(scalebook::ch01::Scaling, m, f);"),
    ("a fields line naming the members out of order", lambda r: struct_result(r, "f, m"),
     f"{SUMS}/fixture_sums.hpp", "names f, m; its data members are m, f, in that order"),
    ("\\f$ in a heading", lambda r: edit(r, f"{SUMS}/lesson.md", "## Totals {#", "## Totals of \\f$n^2\\f$ ones {#"),
     f"{SUMS}/lesson.md", "\\f$ in a heading"),
    ("TeX outside $...$ in a figure's caption", lambda r: edit(r, f"{SUMS}/lesson.md", '"The total of an n x n matrix',
                                                               '"The total of x_i over an n x n matrix'),
     f"{SUMS}/lesson.md", "raw TeX in a figure's caption: 'x_i"),
    ("a snippet calling a helper the page never shows", lambda r: snippet_with_helper(r, helper_shown=False),
     f"{SUMS}/lesson.md", "call of ones_total (chapters/01-fixture-sums/lesson.cpp:"),
    ("a snippet of a region its file does not have", lambda r: edit(r, f"{SUMS}/lesson.md", "\\snippet 01-fixture-sums/lesson.out totals\n",
                                                                   "\\snippet chapters/01-fixture-sums/lesson.cpp loop\n"),
     f"{SUMS}/lesson.md", "the file has no region marked //! [loop]"),
    ("a check's own text naming a mistake", lambda r: edit(r, f"{SUMS}/checks.cpp", '"an empty matrix has no total"',
                                                           '"looks like the total of nothing"'),
     f"{SUMS}/checks.cpp", "a mistake named in a check's own text"),
    ("a question in a message", lambda r: edit(r, f"{SUMS}/checks.cpp", '"the factor must be finite"',
                                               '"was the factor finite?"'),
     f"{SUMS}/checks.cpp", "a question in a message is a guess"),
    ("a hidden check's message referring to a comment", lambda r: edit(r, f"{SUMS}/hidden_checks.cpp", 'sums every row") {',
                                                                      'sums every row") {\n  INFO("as worked in the comment");'),
     f"{SUMS}/hidden_checks.cpp", "refers to a comment the student does not see"),
    ("advice keyed on a message's text", lambda r: edit(r, f"{SUMS}/hints.md", "If the check names [scaled_divided]:",
                                                        "If the check says divided:"),
     f"{SUMS}/hints.md", "advice keyed on a message's text"),
    ("a term giving points to an exercise that does not exist",
     lambda r: write(r, "term.json", json.dumps({"chapters": [{"chapter": 1, "points": {"1.9": 2}}]})),
     "term.json", "'1.9', which is not an exercise"),
]


def fixture(scratch: Path, name: str) -> Path:
    root = scratch / name
    for folder in COURSE_FOLDERS:
        shutil.copytree(FIXTURE_COURSE / folder, root / folder)
    (root / "lib").symlink_to(ROOT / "lib")  # lib/src (what a manifest's "lib" may claim), check_messages.py
    (root / "docs").symlink_to(ROOT / "docs")  # docs/tests/check_helpers_shown.py
    return root


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="scalebook-lint-") as temp:
        scratch = Path(temp)
        clean, _ = linting.lint(fixture(scratch, "clean"))
        expect(not clean, "control: the fixture course as shipped has no problem"
                          + (f": {[str(p) for p in clean[:3]]}" if clean else ""))
        for index, (what, plant, file, words) in enumerate(PLANTS):
            root = fixture(scratch, f"plant{index}")
            plant(root)
            problems, _ = linting.lint(root)
            found = [p for p in problems if p.file == file and words in p.message]
            shown = str(found[0]) if found else f"not found among {[str(p) for p in problems][:4]}"
            expect(bool(found), f"{what}: {shown}")
        # The controls of the rules chapter 8 met: the same fixture written as the rules ask.
        root = fixture(scratch, "written-well")
        snippet_with_helper(root, helper_shown=True)
        struct_result(root, "m, f")
        edit(root, f"{SUMS}/lesson.md", "## Totals {#", "## Totals of $x_{ij}$ {#")
        edit(root, f"{SUMS}/lesson.md", '"The total of an n x n matrix', '"The total of $x_i$ over an n x n matrix')
        problems, _ = linting.lint(root)
        expect(not problems, "control: the helper shown in the snippet, the struct with its fields line, math in $...$ "
                             f"in a heading and a caption: no problem {[str(p) for p in problems[:3]]}")
        # A rule added to PLUGINS runs on every chapter, its problems shown as lint's.
        root = fixture(scratch, "plugin")
        linting.PLUGINS.append("tests.unit.test_lint:planted_rule")
        try:
            problems, _ = linting.lint(root)
        finally:
            linting.PLUGINS.remove("tests.unit.test_lint:planted_rule")
        expect(any(p.file == f"{SUMS}/lesson.md" and p.line == 3 and "plug-in ran" in p.message for p in problems),
               "a rule in PLUGINS runs, its problems named by file and line")
        # The command: FILE:LINE: lines, exit 1 on a problem, 0 on none (the fixture as a tree of its own).
        tree = scratch / "tree"
        shutil.copytree(ROOT / "tools", tree / "tools", ignore=shutil.ignore_patterns("__pycache__", "tests"))
        for folder in COURSE_FOLDERS:
            shutil.copytree(FIXTURE_COURSE / folder, tree / folder)
        (tree / "lib").symlink_to(ROOT / "lib")
        ran = subprocess.run([sys.executable, str(tree / "tools" / "workbook.py"), "lint"], capture_output=True, text=True)
        expect(ran.returncode == 0 and "lint: no problem" in ran.stdout, f"lint of a clean course exits 0: {ran.stdout.strip().splitlines()[-1:]}")
        edit(tree, f"{SUMS}/hints.md", "2. Eigen's", "2. SCALEBOOK-TODO: a pointer. Eigen's")
        ran = subprocess.run([sys.executable, str(tree / "tools" / "workbook.py"), "lint", "1"], capture_output=True, text=True)
        expect(ran.returncode == 1 and re.search(rf"^{SUMS}/hints.md:\d+: left to write", ran.stdout, re.M) is not None,
               f"lint of a course with a problem prints FILE:LINE: and exits 1: {ran.stdout.strip().splitlines()[:1]}")
    # The whole real course, timed (a figure for the record, not a pass mark).
    started = time.monotonic()
    problems, read = linting.lint(ROOT)
    print(f"info the real course: {read['chapters']} chapters, {read['files']} files, {len(problems)} problems, "
          f"{time.monotonic() - started:.2f} s")
    return finish("lint finds every planted problem, names its file and says the fix")


if __name__ == "__main__":
    sys.exit(main())
