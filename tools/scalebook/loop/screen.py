"""What check, watch and progress print.

What check, watch and progress print: a chapter's verdicts, the failure in detail, the progress bars
and the next step.
"""
from __future__ import annotations

import sys

from ..config import STATE
from ..course import Chapter
from .. import ui
from .build import shown
from .errata import pending_lines
from .record import check_chapter, load_record
from .run_checks import diagnosis, verdict_text
from ..verdicts import MARK, WORDS as WHAT


def failure_lines(exercise: str, verdict: dict, limit: int) -> list[str]:
    lines = []
    status = verdict["status"]
    if status == "compile_error":
        lines.append(f"      (log: {shown(STATE)}/*.build.log)")
    else:
        if verdict["check"] and not verdict["check"].endswith(" -"):
            lines.append(f"      {ui.bold(verdict['check'])}")
        parts = [p for chunk in verdict["message"].split(" | ") for p in chunk.split("\n")]
        lines += [f"      {p}" for p in parts if p.strip()]
    lines = ui.fit(lines, limit)
    lines.append(ui.dim(f"      stuck? ./workbook hint {exercise}"))
    return lines


def report_chapter(chapter: Chapter, record: dict, detail_lines: int) -> list[str]:
    out = [f"{ui.bold(f'chapter {chapter.number}')} {chapter.topic}"]
    shown_detail = False
    for exercise in chapter.exercises:
        verdict = record.get(exercise, {"status": "not_run", "check": "", "message": "no check ran"})
        status = verdict["status"]
        if status == "passed":
            out.append(f"  {ui.green(MARK[status])} {exercise}")
            continue
        what = WHAT[status]
        summary = f"  {ui.red(MARK[status])} {exercise}" + (f"  {what}" if what else "")
        if status in ("crashed", "timed_out"):
            summary += f" in \"{verdict['check']}\""
        elif status == "compile_error" or verdict["message"].startswith("not run"):
            summary = f"  {ui.red(MARK[status])} {exercise}  {verdict_text(status, verdict['message'])}"
        out.append(summary)
        if not shown_detail:
            shown_detail = True
            out += failure_lines(exercise, verdict, detail_lines)
    out += hidden_lines(chapter)
    return out


def hidden_lines(chapter: Chapter) -> list[str]:
    """How many further checks of CHAPTER run only at grading (its hidden checks), if any."""
    count = chapter.hidden_count
    if not count:
        return []
    them = "them" if count != 1 else "it"
    where = f"the student edition does not hold {them}" if chapter.hidden_checks else f"your copy does not hold {them}"
    return [ui.dim(f"  + {count} further check{'s' if count != 1 else ''} of chapter {chapter.number} "
                   f"run{'' if count != 1 else 's'} only when your work is graded ({where})")]


def bar(done: int, total: int) -> str:
    return "█" * done + "░" * (total - done)


def progress_lines(chapters: list[Chapter]) -> list[str]:
    out = ["", ui.bold("Progress")]
    passed_all = total_all = 0
    next_step = ""
    for chapter in chapters:
        record = load_record(chapter)
        passed = sum(1 for e in chapter.exercises if record.get(e, {}).get("status") == "passed")
        total = len(chapter.exercises)
        passed_all += passed
        total_all += total
        broken = [e for e in chapter.exercises if record.get(e, {}).get("status") == "compile_error"]
        note = ui.red(f"  {', '.join(broken)} does not compile") if broken else ""
        out.append(f"  chapter {chapter.number:<2} {passed}/{total}  {bar(passed, total)}  {chapter.topic}{note}")
        if not next_step:
            for exercise in chapter.exercises:
                verdict = record.get(exercise)
                if verdict is None:
                    next_step = f"exercise {exercise} — not checked yet: ./workbook check {chapter.number}"
                    break
                if "is not implemented yet" in verdict["message"]:
                    next_step = (f"exercise {exercise} — not started yet: open "
                                 f"exercises/{chapter.folder}/{chapter.source_of(exercise)}")
                    break
                if verdict["status"] != "passed":
                    if verdict["status"] == "compile_error" or verdict["message"].startswith("not run"):
                        next_step = f"exercise {exercise} " + verdict_text(verdict["status"], verdict["message"])
                        break
                    what = WHAT[verdict["status"]]
                    said = diagnosis(verdict["message"])
                    next_step = f"exercise {exercise} — " + (f"{what}: " if what else "") + (
                        said or verdict["message"])
                    break
    out.append(f"  {ui.bold(f'{passed_all}/{total_all} exercises')}")
    out.append("")
    out.append(f"{ui.yellow('next:')} {next_step[:300]}" if next_step else ui.green("Every exercise passes."))
    return out


def check_all(chapters: list[Chapter], verbose: bool, timeout: float, limit: int | None = None) -> list[str]:
    out: list[str] = []
    detail = 20 if limit is None else max(4, limit // 2)
    for chapter in chapters:
        progress = ui.Progress(f"Checking chapter {chapter.number}...") if verbose and ui.TTY else None
        record = check_chapter(chapter, progress, timeout)
        if progress:
            progress.done()
            sys.stdout.write("\033[1A\r\033[K")  # the "Checking..." line goes with its result
        if verbose:
            out += report_chapter(chapter, record, detail)
    return out + progress_lines(chapters) + pending_lines()
