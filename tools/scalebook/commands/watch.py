"""./workbook watch [CHAPTER]: re-check whenever a file under exercises/ is saved."""
from __future__ import annotations

import os
import sys
import time

from ..config import ROOT
from .. import ui
from ..loop.screen import check_all
from ..loop.setup import student_setup
from .check import selected


def arguments(parser) -> None:
    parser.add_argument("chapter", nargs="?", metavar="CHAPTER")


def exercises_snapshot() -> dict[str, tuple[float, int]]:
    """Every file under exercises/ (relative path) with its modification time and size."""
    rows = {}
    folder = str(ROOT / "exercises")
    for parent, _, files in os.walk(folder):  # os.walk, not Path.rglob: half the time
        for name in files:
            path = os.path.join(parent, name)
            try:
                stat = os.stat(path)
            except FileNotFoundError:  # removed while we looked
                continue
            rows[path[len(folder) + 1:].replace(os.sep, "/")] = (stat.st_mtime, stat.st_size)
    return rows


def changed_files(before: dict, after: dict) -> list[str]:
    """The files saved, added or removed between two snapshots."""
    return sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))


def wait_for_change(seen: dict) -> list[str]:
    """Returns the files that changed under exercises/, once one did and the folder has been quiet
    for 0.15 s (an editor writes a save in several steps, milliseconds apart). Both waits are part of
    the student's time from saving to the verdict, so they are short: a look at the folder's few
    dozen files takes about a millisecond."""
    while exercises_snapshot() == seen:
        time.sleep(0.1)
    last = exercises_snapshot()
    while True:
        time.sleep(0.15)
        now = exercises_snapshot()
        if now == last:
            return changed_files(seen, now)
        last = now


def what_changed(files: list[str]) -> str:
    """" after 01-feature-scaling/ex1_fit_scaling.cpp changed": an editor's swap and backup files
    (.name.swp, name~, 4913) are named only when nothing else changed."""
    def scratch(name: str) -> bool:
        base = name.rsplit("/", 1)[-1]
        return base.startswith(".") or base.endswith("~") or base.isdigit()
    files = [f for f in files if not scratch(f)] or files
    if not files:
        return ""
    named = ", ".join(ui.printable(f) for f in files[:2]) + (
        f" and {len(files) - 2} more" if len(files) > 2 else "")
    return f" after {named} changed"


WATCHING = "watching exercises/ — save a file to re-check, Ctrl-C to stop"


def watch_screen(lines: list[str], checked_at: str, changed: list[str], columns: int,
                 rows: int) -> list[str]:
    """One screen of `watch`: when it last checked and after which save, the verdicts, the footer;
    every line wrapped at spaces to COLUMNS, ROWS - 1 lines at most (the cursor needs the last)."""
    header = ui.wrap_all([ui.dim(f"checked at {checked_at}{what_changed(changed)}")], columns)
    footer = ui.wrap_all([ui.dim(WATCHING)], columns)
    room = max(1, rows - 1 - len(header) - len(footer))
    body = ui.fit(ui.wrap_all(lines, columns), room)
    return (header + body + footer)[: max(1, rows - 1)]


def run(args) -> int:
    chapters = selected(args)
    student_setup()
    changed: list[str] = []
    try:
        while True:
            seen = exercises_snapshot()
            if ui.TTY:
                sys.stdout.write("\033[H\033[2J")
            columns, rows = ui.width(), ui.height()
            ui.say(ui.wrap_all([ui.dim(f"{time.strftime('%H:%M:%S')} checking{what_changed(changed)}...")],
                               columns)[0])
            lines = check_all(chapters, verbose=True, timeout=args.timeout, limit=rows - 4)
            if ui.TTY:
                sys.stdout.write("\033[H\033[2J")
            for line in watch_screen(lines, time.strftime("%H:%M:%S"), changed, columns, rows):
                ui.say(line)
            changed = wait_for_change(seen)
    except KeyboardInterrupt:
        ui.say("")
        return 0
