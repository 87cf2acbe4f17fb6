"""./workbook setup: install the Debian packages scalebook needs (as root), or name them."""
from __future__ import annotations

from .. import ui
from ..loop import packages


def arguments(parser) -> None:
    pass


def run(args) -> int:
    packages.ensure("workbook")
    ui.say("Every package scalebook needs is installed. Next: ./workbook")
    return 0
