"""./workbook run CHAPTER: run a chapter's lesson program on the student's code, or beside the book's output."""
from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from ..config import is_edition, STATE, STUDENT_BUILD
from ..course import Chapter, resolve_chapter
from ..errors import BuildError
from .. import ui
from ..loop.build import build, shown
from ..loop.record import check_chapter
from ..loop.run_checks import signal_name
from ..loop.setup import instructors_only, student_setup


def arguments(parser) -> None:
    parser.add_argument("--diff", action="store_true",
                        help="show its output beside the book's, marking the lines that differ "
                             "(exit status 1 when one differs by more than rounding or a timing)")
    parser.add_argument("chapter", metavar="CHAPTER")
    parser.add_argument("--reference", action="store_true",
                        help=argparse.SUPPRESS if is_edition() else "run it on the reference solution")


def run(args) -> int:
    chapter = resolve_chapter(args.chapter)
    student_setup()
    out_dir = STATE / f"lesson-{chapter.folder}"
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.reference:
        instructors_only("the reference solution (run --reference)")
        target = f"{chapter.target}_lesson"
    else:
        record = check_chapter(chapter)
        broken = [e for e, v in record.items() if v["status"] == "compile_error"]
        if broken:
            ui.say(ui.red(f"exercise {', '.join(broken)} does not compile; the lesson needs every "
                          f"exercise of chapter {chapter.number}:"))
            for exercise in broken:
                ui.say(f"  {record[exercise]['message']}")
            return 1
        target = f"{chapter.target}_lesson_track"
    targets = [target] + ([f"{chapter.target}_docs_assets"] if args.diff else [])
    code, output = build(STUDENT_BUILD, targets, STATE / "run.build.log")
    if code != 0:
        if args.diff and f"unknown target '{chapter.target}_docs_assets'" in output:
            raise BuildError("this build has no book (SCALEBOOK_BUILD_DOCS is OFF), so there is no "
                             "output of the book's to compare with")
        raise BuildError(f"the lesson program did not build:\n{output[-3000:]}")
    binary = STUDENT_BUILD / "chapters" / chapter.folder / target
    if not args.diff:
        return subprocess.run([str(binary), str(out_dir)], stdin=subprocess.DEVNULL).returncode
    return run_diff(chapter, binary, out_dir)


def run_diff(chapter: Chapter, binary: Path, out_dir: Path) -> int:
    """The lesson's output beside the book's; exit status 1 when a line differs by more than the
    implementation may (lessondiff), as diff(1) does."""
    from .. import lessondiff  # only this command needs it
    book = STUDENT_BUILD / "docs" / "generated" / chapter.folder / "lesson.out"
    result = subprocess.run([str(binary), str(out_dir)], stdin=subprocess.DEVNULL, capture_output=True,
                            text=True, errors="replace")
    (out_dir / "lesson.out").write_text(result.stdout)
    rows = lessondiff.compare(result.stdout.splitlines(), book.read_text(errors="replace").splitlines(),
                              chapter.tolerance)
    left_out = 0
    if result.returncode != 0:  # a lesson that stopped early: its lines, not the whole book missing
        printed = max((k for k, row in enumerate(rows) if row.mine is not None), default=-1) + 1
        rows, left_out = rows[:printed], len(rows) - printed
    for line in lessondiff.render(rows, ui.width()):
        ui.say(line)
    if left_out:
        ui.say(ui.dim(f"  (the book goes on for {lessondiff.count(left_out, 'more line')})"))
    ui.say("")
    if result.stderr.strip():  # timings and the like, which the book leaves out
        ui.say(ui.dim("Your lesson also wrote (to standard error, which the book does not show):"))
        for line in ui.wrap_all(["  " + ui.printable(line) for line in result.stderr.splitlines()], ui.width()):
            ui.say(ui.dim(line))
        ui.say("")
    if result.returncode != 0:
        why = (f"died of {signal_name(-result.returncode)}" if result.returncode < 0
               else f"exited with status {result.returncode}")
        ui.say(ui.red(f"Your lesson {why} after {lessondiff.count(len(result.stdout.splitlines()), 'line')}."))
        return 1
    for line in ui.wrap_all(lessondiff.summary(rows, chapter.number), ui.width()):
        ui.say(line)
    for line in ui.wrap_all([f"(yours: {shown(out_dir / 'lesson.out')}; the book's: {shown(book)})"], ui.width()):
        ui.say(ui.dim(line))
    return 1 if any(row.kind == "differs" for row in rows) else 0
