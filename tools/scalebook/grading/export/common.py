"""What every LMS export shares: its options, the roster joined to the reports, the columns and the text.

Every string that came from a submission is safe text already in the reports (verdicts.safe_text,
the one rule for untrusted text); what the exports add from the roster or the report goes through
safe_text again, and every CSV cell through grades_csv.safe_cell (no cell a spreadsheet formula).
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import NamedTuple

from ...course import Chapter
from ...verdicts import safe_text
from ..hidden import student_view
from ..roster import Student


class Options(NamedTuple):
    chapters: list[Chapter]              # the chapters graded, in order
    maxima: dict[str, int]               # chapter folder -> its points (from the kit, whatever a report holds)
    students: list[Student]              # the roster ([] without --roster)
    assignment: str = "scalebook"        # the LMS's assignment (or grade item) name
    assignment_ids: tuple[str, ...] = () # Canvas ids: one, or one per chapter with per_chapter
    per_chapter: bool = False            # one column per chapter, or one total
    moodle_key: str = "email"            # email or idnumber: how Moodle finds the student
    hidden_policy: str = "count"         # what a student sees of the hidden checks (grading/hidden.py)


class Column(NamedTuple):
    header: str
    chapter: str | None                  # None: the total
    maximum: int


def columns(options: Options, with_ids: bool) -> list[Column]:
    """The gradebook's grade columns: the total, or one per chapter ("NAME NN-topic"); with_ids adds
    Canvas's " (ID)" where ids were given."""
    if options.per_chapter:
        names = [(f"{options.assignment} {c.folder}", c.folder, options.maxima.get(c.folder, 0)) for c in options.chapters]
    else:
        names = [(options.assignment, None, sum(options.maxima.get(c.folder, 0) for c in options.chapters))]
    ids = options.assignment_ids if with_ids else ()
    return [Column(f"{name} ({ids[i]})" if ids else name, chapter, maximum)
            for i, (name, chapter, maximum) in enumerate(names)]


def graded(report: dict | None) -> bool:
    return report is not None and not report.get("refused")


def points(report: dict, chapter: str | None) -> int:
    return sum(t["points"] for t in report["tests"] if chapter is None or t["chapter"] == chapter)


def number(value: float) -> str:
    """A score as a gradebook reads it: 12, or 12.5 (never 12.0)."""
    return f"{value:g}" if value != int(value) else str(int(value))


def provenance(report: dict) -> str:
    """Where a report's grade came from: the student's commit (when collected) and the grader's tree."""
    collected = report.get("collected") or {}
    parts = []
    if collected.get("commit"):
        parts.append(f"graded commit {collected['commit'][:12]} of {collected.get('commit_date')}"
                     + (f", collected {collected.get('collected_at')}" if collected.get("collected_at") else "")
                     + (f"; {collected['later_count']} later commit(s) not graded" if collected.get("later_count") else ""))
        if collected.get("changed_since"):
            parts.append(collected["changed_since"])
    parts.append(f"grader {report.get('commit', 'unknown')}")
    return safe_text("; ".join(parts), 400)


def feedback(report: dict | None, chapter: str | None, limit: int = 2000) -> str:
    """One cell of feedback for a gradebook: points, the checks that did not pass, provenance (REPORT
    as its student may see it: views())."""
    if report is None:
        return "no submission graded"
    if report.get("refused"):
        return safe_text(f"not graded: {report['refused']}", limit)
    tests = [t for t in report["tests"] if chapter is None or t["chapter"] == chapter]
    maximum = sum(t["max_points"] for t in tests)
    lost = [f"{t['name']} ({t['status']})" for t in tests if t["points"] < t["max_points"]]
    text = f"{number(points(report, chapter))}/{maximum} points. " + (
        f"Not passed: {'; '.join(lost)}. " if lost else "") + provenance(report) + "."
    return safe_text(text, limit)


def shown(test: dict) -> bool:
    """Whether a check's message may be shown to the student: not a hidden check's (grading/hidden.py)."""
    return not test.get("hidden")


def views(reports: list[dict], options: Options) -> list[dict]:
    """The records as their students may see them, by the run's policy for the hidden checks."""
    return [student_view(r, options.hidden_policy) for r in reports]


def joined(reports: list[dict], students: list[Student]) -> tuple[list[tuple[Student, dict | None]], list[str]]:
    """Each roster student with their report (None: nothing graded), and the reports no student has."""
    by_name = {r["submission"]: r for r in reports}
    pairs = [(s, by_name.get(s.id)) for s in students]
    known = {s.id for s in students}
    return pairs, sorted(name for name in by_name if name not in known)


def write_rows(path: Path, rows: list[list]) -> None:
    """ROWS as a UTF-8 CSV at PATH, complete or not at all (the cells are made safe by the caller)."""
    temporary = path.with_name(path.name + ".part")
    with open(temporary, "w", newline="", encoding="utf-8") as out:
        csv.writer(out).writerows(rows)
    temporary.replace(path)
