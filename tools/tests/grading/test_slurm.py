#!/usr/bin/python3
"""tools/scalebook/grading/slurm.py against a real single-node Slurm (Debian's slurm-wlm and munge), started
by this test in a scratch folder:

  - an array of 4 tasks with a limit of 2 at once, each writing into a shared folder (task 2 exits
    with status 3), and a merge job depending on the array: the merge sees every task's output and
    starts after the last task ended; never more than 2 tasks run at once, and 2 do; wait() reports
    each task's state and exit code;
  - then, on the same cluster, leaving the with-block by an exception while a job runs ends every
    process the cluster started, the job included; so does SIGKILL to the process that started
    another cluster; a cluster that fails to start (a bad slurm.conf line, a start time-out)
    leaves no process behind;
  - submit_array refuses bad arguments before anything is submitted; available() names the
    packages that are missing.

Exit status 77 (CTest's skip) with a message naming the packages when Slurm or root is missing.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.harness import expect, failures, finish

from scalebook.grading import slurm, slurm_local

SKIP = 77
TASKS, LIMIT, TASK_SECONDS, FAILING_TASK = 4, 2, 1.0, 2

# A task: records when it started and ended (CLOCK_MONOTONIC is one clock for the whole machine).
TASK = """
import sys, time
from pathlib import Path
index, shared, seconds = int(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3])
start = time.monotonic()
time.sleep(seconds)
(shared / f"task-{index}.json").write_text(f'{{"index": {index}, "start": {start}, "end": {time.monotonic()}}}')
sys.exit(int(sys.argv[4]))
"""
# The merge: everything the tasks wrote, and when it started.
MERGE = """
import json, sys, time
from pathlib import Path
shared = Path(sys.argv[1])
start = time.monotonic()
seen = {p.name: json.loads(p.read_text()) for p in sorted(shared.glob("task-*.json"))}
(shared / "merged.json").write_text(json.dumps({"start": start, "seen": seen}))
"""


def most_at_once(intervals: list[tuple[float, float]]) -> int:
    events = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    running = peak = 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    return peak


def leftovers(scratch: Path) -> list[str]:
    """Processes whose command line names the scratch folder (the daemons all do)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if str(scratch) in command:
                found.append(f"{entry.name}: {command[:120]}")
    return found


def refuses(what: str, **changes) -> None:
    arguments = dict(commands=[["true"]], env=dict(os.environ), workdir=Path(tempfile.gettempdir()),
                     concurrency=1, sbatch_options=[], then=["true"])
    arguments.update(changes)
    try:
        slurm.submit_array(**arguments)
    except slurm.SlurmError as error:
        expect(str(error).startswith("submit_array: "), f"submit_array refuses {what}: {error}")
    else:
        expect(False, f"submit_array refuses {what}")


def check_arguments() -> None:
    refuses("no commands", commands=[])
    refuses("an empty command", commands=[["true"], []])
    refuses("a command that is not a list of strings", commands=["echo hi"])
    refuses("concurrency 0", concurrency=0)
    refuses("an --array option of its own", sbatch_options=["--array=0-3"])
    refuses("a -d dependency option of its own", sbatch_options=["-d", "afterok:1"])
    refuses("a merge command that is not a list", then="true")
    refuses("a workdir that does not exist", workdir=Path("/nonexistent/scalebook"))


def check_array(cluster: slurm.LocalCluster, work: Path) -> None:
    shared = work / "shared"
    shared.mkdir()
    commands = [[sys.executable, "-c", TASK, str(i), str(shared), str(TASK_SECONDS),
                 str(3 if i == FAILING_TASK else 0)] for i in range(TASKS)]
    begin = time.monotonic()
    array, merge = slurm.submit_array(commands, env=cluster.env, workdir=work, concurrency=LIMIT,
                                      sbatch_options=["--time=5"],
                                      then=[sys.executable, "-c", MERGE, str(shared)])
    outcomes = slurm.wait([array, merge], env=cluster.env, timeout=120, max_poll=0.3)
    print(f"     {TASKS} tasks of {TASK_SECONDS} s, {LIMIT} at once, and the merge: "
          f"{time.monotonic() - begin:.1f} s from submission to the merge's end")
    written = {i: json.loads((shared / f"task-{i}.json").read_text())
               for i in range(TASKS) if (shared / f"task-{i}.json").exists()}
    expect(sorted(written) == list(range(TASKS)), f"every task wrote its file (found {sorted(written)})")
    merged = json.loads((shared / "merged.json").read_text()) if (shared / "merged.json").exists() else {}
    expect(sorted(merged.get("seen", {})) == sorted(f"task-{i}.json" for i in range(TASKS)),
           f"the merge job saw every task's output (saw {sorted(merged.get('seen', {}))})")
    if written and merged:
        last_end = max(t["end"] for t in written.values())
        expect(merged["start"] >= last_end, "the merge started after the last task ended")
    intervals = [(t["start"], t["end"]) for t in written.values()]
    peak = most_at_once(intervals)
    expect(peak <= LIMIT, f"never more than {LIMIT} tasks at once (at most {peak} ran together)")
    expect(peak == LIMIT, f"{LIMIT} tasks did run together (the limit, not a queue of one, bounds them)")
    expected = {f"{array}_{i}": ("FAILED", 3) if i == FAILING_TASK else ("COMPLETED", 0) for i in range(TASKS)}
    expected[str(merge)] = ("COMPLETED", 0)
    found = {key: (o.state, o.exit_code) for key, o in outcomes.items()}
    expect(found == expected, f"wait() reports each task's state and exit code: {found}")


def check_stopped_mid_job(cluster: slurm.LocalCluster, work: Path) -> list[int]:
    """Starts a long job and returns the cluster's processes while it runs."""
    marker = work / "long-job-started"
    array, _ = slurm.submit_array([["/bin/sh", "-c", f"touch {marker}; exec sleep 300"]],
                                  env=cluster.env, workdir=work, concurrency=1, sbatch_options=[],
                                  then=["true"])
    try:
        slurm.wait([array], env=cluster.env, timeout=0.5)
        expect(False, "wait() gives up after its timeout")
    except slurm.SlurmError as error:
        expect("still active after" in str(error), f"wait() gives up after its timeout: {error}")
    deadline = time.monotonic() + 30
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    pids = cluster.pids()
    sleeping = []
    for pid in pids:
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes() == b"sleep\x00300\x00":
                sleeping.append(pid)
        except OSError:
            pass
    expect(bool(sleeping), "the long job runs inside the cluster's process tree")
    return pids


# Run in a child process by check_killed_starter: a cluster with a running job, its processes
# written to a file, then waiting to be killed.
STARTER = """
import sys, time
from pathlib import Path
from scalebook.grading import slurm  # run from tools/ (-c imports from the working directory)
scratch, work, report = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
with slurm.LocalCluster(scratch) as cluster:
    slurm.submit_array([["/bin/sh", "-c", f"touch {work}/started; exec sleep 300"]], env=cluster.env,
                       workdir=work, concurrency=1, sbatch_options=[], then=["true"])
    while not (work / "started").exists():
        time.sleep(0.05)
    (work / "pids.part").write_text(" ".join(map(str, cluster.pids())))
    (work / "pids.part").rename(report)  # whole or absent: the test polls for it
    time.sleep(300)
"""


def check_killed_starter(scratch: Path, work: Path) -> None:
    """SIGKILL to the process that started a cluster (no exit handler runs) still ends the cluster
    (on a quiet machine within a fraction of a second)."""
    report = work / "pids"
    starter = subprocess.Popen([sys.executable, "-c", STARTER, str(scratch), str(work), str(report)],
                               cwd=Path(slurm.__file__).parents[2])
    deadline = time.monotonic() + 60
    while not report.exists() and starter.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    pids = [int(p) for p in report.read_text().split()] if report.exists() else []
    starter.kill()
    starter.wait()
    deadline = time.monotonic() + 10
    while any(slurm._alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = [p for p in pids if slurm._alive(p)]
    expect(bool(pids) and not alive, f"SIGKILL to the process that started the cluster ends its {len(pids)} "
                                     f"processes, the running job's included, within 10 s (alive: {alive})")
    expect(not leftovers(scratch), "no process names that cluster's folder afterwards")


def check_failed_start(scratch: Path, what: str, **options) -> None:
    started = time.monotonic()
    try:
        with slurm.LocalCluster(scratch, **options):
            pass
    except slurm.SlurmError as error:
        text = str(error)
        expect(text.startswith("LocalCluster: "), f"{what} is reported: {text.splitlines()[0]}")
    else:
        expect(False, f"{what} is reported")
    print(f"     ({time.monotonic() - started:.1f} s)")
    expect(not leftovers(scratch), f"{what} leaves no process behind")


def check_missing_named() -> None:
    """Where the programs are missing, available() names their Debian packages."""
    which = slurm_local._which  # available() looks programs up there
    slurm_local._which = lambda program: None if program in ("slurmd", "munged") else which(program)
    try:
        reason = slurm.available() or ""
        client_only = slurm.available(cluster=False)
    finally:
        slurm_local._which = which
    expect("slurmd" in reason and "munge" in reason and "slurmctld" not in reason
           and "apt-get install -y slurm-wlm munge" in reason,
           f"without slurmd and munged, available() names their packages: {reason}")
    expect(client_only is None, "submitting needs only the client commands (available(cluster=False))")


def main() -> int:
    check_missing_named()
    check_arguments()
    if failures:
        return 1
    reason = slurm.available()
    if reason:
        print(f"skipped: {reason}")
        return SKIP
    with tempfile.TemporaryDirectory(prefix="scalebook-slurm-") as temporary:
        root = Path(temporary)
        root.chmod(0o755)  # munged wants every folder above its socket open to all
        (root / "work").mkdir()
        started = time.monotonic()
        pids: list[int] = []

        class Stop(Exception):
            pass

        try:
            with slurm.LocalCluster(root / "cluster") as cluster:
                print(f"     a single-node Slurm started in {time.monotonic() - started:.1f} s")
                check_array(cluster, root / "work")
                pids = check_stopped_mid_job(cluster, root / "work")
                raise Stop()
        except Stop:
            pass
        alive = [p for p in pids if slurm._alive(p)]
        expect(bool(pids) and not alive, f"an exception in the with-block ends all {len(pids)} processes of "
                                         f"the cluster, the running job's included (still alive: {alive})")
        expect(not leftovers(root / "cluster"), "no process names the cluster's folder afterwards")
        (root / "work2").mkdir()
        check_killed_starter(root / "cluster4", root / "work2")
        check_failed_start(root / "cluster2", "a bad slurm.conf line", extra_config=["NoSuchOption=1"])
        check_failed_start(root / "cluster3", "a start time-out", start_seconds=0.05)
    return finish("Slurm: every expectation holds")


if __name__ == "__main__":
    sys.exit(main())
