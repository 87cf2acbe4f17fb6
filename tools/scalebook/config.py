"""Where things are and every default and limit the commands share, from config.json and here.

config.json holds what CMake reads too (string(JSON)): the check time limit, the headers of the
precompiled header, the Debian packages by purpose (and the npm packages, by the folder of their
lockfile), Debian's python3, and grading's fixed limits.
Settings and Limits are grading's limits an instructor may override on ./workbook grade's command
line, with their defaults. (grading/native/check.cpp keeps two fixed limits of its own, said there.)
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[2]          # the workbook's tree
TOOLS = ROOT / "tools"
STUDENT_BUILD = ROOT / "build" / "student"
REFERENCE_BUILD = ROOT / "build" / "reference"
GRADING_BUILD = ROOT / "build" / "grading-kit"
STATE = STUDENT_BUILD / "workbook"                  # the student's records, hints seen, logs
EDITION = ROOT / "EDITION"                          # present in the student edition only
MAINTAINER = TOOLS / "maintainer"                   # absent in the student edition
BENCH_RUNNERS = TOOLS / "scalebook" / "bench"       # bench/chNN.py runs chapter NN's benchmark
LIB_HEADERS = ROOT / "lib" / "include" / "scalebook"
CONFIG_FILE = Path(__file__).resolve().with_name("config.json")

_CONFIG = json.loads(CONFIG_FILE.read_text())
CHECK_TIMEOUT = float(_CONFIG["check_seconds"])     # one check in ./workbook check and mutate, as in grading
CTEST_CHECK_TIMEOUT = CHECK_TIMEOUT * _CONFIG["ctest_check_factor"]  # under CTest (sanitizers, a busy CI)
PCH_HEADERS: list[str] = _CONFIG["pch_headers"]     # lib's PCH and grading's, the same headers
PACKAGES: dict[str, list[str]] = _CONFIG["packages"]  # Debian packages by what they are for
PURPOSES: dict[str, list[str]] = _CONFIG["purposes"]  # command -> the kinds of packages it needs
NPM: dict[str, list[str]] = _CONFIG["npm"]          # kind -> folders holding an npm manifest and lockfile
NPM_COMMAND_PACKAGE = _CONFIG["npm_command_package"]  # Debian's package of the npm command, if none is found
DEBIAN_PYTHON = _CONFIG["debian_python"]            # where python3-jinja2, -clang, -torch... live
TOOL_SECONDS = _CONFIG["grading"]["tool_seconds"]   # a grading box's nm or link: CPU and wall seconds
PCH_SECONDS = _CONFIG["grading"]["pch_seconds"]     # precompiling the exercises' headers for grading


# NamedTuples, not dataclasses: every command imports this module, and dataclasses alone cost a
# thirtieth of a second, a tenth of the student's budget for a check.
class Limits(NamedTuple):
    """What one grading box may use. Instructors change them with ./workbook grade's options."""
    cpu_seconds: int = 5          # CPU time per process (a compile's: compile_seconds)
    memory_mb: int = 2048         # address space per process
    box_memory_mb: int = 3072     # the whole box's memory, tmpfs included (cgroup, as root)
    processes: int = 64           # processes in one box
    file_mb: int = 64             # largest file a process may write
    tmp_mb: int = 64              # the box's private /tmp (tmpfs)

    def as_dict(self) -> dict:
        return dict(self._asdict())


class Settings(NamedTuple):
    """Every time limit and budget of a grading run, with the defaults an instructor overrides on
    ./workbook grade's command line: wall-clock seconds, but CPU seconds for one call's CPU and for
    compiling (a busy machine must not fail an honest compile)."""
    call_seconds: int = 10          # one call of a student's function (wall; the worker's client)
    call_cpu_seconds: int = 5       # one call's CPU time (the worker's client)
    check_seconds: int = 60         # one check, however many calls it makes
    submission_seconds: int = 300   # all checks of one submission together
    compile_seconds: int = 30       # compiling one exercise file: CPU seconds
    compile_budget_seconds: int = 240  # compiling all of one submission's files together: CPU seconds
    limits: Limits = Limits()

    def as_dict(self) -> dict:
        return {**self._asdict(), "limits": self.limits.as_dict()}

    @staticmethod
    def from_dict(data: dict) -> "Settings":
        return Settings(**dict(data, limits=Limits(**data["limits"])))


def npm_folders_for(purpose: str) -> list[str]:
    """The folders (relative to the tree) whose pinned npm packages PURPOSE needs, in list order."""
    return [folder for kind in PURPOSES[purpose] for folder in NPM.get(kind, [])]


def packages_for(purpose: str) -> list[str]:
    """Every Debian package PURPOSE (a command: workbook, bench, grade, test) needs, in list order."""
    wanted: list[str] = []
    for kind in PURPOSES[purpose]:
        wanted += [p for p in PACKAGES[kind] if p not in wanted]
    return wanted


def debian_python() -> str:
    """Debian's python3 when present (it sees the python3-* packages), else the one running."""
    import sys
    return DEBIAN_PYTHON if Path(DEBIAN_PYTHON).exists() else sys.executable


def is_edition(root: Path = ROOT) -> bool:
    """Whether ROOT is a student edition: it has the EDITION file release writes (and no solutions/)."""
    return (root / "EDITION").is_file()


def commit(root: Path = ROOT, with_changes: bool = False) -> str:
    """ROOT's commit (git rev-parse --short HEAD), and with WITH_CHANGES "+changes" when its tracked
    files differ from it (what grading and the autograder's zip read is the work tree); for a copy
    without .git (Gradescope's autograder) the first line of its COMMIT file; otherwise "unknown"."""
    try:
        result = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, stdin=subprocess.DEVNULL)
        found = result.stdout.strip() if result.returncode == 0 else ""
        if found and with_changes and subprocess.run(["git", "-C", str(root), "diff", "--quiet", "HEAD", "--"],
                                                     stdin=subprocess.DEVNULL).returncode != 0:
            found += "+changes"
    except OSError:  # no git installed
        found = ""
    if not found and (root / "COMMIT").is_file():
        lines = (root / "COMMIT").read_text(errors="replace").splitlines()
        found = "".join(c for c in (lines[0] if lines else "")[:40] if c.isalnum() or c in "._-+")
    return found or "unknown"
