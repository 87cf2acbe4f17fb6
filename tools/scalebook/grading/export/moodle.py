"""Moodle's grade import CSV (Grades > Import > CSV file): the key column, then each grade column
followed by its feedback column, so that one import brings both (Moodle drops the grades of a
feedback column imported alone).

The key is the student's email address (map it to "Email address", useremail) or their id (map it
to "ID number", useridnumber), as --moodle-key says. Moodle stops the whole import at a row whose
user it cannot find, so only roster students are written, and an empty grade (nothing graded) is
Moodle's "no grade" (grade/import/csv/classes/load_data.php reads '' and '-' as no grade). Moodle
shows imported feedback as formatted text: its characters that are markup (<, >, &) are written as
HTML entities, so that a submission's message shows as the text it is.
"""
from __future__ import annotations

import html
from pathlib import Path

from .common import Options, columns, feedback, graded, joined, number, points, views, write_rows
from .grades_csv import safe_cell

KEYS = {"email": "Email address", "idnumber": "ID number"}


def write(reports: list[dict], path: Path, options: Options) -> list[str]:
    """Writes PATH; returns the names of reports no roster student has (left out)."""
    grade_columns = columns(options, with_ids=False)
    pairs, unmatched = joined(views(reports, options), options.students)  # the feedback: the students
    header = [KEYS[options.moodle_key]]
    for column in grade_columns:
        header += [safe_cell(column.header), safe_cell(f"{column.header} (feedback)")]
    rows = [header]
    for student, report in pairs:
        row = [safe_cell(student.email if options.moodle_key == "email" else student.id)]
        for column in grade_columns:
            row.append(number(points(report, column.chapter)) if graded(report) else "")
            row.append(safe_cell(html.escape(feedback(report, column.chapter), quote=False)))
        rows.append(row)
    write_rows(path, rows)
    return unmatched
