"""Setting up the student's build: the Debian packages, the configured build, the book on request."""
from __future__ import annotations

from ..config import STATE, STUDENT_BUILD
from ..errors import BuildError
from .. import ui
from . import packages
from .build import build, configure, shown


def student_setup(build_docs: bool = False) -> None:
    packages.ensure("workbook")
    if not (STUDENT_BUILD / "build.ninja").exists():
        ui.say(ui.bold("Configuring the build (once)..."))
    configure("student", STUDENT_BUILD, STATE)
    if build_docs:
        progress = ui.Progress("Building the library, the lessons and the book...")
        code, _ = build(STUDENT_BUILD, ["lib_tests", "docs"], STATE / "workbook.build.log", progress)
        progress.done()
        if code != 0:
            raise BuildError("the workbook itself failed to build:\n" +
                             "\n".join((STATE / "workbook.build.log").read_text().splitlines()[-25:]) +
                             f"\n(log: {shown(STATE / 'workbook.build.log')})")


def instructors_only(what: str) -> None:
    """Refuses, in the student edition, what only the instructor's tree can do."""
    from ..config import EDITION, is_edition
    from ..errors import UsageError
    if is_edition():
        raise UsageError(f"{what} is not part of the student edition "
                         f"({EDITION.read_text().strip()})")
