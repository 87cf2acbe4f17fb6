"""Submits a class to Slurm as a job array with a merge job after it, and waits for them.

Slurm for grading a class on a cluster: one array task per command with a limit on how many run
at once, a merge job that starts once every task has ended, and the state and exit code of each.

    available()                     None, or why a local test cluster cannot be started here
    LocalCluster(scratch)           a single-node Slurm (munged, slurmctld, slurmd) for tests
    submit_array(commands, ...)     sbatch --array=0-N%K, then sbatch --dependency=afterany:ARRAY
    wait(job_ids, env=...)          each task's state and exit code, once none is pending or running

What a real cluster needs (the same holds for LocalCluster, where it is one machine):
- a filesystem every node mounts at the same path, holding the workdir (the commands file, the
  batch scripts' logs and everything the tasks write) and whatever the commands name;
- /usr/bin/python3 on every node (the batch scripts are Python, standard library only), and every
  program the commands run, installed on every node at the same path;
- the submitting user known on every node (Slurm runs a job as its submitter), MUNGE with the
  cluster's key, and the Slurm client commands (sbatch, squeue, scontrol) where submit_array runs.

LocalCluster runs everything in a PID namespace of its own (util-linux's unshare), so that stopping
it, by a normal exit, an exception or the death of the process that started it, ends every daemon,
job step and job process it started. Needs root, and Debian's slurm-wlm and munge.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

# LocalCluster, available and _alive are part of this module's interface (the tests use them).
from .slurm_local import LocalCluster, SlurmError, _alive, available  # noqa: F401

FINAL_STATES = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
                "PREEMPTED", "BOOT_FAIL", "DEADLINE", "REVOKED", "SPECIAL_EXIT"}
# Options submit_array sets itself: passing them in sbatch_options would change what it promises.
OWN_OPTIONS = ("--array", "--dependency", "--wrap", "--parsable", "--kill-on-invalid-dep")
OWN_SHORT_OPTIONS = ("-a", "-d")


@dataclass(frozen=True)
class Outcome:
    """How one job or array task ended: Slurm's state (COMPLETED, FAILED, CANCELLED, TIMEOUT, ...),
    the exit code of its batch script, and the signal that ended it (0 if none)."""
    state: str
    exit_code: int
    signal: int = 0


def _check_command(function: str, argv, what: str) -> list[str]:
    if not isinstance(argv, (list, tuple)) or not argv or not all(isinstance(a, str) for a in argv):
        raise SlurmError(f"{function}: {what} must be a non-empty list of strings, not {argv!r:.200}")
    return list(argv)


def _sbatch(function: str, options: list[str], script: str, env: dict) -> int:
    result = subprocess.run(["sbatch", "--parsable", *options], input=script, env=env,
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise SlurmError(f"{function}: sbatch {' '.join(options)} failed: "
                         f"{result.stderr.strip() or result.returncode}")
    match = re.match(r"(\d+)", result.stdout.strip())
    if not match:
        raise SlurmError(f"{function}: sbatch printed no job id: {result.stdout.strip()!r:.200}")
    return int(match.group(1))


def max_array_size(env: dict) -> int | None:
    """The cluster's MaxArraySize (an array's indices run from 0 to MaxArraySize - 1)."""
    result = subprocess.run(["scontrol", "show", "config"], env=env, capture_output=True, text=True)
    match = re.search(r"^MaxArraySize\s*=\s*(\d+)", result.stdout, re.M)
    return int(match.group(1)) if match else None


def submit_array(commands: list[list[str]], *, env: dict, workdir: Path, concurrency: int,
                 sbatch_options: list[str] = (), then: list[str]) -> tuple[int, int]:
    """Submits one array task per command (task i runs commands[i], in workdir), at most
    `concurrency` of them running at once, and `then` as a job that starts once every task has
    ended, however it ended (afterany). Returns (array job id, merge job id).

    workdir must be on a filesystem every node sees at the same path: the commands file and each
    task's log (workdir/slurm/RUN/task-ARRAY_TASK.out, merge-JOB.out) go there. sbatch_options are
    handed to both sbatch calls (partition, account, time, memory, ...)."""
    function = "submit_array"
    if not isinstance(commands, (list, tuple)) or not commands:
        raise SlurmError(f"{function}: commands must be a non-empty list of commands")
    commands = [_check_command(function, c, f"commands[{i}]") for i, c in enumerate(commands)]
    then = _check_command(function, then, "then")
    if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
        raise SlurmError(f"{function}: concurrency must be a positive integer, not {concurrency!r}")
    options = _check_command(function, list(sbatch_options) or ["--"], "sbatch_options")
    options = [] if options == ["--"] else options
    for option in options:
        if option.startswith(OWN_OPTIONS) or (option[:2] in OWN_SHORT_OPTIONS and not option.startswith("--")):
            raise SlurmError(f"{function}: sbatch option {option!r} is set by submit_array itself")
    workdir = Path(workdir).resolve()
    if not workdir.is_dir():
        raise SlurmError(f"{function}: workdir {workdir} is not a folder")
    limit = max_array_size(env)
    if limit is not None and len(commands) > limit:
        raise SlurmError(f"{function}: {len(commands)} tasks exceed the cluster's MaxArraySize "
                         f"({limit}): give each task several submissions")
    run = workdir / "slurm" / f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}-{time.monotonic_ns()}"
    run.mkdir(parents=True)
    tasks = run / "commands.json"
    tasks.write_text(json.dumps(commands) + "\n")
    # The batch scripts run on the nodes: Python from the standard library, no shell quoting.
    task_script = ("#!/usr/bin/python3\nimport json, os\n"
                   f"argv = json.load(open({str(tasks)!r}))[int(os.environ['SLURM_ARRAY_TASK_ID'])]\n"
                   "os.execvp(argv[0], argv)\n")
    merge_script = f"#!/usr/bin/python3\nimport os\nargv = {then!r}\nos.execvp(argv[0], argv)\n"
    common = [f"--chdir={workdir}", *options]
    array = _sbatch(function, [f"--array=0-{len(commands) - 1}%{concurrency}", "--job-name=scalebook-grade",
                               f"--output={run}/task-%A_%a.out", *common], task_script, env)
    try:
        merge = _sbatch(function, [f"--dependency=afterany:{array}", "--kill-on-invalid-dep=yes",
                                   "--job-name=scalebook-merge", f"--output={run}/merge-%j.out", *common],
                        merge_script, env)
    except SlurmError:
        subprocess.run(["scancel", str(array)], env=env, capture_output=True)
        raise
    return array, merge


def _records(job_ids: list[int], env: dict) -> dict[str, Outcome] | None:
    """Every record scontrol still holds of these jobs (array tasks as 'ARRAY_TASK'); None when
    scontrol has forgotten one of them (MinJobAge passed)."""
    outcomes: dict[str, Outcome] = {}
    for job in job_ids:
        result = subprocess.run(["scontrol", "show", "job", "-o", str(job)], env=env,
                                capture_output=True, text=True)
        if result.returncode != 0:
            return None
        for line in result.stdout.splitlines():
            fields = dict(re.findall(r"(\w+)=(\S*)", line))
            task = fields.get("ArrayTaskId")
            key = f"{fields.get('ArrayJobId')}_{task}" if task else fields.get("JobId", str(job))
            code, _, sig = fields.get("ExitCode", "0:0").partition(":")
            outcomes[key] = Outcome(fields.get("JobState", "UNKNOWN"), int(code or 0), int(sig or 0))
    return outcomes


def _accounted(job_ids: list[int], env: dict) -> dict[str, Outcome]:
    result = subprocess.run(["sacct", "-n", "-P", "-X", "-o", "JobID,State,ExitCode",
                             "-j", ",".join(map(str, job_ids))], env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise SlurmError(f"wait: neither scontrol nor sacct knows jobs {job_ids}: {result.stderr.strip()}")
    outcomes = {}
    for line in result.stdout.splitlines():
        key, state, exit_code = line.split("|")
        code, _, sig = exit_code.partition(":")
        outcomes[key] = Outcome(state.split()[0], int(code or 0), int(sig or 0))
    return outcomes


def wait(job_ids: list[int], *, env: dict | None = None, timeout: float | None = None,
         poll: float = 0.2, max_poll: float = 10.0) -> dict[str, Outcome]:
    """Waits until none of these jobs (array jobs with all their tasks) is pending, running or
    completing, then returns how each job and task ended: {'12_0': Outcome(...), ..., '13': ...}.
    env: the Slurm commands' environment (LocalCluster.env; os.environ by default).
    Polls squeue, from every `poll` seconds up to every `max_poll` (a big class waits long; a
    cluster's scheduler should not be asked every fraction of a second). SlurmError after
    `timeout` seconds."""
    if not job_ids or not all(isinstance(j, int) for j in job_ids):
        raise SlurmError(f"wait: job_ids must be a non-empty list of job ids, not {job_ids!r:.200}")
    env = dict(os.environ) if env is None else env
    deadline = None if timeout is None else time.monotonic() + timeout
    ids = ",".join(map(str, job_ids))
    while True:
        active = subprocess.run(["squeue", "-h", "-o", "%i %T", "-j", ids], env=env,
                                capture_output=True, text=True)
        if active.returncode != 0 and "Invalid job id" not in active.stderr:
            raise SlurmError(f"wait: squeue failed: {active.stderr.strip() or active.returncode}")
        if active.returncode != 0 or not active.stdout.strip():
            break
        if deadline is not None and time.monotonic() > deadline:
            raise SlurmError(f"wait: jobs {ids} still active after {timeout} s:\n{active.stdout.strip()}")
        time.sleep(poll)
        poll = min(poll * 1.5, max_poll)
    outcomes = _records(job_ids, env)
    if outcomes is None or any(o.state not in FINAL_STATES for o in outcomes.values()):
        outcomes = _accounted(job_ids, env)
    return outcomes
