"""Moodle's grade import CSV (Grades > Import > CSV file): the key column, then each grade column
followed by its feedback column, so that one import brings both (Moodle drops the grades of a
feedback column imported alone).

The key is the student's email address (map it to "Email address", useremail) or their id (map it
to "ID number", useridnumber), as --moodle-key says, written as the roster has it: a key is an
identifier, never rewritten (the roster refused one Moodle could not hold or a spreadsheet would
compute). Moodle shows imported feedback as formatted text: its characters that are markup (<, >,
&) are written as HTML entities, so that a submission's message shows as the text it is.

What Moodle does with the file (moodle/moodle at 6374475dc3cf, "weekly release 4.4dev", 2023-11-24;
tools/tests/grading/importers/moodle_import.php replays it on our files):
- lib/csvlib.class.php lines 98-173: the text as UTF-8 without a byte-order mark, \r\n made \n, read
  with fgetcsv; a row with another number of cells than the header stops the import (csvweirdcolumns);
- grade/import/csv/classes/load_data.php lines 221-264 and 526-530: the key must match exactly one
  user (emails without case, ID numbers exactly), or the whole import stops at that row
  (usermappingerror);
- lines 336-349: '' and '-' are "no grade", anything else must be a number (badgrade);
- lines 161-174: a grade above 100 stops the whole import (gradevaluetoobig), unless the site enables
  unlimited grades: then the limit is its grade point maximum. In Moodle 5.0's development code
  (Build 20241007) the limit is the grade item's own maximum (and minimum) instead, unless the site
  enables unlimited grades. Hence --scale-to, and a total above 100 refused without it (check);
- grade/import/lib.php lines 115-124 and lib/grade/grade_item.php lines 1872-1878: "no grade" is
  committed as a grade of NULL, which clears a grade entered by hand: so a student with nothing
  graded has no row (common.py), and keeps the grade Moodle has.
"""
from __future__ import annotations

import html
from pathlib import Path

from .common import Options, columns, feedback, gradebook, grade, number, said, shown_maximum, views, write_rows
from .grades_csv import safe_cell

KEYS = {"email": "Email address", "idnumber": "ID number"}
DEFAULT_MAXIMUM = 100   # load_data.php line 162: the largest grade an import takes without unlimited grades


def check(options: Options) -> tuple[str | None, list[str]]:
    """Before grading, with the kit's maxima known: why moodle.csv cannot be written as asked (a
    column out of more than 100 points without --scale-to), and notes for the terminal."""
    over = [(c.header, c.maximum) for c in columns(options, with_ids=False) if shown_maximum(c, options) > DEFAULT_MAXIMUM]
    if over and options.scale_to is None:
        name, maximum = over[0]
        return (f"--export moodle: '{name}' is out of {maximum} points, and Moodle's import refuses any grade above "
                f"{DEFAULT_MAXIMUM} (and stops the whole import there) unless the site enables unlimited grades: give "
                f"--scale-to {DEFAULT_MAXIMUM} to write the points scaled to a grade out of {DEFAULT_MAXIMUM}, or "
                f"--scale-to {maximum} to keep the points where your site allows grades up to {maximum}"), []
    notes = [f"moodle: grades out of {number(shown_maximum(c, options))} in '{c.header}': map it to a grade item whose "
             "maximum grade is that" for c in columns(options, with_ids=False)]
    if over:
        notes.append(f"moodle: grades up to {number(options.scale_to)}: Moodle imports grades above {DEFAULT_MAXIMUM} "
                     "only where the site enables unlimited grades (Site administration > Grades > General settings) "
                     f"with a grade point maximum of at least {number(options.scale_to)}")
    return None, notes


def write(reports: list[dict], path: Path, options: Options) -> list[str]:
    """Writes PATH; returns what the terminal says of it (see common.said). A file Moodle would refuse
    (check) is not written, and the terminal says why (./workbook grade refuses it before grading)."""
    refusal, notes = check(options)
    if refusal:
        path.unlink(missing_ok=True)
        return [f"moodle: not written: {refusal}"]
    grade_columns = columns(options, with_ids=False)
    book = gradebook(views(reports, options), options.students)  # the feedback: the students'
    header = [KEYS[options.moodle_key]]
    for column in grade_columns:
        header += [column.header, f"{column.header} (feedback)"]
    rows = [header]
    for student, report in book.rows:
        row = [student.email if options.moodle_key == "email" else student.id]
        for column in grade_columns:
            row.append(grade(report, column, options))
            row.append(safe_cell(html.escape(feedback(report, column.chapter), quote=False)))
        rows.append(row)
    write_rows(path, rows)
    return said("moodle", path, book) + notes
