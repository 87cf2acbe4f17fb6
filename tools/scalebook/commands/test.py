"""./workbook test [CTEST_ARGS]: build the reference track and run every test (maintainers and CI)."""
from __future__ import annotations

import subprocess

from ..config import REFERENCE_BUILD, ROOT
from .. import ui
from ..loop import packages
from ..loop.build import build, configure
from ..loop.setup import instructors_only


def main(ctest_args: list[str]) -> int:
    instructors_only("the maintainers' test")
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
