#!/usr/bin/env python3
"""./workbook release DIR — write the student edition of this workbook into DIR.

The edition is what a graded course hands out: every chapter's page, contract, checks, hints and
exercise stubs, the library and the workbook command, but no solutions/, no bug zoo (its mutants
are lines of the solutions), no instructor-only sections of the pages, and none of the
maintainers' tests. The book's lesson output and figures were made by the reference at release
time and ship in docs/prebuilt/, with a copy of the exercise stubs as released
(docs/prebuilt/CHAPTER/stubs): the book shows those, whatever the student's exercises/ hold. DIR
gets its own git history (one commit). Submissions made from the edition are graded by this tree:
`./workbook grade` takes their exercises/ folders.
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from scalebook.chapters import all_chapters  # noqa: E402

# Paths of the instructor's tree that the edition leaves out.
LEFT_OUT = [r"^solutions/", r"^chapters/[^/]+/bugzoo/", r"^tools/tests/", r"^tools/test_grading\.py$",
            r"^tools/apply_mutant\.py$", r"^tools/time_edit_loop\.py$", r"^\.ci/", r"^docs/tests/"]


def tracked() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    return sorted(f for f in listed.stdout.decode().split("\0") if f)


def without_instructor_sections(text: str) -> str:
    return re.sub(r"\n?\\if instructor\b.*?\\endif\n?", "\n", text, flags=re.S)


def main() -> int:
    parser = argparse.ArgumentParser(prog="./workbook release", description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path, metavar="DIR", help="an empty or new folder")
    args = parser.parse_args()
    target = args.dir.resolve()
    if target.exists() and any(target.iterdir()):
        parser.error(f"{target} exists and is not empty")
    if ROOT == target or ROOT in target.parents:
        parser.error("DIR must be outside this tree")

    print("Running the lessons on the reference for the edition's book...", flush=True)
    build = ROOT / "build" / "reference"
    if not (build / "build.ninja").exists():
        subprocess.run(["cmake", "--preset", "reference"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    chapters = all_chapters()
    subprocess.run(["cmake", "--build", str(build), "--target",
                    *[f"{c.target}_docs_assets" for c in chapters]], check=True, stdout=subprocess.DEVNULL)

    target.mkdir(parents=True, exist_ok=True)
    for name in tracked():
        if any(re.search(pattern, name) for pattern in LEFT_OUT):
            continue
        source, copy = ROOT / name, target / name
        copy.parent.mkdir(parents=True, exist_ok=True)
        if re.match(r"^chapters/[^/]+/lesson\.md$", name):
            copy.write_text(without_instructor_sections(source.read_text()))
        else:
            shutil.copy2(source, copy)
    for chapter in chapters:
        generated = build / "docs" / "generated" / chapter.folder
        prebuilt = target / "docs" / "prebuilt" / chapter.folder
        prebuilt.mkdir(parents=True, exist_ok=True)
        for path in sorted(generated.iterdir()):
            if path.suffix in (".out", ".svg"):
                shutil.copy2(path, prebuilt / path.name)
        # The book shows the exercise stubs as released, not the student's work in progress.
        stubs = prebuilt / "stubs"
        stubs.mkdir()
        for source in chapter.sources:
            shutil.copy2(target / "exercises" / chapter.folder / source, stubs / source)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    (target / "EDITION").write_text(f"scalebook, student edition, released from {commit}\n")
    git = ["git", "-c", "user.name=scalebook", "-c", "user.email=scalebook@localhost"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=target, check=True)
    subprocess.run(["git", "add", "-A"], cwd=target, check=True)
    subprocess.run([*git, "commit", "-q", "-m", f"scalebook student edition (from {commit})"], cwd=target,
                   check=True)
    print(f"student edition written to {target}: start it there with ./workbook")
    return 0


if __name__ == "__main__":
    sys.exit(main())
