#!/usr/bin/env python3
"""Grade scalebook submissions: ./workbook grade [--out DIR] [--jobs N] [--timeout S] [--resume] SUBMISSION...

A submission is a folder: a student's whole copy of the workbook, or just its exercises/ folder.
Only the exercise files named by this (the instructor's) tree are taken from it, and only when they
are regular files. The verdict never comes from the submission's process: this tree's checks run in
a trusted process (chNN_checks_remote, built once from this tree and never linked with student
code) and call the student's functions in a worker process that is compiled, linked and run in a
bubblewrap box (tools/scalebook/sandbox.py), one box per submission. Writes DIR/NAME/report.json,
DIR/NAME/junit.xml as each submission finishes, and DIR/grades.csv after each one, so that a
stopped run keeps what it graded and --resume goes on from there.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import csv
import fcntl
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from scalebook import sandbox  # noqa: E402
from scalebook.build import first_error  # noqa: E402
from scalebook.chapters import Chapter, UsageError, all_chapters, resolve_chapter  # noqa: E402
from scalebook.checks import run_checks  # noqa: E402

MESSAGE_LIMIT = 500
SOURCE_LIMIT = 1 << 20          # an exercise file larger than 1 MiB is refused
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
RESERVED = {"grades.csv", "grading", "kit", "build"}
COMPILE_FLAGS = ["-std=c++20", "-O1"]  # as the student build compiles exercise files
PCH_HEADERS = ["scalebook/core.hpp", "scalebook/random.hpp", "cmath", "limits", "sstream", "string", "vector"]
print_lock = threading.Lock()
SELECTED: list[Chapter] = []  # the chapters this run grades (--chapters), all by default


def graded_chapters() -> list[Chapter]:
    return SELECTED or all_chapters()


def log(text: str) -> None:
    with print_lock:
        print(text, flush=True)


def cut(text: str, limit: int = MESSAGE_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- the trusted kit: built once from this tree ------------------------------------------------

class Kit:
    """The instructor's half, built from this tree in build/grading-kit (never from a submission):
    the trusted checks with proxies, each chapter's worker table, lib and the worker's main."""

    def __init__(self, build_dir: Path):
        self.build_dir = build_dir
        self.chapters: dict[str, dict] = {}
        self.files: dict[str, str] = {}
        self.pch: Path | None = None

    def build(self) -> None:
        """Builds the kit, one grading run at a time (a file lock: two runs share the folder)."""
        self.build_dir.mkdir(parents=True, exist_ok=True)
        with open(self.build_dir / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self._build()

    def _build(self) -> None:
        chapters = graded_chapters()
        if not (self.build_dir / "build.ninja").exists():
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(self.build_dir), "-G", "Ninja",
                            "-DSCALEBOOK_GRADING=ON", f"-DSCALEBOOK_TRACK_DIR={ROOT / 'solutions'}",
                            "-DSCALEBOOK_BUILD_DOCS=OFF"], check=True, stdout=subprocess.DEVNULL,
                           stdin=subprocess.DEVNULL)
        targets = ["scalebook_lib", "scalebook_remote_server"]
        for chapter in chapters:
            targets += [f"{chapter.target}_checks_remote", f"{chapter.target}_serve"]
        result = subprocess.run(["cmake", "--build", str(self.build_dir), "--target", *targets],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            raise RuntimeError("building the grading kit from this tree failed:\n" + result.stdout[-3000:])
        for line in (self.build_dir / "grading-kit.tsv").read_text().splitlines():
            parts = line.split("\t")
            if parts[0] == "chapter":
                _, folder, _, checks, serve, chapter_dir = parts
                self.chapters[folder] = {"checks": Path(checks), "serve": Path(serve),
                                         "dir": Path(chapter_dir)}
            else:
                self.files[parts[0]] = parts[1]
        # /usr/bin/c++ is a link through /etc/alternatives, which the box does not show.
        self.files["compiler"] = os.path.realpath(self.files["compiler"])

    def make_pch(self, folder: Path) -> None:
        """Precompiles the headers every exercise file starts with, once per run and in a box of
        its own (a precompiled header must be made with the paths the compiles will see); each
        exercise compile then skips parsing Eigen. GCC ignores a header that does not fit."""
        folder.mkdir(parents=True)
        (folder / "pch.hpp").write_text("".join(f"#include <{h}>\n" for h in PCH_HEADERS))
        box = sandbox.Box(folder.parent / "pch-box")
        try:
            argv = [self.files["compiler"], *COMPILE_FLAGS, "-I/kit/include", "-isystem", self.files["eigen"],
                    "-x", "c++-header", "/kit/pch/pch.hpp", "-o", "/kit/pch/pch.hpp.gch"]
            code, output = run_boxed(box, sandbox.command([("rw", folder, "/kit/pch"),
                                                           ("ro", self.files["include"], "/kit/include")],
                                                          argv, cpu_seconds=120, file_mb=1024), 120)
            if code != 0:
                raise RuntimeError(f"precompiling the exercises' headers failed: {output[-2000:]}")
        finally:
            box.close()
        self.pch = folder

    def fingerprint(self) -> str:
        digest = hashlib.sha256()
        for chapter in graded_chapters():
            digest.update(chapter.folder.encode())
            digest.update(self.chapters[chapter.folder]["checks"].read_bytes())
        return digest.hexdigest()[:16]


# --- intake -------------------------------------------------------------------------------------

def exercises_folder(submission: Path) -> Path:
    inner = submission / "exercises"
    return inner if inner.is_dir() and not inner.is_symlink() else submission


def take_sources(submission: Path, into: Path) -> tuple[dict[str, str], list[str]]:
    """Copies the exercise files this tree names out of the submission: regular files only (no
    symlinks, no devices, no folders in their place), at most 1 MiB each. Returns {relative path:
    sha256} and the list of refusals."""
    taken, refused = {}, []
    exercises = exercises_folder(submission)
    for chapter in graded_chapters():
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
            (into / chapter.folder).mkdir(parents=True, exist_ok=True)
            (into / chapter.folder / source).write_bytes(data)
            taken[f"{chapter.folder}/{source}"] = hashlib.sha256(data).hexdigest()
    return taken, refused


# --- one submission -----------------------------------------------------------------------------

def compile_in_box(box: sandbox.Box, kit: Kit, chapter: Chapter, source: str, timeout: int) -> str | None:
    """Compiles one exercise file in the box; None when it compiled, else the first error."""
    out = box.folder / "out" / chapter.folder
    out.mkdir(parents=True, exist_ok=True)
    info = kit.chapters[chapter.folder]
    binds = [("ro", box.folder / "src" / chapter.folder, "/src"), ("rw", out, "/out"),
             ("ro", kit.files["include"], "/kit/include")]
    binds += [("ro", header, f"/kit/chapter/{header.name}") for header in sorted(info["dir"].glob("*.hpp"))]
    pch = []
    if kit.pch is not None:
        binds.append(("ro", kit.pch, "/kit/pch"))
        pch = ["-include", "/kit/pch/pch.hpp"]
    argv = [kit.files["compiler"], *COMPILE_FLAGS, *pch, "-I/kit/chapter", "-I/kit/include",
            "-isystem", kit.files["eigen"], f"-DSCALEBOOK_EXERCISE_CHAPTER={chapter.number}",
            "-fdiagnostics-color=never", "-c", f"/src/{source}", "-o", f"/out/{source}.o"]
    if not (box.folder / "src" / chapter.folder / source).exists():
        return f"the submission has no {chapter.folder}/{source}"
    code, output = run_boxed(box, sandbox.command(binds, argv, cpu_seconds=timeout, memory_mb=2048), timeout)
    if code == 0:
        return None
    if code == 124:
        return f"compiling {source} took longer than {timeout} s"
    return cut(first_error(output.splitlines(), source).replace("/src/", f"{chapter.folder}/"))


def link_in_box(box: sandbox.Box, kit: Kit, chapter: Chapter, compiled: list[str], timeout: int) -> str | None:
    out = box.folder / "out" / chapter.folder
    info = kit.chapters[chapter.folder]
    binds = [("rw", out, "/out"), ("ro", info["serve"], "/kit/serve.o"),
             ("ro", kit.files["server"], "/kit/libserver.a"), ("ro", kit.files["lib"], "/kit/liblib.a")]
    argv = [kit.files["compiler"], "-fuse-ld=gold", *[f"/out/{s}.o" for s in compiled], "/kit/serve.o",
            "/kit/libserver.a", "/kit/liblib.a", "-Wl,--unresolved-symbols=ignore-all", "-o", "/out/worker"]
    code, output = run_boxed(box, sandbox.command(binds, argv, cpu_seconds=timeout), timeout)
    return None if code == 0 else cut(output.strip().splitlines()[-1] if output.strip() else "link failed")


def run_boxed(box: sandbox.Box, argv: list[str], timeout: int) -> tuple[int, str]:
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace", stdin=subprocess.DEVNULL, start_new_session=True,
                          preexec_fn=box.enter) as process:
        try:
            output, _ = process.communicate(timeout=timeout)
            return process.returncode, output[-20000:]
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.communicate()
            return 124, ""


def classify(message: str) -> str:
    """The status of a failed check from what the trusted check saw of the worker."""
    if re.search(r"died of SIG|the student process ended \(it died", message):
        return "crashed"
    if "did not return within" in message:
        return "timed_out"
    return "failed"


def grade(submission: Path, out_dir: Path, timeout: int, work_root: Path, kit: Kit) -> dict:
    name = submission.name
    start = time.monotonic()
    box = sandbox.Box(work_root / f"{name}-{os.getpid()}-{time.monotonic_ns()}")
    try:
        sources, refused = take_sources(submission, box.folder / "src")
        tests, compile_errors = [], {}
        for chapter in graded_chapters():
            info = kit.chapters[chapter.folder]
            compiled = []
            for exercise, source in zip(chapter.exercises, chapter.sources):
                error = compile_in_box(box, kit, chapter, source, timeout=120)
                if error is None:
                    compiled.append(source)
                else:
                    compile_errors[exercise] = error
            link_error = link_in_box(box, kit, chapter, compiled, timeout=120) if compiled else "nothing compiled"
            names = [line.split("\t")[4] for line in (kit.build_dir / "checks.tsv").read_text().splitlines()
                     if line.split("\t")[0] == chapter.folder]
            points = {line.split("\t")[4]: int(line.split("\t")[2])
                      for line in (kit.build_dir / "checks.tsv").read_text().splitlines()
                      if line.split("\t")[0] == chapter.folder}
            runnable = [n for n in names if n.split(" ", 1)[0] not in compile_errors] if link_error is None else []
            results = {}
            if runnable:
                # Named after the run, so that a process of this run is told from any other's.
                worker = box.folder / "out" / chapter.folder / "worker"
                inside = f"/worker-{work_root.name}"
                worker_command = sandbox.command([("ro", worker, inside)], [inside], cpu_seconds=timeout + 1)
                env = dict(os.environ, SCALEBOOK_WORKER="\x1f".join(
                    [shutil.which(worker_command[0]) or worker_command[0], *worker_command[1:]]),
                           SCALEBOOK_CALL_TIMEOUT=str(timeout))
                # The trusted checks run outside the box; only the worker they start is inside.
                results = run_checks(info["checks"], runnable, box.folder / "run" / chapter.folder,
                                     timeout=120, skip_after_timeout=False, env=env)
            for check in names:
                exercise = check.split(" ", 1)[0]
                entry = {"name": check, "chapter": chapter.folder, "exercise": exercise, "points": 0,
                         "max_points": points[check]}
                if exercise in compile_errors:
                    entry.update(status="compile_error", message=compile_errors[exercise])
                elif link_error is not None:
                    entry.update(status="compile_error", message=link_error)
                else:
                    result = results.get(check)
                    if result is None or result.status == "not_run":
                        entry.update(status="failed", message=cut(result.message if result else "not run"))
                    elif result.status == "passed":
                        entry.update(status="passed", message="", points=points[check])
                    elif result.status == "failed":
                        entry.update(status=classify(result.message), message=cut(result.message))
                    else:  # the trusted checks process itself crashed or hung: never the student's pass
                        entry.update(status="failed", message=cut("the checks process: " + result.message))
                tests.append(entry)
        report = {
            "submission": name,
            "score": sum(t["points"] for t in tests),
            "max_score": sum(t["max_points"] for t in tests),
            "seconds": round(time.monotonic() - start, 2),
            "refused_files": refused,
            "sandbox": "bubblewrap; whole-box memory and process limits: " +
                       ("yes (cgroups)" if box.whole_box_limits else "no (per-process limits only)"),
            "fingerprint": fingerprint(sources, kit),
            "run": work_root.name,
            "tests": tests,
        }
    finally:
        box.close()
    write_report(report, out_dir)
    return report


def fingerprint(sources: dict[str, str], kit: Kit) -> str:
    digest = hashlib.sha256(kit.fingerprint().encode())
    for path, sha in sorted(sources.items()):
        digest.update(f"{path}\t{sha}\n".encode())
    return digest.hexdigest()


def write_report(report: dict, out_dir: Path) -> None:
    target = out_dir / report["submission"]
    target.mkdir(parents=True, exist_ok=True)
    temporary = target / "report.json.part"
    temporary.write_text(json.dumps(report, indent=2) + "\n")
    write_junit(report, target / "junit.xml")
    temporary.replace(target / "report.json")  # complete or absent, never half written


def refused_report(name: str, reason: str, maximum: int) -> dict:
    return {"submission": name, "score": 0, "max_score": maximum, "seconds": 0, "refused": reason,
            "tests": []}


def write_junit(report: dict, path: Path) -> None:
    suite = ET.Element("testsuite", name=report["submission"], tests=str(len(report["tests"])),
                       failures=str(sum(t["status"] == "failed" for t in report["tests"])),
                       errors=str(sum(t["status"] not in ("passed", "failed") for t in report["tests"])),
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
            ET.SubElement(case, "failure", message=test["message"], type="failed")
        elif test["status"] != "passed":
            ET.SubElement(case, "error", message=test["message"], type=test["status"])
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)


def safe_cell(value) -> str:
    """A spreadsheet never evaluates a cell: formula-like text gets a leading apostrophe."""
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def write_csv(reports: list[dict], path: Path) -> None:
    names = [c.folder for c in graded_chapters()]
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


def main() -> int:
    parser = argparse.ArgumentParser(prog="./workbook grade", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="grades", help="output folder (default: grades/)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="submissions graded in parallel (default: the cores)")
    parser.add_argument("--timeout", type=int, default=5, help="seconds one call may run (default 5)")
    parser.add_argument("--chapters", metavar="LIST",
                        help="grade only these chapters, e.g. 3,4 (an assignment); default: all")
    parser.add_argument("--resume", action="store_true",
                        help="skip submissions whose report was written for the same files and checks")
    parser.add_argument("submissions", nargs="+", type=Path)
    args = parser.parse_args()
    if args.jobs < 1 or args.timeout < 1:
        parser.error("--jobs and --timeout must be at least 1")
    if args.chapters:
        try:
            SELECTED.extend(resolve_chapter(c.strip()) for c in args.chapters.split(","))
        except UsageError as error:
            parser.error(str(error))
    try:
        sandbox.check_available()
    except sandbox.SandboxUnavailable as error:
        print(f"grade: {error}", file=sys.stderr)
        return 2

    out_dir = Path(args.out).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    kit = Kit(ROOT / "build" / "grading-kit")
    log("Building the grading kit (this tree's checks, once)...")
    kit.build()
    graded = {c.folder for c in graded_chapters()}
    maximum = sum(int(line.split("\t")[2]) for line in (kit.build_dir / "checks.tsv").read_text().splitlines()
                  if line and line.split("\t")[0] in graded)

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
            report = refused_report(safe_name, reason, maximum)
            write_report(report, out_dir)
            reports.append(report)
            log(f"{name}: {reason}")
            continue
        if args.resume:
            previous = out_dir / name / "report.json"
            if previous.exists():
                old = json.loads(previous.read_text())
                with tempfile.TemporaryDirectory() as temp:
                    sources, _ = take_sources(submission, Path(temp))
                if old.get("fingerprint") == fingerprint(sources, kit):
                    reports.append(old)
                    log(f"{name}: already graded ({old['score']}/{old['max_score']})")
                    continue
        todo.append(submission)

    work_root = Path(tempfile.mkdtemp(prefix="scalebook-grading-"))
    started = time.monotonic()
    if todo:
        kit.make_pch(work_root / "pch")
    failures = 0
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = {pool.submit(grade, s, out_dir, args.timeout, work_root, kit): s for s in todo}
            for done, future in enumerate(concurrent.futures.as_completed(futures), start=1):
                submission = futures[future]
                try:
                    report = future.result()
                except Exception as error:  # the grader failed for this one: one failed entry
                    failures += 1
                    report = refused_report(submission.name, f"grading failed: {error}", maximum)
                    write_report(report, out_dir)
                reports.append(report)
                write_csv(reports, out_dir / "grades.csv")
                statuses: dict[str, int] = {}
                for t in report["tests"]:
                    statuses[t["status"]] = statuses.get(t["status"], 0) + 1
                summary = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
                log(f"[{done}/{len(todo)}] {report['submission']}: {report['score']}/{report['max_score']} "
                    f"({summary or report.get('refused', '')}) in {report['seconds']:.1f} s")
    finally:
        shutil.rmtree(work_root, ignore_errors=True)
    write_csv(reports, out_dir / "grades.csv")
    log(f"graded {len(todo)} submissions in {time.monotonic() - started:.1f} s; {out_dir / 'grades.csv'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
