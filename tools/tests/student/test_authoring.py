"""An author adds a chapter and an exercise with ./workbook new, and every existing build takes them.

On the fixture course (chapters 1 and 3) in a git repository of its own, first the builds an author,
a grader and a student already have: the reference build (built), the grading kit (a grading run),
a student edition (released) and a student's copy of it with its own build (./workbook check 1).
Then `./workbook new chapter 02-fixture-scaled` (a chapter numbered into the gap) and `./workbook new
exercise 2 doubled`; lint lists what is left to write; what new wrote builds at once, its stubs
fail every check, and so does the scaffold's reference (`return {}`): the first checks compare with
a value left to write; the files are filled from tests/fixtures/authoring (never committed: release
reads the working tree); lint finds nothing.
In the existing folders, with no cache cleared and nothing configured by hand:
- the reference build builds the chapter, and its checks, the stubs' proof, the bug zoo and the
  grading path pass;
- `./workbook grade --chapters 2` grades the solved and the stub submission (full marks, none);
- a release that fails at its last stage leaves the edition as it was; the next one commits the
  new chapter onto it;
- the student's `./workbook update` takes it, and `./workbook check 2` in their build shows both
  exercises failing on the stubs, chapter 3 still checked.
Last, a term file that leaves chapter 2 out: grading defaults to chapters 1 and 3, and the next
release takes chapter 2 out of the edition without renumbering chapter 3; the student's update and
check 3 still work.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.harness import ROOT, TOOLS, expect, finish, fixture_tree

FILLED = TOOLS / "tests" / "fixtures" / "authoring"
NEW = "02-fixture-scaled"
ENV = dict(os.environ, NO_COLOR="1", COLUMNS="120")


def run(command: list[str], cwd: Path, timeout: float = 1800) -> subprocess.CompletedProcess:
    result = subprocess.run(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            stdin=subprocess.DEVNULL, env=ENV, timeout=timeout)
    return result


def workbook(tree: Path, *args: str) -> subprocess.CompletedProcess:
    """./workbook ARGS in TREE (its script: Debian's python3, which has the packages grading imports)."""
    return run([str(tree / "workbook"), *args], tree)


def git(tree: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@localhost", *args], cwd=tree,
                          capture_output=True, text=True, check=True).stdout


def submissions(tree: Path, base: Path) -> list[Path]:
    """The class: one submission with the reference's files as its exercises, one with the stubs."""
    solved, stubs = base / "class" / "solved", base / "class" / "stubs"
    shutil.copytree(tree / "solutions", solved / "exercises", ignore=shutil.ignore_patterns("variants"))
    shutil.copytree(tree / "exercises", stubs / "exercises")
    return [solved, stubs]


def scores(out: Path, name: str, chapter: str) -> tuple[float, float]:
    path = out / "students" / name / "report.json"
    if not path.is_file():
        return -1.0, -1.0
    tests = [t for t in json.loads(path.read_text())["tests"] if t.get("chapter") == chapter]
    return sum(t.get("points", 0) for t in tests), sum(t.get("max_points", t.get("points", 0)) for t in tests)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="scalebook-authoring-") as temp:
        base = Path(temp)
        tree = base / "instructor"
        fixture_tree(tree)
        (tree / "build").mkdir(exist_ok=True)
        (tree / "build" / "ccache").symlink_to(ROOT / "build" / "ccache")  # this tree's compiler cache
        git(tree, "init", "-q", "-b", "main")
        git(tree, "add", "-A")
        git(tree, "commit", "-q", "-m", "the fixture course")

        # --- the builds that exist before the author adds anything ------------------------------
        configured = run(["cmake", "--preset", "reference"], tree)
        built = run(["ninja", "-C", "build/reference"], tree)
        expect(configured.returncode == 0 and built.returncode == 0,
               f"the reference build of the fixture course builds: {built.stdout[-800:]}")
        edition = base / "edition"
        first = workbook(tree, "release", str(edition), "--no-bench")
        expect(first.returncode == 0, f"the first release: {first.stdout[-800:]}")
        student = base / "student"
        run(["git", "clone", "-q", str(edition), str(student)], base)
        check1 = workbook(student, "check", "1")
        expect("chapter 1" in check1.stdout and (student / "build" / "student" / "build.ninja").exists(),
               f"the student's build exists: {check1.stdout[-400:]}")
        graded = workbook(tree, "grade", "--chapters", "1", "--out", str(base / "grades0"),
                          *map(str, submissions(tree, base / "before")))
        expect(graded.returncode == 0 and (tree / "build" / "grading-kit" / "build.ninja").exists(),
               f"the grading kit exists: {graded.stdout[-800:]}")

        # --- the author's work ------------------------------------------------------------------
        made = workbook(tree, "new", "chapter", NEW, "--exercise", "halved", "--signature", "Matrix halved(const Matrix& x)",
                        "--summary", "a chapter the tools' test writes with ./workbook new: halves and doubles.")
        added = workbook(tree, "new", "exercise", "2", "doubled", "--signature", "Matrix doubled(const Matrix& x)")
        expect(made.returncode == 0 and added.returncode == 0, f"new chapter and new exercise: {made.stdout}{added.stdout}")
        todo = workbook(tree, "lint")
        expect(todo.returncode == 1 and re.search(rf"^exercises/{NEW}/ex2_doubled.cpp:\d+: left to write", todo.stdout, re.M)
               and f"chapters/{NEW}/bugzoo" in todo.stdout, f"lint lists what is left to write: {todo.stdout[-600:]}")
        # What new wrote builds in the existing folder; nothing passes its first checks, the
        # scaffold's reference included, until the author writes the values they compare with.
        scaffolded = run(["ninja", "-C", "build/reference"], tree)
        first = run(["ctest", "--test-dir", "build/reference", "-R", f"^{NEW}/2\\.[12] "], tree)
        failing = sorted(re.findall(rf"{NEW}/(2\.[12]) .*\*\*\*Failed", first.stdout))
        on_stubs = run(["ctest", "--test-dir", "build/reference", "-R", f"^{NEW} every check fails on the untouched stubs"], tree)
        expect(scaffolded.returncode == 0 and failing == ["2.1", "2.2"] and on_stubs.returncode == 0
               and "No tests were found" not in on_stubs.stdout,
               f"the scaffold builds, its stubs fail every check and its reference fails both first checks "
               f"({failing}): {scaffolded.stdout[-600:] if scaffolded.returncode else first.stdout[-600:]}")
        for path in sorted(p for p in FILLED.rglob("*") if p.is_file()):
            target = tree / path.relative_to(FILLED)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
        clean = workbook(tree, "lint")
        expect(clean.returncode == 0, f"filled from the fixtures, lint finds nothing: {clean.stdout[-600:]}")
        scaffolded = [f"chapters/{NEW}/{name}" for name in ("chapter.json", "CMakeLists.txt", "remote.def")]
        expect(all((tree / name).is_file() and "SCALEBOOK-TODO" not in (tree / name).read_text() for name in scaffolded),
               f"the manifest, CMakeLists.txt and remote.def are the scaffold's, unchanged: {scaffolded}")

        # --- the existing reference build ---------------------------------------------------------
        rebuilt = run(["ninja", "-C", "build/reference"], tree)
        expect(rebuilt.returncode == 0, f"the existing reference build takes the new chapter: {rebuilt.stdout[-1500:]}")
        tested = run(["ctest", "--test-dir", "build/reference", "-R", NEW, "-j2"], tree)
        count = re.search(r"(\d+)% tests passed, (\d+) tests failed out of (\d+)", tested.stdout)
        expect(tested.returncode == 0 and count is not None and int(count.group(3)) >= 8,
               f"its checks, the stubs' proof, the bug zoo and the grading path pass there: "
               f"{count.group(0) if count else tested.stdout[-800:]}")

        # --- the existing grading kit -------------------------------------------------------------
        out = base / "grades"
        graded = workbook(tree, "grade", "--chapters", "2", "--out", str(out), *map(str, submissions(tree, base / "after")))
        solved, stubs = scores(out, "solved", NEW), scores(out, "stubs", NEW)
        expect(graded.returncode == 0 and solved[0] == solved[1] > 0 and stubs[0] == 0,
               f"the existing grading kit grades chapter 2: solved {solved}, stubs {stubs}: {graded.stdout[-600:]}")

        # --- releases: one that fails changes nothing, the next commits the chapter ----------------
        head = git(edition, "rev-parse", "HEAD").strip()
        readme = tree / "docs" / "student-README.md"
        kept = readme.read_text()
        readme.write_text(kept + "\n@NOT_FILLED_IN@\n")
        failed = workbook(tree, "release", str(edition), "-m", "chapter 2", "--no-bench")
        readme.write_text(kept)
        expect(failed.returncode != 0 and "NOT_FILLED_IN" in failed.stdout, f"a release failing at its README stops: "
                                                                           f"{failed.stdout[-300:]}")
        expect(git(edition, "rev-parse", "HEAD").strip() == head and not git(edition, "status", "--porcelain").strip()
               and sorted(p.name for p in base.iterdir() if p.name.startswith(".edition")) == [],
               "the failed release left the edition as it was (same commit, no change, no staging folder)")
        second = workbook(tree, "release", str(edition), "-m", "chapter 2", "--no-bench")
        shipped = git(edition, "show", "--stat", "--format=", "HEAD")
        expect(second.returncode == 0 and f"chapters/{NEW}/checks.cpp" in shipped and f"exercises/{NEW}/ex2_doubled.cpp"
               in shipped and "git does not track yet" in second.stdout,
               f"the release takes the new chapter from the working tree (not committed): {second.stdout[-600:]}")

        # --- the student's existing copy and build -------------------------------------------------
        updated = workbook(student, "update")
        check2 = workbook(student, "check", "2")
        expect(updated.returncode == 0 and "✗ 2.1" in check2.stdout and "✗ 2.2" in check2.stdout
               and "Traceback" not in check2.stdout,
               f"after ./workbook update the student's build checks chapter 2: {updated.stdout[-300:]}{check2.stdout[-500:]}")
        check3 = workbook(student, "check", "3")
        expect("✗ 3.1" in check3.stdout, f"and chapter 3 as before: {check3.stdout[-300:]}")

        # --- a term that leaves chapter 2 out ------------------------------------------------------
        (tree / "term.json").write_text(json.dumps({"name": "a term without chapter 2", "chapters": [1, 3]}) + "\n")
        expect(workbook(tree, "lint").returncode == 0, "lint accepts the term file")
        term_out = base / "grades-term"
        graded = workbook(tree, "grade", "--out", str(term_out), str(base / "after" / "class" / "solved"))
        report = term_out / "students" / "solved" / "report.json"
        chapters = sorted({t.get("chapter") for t in json.loads(report.read_text())["tests"]}) if report.is_file() else []
        expect(graded.returncode == 0 and chapters == ["01-fixture-sums", "03-fixture-gap"],
               f"grading follows the term by default: {chapters}")
        third = workbook(tree, "release", str(edition), "-m", "this term: chapters 1 and 3", "--no-bench")
        expect(third.returncode == 0 and not (edition / "chapters" / NEW).exists() and not (edition / "exercises" / NEW).exists()
               and (edition / "chapters" / "03-fixture-gap" / "chapter.json").is_file()
               and json.loads((edition / "chapters" / "03-fixture-gap" / "chapter.json").read_text())["number"] == 3,
               f"the release leaves chapter 2 out and chapter 3 keeps its number: {third.stdout[-400:]}")
        updated = workbook(student, "update")
        check3 = workbook(student, "check", "3")
        expect(updated.returncode == 0 and "✗ 3.1" in check3.stdout and not (student / "chapters" / NEW).exists(),
               f"the student's update drops chapter 2 and check 3 still works: {check3.stdout[-300:]}")
    return finish("a chapter and an exercise written with ./workbook new reach every existing build")


if __name__ == "__main__":
    sys.exit(main())
