"""./workbook bench CHAPTER: time a chapter's benchmark, the reference here or the student's code in the edition."""
from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path

from ..config import BENCH_RUNNERS, is_edition, REFERENCE_BUILD, ROOT, STATE, STUDENT_BUILD
from ..course import Chapter, UsageError, all_chapters, resolve_chapter
from ..errors import BuildError
from .. import ui
from ..loop import packages
from ..loop.build import build, configure
from ..loop.setup import student_setup


def arguments(parser) -> None:
    parser.add_argument("chapter", metavar="CHAPTER")
    parser.add_argument("bench_args", nargs=argparse.REMAINDER, metavar="...", help="passed to the benchmark")


def runner(chapter: Chapter) -> Path:
    """tools/scalebook/bench/chNN.py: runs the chapter's benchmark and its PyTorch peer side by side,
    and declares the options a user may give it (options(parser)) and what it times (SUMMARY)."""
    return BENCH_RUNNERS / f"{chapter.target}.py"


def options_parser(chapter: Chapter) -> argparse.ArgumentParser:
    """`./workbook bench N`'s own options: the runner's, read without building anything, so that
    --help shows them and a mistyped one is refused before the build."""
    if str(BENCH_RUNNERS) not in sys.path:
        sys.path.append(str(BENCH_RUNNERS))  # the runners import runner.py from their folder
    spec = importlib.util.spec_from_file_location(f"bench_{chapter.target}", runner(chapter))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    where = ("First shows what the reference solution measured at release, on the instructor's machine, then "
             "times your code on this machine." if is_edition() else
             "Times the reference solution's exercises (the reference build).")
    parser = argparse.ArgumentParser(prog=f"./workbook bench {chapter.number}",
                                     description=f"Chapter {chapter.number}'s benchmark: {module.SUMMARY}. {where}")
    module.options(parser)
    return parser


def run(args) -> int:
    """A chapter's benchmark (target chNN_bench, built with its own flags), through its runner. In the
    maintainers' tree it times the reference (the reference build); in the student edition, the
    student's own code. Its options are checked (and --help answered) before anything is built."""
    chapter = resolve_chapter(args.chapter)
    if not chapter.bench:
        raise UsageError(f"chapter {chapter.number} has no benchmark (chapters with one: "
                         f"{', '.join(str(c.number) for c in all_chapters() if c.bench)})")
    options_parser(chapter).parse_args(args.bench_args)  # --help, or a usage error, ends here
    if is_edition():
        return student_bench(chapter, args.bench_args)
    packages.ensure("bench")
    configure("reference", REFERENCE_BUILD, REFERENCE_BUILD / "workbook")
    return run_bench(chapter, REFERENCE_BUILD, REFERENCE_BUILD / "workbook", "reference", args.bench_args)


def run_bench(chapter: Chapter, build_dir: Path, log_dir: Path, whose: str, bench_args: list[str]) -> int:
    """Builds the chapter's benchmark in BUILD_DIR and runs it, through tools/scalebook/bench/chNN.py where
    the chapter has one; WHOSE ("reference" or "yours") says whose exercises that build's track is,
    for the rows' labels (the benchmark itself prints whose code each row timed)."""
    target = f"{chapter.target}_bench"
    progress = ui.Progress(f"Building {target}...")
    code, output = build(build_dir, [target], log_dir / "bench.build.log", progress)
    progress.done()
    if code != 0:
        if "unknown target" in output:
            raise UsageError(f"chapter {chapter.number} has no benchmark (chapters with one: "
                             f"{', '.join(str(c.number) for c in all_chapters() if c.bench)})")
        raise BuildError(f"{target} did not build:\n{output[-3000:]}")
    binary = build_dir / "chapters" / chapter.folder / target
    command = [sys.executable, str(runner(chapter)), "--bench", str(binary), "--whose", whose, *bench_args]
    return subprocess.run(command, stdin=subprocess.DEVNULL).returncode


def release_figures(chapter: Chapter) -> Path:
    """Where the edition keeps what the chapter's benchmark printed at release (scalebook/release.py)."""
    return ROOT / "docs" / "prebuilt" / chapter.folder / "bench.txt"


def student_bench(chapter: Chapter, bench_args: list[str]) -> int:
    """The edition's benchmark: first what the reference printed at release, labelled as such, then
    the same benchmark on this machine with the student's code (chapter 7: their 7.6 against their
    4.3; chapter 2: the K-fold trained with their 2.1 to 2.4), which it says before it builds."""
    packages.ensure("bench")
    figures = release_figures(chapter)
    if figures.exists():
        ui.say(ui.bold("Measured at release, with the reference solution, on the instructor's machine:"))
        for line in figures.read_text().splitlines():
            ui.say(f"  | {line}")
        ui.say("")
    student_setup()
    ui.say(ui.bold("Now on this machine, with your code:"))
    return run_bench(chapter, STUDENT_BUILD, STATE, "yours", bench_args)
