"""Times the student's loop (./workbook time edit-loop): an exercise edited to its verdict.

Maintainers' measure of the student's loop: a code change in one exercise file -> that
chapter's verdict from `./workbook check CHAPTER`, in a scratch copy of the workbook (your own
exercises/ is never touched). Each run changes code, not a comment (a comment-only edit may be
served from a compiler cache and measure nothing): it appends a function with a new constant.

Where the time goes, per run: the command's start-up (`./workbook --help`: the interpreter and the
imports, timed on its own), the compile and the link (ninja's own log of the edges it ran), the
checks (the chapter's check binary run on its own), and the rest (cmake and ninja starting up and
deciding what to rebuild, and the command's own bookkeeping: total minus the other four). "cpu" is
the processor time the whole check used (user and system, every process it started): close to the
wait on an idle machine, where the steps run one after the other, and far less sensitive to load
than the wall-clock times. "compile cpu" is the processor time of the exercise file's own compile
(its command from the build's compile_commands.json, run again on the edited file) and "checks
cpu" that of the chapter's check binary: on a shared machine, their sum is the criterion the
README's half a second stands for (0.25 CPU seconds of compile and check).

--chapter all and --exercise all time every exercise of every chapter (or of one chapter), one
scratch copy built once, and end with a table: one row per exercise, the medians of each tree
and the ratio of this tree's compile-and-check CPU to the baseline's.

With --baseline REV, a second scratch copy holds the workbook as of REV (git archive), and the
runs alternate between the two, so that both see the same load on a shared machine.

    ./workbook time edit-loop [--chapter 1|all] [--runs 7] [--exercise 1|all] [--stub] [--baseline main]
"""
from __future__ import annotations

import argparse
import io
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

from scalebook.config import ROOT
from scalebook.course import Chapter, all_chapters, resolve_chapter
from tests.harness import copy_tree

PARTS = ("start-up", "compile", "link", "checks", "rest", "total", "cpu", "compile cpu", "checks cpu")


def cpu_of(command: list[str], cwd: Path) -> tuple[float, int]:
    """The user and system seconds COMMAND used (with every process it started), and its status."""
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               stdin=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    return usage.ru_utime + usage.ru_stime, status


class Tree:
    """One scratch copy of the workbook, configured for the student track and built once."""

    def __init__(self, label: str, path: Path, ccache_dir: Path):
        self.label, self.path = label, path
        self.env = dict(os.environ, NO_COLOR="1")
        subprocess.run(["cmake", "--preset", "student", f"-DSCALEBOOK_CCACHE_DIR={ccache_dir}"],
                       cwd=path, stdout=subprocess.DEVNULL, check=True)
        self.build = path / "build" / "student"
        self.nonce = f"{os.getpid()}_{time.time_ns()}"
        self.runs: dict[str, list[dict[str, float]]] = {}

    def prepare(self, chapter: Chapter, exercise: int, stub: bool) -> None:
        """Exercise EXERCISE of CHAPTER as the file to edit: the reference's (or the stub), built."""
        self.chapter, self.key = chapter, f"{chapter.number}.{exercise}"
        self.file = self.path / "exercises" / chapter.folder / chapter.sources[exercise - 1]
        self.original = self.file.read_bytes()
        if not stub:
            shutil.copy2(self.path / "solutions" / chapter.folder / chapter.sources[exercise - 1], self.file)
        self.checks = self.build / "chapters" / chapter.folder / f"{chapter.target}_checks"
        self.command = [str(self.path / "workbook"), "check", str(chapter.number)]
        subprocess.run(self.command, cwd=self.path, env=self.env, stdout=subprocess.DEVNULL, check=True)
        entries = json.loads((self.build / "compile_commands.json").read_text())
        entry = next(e for e in entries if Path(e["file"]).resolve() == self.file.resolve())
        self.compile = shlex.split(entry["command"])
        output = self.compile.index("-o") + 1
        self.compile[output] = str(self.build / "edit-loop-compile.o")  # not the build's own object
        self.compile_dir = Path(entry["directory"])
        self.runs[self.key] = []

    def restore(self) -> None:
        self.file.write_bytes(self.original)

    def ninja_edges(self) -> set[str]:
        log = self.build / ".ninja_log"
        return set(log.read_text().splitlines()[1:]) if log.exists() else set()

    def timed(self, command: list[str]) -> float:
        start = time.monotonic()
        subprocess.run(command, cwd=self.path, env=self.env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        return time.monotonic() - start

    def run(self, number: int) -> dict[str, float]:
        with open(self.file, "a") as out:  # a code change: a new function, a new constant, never
            # the same twice (the cache dir outlives this run: a repeated text would be a cache hit)
            out.write(f"\nint scalebook_edit_loop_{number}_{self.nonce}() {{ return {number * 7919}; }}\n")
        before = self.ninja_edges()
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        result = subprocess.run(self.command, cwd=self.path, env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
        total = time.monotonic() - start
        now = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (now.ru_utime - used.ru_utime) + (now.ru_stime - used.ru_stime)
        if result.returncode != 0:
            raise SystemExit(f"{self.label}: ./workbook check failed:\n{result.stdout}")
        compile_s = link_s = 0.0
        for line in self.ninja_edges() - before:  # start ms, end ms, mtime, output, hash
            fields = line.split("\t")
            seconds = (int(fields[1]) - int(fields[0])) / 1000
            if fields[3].endswith(".o"):
                compile_s += seconds
            else:
                link_s += seconds
        startup = self.timed([str(self.path / "workbook"), "--help"])
        checks = self.timed([str(self.checks), "--no-version", "--no-colors"])
        compile_cpu, status = cpu_of(self.compile, self.compile_dir)
        if status != 0:
            raise SystemExit(f"{self.label}: the compile of {self.file} failed: {shlex.join(self.compile)}")
        checks_cpu, _ = cpu_of([str(self.checks), "--no-version", "--no-colors"], self.path)
        times = {"start-up": startup, "compile": compile_s, "link": link_s, "checks": checks,
                 "total": total, "cpu": cpu, "compile cpu": compile_cpu, "checks cpu": checks_cpu}
        times["rest"] = total - startup - compile_s - link_s - checks
        self.runs[self.key].append(times)
        return times

    def median(self, key: str, part: str) -> float:
        return statistics.median(r[part] for r in self.runs[key])


def archive(rev: str, target: Path) -> None:
    """The tracked files of the workbook as of REV, into TARGET."""
    data = subprocess.run(["git", "archive", "--format=tar", rev], cwd=ROOT, check=True,
                          capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(target)


def exercises_of(args: argparse.Namespace, parser: argparse.ArgumentParser) -> list[tuple[Chapter, int]]:
    chapters = all_chapters() if args.chapter == "all" else [resolve_chapter(args.chapter)]
    if args.exercise == "all":
        return [(chapter, number) for chapter in chapters for number in range(1, len(chapter.sources) + 1)]
    if not args.exercise.isdigit():
        parser.error("--exercise is a number (1 = the first file) or all")
    number = int(args.exercise)
    for chapter in chapters:
        if not 1 <= number <= len(chapter.sources):
            parser.error(f"chapter {chapter.number} has exercises 1 to {len(chapter.sources)}")
    return [(chapter, number) for chapter in chapters]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="./workbook time edit-loop", description=__doc__.splitlines()[0])
    parser.add_argument("--chapter", default="1", help="a chapter, or all")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--exercise", default="1", help="which exercise file (1 = the first), or all")
    parser.add_argument("--stub", action="store_true", help="time the untouched stub, not a solved file")
    parser.add_argument("--baseline", metavar="REV",
                        help="also time the workbook as of this git revision, alternating with this one")
    parser.add_argument("--ccache-dir", type=Path,
                        default=Path(os.environ.get("CCACHE_DIR") or ROOT / "build" / "ccache"),
                        help="compiler cache the scratch copies share (default $CCACHE_DIR or build/ccache)")
    args = parser.parse_args(argv)
    exercises = exercises_of(args, parser)
    track = "stub" if args.stub else "solved"
    with tempfile.TemporaryDirectory(prefix="scalebook-edit-loop-") as temp:
        trees = []
        for label in ([args.baseline] if args.baseline else []) + ["this tree"]:
            path = Path(temp) / ("baseline" if label == args.baseline else "workbook")
            path.mkdir()
            archive(label, path) if label == args.baseline else copy_tree(path)
            trees.append(Tree(label, path, args.ccache_dir))
        load = os.getloadavg()
        for chapter, exercise in exercises:
            for tree in trees:
                tree.prepare(chapter, exercise, args.stub)
            for number in range(1, args.runs + 1):
                for tree in trees if number % 2 else reversed(trees):  # alternate who goes first
                    times = tree.run(number)
                    print(f"{tree.key} run {number} {tree.label:>10}: {times['total']:.2f} s  (" +
                          ", ".join(f"{p} {times[p]:.2f}" for p in PARTS[:5]) +
                          f"; cpu {times['cpu']:.2f}, compile cpu {times['compile cpu']:.2f}, "
                          f"checks cpu {times['checks cpu']:.2f})", flush=True)
            for tree in trees:
                tree.restore()
            if len(exercises) == 1:
                what = f"{chapter.folder}/{chapter.sources[exercise - 1]} ({track})"
                print(f"\nmedian seconds, edit -> verdict for {what}, over {args.runs} runs "
                      f"(load average {load[0]:.2f} before, {os.getloadavg()[0]:.2f} after):")
                print(f"  {'':>10}  " + "  ".join(f"{p:>11}" for p in PARTS))
                for tree in trees:
                    print(f"  {tree.label:>10}  " + "  ".join(f"{tree.median(tree.key, p):11.3f}" for p in PARTS))
        if len(exercises) > 1:
            summary(trees, exercises, args, track, load)
    return 0


def summary(trees: list[Tree], exercises: list[tuple[Chapter, int]], args: argparse.Namespace, track: str,
            load: tuple[float, float, float]) -> None:
    """One row per exercise: each tree's median total, cpu, and compile and check cpu."""
    print(f"\nmedian seconds, edit -> verdict, every exercise ({track}), over {args.runs} runs each "
          f"(load average {load[0]:.2f} before, {os.getloadavg()[0]:.2f} after); "
          "c+c = compile cpu + checks cpu:")
    header = f"  {'exercise':<9}"
    for tree in trees:
        header += f" | {tree.label[:10]:>10}: {'total':>6} {'cpu':>6} {'compile':>7} {'checks':>6} {'c+c':>6}"
    print(header + (" | c+c ratio" if len(trees) == 2 else ""))
    for chapter, exercise in exercises:
        key = f"{chapter.number}.{exercise}"
        row = f"  {key:<9}"
        sums = []
        for tree in trees:
            both = tree.median(key, "compile cpu") + tree.median(key, "checks cpu")
            sums.append(both)
            row += (f" | {'':>10}  {tree.median(key, 'total'):6.2f} {tree.median(key, 'cpu'):6.2f} "
                    f"{tree.median(key, 'compile cpu'):7.2f} {tree.median(key, 'checks cpu'):6.2f} {both:6.2f}")
        if len(trees) == 2:
            row += f" | {sums[1] / sums[0]:9.2f}" if sums[0] > 0 else " |"
        print(row)
