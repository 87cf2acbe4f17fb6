"""Ends every process a grading run started when the run ends, and logs one line at a time.

Every process a grading run starts ends with it: the process groups it started, killed at once
on a signal, and its log lines, one at a time.
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
    """The process groups this run started (ctest, cmake). A signal ends them all, at once."""

    def __init__(self):
        self.groups: set[int] = set()
        self.lock = threading.Lock()
        self.stopping = False

    def popen(self, argv: list[str], **kwargs) -> subprocess.Popen:
        with self.lock:
            if self.stopping:
                raise KeyboardInterrupt
            process = subprocess.Popen(argv, start_new_session=True, preexec_fn=sandbox.die_with_parent, **kwargs)
            self.groups.add(process.pid)
        return process

    def done(self, process: subprocess.Popen) -> None:
        with self.lock:
            self.groups.discard(process.pid)

    def stop(self, signum, _frame) -> None:
        self.stopping = True
        for group in list(self.groups):
            try:
                os.killpg(group, signal.SIGKILL)
            except OSError:
                pass
        log(f"grade: stopped by {signal.Signals(signum).name}; the reports written so far are kept")
        os._exit(128 + signum)


CHILDREN = Children()


def run_quietly(argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    process = CHILDREN.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             text=True, errors="replace", **kwargs)
    output, _ = process.communicate()
    CHILDREN.done(process)
    return subprocess.CompletedProcess(argv, process.returncode, output)
