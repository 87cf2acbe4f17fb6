"""./workbook test [CTEST_ARGS]: lint the course, build the reference track and run every test (maintainers and CI).

./workbook test [CTEST_ARGS]: lint the course (./workbook lint, seconds), then build the reference
track (its checks, the stubs' proof, the bug zoo, the book) and run every test but those labelled
long, with ctest --preset reference and CTEST_ARGS (e.g. -R 'REGEX', -L LABEL, -j 2). The course's
problems stop it before the build.
"""
from __future__ import annotations

import subprocess

from ..config import REFERENCE_BUILD, ROOT
from .. import ui
from ..loop import packages
from . import lint
from ..loop.build import build, configure
from ..loop.setup import instructors_only


def main(ctest_args: list[str]) -> int:
    instructors_only("the maintainers' test")
    if ctest_args[:1] in (["-h"], ["--help"]):
        ui.say(__doc__.split("\n\n", 1)[1].strip())
        return 0
    ui.say(ui.bold("Linting the course..."))
    if lint.report() != 0:
        ui.say(ui.red("the course has problems (above): fix them, then ./workbook test again"))
        return 1
    packages.ensure("test")  # and what its tests need: mutation, Slurm, pages, browser, editor
    configure("reference", REFERENCE_BUILD, REFERENCE_BUILD / "workbook")
    progress = ui.Progress("Building the reference track, its checks, the stubs' proof, the bug zoo "
                           "and the book...")
    code, output = build(REFERENCE_BUILD, ["all"], REFERENCE_BUILD / "workbook" / "build.log", progress)
    progress.done()
    if code != 0:
        ui.say(output[-6000:])
        ui.say(ui.red("the reference build failed"))
        return 1
    ui.say(ui.bold("Running every test..."))
    command = ["ctest", "--preset", "reference"]
    command += ctest_args
    return subprocess.run(command, cwd=ROOT, stdin=subprocess.DEVNULL).returncode
