"""What grading hands to other systems: JUnit, the class's grades as CSV, and the LMS exports.

The LMS exports of one grading run (`./workbook grade --export FORMAT,...`), one module each, all
made from the reports: gradescope.py and prairielearn.py (a results.json per submission),
canvas.py and moodle.py (a gradebook CSV joined to the roster); common.py holds what they share.
"""
from __future__ import annotations

from pathlib import Path

from ...files import read_json, write_json

FORMATS = ("gradescope", "prairielearn", "canvas", "moodle")
NEEDS_ROSTER = ("canvas", "moodle")
EXPORTS = "exports"         # DIR/exports/ holds them
REQUEST = "exports.json"    # DIR/ctest/exports.json: what this run was asked to export (for Slurm's merge job)


def write_exports(reports: list[dict], out_dir: Path, formats: list[str], options) -> list[str]:
    """DIR/exports/gradescope/NAME/results.json, DIR/exports/prairielearn/NAME/results.json,
    DIR/exports/canvas.csv, DIR/exports/moodle.csv for the FORMATS asked, from the records (REPORTS),
    each showing the hidden checks as options.hidden_policy says (grading/hidden.py). Returns a line
    per thing written and per report left out of a gradebook (no roster student has it)."""
    from . import canvas, gradescope, moodle, prairielearn
    folder = out_dir / EXPORTS
    folder.mkdir(parents=True, exist_ok=True)
    said = []
    for name in formats:
        if name in ("gradescope", "prairielearn"):
            module = gradescope if name == "gradescope" else prairielearn
            written = module.write(reports, folder / name, options)
            said.append(f"{name}: {len(written)} results.json in {folder / name}")
        else:
            module = canvas if name == "canvas" else moodle
            unmatched = module.write(reports, folder / f"{name}.csv", options)
            said.append(f"{name}: {folder / f'{name}.csv'} ({len(options.students)} roster students)")
            if unmatched:
                said.append(f"{name}: not in the roster, left out: {', '.join(unmatched)}")
    return said


def save_request(out_dir: Path, request: dict | None) -> None:
    """Keeps what --export asked for in the grading tree (None: nothing, and an earlier run's request goes)."""
    path = out_dir / "ctest" / REQUEST
    if request is None:
        path.unlink(missing_ok=True)
    else:
        write_json(path, request)


def write_requested(out_dir: Path, reports: list[dict], chapters) -> list[str]:
    """The exports this run's request names, from REPORTS (after a local run, or in Slurm's merge job)."""
    from ..roster import read_roster
    from .common import Options
    request = read_json(out_dir / "ctest" / REQUEST)
    if not request:
        return []
    kit = read_json(out_dir / "ctest" / "kit" / "kit.json") or {"checks": {}}
    maxima: dict[str, int] = {}
    for check in kit["checks"].values():
        maxima[check["chapter"]] = maxima.get(check["chapter"], 0) + check["points"]
    students = read_roster(Path(request["roster"]), deadlines=False)[0] if request.get("roster") else []
    policy = (read_json(out_dir / "ctest" / "run.json") or {}).get("hidden_policy", "count")
    options = Options(chapters, maxima, students, request["assignment"], tuple(request["assignment_ids"]),
                      request["per_chapter"], request["moodle_key"], policy)
    return write_exports(reports, out_dir, request["formats"], options)
