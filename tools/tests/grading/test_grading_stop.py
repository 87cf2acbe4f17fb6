#!/usr/bin/env python3
"""Stopping a grading run ends everything it started, at once, and keeps what it finished.

Three submissions of chapter 3 are graded one at a time; the last one sleeps in every call, so the
run is still busy when the first report is written. Then the run is stopped as an instructor
would stop it: Ctrl-C (SIGINT to the terminal's process group), SIGTERM, and a parent's `timeout`.
Each time, within a second, no process the run started is left (its steps, ctest, the trusted
checks processes, the boxes and what runs in them), and the finished report is still whole."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.harness import ROOT, WORKBOOK, expect, finish

CH3 = "03-attention-scaling"


def children_of(root: int) -> set[int]:
    """Every living descendant of ROOT (boxes included: their processes are descendants too)."""
    parents: dict[int, int] = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
                if fields[0] != "Z":
                    parents[int(proc.name)] = int(fields[1])
            except (OSError, IndexError):
                pass
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def runs_a_box(root: int) -> bool:
    for pid in children_of(root):
        try:
            if b"bwrap" in Path(f"/proc/{pid}/cmdline").read_bytes():
                return True
        except OSError:
            pass
    return False


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except (OSError, IndexError):
        return False


def stop_midway(base: Path, how: str, subs: list[Path]) -> None:
    out = base / f"grades-{how}"
    command = [sys.executable, str(WORKBOOK), "grade", "--out", str(out), "--chapters", "3",
               "--jobs", "1", "--timeout", "3", *map(str, subs)]
    if how == "timeout":
        # A parent's timeout, made to expire now (its alarm) once the first report is written.
        command = ["timeout", "--signal=TERM", "3600", *command]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    started = time.monotonic()
    first = out / "students" / subs[0].name / "report.json"
    while not first.exists() and process.poll() is None and time.monotonic() - started < 900:
        time.sleep(0.1)
    # Until the second submission is being graded in a box (a step, its trusted process and the
    # box's processes all running: a check that ends between two looks is not a stop mid-way).
    watched: set[int] = set()
    while process.poll() is None and time.monotonic() - started < 900:
        watched = children_of(process.pid)
        if len(watched) > 3 and runs_a_box(process.pid):
            break
        time.sleep(0.05)
    report_before = first.read_bytes() if first.exists() else b""
    if how == "sigint":
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal sends
    else:  # SIGTERM; or the alarm that makes `timeout` send its SIGTERM
        os.kill(process.pid, signal.SIGTERM if how == "sigterm" else signal.SIGALRM)
    sent = time.monotonic()
    process.wait(timeout=30)
    left = [pid for pid in watched if alive(pid)]
    while left and time.monotonic() - sent < 1.0:
        time.sleep(0.05)
        left = [pid for pid in watched if alive(pid)]
    print(process.stdout.read().decode(errors="replace")[-1500:])
    expect(len(watched) > 3, f"{how}: the run had started its processes ({len(watched)} seen)")
    expect(left == [], f"{how}: every process the run started ended within a second ({len(left)} left: {left[:5]})")
    expect(first.exists() and first.read_bytes() == report_before and json.loads(first.read_text())["tests"],
           f"{how}: the finished report is whole and unchanged")
    expect(not (out / "students" / subs[1].name / "report.json").exists(), f"{how}: the submission it stopped has no report")


def main() -> int:
    base = Path(tempfile.mkdtemp(prefix="scalebook-stop-"))
    try:
        subs = []
        for name in ("first", "second", "third"):
            shutil.copytree(ROOT / "solutions" / CH3, base / "subs" / name / CH3)
            subs.append(base / "subs" / name)
        for name in ("second", "third"):
            path = base / "subs" / name / CH3 / "ex1_dot_scores.cpp"
            text = path.read_text().replace("Matrix dot_scores(const Matrix& q, const Matrix& k) {",
                                            "Matrix dot_scores(const Matrix& q, const Matrix& k) {\n"
                                            "  std::this_thread::sleep_for(std::chrono::milliseconds(2500));", 1)
            path.write_text("#include <chrono>\n#include <thread>\n" + text)
        for how in ("sigint", "sigterm", "timeout"):
            stop_midway(base, how, subs)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return finish("every stop ends every process")


if __name__ == "__main__":
    sys.exit(main())
