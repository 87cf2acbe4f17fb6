"""Canvas's gradebook CSV, joined to the roster, ready for Grades > Import.

The header Canvas's own export has (Student, ID, SIS User ID, SIS Login ID, Section, then one
`ASSIGNMENT (ID)` column per assignment), the `Points Possible` row under it, and a row per roster
student: the roster's name, canvas_id, id (as the SIS User ID), login and section. A student with
nothing graded (no repository collected, or a submission the grader refused) gets an empty cell,
which leaves Canvas's grade as it is rather than writing a zero.
"""
from __future__ import annotations

from pathlib import Path

from .common import Options, columns, graded, joined, number, points, write_rows
from .grades_csv import safe_cell

HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
POINTS_POSSIBLE = "    Points Possible"


def write(reports: list[dict], path: Path, options: Options) -> list[str]:
    """Writes PATH; returns the names of reports no roster student has (left out)."""
    grade_columns = columns(options, with_ids=True)
    pairs, unmatched = joined(reports, options.students)
    rows = [HEADER + [safe_cell(c.header) for c in grade_columns],
            [POINTS_POSSIBLE, "", "", "", ""] + [c.maximum for c in grade_columns]]
    for student, report in pairs:
        scores = [number(points(report, c.chapter)) if graded(report) else "" for c in grade_columns]
        rows.append([safe_cell(student.name), safe_cell(student.canvas_id), safe_cell(student.id),
                     safe_cell(student.login), safe_cell(student.section), *scores])
    write_rows(path, rows)
    return unmatched
