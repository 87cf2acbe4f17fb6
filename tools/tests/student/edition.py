"""What the tests of the student edition share: the student (not root), commits, a solved exercise
in the stubs' layout, and comparisons of a student's copy with the instructor's."""
from __future__ import annotations

import os
import pwd
import re
import subprocess
from pathlib import Path

from scalebook.course import all_chapters
from scalebook.loop.errata import FENCE, INSTRUCTIONS
from scalebook.release import readme, write_files
from tests.harness import ROOT
from workbook import COMMANDS, STUDENT as FOR_STUDENTS

STUDENT = "nobody"          # when the tests run as root: the student is uid 65534
CHAPTER = "01-feature-scaling"
SENTENCE_MARK = "(corrected in an erratum)"
CHECK_MARK = "per the erratum"
RENAMED = ("const Scaling& scaling)", "const Scaling& fitted)")  # 1.2's stub, before and after the fix
# The ./workbook commands the edition refuses (an instructor's: "not part of the student edition") or
# lacks (a maintainer's, whose tools/maintainer/ it leaves out): every command of tools/workbook.py's
# table that is not for students, as the table decides it.
REFUSED = sorted(name for name, entry in COMMANDS.items() if entry[1] != FOR_STUDENTS)
# What no file of the edition outside tools/ may name: the folder it lacks, the build and presets of
# the reference, and the commands it refuses (tools/ is the ./workbook command itself, which names
# them in order to refuse them).
MISSING = re.compile(r"solutions/|\./workbook\s+(?:" + "|".join(map(re.escape, REFUSED)) + r")(?![\w-])|"
                     r"--reference\b|build/reference\b|--preset[ =]reference\b")


class Student:
    """Runs commands as the student: uid 65534 with a home of its own when this runs as root,
    otherwise as the user running the test, with a plain PATH and no colours."""

    def __init__(self, home: Path, cache: str):
        self.home = home
        home.mkdir(parents=True)
        self.root = os.geteuid() == 0
        if self.root:
            entry = pwd.getpwnam(STUDENT)
            os.chown(home, entry.pw_uid, entry.pw_gid)
        (home / "tmp").mkdir()
        self.own(home / "tmp")
        # The instructor's compiler cache, read-only: the student's build is the same code.
        self.env = {"HOME": str(home), "PATH": "/usr/local/bin:/usr/bin:/bin", "NO_COLOR": "1", "LANG": "C.UTF-8",
                    "CCACHE_READONLY": "1", "CCACHE_TEMPDIR": str(home / "tmp"), "COLUMNS": "120"}
        self.cache = cache

    def own(self, path: Path) -> None:
        if self.root:
            entry = pwd.getpwnam(STUDENT)
            for item in [path, *path.rglob("*")]:
                os.lchown(item, entry.pw_uid, entry.pw_gid)

    def run(self, command: list[str], cwd: Path, timeout: float = 1800) -> subprocess.CompletedProcess:
        prefix = ["runuser", "-u", STUDENT, "--"] if self.root else []
        return subprocess.run([*prefix, "env", "-i", *[f"{k}={v}" for k, v in self.env.items()], *command],
                              cwd=cwd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)

    def in_terminal(self, command: str, cwd: Path) -> subprocess.CompletedProcess:
        """COMMAND in a pseudo-terminal (script(1)), as git sees a person's terminal."""
        return self.run(["script", "-qec", command, "/dev/null"], cwd)

    def merging(self, clone: Path) -> bool:
        """Whether git is in the middle of a merge there, asked as the student."""
        return self.run(["git", "rev-parse", "-q", "--verify", "MERGE_HEAD"], clone).returncode == 0


def commit(tree: Path, message: str) -> None:
    if not (tree / ".git").exists():
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=tree, check=True)
    subprocess.run(["git", "add", "-A"], cwd=tree, check=True)
    subprocess.run(["git", "-c", "user.name=instructor", "-c", "user.email=instructor@localhost", "commit", "-q",
                    "-m", message], cwd=tree, check=True)


def solved(stub: str, chapter: str, exercise: str) -> str:
    """The stub's lines down to its fence, then the reference's code: an exercise solved as the
    student README says (code below the fence, the instructions left as they are)."""
    lines = stub.splitlines()
    code = (ROOT / "solutions" / chapter / exercise).read_text().splitlines()
    start = next(i for i, line in enumerate(code) if line.startswith("#include"))
    return "\n".join(lines[:lines.index(FENCE) + 1] + code[start:]) + "\n"


def above_fence(text: str) -> str:
    lines = text.splitlines()
    return "\n".join(lines[:lines.index(FENCE) + 1])


def below_fence(text: str) -> str:
    lines = text.splitlines(keepends=True)
    return "".join(lines[[line.rstrip("\n") for line in lines].index(FENCE) + 1:])


def differing(clone: Path, student: Student, keep: set[str], revision: str = "origin/main") -> list[str]:
    """The files of the instructor's REVISION whose content differs in the student's working tree,
    but for KEEP."""
    listed = student.run(["git", "ls-tree", "-r", "-z", "--name-only", revision], clone).stdout
    found = []
    for name in filter(None, listed.split("\0")):
        if name in keep:
            continue
        theirs = subprocess.run(["git", "-c", f"safe.directory={clone}", "show", f"{revision}:{name}"], cwd=clone,
                                capture_output=True).stdout
        mine = (clone / name).read_bytes() if (clone / name).exists() else None
        if mine != theirs:
            found.append(name)
    return found


def missing_named(tree: Path) -> list[str]:
    """Lines of TREE's git files outside tools/ that name what the student edition lacks (MISSING)."""
    listed = subprocess.run(["git", "-c", f"safe.directory={tree}", "ls-files", "-z"], cwd=tree,
                            capture_output=True, text=True).stdout
    found = []
    for name in filter(None, listed.split("\0")):
        if name.startswith("tools/"):
            continue
        try:
            text = (tree / name).read_text()
        except (UnicodeDecodeError, OSError):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if MISSING.search(line):
                found.append(f"{name}:{number}: {line.strip()[:160]}")
    return found


def edition_files(tree: Path, scratch: Path) -> None:
    """Into TREE, the files release writes into a new edition (scalebook/release.py's write_files
    and readme), without a build: what it leaves out left out, the pages without their instructor
    sections, the student presets, the stubs as shipped, an EDITION file; no lesson output (SCRATCH
    holds the reference's empty folders for it) and a stand-in for what a build prints in the README."""
    chapters = all_chapters()
    reference = scratch / "reference"
    for chapter in chapters:
        (reference / "docs" / "generated" / chapter.folder).mkdir(parents=True, exist_ok=True)
    write_files(tree, chapters, reference, {})
    (tree / "README.md").write_text(readme(chapters, "(what ./workbook check 1 prints: not built here)", {}))


def first_erratum(tree: Path) -> list[str]:
    """The first fix, made in the instructor's TREE: a sentence of chapter 1's page, a check of 1.2,
    the instructions of 1.1 (a line changed, a line added above the fence) and of 1.3 (a line
    changed), and the code of 1.2's stub (a parameter renamed). Returns the files it changed."""
    lesson = tree / "chapters" / CHAPTER / "lesson.md"
    text = lesson.read_text()
    paragraph = next(line for line in text.splitlines() if line.endswith(".") and len(line) > 40)
    lesson.write_text(text.replace(paragraph, f"{paragraph} {SENTENCE_MARK}", 1))
    checks = tree / "chapters" / CHAPTER / "checks.cpp"
    checks.write_text(checks.read_text().replace('TEST_CASE("1.2 ', f'TEST_CASE("1.2 {CHECK_MARK} ', 1))
    stubs = tree / "exercises" / CHAPTER
    for name, added in (("ex1_fit_scaling.cpp", "// (An erratum: one sentence more.)"),
                        ("ex3_scale_train_test.cpp", "")):
        lines = (stubs / name).read_text().splitlines()
        lines[lines.index(INSTRUCTIONS) + 1] += f" {SENTENCE_MARK}"
        if added:
            lines.insert(lines.index(FENCE), added)
        (stubs / name).write_text("\n".join(lines) + "\n")
    stub2 = stubs / "ex2_apply_scaling.cpp"
    stub2.write_text(stub2.read_text().replace(*RENAMED))
    return sorted([f"chapters/{CHAPTER}/checks.cpp", f"chapters/{CHAPTER}/lesson.md",
                   *(f"exercises/{CHAPTER}/{name}" for name in ("ex1_fit_scaling.cpp", "ex2_apply_scaling.cpp",
                                                                 "ex3_scale_train_test.cpp"))])
