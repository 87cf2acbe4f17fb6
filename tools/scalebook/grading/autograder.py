"""Gradescope's autograder and PrairieLearn's external grader: what ships, and what runs inside them.

`./workbook gradescope-autograder` writes a zip (Gradescope unpacks it into /autograder/source);
`./workbook prairielearn-grader` writes a Docker build context (Dockerfile, the same files in
source/, which the image holds as /scalebook). Both hold setup.sh, autograder.json (the chapters
graded, the limits, this tree's commit), COMMIT, and what grading reads of this tree: the build
(CMakeLists.txt, cmake/), lib/, the chapters (contracts, checks, hidden checks, hints, points; not the
bug zoo), the term file (its points), the stubs (exercises/) and the tools (tools/workbook.py, tools/scalebook/); the zip also
run_autograder, the context's source/ also prairielearn (the image's entrypoint). Not the solutions:
the kit is configured with the stubs as its track when there are none (grading/kit.py), and builds
the hidden checks all the same (cmake/Scalebook.cmake), so these grade exactly as ./workbook grade
does, hidden checks included, with no answer on a machine that runs students' code. Nor the book,
the data, the maintainers' tools or tests. Both are deterministic: the same tree and options give
the same bytes (entries sorted, one date, modes 0644 or 0755).

setup.sh (once, as root, when the image is built) installs the Debian packages grading needs
(config.json's "autograder" purpose: no book tool chain, no similarity engine: a grader that sees one
submission at a time has no class to compare, so it grades with --no-similarity), refuses a CMake older than the build needs
(Ubuntu 22.04's 3.22), makes the tree root's alone (a uid box without Landlock could read any file
every user may: the hidden checks), and grades the stubs once: that builds the kit and the precompiled
header into the image, and stops the build, naming the cause and the remedies, on an image where no
sandbox can be made (grading never runs without one; in Docker's default security it is the uid box:
grading/sandbox.py). Per submission, run_autograder (Gradescope: /autograder/submission into
/autograder/results/results.json) or prairielearn (PrairieLearn: /grade/student into
/grade/results/results.json) takes the submission's exercise files (a copy of the workbook, its
exercises/ folder, or the files alone), grades them with `./workbook grade --export gradescope` or
`prairielearn-results`, this same grader and the same result writers, and copies the result into place.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

from .. import config
from ..config import ROOT, packages_for
from ..course import Chapter, all_chapters

from .intake import SOURCE_LIMIT

HOME = Path("/autograder")
CONFIG = "autograder.json"
SHIPPED = ("CMakeLists.txt", "workbook", "cmake/", "lib/", "chapters/", "exercises/", "tools/workbook.py",
           "tools/scalebook/", "term.json")   # the term's points, which the grading kit's build reads
LEFT_OUT = re.compile(r"(^|/)(bugzoo|__pycache__)/|\.pyc$")
ZIP_DATE = (1980, 1, 1, 0, 0, 0)      # the earliest date a zip can hold: every entry's
CMAKE_NEEDED = "3.25"                 # CMakeLists.txt's cmake_minimum_required

SETUP = """#!/usr/bin/env bash
# Run once, as root, when the grader's image is built: by Gradescope (the autograder zip) or by the
# Dockerfile of ./workbook prairielearn-grader (grading/autograder.py says what each step is for).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends {packages}
found=$(cmake --version | sed -n 's/^cmake version \\([0-9.]*\\).*/\\1/p')
if [ "$(printf '%s\\n' {needed} "$found" | sort -V | head -n 1)" != {needed} ]; then
  echo "setup.sh: this image's CMake is $found; scalebook's build needs {needed} or newer." >&2
  echo "Choose a newer base image (Gradescope's Ubuntu 22.04 has 3.22; Ubuntu 24.04 or Debian 12 will do)." >&2
  exit 1
fi
cd "$(dirname "$0")/tools"
exec /usr/bin/python3 -m scalebook.grading.autograder --prepare
"""

RUN = """#!/bin/sh
# Gradescope runs this for each submission, in /autograder: this workbook's grader on
# /autograder/submission, its Gradescope export copied to /autograder/results/results.json.
cd /autograder/source/tools && exec /usr/bin/python3 -m scalebook.grading.autograder --run
"""


def shipped_files(root: Path = ROOT) -> list[str]:
    """The tree's files the zip holds: those under SHIPPED that git tracks or would (not ignored), as they
    are in the work tree."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                            capture_output=True)
    if listed.returncode != 0:
        raise RuntimeError("gradescope-autograder reads the instructor's tree from git: run it in a git checkout")
    names = [n for n in listed.stdout.decode().split("\0") if n]
    return sorted(n for n in names if n.startswith(SHIPPED) and not LEFT_OUT.search(n) and (root / n).is_file())


def tree_commit(root: Path = ROOT) -> str:
    """The tree's commit, and "+changes" when its tracked files differ from it (the zip holds the work tree)."""
    return config.commit(root, with_changes=True)


def entry(name: str, executable: bool) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
    info.create_system = 3  # unix: the mode below is read
    info.external_attr = ((0o100755 if executable else 0o100644) & 0xFFFF) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def shipped(chapters: list[Chapter], limits: dict[str, int], root: Path, hidden_policy: str,
            entry_points: dict[str, str]) -> tuple[dict, dict[str, tuple[bytes, bool]]]:
    """The config (the chapters, LIMITS: grade's limit options by Settings field, what students see of
    the hidden checks, this tree's commit) and every file a grader ships, {name: (bytes, executable)}:
    setup.sh, ENTRY_POINTS ({name: script}), the config, COMMIT and shipped_files()."""
    config = {"chapters": [c.folder for c in chapters], "limits": dict(limits), "commit": tree_commit(root),
              "hidden_policy": hidden_policy}
    members = {"setup.sh": (SETUP.format(packages=" ".join(packages_for("autograder")), needed=CMAKE_NEEDED).encode(), True),
               **{name: (script.encode(), True) for name, script in entry_points.items()},
               CONFIG: ((json.dumps(config, indent=1, sort_keys=True) + "\n").encode(), False),
               "COMMIT": ((config["commit"] + "\n").encode(), False)}
    for name in shipped_files(root):
        mode = (root / name).stat().st_mode
        members[name] = ((root / name).read_bytes(), bool(mode & stat.S_IXUSR))
    return config, members


def write_zip(target: Path, chapters: list[Chapter], limits: dict[str, int], root: Path = ROOT,
              hidden_policy: str = "count") -> dict:
    """Writes the autograder zip at TARGET; returns its config (shipped())."""
    config, members = shipped(chapters, limits, root, hidden_policy, {"run_autograder": RUN})
    temporary = target.with_name(target.name + ".part")
    with zipfile.ZipFile(temporary, "w") as archive:
        for name in sorted(members):
            data, executable = members[name]
            archive.writestr(entry(name, executable), data, compresslevel=9)
    temporary.replace(target)
    return config


# --- inside Gradescope's image ---------------------------------------------------------------------------
def grade_command(config: dict, out: Path, submission: Path, export: bool) -> list[str]:
    """./workbook grade as the zip's config says: its chapters and limits, one submission at a time."""
    from ..commands.grade import LIMIT_OPTIONS
    command = [sys.executable, str(ROOT / "tools" / "workbook.py"), "grade", "--out", str(out), "--jobs", "1",
               "--chapters", ",".join(config["chapters"])]
    for option, field, _ in LIMIT_OPTIONS:
        if field in config["limits"]:
            command += [option, str(config["limits"][field])]
    command += ["--show-hidden", config.get("hidden_policy", "count"), "--no-similarity"]
    return command + (["--export", "gradescope"] if export else []) + [str(submission)]


def stage(submission: Path, into: Path, chapters: list[Chapter]) -> list[str]:
    """The submission's exercise files under INTO/exercises/NN-topic/: found where a copy of the
    workbook has them (exercises/NN-topic/FILE), in a chapter folder (NN-topic/FILE) or alone
    (FILE, when its name is one exercise's); regular files of at most SOURCE_LIMIT bytes (grading's
    intake checks them again). Returns what was found where."""
    shutil.rmtree(into, ignore_errors=True)
    found = []
    for chapter in chapters:
        for source in chapter.sources:
            for place in (submission / "exercises" / chapter.folder / source, submission / chapter.folder / source,
                          submission / source):
                try:
                    info = os.lstat(place)
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode) and info.st_size <= SOURCE_LIMIT:
                    target = into / "exercises" / chapter.folder / source
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(place, target, follow_symlinks=False)
                    found.append(f"{chapter.folder}/{source} from {place.relative_to(submission)}")
                break
    (into / "exercises").mkdir(parents=True, exist_ok=True)
    return found


def protect(root: Path = ROOT) -> None:
    """The shipped tree (its hidden checks, the kit built in it) made root's alone: without Landlock a
    uid box may read whatever every user may (grading/sandbox.py), and kit.py refuses to grade then."""
    root.chmod(0o700)


def prepare() -> int:
    """setup.sh's last step: grade the stubs once (builds the kit into the image; fails where the
    sandbox cannot be made)."""
    protect()
    config = json.loads((ROOT / CONFIG).read_text())
    out = Path("/tmp/scalebook-autograder-prepare")
    shutil.rmtree(out, ignore_errors=True)
    result = subprocess.run(grade_command(config, out / "grades", ROOT / "exercises", export=False))
    shutil.rmtree(out, ignore_errors=True)
    if result.returncode != 0:
        print("setup.sh: grading the stubs failed (above): this image cannot grade", file=sys.stderr)
    return result.returncode


def grade_one(submission: Path, work: Path, results: Path, export: str, who: str) -> int:
    """Grades the exercise files of SUBMISSION (stage()) in WORK, as the shipped config says, and
    copies the EXPORT writer's results.json (gradescope or prairielearn-results, grading/export/) to RESULTS.
    WHO names the caller in what it prints."""
    protect()
    config = json.loads((ROOT / CONFIG).read_text())
    chapters = [c for c in all_chapters() if c.folder in config["chapters"]]
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(mode=0o700, parents=True)
    staged = work / "submission"
    found = stage(submission, staged, chapters)
    print(f"{who}: {len(found)} exercise files: " + "; ".join(found), flush=True)
    grades = work / "grades"
    command = grade_command(config, grades, staged, export=True)
    result = subprocess.run(command[:command.index("--export") + 1] + [export] + command[command.index("--export") + 2:])
    produced = grades / "exports" / export / staged.name / "results.json"
    if result.returncode != 0 or not produced.is_file():
        print(f"{who}: grading failed (exit status {result.returncode}); no results.json", file=sys.stderr)
        return 1
    results.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(produced, results)
    return 0


def run(home: Path = HOME) -> int:
    """run_autograder: grade /autograder/submission into /autograder/results/results.json."""
    return grade_one(home / "submission", home / "work", home / "results" / "results.json", "gradescope",
                     "run_autograder")


def main(argv: list[str]) -> int:
    if argv == ["--prepare"]:
        return prepare()
    if argv == ["--run"]:
        return run()
    if argv == ["--prairielearn"]:
        from .prairielearn import run as prairielearn
        return prairielearn()
    print("usage: python3 -m scalebook.grading.autograder --prepare|--run|--prairielearn (setup.sh, "
          "run_autograder and prairielearn call it)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
