#!/usr/bin/env python3
"""Grade scalebook submissions: ./workbook grade [--out DIR] [--jobs N] [--timeout S] SUBMISSION...

A submission is a folder: a student's whole copy of the workbook, or just its exercises/ folder.
Only the exercise sources named by the instructor's chapters are copied out of it; the checks, the
CMake files, lib/ and the points always come from this (the instructor's) tree. Each submission is
built in its own folder (build/grading/NAME) in grading mode and its checks run through CTest, each
check alone in tools/run-check's sandbox. Writes DIR/NAME/report.json, DIR/NAME/junit.xml and
DIR/grades.csv. Exit 0 when every submission was graded, whatever the scores.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from scalebook.build import build_checks  # noqa: E402
from scalebook.chapters import all_chapters  # noqa: E402

MESSAGE_LIMIT = 500
print_lock = threading.Lock()


def log(text: str) -> None:
    with print_lock:
        print(text, flush=True)


def exercises_folder(submission: Path) -> Path:
    return submission / "exercises" if (submission / "exercises").is_dir() else submission


def cut(text: str, limit: int = MESSAGE_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def unescape(text: str) -> str:
    """The results file's escapes (\\n, \\\\) back to text."""
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), text)


def run(command: list[str], log_path: Path, timeout: float | None = None) -> int:
    with open(log_path, "w") as out:
        try:
            return subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, timeout=timeout,
                                  stdin=subprocess.DEVNULL).returncode
        except subprocess.TimeoutExpired:
            out.write(f"\n(stopped after {timeout} s)\n")
            return 124


def grade(submission: Path, out_dir: Path, check_timeout: int, build_root: Path) -> dict:
    name = submission.name
    start = time.monotonic()
    work = build_root / name
    sources = work / "submission"
    build = work / "build"
    logs = work / "logs"
    shutil.rmtree(sources, ignore_errors=True)
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    # Copy only the exercise sources: the submission folder is never built in or written to.
    exercises = exercises_folder(submission)
    for chapter in all_chapters():
        for source in chapter.sources:
            found = exercises / chapter.folder / source
            if found.is_file():
                (sources / chapter.folder).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(found, sources / chapter.folder / source)
    sources.mkdir(parents=True, exist_ok=True)

    configure = ["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja",
                 "-DSCALEBOOK_GRADING=ON", f"-DSCALEBOOK_TRACK_DIR={sources}",
                 f"-DSCALEBOOK_CHECK_TIMEOUT={check_timeout}"]
    if run(configure, logs / "configure.log") != 0:
        raise RuntimeError(f"{name}: configuring failed, see {logs / 'configure.log'}")

    manifest = [line.split("\t") for line in (build / "checks.tsv").read_text().splitlines() if line]
    # Each chapter's checks; an exercise file that does not compile costs that exercise only: the
    # chapter is linked from the files that compiled (scalebook.build.build_checks).
    compile_errors: dict[str, str] = {}   # exercise id -> first error
    binaries: dict[str, Path | None] = {}
    for chapter in all_chapters():
        # A generous bound: a hostile submission can make the compiler work hard, not forever.
        built = build_checks(build, chapter, logs, timeout=600)
        binaries[chapter.folder] = built.binary
        for exercise, error in built.compile_errors.items():
            compile_errors[exercise] = error
        if built.binary is None:
            for exercise in chapter.exercises:
                compile_errors.setdefault(exercise, built.failure or "the chapter did not link")

    results_dir = build / "grading"
    shutil.rmtree(results_dir, ignore_errors=True)
    results_dir.mkdir(parents=True)
    for chapter, exercise, _, key, check in manifest:
        if exercise not in compile_errors and binaries.get(chapter) is not None:
            run([str(ROOT / "tools" / "run-check"), str(results_dir), key, str(check_timeout),
                 str(binaries[chapter]), check], logs / f"{key}.run.log", timeout=check_timeout + 30)

    tests = []
    for chapter, exercise, points, key, check in manifest:
        points = int(points)
        entry = {"name": check, "chapter": chapter, "exercise": exercise, "points": 0,
                 "max_points": points}
        if exercise in compile_errors:
            entry.update(status="compile_error", message=compile_errors[exercise])
        else:
            entry.update(check_status(results_dir, key, check))
            if entry["status"] == "passed":
                entry["points"] = points
        tests.append(entry)

    report = {
        "submission": name,
        "score": sum(t["points"] for t in tests),
        "max_score": sum(t["max_points"] for t in tests),
        "seconds": round(time.monotonic() - start, 2),
        "tests": tests,
    }
    target = out_dir / name
    target.mkdir(parents=True, exist_ok=True)
    (target / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    write_junit(report, target / "junit.xml")
    return report


def check_status(results_dir: Path, key: str, check: str) -> dict:
    """The status of one check from doctest's own result and the sandbox's record of the process."""
    status_file = results_dir / f"{key}.status"
    results_file = results_dir / f"{key}.results"
    if not status_file.exists():
        return {"status": "failed", "message": "the check was not run"}
    fields = status_file.read_text().split()
    record = dict(zip(fields[::2], fields[1::2]))
    code, elapsed, limit = int(record["exit"]), float(record["elapsed"]), float(record["limit"])
    outcome, message = None, ""
    if results_file.exists():
        for line in results_file.read_text(errors="replace").splitlines():
            parts = line.split("\t")
            if len(parts) >= 2 and parts[1] == check and parts[0] != "start":
                if outcome not in ("failed", "crashed"):
                    outcome = parts[0]
                    message = unescape(parts[2]) if len(parts) > 2 else ""
    if code == 137 and elapsed >= limit - 0.05:
        return {"status": "timed_out", "message": f"still running after {limit:g} s"}
    if code > 128 or (code < 0):
        signal = code - 128
        names = {6: "SIGABRT", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV", 7: "SIGBUS", 24: "SIGXCPU",
                 25: "SIGXFSZ"}
        return {"status": "crashed", "message": f"the process died of {names.get(signal, f'signal {signal}')}"}
    if outcome is None:
        return {"status": "failed",
                "message": f"the process ended (exit code {code}) before the check reported a result"}
    if outcome == "passed" and code == 0:
        return {"status": "passed", "message": ""}
    return {"status": "failed", "message": cut(message or f"exit code {code}")}


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


def write_csv(reports: list[dict], path: Path) -> None:
    names = [c.folder for c in all_chapters()]
    with open(path, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["submission", *names, "total", "maximum"])
        for report in sorted(reports, key=lambda r: r["submission"]):
            per_chapter = [sum(t["points"] for t in report["tests"] if t["chapter"] == c) for c in names]
            writer.writerow([report["submission"], *per_chapter, report["score"], report["max_score"]])


def main() -> int:
    parser = argparse.ArgumentParser(prog="./workbook grade", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="grades", help="output folder (default: grades/)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="submissions graded in parallel (default: the cores)")
    parser.add_argument("--timeout", type=int, default=5, help="seconds one check may run (default 5)")
    parser.add_argument("--build-dir", type=Path, default=ROOT / "build" / "grading",
                        help="where each submission is built (default: build/grading/)")
    parser.add_argument("submissions", nargs="+", type=Path)
    args = parser.parse_args()

    out_dir = Path(args.out).resolve()
    build_root = args.build_dir.resolve()

    submissions = []
    for submission in args.submissions:
        submission = submission.resolve()
        if not submission.is_dir():
            print(f"grade: {submission} is not a folder", file=sys.stderr)
            return 2
        if out_dir == submission or out_dir in submission.parents or submission in out_dir.parents:
            print(f"grade: --out {out_dir} must not be inside or around {submission}", file=sys.stderr)
            return 2
        submissions.append(submission)
    names = [s.name for s in submissions]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        print(f"grade: two submissions share the name {', '.join(sorted(duplicates))}", file=sys.stderr)
        return 2
    out_dir.mkdir(parents=True, exist_ok=True)

    started = time.monotonic()
    reports, failures = [], []
    total = len(submissions)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(grade, s, out_dir, args.timeout, build_root): s for s in submissions}
        for done, future in enumerate(concurrent.futures.as_completed(futures), start=1):
            submission = futures[future]
            try:
                report = future.result()
            except Exception as error:  # the grader itself failed for this submission
                failures.append(f"{submission.name}: {error}")
                log(f"[{done}/{total}] {submission.name}: grading failed: {error}")
                continue
            reports.append(report)
            statuses = {}
            for t in report["tests"]:
                statuses[t["status"]] = statuses.get(t["status"], 0) + 1
            summary = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
            log(f"[{done}/{total}] {report['submission']}: {report['score']}/{report['max_score']} "
                f"({summary}) in {report['seconds']:.1f} s")
    write_csv(reports, out_dir / "grades.csv")
    log(f"graded {len(reports)} of {total} submissions in {time.monotonic() - started:.1f} s; "
        f"{out_dir / 'grades.csv'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
