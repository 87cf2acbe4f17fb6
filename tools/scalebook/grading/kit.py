"""Builds grading's trusted half from this tree and copies it into the CTest tree.

The trusted half of grading: built once from this tree (never from a submission) and copied into
the CTest tree with its checks processes, libraries, headers, precompiled header, limits and steps.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from ..config import PCH_HEADERS, PCH_SECONDS, ROOT, TOOLS, Settings
from ..course import Chapter
from ..errors import GradingError
from ..files import atomic_copy, write_json
from . import inputs, sandbox
from .seccomp_filter import write_no_fork_filter, write_uid_box_filter
from .supervise import log, run_quietly

NATIVE = TOOLS / "scalebook" / "grading" / "native"


def build_kit(build_dir: Path, chapters: list[Chapter]) -> dict:
    """Builds the trusted half from this tree in build/grading-kit (never from a submission), one
    grading run at a time, and returns what grading-kit.tsv says about it."""
    if (build_dir / "grading-kit.tsv").exists() and not os.access(build_dir, os.W_OK):
        log(f"(using the kit in {build_dir} as it was built: this user may not rebuild it)")
    else:
        build_locked(build_dir, chapters)
    kit = {"chapters": {}, "files": {}}
    for line in (build_dir / "grading-kit.tsv").read_text().splitlines():
        parts = line.split("\t")
        if parts[0] == "chapter":
            kit["chapters"][parts[1]] = {"checks": parts[3], "serve": parts[4], "dir": parts[5], "libs": None}
        elif parts[0] == "libs":  # the archives of lib this chapter's worker may link (no copy of its answers)
            kit["chapters"][parts[1]]["libs"] = [p for p in parts[2:] if p]
        elif parts[0] == "copy":
            continue
        elif len(parts) >= 2:
            kit["files"][parts[0]] = parts[1]
    return kit


def build_locked(build_dir: Path, chapters: list[Chapter]) -> None:
    build_dir.mkdir(parents=True, exist_ok=True)
    with open(build_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (build_dir / "build.ninja").exists():
            # The kit links no track, but configuring names one: the reference, or the stubs in a tree
            # shipped without solutions (Gradescope's autograder, grading/autograder.py).
            track = ROOT / "solutions" if (ROOT / "solutions").is_dir() else ROOT / "exercises"
            configured = run_quietly(["cmake", "-S", str(ROOT), "-B", str(build_dir), "-G", "Ninja",
                                      "-DSCALEBOOK_GRADING=ON", f"-DSCALEBOOK_TRACK_DIR={track}",
                                      "-DSCALEBOOK_BUILD_DOCS=OFF"])
            if configured.returncode != 0:
                raise GradingError("configuring the grading kit failed:\n" + configured.stdout[-3000:])
        # lib's archives: a chapter's worker links its base and earlier chapters' answers only.
        targets = ["scalebook_lib_archives", "scalebook_remote_server"]
        for chapter in chapters:
            targets += [f"{chapter.target}_checks_remote", f"{chapter.target}_serve"]
        built = run_quietly(["cmake", "--build", str(build_dir), "--target", *targets])
        if built.returncode != 0:
            raise GradingError("building the grading kit from this tree failed:\n" + built.stdout[-3000:])


def compile_native(build_dir: Path, fallback: Path, name: str) -> Path:
    """native/NAME.cpp (check, the step that runs each check, or box, the worker box's first
    process), compiled once per version of it (in FALLBACK when this user may not write BUILD_DIR)."""
    source = NATIVE / f"{name}.cpp"
    folder = build_dir if os.access(build_dir, os.W_OK) else fallback
    binary = folder / f"grade_{name}-{hashlib.sha256(source.read_bytes()).hexdigest()[:16]}"
    if not binary.exists():
        # Linked statically where the C++ library's archive is installed: CTest starts the step once
        # per check, and a static one starts in two thirds of the time (no shared libraries to load).
        # A name of this process's own: two grading runs may compile the same new version at once.
        partial = f"{binary}.{os.getpid()}.part"
        flags = ["c++", "-std=c++20", "-O2", "-Wall", "-Wextra", "-o", partial, str(source)]
        built = run_quietly([*flags, "-static"])
        if built.returncode != 0:
            built = run_quietly(flags)
        if built.returncode != 0:
            raise GradingError(f"compiling {source.relative_to(ROOT)} failed:\n" + built.stdout[-3000:])
        Path(partial).replace(binary)
    return binary


def contract_functions(chapter: Chapter) -> dict[str, list[str]]:
    """Exercise id -> the contract functions it defines (chapters/NN/remote.def)."""
    functions: dict[str, list[str]] = {}
    for match in re.finditer(r"^SCALEBOOK_REMOTE\(\s*([0-9.]+)\s*,\s*(\w+)",
                             (ROOT / "chapters" / chapter.folder / "remote.def").read_text(), re.M):
        functions.setdefault(match.group(1), []).append(match.group(2))
    return functions


def make_pch(kit: dict, kit_dir: Path, build_dir: Path, settings: Settings) -> None:
    """Precompiles the headers every exercise file starts with, in a box (a precompiled header must
    be made with the paths the compiles will see), once per version of lib's headers. A uid box
    sees no bound /kit: its compiles read the kit's public view (public_view()), made here."""
    (kit_dir / "pch" / "pch.hpp").write_text("".join(f"#include <{h}>\n" for h in PCH_HEADERS))
    digest = hashlib.sha256(kit["compiler"].encode())
    for path in sorted((kit_dir / "include").rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(kit_dir)).encode() + b"\0" + path.read_bytes())
    if sandbox.is_uid(kit["sandbox"]):
        kit["view"] = str(public_view(kit, kit_dir, build_dir, settings, digest))
        return
    cached = build_dir / f"pch-{digest.hexdigest()[:16]}.gch"
    if cached.exists():
        shutil.copy2(cached, kit_dir / "pch" / "pch.hpp.gch")
        return
    limits = sandbox.Limits(**dict(settings.limits.as_dict(), cpu_seconds=PCH_SECONDS, file_mb=1024))
    argv = [kit["compiler"], "-std=c++20", "-O1", "-I/kit/include", "-isystem", kit["eigen"],
            "-x", "c++-header", "/kit/pch/pch.hpp", "-o", "/kit/pch/pch.hpp.gch"]
    command = sandbox.write_arguments(kit_dir / "pch.box", sandbox.box_arguments(
        [("rw", kit_dir / "pch", "/kit/pch"), ("ro", kit_dir / "include", "/kit/include")], argv, limits))
    code, output = sandbox.run(kit_dir / "pch.box", command, limits, PCH_SECONDS)
    if code != 0:
        raise GradingError(f"precompiling the exercises' headers failed: {output[-2000:].decode(errors='replace')}")
    (kit_dir / "pch.box").unlink()
    if os.access(build_dir, os.W_OK):
        atomic_copy(kit_dir / "pch" / "pch.hpp.gch", cached)


def public_view(kit: dict, kit_dir: Path, build_dir: Path, settings: Settings, digest) -> Path:
    """What a uid box's compile reads of the kit, where every box may read it and none may write
    it: sandbox.BOX_BASE/kit-HASH (root's; folders 0755, files 0644) with lib's headers, the
    chapters' headers and the precompiled header, made there in a uid box so that its paths are
    the compiles' own. Nothing in it is secret (the student edition has all of it); the kit's
    checks, hidden checks, tables and limits stay in the kit, which no box can reach."""
    for path in sorted((kit_dir / "chapters").rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(kit_dir)).encode() + b"\0" + path.read_bytes())
    digest.update(kit["sandbox"].encode())
    base = sandbox.box_base()
    view = base / f"kit-{digest.hexdigest()[:24]}"
    with open(base / f"{view.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (view / "complete").exists():
            return view
        shutil.rmtree(view, ignore_errors=True)
        view.mkdir(mode=0o755)
        shutil.copytree(kit_dir / "include", view / "include")
        shutil.copytree(kit_dir / "chapters", view / "chapters")
        (view / "pch").mkdir()
        shutil.copy2(kit_dir / "pch" / "pch.hpp", view / "pch" / "pch.hpp")
        cached = build_dir / f"pch-{view.name}.gch"
        if cached.exists():
            shutil.copy2(cached, view / "pch" / "pch.hpp.gch")
        else:
            limits = sandbox.Limits(**dict(settings.limits.as_dict(), cpu_seconds=PCH_SECONDS, file_mb=1024))
            argv = [kit["compiler"], "-std=c++20", "-O1", f"-I{view}/include", "-isystem", kit["eigen"],
                    "-x", "c++-header", f"{view}/pch/pch.hpp", "-o", "/out/pch.hpp.gch"]
            box = sandbox.Box(kit["sandbox"], kit_dir)
            with sandbox.Staging(copy=True) as staging:
                binds = [("rw", staging.folder("out"), "/out"), ("pub", view, "/view")]
                command = box.command(staging.path / "box", binds, argv, limits)
                code, output = box.run(staging.path / "box", command, limits, PCH_SECONDS)
                if code != 0:
                    raise GradingError("precompiling the exercises' headers failed: "
                                       f"{output[-2000:].decode(errors='replace')}")
                shutil.copyfile(staging.path / "out" / "pch.hpp.gch", view / "pch" / "pch.hpp.gch")
            if os.access(build_dir, os.W_OK):
                atomic_copy(view / "pch" / "pch.hpp.gch", cached)
        for path in [view, *view.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        (view / "complete").write_text("")
        (view / "complete").chmod(0o644)
    return view


def refuse_exposed_secrets(kit: dict, chapters: list[Chapter], kit_dir: Path) -> None:
    """A uid box without Landlock may read any file every user may read: grading refuses where
    that includes the hidden checks, the solutions or the kit (chmod is the remedy, or a machine
    where Landlock can be used)."""
    if kit["sandbox"] != sandbox.UID:
        return
    secrets = [ROOT / "chapters" / c.folder / c.hidden_checks for c in chapters if c.hidden_checks]
    secrets += [p for p in sorted((ROOT / "solutions").rglob("*.cpp"))[:1]] if (ROOT / "solutions").is_dir() else []
    secrets.append(kit_dir / "settings.json")
    exposed = sandbox.readable_by_a_box([p for p in secrets if p.exists()])
    if exposed:
        raise GradingError(
            "the sandbox here is a uid box without Landlock (no user namespaces, and Landlock cannot be used), and "
            f"a submission could read {exposed[0]}: every user may. Make the tree and the grading folder yours "
            f"alone (chmod -R go-rwx {ROOT} and the --out folder's parents), or grade where bubblewrap or "
            "Landlock can be used")


def copy_chapter(built: dict, chapter: Chapter, kit_dir: Path, server: str,
                 checks_table: list[tuple[str, bool]], kit: dict) -> None:
    """One chapter's trusted checks process, worker server, headers and lib archives into the kit,
    and its rows of kit.json."""
    info = built["chapters"][chapter.folder]
    binary = Path(info["checks"]).name
    shutil.copy2(info["checks"], kit_dir / "checks" / binary)
    shutil.copy2(info["serve"], kit_dir / "serve" / f"{chapter.folder}.o")
    (kit_dir / "chapters" / chapter.folder).mkdir()
    for header in sorted(Path(info["dir"]).glob("*.hpp")):
        shutil.copy2(header, kit_dir / "chapters" / chapter.folder / header.name)
    libs = []
    for archive in info["libs"] or [built["files"]["lib"]]:
        if not (kit_dir / "lib" / Path(archive).name).exists():
            shutil.copy2(archive, kit_dir / "lib" / Path(archive).name)
        libs.append(Path(archive).name)
    kit["chapters"][chapter.folder] = {"number": chapter.number, "exercises": chapter.exercises,
                                       "sources": list(chapter.sources), "server": server, "libs": libs,
                                       "functions": contract_functions(chapter)}
    for line, hidden in checks_table:
        folder, exercise, points, key, name = line.split("\t")
        if folder == chapter.folder:
            kit["checks"][key] = {"chapter": folder, "exercise": exercise, "points": int(points),
                                  "name": name, "binary": binary, **({"hidden": True} if hidden else {})}


def write_settings(kit_dir: Path, settings: Settings) -> None:
    """The run's limits, as JSON for the Python steps and KEY=VALUE lines for the C++ ones."""
    write_json(kit_dir / "settings.json", settings.as_dict())
    flat = {**{k: v for k, v in settings.as_dict().items() if k != "limits"}, **settings.limits.as_dict()}
    (kit_dir / "settings.env").write_text("".join(f"{k}={v}\n" for k, v in flat.items()))


def sandbox_key(which: str) -> str:
    """The sandbox's part of the kit's fingerprint and of every step's key: a verdict depends on the
    box it was reached in (bubblewrap with or without cgroups, the uid box with or without Landlock)."""
    if which == sandbox.NAMESPACES:
        return "whole-box cgroups" if sandbox.cgroups_possible() else "per-box namespaces"
    return f"uid box ({which})"


def kit_fingerprint(kit: dict, kit_dir: Path) -> str:
    """Every input of the kit's verdicts: compiler, sandbox mode, tables and every file but the PCH."""
    digest = hashlib.sha256()
    compiler = subprocess.run([kit["compiler"], "--version"], capture_output=True, text=True).stdout
    digest.update(compiler.encode())
    digest.update(sandbox_key(kit["sandbox"]).encode())
    digest.update(json.dumps(kit, sort_keys=True).encode())
    for path in sorted(kit_dir.rglob("*")):
        if path.is_file() and path.suffix != ".gch":  # the PCH follows from the headers and flags
            digest.update(str(path.relative_to(kit_dir)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def assemble_kit(built: dict, build_dir: Path, chapters: list[Chapter], settings: Settings, kit_dir: Path) -> dict:
    """Copies the trusted half into the CTest tree (DIR/ctest/kit), so that a later ctest re-run
    uses the same checks processes, libraries, headers, limits and steps whatever happens to this
    tree; precompiles the exercises' headers there in a box; returns kit.json. The steps are this
    package, copied whole (KIT/tools/scalebook), and run from there."""
    if kit_dir.exists():
        shutil.rmtree(kit_dir)
    for folder in ("checks", "serve", "lib", "chapters", "pch", "bin"):
        (kit_dir / folder).mkdir(parents=True)
    shutil.copytree(TOOLS / "scalebook", kit_dir / "tools" / "scalebook",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(built["files"]["include"], kit_dir / "include")
    server = Path(built["files"]["server"])
    shutil.copy2(server, kit_dir / "lib" / server.name)
    kit = {"compiler": os.path.realpath(built["files"]["compiler"]),  # /usr/bin/c++ goes through /etc
           "eigen": built["files"]["eigen"], "chapters": {}, "checks": {}, "settings": settings.as_dict(),
           "sandbox": sandbox.mode()}
    # The visible checks, then the hidden ones (the same binary runs both; see cmake/Scalebook.cmake).
    hidden_table = build_dir / "hidden_checks.tsv"
    checks_table = [(line, False) for line in (build_dir / "checks.tsv").read_text().splitlines()]
    if hidden_table.exists():
        checks_table += [(line, True) for line in hidden_table.read_text().splitlines()]
    for chapter in chapters:
        copy_chapter(built, chapter, kit_dir, server.name, checks_table, kit)
    write_no_fork_filter(kit_dir / "nofork.bpf")
    write_settings(kit_dir, settings)
    shutil.copy2(compile_native(build_dir, kit_dir.parent, "check"), kit_dir / "bin" / "grade_check")
    shutil.copy2(compile_native(build_dir, kit_dir.parent, "box"), kit_dir / "bin" / "grade_box")
    if sandbox.is_uid(kit["sandbox"]):
        write_uid_box_filter(kit_dir / sandbox.UID_FILTER)
        write_uid_box_filter(kit_dir / sandbox.UID_WORKER_FILTER, worker=True)
        shutil.copy2(compile_native(build_dir, kit_dir.parent, "uidbox"), kit_dir / "bin" / sandbox.UID_HELPER)
        refuse_exposed_secrets(kit, chapters, kit_dir)
    make_pch(kit, kit_dir, build_dir, settings)
    add_keys(kit, kit_dir, build_dir, built, chapters, settings)
    kit["fingerprint"] = kit_fingerprint(kit, kit_dir)
    write_json(kit_dir / "kit.json", kit)
    return kit


def tool_version(argv: list[str]) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    return done.stdout + done.stderr


def add_keys(kit: dict, kit_dir: Path, build_dir: Path, built: dict, chapters: list[Chapter],
             settings: Settings) -> None:
    """What each step's outcome depends on, as kit["keys"] (grading/inputs.py says what each covers):
    per chapter the compile and link fingerprints, the run fingerprint, and each check's identity."""
    digests = inputs.Digests(build_dir / "digests.json" if os.access(build_dir, os.W_OK) else None)
    tools = inputs.tree_digest(kit_dir / "tools", lambda p: "__pycache__" in p.parts, digests)
    mode = sandbox_key(kit["sandbox"])
    values = settings.as_dict()
    compile_common = inputs.digest(
        "compile", tool_version([kit["compiler"], "--version"]), tools, mode,
        inputs.tree_digest(Path(kit["eigen"]), digests=digests), inputs.tree_digest(kit_dir / "include", digests=digests),
        (kit_dir / "pch" / "pch.hpp").read_text(),
        inputs.settings_part(values, ("compile_seconds", "compile_budget_seconds", "limits")))
    gold = tool_version([kit["compiler"], "-fuse-ld=gold", "-Wl,--version"]).split("\n")[0]
    keys: dict = {"compile": {}, "link": {}, "identities": {}}
    for chapter in chapters:
        info = kit["chapters"][chapter.folder]
        keys["compile"][chapter.folder] = inputs.digest(
            compile_common, chapter.folder, str(chapter.number),
            inputs.tree_digest(kit_dir / "chapters" / chapter.folder, digests=digests))
        linked = [kit_dir / "serve" / f"{chapter.folder}.o", kit_dir / "lib" / info["server"],
                  *[kit_dir / "lib" / archive for archive in info["libs"]]]
        keys["link"][chapter.folder] = inputs.digest("link", keys["compile"][chapter.folder], gold,
                                                     inputs.files_digest(linked, kit_dir, digests))
        files = ["checks.cpp"] + ([chapter.hidden_checks] if chapter.hidden_checks else [])
        identities, how = inputs.check_identities(
            build_dir, Path(built["chapters"][chapter.folder]["checks"]), ROOT / "chapters" / chapter.folder,
            files, ROOT, digests)
        keys["identities"][chapter.folder] = how
        for check in kit["checks"].values():
            if check["chapter"] == chapter.folder:
                check["identity"] = identities[check["name"]]
    uid_files = [kit_dir / "bin" / sandbox.UID_HELPER, kit_dir / sandbox.UID_WORKER_FILTER] \
        if sandbox.is_uid(kit["sandbox"]) else []
    keys["run"] = inputs.digest("run", tools, mode, tool_version(["bwrap", "--version"]),
                                inputs.settings_part(values, tuple(values)),
                                inputs.files_digest([kit_dir / "bin" / "grade_check", kit_dir / "bin" / "grade_box",
                                                     kit_dir / "nofork.bpf", *uid_files], kit_dir, digests))
    kit["keys"] = keys
    digests.save()
