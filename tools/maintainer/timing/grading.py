"""How long ./workbook grade takes for a class, and where the time goes.

    ./workbook time grading [--submissions 30] [--kind distinct|identical] [--jobs 2] [--tree PATH]

makes SUBMISSIONS copies of the reference solutions of the whole workbook in a scratch folder and
grades them with TREE's ./workbook grade (default: this tree; give a checkout of another commit to
compare before and after). --kind distinct gives every exercise file of every submission a line of
code of its own (a different constant), so that no two files are the same and nothing can be
compiled once for several students: the cost of a class that wrote its own code. --kind identical
grades copies (a class whose files are all alike, e.g. untouched stubs or one shared solution,
which the grader compiles once). The kit is built before the clock starts (as on the second run of
the day). Prints the wall time of the whole class, the time per submission, and, where the grader
writes a CTest tree (DIR/ctest), the seconds its steps spent compiling, linking and checking.
The CPU time is the whole machine's busy time while the class is graded (/proc/stat): a box's
processes are not the grader's children once bubblewrap's init has them, so the grader's own
rusage misses most of them; on a quiet machine the busy time is the grading's. Run as root where
the cpuacct controller is mounted (cgroup v1), it also prints the grading's own CPU seconds, every
box included, which other work on a shared machine leaves alone.
"""
from __future__ import annotations

import argparse
import json
import re
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from scalebook.config import ROOT
from scalebook.grading.ledger import Ledger


def make_class(tree: Path, into: Path, count: int, kind: str) -> list[Path]:
    submissions = []
    for index in range(count):
        folder = into / f"student{index:03d}"
        shutil.copytree(tree / "solutions", folder)
        if kind == "distinct":
            for source in folder.rglob("ex*.cpp"):
                text = source.read_text()
                # A constant of the submission's own after the includes: real code, not a comment.
                at = text.index("\nnamespace scalebook::")
                source.write_text(text[:at] + f"\n[[maybe_unused]] static const int submission_tag = {index + 1};" +
                                  text[at:])
        submissions.append(folder)
    return submissions


def breakdown(out: Path) -> dict[str, float]:
    """Seconds the CTest steps spent: compile and link (the build fixtures), checks, and the rest."""
    seconds = {"compile": 0.0, "link": 0.0, "checks": 0.0, "checks counted": 0, "compiles cached": 0,
               "links cached": 0, "links": 0}
    for timing in out.glob("ctest/**/build/*/timing.json"):
        data = json.loads(timing.read_text())
        seconds["compile"] += data["compile"]
        seconds["link"] += data["link"]
        seconds["compiles cached"] += data["cached"]
        seconds["links cached"] += bool(data.get("linked_before"))  # graders before the link cache lack it
        seconds["links"] += 1
    for junit in out.glob("ctest/**/ctest-junit.xml"):
        for case in ET.parse(junit).getroot().iter("testcase"):
            name = case.get("name", "")
            if not re.search(r"/(build|start)$", name):
                seconds["checks"] += float(case.get("time", 0))
                seconds["checks counted"] += 1
    return seconds


class CpuGroup:
    """A cgroup (v1 cpuacct) the grading runs in: every process it starts stays in it, the boxes'
    included (the sandbox moves them into cgroups of the memory, pids and cpu controllers only), so
    its CPU seconds are the grading's own, whatever else the machine runs. None where it cannot be
    made (not root, no cpuacct hierarchy)."""

    ROOT = Path("/sys/fs/cgroup/cpuacct")

    def __init__(self) -> None:
        self.path: Path | None = None
        if os.geteuid() != 0 or not (self.ROOT / "cpuacct.usage").exists():
            return
        path = self.ROOT / f"scalebook-time-grading-{os.getpid()}"
        try:
            path.mkdir()
            self.path = path
        except OSError:
            pass

    def enter(self) -> None:
        if self.path is not None:
            (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def seconds(self) -> float | None:
        return None if self.path is None else int((self.path / "cpuacct.usage").read_text()) / 1e9

    def close(self) -> None:
        if self.path is not None:
            try:
                self.path.rmdir()
            except OSError as error:  # a process still in it: left for the machine's owner to see
                print(f"time grading: could not remove {self.path}: {error}", file=sys.stderr)


def busy_seconds() -> float:
    """The seconds all CPUs of the machine have spent busy since boot (/proc/stat: every state
    but idle and iowait)."""
    with open("/proc/stat") as stat:
        fields = [int(x) for x in stat.readline().split()[1:9]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="./workbook time grading", description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=30)
    parser.add_argument("--kind", choices=["distinct", "identical"], default="distinct")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--tree", type=Path, default=ROOT, help="the tree whose grader is timed (default: this one)")
    parser.add_argument("--keep", type=Path, help="grade into this folder and keep it")
    args = parser.parse_args(argv)
    tree = args.tree.resolve()
    scratch = Path(tempfile.mkdtemp(prefix="scalebook-time-grading-"))
    try:
        submissions = make_class(tree, scratch / "class", args.submissions, args.kind)
        grade = [sys.executable, str(tree / "tools" / "workbook.py"), "grade", "--jobs", str(args.jobs)]
        # The kit first, off the clock: one submission graded into a throw-away folder.
        warm = subprocess.run([*grade, "--out", str(scratch / "warm"), str(submissions[0])],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if warm.returncode != 0:
            print(warm.stdout[-3000:])
            return 1
        out = args.keep.resolve() if args.keep else scratch / "grades"
        group = CpuGroup()
        busy_before = busy_seconds()
        start = time.monotonic()
        try:
            result = subprocess.run([*grade, "--out", str(out), *map(str, submissions)], preexec_fn=group.enter,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            wall = time.monotonic() - start
            cpu = busy_seconds() - busy_before
            own = group.seconds()
        finally:
            group.close()
        if result.returncode != 0:
            print(result.stdout[-3000:])
            return 1
        reports = [json.loads(p.read_text()) for p in out.glob("**/report.json")]
        full = sum(r["score"] == r["max_score"] for r in reports)
        print(f"{len(submissions)} {args.kind} submissions of the whole workbook, --jobs {args.jobs}: "
              f"{wall:.1f} s wall, {wall / len(submissions):.2f} s per submission "
              f"({full} of {len(reports)} with full marks); the machine was busy {cpu:.0f} CPU seconds, "
              f"{cpu / len(submissions):.2f} per submission, {cpu / wall:.2f} of its {os.cpu_count()} cores on "
              f"average (all of it the grading's on a quiet machine); load average then "
              f"{open('/proc/loadavg').read().split()[0]}")
        if own is not None:
            print(f"  the grading's own CPU (a cpuacct cgroup holding the grader and every box it started): "
                  f"{own:.0f} s, {own / len(submissions):.2f} per submission, {own / wall:.2f} cores on average")
        # Each submission's time from start to report is in the instructor's record (never in what
        # the student receives).
        per = [json.loads(p.read_text())["seconds"] for p in out.glob("ctest/students/*/record.json")]
        print(f"  one submission from start to report: median {sorted(per)[len(per) // 2]:.1f} s, "
              f"max {max(per):.1f} s")
        if (out / "ctest").is_dir():
            seconds = breakdown(out)
            n = len(submissions)
            print(f"  per submission, summed over its steps: compile {seconds['compile'] / n:.2f} s, "
                  f"link {seconds['link'] / n:.2f} s, checks {seconds['checks'] / n:.2f} s "
                  f"({seconds['checks counted'] / n:.0f} checks, "
                  f"{1000 * seconds['checks'] / max(1, seconds['checks counted']):.0f} ms each); "
                  f"{seconds['compiles cached']} of {len({t['exercise'] for t in reports[0]['tests']}) * n} exercise compiles "
                  f"and {seconds['links cached']} of {seconds['links']} chapter links were identical files'")
            # The compilers' own CPU seconds, from the submissions' budget ledgers (each box's shell
            # reports its compiler's `times`): the one figure here that other work on the machine
            # does not inflate.
            spent = [Ledger(path).spent("compile") for path in out.glob("ctest/**/ledger")]
            if spent:
                print(f"  compiler CPU per submission (the budget ledgers): {sum(spent) / n:.2f} s, "
                      f"max {max(spent):.2f} s")
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0
