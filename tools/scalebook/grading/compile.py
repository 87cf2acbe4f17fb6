"""Compiles one exercise file of a submission in a box, within its CPU limit and budget.

Compiling one exercise file of a submission in a box of its own, within its CPU limit and the
submission's budget, or taking the earlier result of a compile that read exactly the same bytes
from the tree's object cache.
"""
from __future__ import annotations

import fcntl
import hashlib
import math
import re
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING

from . import sandbox
from ..files import atomic_copy, read_json, write_json
from .compile_errors import first_error
from .kitpaths import KIT

if TYPE_CHECKING:
    from .step import Step

COMPILE_FLAGS = ["-std=c++20", "-O1", "-fdiagnostics-color=never"]
SOURCE_LIMIT = 1 << 20  # what intake takes of an exercise file (intake.py)


def object_key(step: Step, chapter: str, source: str) -> str:
    """The cache key of SOURCE's object: every byte its compile can read. The box sees the kit's
    headers, the precompiled header and the compiler (the chapter's compile fingerprint covers them,
    the flags and the compile limits: grading/inputs.py) and the chapter's files of this submission
    (a file may #include a sibling of its folder, as in ./workbook check): their names and bytes, all
    of them. An object is shared only by compiles that read exactly the same bytes: a classmate's
    identical file (never one whose sibling differs), or the same file in an earlier grading folder
    (a regrade, grading/regrade.py)."""
    digest = hashlib.sha256(f"{step.kit['keys']['compile'][chapter]}\0{chapter}\0{source}\0".encode())
    folder = step.submission / "src" / chapter
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        data = sandbox.read_file(path, SOURCE_LIMIT + 1)
        digest.update(f"{path.name}\0{len(data)}\0".encode() + data)
    return digest.hexdigest()


def compile_one(step: Step, chapter: str, number: int, source: str, out: Path, wait: bool = True) -> dict | None:
    """Compiles SOURCE in a box (or takes the earlier result of a compile that read exactly the
    same bytes from the tree's object cache, see object_key). Returns {status:
    compiled|compile_error|timed_out, message?, line?, ...}. Two submissions graded at once with
    the same files: the second waits for the first's object, or, with WAIT false, returns None at
    once so that it can compile its other files meanwhile."""
    source_path = step.submission / "src" / chapter / source
    if not source_path.exists():
        return compile_unlocked(step, chapter, number, source, out, "")
    cache = step.tree / "objects"
    cache.mkdir(mode=0o700, exist_ok=True)
    key = object_key(step, chapter, source)
    with open(cache / f"{key}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return None
        return compile_unlocked(step, chapter, number, source, out, key)


def compile_binds(step: Step, chapter: str, staging: sandbox.Staging) -> list[tuple[str, Path, str]]:
    """A compile box's folders, bound from STAGING (neutral paths: see sandbox.Staging): the
    chapter's files of the submission at /src, a fresh /out, and the kit's headers and PCH (for a
    uid box, the kit's public view: kit.public_view, where its PCH was made)."""
    if step.box.uid:
        view = Path(step.kit["view"])
        return [("ro", staging.add_tree(step.submission / "src" / chapter, "src"), "/src"),
                ("rw", staging.folder("out"), "/out"), ("pub", view / "include", "/kit/include"),
                ("pub", view / "chapters" / chapter, "/kit/chapter"), ("pub", view / "pch", "/kit/pch")]
    return [("ro", staging.add_tree(step.submission / "src" / chapter, "src"), "/src"),
            ("rw", staging.folder("out"), "/out"),
            ("ro", staging.add_tree(KIT / "include", "include"), "/kit/include"),
            ("ro", staging.add_tree(KIT / "chapters" / chapter, "chapter"), "/kit/chapter"),
            ("ro", staging.add_tree(KIT / "pch", "pch"), "/kit/pch")]


def cached_result(cache: Path, key: str, obj: Path) -> dict | None:
    """The verdict kept for KEY (its object copied to OBJ when it compiled), or None: not compiled
    with these inputs yet."""
    cached = read_json(cache / f"{key}.json")
    if cached is None or (cached["status"] == "compiled" and not (cache / f"{key}.o").exists()):
        return None
    if cached["status"] == "compiled":
        shutil.copyfile(cache / f"{key}.o", obj)
    return dict(cached, cached=True)


def compile_unlocked(step: Step, chapter: str, number: int, source: str, out: Path, key: str) -> dict:
    settings = step.settings
    source_path = step.submission / "src" / chapter / source
    shown = f"exercises/{chapter}/{source}"
    if not source_path.exists():
        return {"status": "compile_error", "message": f"{shown}: the submission has no such file"}
    data = sandbox.read_file(source_path, SOURCE_LIMIT + 1)
    cache = step.tree / "objects"
    obj = out / f"{source}.o"
    cached = cached_result(cache, key, obj)
    if cached is not None:
        return cached
    left = settings.compile_budget_seconds - step.ledger.spent("compile")
    # A compile's CPU limit is whole seconds, one at least: with less than a second left, a compile
    # would overspend the budget by up to a second, so the budget counts as spent.
    if left < 1:
        return {"status": "timed_out", "message": f"timed_out: compile budget ({settings.compile_budget_seconds} s "
                                                  "of CPU for all of the submission's files) was spent before this file"}
    # CPU seconds, which a busy machine does not eat into; the wall clock only stops a compile that
    # waits for nothing (four times the CPU limit, and some).
    limit = min(settings.compile_seconds, left)
    limits = sandbox.Limits(**dict(settings.limits.as_dict(), cpu_seconds=max(1, math.ceil(limit))))
    compiler = [step.kit["compiler"], *COMPILE_FLAGS, "-include", "/kit/pch/pch.hpp", "-I/kit/chapter",
                "-I/kit/include", "-isystem", step.kit["eigen"], f"-DSCALEBOOK_EXERCISE_CHAPTER={number}",
                "-c", f"/src/{source}", "-o", f"/out/{source}.o"]
    # The shell in the box writes the CPU time of the compiler's processes (its `times`), which no
    # process outside the box can see whole (bwrap does not reap its init), to a file of its own.
    argv = ["/bin/sh", "-c", f'"$@"; status=$?; times > /out/{source}.cpu; exit $status', "sh", *compiler]
    started = time.monotonic()
    with sandbox.Staging(copy=step.box.uid) as staging:
        binds = compile_binds(step, chapter, staging)
        args_file = staging.path / "box"
        command = step.box.command(args_file, binds, argv, limits)
        cgroups = sandbox.Cgroups(limits)
        try:
            code, output = step.box.run(args_file, command, limits, 4 * limit + 10, cgroups)
        finally:
            cgroups.close()
            cpu = cpu_of(staging.path / "out" / f"{source}.cpu", time.monotonic() - started)
            step.ledger.add("compile", cpu)
        made = staging.path / "out" / f"{source}.o"
        if code == 0:
            try:  # what the box wrote, read bounded (its file size limit) and never through a link
                obj.write_bytes(sandbox.read_file(made, settings.limits.file_mb << 20))
            except OSError:
                code = 1
    if code == 0 and obj.exists():
        result = {"status": "compiled"}
    elif code == 124 or cpu >= 0.9 * limit or b"CPU time limit exceeded" in output:
        # The kernel's CPU accounting and the shell's `times` differ by a few tenths of a second.
        which = "compile limit" if limit == settings.compile_seconds else "compile budget"
        result = {"status": "timed_out",
                  "message": f"timed_out: {which} ({limit:.0f} s of CPU): {shown} was still compiling"}
    else:
        result = dict(first_error(output.decode("utf-8", "replace"), source, shown, data), status="compile_error")
    cache.mkdir(mode=0o700, exist_ok=True)
    if result["status"] != "timed_out":  # a budget's time-out depends on the rest of the submission
        if result["status"] == "compiled":
            atomic_copy(obj, cache / f"{key}.o")
        write_json(cache / f"{key}.json", result)
    return result


def cpu_of(times: Path, wall: float) -> float:
    """The children's user and system seconds from a `times` output ("0m1.5s 0m0.2s" lines, the
    second the children's); the wall time when the shell was stopped before it wrote them."""
    try:
        lines = sandbox.read_file(times, 4096).decode("ascii", "replace").splitlines()
        return sum(int(m) * 60 + float(sec) for m, sec in re.findall(r"(\d+)m([\d.]+)s", lines[1]))
    except (OSError, IndexError, ValueError):
        return wall
