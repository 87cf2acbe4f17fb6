#!/usr/bin/env python3
"""workbook — scalebook's one command, for students, instructors and maintainers."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scalebook import packages, ui  # noqa: E402
from scalebook.build import BuildError, build, build_checks, configure, exercise_objects, shown  # noqa: E402
from scalebook.chapters import ROOT, Chapter, UsageError, all_chapters, chapter_advice, hints_of  # noqa: E402
from scalebook.chapters import resolve_chapter, resolve_exercise  # noqa: E402
from scalebook.checks import (CheckResult, diagnosis, exercise_verdicts, mistake_ids,  # noqa: E402
                              explain_dependencies, registered_checks, run_checks, signal_name,
                              verdict_text)

STUDENT_BUILD = ROOT / "build" / "student"
REFERENCE_BUILD = ROOT / "build" / "reference"
STATE = STUDENT_BUILD / "workbook"
STAMP = ROOT / "build" / ".packages-ok"
CHECK_TIMEOUT = 5.0   # seconds one check may run, as in grading
MARK = {"passed": "✓", "failed": "✗", "crashed": "✗", "timed_out": "✗", "compile_error": "✗",
        "not_run": "✗"}
WHAT = {"failed": "", "crashed": "crashed", "timed_out": "timed out", "compile_error": "does not compile",
        "not_run": "not checked"}


# --- set-up -------------------------------------------------------------------------------------

def student_setup(build_docs: bool = False) -> None:
    packages.ensure(STAMP)
    if not (STUDENT_BUILD / "build.ninja").exists():
        ui.say(ui.bold("Configuring the build (once)..."))
    configure("student", STUDENT_BUILD, STATE)
    if build_docs:
        progress = ui.Progress("Building the library, the lessons and the book...")
        code, _ = build(STUDENT_BUILD, ["lib_tests", "docs"], STATE / "workbook.build.log", progress)
        progress.done()
        if code != 0:
            raise BuildError("the workbook itself failed to build:\n" +
                             "\n".join((STATE / "workbook.build.log").read_text().splitlines()[-25:]) +
                             f"\n(log: {shown(STATE / 'workbook.build.log')})")


# --- checking -----------------------------------------------------------------------------------

def check_chapter(chapter: Chapter, progress: ui.Progress | None = None,
                  timeout: float = CHECK_TIMEOUT) -> dict:
    """Builds and runs one chapter's checks on the student's code; saves and returns the record
    {exercise: {status, check, message}} that progress and hint read."""
    STATE.mkdir(parents=True, exist_ok=True)
    built = build_checks(STUDENT_BUILD, chapter, STATE, progress)
    names = registered_checks(STUDENT_BUILD, chapter.folder)
    results: dict[str, CheckResult] = {}
    if built.binary is not None:
        compiled = [n for n in names if n.split(" ", 1)[0] not in built.compile_errors]
        if compiled:
            results = run_checks(built.binary, compiled, STATE / f"run-{chapter.folder}", timeout)
    elif not built.compile_errors:
        raise BuildError(f"chapter {chapter.number}'s checks did not build: {built.failure}\n"
                         f"(log: {shown(built.log)})")
    errors = dict(built.compile_errors)
    if built.binary is None:  # nothing linked: every exercise is down to the compile errors
        for exercise in chapter.exercises:
            errors.setdefault(exercise, built.failure or "the chapter did not link")
    verdicts = exercise_verdicts(chapter.exercises, results, errors)
    # An exercise that calls one that did not compile cannot run: say so, naming that one.
    if errors and built.binary is not None:
        sources = {e: (source, obj) for e, source, obj in exercise_objects(STUDENT_BUILD, chapter)}
        explain_dependencies(verdicts, errors, sources)
    record = {e: {"status": v.status, "check": v.name, "message": v.message}
              for e, v in verdicts.items()}
    (STATE / f"{chapter.folder}.json").write_text(json.dumps(record, indent=1))
    return record


def load_record(chapter: Chapter) -> dict:
    path = STATE / f"{chapter.folder}.json"
    return json.loads(path.read_text()) if path.exists() else {}


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
    return out


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
    return out + progress_lines(chapters)


# --- commands -----------------------------------------------------------------------------------

def cmd_start(args) -> int:
    student_setup(build_docs=True)
    chapters = all_chapters()
    for line in check_all(chapters, verbose=False, timeout=args.timeout):
        ui.say(line)
    ui.say("")
    ui.say(f"book: {(STUDENT_BUILD / 'docs' / 'html' / 'index.html').as_uri()}")
    return 0


def cmd_setup(args) -> int:
    packages.ensure(STAMP)
    ui.say("Every package scalebook needs is installed. Next: ./workbook")
    return 0


def selected(args) -> list[Chapter]:
    return [resolve_chapter(args.chapter)] if args.chapter else all_chapters()


def cmd_check(args) -> int:
    chapters = selected(args)
    student_setup()
    for line in check_all(chapters, verbose=True, timeout=args.timeout):
        ui.say(line)
    return 0


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


def cmd_watch(args) -> int:
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


def cmd_progress(args) -> int:
    chapters = all_chapters()
    student_setup()
    for line in check_all(chapters, verbose=False, timeout=args.timeout):
        ui.say(line)
    return 0


def cmd_hint(args) -> int:
    chapter, exercise = resolve_exercise(args.exercise)
    hints = hints_of(chapter, exercise)
    if not hints.tiers:
        raise UsageError(f"exercise {exercise} has no hints in chapters/{chapter.folder}/hints.md")
    count = len(hints.tiers)
    state = STATE / "hints" / exercise
    seen = int(state.read_text()) if state.exists() else 0
    if args.reset:
        state.unlink(missing_ok=True)
        ui.say(f"Hints for {exercise} start over: ./workbook hint {exercise} shows hint 1 of {count}.")
        return 0
    if args.tier is not None:
        if not 1 <= args.tier <= count:
            raise UsageError(f"exercise {exercise} has hints 1 to {count}, not {args.tier}")
        tier = args.tier
    else:
        tier = min(seen + 1, count)
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(str(max(seen, tier)))
    verdict = load_record(chapter).get(exercise, {})
    named = mistake_ids(verdict.get("message", ""))  # what the last check proved, by id
    advice = dict(chapter_advice(chapter, exercise))
    for mistake in named:
        if mistake in advice:
            ui.say(f"{ui.bold('Your last check found a known mistake')}: [{mistake}]")
            ui.say(f"  {advice[mistake]}")
            ui.say("")
    ui.say(ui.bold(f"Hint {tier} of {count} for exercise {exercise}"))
    ui.say("  " + hints.tiers[tier - 1])
    if tier < count:
        ui.say(ui.dim(f"Still stuck? ./workbook hint {exercise} shows hint {tier + 1}; "
                      f"--tier N shows any hint, --reset starts over."))
    else:
        ui.say(ui.dim(f"That is the most specific hint (--tier N shows an earlier one, --reset starts "
                      f"over); the chapter's page explains the idea in full."))
    return 0


def cmd_run(args) -> int:
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
    from scalebook import lessondiff  # only this command needs it
    book = STUDENT_BUILD / "docs" / "generated" / chapter.folder / "lesson.out"
    result = subprocess.run([str(binary), str(out_dir)], stdin=subprocess.DEVNULL, capture_output=True,
                            text=True, errors="replace")
    (out_dir / "lesson.out").write_text(result.stdout)
    rows = lessondiff.compare(result.stdout.splitlines(), book.read_text(errors="replace").splitlines(),
                              lessondiff.tolerance_of(ROOT / "chapters" / chapter.folder))
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


def cmd_test(args) -> int:
    instructors_only("the maintainers' test")
    packages.ensure(STAMP)
    configure("reference", REFERENCE_BUILD, REFERENCE_BUILD / "workbook")
    progress = ui.Progress("Building the reference track, its checks, the stubs' proof, the bug zoo "
                           "and the book...")
    code, output = build(REFERENCE_BUILD, ["all"], REFERENCE_BUILD / "workbook" / "build.log", progress)
    progress.done()
    if code != 0:
        ui.say(output[-6000:])
        ui.say(ui.red("the reference build failed"))
        return 1
    ui.say(ui.bold("Running every test..."))
    command = ["ctest", "--preset", "reference"]
    if args.ctest_args:
        command += args.ctest_args
    return subprocess.run(command, cwd=ROOT, stdin=subprocess.DEVNULL).returncode


EDITION = ROOT / "EDITION"


def cmd_bench(args) -> int:
    """A chapter's benchmark (target chNN_bench, built with its own flags); tools/bench_chNN.py,
    where a chapter has one, runs it and its PyTorch peer side by side. In the maintainers' tree it
    times the reference (the reference build); in the student edition, the student's own code."""
    chapter = resolve_chapter(args.chapter)
    if EDITION.exists():
        return student_bench(chapter, args.bench_args)
    packages.ensure(STAMP, BENCH_PACKAGES)
    configure("reference", REFERENCE_BUILD, REFERENCE_BUILD / "workbook")
    return run_bench(chapter, REFERENCE_BUILD, REFERENCE_BUILD / "workbook", "reference", args.bench_args)


BENCH_PACKAGES = ["libbenchmark-dev"]  # Google Benchmark, for chapter 7's


def run_bench(chapter: Chapter, build_dir: Path, log_dir: Path, whose: str, bench_args: list[str]) -> int:
    """Builds the chapter's benchmark in BUILD_DIR and runs it, through tools/bench_chNN.py where
    the chapter has one; WHOSE ("reference" or "yours") says whose exercises that build's track is,
    for the rows' labels (the benchmark itself prints whose code each row timed)."""
    target = f"{chapter.target}_bench"
    progress = ui.Progress(f"Building {target}...")
    code, output = build(build_dir, [target], log_dir / "bench.build.log", progress)
    progress.done()
    if code != 0:
        if "unknown target" in output:
            raise UsageError(f"chapter {chapter.number} has no benchmark (chapters with one: "
                             f"{', '.join(str(c.number) for c in all_chapters() if has_bench(c))})")
        raise BuildError(f"{target} did not build:\n{output[-3000:]}")
    binary = build_dir / "chapters" / chapter.folder / target
    script = ROOT / "tools" / f"bench_{chapter.target}.py"
    command = ([sys.executable, str(script), "--bench", str(binary), "--whose", whose]
               if script.exists() else [str(binary)])
    return subprocess.run([*command, *bench_args], stdin=subprocess.DEVNULL).returncode


def has_bench(chapter: Chapter) -> bool:
    return "_bench" in (ROOT / "chapters" / chapter.folder / "CMakeLists.txt").read_text()


def release_figures(chapter: Chapter) -> Path:
    """Where the edition keeps what the chapter's benchmark printed at release (tools/release.py)."""
    return ROOT / "docs" / "prebuilt" / chapter.folder / "bench.txt"


def student_bench(chapter: Chapter, bench_args: list[str]) -> int:
    """The edition's benchmark: first what the reference printed at release, labelled as such, then
    the same benchmark on this machine with the student's code (chapter 7: their 7.6 against their
    4.3; chapter 2: the K-fold trained with their 2.1 to 2.4), which it says before it builds."""
    if not has_bench(chapter):
        raise UsageError(f"chapter {chapter.number} has no benchmark (chapters with one: "
                         f"{', '.join(str(c.number) for c in all_chapters() if has_bench(c))})")
    packages.ensure(STAMP, BENCH_PACKAGES)
    figures = release_figures(chapter)
    if figures.exists():
        ui.say(ui.bold("Measured at release, with the reference solution, on the instructor's machine:"))
        for line in figures.read_text().splitlines():
            ui.say(f"  | {line}")
        ui.say("")
    student_setup()
    ui.say(ui.bold("Now on this machine, with your code:"))
    return run_bench(chapter, STUDENT_BUILD, STATE, "yours", bench_args)


def instructors_only(what: str) -> None:
    if EDITION.exists():
        raise UsageError(f"{what} is not part of the student edition "
                         f"({EDITION.read_text().strip()})")


def cmd_release(args) -> int:
    instructors_only("release")
    return subprocess.run([sys.executable, str(ROOT / "tools" / "release.py"), *args.release_args],
                          stdin=subprocess.DEVNULL).returncode


def cmd_grade(args) -> int:
    instructors_only("grading")
    packages.ensure(STAMP)
    return subprocess.run([sys.executable, str(ROOT / "tools" / "grade.py"), *args.grade_args],
                          stdin=subprocess.DEVNULL).returncode


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="./workbook",
        description="scalebook's one command. Without a command: set up (install what is missing), "
                    "build your exercises and the book, check them and show your progress.",
        epilog="CHAPTER is a number (3) or a folder name (03-attention-scaling); exercise ids look "
               "like 3.2.")
    top.add_argument("--timeout", type=float, default=CHECK_TIMEOUT,
                     help=f"seconds one check may run (default {CHECK_TIMEOUT:g})")
    top.set_defaults(run=cmd_start)
    commands = top.add_subparsers(title="commands", metavar="COMMAND")

    def command(name: str, run, help_text: str, instructors: bool = False) -> argparse.ArgumentParser:
        # The student edition's --help lists only what works there; the instructors' commands
        # still parse, and say that they are not part of the edition.
        listed = {} if instructors and EDITION.exists() else {"help": help_text}
        sub = commands.add_parser(name, description=help_text, **listed)
        sub.set_defaults(run=run)
        sub.add_argument("--timeout", type=float, default=CHECK_TIMEOUT, help=argparse.SUPPRESS)
        return sub

    command("setup", cmd_setup, "install the Debian packages scalebook needs (as root), or name them")
    sub = command("check", cmd_check, "rebuild what changed and run one chapter's checks (all without CHAPTER)")
    sub.add_argument("chapter", nargs="?", metavar="CHAPTER")
    sub = command("watch", cmd_watch, "re-check whenever you save a file under exercises/ (Ctrl-C stops)")
    sub.add_argument("chapter", nargs="?", metavar="CHAPTER")
    sub = command("hint", cmd_hint, "the next hint for an exercise; --tier N shows hint N, --reset starts over")
    sub.add_argument("exercise", metavar="EXERCISE")
    group = sub.add_mutually_exclusive_group()
    group.add_argument("--tier", type=int, help="show this hint (1 is the gentlest)")
    group.add_argument("--reset", action="store_true", help="start the hints over")
    sub = command("run", cmd_run, "run a chapter's lesson program on your code"
                  + ("" if EDITION.exists() else " (or the reference)"))
    sub.add_argument("--diff", action="store_true",
                     help="show its output beside the book's, marking the lines that differ "
                          "(exit status 1 when one differs by more than rounding or a timing)")
    sub.add_argument("chapter", metavar="CHAPTER")
    sub.add_argument("--reference", action="store_true",
                     help=argparse.SUPPRESS if EDITION.exists() else "run it on the reference solution")
    command("progress", cmd_progress, "per-chapter progress and the next step")
    sub = command("grade", cmd_grade, "instructors: grade submissions (./workbook grade --help)", instructors=True)
    sub.add_argument("grade_args", nargs=argparse.REMAINDER, metavar="...")
    sub = command("bench", cmd_bench, "time a chapter's benchmark: your code in the student edition, the "
                                      "reference here, against PyTorch when installed"
                  if not EDITION.exists() else "time your code in a chapter's benchmark (chapters 2 and 7), "
                                               "beside what the reference measured at release")
    sub.add_argument("chapter", metavar="CHAPTER")
    sub.add_argument("bench_args", nargs=argparse.REMAINDER, metavar="...", help="passed to the benchmark")
    sub = command("release", cmd_release, "instructors: write the student edition into DIR, or add the changes "
                                          "since the last release to it as one commit", instructors=True)
    sub.add_argument("release_args", nargs=argparse.REMAINDER, metavar="DIR")
    sub = command("test", cmd_test, "maintainers and CI: build the reference track and run every test",
                  instructors=True)
    sub.add_argument("ctest_args", nargs=argparse.REMAINDER, metavar="CTEST_ARGS",
                     help="passed to ctest (e.g. -R ch03)")
    return top


# Commands that hand the rest of the line to another program. argparse's REMAINDER does not take
# words that start with "-" when they come first ("./workbook grade --out DIR ..." was refused), so
# the line is cut after the command word and the rest is handed on untouched.
PASS_THROUGH = {"grade": "grade_args", "release": "release_args", "test": "ctest_args"}


def parse(top: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    at = 0
    while at < len(argv) and argv[at].startswith("-"):  # the options before the command
        at += 2 if argv[at] == "--timeout" else 1
    if at < len(argv) and argv[at] in PASS_THROUGH:
        args = top.parse_args(argv[:at + 1])
        setattr(args, PASS_THROUGH[argv[at]], argv[at + 1:])
        return args
    return top.parse_args(argv)


def main(argv: list[str]) -> int:
    top = parser()
    args = parse(top, argv)
    try:
        return args.run(args)
    except UsageError as error:
        top.print_usage(sys.stderr)
        print(f"{ui.red('workbook:')} {error}", file=sys.stderr)
        return 2
    except (packages.PackageError, BuildError) as error:
        print(f"{ui.red('workbook:')} {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
