"""What every tool test shares: the tree's root, expect() and its tally, finish(), a scratch copy."""
from __future__ import annotations

import importlib.util
import sys
import shutil
import subprocess
from pathlib import Path

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
