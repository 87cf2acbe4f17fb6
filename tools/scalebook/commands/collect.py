"""./workbook collect ROSTER --deadline WHEN [--now] [--out DIR]: the class's repositories at the deadline.

Collect each student's repository at the deadline into DIR/ID/ (a submission folder grading takes),
with DIR/collection.json and DIR/collection.txt saying what was collected and what was late. The
steps are grading/roster.py (the roster), grading/trust.py (which repository a path names, and
whose) and grading/collect.py (the repositories). Exit status 1 when a roster line or a repository's
path was refused, or when nothing could be collected.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

from .. import ui
from ..course import all_chapters
from ..errors import UsageError, WorkbookError
from ..grading.collect import REPORT, SUMMARY, collect_class
from ..grading.roster import parse_when, read_roster, time_zone
from ..grading.supervise import CHILDREN
from ..loop.setup import instructors_only


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Collect every student's repository of ROSTER (a CSV: id,name,email,repository[,deadline]) at the "
        "deadline: the last commit of its default branch before the first one dated after the student's deadline, written "
        "into DIR/ID/exercises/, with DIR/collection.json and DIR/collection.txt. Commit dates are set by the "
        "student's machine: --now takes what is there now instead. Running it again fetches only what changed.")
    parser.add_argument("roster", type=Path, metavar="ROSTER")
    parser.add_argument("--deadline", metavar="WHEN",
                        help="ISO 8601 with an offset, e.g. 2025-03-01T23:59:00+01:00 (or without one and --timezone); "
                             "a roster's deadline column overrides it per student (an extension)")
    parser.add_argument("--now", action="store_true",
                        help="take the tip of each default branch whatever its commit date (the report still lists "
                             "the commits the deadline would call late)")
    parser.add_argument("--timezone", metavar="ZONE",
                        help="the zone of every deadline written without an offset, e.g. Europe/Berlin "
                             "(without it such a deadline is refused)")
    parser.add_argument("--out", type=Path, default=Path("submissions"), metavar="DIR",
                        help="where the submission folders go (default: submissions/)")
    parser.add_argument("--jobs", type=int, default=8, metavar="N", help="repositories fetched at once (default 8)")
    parser.add_argument("--repo-timeout", type=float, default=120, metavar="S",
                        help="seconds one repository's fetch may take (default 120)")


def run(args: argparse.Namespace) -> int:
    instructors_only("collect")
    if shutil.which("git") is None:
        raise WorkbookError("collect needs git: apt-get install git")
    if args.jobs < 1 or args.repo_timeout <= 0:
        raise UsageError("--jobs must be at least 1 and --repo-timeout more than 0")
    if args.timezone:
        time_zone(args.timezone)
    deadline = None
    if args.deadline:
        try:
            deadline = parse_when(args.deadline, args.timezone, "--deadline")
        except ValueError as error:
            raise UsageError(str(error)) from None
    elif not args.now:
        raise UsageError("give --deadline WHEN (or --now to take what is there now)")
    students, refused = read_roster(args.roster, args.timezone)
    out = args.out.resolve()
    os.umask(0o077)  # the collection (whole histories, the class's work) is the collecting user's alone
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {args.out}: not a folder")
    print(f"Collecting {len(students)} repositories into {out}" +
          (f" ({len(refused)} roster line{'s' if len(refused) > 1 else ''} refused)" if refused else ""), flush=True)
    width = max([len(s.id) for s in students] + [2])

    def progress(entry: dict) -> None:
        colour = ui.green if entry["status"] == "collected" else ui.red if entry["status"] == "refused" else ui.yellow
        detail = (entry.get("commit") or "")[:10] or entry.get("message", "")
        later = f" ({entry['later_count']} later)" if entry.get("later_count") else ""
        flags = "".join(f"\n  {' ' * width}  {ui.red('FLAGGED')}: {flag}" for flag in entry.get("flags", []))
        print(f"  {entry['id'].ljust(width)}  {colour(entry['status'])}  {detail}{later}{flags}", flush=True)

    CHILDREN.install("collect")  # Ctrl-C ends every git this run started, at once
    report = collect_class(students, refused, out, all_chapters(), deadline, args.now, args.repo_timeout,
                           args.jobs, args.roster.resolve().parent, progress)
    for line in refused:
        print(f"  {ui.red('refused')} roster line {line.line}: {line.reason}")
    collected = sum(e["status"] == "collected" for e in report["students"])
    turned_away = sum(e["status"] == "refused" for e in report["students"])
    print(f"{collected} of {len(report['students'])} collected in {report['seconds']:.1f} s; "
          f"{out / SUMMARY}, {out / REPORT}")
    if students and not collected:
        print(ui.red("collect: nothing could be collected (each student's line in the report says why)"),
              file=sys.stderr)
        return 1
    print(f"grade them with: ./workbook grade --roster {args.roster} {os.path.relpath(out)}/*/")
    return 1 if turned_away else 0
