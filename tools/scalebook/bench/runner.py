"""What chapter 2's and chapter 7's benchmark runners (chNN.py) share: the command line every
runner takes from ./workbook bench (--bench, --whose) around its own options, read with argparse.
The runners run as scripts, so they import this module from their own folder, and
scalebook/commands/bench.py puts that folder on the path before reading a runner's options."""
from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Callable


def at_least_one(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def parse(chapter: int, summary: str, options: Callable[[argparse.ArgumentParser], None]) -> argparse.Namespace:
    """The runner's arguments: --bench (the benchmark's executable), --whose (whose exercises its build
    compiled, for the rows' labels) and the chapter's OPTIONS."""
    parser = argparse.ArgumentParser(description=f"Chapter {chapter}'s benchmark: {summary}")
    parser.add_argument("--bench", type=Path, required=True, help=f"the ch{chapter:02d}_bench executable")
    parser.add_argument("--whose", choices=["reference", "yours"], default="reference",
                        help="whose exercises the build's benchmark times, for the rows' labels (default: "
                             "%(default)s)")
    options(parser)
    args = parser.parse_args()
    if not os.access(args.bench, os.X_OK):
        parser.error(f"{args.bench} is not an executable: build the ch{chapter:02d}_bench target first")
    return args
