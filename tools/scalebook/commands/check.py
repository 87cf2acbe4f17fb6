"""./workbook check [CHAPTER]: rebuild what changed and run one chapter's checks (all without CHAPTER)."""
from __future__ import annotations

from ..course import Chapter, all_chapters, resolve_chapter
from .. import ui
from ..loop.screen import check_all
from ..loop.setup import student_setup


def arguments(parser) -> None:
    parser.add_argument("chapter", nargs="?", metavar="CHAPTER")


def selected(args) -> list[Chapter]:
    return [resolve_chapter(args.chapter)] if args.chapter else all_chapters()


def run(args) -> int:
    chapters = selected(args)
    student_setup()
    for line in check_all(chapters, verbose=True, timeout=args.timeout):
        ui.say(line)
    return 0
