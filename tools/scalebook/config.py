"""Where things are and the defaults every command shares.

Where things are and the defaults every command shares: the tree's folders, the builds, the
student's state, and the limits a check runs under.
"""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]          # the workbook's tree
TOOLS = ROOT / "tools"
STUDENT_BUILD = ROOT / "build" / "student"
REFERENCE_BUILD = ROOT / "build" / "reference"
GRADING_BUILD = ROOT / "build" / "grading-kit"
STATE = STUDENT_BUILD / "workbook"                  # the student's records, hints seen, logs
STAMP = ROOT / "build" / ".packages-ok"
EDITION = ROOT / "EDITION"                          # present in the student edition only
MAINTAINER = TOOLS / "maintainer"                   # absent in the student edition
BENCH_RUNNERS = TOOLS / "scalebook" / "bench"       # bench/chNN.py runs chapter NN's benchmark
LIB_HEADERS = ROOT / "lib" / "include" / "scalebook"

CHECK_TIMEOUT = 5.0   # seconds one check may run in ./workbook check, as in grading
