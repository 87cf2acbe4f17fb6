#!/usr/bin/env python3
"""Chapter 2's benchmark: DLwP's K-fold trained with the build's exercises, lib's trainer and PyTorch.

    ch02.py --bench BUILD/chapters/02-small-models/ch02_bench [--whose reference|yours]
            [--repeat N] [--no-torch]

Runs ch02_bench (chapters/02-small-models/bench.cpp, which says what it times and how) with the
options a user gave, parsed here with argparse (runner.py), so that `./workbook bench 2 --help`
lists them without building anything and a mistyped option is refused before the build.
"""
from __future__ import annotations

import argparse
import subprocess
import sys

from runner import at_least_one, parse

SUMMARY = ("DLwP's K-fold on Boston housing (4 folds x 100 epochs) trained with exercises 2.1-2.4, with lib's "
           "trainer and with PyTorch, each the best of several runs in CPU seconds")


def options(parser: argparse.ArgumentParser) -> None:
    """The options a user gives (./workbook bench 2 shows them in its --help without building)."""
    parser.add_argument("--repeat", type=at_least_one, default=3, metavar="N",
                        help="the best of N runs of the whole K-fold counts, on every side (default %(default)s)")
    parser.add_argument("--no-torch", action="store_true", help="leave PyTorch out, even where it is installed")


def main() -> int:
    args = parse(2, SUMMARY, options)  # --whose: ch02_bench was compiled knowing whose code it has
    command = [str(args.bench), "--repeat", str(args.repeat), *(["--no-torch"] if args.no_torch else [])]
    return subprocess.run(command, stdin=subprocess.DEVNULL).returncode


if __name__ == "__main__":
    sys.exit(main())
