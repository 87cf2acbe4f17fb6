"""The LMS formats as their own documentation states them: the structure the exports are tested against.

These are our model of each format; whether the importers accept the gradebook files is checked by
replays of the importers' own code (importers/, test_importers.py).

Written from /work/shared/design/FORMATS.md (sections 3a-3d) and the sources it names, checked
against these sources where they are public:
- Gradescope: gradescope/autograder_samples docs/specs.md ("Output format"; the field list below
  matches the version at 47aed8f: score, execution_time, output, visibility, stdout_visibility,
  extra_data, tests [score, max_score, name, number, output, tags, visibility, extra_data],
  leaderboard, and the visibility values hidden, after_due_date, after_published, visible); the
  test `status` and the `*_format` fields come from the later version FORMATS.md cites (af5dee4).
- PrairieLearn: docs/externalGrading.md, "Grading results" (score in [0.0, 1.0], the only mandatory
  field when gradable; gradable; format_errors a string or an array of strings; message, output,
  images, tests [name, description, points, max_points, message, output, images]; at most 1 MB).
- Canvas: the gradebook export's header and its Points Possible row (FORMATS.md 3c, after the
  OSU and nemogb guides it cites; assignment columns carry the id in parentheses).
- Moodle: grade/import/csv/classes/load_data.php (moodle/moodle): a user is found by userid,
  useridnumber, useremail or username; a grade of '' or '-' is no grade (committed as NULL: it
  clears the grade there); a row whose user is not found (a blank key included) stops the whole
  import.
Each validate_* returns a list of problems (empty when the data follows the format).
"""
from __future__ import annotations

import csv
import io
import json

GRADESCOPE_TOP = {"score", "execution_time", "output", "output_format", "test_output_format", "test_name_format",
                  "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard"}
GRADESCOPE_TEST = {"score", "max_score", "status", "name", "name_format", "number", "output", "output_format", "tags",
                   "visibility", "extra_data"}
GRADESCOPE_VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}
GRADESCOPE_TEXT_FORMATS = {"text", "html", "simple_format", "md", "ansi"}
GRADESCOPE_STATUS = {"passed", "failed"}
# What issue 32 asks each export to carry (beyond what the format merely allows).
# No execution_time: a report's seconds would tell how long the hidden checks ran (grading/hidden.py).
GRADESCOPE_WANTED_TOP = {"score", "output", "tests"}
GRADESCOPE_WANTED_TEST = {"name", "number", "score", "max_score", "status", "visibility", "tags"}

PRAIRIELEARN_TOP = {"gradable", "score", "format_errors", "message", "output", "images", "tests"}
PRAIRIELEARN_TEST = {"name", "description", "points", "max_points", "message", "output", "images"}
PRAIRIELEARN_LIMIT = 1 << 20

CANVAS_FIXED = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
CANVAS_POINTS_POSSIBLE = "Points Possible"

MOODLE_KEYS = {"Email address": "useremail", "ID number": "useridnumber"}
MOODLE_NO_GRADE = ("", "-")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def validate_gradescope(data: dict) -> list[str]:
    problems = [f"unknown top-level field {k}" for k in data if k not in GRADESCOPE_TOP]
    problems += [f"missing {k}" for k in GRADESCOPE_WANTED_TOP if k not in data]
    if not is_number(data.get("score")):
        problems.append("score is not a number")
    if "execution_time" in data and not is_number(data["execution_time"]):
        problems.append("execution_time is not a number of seconds")
    if not isinstance(data.get("output", ""), str):
        problems.append("output is not a string")
    for key in ("output_format", "test_output_format", "test_name_format"):
        if key in data and data[key] not in GRADESCOPE_TEXT_FORMATS:
            problems.append(f"{key} {data[key]!r} is not a format")
    for key in ("visibility", "stdout_visibility"):
        if key in data and data[key] not in GRADESCOPE_VISIBILITY:
            problems.append(f"{key} {data[key]!r} is not a visibility")
    if "extra_data" in data and not isinstance(data["extra_data"], dict):
        problems.append("extra_data is not an object")
    numbers = set()
    for index, test in enumerate(data.get("tests", [])):
        where = f"tests[{index}]"
        problems += [f"{where}: unknown field {k}" for k in test if k not in GRADESCOPE_TEST]
        problems += [f"{where}: missing {k}" for k in GRADESCOPE_WANTED_TEST if k not in test]
        if not (is_number(test.get("score")) and is_number(test.get("max_score"))):
            problems.append(f"{where}: score and max_score are not numbers")
        if test.get("status") not in GRADESCOPE_STATUS:
            problems.append(f"{where}: status {test.get('status')!r}")
        if not isinstance(test.get("number"), str) or test.get("number") in numbers:
            problems.append(f"{where}: number {test.get('number')!r} is not a string unique among the tests")
        numbers.add(test.get("number"))
        if test.get("visibility") not in GRADESCOPE_VISIBILITY:
            problems.append(f"{where}: visibility {test.get('visibility')!r}")
        if not (isinstance(test.get("tags"), list) and all(isinstance(t, str) for t in test["tags"])):
            problems.append(f"{where}: tags is not a list of strings")
        if "output" in test and not isinstance(test["output"], str):
            problems.append(f"{where}: output is not a string")
    return problems


def validate_prairielearn(text: str) -> list[str]:
    problems = [] if len(text.encode()) <= PRAIRIELEARN_LIMIT else ["larger than 1 MB"]
    data = json.loads(text)
    problems += [f"unknown top-level field {k}" for k in data if k not in PRAIRIELEARN_TOP]
    gradable = data.get("gradable", True)
    if not isinstance(gradable, bool):
        problems.append("gradable is not a boolean")
    if gradable:
        score = data.get("score")
        if not (is_number(score) and 0.0 <= score <= 1.0):
            problems.append(f"score {score!r} is not a number in [0, 1]")
    else:
        errors = data.get("format_errors")
        if not (isinstance(errors, str) or (isinstance(errors, list) and all(isinstance(e, str) for e in errors))):
            problems.append("not gradable without format_errors (a string or a list of strings)")
    tests = data.get("tests", [])
    for index, test in enumerate(tests):
        problems += [f"tests[{index}]: unknown field {k}" for k in test if k not in PRAIRIELEARN_TEST]
        if not (is_number(test.get("points")) and is_number(test.get("max_points"))):
            problems.append(f"tests[{index}]: points and max_points (every test needs both for points to show)")
        for key in ("name", "description", "message", "output"):
            if key in test and not isinstance(test[key], str):
                problems.append(f"tests[{index}]: {key} is not a string")
    return problems


def rows_of(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def formula_cells(rows: list[list[str]]) -> list[str]:
    """Cells a spreadsheet would run as a formula: one starting with '=', or with '+', '-' or '@' and
    holding a function call's '(' or a link's '|' (OWASP's CSV injection payloads). An identifier such
    as '-kim@uni.example' or '@jon' is no formula: a gradebook must get it as it is."""
    return [cell for row in rows for cell in row
            if cell.startswith("=") or (cell.startswith(FORMULA_STARTS) and ("(" in cell or "|" in cell))]


def validate_canvas(text: str, assignment_columns: int, with_ids: bool) -> list[str]:
    rows = rows_of(text)
    problems = []
    if len(rows) < 2:
        return ["no header and Points Possible rows"]
    header, possible = rows[0], rows[1]
    if header[:5] != CANVAS_FIXED:
        problems.append(f"header starts {header[:5]}, not {CANVAS_FIXED}")
    columns = header[5:]
    if len(columns) != assignment_columns:
        problems.append(f"{len(columns)} assignment columns, not {assignment_columns}")
    if with_ids and not all(c.endswith(")") and c[:-1].rsplit(" (", 1)[-1].isdigit() for c in columns):
        problems.append(f"assignment columns without '(ID)': {columns}")
    if possible[0].strip() != CANVAS_POINTS_POSSIBLE or any(possible[1:5]):
        problems.append(f"second row is not the Points Possible row: {possible[:5]}")
    for cell in possible[5:]:
        if not cell.replace(".", "", 1).isdigit():
            problems.append(f"points possible {cell!r} is not a number")
    for row in rows[2:]:
        if len(row) != len(header):
            problems.append(f"row {row[:3]} has {len(row)} cells, not {len(header)}")
        if not (row[0] or row[1] or row[2]):
            problems.append(f"row {row} names no student (Student, ID or SIS User ID)")
        for cell in row[5:]:
            if cell and not cell.replace(".", "", 1).isdigit():
                problems.append(f"score {cell!r} is not a number")
    problems += [f"formula cell {c!r}" for c in formula_cells(rows)]
    return problems


def validate_moodle(text: str, grade_columns: int) -> list[str]:
    rows = rows_of(text)
    if not rows:
        return ["empty"]
    header, problems = rows[0], []
    if header[0] not in MOODLE_KEYS:
        problems.append(f"first column {header[0]!r} is not a key Moodle maps (Email address, ID number)")
    if len(header) != 1 + 2 * grade_columns:
        problems.append(f"{len(header)} columns, not the key and {grade_columns} grade and feedback pairs")
    for index in range(grade_columns):
        grade, feedback = header[1 + 2 * index], header[2 + 2 * index]
        if not feedback.startswith(grade) or "feedback" not in feedback:
            problems.append(f"column {grade!r} is not followed by its feedback column (got {feedback!r})")
    for row in rows[1:]:
        if len(row) != len(header):
            problems.append(f"row {row[:1]} has {len(row)} cells")
        if not row[0].strip():
            problems.append("a row with a blank key (Moodle stops the whole import there)")
        for index in range(grade_columns):
            cell = row[1 + 2 * index]
            if cell not in MOODLE_NO_GRADE and not cell.replace(".", "", 1).isdigit():
                problems.append(f"grade {cell!r} is neither a number nor Moodle's no-grade")
            if "<" in row[2 + 2 * index] or ">" in row[2 + 2 * index]:
                problems.append(f"feedback holds markup Moodle would render: {row[2 + 2 * index][:80]!r}")
    problems += [f"formula cell {c!r}" for c in formula_cells(rows)]
    return problems
