#!/usr/bin/env python3
"""./workbook grade --slurm against a real single-node Slurm (Debian's slurm-wlm and munge, started
by the test in a scratch folder): the class graded as a job array, one task per submission, gives
exactly the grades of a local run, and --resume after a partial run grades only what is missing. Skipped, naming the
packages, where they are absent."""
from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.harness import ROOT, WORKBOOK, course_chapter, expect, finish

# The course's chapter graded here, by the function the broken submission breaks (tests/harness.py).
SCORES = course_chapter("row_entropy")
CH3 = SCORES.folder


def grade(out: Path, subs: list[Path], *options: str, env: dict | None = None) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    result = subprocess.run([sys.executable, str(WORKBOOK), "grade", "--out", str(out), "--chapters", SCORES.number,
                             *options, *map(str, subs)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env, timeout=1800)
    print(result.stdout[-3000:])
    return result, time.monotonic() - start


def rows(path: Path) -> list[list[str]]:
    with open(path) as f:
        return list(csv.reader(f))


def main() -> int:
    try:
        from scalebook.grading import slurm
    except ImportError:
        print("skipped: tools/scalebook/grading/slurm.py is not in this tree")
        return 0
    reason = slurm.available()
    if reason:
        print(f"skipped: {reason}")
        return 0
    base = Path(tempfile.mkdtemp(prefix="scalebook-slurm-"))
    base.chmod(0o755)  # munged's rule: every folder above its socket open to all
    try:
        subs = []
        for name, tree in (("ada", "solutions"), ("ben", "exercises"), ("cy", "solutions")):
            shutil.copytree(ROOT / tree / CH3, base / "subs" / name / CH3)
            subs.append(base / "subs" / name)
        entropy = base / "subs" / "cy" / SCORES.file("row_entropy")
        entropy.write_text(entropy.read_text() + "\nthis line is not C++;\n")

        local, local_seconds = grade(base / "local", subs)
        expect(local.returncode == 0, "the local run grades the class")
        with slurm.LocalCluster(base / "cluster") as cluster:
            remote, slurm_seconds = grade(base / "shared", subs, "--slurm=", "--slurm-concurrency", "2", "--wait",
                                          env=cluster.env)
            expect(remote.returncode == 0, "the Slurm run's array tasks and merge job complete")
            # One array task per submission (the cluster's MaxArraySize is Slurm's default, 1001):
            # each task wrote its log.
            tasks = sorted(p.name for p in (base / "shared" / "slurm").glob("*/task-*.out"))
            expect(f"({len(subs)} tasks," in remote.stdout and len(tasks) == len(subs),
                   f"a class of {len(subs)} runs as {len(subs)} array tasks ({tasks})")
            shared = base / "shared"
            open_to_others = [str(p.relative_to(shared)) for p in [shared, *shared.rglob("*")]
                              if not p.is_symlink() and p.lstat().st_mode & 0o077]
            expect(not open_to_others, f"what the tasks and the merge wrote is the grading user's alone "
                                       f"({open_to_others[:4]})")
            expect((base / "shared" / "grades.csv").exists() and
                   rows(base / "shared" / "grades.csv") == rows(base / "local" / "grades.csv"),
                   "grades.csv from the Slurm merge job equals the local run's")
            for sub in subs:
                here = json.loads((base / "local" / "students" / sub.name / "report.json").read_text())
                there = json.loads((base / "shared" / "students" / sub.name / "report.json").read_text())
                expect([(t["name"], t["status"], t["points"]) for t in here["tests"]] ==
                       [(t["name"], t["status"], t["points"]) for t in there["tests"]],
                       f"{sub.name}: every check's verdict is the same on Slurm")
            (base / "shared" / "students" / "ben" / "report.json").unlink()  # a task that never ran
            again, _ = grade(base / "shared", subs, "--slurm=", "--resume", "--wait", env=cluster.env)
            expect(again.stdout.count("already graded") == 2 and "submitted 1 submissions" in again.stdout,
                   "--resume after a partial run submits only the missing submission")
            expect(rows(base / "shared" / "grades.csv") == rows(base / "local" / "grades.csv"),
                   "... and the merged grades equal the local run's again")
        print(f"{len(subs)} submissions of chapter {SCORES.number}: local {local_seconds:.1f} s, Slurm {slurm_seconds:.1f} s "
              "(one node, two tasks at once, including the kit and the daemons' scheduling)")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return finish("Slurm grades equal local grades")


if __name__ == "__main__":
    sys.exit(main())
