"""Links a chapter's worker from the files that compiled, so a broken exercise costs only itself.

Linking a chapter's worker from the exercise files that compiled, taking away first those that
cannot be linked (two files defining one symbol, a call into an exercise that did not compile, a
file that does not link), so that a broken exercise costs only itself.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from . import sandbox
from ..files import atomic_copy, read_json, write_json
from .. import isolate
from ..config import TOOL_SECONDS
from ..linking import link_message, unlinked_calls
from ..verdicts import safe_text
from .kitpaths import KIT

if TYPE_CHECKING:
    from .step import Step


def boxed_tool(step: Step, out: Path, name: str, argv: list[str], binds: list, keep: int = 20000,
               head: int = 20000, results: tuple[str, ...] = ()) -> tuple[int, str]:
    """ARGV in a box that sees the objects in OUT at /out and BINDS (host path, box path; read-only),
    all from a staging folder of neutral name; RESULTS: the files the box writes to /out, moved
    into OUT afterwards (read bounded, never through a link)."""
    limits = sandbox.Limits(**dict(step.settings.limits.as_dict(), cpu_seconds=TOOL_SECONDS))
    with sandbox.Staging(copy=step.box.uid) as staging:
        folder = staging.folder("out")
        for path in sorted(out.glob("*.o")):
            staging.add(path, f"out/{path.name}")
        box_binds = [("rw", folder, "/out")]
        for index, (host, inside) in enumerate(binds):
            box_binds.append(("ro", staging.add(host, f"in/{index}-{Path(inside).name}"), inside))
        args_file = staging.path / "box"
        command = step.box.command(args_file, box_binds, argv, limits)
        cgroups = sandbox.Cgroups(limits)
        try:
            code, output = step.box.run(args_file, command, limits, TOOL_SECONDS, cgroups, keep=keep, head=head)
        finally:
            cgroups.close()
        for result in results:
            (out / result).unlink(missing_ok=True)
            try:
                data = sandbox.read_file(folder / result, step.settings.limits.file_mb << 20)
            except OSError:
                continue
            (out / result).write_bytes(data)
            (out / result).chmod(0o700)
    return code, output.decode("utf-8", "replace")


def link(step: Step, chapter: str, out: Path, sources: list[str]) -> tuple[int, str]:
    info = step.kit["chapters"][chapter]
    # Only the archives of lib this chapter's exercises may use (the kit lists them: lib's base and
    # copies of earlier chapters' answers), after the worker's server.
    binds = [(KIT / "serve" / f"{chapter}.o", "/kit/serve.o"), (KIT / "lib" / info["server"], "/kit/libserver.a")]
    libs = []
    for index, archive in enumerate(info["libs"]):
        binds.append((KIT / "lib" / archive, f"/kit/lib{index}.a"))
        libs.append(f"/kit/lib{index}.a")
    argv = [step.kit["compiler"], "-fuse-ld=gold", *[f"/out/{s}.o" for s in sources], "/kit/serve.o",
            "/kit/libserver.a", "-Wl,--start-group", *libs, "-Wl,--end-group",
            # The server calls every contract function, also those of exercises that did not
            # compile: the link goes on, and its warnings name what nothing defines.
            "-Wl,--warn-unresolved-symbols", "-o", "/out/worker"]
    (out / "worker").unlink(missing_ok=True)
    return boxed_tool(step, out, "link", argv, binds, results=("worker",))


def symbols(step: Step, out: Path, exercises: dict[str, dict], compiled: list[str]) -> dict[str, tuple[set[str], set[str]]]:
    """{exercise: (strong symbols its file defines, symbols it needs)}, demangled, read by nm in a box."""
    sources = [exercises[e]["source"] for e in compiled]
    code, text = boxed_tool(step, out, "nm", ["/usr/bin/nm", "-C", "-A", "-g", *[f"/out/{s}.o" for s in sources]], [],
                            keep=64 << 20, head=0)
    return isolate.read_symbols(text.splitlines(), {f"/out/{exercises[e]['source']}.o": e for e in compiled})


def still_compiled(exercises: dict[str, dict], among: list[str]) -> list[str]:
    return [e for e in among if exercises[e]["status"] == "compiled"]


def mark_duplicates(exercises: dict[str, dict], compiled: list[str], table: dict, shown: dict[str, str]) -> None:
    """Two files that define the same symbol cost those two exercises only (the rest is linked)."""
    for exercise, sentence in isolate.duplicates(compiled, table, shown, lambda s: safe_text(s, 200)).items():
        if exercises[exercise]["status"] == "compiled":
            exercises[exercise] = dict(exercises[exercise], status="compile_error", message=sentence)


def mark_calls_into_unlinked(exercises: dict[str, dict], compiled: list[str], table: dict,
                             functions: dict[str, list[str]]) -> None:
    """An exercise whose file calls a contract function of one that is not linked cannot run.
    FUNCTIONS: exercise id -> its contract functions."""
    broken = [e for e in exercises if e not in compiled]
    for exercise in compiled:
        callees = isolate.blocked(exercise, table[exercise][1], broken, functions)
        if callees:
            other, result = callees[0], exercises[callees[0]]
            why = "does not compile" if result["status"] in ("compile_error", "compiled") else "was not compiled"
            exercises[exercise] = dict(exercises[exercise], status="not_run",
                                       message=f"not run: {other} {why} \u2014 {result.get('message', '')}")


def link_each_alone(step: Step, chapter: str, out: Path, exercises: dict[str, dict], compiled: list[str],
                    shown: dict[str, str]) -> str | None:
    """A link that no duplicate explains: the files that do not link on their own cost their
    exercises; the rest is linked again. Returns the worker's link error, if any."""
    alone_ok = []
    for exercise in compiled:
        code_alone, text = link(step, chapter, out, [exercises[exercise]["source"]])
        if code_alone == 0:
            alone_ok.append(exercise)
        else:
            last = [line for line in text.splitlines() if "error" in line][:1] or ["it does not link"]
            exercises[exercise] = dict(exercises[exercise], status="compile_error",
                                       message=safe_text(f"{shown[exercise]} does not link: {last[0]}"))
    if not alone_ok:
        return None
    code, output = link(step, chapter, out, [exercises[e]["source"] for e in alone_ok])
    if code == 0:
        return None
    return safe_text("the chapter's worker does not link: " + (output.strip().splitlines() or ["link failed"])[-1])


def link_worker(step: Step, chapter: str, out: Path, exercises: dict[str, dict]) -> str | None:
    """Links the chapter's worker from the exercises that compiled (OUT/worker), first taking away
    from EXERCISES, in place, those that cannot be linked: two files that define the same symbol,
    a file that calls an exercise that did not compile, a file that does not link. Returns the
    worker's link error, if any."""
    compiled = still_compiled(exercises, list(exercises))
    shown = {e: f"exercises/{chapter}/{exercises[e]['source']}" for e in exercises}
    table = symbols(step, out, exercises, compiled) if compiled else {}
    mark_duplicates(exercises, compiled, table, shown)
    compiled = still_compiled(exercises, compiled)
    info = step.kit["chapters"][chapter]
    while True:
        mark_calls_into_unlinked(exercises, compiled, table, info["functions"])
        compiled = still_compiled(exercises, compiled)
        if not compiled:
            return None
        code, output = link(step, chapter, out, [exercises[e]["source"] for e in compiled])
        # A file that calls what nothing in the chapter's worker defines (a prototype of lib's answer
        # redeclared by hand, a function of its own declared but never written) would crash at the
        # call: it does not link, in the words ./workbook check uses, and the rest is linked again.
        unlinked = unlinked_calls(output.splitlines(), {f"/out/{exercises[e]['source']}.o": e for e in compiled})
        if code != 0 or not unlinked:
            break
        for exercise, calls in unlinked.items():
            exercises[exercise] = dict(exercises[exercise], status="compile_error", message=safe_text(
                link_message(shown[exercise], info["number"], calls, KIT / "include" / "scalebook")))
        compiled = still_compiled(exercises, compiled)
    return link_each_alone(step, chapter, out, exercises, compiled, shown) if code != 0 else None


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
        atomic_copy(out / "worker", cache / f"{key}.worker")
    write_json(cache / f"{key}.json", {"link_error": link_error, "exercises": {
        e: {k: v for k, v in r.items() if k != "cached"} for e, r in exercises.items()}})
    return link_error, False
