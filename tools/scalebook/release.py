#!/usr/bin/env python3
"""./workbook release DIR [-m MESSAGE] — write the student edition of this workbook into DIR, or
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
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from scalebook import packages, ui  # noqa: E402
from scalebook.build import build  # noqa: E402
from scalebook.chapters import Chapter, all_chapters  # noqa: E402

# Paths of the instructor's tree that the edition leaves out.
LEFT_OUT = [r"^solutions/", r"^chapters/[^/]+/bugzoo/", r"^tools/tests/", r"^tools/test_grading\.py$",
            r"^tools/apply_mutant\.py$", r"^tools/time_[^/]*\.py$", r"^\.ci/", r"^docs/tests/",
            r"^README\.md$", r"^docs/student-README\.md$"]
README_SOURCE = ROOT / "docs" / "student-README.md"
EDITION_NOTE = "scalebook, student edition\n"
BENCH_CHAPTERS = (7, 2)            # the chapters whose benchmark the edition shows, in that order
FIRST_CHECK_CHAPTER = 1            # the README shows what `./workbook check 1` prints on a fresh copy
STAGES = 5


def stage(number: int, text: str) -> None:
    ui.say(ui.bold(f"[{number}/{STAGES}] {text}"))


def git(*args: str, cwd: Path, check: bool = True) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=check).stdout


def tracked(tree: Path) -> list[str]:
    return sorted(f for f in git("ls-files", "-z", cwd=tree).split("\0") if f)


def without_instructor_sections(text: str) -> str:
    return re.sub(r"\n?\\if instructor\b.*?\\endif\n?", "\n", text, flags=re.S)


def is_edition(target: Path) -> bool:
    return ((target / "EDITION").is_file() and (target / ".git").exists() and
            subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=target,
                           capture_output=True).returncode == 0)


def refusal(target: Path) -> str:
    """Why DIR cannot take a release, or "" when it can (new, empty, or a clean edition)."""
    if ROOT == target or ROOT in target.parents:
        return "DIR must be outside this tree"
    if target.exists() and not target.is_dir():
        return f"{target} is a file, not a folder"
    if not target.exists() or not any(target.iterdir()):
        return ""
    if not is_edition(target):
        return (f"{target} is neither empty nor a student edition (an edition has an EDITION file and "
                "the git history release gave it); nothing was changed")
    dirty = git("status", "--porcelain", cwd=target)
    if dirty:
        return (f"{target} has changes that are not committed; commit or discard them, then release "
                f"again (nothing was changed):\n{dirty[:600]}")
    return ""


def summaries() -> dict[str, str]:
    """Each chapter's SUMMARY from its CMakeLists.txt."""
    found = {}
    for chapter in all_chapters():
        text = (ROOT / "chapters" / chapter.folder / "CMakeLists.txt").read_text()
        match = re.search(r'SUMMARY\s+"([^"]*)"', text)
        found[chapter.folder] = match.group(1) if match else ""
    return found


def run_lessons(chapters: list[Chapter]) -> Path:
    """Builds every chapter's lesson output and figures in the reference build; returns the build."""
    reference = ROOT / "build" / "reference"
    if not (reference / "build.ninja").exists():
        ui.say("  configuring the reference build (once)")
        subprocess.run(["cmake", "--preset", "reference"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    progress = ui.Progress("  building and running the lessons on the reference")
    code, output = build(reference, [f"{c.target}_docs_assets" for c in chapters],
                         reference / "workbook" / "release.build.log", progress)
    progress.done()
    if code != 0:
        sys.exit(f"release: the reference's lessons did not build:\n{output[-3000:]}")
    return reference


def ccache_dir(reference: Path) -> str:
    cache = reference / "CMakeCache.txt"
    match = re.search(r"^SCALEBOOK_CCACHE_DIR:PATH=(.*)$", cache.read_text(), re.M) if cache.exists() else None
    return match.group(1) if match else str(ROOT / "build" / "ccache")


def write_files(target: Path, chapters: list[Chapter], reference: Path, kept: dict[str, str]) -> None:
    """Every file of the edition but its README, into TARGET (whose tracked files are gone)."""
    for name in tracked(ROOT):
        if any(re.search(pattern, name) for pattern in LEFT_OUT):
            continue
        source, copy = ROOT / name, target / name
        if not source.exists():  # deleted in the working tree, not yet committed
            continue
        copy.parent.mkdir(parents=True, exist_ok=True)
        if re.match(r"^chapters/[^/]+/lesson\.md$", name):
            copy.write_text(without_instructor_sections(source.read_text()))
        else:
            shutil.copy2(source, copy)
    for chapter in chapters:
        generated = reference / "docs" / "generated" / chapter.folder
        prebuilt = target / "docs" / "prebuilt" / chapter.folder
        prebuilt.mkdir(parents=True, exist_ok=True)
        for path in sorted(generated.iterdir()):
            if path.suffix in (".out", ".svg"):
                shutil.copy2(path, prebuilt / path.name)
        # The book shows the exercise stubs as released, not the student's work in progress.
        stubs = prebuilt / "stubs"
        stubs.mkdir(exist_ok=True)
        for source in chapter.sources:
            shutil.copy2(target / "exercises" / chapter.folder / source, stubs / source)
    for relative, text in kept.items():
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        (target / relative).write_text(text)
    (target / "EDITION").write_text(EDITION_NOTE)


def first_check(target: Path, cache: str) -> str:
    """What `./workbook check 1` prints in a fresh copy of the edition (a scratch copy, built with
    this tree's compiler cache), without colours."""
    with tempfile.TemporaryDirectory(prefix="scalebook-release-check-") as scratch:
        copy = Path(scratch) / "edition"
        shutil.copytree(target, copy, ignore=shutil.ignore_patterns(".git", "build"), symlinks=True)
        subprocess.run(["cmake", "--preset", "student", f"-DSCALEBOOK_CCACHE_DIR={cache}",
                        "-DSCALEBOOK_BUILD_DOCS=OFF"], cwd=copy, check=True, stdout=subprocess.DEVNULL)
        env = dict(os.environ, NO_COLOR="1", COLUMNS="100")
        result = subprocess.run([str(copy / "workbook"), "check", str(FIRST_CHECK_CHAPTER)], cwd=copy,
                                capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    lines = result.stdout.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(f"chapter {FIRST_CHECK_CHAPTER}")), None)
    if result.returncode != 0 or start is None:
        sys.exit(f"release: ./workbook check {FIRST_CHECK_CHAPTER} failed in a scratch copy of the edition:\n"
                 f"{result.stdout[-2000:]}{result.stderr[-2000:]}")
    return "\n".join(lines[start:]).rstrip()


def measure_benchmarks(chapters: list[Chapter]) -> dict[str, str]:
    """`./workbook bench N` here (the reference), for each of BENCH_CHAPTERS: its output, headed by
    when and where it was measured, as docs/prebuilt/CHAPTER/bench.txt."""
    found = {}
    by_number = {c.number: c for c in chapters}
    for number in BENCH_CHAPTERS:
        chapter = by_number.get(number)
        if chapter is None:
            continue
        ui.say(f"  ./workbook bench {number}")
        env = dict(os.environ, NO_COLOR="1", PYTHONUNBUFFERED="1")  # its lines as they come
        lines: list[str] = []
        with subprocess.Popen([str(ROOT / "workbook"), "bench", str(number)], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, env=env, stdin=subprocess.DEVNULL) as process:
            assert process.stdout is not None
            for line in process.stdout:
                ui.say(f"    {line.rstrip()}")
                lines.append(line.rstrip())
        if process.returncode != 0:
            sys.exit(f"release: ./workbook bench {number} failed (status {process.returncode})")
        shown = [line for line in lines if not re.match(r"^(Building |  \[\d+/\d+\] )", line)]
        header = (f"./workbook bench {number}, reference solution, measured at release on "
                  f"{time.strftime('%Y-%m-%d')} ({socket.gethostname()}, {os.cpu_count()} cores, "
                  f"load average {os.getloadavg()[0]:.1f})")
        found[f"docs/prebuilt/{chapter.folder}/bench.txt"] = "\n".join([header, *shown]).rstrip() + "\n"
    return found


def readme(chapters: list[Chapter], check_output: str, benches: dict[str, str]) -> str:
    text = README_SOURCE.read_text()
    about = summaries()
    listing = "\n".join(f"{c.number}. **{c.topic.replace('-', ' ')}**: {about[c.folder]}" for c in chapters)
    bench_text = "\n\n".join(benches[key].rstrip() for key in sorted(benches, reverse=True)) or \
        "(not measured for this edition)"
    values = {"CHAPTERS": "The chapters:\n\n" + listing,
              "PACKAGES": " ".join(packages.PACKAGES),
              "FIRST_CHECK": check_output,
              "BENCH": bench_text}
    for key, value in values.items():
        text = text.replace(f"@{key}@", value)
    left = re.findall(r"@[A-Z_]+@", text)
    if left:
        sys.exit(f"release: {README_SOURCE.relative_to(ROOT)} names {', '.join(left)}, which release does not fill in")
    return text


def author() -> list[str]:
    """The instructor's git identity when this tree has one, otherwise scalebook's."""
    name = git("config", "user.name", cwd=ROOT, check=False).strip() or "scalebook"
    email = git("config", "user.email", cwd=ROOT, check=False).strip() or "scalebook@localhost"
    return ["-c", f"user.name={name}", "-c", f"user.email={email}"]


def main() -> int:
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
    args = parser.parse_args()
    target = args.dir.resolve()
    why = refusal(target)
    if why:
        parser.error(why)
    update = target.exists() and any(target.iterdir())
    if update and not args.message:
        parser.error(f"{target} holds an edition: say what changed with -m MESSAGE (students read it in git log)")
    started = time.monotonic()
    commit = git("rev-parse", "--short", "HEAD", cwd=ROOT, check=False).strip() or "unknown"
    dirty = bool(git("status", "--porcelain", "--untracked-files=no", cwd=ROOT, check=False).strip())
    source = f"{commit}{' with uncommitted changes' if dirty else ''}"
    chapters = all_chapters()
    ui.say(ui.bold(f"{'Updating the student edition in' if update else 'Writing the student edition to'} "
                   f"{target}, from this tree at {source}"))

    stage(1, "The lessons' output and figures, from the reference")
    reference = run_lessons(chapters)

    stage(2, "The benchmarks' figures")
    kept: dict[str, str] = {}
    if update:  # figures of the last release, unless measured again
        for chapter in chapters:
            path = target / "docs" / "prebuilt" / chapter.folder / "bench.txt"
            if path.exists():
                kept[str(path.relative_to(target))] = path.read_text()
    if args.no_bench:
        ui.say("  skipped (--no-bench)")
        kept = {}
    elif update and not args.measure:
        ui.say(f"  kept from the last release ({len(kept)} chapters; --measure measures them again)")
    else:
        kept = measure_benchmarks(chapters)

    stage(3, "The edition's files")
    if update:
        for name in tracked(target):
            (target / name).unlink(missing_ok=True)
    target.mkdir(parents=True, exist_ok=True)
    write_files(target, chapters, reference, kept)
    ui.say(f"  {sum(1 for p in target.rglob('*') if p.is_file() and '.git' not in p.relative_to(target).parts)} files")

    stage(4, f"The README: what ./workbook check {FIRST_CHECK_CHAPTER} shows on a fresh copy (a scratch build)")
    check_output = first_check(target, ccache_dir(reference))
    (target / "README.md").write_text(readme(chapters, check_output, kept))
    ui.say(f"  README.md: {len((target / 'README.md').read_text().encode())} bytes")

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
    head = git("rev-parse", "--short", "HEAD", cwd=target).strip()
    branch = git("rev-parse", "--abbrev-ref", "HEAD", cwd=target).strip()
    count = len(git("rev-list", "HEAD", cwd=target).split())

    ui.say("")
    ui.say(ui.bold(f"The student edition is in {target}"))
    ui.say(f"  commit {head} on {branch} ({count} commit{'s' if count > 1 else ''}), released from {source}, "
           f"in {time.monotonic() - started:.0f} s")
    if update:
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
