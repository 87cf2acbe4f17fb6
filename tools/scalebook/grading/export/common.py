"""What every LMS export shares: its options, the roster joined to the reports, the columns and the text.

Every string that came from a submission is safe text already in the reports (verdicts.safe_text,
the one rule for untrusted text); what the exports add from the report goes through safe_text
again, and every cell of free text (feedback) through grades_csv.safe_cell (no such cell a
spreadsheet formula). The roster's identifiers (emails, logins, Canvas ids, names) are written as
they are: the roster refused those a gradebook could not match or a spreadsheet would compute
(roster.identifier_problem).

A gradebook file has a row for each roster student with a graded submission, and none for the
others: an empty cell is not "no change" to the importers (Moodle's grade/import/lib.php commits it
as a grade of NULL, which clears a grade entered by hand; Canvas's no_change_to_value? counts it a
change; export/moodle.py and export/canvas.py cite the lines), so a student left out keeps the grade
the LMS has, and the terminal names them.
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
    scale_to: float | None = None        # each grade column's points scaled to this maximum (None: points)
    qids: tuple[str, ...] = ()           # PrairieLearn's question ids: one, or one per chapter with per_chapter


class Column(NamedTuple):
    header: str
    chapter: str | None                  # None: the total
    maximum: int                         # the kit's points
    index: int = 0                       # its place among the columns (the id or qid it takes)


def column_names(options: Options) -> list[tuple[str, str | None, int]]:
    """(name, chapter, points) of each grade column: the total, or one per chapter ("NAME NN-topic")."""
    if options.per_chapter:
        return [(f"{options.assignment} {c.folder}", c.folder, options.maxima.get(c.folder, 0)) for c in options.chapters]
    return [(options.assignment, None, sum(options.maxima.get(c.folder, 0) for c in options.chapters))]


def columns(options: Options, with_ids: bool) -> list[Column]:
    """The gradebook's grade columns; with_ids adds Canvas's " (ID)" where ids were given."""
    ids = options.assignment_ids if with_ids else ()
    return [Column(f"{name} ({ids[i]})" if ids else name, chapter, maximum, i)
            for i, (name, chapter, maximum) in enumerate(column_names(options))]


def shown_maximum(column: Column, options: Options) -> float:
    """The column's maximum in the gradebook: --scale-to's, or the kit's points."""
    return column.maximum if options.scale_to is None else options.scale_to


def grade(report: dict, column: Column, options: Options) -> str:
    """REPORT's points in COLUMN as the gradebook reads them: the points, or scaled to --scale-to and
    rounded to two decimals (what Canvas's and Moodle's gradebooks show)."""
    value = points(report, column.chapter)
    if options.scale_to is not None:
        value = round(value * options.scale_to / column.maximum, 2) if column.maximum else 0.0
    return number(value)


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


class Gradebook(NamedTuple):
    rows: list[tuple[Student, dict]]     # the roster students with a graded report, in roster order
    ungraded: list[tuple[Student, str]]  # the others, each with why (no submission, or refused)
    unmatched: list[str]                 # reports no roster student has


def gradebook(reports: list[dict], students: list[Student]) -> Gradebook:
    """The rows a gradebook file gets (see the module's docstring: only graded students)."""
    pairs, unmatched = joined(reports, students)
    rows = [(s, r) for s, r in pairs if graded(r)]
    ungraded = [(s, "no submission graded" if r is None else "its submission was refused") for s, r in pairs
                if not graded(r)]
    return Gradebook(rows, ungraded, unmatched)


def said(name: str, path: Path, book: Gradebook) -> list[str]:
    """The terminal's lines for a gradebook file NAME written at PATH."""
    lines = [f"{name}: {path} ({len(book.rows)} graded roster student{'s' if len(book.rows) != 1 else ''})"]
    if book.ungraded:
        names = ", ".join(f"{s.id} ({why})" for s, why in book.ungraded[:20])
        lines.append(f"{name}: left out, so that the grade the LMS has stays as it is: {names}"
                     + (" ..." if len(book.ungraded) > 20 else ""))
    if book.unmatched:
        lines.append(f"{name}: not in the roster, left out: {', '.join(book.unmatched)}")
    return lines


def write_rows(path: Path, rows: list[list]) -> None:
    """ROWS as a UTF-8 CSV at PATH, complete or not at all (the cells are made safe by the caller)."""
    temporary = path.with_name(path.name + ".part")
    with open(temporary, "w", newline="", encoding="utf-8") as out:
        csv.writer(out).writerows(rows)
    temporary.replace(path)
