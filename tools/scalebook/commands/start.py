"""./workbook without a command: set up, build the exercises and the book, check them all, show progress."""
from __future__ import annotations

from ..config import STUDENT_BUILD
from ..course import all_chapters
from .. import ui
from ..loop.screen import check_all
from ..loop.setup import student_setup


def arguments(parser) -> None:
    pass


def run(args) -> int:
    student_setup(build_docs=True)
    chapters = all_chapters()
    for line in check_all(chapters, verbose=False, timeout=args.timeout):
        ui.say(line)
    ui.say("")
    ui.say(f"book: {(STUDENT_BUILD / 'docs' / 'html' / 'index.html').as_uri()}")
    return 0
