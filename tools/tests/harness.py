"""What every tool test shares: the tree's root, expect() and its tally, finish(), a scratch copy, the
fixture course, and the real course's chapter that defines given functions (course_chapter)."""
from __future__ import annotations

import importlib.util
import sys
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from scalebook.course import Chapter

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools"
WORKBOOK = TOOLS / "workbook.py"       # the one entry: `python3 WORKBOOK COMMAND ...`
failures: list[str] = []


def expect(condition: bool, what: str, quiet: bool = False) -> bool:
    """Records WHAT as failed unless CONDITION; prints "ok" or "FAIL" (QUIET: only failures)."""
    if not condition or not quiet:
        print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        failures.append(what)
    return condition


def finish(all_good: str) -> int:
    """The test's last line and exit status: how many expectations failed, or ALL_GOOD."""
    print(f"{len(failures)} failed" if failures else all_good)
    return 1 if failures else 0


def copy_tree(target: Path) -> None:
    """The tracked files of this tree into TARGET (everything but build/ and .git outside git)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True)
    files = [f for f in listed.stdout.decode().split("\0") if f] if listed.returncode == 0 else []
    if not files:
        shutil.copytree(ROOT, target, ignore=shutil.ignore_patterns("build", ".git"))
        return
    for name in files:
        if (ROOT / name).exists():  # deleted in the working tree, not yet committed
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target / name)


FIXTURE_COURSE = TOOLS / "tests" / "fixtures" / "course"   # the tools' tests' own small course
COURSE_FOLDERS = ("chapters", "exercises", "solutions")


def fixture_tree(target: Path) -> None:
    """This tree's tracked files into TARGET with the fixture course (tests/fixtures/course: chapters
    1 and 3, a gap between them, a hidden check) in place of the real one, so that a test of the
    tools holds whatever the real course becomes."""
    copy_tree(target)
    for folder in COURSE_FOLDERS:
        shutil.rmtree(target / folder, ignore_errors=True)
        shutil.copytree(FIXTURE_COURSE / folder, target / folder)
    (target / "term.json").unlink(missing_ok=True)


def load(path: Path):
    """A module from a file outside tools/ (lib/tests' helpers), by path."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


class CourseChapter(NamedTuple):
    """A chapter of the real course as the tests that grade it name it: folder, number, ids, files."""
    chapter: Chapter

    @property
    def folder(self) -> str:          # 03-attention-scaling
        return self.chapter.folder

    @property
    def number(self) -> str:          # "3", as --chapters and ./workbook check take it
        return str(self.chapter.number)

    @property
    def namespace(self) -> str:       # scalebook::ch03
        return f"scalebook::{self.chapter.target}"

    def id(self, function: str) -> str:
        """The exercise whose file defines FUNCTION: 3.1."""
        return next(e for e, names in self.chapter.functions_of().items() if function in names)

    def file(self, function: str) -> str:
        """That exercise's file under exercises/ or solutions/: 03-attention-scaling/ex1_dot_scores.cpp."""
        return f"{self.folder}/{self.chapter.source_of(self.id(function))}"

    def first_check(self, function: str) -> str:
        """The first visible check of that exercise: 3.1 dot scores of the worked example."""
        from scalebook.course import check_names
        exercise = self.id(function) + " "
        names = check_names(ROOT / "chapters" / self.folder / self.chapter.checks)
        return next(name for name in names if name.startswith(exercise))


def course_chapter(*functions: str) -> CourseChapter:
    """The real course's chapter whose exercises define FUNCTIONS, found from the manifests.

    The one place the tests that need the real course's compiled exercises choose their chapter: the
    grading, attack and isolation tests patch these functions' bodies (a segfault in one, a hang in
    another, an exercise whose file calls another's function, lib's copy of an answer, chapter 7's
    memory proof), which the fixture course's few lines do not have. They name the functions they
    patch; the folder, number, ids and files come from the manifests, so that renumbering, renaming
    or reordering the course's chapters changes no test. (scalebook is imported here, not when
    harness is: a test of another tree's grader imports that tree's.)"""
    from scalebook.course import course_chapters
    for chapter in course_chapters(ROOT):
        defined = {name for names in chapter.functions for name in names}
        if set(functions) <= defined:
            return CourseChapter(chapter)
    raise LookupError(f"no chapter of the course defines {', '.join(functions)}, which the grading tests patch: "
                      f"give them a chapter that does (tests/harness.py, course_chapter)")
