"""Ends every process a grading run started when the run ends, and logs one line at a time.

Every process a grading run starts ends with it: on a signal, the process groups it started and
every other process below it are killed at once; and its log lines are written one at a time.
"""
from __future__ import annotations

import os
import signal
import subprocess
import threading

from . import sandbox

print_lock = threading.Lock()


def log(text: str) -> None:
    with print_lock:
        print(text, flush=True)


# --- stopping: every process this run started ends with it ---------------------------------------

class Children:
    """The process groups this run started (ctest, cmake, git). A signal ends them, and every other
    process below this one (a pool's workers, what those started), at once."""

    def __init__(self):
        self.groups: set[int] = set()
        self.lock = threading.Lock()
        self.stopping = False
        self.owner = os.getpid()
        self.command = "grade"

    def install(self, command: str) -> None:
        """Makes SIGINT, SIGTERM and SIGHUP stop COMMAND's run (this process) and all it started."""
        self.owner, self.command = os.getpid(), command
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, self.stop)

    def popen(self, argv: list[str], dies_with_parent: bool = True, **kwargs) -> subprocess.Popen:
        """ARGV started in a process group of its own, which a signal ends. DIES_WITH_PARENT: also when
        this process dies however it dies (PR_SET_PDEATHSIG, set in the child by Python code, which
        costs a fork without vfork: tens of milliseconds on a busy machine, too much for collect's
        many short gits, whose groups the signal handler kills anyway)."""
        with self.lock:
            if self.stopping:
                raise KeyboardInterrupt
            process = subprocess.Popen(argv, start_new_session=True,
                                       preexec_fn=sandbox.die_with_parent if dies_with_parent else None, **kwargs)
            self.groups.add(process.pid)
        return process

    def done(self, process: subprocess.Popen) -> None:
        with self.lock:
            self.groups.discard(process.pid)

    def stop(self, signum, _frame) -> None:
        if os.getpid() != self.owner:  # a forked worker (a process pool's) that was given the signal too:
            os._exit(128 + signum)     # it ends at once, and logs nothing (a lock it inherited may be held)
        self.stopping = True
        for group in list(self.groups):
            try:
                os.killpg(group, signal.SIGKILL)
            except OSError:
                pass
        end_descendants(self.owner)
        log(f"{self.command}: stopped by {signal.Signals(signum).name}; the reports written so far are kept"
            if self.command == "grade" else f"{self.command}: stopped by {signal.Signals(signum).name}")
        os._exit(128 + signum)


def descendants(root: int) -> set[int]:
    """Every living process below ROOT, from /proc (a box's processes are descendants too)."""
    parents: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
                if fields[0] != b"Z":
                    parents[int(entry.name)] = int(fields[1])
            except (OSError, IndexError, ValueError):
                pass
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def end_descendants(root: int) -> None:
    """Kills every process below ROOT, whatever started it (a process pool's workers are in no group
    of ours, and would wait forever for work from a parent that is gone): each is stopped first, so
    that none forks or exits between two looks and leaves a child to init, then all are killed."""
    stopped: set[int] = set()
    for _ in range(20):
        found = descendants(root) - stopped
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGSTOP)
            except OSError:
                pass
        stopped |= found
    for pid in stopped:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


CHILDREN = Children()


def run_quietly(argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    process = CHILDREN.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             text=True, errors="replace", **kwargs)
    output, _ = process.communicate()
    CHILDREN.done(process)
    return subprocess.CompletedProcess(argv, process.returncode, output)
