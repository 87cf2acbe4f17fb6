"""Writes the feedback page of each student and the class page, with Jinja2.

The pages grading hands out: DIR/students/<name>/feedback.html for each student and DIR/index.html for the
class, written from report dicts (report.json, see the README's instructor section) with Jinja2
templates (tools/scalebook/templates/) that escape by default.

    context = make_context()                       # commit, date, chapters, exercises, hints
    write_feedback(report, DIR / "students" / name / "feedback.html", context)
    write_class_page(reports, DIR / "index.html", context)

Every string of a report came from a student's process or compiler (messages, compiler output,
file names, submission names) and is shown as text, never read as markup: besides HTML escaping,
control characters, terminal escape sequences, bidirectional and invisible format characters and
bytes that are not UTF-8 are shown as visible escapes (ESC as \\x1b, U+202E as \\u202e, the byte
0xFF as \\xff), and a message is cut after MESSAGE_CHARS characters or MESSAGE_LINES lines, saying
how much was cut. The pages are one file each, offline, with no external asset; a Content Security
Policy lets only this module's own style and sorting script (by their hashes) apply, so that even
markup that slipped through could neither run a script nor load anything. The class page sorts
with that script; without it, it is a plain table in name order.
"""
from __future__ import annotations

import base64
import datetime
import functools
import hashlib
import math
import re
from pathlib import Path
from urllib.parse import quote

try:
    import jinja2
    from markupsafe import Markup
except ImportError:  # named when a page is written (PagesError)
    jinja2 = None

from .. import config
from ..errors import PagesError
from ..files import atomic_write, read_json
from ..config import ROOT
from ..course import Chapter, all_chapters, chapter_advice, hints_of
from ..loop.run_checks import mistake_ids
from ..verdicts import STATUSES
from .visible import NAME_CHARS, _as_text, _code_spans, visible, visible_plain

TEMPLATES = Path(__file__).resolve().parent / "templates"




# --- the instructor's side: chapters, exercises, hints ---------------------------------------

def _chapter_title(root: Path, chapter: Chapter) -> str:
    lesson = root / "chapters" / chapter.folder / "lesson.md"
    try:
        first = lesson.read_text().splitlines()[0]
    except (OSError, IndexError):
        return chapter.folder
    first = re.sub(r"\s*\{#[^}]*\}\s*$", "", first)
    first = re.sub(r"\$\\\\sqrt\{([^}]*)\}\$", "√\\1", first)
    return first.replace("$", "")


def make_context(root: Path = ROOT, chapters: list[Chapter] | None = None,
                 date: str | None = None, commit: str | None = None) -> dict:
    """What the pages need from the instructor's tree: its commit (git rev-parse --short HEAD),
    the date, and per chapter its exercises with each one's function and hints."""
    chapters = chapters if chapters is not None else all_chapters(root)
    if commit is None:
        commit = config.commit(root)
    date = date or datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    listed = []
    for chapter in chapters:
        exercises = []
        for exercise in chapter.exercises:
            try:
                hints = hints_of(chapter, exercise, root)
                tiers, mistakes = hints.tiers, chapter_advice(chapter, exercise, root)
            except OSError:
                tiers, mistakes = [], []
            function = re.sub(r"^ex\d+_|\.cpp$", "", chapter.source_of(exercise))
            exercises.append({"id": exercise, "function": function, "hint": tiers[0] if tiers else "",
                              "mistakes": mistakes})
        listed.append({"folder": chapter.folder, "number": chapter.number,
                       "title": _chapter_title(root, chapter), "exercises": exercises})
    return {"commit": commit, "date": date, "chapters": listed}


# --- reports, checked and grouped -------------------------------------------------------------

def _number(value) -> float:
    """A score or point count; anything else (a forged report) counts as 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0
    return value


def _points(value) -> str:
    """A point count as the pages print it: 3, 2.5."""
    return f"{_number(value):g}"


def _check_report(function: str, report, index: int | None = None) -> None:
    where = "report" if index is None else f"reports[{index}]"
    if not isinstance(report, dict):
        raise PagesError(f"{function}: {where} is a {type(report).__name__}, not a report dict")
    if "submission" not in report:
        raise PagesError(f"{function}: {where} has no 'submission'")
    tests = report.get("tests", [])
    if not isinstance(tests, list) or not all(isinstance(t, dict) for t in tests):
        raise PagesError(f"{function}: {where}['tests'] is not a list of test dicts")


def _status_class(status) -> str:
    return status if status in STATUSES else "other"


def natural_order(a: str, b: str) -> int:
    """Names in a natural order (templates/sort.js sorts the same way): case aside, runs of digits
    by their value (student2 before student10), anything else by character."""
    x, y = re.findall(r"\d+|\D+", a.lower()), re.findall(r"\d+|\D+", b.lower())
    for p, q in zip(x, y):
        if p == q:
            continue
        if p[0].isdigit() and q[0].isdigit():
            p, q = p.lstrip("0"), q.lstrip("0")
            if p != q:
                return -1 if (len(p), p) < (len(q), q) else 1
            continue
        return -1 if p < q else 1
    return len(x) - len(y)


def _exercise_key(exercise: str) -> tuple:
    parts = re.findall(r"\d+", exercise)
    return (0, [int(p) for p in parts]) if parts else (1, exercise)


def _grouped(report: dict, context: dict, details: bool = True) -> list[dict]:
    """The report's tests as chapters (context order first, then any other) of exercises; without
    details, only points and verdicts (what the class page shows)."""
    known = {c["folder"]: c for c in context.get("chapters", [])}
    exercise_info = {e["id"]: e for c in context.get("chapters", []) for e in c["exercises"]}
    chapters: dict[str, dict[str, list[dict]]] = {c: {} for c in known}
    counted: dict[str, list[dict]] = {}   # chapter -> its hidden checks as a count (grading/hidden.py)
    for test in report.get("tests", []):
        chapter = _as_text(test.get("chapter", ""))
        exercise = _as_text(test.get("exercise", ""))
        if test.get("hidden") is True and not exercise:
            counted.setdefault(chapter, []).append(test)
            chapters.setdefault(chapter, {})
            continue
        chapters.setdefault(chapter, {}).setdefault(exercise, []).append(test)
    result = []
    for folder, exercises in chapters.items():
        if not exercises and folder not in counted:  # a chapter this run did not grade
            continue
        info = known.get(folder, {})
        ordered = [e["id"] for e in info.get("exercises", [])]
        ordered += sorted((e for e in exercises if e not in ordered), key=_exercise_key)
        rows = []
        for exercise in ordered:
            tests = exercises.get(exercise, [])
            rows.append(_exercise_view(exercise, tests, exercise_info.get(exercise), details))
        hidden = counted.get(folder, [])
        result.append({"folder": visible(folder, NAME_CHARS), "anchor": f"chapter-{len(result) + 1}",
                       "title": visible(info.get("title", folder), NAME_CHARS),
                       "short": f"Ch. {info['number']}" if info else visible(folder, 40),
                       "points": sum(_number(t.get("points")) for t in [*_tests_of(exercises), *hidden]),
                       "max_points": sum(_number(t.get("max_points")) for t in [*_tests_of(exercises), *hidden]),
                       "passed": sum(r["passed"] for r in rows), "exercises": rows,
                       "hidden": {"checks": sum(_count(t.get("checks")) for t in hidden),
                                  "passed": sum(_count(t.get("passed")) for t in hidden),
                                  "points": sum(_number(t.get("points")) for t in hidden),
                                  "max_points": sum(_number(t.get("max_points")) for t in hidden)} if hidden else None})
    return result


def _count(value) -> int:
    """A count of checks; anything else (a forged report) counts as 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _tests_of(exercises: dict[str, list[dict]]) -> list[dict]:
    return [t for tests in exercises.values() for t in tests]


def _exercise_view(exercise: str, tests: list[dict], info: dict | None, details: bool = True) -> dict:
    statuses = [_as_text(t.get("status")) for t in tests]
    passed = bool(tests) and all(s == "passed" for s in statuses)
    view = {"id": visible(exercise, 40), "function": visible(info["function"], NAME_CHARS) if info else "",
            "passed": passed, "checks": len(tests),
            "points": sum(_number(t.get("points")) for t in tests),
            "max_points": sum(_number(t.get("max_points")) for t in tests)}
    if not details:
        return view
    failures, compile_errors, seen = [], [], set()
    for test in tests:
        if _as_text(test.get("status")) == "passed":
            continue
        message = _as_text(test.get("message"))
        if test.get("status") == "compile_error":
            key = (message, _as_text(test.get("file")), str(test.get("line")), _as_text(test.get("source_line")))
            if key not in seen:  # every check of the exercise carries the same compiler error
                seen.add(key)
                line = test.get("line")
                compile_errors.append({
                    "file": visible(test.get("file"), NAME_CHARS) if test.get("file") else None,
                    "line": line if isinstance(line, int) and not isinstance(line, bool) else None,
                    "source_line": visible(test.get("source_line"), 400, 3) if test.get("source_line") else None,
                    "message": visible(message)})
            continue
        failures.append({"name": visible(test.get("name"), NAME_CHARS),
                         "status": visible(test.get("status"), 40),
                         "status_class": _status_class(test.get("status")),
                         "message": visible(message), "hidden": test.get("hidden") is True})
    hint = info.get("hint", "") if info else ""
    if not hint:  # the report's copy of the tier-1 hint, when the context has none
        hint = next((_as_text(t.get("hint")) for t in tests if t.get("hint")), "")
    messages = " ".join(_as_text(t.get("message")) for t in tests if t.get("status") != "passed")
    named = mistake_ids(messages)  # the mistakes the checks proved, by id (scalebook.loop.run_checks)
    advice = [visible(text) for mistake, text in (info.get("mistakes", []) if info else []) if mistake in named]
    if passed:
        summary = "passed"
    elif not tests:
        summary = "not graded"
    else:
        worst = next((s for s in STATUSES[::-1] if s in statuses), "failed")
        summary = worst
    return dict(view, hint_id=visible_plain(exercise, 40),
                summary=visible(summary, 40), summary_class=_status_class(summary),
                checks_passed=statuses.count("passed"),
                passed_names=[visible(t.get("name"), NAME_CHARS) for t in tests if t.get("status") == "passed"],
                failures=failures, compile_errors=compile_errors,
                hint=_code_spans(hint) if hint and not passed else None,
                advice=advice if not passed else [])


# --- writing ------------------------------------------------------------------------------------

def _environment(function: str) -> "jinja2.Environment":
    if jinja2 is None:
        raise PagesError(f"{function}: writing pages needs Jinja2 (Debian's python3-jinja2: "
                         "apt-get install -y python3-jinja2), for Debian's /usr/bin/python3")
    return _templates()


@functools.lru_cache(maxsize=1)
def _templates() -> "jinja2.Environment":
    """One environment for the process: each template is compiled once, not once per page."""
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                                     undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    environment.filters["points"] = _points
    return environment


@functools.lru_cache(maxsize=None)
def _asset(name: str) -> tuple["Markup", str]:
    """Our own style or script, as markup, and its CSP hash."""
    text = (TEMPLATES / name).read_text()
    if "</" in text:
        raise PagesError(f"{name} must not contain '</' (it is inlined into the page)")
    digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
    return Markup(text), f"'sha256-{digest}'"


def _write(path: Path, text: str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text)  # strict UTF-8: the pages hold no lone surrogate


def _page_basics(report_or_context: dict, context: dict) -> dict:
    style, style_hash = _asset("pages.css")
    return {"style": style, "style_hash": style_hash,
            "date": visible(report_or_context.get("date") or context.get("date", ""), 80),
            "commit": visible(report_or_context.get("commit") or context.get("commit", ""), 80)}


def _collection(report: dict) -> dict | None:
    """What `collect` recorded of the submission (its report's "collected"), as the page shows it:
    the commit graded and its date, the deadline (an extension's, or --now), when it was collected,
    the later commits that were not graded (the first listed), and a folder changed since."""
    collected = report.get("collected")
    if not isinstance(collected, dict) or not collected.get("commit"):
        return None
    listed = [c for c in collected.get("later_commits") or [] if isinstance(c, dict)]
    later = _count(collected.get("later_count")) or len(listed)
    return {"commit": visible(str(collected["commit"])[:12], 40), "date": visible(collected.get("commit_date"), 80),
            "deadline": visible(collected.get("deadline"), 80) if collected.get("deadline") else "",
            "extension": collected.get("extension") is True, "now": collected.get("now") is True,
            "collected_at": visible(collected.get("collected_at"), 80),
            "later": later, "later_commits": [{"commit": visible(str(c.get("commit", ""))[:12], 40),
                                               "date": visible(c.get("date"), 80),
                                               "subject": visible(c.get("subject"), 120, 1)} for c in listed],
            "unlisted": max(0, later - len(listed)),
            "changed_since": visible(collected.get("changed_since"), 200) if collected.get("changed_since") else ""}


def render_feedback(report: dict, context: dict) -> str:
    """feedback.html's text for one report (see write_feedback)."""
    function = "write_feedback"
    _check_report(function, report)
    environment = _environment(function)
    refused_files = report.get("refused_files") or []
    if not isinstance(refused_files, list):
        refused_files = [refused_files]
    page = dict(_page_basics(report, context),
                name=visible(report["submission"], NAME_CHARS),
                title=visible_plain(report["submission"]),
                score=_number(report.get("score")), max_score=_number(report.get("max_score")),
                percent=_percent(report.get("score"), report.get("max_score")),
                refused=visible(report["refused"]) if report.get("refused") else None,
                refused_files=[visible(f, NAME_CHARS) for f in refused_files],
                collection=_collection(report), chapters=_grouped(report, context))
    return environment.get_template("feedback.html.j2").render(page)


def _percent(score, maximum) -> str:
    maximum = _number(maximum)
    return f"{100 * _number(score) / maximum:.0f}" if maximum > 0 else "0"


def write_feedback(report: dict, path: Path, context: dict) -> None:
    """Writes one student's page to `path` (grading uses DIR/students/<name>/feedback.html): score per
    chapter and exercise, every failed check with its message and its exercise's hint
    (`./workbook hint N.K` and the hint's text), compile errors with the student's line, the date
    and the instructor tree's commit."""
    _write(path, render_feedback(report, context))


CLASS_FACTS = Path("ctest") / "class.json"   # DIR/ctest/class.json: the roster's students without a submission


def _commit_cell(report: dict) -> str:
    """The class table's cell of the commit graded (what collect recorded): its short name, and how
    many later commits were not graded; "" for a submission not collected."""
    collected = report.get("collected")
    if not isinstance(collected, dict) or not collected.get("commit"):
        return ""
    later = _count(collected.get("later_count"))
    return visible(str(collected["commit"])[:10] + (f" ({later} later)" if later else ""), 60)


def _submissions(students: list[tuple[dict, list]], absent: list[dict] | None) -> dict:
    """The class page's section on the submissions themselves: the students with later commits not
    graded, those with an extension, repositories flagged by collect, and the roster's students with
    no submission (ABSENT, from DIR/ctest/class.json: id, status, why)."""
    late, extended, flagged = [], [], []
    for report, _ in students:
        collected = report.get("collected") if isinstance(report.get("collected"), dict) else {}
        name = visible(report["submission"], NAME_CHARS)
        href = "students/" + quote(_as_text(report["submission"]).encode("utf-8", "surrogateescape"), safe="") + \
            "/feedback.html"
        if _count(collected.get("later_count")):
            listed = [c for c in collected.get("later_commits") or [] if isinstance(c, dict)]
            late.append({"name": name, "href": href, "count": _count(collected.get("later_count")),
                         "latest": visible(listed[0].get("date"), 80) if listed else "",
                         "commits": [visible(str(c.get("commit", ""))[:10], 20) for c in listed[:5]],
                         "collected_at": visible(collected.get("collected_at"), 80)})
        if collected.get("extension") is True:
            extended.append({"name": name, "href": href, "deadline": visible(collected.get("deadline"), 80)})
        for flag in collected.get("flags") or []:
            flagged.append({"name": name, "href": href, "flag": visible(flag, 400, 2)})
    missing = [{"name": visible(a.get("id"), NAME_CHARS), "status": visible(a.get("status"), 40),
                "why": visible(a.get("why"), 300, 2)} for a in absent or [] if isinstance(a, dict)]
    return {"late": late, "extended": extended, "flagged": flagged, "absent": missing,
            "any": bool(late or extended or flagged or missing)}


def render_class_page(reports: list[dict], context: dict, analysis: dict | None = None,
                      absent: list[dict] | None = None) -> str:
    """index.html's text for a class (see write_class_page); with ANALYSIS (grading/analysis.py's
    dict), its section "What the class got wrong"; with ABSENT, the roster's students without a
    submission."""
    from .analysis_pages import class_section  # it renders with this module's environment
    function = "write_class_page"
    if not isinstance(reports, list):
        raise PagesError(f"{function}: reports must be a list of report dicts, not {type(reports).__name__}")
    for index, report in enumerate(reports):
        _check_report(function, report, index)
    environment = _environment(function)
    script, script_hash = _asset("sort.js")
    ordered = sorted(reports, key=lambda r: functools.cmp_to_key(natural_order)(visible_plain(r["submission"])))
    students = [(report, _grouped(report, context, details=False)) for report in ordered]
    # The columns: the context's chapters, then any other a report names; each chapter's maximum is
    # the largest any report gives it (a refused submission's report has no tests).
    columns: dict[str, dict] = {}
    for report, chapters in students:
        for chapter in chapters:
            column = columns.setdefault(str(chapter["folder"]), {"title": chapter["title"], "short": chapter["short"],
                                                                 "max_points": 0})
            column["max_points"] = max(column["max_points"], chapter["max_points"])
    order = [c["folder"] for c in context.get("chapters", [])]
    columns = dict(sorted(columns.items(), key=lambda item: (order.index(item[0]) if item[0] in order
                                                            else len(order), item[0])))
    rows = []
    for report, chapters in students:
        by_folder = {str(c["folder"]): c for c in chapters}
        refused_files = report.get("refused_files") or []
        note = visible(report["refused"], 300, 2) if report.get("refused") else (
            visible(f"{len(refused_files)} file(s) refused") if refused_files else "")
        rows.append({"name": visible(report["submission"], NAME_CHARS),
                     "href": "students/" + quote(_as_text(report["submission"]).encode("utf-8", "surrogateescape"),
                                                 safe="") + "/feedback.html",
                     "cells": [by_folder[key]["points"] if key in by_folder else 0 for key in columns],
                     "score": _number(report.get("score")), "max_score": _number(report.get("max_score")),
                     "percent": _percent(report.get("score"), report.get("max_score")), "note": note,
                     "commit": _commit_cell(report)})
    # Per exercise: how many of the class passed every one of its checks.
    exercises: dict[str, dict] = {}
    for report, chapters in students:
        for chapter in chapters:
            for exercise in chapter["exercises"]:
                if not exercise["checks"]:  # not graded in this report
                    continue
                key = str(exercise["id"])
                entry = exercises.setdefault(key, {"id": exercise["id"], "function": exercise["function"],
                                                   "order": len(exercises), "passed": 0})
                entry["passed"] += exercise["passed"]
    class_size = len(reports)
    exercise_rows = [dict(e, percent=_percent(e["passed"], class_size)) for e in exercises.values()]
    page = dict(_page_basics({}, context), script=script, script_hash=script_hash,
                columns=list(columns.values()),
                rows=rows, exercises=exercise_rows, class_size=class_size,
                graded=sum(1 for r in reports if not r.get("refused")), analysis=class_section(analysis),
                submissions=_submissions(students, absent), with_commits=any(row["commit"] for row in rows))
    return environment.get_template("class.html.j2").render(page)


def write_class_page(reports: list[dict], path: Path, context: dict, analysis: dict | None = None) -> None:
    """Writes the class page to `path` (grading uses DIR/index.html): students x chapters, sortable,
    each name linking to students/<name>/feedback.html below it, per exercise how many of the class
    passed all of its checks, the students with late commits, extensions or a flagged repository,
    the roster's students without a submission (DIR/ctest/class.json beside it, written by grade),
    and, with ANALYSIS, what the class got wrong."""
    facts = read_json(Path(path).parent / CLASS_FACTS) or {}
    _write(path, render_class_page(reports, context, analysis, facts.get("absent") if isinstance(facts, dict) else None))
