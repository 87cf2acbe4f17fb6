"""Grades one submission with ctest and writes its record and its student's report.

One submission graded: its tests run with ctest (in a regrade, only those whose inputs changed:
grading/regrade.py), each check's verdict and points, and what is written of it, each file complete
or not at all: the instructor's record (DIR/ctest/students/NAME/record.json: every check, hidden
ones too, and what each verdict depends on) and, from it, the student's report
(DIR/students/NAME/report.json and junit.xml, the hidden checks shown by the run's policy:
grading/hidden.py).
"""
from __future__ import annotations

import datetime
import os
import re
import shutil
import time
from pathlib import Path

from ..config import ROOT
from ..course import Chapter, hints_of
from ..errors import GradingError
from ..files import read_json, write_json
from ..loop.run_checks import mistake_ids
from ..verdicts import STATUSES, is_error_path, safe_text
from . import sandbox
from .export.junit import write_junit
from .hidden import DEFAULT_POLICY, LabelError, labels, student_view
from .inputs import build_key, verdict_key
from .intake import fingerprint
from .ledger import Ledger
from .supervise import log, run_quietly
from .tree import ctest_outcomes, reports_folder, tests_folder


def hint_of(chapter: Chapter, exercise: str, cache: dict) -> str | None:
    if (chapter.folder, exercise) not in cache:
        try:
            tiers = hints_of(chapter, exercise).tiers
            cache[(chapter.folder, exercise)] = tiers[0] if tiers else None
        except OSError:
            cache[(chapter.folder, exercise)] = None
    return cache[(chapter.folder, exercise)]


def label_of(chapter: Chapter, name: str, cache: dict) -> str | None:
    """The student-facing label of the hidden check NAME (grading/hidden.py), from the chapter's
    hidden checks file in this tree; None where it has none (a student is then shown only its
    exercise, and the run says so once)."""
    if ("labels", chapter.folder) not in cache:
        try:
            cache[("labels", chapter.folder)] = labels(ROOT / "chapters" / chapter.folder / chapter.hidden_checks)
        except (OSError, LabelError) as error:
            log(f"grade: {error}; a student is shown only the exercise of such a check")
            cache[("labels", chapter.folder)] = {}
    return cache[("labels", chapter.folder)].get(name)


RECORD = "record.json"       # DIR/ctest/students/NAME/record.json: the instructor's record of a submission


def record_path(out_dir: Path, name: str) -> Path:
    return tests_folder(out_dir / "ctest", name) / RECORD


def ctest_pattern(names: list[str]) -> str:
    """A CTest regular expression (-R) matching exactly NAMES: the characters special to CMake's
    regular expressions escaped."""
    return "^(" + "|".join(re.sub(r"([][^$.*+?|()\\])", r"\\\1", n) for n in names) + ")$"


def grade(name: str, tree: Path, out_dir: Path, kit: dict, chapters: list[Chapter], sources: dict[str, str],
          refused_files: list[str], commit: str, hints: dict, parallel: int = 1, collected: dict | None = None,
          policy: str = DEFAULT_POLICY, earlier: dict | None = None) -> dict:
    """Runs NAME's tests with ctest (PARALLEL at once: the cores no classmate is using) and writes
    its record and report from CTest's results (with COLLECTED, what `collect` recorded of it: its
    commit). EARLIER: a record of this submission from an earlier grading (a regrade): each check
    whose verdict key is in it keeps that verdict and is not run (grading/regrade.py says when that
    is sound); the rest runs."""
    start = time.monotonic()
    folder = tests_folder(tree, name)
    chapters = [c for c in chapters if c.folder in kit["chapters"]]
    planned = plan_checks(kit, chapters, sources, earlier)
    to_run = [key for key, (_, reused) in planned.items() if reused is None]
    verdicts: dict[str, tuple[str, str, str]] = {}
    outcomes: dict[str, str] = {}
    if to_run:
        outcomes, verdicts = run_checks(name, folder, kit, planned, to_run, parallel)
    tests, work = [], {"compiled": 0, "linked": 0, "checks_run": 0, "reused": 0}
    for key, (inputs_key, reused) in planned.items():
        tests.append(test_entry(name, folder, kit["checks"][key], chapters, hints, inputs_key, reused,
                                outcomes, verdicts.get(key), work))
    never_reused_after_budget(tests)
    count_builds(folder, kit, sources, to_run, work)
    award_points(tests)
    record = {
        "submission": name,
        "score": sum(t["points"] for t in tests),
        "max_score": sum(t["max_points"] for t in tests),
        "seconds": round(time.monotonic() - start, 2),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": commit,
        "refused_files": refused_files,
        "sandbox": sandbox_description(kit.get("sandbox")),
        "fingerprint": fingerprint(sources, kit),
        "check_seconds": round(Ledger(folder / "ledger").spent("checks"), 2) if to_run else 0.0,
        "work": work,
        "tests": tests,
    }
    if collected:
        record["collected"] = collected
    if earlier is not None and work["reused"] and not within_budget(kit, earlier, record):
        return grade(name, tree, out_dir, kit, chapters, sources, refused_files, commit, hints, parallel,
                     collected, policy, None)
    write_report(record, out_dir, policy)
    return record


def test_entry(name: str, folder: Path, check: dict, chapters: list[Chapter], hints: dict, inputs_key: str,
               reused: dict | None, outcomes: dict[str, str], verdict: tuple[str, str, str] | None,
               work: dict) -> dict:
    """One check's entry of the report: its verdict (reused from an earlier grading, or from this
    run's outcome), the line it points at, the mistakes it names, its hint, and its inputs' key."""
    chapter = next(c for c in chapters if c.folder == check["chapter"])
    if reused is not None:
        status, message, code = reused["status"], reused["message"], ""
        work["reused"] += 1
    else:
        status, message, code = check_verdict(outcomes.get(f"{name}/{chapter.folder}/{check['name']}", "notrun"),
                                              verdict)
        work["checks_run"] += bool(code)
    entry = {"name": check["name"], "chapter": chapter.folder, "exercise": check["exercise"],
             "status": status, "points": 0, "max_points": check["points"], "message": safe_text(message),
             "file": f"{chapter.folder}/{chapter.source_of(check['exercise'])}"}
    compiled = (reused or {}).get("compiled") if reused is not None else \
        read_json(folder / "build" / chapter.folder / f"{check['exercise']}.json")
    if compiled and compiled.get("line"):
        entry.update(line=compiled["line"], source_line=compiled.get("source_line", ""))
    if status == "failed":  # the known mistakes its message names, on evidence (grading/analysis.py)
        entry["mistakes"] = mistake_ids(entry["message"])
    hint = hint_of(chapter, check["exercise"], hints)
    if hint and status != "passed":
        entry["hint"] = hint
    if check.get("hidden"):
        entry["hidden"] = True
        label = label_of(chapter, check["name"], hints)
        if label:
            entry["label"] = label
    if reused is not None:
        entry["reused"] = True
    if inputs_key and deterministic(status, message):
        entry["inputs"] = inputs_key
        if compiled and compiled.get("line"):
            entry["compiled"] = {"line": compiled["line"], "source_line": compiled.get("source_line", "")}
    return entry


def never_reused_after_budget(tests: list[dict]) -> None:
    """A verdict that a budget or a compile's time limit touched is never reused: its inputs' key goes."""
    spoilt_chapters = {t["chapter"] for t in tests if t["status"] == "timed_out" and "compile" in t["message"]}
    if any(t["status"] == "timed_out" and "submission budget" in t["message"] for t in tests):
        spoilt_chapters = {t["chapter"] for t in tests}
    for test in tests:
        if test["chapter"] in spoilt_chapters:
            test.pop("inputs", None)


def count_builds(folder: Path, kit: dict, sources: dict[str, str], to_run: list[str], work: dict) -> None:
    """Adds to WORK the files compiled and the chapters linked by this run (from each chapter's timing)."""
    for chapter in {kit["checks"][key]["chapter"] for key in to_run}:
        timing = read_json(folder / "build" / chapter / "timing.json") or {}
        sources_here = sum(1 for path in sources if path.startswith(f"{chapter}/"))
        work["compiled"] += max(0, sources_here - timing.get("cached", 0)) if timing else 0
        work["linked"] += bool(timing) and not timing.get("linked_before", True)


def plan_checks(kit: dict, chapters: list[Chapter], sources: dict[str, str],
                earlier: dict | None) -> dict[str, tuple[str, dict | None]]:
    """Check key -> (its verdict key, the earlier record's test with that key or None): what runs."""
    known = {t["inputs"]: t for t in (earlier or {}).get("tests", []) if t.get("inputs")}
    builds = {c.folder: build_key(kit, c.folder, sources) for c in chapters}
    planned = {}
    for key, check in kit["checks"].items():
        if check["chapter"] in builds:
            inputs_key = verdict_key(kit, check, builds[check["chapter"]])
            planned[key] = (inputs_key, known.get(inputs_key))
    return planned


def run_checks(name: str, folder: Path, kit: dict, planned: dict, to_run: list[str],
               parallel: int) -> tuple[dict[str, str], dict[str, tuple[str, str, str]]]:
    """NAME's tests of the checks TO_RUN (all of them, or in a regrade those whose inputs changed:
    their chapters' build steps come with them, as their fixtures, and each chapter's batch runs only
    them): CTest's outcomes and each check's verdict."""
    junit = folder / "ctest-junit.xml"
    junit.unlink(missing_ok=True)
    shutil.rmtree(folder / "results", ignore_errors=True)
    (folder / "runs").mkdir(exist_ok=True)
    for stale in (folder / "runs").glob("*.only"):
        stale.unlink()
    argv = ["ctest", "--test-dir", str(folder), "--output-junit", str(junit), "--no-tests=error", "-j", str(parallel)]
    if len(to_run) < len(planned):
        chosen: dict[str, list[str]] = {}
        for key in to_run:
            chosen.setdefault(kit["checks"][key]["chapter"], []).append(kit["checks"][key]["name"])
        for chapter, names in chosen.items():
            (folder / "runs" / f"{chapter}.only").write_text("".join(f"{n}\n" for n in names))
        argv += ["-R", ctest_pattern([f"{name}/{kit['checks'][key]['chapter']}/{kit['checks'][key]['name']}"
                                      for key in to_run])]
    try:
        result = run_quietly(argv, env=dict(os.environ, SCALEBOOK_BATCH="1"))
    finally:
        for only in (folder / "runs").glob("*.only"):
            only.unlink()
    outcomes = ctest_outcomes(junit)
    if not outcomes:
        raise GradingError(f"ctest gave no results for {name}: {result.stdout[-1000:]}")
    verdicts = {}
    for key in to_run:
        verdict = read_verdict(folder / "results" / f"{key}.tsv")
        if verdict is not None:
            verdicts[key] = verdict
    return outcomes, verdicts


def check_verdict(outcome: str, verdict: tuple[str, str, str] | None) -> tuple[str, str, str]:
    """A check's (status, message, code) from CTest's word on its test and its step's results."""
    if outcome == "timeout":
        return "timed_out", "timed_out: ctest's --timeout stopped the check", ""
    if verdict is None:
        return "not_run", NOT_FINISHED, ""
    status, message, code = verdict
    if status == "passed" and outcome != "passed":
        return "failed", "ctest did not see this check pass", ""
    return status, message, code


NOT_FINISHED = "not run: its compile step did not finish"


def deterministic(status: str, message: str) -> bool:
    """Whether a verdict follows from its inputs alone: not one of a time limit, a crash (the
    trusted process's, or a worker's that a signal from outside could cause) or a step that did not
    finish, nor one that ctest itself decided."""
    return status in ("passed", "failed", "compile_error", "not_run") and message not in (
        NOT_FINISHED, "ctest did not see this check pass", "not run: the chapter was not built")


def within_budget(kit: dict, earlier: dict, record: dict) -> bool:
    """Whether the submission's checks, the earlier run's and this one's together, stayed inside the
    submission budget: then no check of a grading from scratch would have met it either, and the
    verdicts reused are those it would give."""
    budget = kit["settings"]["submission_seconds"]
    return earlier.get("check_seconds", budget) + record["check_seconds"] <= budget


def read_verdict(path: Path) -> tuple[str, str, str] | None:
    """(status, message, code) from a check step's results (native/check.cpp): "CODE<TAB>STATUS<TAB>
    MESSAGE", the status already mapped from the transport's CODE (empty when the step decided the
    verdict without running the check: a compile error, a budget spent, the chapter not built)."""
    try:
        code, status, message = path.read_text(errors="replace").rstrip("\n").split("\t", 2)
    except (OSError, ValueError):
        return None
    return (status, message, code) if status in STATUSES else ("failed", message, code)


def award_points(tests: list[dict]) -> None:
    """A passed check earns its points; an error-path check (its name says "throw" or "throws")
    only when every other check of the same exercise passed too: throwing the right exception for
    bad input is worth something only in an exercise that also computes the right results. A visible
    error-path check counts the visible checks only: a hidden check costs its own points, and its
    verdict shows nowhere a student may not see it (grading/hidden.py)."""
    by_exercise: dict[str, list[dict]] = {}
    for test in tests:
        by_exercise.setdefault(test["exercise"], []).append(test)
    for test in tests:
        if test["status"] != "passed":
            continue
        if is_error_path(test["name"]):
            others = [t for t in by_exercise[test["exercise"]]
                      if not is_error_path(t["name"]) and (test.get("hidden") or not t.get("hidden"))]
            if not others or any(t["status"] != "passed" for t in others):
                test["message"] = ("passed, but an error-path check pays only when every other check of "
                                   f"{test['exercise']} passes")
                continue
        test["points"] = test["max_points"]


def sandbox_description(which: str | None = None) -> str:
    """What held: the kit's sandbox (WHICH), or the one this grader would make."""
    return sandbox.description(which or sandbox.mode())


def write_report(record: dict, out_dir: Path, policy: str) -> None:
    """RECORD into DIR/ctest/students/NAME/record.json, and the student's view of it
    (grading/hidden.py) into DIR/students/NAME/report.json and junit.xml."""
    path = record_path(out_dir, record["submission"])
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_json(path, record)
    view = student_view(record, policy)
    target = reports_folder(out_dir, record["submission"])
    target.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_junit(view, target / "junit.xml")
    write_json(target / "report.json", view)


def read_record(out_dir: Path, name: str) -> dict | None:
    """NAME's record, once its grading has finished: write_report writes the record, then the
    student's report, so a record without that report is of a run stopped between the two (or a
    report taken away) and counts as none: --resume grades it again, a merge names it missing."""
    if not (reports_folder(out_dir, name) / "report.json").is_file():
        return None
    return read_json(record_path(out_dir, name))


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
