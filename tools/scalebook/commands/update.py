"""./workbook update: take your instructor's fixes, keeping every line of your work.

./workbook update: take your instructor's fixes (a page, a check, a stub corrected) into your copy,
keeping every line of your work, committed or not.

It commits your uncommitted changes first (a commit named "Work in progress"), then merges the
fixes without opening an editor. A fix to an exercise's instructions (above the line "Your code
goes below this line" in the file) always merges beside your code. Where the instructor changed
code that you changed too, your file is kept as you had it, byte for byte, and their change is
written beside it as FILE.erratum.diff, to make by hand (./workbook check reminds you while it is
there). It also finishes a merge that `git pull` left with conflicts. Exit status 1 when a change
is left to make by hand.
"""
from __future__ import annotations

import argparse

from ..config import EDITION
from ..errors import UsageError
from ..loop import errata


def arguments(parser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = "\n".join(__doc__.splitlines()[4:]).strip()


def run(args) -> int:
    if not EDITION.exists():
        raise UsageError("update takes an instructor's fixes into a student's copy of the edition; this is "
                         "the instructor's tree, which takes changes with git pull")
    return errata.update()
