"""The compile step of a grading CTest tree: compile each exercise file, link the worker.

The compile step of a grading CTest tree (grading/tree.py writes the tree; CTest runs this step
as a fixture that the chapter's checks require; native/check.cpp runs the checks):

  python3 -E -s -S -m scalebook.grading.step build SUBMISSION CHAPTER   (from the kit's tools/)

compiles each exercise file of CHAPTER in a box of its own (or takes an identical file's earlier
result from the tree's object cache), links the chapter's worker in a box from the files that
compiled, and writes each exercise's verdict to SUBMISSION/build/CHAPTER/EXERCISE.status
("compiled", or "STATUS<TAB>message"), and the worker's launcher (worker.sh). SUBMISSION is the
submission's folder in the tree (DIR/ctest/NAME). This runs from the tree's copy of the kit
(DIR/ctest/kit/tools), so the tree grades the same way whatever happens to the instructor's tree.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import sys
import time
from pathlib import Path

from . import sandbox
from ..config import Settings
from ..files import read_json, write_json
from .compile import compile_one
from .kitpaths import KIT
from .ledger import Ledger
from .link import link_once


class Step:
    """What every compile step of one submission reads: the kit's settings and tables, its ledger."""

    def __init__(self, submission: Path):
        self.submission = submission
        self.tree = KIT.parent  # DIR/ctest: the kit and the object cache beside the students' folders
        self.settings = Settings.from_dict(read_json(KIT / "settings.json"))
        self.kit = read_json(KIT / "kit.json")
        self.ledger = Ledger(submission / "ledger")
        self.box = sandbox.Box(self.kit.get("sandbox", sandbox.NAMESPACES), KIT)  # the kit's mode, always



def write_worker_launcher(step: Step, out: Path, worker: Path) -> None:
    """OUT/worker.sh: runs the linked WORKER in its box, under the check step's limits."""
    limits = sandbox.Limits(**dict(step.settings.limits.as_dict(), cpu_seconds=step.settings.check_seconds + 1))
    if step.box.uid:
        # The helper copies both into the box's own folder each time it starts the box; the box's
        # first process empties the box's scratch folder before each worker (native/box.cpp).
        binds = [("data", worker, "/worker"), ("data", KIT / "bin" / "grade_box", "/launcher")]
        command = step.box.command(out / "worker.box", binds, ["/launcher", "{box}/tmp", "/worker"], limits,
                                   count_processes=False, worker=True)
        sandbox.uid_worker_launcher(out / "worker.sh", command, KIT / "bin" / sandbox.UID_HELPER, KIT / "nofork.bpf",
                                    limits)
        return
    # The worker and the box's first process are copied into the box (bwrap's --ro-bind-data),
    # not bound: a bind would show their host paths in the box's mountinfo.
    command = sandbox.write_arguments(out / "worker.box", sandbox.box_arguments(
        [("data", sandbox.WORKER_FD, "/worker"), ("data", sandbox.LAUNCHER_FD, "/launcher")], ["/launcher"],
        limits, count_processes=False, as_pid_1=True))
    sandbox.worker_launcher(out / "worker.sh", out / "worker.box", command, KIT / "nofork.bpf", limits,
                            {sandbox.WORKER_FD: worker, sandbox.LAUNCHER_FD: KIT / "bin" / "grade_box"})

def build(step: Step, chapter: str) -> int:
    info = step.kit["chapters"][chapter]
    out = step.submission / "build" / chapter
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    exercises: dict[str, dict] = {}
    started = time.monotonic()
    # A file a classmate is compiling right now (identical text, e.g. an untouched stub or the same
    # solution) is put off: this submission compiles its other files meanwhile, and then takes the
    # classmate's object from the cache. Without this, two submissions graded at once compile the
    # same files in the same order and take turns on each, one core idle.
    later = []
    for exercise, source in zip(info["exercises"], info["sources"]):
        result = compile_one(step, chapter, info["number"], source, out, wait=False)
        if result is None:
            later.append((exercise, source))
        else:
            exercises[exercise] = dict(result, source=source)
    for exercise, source in later:
        exercises[exercise] = dict(compile_one(step, chapter, info["number"], source, out), source=source)
    exercises = {exercise: exercises[exercise] for exercise in info["exercises"]}
    compiled_at = time.monotonic()
    # The link's outcome follows from the compile verdicts, the objects' bytes and what the link
    # fingerprint covers (the server, lib's archives, the linker: grading/inputs.py): a chapter whose
    # files are all identical to an earlier submission's takes that worker from the tree's cache.
    digest = hashlib.sha256(f"{step.kit['keys']['link'][chapter]}\0{chapter}\0".encode())
    for exercise, result in exercises.items():
        digest.update(json.dumps([exercise, result["source"], result["status"], result.get("message")]).encode())
        if result["status"] == "compiled":
            digest.update(hashlib.sha256((out / f"{result['source']}.o").read_bytes()).digest())
    cache = step.tree / "objects"
    cache.mkdir(mode=0o700, exist_ok=True)
    key = f"link-{digest.hexdigest()}"
    with open(cache / f"{key}.lock", "w") as lock:  # a classmate's identical link, under way: wait for it
        fcntl.flock(lock, fcntl.LOCK_EX)
        link_error, linked_before = link_once(step, chapter, out, exercises, cache, key)
    write_json(out / "timing.json", {"compile": compiled_at - started, "link": time.monotonic() - compiled_at,
                                     "cached": sum(bool(r.get("cached")) for r in exercises.values()),
                                     "linked_before": linked_before})
    worker = out / "worker"
    linked = any(r["status"] == "compiled" for r in exercises.values()) and link_error is None and worker.exists()
    if linked:
        write_worker_launcher(step, out, worker)
    for exercise, result in exercises.items():
        if result["status"] == "compiled" and not linked:
            result = dict(result, status="compile_error", message=link_error or "the worker was not linked")
        status = "compiled" if result["status"] == "compiled" else f"{result['status']}\t{result['message']}"
        (out / f"{exercise}.status").write_text(status + "\n")
        write_json(out / f"{exercise}.json", result)
        note = " (identical file compiled before)" if result.get("cached") else ""
        print(f"{exercise} {result['status']}{note}" + (f": {result['message']}" if result.get("message") else ""))
    if link_error:
        print(link_error)
    return 0


def main() -> int:
    sandbox.die_with_parent()  # CTest, or whoever runs this step, stopped: so is the step
    if os.getppid() == 1 or len(sys.argv) != 4 or sys.argv[1] != "build":
        print("usage: python3 -m scalebook.grading.step build SUBMISSION CHAPTER", file=sys.stderr)
        return 2
    return build(Step(Path(sys.argv[2])), sys.argv[3])


if __name__ == "__main__":
    sys.exit(main())
