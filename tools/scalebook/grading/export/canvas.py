"""Canvas's gradebook CSV, joined to the roster, ready for Grades > Import.

The header Canvas's own export has (Student, ID, SIS User ID, SIS Login ID, Section, then one
`ASSIGNMENT (ID)` column per assignment), the `Points Possible` row under it, and a row per roster
student with a graded submission: the roster's name, canvas_id, id (as the SIS User ID), login and
section, written as they are (the roster refused what Canvas could not match), and the points.

What Canvas's importer does with it (instructure/canvas-lms app/models/gradebook_importer.rb, the
copy the search index holds: 36,115 characters, with custom grade statuses and first/last name
columns; tools/tests/grading/importers/canvas_import.rb replays it on our files):
- lines 749-762: Ruby's CSV reads the file with the converters of lines 104-124, so a cell of digits,
  dots and commas is rewritten as a decimal number;
- lines 409-458: the header is valid when it starts Student, ID, then SIS User ID and SIS Login ID,
  and the fifth cell is Section;
- lines 472-490: an assignment column whose header holds "Current Score", "Final Grade" or another
  of NON_ASSIGNMENT_COLUMN_HEADERS anywhere in it is dropped without a word (header_problems);
- lines 498-513 and Assignment.title_and_id (app/models/assignment.rb, the same in every version
  the index holds: /\\A(.*)\\s\\((\\d+)\\)\\z/): a header ending in " (digits)" names the assignment
  with that id; without one, Canvas looks for an assignment of that title or makes a new one;
- lines 556-590: a row's student is the ID column read with to_i, else the SIS User ID, else the SIS
  Login ID, else a student whose name or sortable name is the Student cell, else a new student;
- lines 734 and 855-872: a row whose first cell holds "Points Possible" sets the points possible, and
  an empty grade where Canvas has a score counts as a change: so a student with nothing graded has
  no row (common.py).
"""
from __future__ import annotations

import re
from pathlib import Path

from .common import Options, columns, gradebook, grade, number, said, shown_maximum, write_rows
from .grades_csv import formula_problem

HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
POINTS_POSSIBLE = "    Points Possible"
# gradebook_importer.rb lines 472-482, matched anywhere in a header (line 489: an unanchored regexp).
NON_ASSIGNMENT_COLUMN_HEADERS = ("Current Score", "Current Points", "Current Grade", "Final Score", "Final Points",
                                 "Final Grade", "Override Score", "Override Grade", "Override Status")
TITLE_AND_ID = re.compile(r"(.*)\s\((\d+)\)", re.DOTALL)   # assignment.rb's title_and_id


def header_problems(options: Options) -> list[str]:
    """Why Canvas would not read each assignment column as the assignment OPTIONS name (a sentence
    each; none when it would)."""
    from ..roster import canvas_number
    problems = []
    for column in columns(options, with_ids=True):
        name = column.header
        reserved = [h for h in NON_ASSIGNMENT_COLUMN_HEADERS if h in name]
        if reserved:
            problems.append(f"the column '{name}' holds '{reserved[0]}', one of Canvas's own column headers "
                            f"({', '.join(NON_ASSIGNMENT_COLUMN_HEADERS)}): Canvas's import drops such a column "
                            "without a word; name the assignment otherwise")
        elif not options.assignment_ids and TITLE_AND_ID.fullmatch(name):
            problems.append(f"the column '{name}' ends in ' (digits)', which Canvas reads as an assignment's id "
                            f"({TITLE_AND_ID.fullmatch(name).group(2)}): give the id with --assignment-id, or name "
                            "the assignment otherwise")
        elif canvas_number(name) != name:
            problems.append(f"the column '{name}' is a number to Canvas's CSV reader, which would read it as "
                            f"'{canvas_number(name)}'")
        elif formula_problem(name):
            problems.append(f"the column '{name}' {formula_problem(name)}")
    return problems


def write(reports: list[dict], path: Path, options: Options) -> list[str]:
    """Writes PATH; returns what the terminal says of it (see common.said)."""
    grade_columns = columns(options, with_ids=True)
    book = gradebook(reports, options.students)
    rows = [HEADER + [c.header for c in grade_columns],
            [POINTS_POSSIBLE, "", "", "", ""] + [number(shown_maximum(c, options)) for c in grade_columns]]
    for student, report in book.rows:
        rows.append([student.name, student.canvas_id, student.id, student.login, student.section,
                     *[grade(report, c, options) for c in grade_columns]])
    write_rows(path, rows)
    return said("canvas", path, book)

