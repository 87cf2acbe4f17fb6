"""./workbook lint [CHAPTER...]: every rule of the course checked in seconds, without a build.

./workbook lint [CHAPTER...]: check that the course is consistent, in seconds and without a build.

Each chapter's manifest (chapter.json) against its files and its files against the manifest; an
exercise's id and function names the same everywhere they appear (contract, remote.def, stub,
solution, checks, hints, lesson page); every named mistake with its advice; the rules the build
holds (a lesson writes a data file, a hidden bug-zoo mutant says what a hidden check prints); the
numbering; and whatever a scaffold (./workbook new) left to write. Each problem is printed as
FILE:LINE: what is wrong and what to do. Exit status 1 when there is a problem. `./workbook test`
runs it before building anything.
"""
from __future__ import annotations

import argparse

from ..config import ROOT
from ..course import resolve_chapter, course_chapters
from ..lint import lint
from .. import ui


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = "\n".join(__doc__.splitlines()[4:]).strip()
    parser.add_argument("chapters", nargs="*", metavar="CHAPTER", help="only these chapters (default: the whole course)")


def report(only: list[str] | None = None) -> int:
    """Prints every problem and a summary line; returns the exit status."""
    problems, read = lint(ROOT, only)
    for problem in problems:
        ui.say(str(problem))
    summary = (f"{read['chapters']} chapter{'s' if read['chapters'] != 1 else ''}, {read['exercises']} exercises, "
               f"{read['files']} files read in {read['seconds']:.2f} s")
    if problems:
        ui.say(ui.red(f"lint: {len(problems)} problem{'s' if len(problems) > 1 else ''} ({summary})"))
        return 1
    ui.say(ui.green(f"lint: no problem ({summary})"))
    return 0


def run(args) -> int:
    only = None
    if args.chapters:
        chapters = course_chapters(ROOT)
        only = [resolve_chapter(c, chapters).folder for c in args.chapters]
    return report(only)
