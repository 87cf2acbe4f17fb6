"""Grades one submission with ctest and writes its report (report.json, junit.xml).

One submission graded: its tests run with ctest, each check's verdict and points, and its report
(report.json with junit.xml beside it), written complete or not at all.
"""
from __future__ import annotations

import datetime
import os
import shutil
import time
from pathlib import Path

from ..course import Chapter, hints_of
from ..errors import GradingError
from ..files import read_json, write_json
from ..loop.run_checks import mistake_ids
from ..verdicts import STATUSES, is_error_path, safe_text
from . import sandbox
from .export.junit import write_junit
from .intake import fingerprint
from .supervise import run_quietly
from .tree import ctest_outcomes, reports_folder, tests_folder


def hint_of(chapter: Chapter, exercise: str, cache: dict) -> str | None:
    if (chapter.folder, exercise) not in cache:
        try:
            tiers = hints_of(chapter, exercise).tiers
            cache[(chapter.folder, exercise)] = tiers[0] if tiers else None
        except OSError:
            cache[(chapter.folder, exercise)] = None
    return cache[(chapter.folder, exercise)]


def grade(name: str, tree: Path, out_dir: Path, kit: dict, chapters: list[Chapter], sources: dict[str, str],
          refused_files: list[str], commit: str, hints: dict, parallel: int = 1, collected: dict | None = None) -> dict:
    """Runs NAME's tests with ctest (PARALLEL at once: the cores no classmate is using) and writes
    its report from CTest's results (with COLLECTED, what `collect` recorded of it: its commit)."""
    start = time.monotonic()
    folder = tests_folder(tree, name)
    junit = folder / "ctest-junit.xml"
    junit.unlink(missing_ok=True)
    shutil.rmtree(folder / "results", ignore_errors=True)
    result = run_quietly(["ctest", "--test-dir", str(folder), "--output-junit", str(junit), "--no-tests=error",
                          "-j", str(parallel)], env=dict(os.environ, SCALEBOOK_BATCH="1"))
    outcomes = ctest_outcomes(junit)
    if not outcomes:
        raise GradingError(f"ctest gave no results for {name}: {result.stdout[-1000:]}")
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
        if status == "failed":  # the known mistakes its message names, on evidence (grading/analysis.py)
            entry["mistakes"] = mistake_ids(entry["message"])
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
    if collected:
        report["collected"] = collected
    write_report(report, out_dir)
    return report


def read_verdict(path: Path) -> tuple[str, str] | None:
    """(status, message) from a check step's results (native/check.cpp): "CODE<TAB>STATUS<TAB>
    MESSAGE", the status already mapped from the transport's CODE."""
    try:
        code, status, message = path.read_text(errors="replace").rstrip("\n").split("\t", 2)
    except (OSError, ValueError):
        return None
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
    target = reports_folder(out_dir, report["submission"])
    target.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_junit(report, target / "junit.xml")
    write_json(target / "report.json", report)


def refused_report(name: str, reason: str, maximum: int, commit: str) -> dict:
    return {"submission": name, "score": 0, "max_score": maximum, "seconds": 0,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "commit": commit,
            "refused_files": [], "refused": safe_text(reason), "sandbox": sandbox_description(), "fingerprint": "",
            "tests": []}


def summary_line(report: dict, done: int, total: int) -> str:
    statuses: dict[str, int] = {}
    for t in report["tests"]:
        statuses[t["status"]] = statuses.get(t["status"], 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
    return (f"[{done}/{total}] {report['submission']}: {report['score']}/{report['max_score']} "
            f"({summary or report.get('refused', '')}) in {report['seconds']:.1f} s")
