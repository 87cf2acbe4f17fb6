"""PrairieLearn's external grader: the image `./workbook prairielearn-grader` writes the build context of.

PrairieLearn's documented contract (docs/externalGrading.md, "The Grading Process" and "Grading
results"): the student's files are in /grade/student when the container starts; the entrypoint
must have written /grade/results/results.json (a score in [0, 1], tests with points and
max_points) when it ends; /grade/results is not made for it. The image's entrypoint,
/scalebook/prairielearn, runs run() below: this workbook's grader on /grade/student, exactly as
./workbook grade does (hidden checks included, in the sandbox the container allows: the uid box
under Docker's default security, grading/sandbox.py), its prairielearn-results export
(grading/export/prairielearn.py) copied to /grade/results/results.json. A grading that fails writes no results.json: PrairieLearn
then reports the job as failed, never a score the grader did not give.
"""
from __future__ import annotations

from pathlib import Path

from .autograder import grade_one

GRADE = Path("/grade")

ENTRYPOINT = """#!/bin/sh
# PrairieLearn's external grader runs this in the image (written by ./workbook prairielearn-grader):
# this workbook's grader on /grade/student, its PrairieLearn export copied to /grade/results/results.json.
cd "$(dirname "$0")/tools" && exec /usr/bin/python3 -m scalebook.grading.autograder --prairielearn
"""


def run(grade: Path = GRADE) -> int:
    """Grade GRADE/student into GRADE/results/results.json (work in GRADE/work, root's alone)."""
    return grade_one(grade / "student", grade / "work", grade / "results" / "results.json", "prairielearn-results",
                     "prairielearn")
