"""./workbook time WHAT: the maintainers' timing scripts (edit-loop, grading, pages, analysis), one module each."""
from __future__ import annotations

import importlib

SCRIPTS = {"edit-loop": "edit_loop", "grading": "grading", "pages": "pages", "analysis": "analysis"}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in SCRIPTS:
        print(f"usage: ./workbook time {{{','.join(SCRIPTS)}}} [--help | OPTIONS]")
        return 0 if argv[:1] in (["--help"], ["-h"]) else 2
    return importlib.import_module(f"maintainer.timing.{SCRIPTS[argv[0]]}").main(argv[1:])
