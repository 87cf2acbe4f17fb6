"""./workbook gradescope-autograder OUT.zip [--chapters LIST] [limits]: Gradescope's autograder zip.

Write the zip Gradescope's programming assignments take: setup.sh (the Debian packages from apt,
the grading kit built into the image), run_autograder (this same grader on /autograder/submission,
its Gradescope export as /autograder/results/results.json) and the part of this tree grading reads,
without the solutions. The steps are in grading/autograder.py. Without --chapters it grades the
term's chapters at the term's points (term.json, shipped with it), as ./workbook grade does.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from ..course import UsageError, resolve_chapter, term_chapters
from ..grading.autograder import write_zip
from ..grading.hidden import DEFAULT_POLICY, POLICIES
from ..config import Settings
from ..loop.setup import instructors_only


def add_grader_options(parser: argparse.ArgumentParser, hidden_help: str) -> None:
    """The options a shipped grader takes (this command's, prairielearn-grader's): --chapters,
    --show-hidden and ./workbook grade's time limits."""
    from .grade import LIMIT_OPTIONS
    parser.add_argument("--chapters", metavar="LIST", help="the chapters the assignment grades, e.g. 3,4 (default: the "
                                                           "term's, term.json; all without one)")
    parser.add_argument("--show-hidden", choices=POLICIES, default=DEFAULT_POLICY, dest="hidden_policy", help=hidden_help)
    defaults = Settings()
    group = parser.add_argument_group("time limits and budgets, as ./workbook grade takes them")
    for option, field, what in LIMIT_OPTIONS:
        group.add_argument(option, type=int, default=getattr(defaults, field), metavar="S", dest=field,
                           help=f"{what} (default {getattr(defaults, field)})")


def grader_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[list, dict[str, int]]:
    """The chapters and limits add_grader_options' options gave (parser.error on a bad one)."""
    from .grade import LIMIT_OPTIONS
    chapters = term_chapters()
    if args.chapters:
        try:
            chapters = [resolve_chapter(c.strip()) for c in args.chapters.split(",")]
        except UsageError as error:
            parser.error(str(error))
    limits = {field: getattr(args, field) for _, field, _ in LIMIT_OPTIONS}
    if min(limits.values()) < 1:
        parser.error("every time limit must be at least 1")
    return chapters, limits


def main(argv: list[str]) -> int:
    instructors_only("gradescope-autograder")
    parser = argparse.ArgumentParser(prog="./workbook gradescope-autograder",
                                     description=" ".join(__doc__.splitlines()[2:6]))
    parser.add_argument("zip", type=Path, metavar="OUT.zip")
    add_grader_options(parser, "the hidden checks on Gradescope: each hidden from students with Gradescope's own "
                               "visibility and a count per chapter shown (count, the default), or each shown by its "
                               "label and verdict (names)")
    args = parser.parse_args(argv)
    chapters, limits = grader_options(parser, args)
    if args.zip.suffix != ".zip":
        parser.error(f"{args.zip}: the autograder is a .zip file")
    args.zip.resolve().parent.mkdir(parents=True, exist_ok=True)
    config = write_zip(args.zip.resolve(), chapters, limits, hidden_policy=args.hidden_policy)
    print(f"{args.zip}: Gradescope autograder for chapters {', '.join(c.folder for c in chapters)} "
          f"(this tree at {config['commit']}). Upload it on the assignment's Configure Autograder page, "
          "with a base image whose CMake is 3.25 or newer (setup.sh stops with that message otherwise): "
          "Ubuntu 24.04, not Gradescope's default 22.04.")
    return 0
