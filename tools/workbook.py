#!/usr/bin/env python3
"""./workbook's entry: the argparse tree, one table of commands, one place mapping errors to exit statuses.

Every command is a module. One that parses its own options here has arguments(parser) and
run(args); one that hands the rest of the line to a program of its own (grade, release, test and
the maintainers' tools, whose options may come first: "./workbook grade --out DIR ...") has
main(argv). Only the module of the command given is imported, so that a check starts fast. This
file lives in tools/, so tools/ is on Python's path: `scalebook` and `maintainer` import from it.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from scalebook import ui
from scalebook.config import CHECK_TIMEOUT, MAINTAINER, is_edition
from scalebook.errors import UsageError, WorkbookError

STUDENT, INSTRUCTOR, MAINTAINERS = "student", "instructor", "maintainer"

# name: (module, who it is for, help; help in the student edition where it differs). The edition's
# --help lists only the students' commands; an instructor's still parses and says that it is not part
# of the edition; a maintainer's exists only where tools/maintainer/ does (the edition leaves it out).
COMMANDS = {
    "setup": ("scalebook.commands.setup", STUDENT,
              "install the Debian packages scalebook needs (as root), or name them"),
    "check": ("scalebook.commands.check", STUDENT,
              "rebuild what changed and run one chapter's checks (all without CHAPTER)"),
    "watch": ("scalebook.commands.watch", STUDENT,
              "re-check whenever you save a file under exercises/ (Ctrl-C stops)"),
    "hint": ("scalebook.commands.hint", STUDENT,
             "the next hint for an exercise; --tier N shows hint N, --reset starts over"),
    "run": ("scalebook.commands.run", STUDENT,
            "run a chapter's lesson program on your code (or the reference)",
            "run a chapter's lesson program on your code"),
    "progress": ("scalebook.commands.progress", STUDENT, "per-chapter progress and the next step"),
    "update": ("scalebook.commands.update", STUDENT,
               "take your instructor's fixes, keeping your work (committed or not) byte for byte"),
    "collect": ("scalebook.commands.collect", INSTRUCTOR,
                "instructors: collect the class's repositories at the deadline into submission folders"),
    "grade": ("scalebook.commands.grade", INSTRUCTOR, "instructors: grade submissions (./workbook grade --help)"),
    "gradescope-autograder": ("scalebook.commands.gradescope_autograder", INSTRUCTOR,
                              "instructors: write Gradescope's autograder zip (setup.sh, run_autograder, this grader)"),
    "prairielearn-grader": ("scalebook.commands.prairielearn_grader", INSTRUCTOR,
                            "instructors: write the Docker build context of PrairieLearn's external grader (this grader)"),
    "bench": ("scalebook.commands.bench", STUDENT,
              "time a chapter's benchmark: your code in the student edition, the reference here, against "
              "PyTorch when installed",
              "time your code in a chapter's benchmark (chapters {bench}), beside what the reference "
              "measured at release"),
    "release": ("scalebook.commands.release", INSTRUCTOR,
                "instructors: write the student edition into DIR, or add the changes since the last "
                "release to it as one commit"),
    "new": ("scalebook.commands.new", INSTRUCTOR,
            "authors: write every file a new exercise or chapter needs (./workbook new exercise 3 NAME, "
            "./workbook new chapter 08-topic)"),
    "lint": ("scalebook.commands.lint", INSTRUCTOR,
             "authors: check the course's manifests, files, ids and rules in seconds, without a build"),
    "test": ("scalebook.commands.test", INSTRUCTOR,
             "maintainers and CI: build the reference track and run every test"),
    "mutate": ("maintainer.mutate", MAINTAINERS,
               "maintainers: mutation testing of a chapter's checks (./workbook mutate --help)"),
    "measure-similarity": ("maintainer.measure_similarity", MAINTAINERS,
                           "maintainers: the similarity signal's false positives and recall on known pairs"),
    "time": ("maintainer.timing", MAINTAINERS,
             "maintainers: time the edit loop, grading, the pages or the class analysis (./workbook time --help)"),
}
START = "scalebook.commands.start"   # no command: set up, build, check everything, show progress


def available() -> dict[str, tuple]:
    """The commands of this tree: the maintainers' only where tools/maintainer/ is."""
    return {name: entry for name, entry in COMMANDS.items()
            if entry[1] != MAINTAINERS or MAINTAINER.is_dir()}


def command_word(argv: list[str]) -> int:
    """Where the command's name is in ARGV (len(argv) when none is given)."""
    at = 0
    while at < len(argv) and argv[at].startswith("-"):  # the options before the command
        at += 2 if argv[at] == "--timeout" else 1
    return at


def parser(chosen: str | None) -> argparse.ArgumentParser:
    """The argparse tree: every command listed, the options of CHOSEN's module added (only it is imported)."""
    top = argparse.ArgumentParser(
        prog="./workbook",
        description="scalebook's one command. Without a command: set up (install what is missing), "
                    "build your exercises and the book, check them and show your progress.",
        epilog="CHAPTER is a number (3) or a folder name (03-attention-scaling); exercise ids look "
               "like 3.2.")
    top.add_argument("--timeout", type=float, default=CHECK_TIMEOUT,
                     help=f"seconds one check may run (default {CHECK_TIMEOUT:g})")
    top.set_defaults(module=START)
    commands = top.add_subparsers(title="commands", metavar="COMMAND")
    for name, (module, audience, help_text, *edition_help) in available().items():
        if is_edition():
            help_text = edition_help[0] if edition_help else help_text
        if "{bench}" in help_text:  # the chapters whose manifest says they have a benchmark
            from scalebook.course import all_chapters
            help_text = help_text.format(bench=" and ".join(str(c.number) for c in all_chapters() if c.bench))
        listed = {} if audience != STUDENT and is_edition() else {"help": help_text}
        sub = commands.add_parser(name, description=help_text, **listed)
        sub.set_defaults(module=module)
        sub.add_argument("--timeout", type=float, default=CHECK_TIMEOUT, help=argparse.SUPPRESS)
        if name == chosen and hasattr(importlib.import_module(module), "arguments"):
            importlib.import_module(module).arguments(sub)
        elif name == chosen:  # a program of its own takes the rest of the line
            sub.add_argument("rest", nargs=argparse.REMAINDER, metavar="...")
    return top


def main(argv: list[str]) -> int:
    at = command_word(argv)
    chosen = argv[at] if at < len(argv) and argv[at] in available() else None
    top = parser(chosen)
    try:
        if chosen is not None and available()[chosen][1] != STUDENT and is_edition():
            # Refused before its own options are read: `./workbook collect` alone says that it is
            # not part of the edition, not that a ROSTER is missing.
            from scalebook.loop.setup import instructors_only
            instructors_only(chosen)
        if chosen is not None and not hasattr(importlib.import_module(available()[chosen][0]), "arguments"):
            top.parse_args(argv[:at + 1])  # the options before the command; the rest is the program's
            return importlib.import_module(available()[chosen][0]).main(argv[at + 1:])
        args = top.parse_args(argv)
        return importlib.import_module(args.module).run(args)
    except UsageError as error:
        top.print_usage(sys.stderr)
        print(f"{ui.red('workbook:')} {error}", file=sys.stderr)
        return error.EXIT
    except WorkbookError as error:
        print(f"{ui.red('workbook:')} {error}", file=sys.stderr)
        return error.EXIT
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
