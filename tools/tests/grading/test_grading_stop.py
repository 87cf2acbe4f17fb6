#!/usr/bin/env python3
"""Stopping a grading run ends everything it started, at once, and keeps what it finished.

Three submissions of a chapter of the course are graded one at a time; the last one sleeps in every call, so the
run is still busy when the first report is written. Then the run is stopped as an instructor
would stop it: Ctrl-C (SIGINT to the terminal's process group), SIGTERM, and a parent's `timeout`.
Each time, within a second, no process the run started is left (its steps, ctest, the trusted
checks processes, the boxes and what runs in them), and the finished report is still whole.
Then a regrade (--compare) of three quick submissions is stopped right after its last one, while the
class analysis' process pool runs, by Ctrl-C and by a SIGINT to the grading process alone: every
process ends (its pool's workers too, which would otherwise wait forever for work from a parent that
is gone), and the same command again resumes the preview."""
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

from scalebook.grading.supervise import descendants as children_of  # every living process below one
from tests.harness import ROOT, WORKBOOK, course_chapter, expect, finish

# The course's chapter graded here, by the function the slow submissions patch (tests/harness.py).
SCORES = course_chapter("dot_scores")
CH3 = SCORES.folder


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
    command = [sys.executable, str(WORKBOOK), "grade", "--out", str(out), "--chapters", SCORES.number,
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


def naming(folder: Path) -> list[int]:
    """Every living process whose command line names FOLDER (a fork of the run keeps the run's)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and str(folder).encode() in (proc / "cmdline").read_bytes() and alive(int(proc.name)):
                found.append(int(proc.name))
        except OSError:
            pass
    return found


def compare_stopped(base: Path, how: str, old: Path, subs: list[Path], references: Path) -> None:
    """A regrade (--compare) stopped right after its last submission, while the class analysis runs
    (its processes alive; the class is compared with REFERENCES too, which gives it a second or so): by Ctrl-C (the terminal's process group) or by a SIGINT to
    the grading process alone. Every process ends; the same command again resumes the preview. The
    run's output goes to a file: a process left behind would hold a pipe open, and its reader, forever."""
    new = base / f"regrade-{how}"
    command = [sys.executable, str(WORKBOOK), "grade", "--compare", str(old), "--out", str(new), "--chapters", SCORES.number,
               "--jobs", "2", "--similar-to", str(references), *map(str, subs)]
    log = base / f"regrade-{how}.log"
    with open(log, "wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    started, workers = time.monotonic(), set()
    last = f"[{len(subs)}/{len(subs)}]"
    while process.poll() is None and time.monotonic() - started < 900 and last not in log.read_text(errors="replace"):
        time.sleep(0.02)
    while process.poll() is None and not workers and time.monotonic() - started < 900:
        workers = children_of(process.pid)  # the grading's processes have ended: the analysis' own
    watched = workers | children_of(process.pid)
    try:
        if how == "sigint":
            os.killpg(process.pid, signal.SIGINT)
        else:
            os.kill(process.pid, signal.SIGINT)
    except ProcessLookupError:
        pass
    sent = time.monotonic()
    process.wait(timeout=30)

    def remaining() -> list[int]:  # those seen, and any process started later that names the folder
        return sorted({pid for pid in watched if alive(pid)} | set(naming(new)))

    left = remaining()
    while left and time.monotonic() - sent < 1.0:
        time.sleep(0.05)
        left = remaining()
    print(log.read_text(errors="replace")[-1500:])
    expect(bool(workers), f"compare, {how}: stopped while the class analysis ran processes of its own "
                          f"({len(workers)}: {sorted(workers)})")
    expect(left == [], f"compare, {how}: every process the run started ended within a second "
                       f"({len(left)} left: {left[:5]})")
    for pid in left:  # what the run left would wait forever: the test ends it
        os.kill(pid, signal.SIGKILL)
    done = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=900)
    print(done.stdout[-2000:] + done.stderr[-1000:])
    expect(done.returncode == 0 and (new / "compare.json").is_file() and "resum" in done.stdout
           and done.stdout.count("already graded") == len(subs),
           f"compare, {how}: the same command again resumes the stopped preview and finishes it "
           f"({done.returncode}, {done.stdout.count('already graded')} already graded)")


def regrades_stopped(base: Path) -> None:
    """Two regrades of three quick submissions, each stopped at its class analysis, then resumed."""
    quick = []
    for name in ("ada", "bea", "cy"):
        shutil.copytree(ROOT / "solutions" / CH3, base / "quick" / name / CH3)
        quick.append(base / "quick" / name)
    references = base / "references"   # last year's class, say: 150 solutions, each with its own lines
    for index in range(150):
        for source in (ROOT / "solutions" / CH3).glob("ex*.cpp"):
            target = references / f"r{index}" / CH3 / source.name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(source.read_text() + "".join(f"static int pad{j}_{index}(int x) {{ return x * {j}; }}\n"
                                                           for j in range(index % 7)))
    old = base / "grades-old"
    done = subprocess.run([sys.executable, str(WORKBOOK), "grade", "--out", str(old), "--chapters", SCORES.number,
                           "--jobs", "2", *map(str, quick)], capture_output=True, text=True, timeout=1200)
    expect(done.returncode == 0, f"the grades a regrade compares with ({done.returncode}) {done.stdout[-300:]}")
    for how in ("sigint", "sigint-to-the-process"):
        compare_stopped(base, how, old, quick, references)


def main() -> int:
    base = Path(tempfile.mkdtemp(prefix="scalebook-stop-"))
    try:
        subs = []
        for name in ("first", "second", "third"):
            shutil.copytree(ROOT / "solutions" / CH3, base / "subs" / name / CH3)
            subs.append(base / "subs" / name)
        for name in ("second", "third"):
            path = base / "subs" / name / SCORES.file("dot_scores")
            text = path.read_text().replace("Matrix dot_scores(const Matrix& q, const Matrix& k) {",
                                            "Matrix dot_scores(const Matrix& q, const Matrix& k) {\n"
                                            "  std::this_thread::sleep_for(std::chrono::milliseconds(2500));", 1)
            path.write_text("#include <chrono>\n#include <thread>\n" + text)
        for how in ("sigint", "sigterm", "timeout"):
            stop_midway(base, how, subs)
        regrades_stopped(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return finish("every stop ends every process")


if __name__ == "__main__":
    sys.exit(main())
