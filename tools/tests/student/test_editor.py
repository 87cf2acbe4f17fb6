#!/usr/bin/env python3
"""Editors understand the tree: clangd, given a build's compile_commands.json (the one `.clangd`
points at is build/student's, which the first ./workbook makes), reports no error in any exercise
file. A header it cannot find, a flag it cannot parse or a PCH it cannot read would show as errors
on every include of a student's editor.

    test_editor.py BUILD_DIR     (a configured build whose compile commands cover exercises/)

Prints "skipped: ..." and exits 0 where clangd is not installed (CTest then reports it skipped)."""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.harness import ROOT


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", type=Path, help="a configured build folder with compile_commands.json")
    args = parser.parse_args()
    clangd = shutil.which("clangd")
    if clangd is None:
        print("skipped: clangd is not installed (Debian's package clangd)")
        return 0
    database = args.build / "compile_commands.json"
    if not database.exists():
        print(f"FAIL {database} does not exist")
        return 1
    config = (ROOT / ".clangd").read_text()
    failures = []
    if not re.search(r"CompilationDatabase:\s*build/student\b", config):
        failures.append(".clangd does not point clangd at build/student")
    files = sorted((ROOT / "exercises").glob("*/*.cpp"))
    for path in files:
        result = subprocess.run([clangd, f"--check={path}", f"--compile-commands-dir={args.build}",
                                 "--log=error"], capture_output=True, text=True, timeout=300)
        errors = [line for line in result.stderr.splitlines() if re.search(r"\[[a-z_]+\] Line \d+:|E\[", line)
                  and "error" in line.lower()]
        count = re.search(r"All checks completed, (\d+) errors", result.stderr)
        bad = result.returncode != 0 or (count is not None and count.group(1) != "0") or errors
        print(("FAIL " if bad else "ok   ") + str(path.relative_to(ROOT)), flush=True)
        if bad:
            failures.append(f"{path.relative_to(ROOT)}: {' | '.join(errors[:3]) or result.stderr[-400:]}")
    for failure in failures:
        print(f"FAIL {failure}")
    print(f"{len(files)} exercise files, {len(failures)} with errors" if files else "FAIL no exercise files")
    return 1 if failures or not files else 0


if __name__ == "__main__":
    sys.exit(main())
