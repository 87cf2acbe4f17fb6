"""./workbook progress: per-chapter progress and the next step."""
from __future__ import annotations

from ..course import all_chapters
from .. import ui
from ..loop.screen import check_all
from ..loop.setup import student_setup


def arguments(parser) -> None:
    pass


def run(args) -> int:
    chapters = all_chapters()
    student_setup()
    for line in check_all(chapters, verbose=False, timeout=args.timeout):
        ui.say(line)
    return 0
