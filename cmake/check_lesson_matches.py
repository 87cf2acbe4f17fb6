"""A chapter's lesson on a correct solution written another way against the book's lesson.

Runs the book's lesson (on the reference, with --book, as the docs build does) and the lesson on
another correct solution (as `./workbook run` runs a student's, without --book), each in a folder of
its own, and compares their outputs as `./workbook run N --diff` does (tools/scalebook/lessondiff.py,
with the chapter's tolerance). Fails when the other lesson exits non-zero (a claim of the page that a
correct solution breaks, or an error) or when a line would be marked as differing (✗). Prints how
many lines are the same and how many close, and every line that is not the same.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from scalebook import lessondiff  # noqa: E402  (the path above first)


def run(lesson: Path, folder: Path, *extra: str) -> subprocess.CompletedProcess:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return subprocess.run([str(lesson.resolve()), str(folder.resolve()), *extra], cwd=folder, capture_output=True, text=True,
                          errors="replace", check=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book", type=Path, required=True, help="the lesson linked to the reference")
    parser.add_argument("--other", type=Path, required=True, help="the lesson linked to the other solution")
    parser.add_argument("--chapter", type=Path, required=True, help="the chapter's folder (its chapter.json)")
    parser.add_argument("--work", type=Path, required=True, help="a folder for the two runs")
    args = parser.parse_args()
    book = run(args.book, args.work / "book", "--book")
    other = run(args.other, args.work / "other")
    if book.returncode != 0:
        print(f"the book's lesson failed ({book.returncode}):\n{book.stderr}")
        return 1
    rows = lessondiff.compare(other.stdout.splitlines(), book.stdout.splitlines(),
                              lessondiff.tolerance_of(args.chapter))
    kinds = {kind: sum(row.kind == kind for row in rows) for kind in ("same", "close", "differs")}
    print(f"{len(rows)} lines: {kinds['same']} the same, {kinds['close']} close, {kinds['differs']} differing")
    for row in rows:
        if row.kind != "same":
            print(f"  {lessondiff.MARK[row.kind]} other: {row.mine!r}\n    book:  {row.book!r}")
    if other.stderr:
        print(f"the other lesson's standard error:\n{other.stderr}")
    if other.returncode != 0:
        print(f"the lesson on the other solution exited {other.returncode}: a correct solution must see no claim fail")
        return 1
    return 1 if kinds["differs"] else 0


if __name__ == "__main__":
    sys.exit(main())
