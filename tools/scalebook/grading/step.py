#!/usr/bin/env python3
"""The compile step of a grading CTest tree (tools/grade.py writes the tree; CTest runs it as a
fixture that the chapter's checks require; tools/grade_check.cpp runs the checks):

  grade_step.py build SUBMISSION CHAPTER

compiles each exercise file of CHAPTER in a box of its own (or takes an identical file's earlier
result from the tree's object cache), links the chapter's worker in a box from the files that
compiled, and writes each exercise's verdict to SUBMISSION/build/CHAPTER/EXERCISE.status
("compiled", or "STATUS<TAB>message"), and the worker's launcher (worker.sh). SUBMISSION is the
submission's folder in the tree (DIR/ctest/NAME). This file runs from the tree's copy of the kit
(DIR/ctest/kit/tools), so the tree grades the same way whatever happens to the instructor's tree.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import math
import os
import re
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scalebook import sandbox  # noqa: E402
from scalebook.grading import Ledger, Settings, first_error, read_json, safe_text, write_json  # noqa: E402
from scalebook.linking import link_message, unlinked_calls  # noqa: E402

KIT = Path(__file__).resolve().parent.parent
COMPILE_FLAGS = ["-std=c++20", "-O1", "-fdiagnostics-color=never"]


class Step:
    def __init__(self, submission: Path):
        self.submission = submission
        self.tree = submission.parent
        self.settings = Settings.from_dict(read_json(KIT / "settings.json"))
        self.kit = read_json(KIT / "kit.json")
        self.ledger = Ledger(submission / "ledger")


# --- build: compile each exercise file, then link the worker ------------------------------------

def compile_one(step: Step, chapter: str, number: int, source: str, out: Path, wait: bool = True) -> dict | None:
    """Compiles SOURCE in a box (or takes the identical file's earlier result from the tree's
    object cache). Returns {status: compiled|compile_error|timed_out, message?, line?, ...}. Two
    submissions graded at once with the same file: the second waits for the first's object, or,
    with WAIT false, returns None at once so that it can compile its other files meanwhile."""
    source_path = step.submission / "src" / chapter / source
    if not source_path.exists():
        return compile_unlocked(step, chapter, number, source, out)
    cache = step.tree / "objects"
    cache.mkdir(exist_ok=True)
    key = hashlib.sha256(source_path.read_bytes()).hexdigest()
    with open(cache / f"{key}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return None
        return compile_unlocked(step, chapter, number, source, out)


def compile_unlocked(step: Step, chapter: str, number: int, source: str, out: Path) -> dict:
    settings = step.settings
    source_path = step.submission / "src" / chapter / source
    shown = f"exercises/{chapter}/{source}"
    if not source_path.exists():
        return {"status": "compile_error", "message": f"{shown}: the submission has no such file"}
    data = source_path.read_bytes()
    key = hashlib.sha256(f"{step.kit['fingerprint']}\0{chapter}\0{source}\0".encode() + data).hexdigest()
    cache = step.tree / "objects"
    cached = read_json(cache / f"{key}.json")
    obj = out / f"{source}.o"
    if cached is not None and (cached["status"] != "compiled" or (cache / f"{key}.o").exists()):
        if cached["status"] == "compiled":
            shutil.copyfile(cache / f"{key}.o", obj)
        return dict(cached, cached=True)
    left = settings.compile_budget_seconds - step.ledger.spent("compile")
    if left <= 0:
        return {"status": "timed_out", "message": f"timed_out: compile budget ({settings.compile_budget_seconds} s "
                                                  "of CPU for all of the submission's files) was spent before this file"}
    # CPU seconds, which a busy machine does not eat into; the wall clock only stops a compile that
    # waits for nothing (four times the CPU limit, and some).
    limit = min(settings.compile_seconds, left)
    limits = sandbox.Limits(**dict(settings.limits.as_dict(), cpu_seconds=max(1, math.ceil(limit))))
    binds = [("ro", step.submission / "src" / chapter, "/src"), ("rw", out, "/out"),
             ("ro", KIT / "include", "/kit/include"), ("ro", KIT / "chapters" / chapter, "/kit/chapter"),
             ("ro", KIT / "pch", "/kit/pch")]
    compiler = [step.kit["compiler"], *COMPILE_FLAGS, "-include", "/kit/pch/pch.hpp", "-I/kit/chapter",
                "-I/kit/include", "-isystem", step.kit["eigen"], f"-DSCALEBOOK_EXERCISE_CHAPTER={number}",
                "-c", f"/src/{source}", "-o", f"/out/{source}.o"]
    # The shell in the box writes the CPU time of the compiler's processes (its `times`), which no
    # process outside the box can see whole (bwrap does not reap its init), to a file of its own.
    times = out / f"{source}.cpu"
    argv = ["/bin/sh", "-c", f'"$@"; status=$?; times > /out/{times.name}; exit $status', "sh", *compiler]
    args_file = out / f"{source}.box"
    command = sandbox.write_arguments(args_file, sandbox.box_arguments(binds, argv, limits))
    cgroups = sandbox.Cgroups(limits)
    started = time.monotonic()
    try:
        code, output = sandbox.run(args_file, command, limits, 4 * limit + 10, cgroups)
    finally:
        cgroups.close()
        cpu = cpu_of(times, time.monotonic() - started)
        step.ledger.add("compile", cpu)
    if code == 0 and obj.exists():
        result = {"status": "compiled"}
    elif code == 124 or cpu >= 0.9 * limit or b"CPU time limit exceeded" in output:
        # The kernel's CPU accounting and the shell's `times` differ by a few tenths of a second.
        which = "compile limit" if limit == settings.compile_seconds else "compile budget"
        result = {"status": "timed_out",
                  "message": f"timed_out: {which} ({limit:.0f} s of CPU): {shown} was still compiling"}
    else:
        result = dict(first_error(output.decode("utf-8", "replace"), source, shown, data), status="compile_error")
    cache.mkdir(exist_ok=True)
    if result["status"] != "timed_out":  # a budget's time-out depends on the rest of the submission
        if result["status"] == "compiled":
            shutil.copyfile(obj, cache / f"{key}.o.part{os.getpid()}")
            os.replace(cache / f"{key}.o.part{os.getpid()}", cache / f"{key}.o")
        write_json(cache / f"{key}.json", result)
    return result


def cpu_of(times: Path, wall: float) -> float:
    """The children's user and system seconds from a `times` output ("0m1.5s 0m0.2s" lines, the
    second the children's); the wall time when the shell was stopped before it wrote them."""
    try:
        lines = times.read_text().splitlines()
        return sum(int(m) * 60 + float(sec) for m, sec in re.findall(r"(\d+)m([\d.]+)s", lines[1]))
    except (OSError, IndexError, ValueError):
        return wall


def boxed_tool(step: Step, out: Path, name: str, argv: list[str], binds: list, keep: int = 20000) -> tuple[int, str]:
    limits = sandbox.Limits(**dict(step.settings.limits.as_dict(), cpu_seconds=60))
    args_file = out / f"{name}.box"
    command = sandbox.write_arguments(args_file, sandbox.box_arguments([("rw", out, "/out"), *binds], argv, limits))
    cgroups = sandbox.Cgroups(limits)
    try:
        code, output = sandbox.run(args_file, command, limits, 60, cgroups, keep=keep)
    finally:
        cgroups.close()
    return code, output.decode("utf-8", "replace")


def link(step: Step, chapter: str, out: Path, sources: list[str]) -> tuple[int, str]:
    info = step.kit["chapters"][chapter]
    # Only the archives of lib this chapter's exercises may use (the kit lists them: lib's base and
    # copies of earlier chapters' answers), after the worker's server.
    binds = [("ro", KIT / "serve" / f"{chapter}.o", "/kit/serve.o"),
             ("ro", KIT / "lib" / info["server"], "/kit/libserver.a")]
    libs = []
    for index, archive in enumerate(info["libs"]):
        binds.append(("ro", KIT / "lib" / archive, f"/kit/lib{index}.a"))
        libs.append(f"/kit/lib{index}.a")
    argv = [step.kit["compiler"], "-fuse-ld=gold", *[f"/out/{s}.o" for s in sources], "/kit/serve.o",
            "/kit/libserver.a", "-Wl,--start-group", *libs, "-Wl,--end-group",
            # The server calls every contract function, also those of exercises that did not
            # compile: the link goes on, and its warnings name what nothing defines.
            "-Wl,--warn-unresolved-symbols", "-o", "/out/worker"]
    (out / "worker").unlink(missing_ok=True)
    return boxed_tool(step, out, "link", argv, binds)


def symbols(step: Step, out: Path, sources: list[str]) -> dict[str, tuple[set[str], set[str]]]:
    """{source: (strong symbols it defines, symbols it needs)}, demangled, read by nm in a box."""
    code, text = boxed_tool(step, out, "nm", ["/usr/bin/nm", "-C", "-A", "-g", *[f"/out/{s}.o" for s in sources]], [],
                            keep=64 << 20)
    found = {s: (set(), set()) for s in sources}
    for line in text.splitlines():
        match = re.match(r"^/out/(.+?)\.o:(?:[0-9a-f]+)?\s+([A-Za-z])\s+(.*)$", line)
        if not match or match.group(1) not in found:
            continue
        kind, symbol = match.group(2), match.group(3)
        if kind == "U":
            found[match.group(1)][1].add(symbol)
        elif kind in "TDBRGS" and not symbol.startswith(("typeinfo", "vtable", "guard variable")):
            found[match.group(1)][0].add(symbol)
    return found


def link_worker(step: Step, chapter: str, out: Path, exercises: dict[str, dict]) -> str | None:
    """Links the chapter's worker from the exercises that compiled (OUT/worker), first taking away
    from EXERCISES, in place, those that cannot be linked: two files that define the same symbol,
    a file that calls an exercise that did not compile, a file that does not link. Returns the
    worker's link error, if any."""
    compiled = [e for e, r in exercises.items() if r["status"] == "compiled"]
    source_of = {e: exercises[e]["source"] for e in exercises}
    shown = {e: f"exercises/{chapter}/{source_of[e]}" for e in exercises}
    table = symbols(step, out, [source_of[e] for e in compiled]) if compiled else {}
    # Two files that define the same symbol cost those two exercises only (the rest is linked).
    owners: dict[str, list[str]] = {}
    for exercise in compiled:
        for symbol in table[source_of[exercise]][0]:
            owners.setdefault(symbol, []).append(exercise)
    for symbol, who in sorted(owners.items()):
        if len(who) < 2:
            continue
        first, second = who[0], who[1]
        message = (f"{first} and {second} both define {safe_text(symbol, 200)} ({shown[first]} and "
                   f"{shown[second]}): make it static, or put it in an unnamed namespace, in each file")
        for exercise in (first, second):
            if exercises[exercise]["status"] == "compiled":
                exercises[exercise] = dict(exercises[exercise], status="compile_error", message=message)
    compiled = [e for e in compiled if exercises[e]["status"] == "compiled"]
    functions = step.kit["chapters"][chapter]["functions"]  # exercise id -> its contract functions
    link_error = None
    while True:
        # An exercise whose file calls a contract function of one that is not linked cannot run.
        for exercise in compiled:
            needed = table[source_of[exercise]][1]
            for other, result in exercises.items():
                if other == exercise or other in compiled:
                    continue
                if any(re.search(rf"\bscalebook::ch\d+::{re.escape(n)}\(", s) for n in functions.get(other, [])
                       for s in needed):
                    why = "does not compile" if result["status"] in ("compile_error", "compiled") else "was not compiled"
                    exercises[exercise] = dict(exercises[exercise], status="not_run",
                                               message=f"not run: {other} {why} \u2014 {result.get('message', '')}")
                    break
        compiled = [e for e in compiled if exercises[e]["status"] == "compiled"]
        if not compiled:
            return None
        code, output = link(step, chapter, out, [source_of[e] for e in compiled])
        # A file that calls what nothing in the chapter's worker defines (a prototype of lib's answer
        # redeclared by hand, a function of its own declared but never written) would crash at the
        # call: it does not link, in the words ./workbook check uses, and the rest is linked again.
        unlinked = unlinked_calls(output.splitlines(), {f"/out/{source_of[e]}.o": e for e in compiled})
        if code != 0 or not unlinked:
            break
        for exercise, calls in unlinked.items():
            exercises[exercise] = dict(exercises[exercise], status="compile_error", message=safe_text(
                link_message(shown[exercise], step.kit["chapters"][chapter]["number"], calls, KIT / "include" / "scalebook")))
        compiled = [e for e in compiled if exercises[e]["status"] == "compiled"]
    if code != 0:
        # Not explained by a duplicate: find the files that do not link on their own.
        alone_ok = []
        for exercise in compiled:
            code_alone, text = link(step, chapter, out, [source_of[exercise]])
            if code_alone == 0:
                alone_ok.append(exercise)
            else:
                last = [line for line in text.splitlines() if "error" in line][:1] or ["it does not link"]
                exercises[exercise] = dict(exercises[exercise], status="compile_error",
                                           message=safe_text(f"{shown[exercise]} does not link: {last[0]}"))
        compiled = alone_ok
        code, output = link(step, chapter, out, [source_of[e] for e in compiled]) if compiled else (1, "")
        if code != 0 and compiled:
            link_error = safe_text("the chapter's worker does not link: " +
                                   (output.strip().splitlines() or ["link failed"])[-1])
    return link_error


def link_once(step: Step, chapter: str, out: Path, exercises: dict[str, dict], cache: Path,
              key: str) -> tuple[str | None, bool]:
    """The chapter's worker from the tree's cache under KEY, or linked (link_worker) and kept there.
    Returns the link error and whether the worker was linked before."""
    linked_before = read_json(cache / f"{key}.json")
    if linked_before is not None and (linked_before["link_error"] is not None or (cache / f"{key}.worker").exists()):
        for exercise, result in linked_before["exercises"].items():
            exercises[exercise] = dict(result, cached=exercises[exercise].get("cached", False))
        if (cache / f"{key}.worker").exists():
            shutil.copy2(cache / f"{key}.worker", out / "worker")
        return linked_before["link_error"], True
    link_error = link_worker(step, chapter, out, exercises)
    if (out / "worker").exists() and link_error is None:
        shutil.copy2(out / "worker", cache / f"{key}.worker.part{os.getpid()}")
        os.replace(cache / f"{key}.worker.part{os.getpid()}", cache / f"{key}.worker")
    write_json(cache / f"{key}.json", {"link_error": link_error, "exercises": {
        e: {k: v for k, v in r.items() if k != "cached"} for e, r in exercises.items()}})
    return link_error, False


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
    # The link's outcome follows from the compile verdicts and the objects' bytes: a chapter whose
    # files are all identical to an earlier submission's takes that worker from the tree's cache.
    digest = hashlib.sha256(f"{step.kit['fingerprint']}\0{chapter}\0".encode())
    for exercise, result in exercises.items():
        digest.update(json.dumps([exercise, result["source"], result["status"], result.get("message")]).encode())
        if result["status"] == "compiled":
            digest.update(hashlib.sha256((out / f"{result['source']}.o").read_bytes()).digest())
    cache = step.tree / "objects"
    cache.mkdir(exist_ok=True)
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
        limits = sandbox.Limits(**dict(step.settings.limits.as_dict(), cpu_seconds=step.settings.check_seconds + 1))
        command = sandbox.write_arguments(out / "worker.box", sandbox.box_arguments(
            [("ro", worker, "/worker"), ("ro", KIT / "bin" / "grade_box", "/launcher")], ["/launcher"], limits,
            count_processes=False, as_pid_1=True))
        sandbox.worker_launcher(out / "worker.sh", out / "worker.box", command, KIT / "nofork.bpf", limits)
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
        print("usage: grade_step.py build SUBMISSION CHAPTER", file=sys.stderr)
        return 2
    return build(Step(Path(sys.argv[2])), sys.argv[3])


if __name__ == "__main__":
    sys.exit(main())
