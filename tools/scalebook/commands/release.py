"""./workbook release DIR [-m MESSAGE]: write the student edition, or add an erratum to it.

./workbook release DIR [-m MESSAGE]: write the student edition of this workbook into DIR, or
add what changed since the last release to the edition in DIR as one commit.

The edition is what a graded course hands out: every chapter's page, contract, checks, hints and
exercise stubs, the library and the workbook command, a README written for students
(docs/student-README.md, filled in at release), but no solutions/, no bug zoo (its mutants are
lines of the solutions), no instructor-only sections of the pages, none of the maintainers' tests
or timing scripts. The book's lesson output and figures were made by the reference at release
time and ship in docs/prebuilt/, with a copy of the exercise stubs as released
(docs/prebuilt/CHAPTER/stubs): the book shows those, whatever the student's exercises/ hold; so do
the benchmarks' figures as the reference measured them (docs/prebuilt/CHAPTER/bench.txt), which
`./workbook bench` in the edition shows beside the student's own.

A new or empty DIR gets a git history of its own, one commit. A DIR holding an edition (its EDITION
file and git history, nothing uncommitted) gets one more commit holding exactly what changed in
this tree since, with the instructor's MESSAGE: students `git pull` it, and their committed work
in exercises/ merges with it. The benchmarks are measured again only with --measure, so that an
erratum carries nothing but the erratum. Any other DIR is refused before anything is done.
Submissions made from the edition are graded by this tree: `./workbook grade`.
"""
from __future__ import annotations

import argparse
import subprocess
import time
from pathlib import Path

from ..config import ROOT, commit
from ..course import Chapter, all_chapters
from ..loop.setup import instructors_only
from .. import ui
from ..release import (FIRST_CHECK_CHAPTER, author, ccache_dir, first_check, git, measure_benchmarks, readme,
                       refusal, run_lessons, stage, tracked, write_files)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="./workbook release", description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[2:]))
    parser.add_argument("dir", type=Path, metavar="DIR", help="a new or empty folder, or an edition released before")
    parser.add_argument("-m", "--message", help="what changed, for the students' git log (required to update "
                                                "an edition)")
    parser.add_argument("--measure", action="store_true",
                        help="measure the benchmarks again when updating an edition (a new one always does)")
    parser.add_argument("--no-bench", action="store_true", help="do not measure the benchmarks (the edition "
                                                                "then shows no release figures)")
    args = parser.parse_args(argv)
    args.target = args.dir.resolve()
    why = refusal(args.target)
    if why:
        parser.error(why)
    args.update = args.target.exists() and any(args.target.iterdir())
    if args.update and not args.message:
        parser.error(f"{args.target} holds an edition: say what changed with -m MESSAGE (students read it in git log)")
    return args


def benchmark_figures(args, chapters: list[Chapter]) -> dict[str, str]:
    """Stage 2: the figures of the last release (an update), measured again, or none (--no-bench)."""
    kept: dict[str, str] = {}
    if args.update:  # figures of the last release, unless measured again
        for chapter in chapters:
            path = args.target / "docs" / "prebuilt" / chapter.folder / "bench.txt"
            if path.exists():
                kept[str(path.relative_to(args.target))] = path.read_text()
    if args.no_bench:
        ui.say("  skipped (--no-bench)")
        return {}
    if args.update and not args.measure:
        ui.say(f"  kept from the last release ({len(kept)} chapters; --measure measures them again)")
        return kept
    return measure_benchmarks(chapters)


def say_published(args, source: str, changed: str, started: float) -> None:
    """What was released, and how to hand it to the students."""
    target = args.target
    head = git("rev-parse", "--short", "HEAD", cwd=target).strip()
    branch = git("rev-parse", "--abbrev-ref", "HEAD", cwd=target).strip()
    count = len(git("rev-list", "HEAD", cwd=target).split())
    ui.say("")
    ui.say(ui.bold(f"The student edition is in {target}"))
    ui.say(f"  commit {head} on {branch} ({count} commit{'s' if count > 1 else ''}), released from {source}, "
           f"in {time.monotonic() - started:.0f} s")
    if args.update:
        ui.say("  what changed since the last release:")
        for line in changed.rstrip().splitlines():
            ui.say(f"    {line.strip()}")
        ui.say("Publish it: push to the repository your students cloned, and tell them to run git pull --no-rebase")
        ui.say(f"  git -C {target} push")
    else:
        files = len(tracked(target))
        ui.say(f"  first release: {files} files")
        ui.say("Publish it: push it to the repository your students will clone (a new, empty one), e.g.")
        ui.say(f"  git -C {target} remote add origin URL")
        ui.say(f"  git -C {target} push -u origin {branch}")
        ui.say(f"Later fixes: edit this tree, then ./workbook release {args.dir} -m 'what changed' adds one commit.")
    ui.say("Submissions made from it are graded here: ./workbook grade --help")


def write_edition(args, chapters: list[Chapter]) -> None:
    """Stages 1 to 4: lessons, benchmark figures, files and README in DIR."""
    target = args.target
    stage(1, "The lessons' output and figures, from the reference")
    reference = run_lessons(chapters)
    stage(2, "The benchmarks' figures")
    kept = benchmark_figures(args, chapters)
    stage(3, "The edition's files")
    if args.update:
        for name in tracked(target):
            (target / name).unlink(missing_ok=True)
    target.mkdir(parents=True, exist_ok=True)
    write_files(target, chapters, reference, kept)
    ui.say(f"  {sum(1 for p in target.rglob('*') if p.is_file() and '.git' not in p.relative_to(target).parts)} files")
    stage(4, f"The README: what ./workbook check {FIRST_CHECK_CHAPTER} shows on a fresh copy (a scratch build)")
    (target / "README.md").write_text(readme(chapters, first_check(target, ccache_dir(reference)), kept))
    ui.say(f"  README.md: {len((target / 'README.md').read_text().encode())} bytes")


def main(argv: list[str]) -> int:
    instructors_only("release")
    args = parse(argv)
    target, update = args.target, args.update
    started = time.monotonic()
    dirty = bool(git("status", "--porcelain", "--untracked-files=no", cwd=ROOT, check=False).strip())
    source = f"{commit(ROOT)}{' with uncommitted changes' if dirty else ''}"
    ui.say(ui.bold(f"{'Updating the student edition in' if update else 'Writing the student edition to'} "
                   f"{target}, from this tree at {source}"))
    write_edition(args, all_chapters())
    stage(5, "Committing")
    if not update:
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=target, check=True)
    git("add", "-A", cwd=target)
    changed = git("diff", "--cached", "--stat", "--stat-width=100", cwd=target)
    if update and not changed.strip():
        ui.say(f"  nothing changed since the last release: no commit made ({time.monotonic() - started:.0f} s)")
        return 0
    message = (args.message or "The student edition") + f"\n\nReleased from scalebook {source}.\n"
    git(*author(), "commit", "-q", "-m", message, cwd=target)
    say_published(args, source, changed, started)
    return 0
