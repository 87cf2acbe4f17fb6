"""Checks one chapter on the student's code and keeps its record of verdicts.

One chapter checked on the student's code: built, run, and its record of verdicts saved for
progress and hint to read.
"""
from __future__ import annotations

import json

from ..config import CHECK_TIMEOUT, STATE, STUDENT_BUILD
from ..course import Chapter
from ..errors import BuildError
from .. import ui
from . import errata
from .build import build_checks, exercise_objects, shown, track_dir
from .run_checks import CheckResult, exercise_verdicts, explain_dependencies, registered_checks, run_checks


def check_chapter(chapter: Chapter, progress: ui.Progress | None = None,
                  timeout: float = CHECK_TIMEOUT) -> dict:
    """Builds and runs one chapter's checks on the student's code; saves and returns the record
    {exercise: {status, check, message}} that progress and hint read."""
    STATE.mkdir(parents=True, exist_ok=True)
    built = build_checks(STUDENT_BUILD, chapter, STATE, progress)
    names = registered_checks(STUDENT_BUILD, chapter.folder)
    results: dict[str, CheckResult] = {}
    if built.binary is not None:
        compiled = [n for n in names if n.split(" ", 1)[0] not in built.compile_errors]
        if compiled:
            results = run_checks(built.binary, compiled, STATE / f"run-{chapter.folder}", timeout)
    elif not built.compile_errors:
        raise BuildError(f"chapter {chapter.number}'s checks did not build: {built.failure}\n"
                         f"(log: {shown(built.log)})")
    errors = dict(built.compile_errors)
    errors.update(conflicted(chapter, errors))
    if built.binary is None:  # nothing linked: every exercise is down to the compile errors
        for exercise in chapter.exercises:
            errors.setdefault(exercise, built.failure or "the chapter did not link")
    verdicts = exercise_verdicts(chapter.exercises, results, errors)
    # An exercise that calls one that did not compile cannot run: say so, naming that one.
    if errors and built.binary is not None:
        sources = {e: (source, obj) for e, source, obj in exercise_objects(STUDENT_BUILD, chapter)}
        explain_dependencies(verdicts, errors, sources, chapter.functions_of())
    record = {e: {"status": v.status, "check": v.name, "message": v.message}
              for e, v in verdicts.items()}
    (STATE / f"{chapter.folder}.json").write_text(json.dumps(record, indent=1))
    return record


def conflicted(chapter: Chapter, errors: dict[str, str]) -> dict[str, str]:
    """For each exercise that does not compile because its file holds git's conflict markers, what
    to do next (errata.marker_message) instead of the compiler's "conflict marker in file"."""
    found = {}
    folder = track_dir(STUDENT_BUILD) / chapter.folder
    for exercise in errors:
        path = folder / chapter.source_of(exercise)
        try:
            lines = errata.conflict_lines(path.read_text(errors="replace"))
        except OSError:
            continue
        if lines:
            found[exercise] = errata.marker_message(shown(path), lines, errata.merging(path.parent))
    return found


def load_record(chapter: Chapter) -> dict:
    path = STATE / f"{chapter.folder}.json"
    return json.loads(path.read_text()) if path.exists() else {}
