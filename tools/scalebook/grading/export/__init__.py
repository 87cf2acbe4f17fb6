"""What grading hands to other systems: JUnit, the class's grades as CSV, and the LMS exports.

The gradebook files of one grading run (`./workbook grade --export FORMAT,...`), one module each,
all made from the reports and joined to the roster: canvas.py (DIR/exports/canvas.csv, Canvas's
gradebook import), moodle.py (DIR/exports/moodle.csv, Moodle's grade import) and prairielearn.py
(DIR/exports/prairielearn.csv, PrairieLearn's question scores upload); common.py holds what they
share. Each module names the importer's code it was checked against, and
tools/tests/grading/test_importers.py replays those rules on the files.

The autograders' results (AUTOGRADER_FORMATS) are no gradebook: each is the file an LMS reads from
its own grading container, one per submission, written when this grader runs there:
`gradescope` (DIR/exports/gradescope/NAME/results.json, which run_autograder copies to
/autograder/results/, grading/autograder.py) and `prairielearn-results`
(DIR/exports/prairielearn-results/NAME/results.json, PrairieLearn's external-grader result).
"""
from __future__ import annotations

from pathlib import Path

from ...files import read_json, write_json

FORMATS = ("canvas", "moodle", "prairielearn")             # gradebook files an instructor imports
AUTOGRADER_FORMATS = ("gradescope", "prairielearn-results")  # results.json inside a grader's container
NEEDS_ROSTER = FORMATS
EXPORTS = "exports"         # DIR/exports/ holds them
REQUEST = "exports.json"    # DIR/ctest/exports.json: what this run was asked to export (for Slurm's merge job)


def write_exports(reports: list[dict], out_dir: Path, formats: list[str], options) -> list[str]:
    """DIR/exports/canvas.csv, moodle.csv, prairielearn.csv and the autograders' NAME/results.json for
    the formats asked, from the records (REPORTS), each showing the hidden checks as
    options.hidden_policy says (grading/hidden.py). Returns a line per thing written, per roster
    student left out of a gradebook and per report no roster student has."""
    from . import canvas, gradescope, moodle, prairielearn
    folder = out_dir / EXPORTS
    folder.mkdir(parents=True, exist_ok=True)
    said = []
    for name in formats:
        if name in AUTOGRADER_FORMATS:
            module = gradescope if name == "gradescope" else prairielearn
            written = module.write(reports, folder / name, options)
            said.append(f"{name}: {len(written)} results.json in {folder / name} (the autograder's file: no LMS "
                        "imports it from here)")
        elif name == "prairielearn":
            said += prairielearn.write_scores(reports, folder / "prairielearn.csv", options)
        else:
            module = canvas if name == "canvas" else moodle
            said += module.write(reports, folder / f"{name}.csv", options)
    return said


def request_problems(request: dict, options) -> list[str]:
    """Why the gradebook files REQUEST asks for could not be imported as asked (a sentence each),
    from what is known before grading (the roster, the names, the ids)."""
    from . import canvas, prairielearn
    from .common import column_names
    from .grades_csv import formula_problem
    problems = []
    for name, _, _ in column_names(options):
        if formula_problem(name):
            problems.append(f"--assignment: the column '{name}' {formula_problem(name)}")
    if "canvas" in request["formats"]:
        problems += [f"--export canvas: {p}" for p in canvas.header_problems(options)]
    if "prairielearn" in request["formats"]:
        problems += prairielearn.qid_problems(options)
    return problems


def check_request(request: dict | None, kit: dict, chapters) -> tuple[str | None, list[str]]:
    """Once the kit's points are known, before grading: why REQUEST cannot be written (moodle.check),
    and notes for the terminal."""
    from . import moodle
    if not request or "moodle" not in request["formats"]:
        return None, []
    return moodle.check(options_of(request, kit_maxima(kit), [], chapters))


def save_request(out_dir: Path, request: dict | None) -> None:
    """Keeps what --export asked for in the grading tree (None: nothing, and an earlier run's request goes)."""
    path = out_dir / "ctest" / REQUEST
    if request is None:
        path.unlink(missing_ok=True)
    else:
        write_json(path, request)


def options_of(request: dict, maxima: dict[str, int], students, chapters, policy: str = "count"):
    """The exports' Options for REQUEST (as export_request made it; a request saved by an older run
    lacks the newer keys)."""
    from .common import Options
    scale = request.get("scale_to")
    return Options(chapters, maxima, students, request["assignment"], tuple(request["assignment_ids"]),
                   request["per_chapter"], request["moodle_key"], policy, scale, tuple(request.get("qids", ())))


def kit_maxima(kit: dict) -> dict[str, int]:
    """Chapter folder -> its points, from a kit (grading/kit.py's kit.json)."""
    maxima: dict[str, int] = {}
    for check in kit["checks"].values():
        maxima[check["chapter"]] = maxima.get(check["chapter"], 0) + check["points"]
    return maxima


def write_requested(out_dir: Path, reports: list[dict], chapters) -> list[str]:
    """The exports this run's request names, from REPORTS (after a local run, or in Slurm's merge job)."""
    from ..roster import read_roster
    request = read_json(out_dir / "ctest" / REQUEST)
    if not request:
        return []
    students = read_roster(Path(request["roster"]), deadlines=False)[0] if request.get("roster") else []
    policy = (read_json(out_dir / "ctest" / "run.json") or {}).get("hidden_policy", "count")
    kit = read_json(out_dir / "ctest" / "kit" / "kit.json") or {"checks": {}}
    options = options_of(request, kit_maxima(kit), students, chapters, policy)
    return write_exports(reports, out_dir, request["formats"], options)
