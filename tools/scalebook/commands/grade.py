#!/usr/bin/env python3
"""Grade scalebook submissions: ./workbook grade [options] SUBMISSION...

A submission is a folder: a student's whole copy of the workbook, or just its exercises/ folder.
Only the exercise files named by this (the instructor's) tree are taken from it, and only when they
are regular files. Grading is a CTest run: this command writes a CTest tree in DIR in which every
(submission, check) pair is one test (`alice/04-causal-masking/4.2 masked weights are exactly zero`,
labelled `alice`, `ch04` and `ex4.2`), each submission's compile and link steps are fixtures the
checks require, and then runs it with ctest, one submission after another (--jobs at once). The
verdict never comes from the submission's process: this tree's checks run in a trusted process
(chNN_checks_remote, never linked with student code) and call the student's functions in a worker
that is compiled, linked and run in bubblewrap boxes (tools/scalebook/sandbox.py). From CTest's
results it writes DIR/NAME/report.json and DIR/NAME/junit.xml as each submission finishes, and
DIR/grades.csv after each one, so that a stopped run keeps what it graded and --resume goes on.
Afterwards `ctest --test-dir DIR -R 'alice/.*4\\.2' --output-on-failure` re-runs one check.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import csv
import datetime
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from scalebook import sandbox  # noqa: E402
from scalebook.chapters import Chapter, UsageError, all_chapters, hints_of, resolve_chapter  # noqa: E402
from scalebook.grading import (Settings, is_error_path, read_json, safe_text, write_json)  # noqa: E402

SOURCE_LIMIT = 1 << 20          # an exercise file larger than 1 MiB is refused
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
RESERVED = {"grades.csv", "grading", "kit", "build", "ctest", "objects", "testing", "index.html",
            "ctesttestfile.cmake"}
PCH_HEADERS = ["scalebook/core.hpp", "scalebook/random.hpp", "cmath", "limits", "sstream", "string", "vector"]
STEP_FILES = ["grade_step.py", "scalebook/__init__.py", "scalebook/sandbox.py", "scalebook/grading.py",
              "scalebook/linking.py"]
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


# --- the trusted kit: built once from this tree, copied into the CTest tree ----------------------

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
            configured = run_quietly(["cmake", "-S", str(ROOT), "-B", str(build_dir), "-G", "Ninja",
                                      "-DSCALEBOOK_GRADING=ON", f"-DSCALEBOOK_TRACK_DIR={ROOT / 'solutions'}",
                                      "-DSCALEBOOK_BUILD_DOCS=OFF"])
            if configured.returncode != 0:
                raise RuntimeError("configuring the grading kit failed:\n" + configured.stdout[-3000:])
        # lib's archives: a chapter's worker links its base and earlier chapters' answers only.
        targets = ["scalebook_lib_archives", "scalebook_remote_server"]
        for chapter in chapters:
            targets += [f"{chapter.target}_checks_remote", f"{chapter.target}_serve"]
        built = run_quietly(["cmake", "--build", str(build_dir), "--target", *targets])
        if built.returncode != 0:
            raise RuntimeError("building the grading kit from this tree failed:\n" + built.stdout[-3000:])


def compile_check_step(build_dir: Path, fallback: Path, name: str = "grade_check") -> Path:
    """tools/NAME.cpp (grade_check, the step that runs each check, or grade_box, the worker box's
    first process), compiled once per version of it (in FALLBACK when this user may not write
    BUILD_DIR)."""
    source = ROOT / "tools" / f"{name}.cpp"
    folder = build_dir if os.access(build_dir, os.W_OK) else fallback
    binary = folder / f"{name}-{hashlib.sha256(source.read_bytes()).hexdigest()[:16]}"
    if not binary.exists():
        # Linked statically where the C++ library's archive is installed: CTest starts the step once
        # per check, and a static one starts in two thirds of the time (no shared libraries to load).
        flags = ["c++", "-std=c++20", "-O2", "-Wall", "-Wextra", "-o", f"{binary}.part", str(source)]
        built = run_quietly([*flags, "-static"])
        if built.returncode != 0:
            built = run_quietly(flags)
        if built.returncode != 0:
            raise RuntimeError("compiling tools/grade_check.cpp failed:\n" + built.stdout[-3000:])
        Path(f"{binary}.part").replace(binary)
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
    be made with the paths the compiles will see), once per version of lib's headers."""
    (kit_dir / "pch" / "pch.hpp").write_text("".join(f"#include <{h}>\n" for h in PCH_HEADERS))
    digest = hashlib.sha256(kit["compiler"].encode())
    for path in sorted((kit_dir / "include").rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(kit_dir)).encode() + b"\0" + path.read_bytes())
    cached = build_dir / f"pch-{digest.hexdigest()[:16]}.gch"
    if cached.exists():
        shutil.copy2(cached, kit_dir / "pch" / "pch.hpp.gch")
        return
    limits = sandbox.Limits(**dict(settings.limits.as_dict(), cpu_seconds=300, file_mb=1024))
    argv = [kit["compiler"], "-std=c++20", "-O1", "-I/kit/include", "-isystem", kit["eigen"],
            "-x", "c++-header", "/kit/pch/pch.hpp", "-o", "/kit/pch/pch.hpp.gch"]
    command = sandbox.write_arguments(kit_dir / "pch.box", sandbox.box_arguments(
        [("rw", kit_dir / "pch", "/kit/pch"), ("ro", kit_dir / "include", "/kit/include")], argv, limits))
    code, output = sandbox.run(kit_dir / "pch.box", command, limits, 300)
    if code != 0:
        raise RuntimeError(f"precompiling the exercises' headers failed: {output[-2000:].decode(errors='replace')}")
    (kit_dir / "pch.box").unlink()
    if os.access(build_dir, os.W_OK):
        shutil.copy2(kit_dir / "pch" / "pch.hpp.gch", f"{cached}.part")
        Path(f"{cached}.part").replace(cached)


def assemble_kit(built: dict, build_dir: Path, chapters: list[Chapter], settings: Settings, kit_dir: Path) -> dict:
    """Copies the trusted half into the CTest tree (DIR/ctest/kit), so that a later ctest re-run
    uses the same checks processes, libraries, headers, limits and steps whatever happens to this
    tree; precompiles the exercises' headers there in a box; returns kit.json."""
    if kit_dir.exists():
        shutil.rmtree(kit_dir)
    for folder in ("checks", "serve", "lib", "chapters", "tools/scalebook", "pch"):
        (kit_dir / folder).mkdir(parents=True)
    for name in STEP_FILES:
        shutil.copy2(ROOT / "tools" / name, kit_dir / "tools" / name)
    shutil.copytree(built["files"]["include"], kit_dir / "include")
    server = Path(built["files"]["server"])
    shutil.copy2(server, kit_dir / "lib" / server.name)
    kit = {"compiler": os.path.realpath(built["files"]["compiler"]),  # /usr/bin/c++ goes through /etc
           "eigen": built["files"]["eigen"], "chapters": {}, "checks": {}}
    checks_table = (build_dir / "checks.tsv").read_text().splitlines()
    for chapter in chapters:
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
                                           "sources": list(chapter.sources), "server": server.name, "libs": libs,
                                           "functions": contract_functions(chapter)}
        for line in checks_table:
            folder, exercise, points, key, name = line.split("\t")
            if folder == chapter.folder:
                kit["checks"][key] = {"chapter": folder, "exercise": exercise, "points": int(points),
                                      "name": name, "binary": binary}
    sandbox.write_no_fork_filter(kit_dir / "nofork.bpf")
    write_json(kit_dir / "settings.json", settings.as_dict())
    flat = {**{k: v for k, v in settings.as_dict().items() if k != "limits"}, **settings.limits.as_dict()}
    (kit_dir / "settings.env").write_text("".join(f"{k}={v}\n" for k, v in flat.items()))
    (kit_dir / "bin").mkdir()
    shutil.copy2(compile_check_step(build_dir, kit_dir.parent), kit_dir / "bin" / "grade_check")
    shutil.copy2(compile_check_step(build_dir, kit_dir.parent, "grade_box"), kit_dir / "bin" / "grade_box")
    make_pch(kit, kit_dir, build_dir, settings)
    digest = hashlib.sha256()
    compiler = subprocess.run([kit["compiler"], "--version"], capture_output=True, text=True).stdout
    digest.update(compiler.encode())
    digest.update(("whole-box cgroups" if sandbox.cgroups_possible() else "per-box namespaces").encode())
    digest.update(json.dumps(kit, sort_keys=True).encode())
    for path in sorted(kit_dir.rglob("*")):
        if path.is_file() and path.suffix != ".gch":  # the PCH follows from the headers and flags
            digest.update(str(path.relative_to(kit_dir)).encode() + b"\0" + path.read_bytes())
    kit["fingerprint"] = digest.hexdigest()
    write_json(kit_dir / "kit.json", kit)
    return kit


# --- intake -------------------------------------------------------------------------------------

def exercises_folder(submission: Path) -> Path:
    inner = submission / "exercises"
    return inner if inner.is_dir() and not inner.is_symlink() else submission


def take_sources(submission: Path, into: Path | None, chapters: list[Chapter]) -> tuple[dict[str, str], list[str]]:
    """Copies the exercise files this tree names out of the submission (INTO None: only reads
    them): regular files only (no symlinks, no devices, no folders in their place), at most 1 MiB
    each. Returns {relative path: sha256} and the list of refusals."""
    taken, refused = {}, []
    exercises = exercises_folder(submission)
    for chapter in chapters:
        folder = exercises / chapter.folder
        for source in chapter.sources:
            path = folder / source
            try:
                info = os.lstat(path)
                folder_info = os.lstat(folder)
            except OSError:
                continue  # missing: that exercise does not compile
            if stat.S_ISLNK(folder_info.st_mode) or stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
                refused.append(f"{chapter.folder}/{source}: not a regular file (symlinks are refused)")
                continue
            if info.st_size > SOURCE_LIMIT:
                refused.append(f"{chapter.folder}/{source}: larger than {SOURCE_LIMIT >> 20} MiB")
                continue
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as handle:
                data = handle.read(SOURCE_LIMIT + 1)
            if into is not None:
                (into / chapter.folder).mkdir(parents=True, exist_ok=True)
                (into / chapter.folder / source).write_bytes(data)
            taken[f"{chapter.folder}/{source}"] = hashlib.sha256(data).hexdigest()
    return taken, refused


def fingerprint(sources: dict[str, str], kit: dict) -> str:
    """Every input of a verdict: the kit (checks, lib, server, headers, steps, compiler, sandbox
    mode), the settings (copied into the kit) and the submission's files."""
    digest = hashlib.sha256(kit["fingerprint"].encode())
    for path, sha in sorted(sources.items()):
        digest.update(f"{path}\t{sha}\n".encode())
    return digest.hexdigest()


# --- the CTest tree -----------------------------------------------------------------------------

def bracket(text: str) -> str:
    """A CMake bracket argument: no escapes needed (names never hold "]==]")."""
    return f"[==[{text}]==]"


def write_submission_tests(tree: Path, name: str, kit: dict, chapters: list[Chapter]) -> None:
    step = [sys.executable, "-I", "-S", str(tree / "kit" / "tools" / "grade_step.py")]
    check_step = str(tree / "kit" / "bin" / "grade_check")
    folder = tree / name
    lines = [f"# The grading of {name}: written by ./workbook grade; run with ctest.\n"]

    def test(test_name: str, argv: list[str], properties: dict[str, str]) -> None:
        lines.append(f"add_test({bracket(test_name)} {' '.join(bracket(a) for a in argv)})\n")
        props = " ".join(f"{key} {bracket(value)}" for key, value in properties.items())
        lines.append(f"set_tests_properties({bracket(test_name)} PROPERTIES {props})\n")

    test(f"{name}/start", [check_step, "start", str(folder)], {"FIXTURES_SETUP": name, "LABELS": name})
    for chapter in chapters:
        fixture = f"{name}/{chapter.folder}"
        test(f"{name}/{chapter.folder}/build", [*step, "build", str(folder), chapter.folder],
             {"FIXTURES_SETUP": fixture, "FIXTURES_REQUIRED": name, "LABELS": f"{name};{chapter.target}"})
        checks = {key: check for key, check in kit["checks"].items() if check["chapter"] == chapter.folder}
        if checks:
            # The chapter's checks in one trusted process, under ./workbook grade only (SCALEBOOK_BATCH):
            # a check takes its verdict from it, or runs alone where it has none, or under ctest -R.
            binary = str(tree / "kit" / "checks" / next(iter(checks.values()))["binary"])
            test(f"{name}/{chapter.folder}/batch", [check_step, "batch", str(folder), chapter.folder, binary],
                 {"FIXTURES_SETUP": f"{fixture}/batch", "FIXTURES_REQUIRED": f"{name};{fixture}",
                  "LABELS": f"{name};{chapter.target}"})
        for key, check in checks.items():
            binary = str(tree / "kit" / "checks" / check["binary"])
            test(f"{name}/{chapter.folder}/{check['name']}",
                 [check_step, "check", str(folder), chapter.folder, key, check["name"], check["exercise"], binary],
                 {"FIXTURES_REQUIRED": f"{name};{fixture};{fixture}/batch",
                  "LABELS": f"{name};{chapter.target};ex{check['exercise']}"})
    (folder / "CTestTestfile.cmake").write_text("".join(lines))


def write_tree(out_dir: Path, names: list[str]) -> None:
    (out_dir / "CTestTestfile.cmake").write_text(
        "# A class's grading as a CTest tree (./workbook grade): ctest --test-dir THIS -R 'alice/.*4\\.2'\n"
        'subdirs("ctest")\n')
    (out_dir / "ctest" / "CTestTestfile.cmake").write_text(
        "".join(f"subdirs({bracket(n)})\n" for n in sorted(names)))


def ctest_outcomes(junit: Path) -> dict[str, str]:
    """Test name -> CTest's word for it: passed, failed, timeout, notrun."""
    outcomes = {}
    try:
        root = ET.parse(junit).getroot()
    except (OSError, ET.ParseError):
        return outcomes
    for case in root.iter("testcase"):
        status = case.get("status", "")
        failure = case.find("failure")
        if status == "run" and failure is None:
            outcomes[case.get("name", "")] = "passed"
        elif status in ("notrun", "disabled"):
            outcomes[case.get("name", "")] = "notrun"
        elif failure is not None and "Timeout" in (failure.get("message") or ""):
            outcomes[case.get("name", "")] = "timeout"
        else:
            outcomes[case.get("name", "")] = "failed"
    return outcomes


# --- one submission -----------------------------------------------------------------------------

def hint_of(chapter: Chapter, exercise: str, cache: dict) -> str | None:
    if (chapter.folder, exercise) not in cache:
        try:
            tiers = hints_of(chapter, exercise).tiers
            cache[(chapter.folder, exercise)] = tiers[0] if tiers else None
        except OSError:
            cache[(chapter.folder, exercise)] = None
    return cache[(chapter.folder, exercise)]


def grade(name: str, tree: Path, out_dir: Path, kit: dict, chapters: list[Chapter], sources: dict[str, str],
          refused_files: list[str], commit: str, hints: dict, parallel: int = 1) -> dict:
    """Runs NAME's tests with ctest (PARALLEL at once: the cores no classmate is using) and writes
    its report from CTest's results."""
    start = time.monotonic()
    folder = tree / name
    junit = folder / "ctest-junit.xml"
    junit.unlink(missing_ok=True)
    shutil.rmtree(folder / "results", ignore_errors=True)
    result = run_quietly(["ctest", "--test-dir", str(folder), "--output-junit", str(junit), "--no-tests=error",
                          "-j", str(parallel)], env=dict(os.environ, SCALEBOOK_BATCH="1"))
    outcomes = ctest_outcomes(junit)
    if not outcomes:
        raise RuntimeError(f"ctest gave no results for {name}: {result.stdout[-1000:]}")
    tests = []
    for key, check in kit["checks"].items():
        chapter = next((c for c in chapters if c.folder == check["chapter"]), None)
        if chapter is None:
            continue
        test_name = f"{name}/{chapter.folder}/{check['name']}"
        outcome = outcomes.get(test_name, "notrun")
        verdict = read_verdict(folder / "results" / f"{key}.tsv")
        if outcome == "timeout":
            status, message = "timed_out", "timed_out: ctest's --timeout stopped the check"
        elif verdict is None:
            status, message = "not_run", "not run: its compile step did not finish"
        else:
            status, message = verdict
            if status == "passed" and outcome != "passed":
                status, message = "failed", "ctest did not see this check pass"
        entry = {"name": check["name"], "chapter": chapter.folder, "exercise": check["exercise"],
                 "status": status, "points": 0, "max_points": check["points"], "message": safe_text(message),
                 "file": f"{chapter.folder}/{chapter.source_of(check['exercise'])}"}
        compiled = read_json(folder / "build" / chapter.folder / f"{check['exercise']}.json") or {}
        if compiled.get("line"):
            entry.update(line=compiled["line"], source_line=compiled.get("source_line", ""))
        hint = hint_of(chapter, check["exercise"], hints)
        if hint and status != "passed":
            entry["hint"] = hint
        tests.append(entry)
    award_points(tests)
    report = {
        "submission": name,
        "score": sum(t["points"] for t in tests),
        "max_score": sum(t["max_points"] for t in tests),
        "seconds": round(time.monotonic() - start, 2),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": commit,
        "refused_files": refused_files,
        "sandbox": sandbox_description(),
        "fingerprint": fingerprint(sources, kit),
        "tests": tests,
    }
    write_report(report, out_dir)
    return report


def read_verdict(path: Path) -> tuple[str, str] | None:
    """(status, message) from a check step's results (tools/grade_check.cpp): "CODE<TAB>STATUS<TAB>
    MESSAGE", the status already mapped from the transport's CODE."""
    try:
        code, status, message = path.read_text(errors="replace").rstrip("\n").split("\t", 2)
    except (OSError, ValueError):
        return None
    from scalebook.grading import STATUSES
    return (status, message) if status in STATUSES else ("failed", message)


def award_points(tests: list[dict]) -> None:
    """A passed check earns its points; an error-path check (its name says "throw" or "throws")
    only when every other check of the same exercise passed too: throwing the right exception for
    bad input is worth something only in an exercise that also computes the right results."""
    by_exercise: dict[str, list[dict]] = {}
    for test in tests:
        by_exercise.setdefault(test["exercise"], []).append(test)
    for test in tests:
        if test["status"] != "passed":
            continue
        if is_error_path(test["name"]):
            others = [t for t in by_exercise[test["exercise"]] if not is_error_path(t["name"])]
            if not others or any(t["status"] != "passed" for t in others):
                test["message"] = ("passed, but an error-path check pays only when every other check of "
                                   f"{test['exercise']} passes")
                continue
        test["points"] = test["max_points"]


def sandbox_description() -> str:
    if sandbox.cgroups_possible():
        return ("bubblewrap; whole-box limits by cgroups (memory with tmpfs, processes, one CPU); the worker "
                "cannot fork (seccomp)")
    return ("bubblewrap; no cgroups (not root): the worker cannot fork (seccomp), so its address-space limit is "
            "its memory and it uses one CPU; compile boxes count their processes in their own user namespace")


def write_report(report: dict, out_dir: Path) -> None:
    target = out_dir / report["submission"]
    target.mkdir(parents=True, exist_ok=True)
    write_junit(report, target / "junit.xml.part")
    (target / "junit.xml.part").replace(target / "junit.xml")
    write_json(target / "report.json", report)  # complete or absent, never half written


def refused_report(name: str, reason: str, maximum: int, commit: str) -> dict:
    return {"submission": name, "score": 0, "max_score": maximum, "seconds": 0,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "commit": commit,
            "refused_files": [], "refused": safe_text(reason), "sandbox": sandbox_description(), "fingerprint": "",
            "tests": []}


def write_junit(report: dict, path: Path) -> None:
    """JUnit for an LMS. Every string is safe_text already (no character XML 1.0 cannot hold)."""
    errors = ("crashed", "timed_out", "compile_error", "not_run")
    suite = ET.Element("testsuite", name=report["submission"], tests=str(len(report["tests"])),
                       failures=str(sum(t["status"] == "failed" for t in report["tests"])),
                       errors=str(sum(t["status"] in errors for t in report["tests"])),
                       time=str(report["seconds"]))
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="score", value=str(report["score"]))
    ET.SubElement(properties, "property", name="max_score", value=str(report["max_score"]))
    for test in report["tests"]:
        case = ET.SubElement(suite, "testcase", classname=f"{test['chapter']}.{test['exercise']}",
                             name=test["name"])
        case_properties = ET.SubElement(case, "properties")
        ET.SubElement(case_properties, "property", name="points", value=str(test["points"]))
        ET.SubElement(case_properties, "property", name="max_points", value=str(test["max_points"]))
        if test["status"] == "failed":
            ET.SubElement(case, "failure", message=safe_text(test["message"]), type="failed")
        elif test["status"] != "passed":
            ET.SubElement(case, "error", message=safe_text(test["message"]), type=test["status"])
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)


def safe_cell(value) -> str:
    """A spreadsheet never evaluates a cell: formula-like text gets a leading apostrophe."""
    text = safe_text(str(value), 1000)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def write_csv(reports: list[dict], path: Path, chapters: list[Chapter]) -> None:
    names = [c.folder for c in chapters]
    temporary = path.with_suffix(".csv.part")
    with open(temporary, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["submission", *names, "total", "maximum", "note"])
        for report in sorted(reports, key=lambda r: r["submission"]):
            per_chapter = [sum(t["points"] for t in report["tests"] if t["chapter"] == c) for c in names]
            note = report.get("refused") or "; ".join(report.get("refused_files", []))
            writer.writerow([safe_cell(report["submission"]), *per_chapter, report["score"],
                             report["max_score"], safe_cell(note)])
    temporary.replace(path)


def pages_module():
    """tools/scalebook/pages.py (the feedback and class pages), where this tree has it."""
    try:
        from scalebook import pages
    except ImportError:
        return None
    return pages if hasattr(pages, "write_feedback") and hasattr(pages, "write_class_page") else None


def write_pages(reports: list[dict], out_dir: Path, chapters: list[Chapter], commit: str,
                feedback_for: list[dict]) -> None:
    """DIR/NAME/feedback.html for each report of FEEDBACK_FOR, and DIR/index.html for the class."""
    pages = pages_module()
    if pages is None:
        return
    try:  # the grades are written already: a page that cannot be made is said, never the run's end
        context = pages.make_context(ROOT, chapters, commit=commit)
        for report in feedback_for:
            if not report.get("refused"):
                pages.write_feedback(report, out_dir / report["submission"] / "feedback.html", context)
        pages.write_class_page(reports, out_dir / "index.html", context)
    except Exception as error:
        log(f"grade: the pages were not written: {safe_text(str(error))}")


# --- the command --------------------------------------------------------------------------------

LIMIT_OPTIONS = [  # option, Settings field, what it bounds
    ("--timeout", "call_seconds", "one call of a student's function"),
    ("--call-cpu", "call_cpu_seconds", "one call's CPU seconds"),
    ("--check-timeout", "check_seconds", "one check, all its calls together"),
    ("--submission-budget", "submission_seconds", "all checks of one submission"),
    ("--compile-timeout", "compile_seconds", "CPU seconds compiling one exercise file"),
    ("--compile-budget", "compile_budget_seconds", "CPU seconds compiling all files of one submission"),
]


def parse_arguments() -> argparse.Namespace:
    defaults = Settings()
    parser = argparse.ArgumentParser(prog="./workbook grade", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="grades", help="output folder (default: grades/)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="submissions graded at once, at most the cores (default: the cores)")
    parser.add_argument("--chapters", metavar="LIST",
                        help="grade only these chapters, e.g. 3,4 (an assignment); default: all")
    parser.add_argument("--resume", action="store_true",
                        help="skip submissions whose report was made from the same inputs (files, kit, limits)")
    limits = parser.add_argument_group("time limits and budgets (wall-clock seconds unless CPU is said)")
    for option, field, what in LIMIT_OPTIONS:
        default = getattr(defaults, field)
        limits.add_argument(option, type=int, default=default, metavar="S", dest=field,
                            help=f"{what} (default {default})")
    cluster = parser.add_argument_group("Slurm (tools/scalebook/slurm.py): DIR on a filesystem every node sees")
    cluster.add_argument("--slurm", nargs="?", const="", metavar="'SBATCH OPTIONS'",
                         help="grade as a Slurm job array, one task per submission, then a merge job; "
                              "the sbatch options in one quoted word, e.g. --slurm='--partition=short'")
    cluster.add_argument("--slurm-concurrency", type=int, default=16, metavar="N",
                         help="array tasks running at once (default 16)")
    cluster.add_argument("--wait", action="store_true", help="with --slurm: wait for the jobs to end")
    parser.add_argument("submissions", nargs="+", type=Path)
    args = parser.parse_args()
    numbers = {field: getattr(args, field) for _, field, _ in LIMIT_OPTIONS}
    if args.jobs < 1 or min(numbers.values()) < 1:
        parser.error("--jobs and every time limit must be at least 1")
    if args.slurm and not args.slurm.lstrip().startswith("-"):
        parser.error(f"--slurm takes sbatch's options in one word, e.g. --slurm='--partition=short', not "
                     f"'{args.slurm}' (give submissions after the options)")
    cores = len(os.sched_getaffinity(0))
    if args.jobs > cores:
        parser.error(f"--jobs {args.jobs} is more than the {cores} cores: each submission's box is given one "
                     "core, so that one submission cannot slow a classmate graded at the same time")
    args.chapter_list = all_chapters()
    if args.chapters:
        try:
            args.chapter_list = [resolve_chapter(c.strip()) for c in args.chapters.split(",")]
        except UsageError as error:
            parser.error(str(error))
    args.settings = Settings(**numbers)
    return args


def summary_line(report: dict, done: int, total: int) -> str:
    statuses: dict[str, int] = {}
    for t in report["tests"]:
        statuses[t["status"]] = statuses.get(t["status"], 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
    return (f"[{done}/{total}] {report['submission']}: {report['score']}/{report['max_score']} "
            f"({summary or report.get('refused', '')}) in {report['seconds']:.1f} s")


class Run:
    """One grading run's plan, kept in DIR/ctest/run.json so that the Slurm jobs (tasks and the
    merge) grade and merge exactly what was planned: the chapters, the commit, each submission's
    files and refusals, and the reports of submissions refused outright."""

    def __init__(self, out_dir: Path):
        self.out_dir = out_dir
        self.tree = out_dir / "ctest"
        data = read_json(self.tree / "run.json") or {}
        self.chapters = [c for c in all_chapters() if c.folder in data.get("chapters", [])]
        self.commit = data.get("commit", "unknown")
        self.submissions: dict[str, dict] = data.get("submissions", {})
        self.refused: list[str] = data.get("refused", [])

    def save(self) -> None:
        write_json(self.tree / "run.json", {"chapters": [c.folder for c in self.chapters], "commit": self.commit,
                                            "submissions": self.submissions, "refused": self.refused})

    def reports(self) -> list[dict]:
        found = []
        for name in [*self.submissions, *self.refused]:
            report = read_json(self.out_dir / name / "report.json")
            if report is not None:
                found.append(report)
        return found


def run_task(out_dir: Path, names: list[str]) -> int:
    """A Slurm array task (or anyone): grades NAMES of the tree planned in OUT_DIR."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, CHILDREN.stop)
    plan = Run(out_dir)
    kit = read_json(plan.tree / "kit" / "kit.json")
    failures = 0
    for name in names:
        entry = plan.submissions[name]
        try:
            report = grade(name, plan.tree, out_dir, kit, plan.chapters, entry["sources"], entry["refused_files"],
                           plan.commit, {})
        except Exception as error:
            failures += 1
            report = refused_report(name, f"grading failed: {error}", sum(c["points"] for c in kit["checks"].values()),
                                    plan.commit)
            write_report(report, out_dir)
        write_pages([report], out_dir, plan.chapters, plan.commit, [report])
        log(summary_line(report, names.index(name) + 1, len(names)))
    return 1 if failures else 0


def run_merge(out_dir: Path) -> int:
    """The job after every Slurm task: grades.csv and the class page from the reports written."""
    plan = Run(out_dir)
    reports = plan.reports()
    write_csv(reports, out_dir / "grades.csv", plan.chapters)
    write_pages(reports, out_dir, plan.chapters, plan.commit, [])
    missing = [n for n in plan.submissions if read_json(out_dir / n / "report.json") is None]
    log(f"merged {len(reports)} reports into {out_dir / 'grades.csv'}" +
        (f"; no report for {', '.join(missing)} (run again with --resume)" if missing else ""))
    return 1 if missing else 0


def submit_to_slurm(args, out_dir: Path, todo: list[str]) -> int:
    """The class as a Slurm job array, one task per submission (or per shard of them when the
    cluster's MaxArraySize is smaller), at most --slurm-concurrency at once, and a merge job
    after all of them. DIR must be on a filesystem every node sees at the same path."""
    from scalebook import slurm
    reason = slurm.available(cluster=False)
    if reason:
        print(f"grade: --slurm: {reason}", file=sys.stderr)
        return 2
    env = dict(os.environ)
    python = [sys.executable, str(Path(__file__).resolve())]
    if not todo:
        return run_merge(out_dir)
    limit = slurm.max_array_size(env) or len(todo)
    shards = max(1, -(-len(todo) // max(1, limit - 1)))
    groups = [todo[i::shards] for i in range(shards)]
    commands = [[*python, "--task", str(out_dir), *group] for group in groups]
    array, merge = slurm.submit_array(commands, env=env, workdir=out_dir, concurrency=args.slurm_concurrency,
                                      sbatch_options=shlex.split(args.slurm), then=[*python, "--merge", str(out_dir)])
    log(f"submitted {len(todo)} submissions as Slurm array job {array} ({len(commands)} tasks, at most "
        f"{args.slurm_concurrency} at once); job {merge} writes {out_dir / 'grades.csv'} after them")
    if not args.wait:
        return 0
    outcomes = slurm.wait([array, merge], env=env)
    failed = {job: o for job, o in outcomes.items() if getattr(o, "state", "") != "COMPLETED"}
    log(f"Slurm jobs ended: {len(outcomes) - len(failed)} completed" +
        (f", not completed: {', '.join(f'{j} {o.state}' for j, o in sorted(failed.items()))}" if failed else ""))
    return 1 if failed else 0


def main() -> int:
    if len(sys.argv) >= 3 and sys.argv[1] == "--task":  # a Slurm task: grade these names of DIR
        return run_task(Path(sys.argv[2]), sys.argv[3:])
    if len(sys.argv) == 3 and sys.argv[1] == "--merge":  # the Slurm merge job
        return run_merge(Path(sys.argv[2]))
    args = parse_arguments()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, CHILDREN.stop)
    try:
        sandbox.check_available()
    except sandbox.SandboxUnavailable as error:
        print(f"grade: {error}", file=sys.stderr)
        return 2
    sandbox.sweep_cgroups()
    chapters = args.chapter_list
    out_dir = Path(args.out).resolve()
    tree = out_dir / "ctest"
    tree.mkdir(parents=True, exist_ok=True)
    log("Building the grading kit (this tree's checks, once)...")
    build_dir = ROOT / "build" / "grading-kit"
    built = build_kit(build_dir, chapters)
    kit = assemble_kit(built, build_dir, chapters, args.settings, tree / "kit")
    plan = Run(out_dir)
    plan.chapters = chapters
    plan.commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                 text=True).stdout.strip() or "unknown"
    plan.submissions, plan.refused = {}, []
    commit = plan.commit
    maximum = sum(c["points"] for c in kit["checks"].values())

    reports, todo, seen = [], [], set()
    for submission in args.submissions:
        name = submission.name
        reason = None
        if not NAME.match(name) or name.lower() in RESERVED:
            reason = "refused: the folder's name must be letters, digits, '.', '_' or '-' and not a reserved name"
        elif submission.is_symlink() or not submission.is_dir():
            reason = "refused: not a folder (symlinks are refused)"
        elif name in seen:
            reason = "refused: another submission has the same name"
        else:
            resolved = submission.resolve()
            if out_dir == resolved or out_dir in resolved.parents or resolved in out_dir.parents:
                reason = "refused: the output folder is inside or around it"
        safe_name = name if NAME.match(name) and name.lower() not in RESERVED else \
            "refused-" + hashlib.sha256(name.encode()).hexdigest()[:8]
        seen.add(name)
        if reason:
            report = refused_report(safe_name, reason, maximum, commit)
            write_report(report, out_dir)
            reports.append(report)
            plan.refused.append(safe_name)
            log(f"{safe_text(name, 80)}: {reason}")
            continue
        folder = tree / name
        if args.resume:
            old = read_json(out_dir / name / "report.json")
            sources, _ = take_sources(submission, None, chapters)
            if old and old.get("fingerprint") == fingerprint(sources, kit):
                reports.append(old)
                plan.submissions[name] = {"sources": sources, "refused_files": old.get("refused_files", [])}
                if not (folder / "CTestTestfile.cmake").exists():
                    write_submission_tests(tree, name, kit, chapters)
                log(f"{name}: already graded ({old['score']}/{old['max_score']})")
                continue
        shutil.rmtree(folder / "src", ignore_errors=True)
        folder.mkdir(parents=True, exist_ok=True)
        sources, refused_files = take_sources(submission, folder / "src", chapters)
        write_submission_tests(tree, name, kit, chapters)
        plan.submissions[name] = {"sources": sources, "refused_files": refused_files}
        todo.append(name)
    write_tree(out_dir, list(plan.submissions))
    plan.save()
    if args.slurm is not None:
        return submit_to_slurm(args, out_dir, todo)

    started = time.monotonic()
    failures = 0
    hints: dict = {}
    # Each submission graded at once gets its share of the cores (a box uses one).
    parallel = max(1, len(os.sched_getaffinity(0)) // max(1, min(args.jobs, len(todo))))
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(grade, name, tree, out_dir, kit, chapters, plan.submissions[name]["sources"],
                               plan.submissions[name]["refused_files"], commit, hints, parallel): name
                   for name in todo}
        for done, future in enumerate(concurrent.futures.as_completed(futures), start=1):
            name = futures[future]
            try:
                report = future.result()
            except Exception as error:  # the grader failed for this one: one failed entry
                failures += 1
                report = refused_report(name, f"grading failed: {error}", maximum, commit)
                write_report(report, out_dir)
            reports.append(report)
            write_csv(reports, out_dir / "grades.csv", chapters)
            write_pages(reports, out_dir, chapters, commit, [report])
            log(summary_line(report, done, len(todo)))
    write_csv(reports, out_dir / "grades.csv", chapters)
    write_pages(reports, out_dir, chapters, commit, [] if todo else reports)
    log(f"graded {len(todo)} submissions in {time.monotonic() - started:.1f} s; {out_dir / 'grades.csv'}")
    log(f"re-run one check with: ctest --test-dir {out_dir} -R 'NAME/.*3\\.1' --output-on-failure")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
