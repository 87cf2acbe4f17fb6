#!/usr/bin/env python3
"""Maintainers' measure of the student's loop: a code change in one exercise file -> that
chapter's verdict from `./workbook check CHAPTER`, in a scratch copy of the workbook (your own
exercises/ is never touched). Each run changes code, not a comment (a comment-only edit is served
from ccache and measures nothing): it appends a function with a new constant.

    tools/time_edit_loop.py [--chapter 3] [--runs 7] [--exercise 1] [--stub]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from scalebook.chapters import resolve_chapter  # noqa: E402
from tests.test_student_loop import copy_tree  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chapter", default="3")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--exercise", type=int, default=1, help="which exercise file (1 = the first)")
    parser.add_argument("--stub", action="store_true", help="time the untouched stub, not a solved file")
    args = parser.parse_args()
    chapter = resolve_chapter(args.chapter)
    source = chapter.sources[args.exercise - 1]
    with tempfile.TemporaryDirectory(prefix="scalebook-edit-loop-") as temp:
        tree = Path(temp) / "workbook"
        tree.mkdir()
        copy_tree(tree)
        file = tree / "exercises" / chapter.folder / source
        if not args.stub:
            shutil.copy2(tree / "solutions" / chapter.folder / source, file)
        env = dict(os.environ, NO_COLOR="1")
        check = [str(tree / "workbook"), "check", str(chapter.number)]
        subprocess.run(check, cwd=tree, env=env, stdout=subprocess.DEVNULL, check=True)  # first build
        times = []
        for run in range(1, args.runs + 1):
            with open(file, "a") as out:  # a code change: a new function, a new constant
                out.write(f"\nint scalebook_edit_loop_{run}() {{ return {run * 7919}; }}\n")
            start = time.monotonic()
            result = subprocess.run(check, cwd=tree, env=env, stdout=subprocess.PIPE, text=True)
            times.append(time.monotonic() - start)
            if result.returncode != 0:
                print(result.stdout)
                return 1
            print(f"run {run}: {times[-1]:.2f} s", flush=True)
    print(f"median edit -> verdict for {chapter.folder}/{source} ({'stub' if args.stub else 'solved'}): "
          f"{statistics.median(times):.2f} s over {args.runs} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
