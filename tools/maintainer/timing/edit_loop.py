"""Times the student's loop (./workbook time edit-loop): one exercise edited to its verdict.

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
than the wall-clock times.

With --baseline REV, a second scratch copy holds the workbook as of REV (git archive), and the
runs alternate between the two, so that both see the same load on a shared machine.

    ./workbook time edit-loop [--chapter 1] [--runs 7] [--exercise 1] [--stub] [--baseline main]
"""
from __future__ import annotations

import argparse
import io
import os
import resource
import shutil
import statistics
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

from scalebook.config import ROOT
from scalebook.course import Chapter, resolve_chapter
from tests.harness import copy_tree

PARTS = ("start-up", "compile", "link", "checks", "rest", "total", "cpu")


class Tree:
    """One scratch copy of the workbook, configured for the student track and built once."""

    def __init__(self, label: str, path: Path, chapter: Chapter, exercise: int, stub: bool,
                 ccache_dir: Path):
        self.label, self.path, self.chapter = label, path, chapter
        self.file = path / "exercises" / chapter.folder / chapter.sources[exercise - 1]
        if not stub:
            shutil.copy2(path / "solutions" / chapter.folder / chapter.sources[exercise - 1], self.file)
        self.env = dict(os.environ, NO_COLOR="1")
        subprocess.run(["cmake", "--preset", "student", f"-DSCALEBOOK_CCACHE_DIR={ccache_dir}"],
                       cwd=path, stdout=subprocess.DEVNULL, check=True)
        self.build = path / "build" / "student"
        self.checks = self.build / "chapters" / chapter.folder / f"{chapter.target}_checks"
        self.command = [str(path / "workbook"), "check", str(chapter.number)]
        subprocess.run(self.command, cwd=path, env=self.env, stdout=subprocess.DEVNULL, check=True)
        self.runs: list[dict[str, float]] = []
        self.nonce = f"{os.getpid()}_{time.time_ns()}"

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
        times = {"start-up": startup, "compile": compile_s, "link": link_s, "checks": checks,
                 "total": total, "cpu": cpu}
        times["rest"] = total - startup - compile_s - link_s - checks
        self.runs.append(times)
        return times


def archive(rev: str, target: Path) -> None:
    """The tracked files of the workbook as of REV, into TARGET."""
    data = subprocess.run(["git", "archive", "--format=tar", rev], cwd=ROOT, check=True,
                          capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="./workbook time edit-loop", description=__doc__.splitlines()[0])
    parser.add_argument("--chapter", default="1")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--exercise", type=int, default=1, help="which exercise file (1 = the first)")
    parser.add_argument("--stub", action="store_true", help="time the untouched stub, not a solved file")
    parser.add_argument("--baseline", metavar="REV",
                        help="also time the workbook as of this git revision, alternating with this one")
    parser.add_argument("--ccache-dir", type=Path,
                        default=Path(os.environ.get("CCACHE_DIR") or ROOT / "build" / "ccache"),
                        help="compiler cache the scratch copies share (default $CCACHE_DIR or build/ccache)")
    args = parser.parse_args(argv)
    chapter = resolve_chapter(args.chapter)
    if not 1 <= args.exercise <= len(chapter.sources):
        parser.error(f"chapter {chapter.number} has exercises 1 to {len(chapter.sources)}")
    with tempfile.TemporaryDirectory(prefix="scalebook-edit-loop-") as temp:
        trees = []
        for label in ([args.baseline] if args.baseline else []) + ["this tree"]:
            path = Path(temp) / ("baseline" if label == args.baseline else "workbook")
            path.mkdir()
            archive(label, path) if label == args.baseline else copy_tree(path)
            trees.append(Tree(label, path, chapter, args.exercise, args.stub, args.ccache_dir))
        load = os.getloadavg()
        for number in range(1, args.runs + 1):
            for tree in trees if number % 2 else reversed(trees):  # alternate who goes first
                times = tree.run(number)
                print(f"run {number} {tree.label:>10}: {times['total']:.2f} s  (" +
                      ", ".join(f"{p} {times[p]:.2f}" for p in PARTS[:-2]) +
                      f"; cpu {times['cpu']:.2f})", flush=True)
        after = os.getloadavg()
    what = f"{chapter.folder}/{chapter.sources[args.exercise - 1]} ({'stub' if args.stub else 'solved'})"
    print(f"\nmedian seconds, edit -> verdict for {what}, over {args.runs} runs "
          f"(load average {load[0]:.2f} before, {after[0]:.2f} after):")
    print(f"  {'':>10}  " + "  ".join(f"{p:>8}" for p in PARTS))
    for tree in trees:
        print(f"  {tree.label:>10}  " +
              "  ".join(f"{statistics.median(r[p] for r in tree.runs):8.3f}" for p in PARTS))
    return 0
