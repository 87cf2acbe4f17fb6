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
this tree since, with the instructor's MESSAGE: students take it with `./workbook update`, which
keeps their work in exercises/, committed or not, byte for byte (a fix to an exercise's
instructions merges beside their code; a fix to code they changed too is left beside their file
as FILE.erratum.diff, to make by hand). The benchmarks are measured again only with --measure, so
that an erratum carries nothing but the erratum. Any other DIR is refused before anything is done.
Submissions made from the edition are graded by this tree: `./workbook grade`.

Release reads this tree's working tree: its files as they are, those git tracks and those it does
not track yet (a chapter being written; not those .gitignore ignores), and only the chapters of the
term when there is a term file (term.json: which chapters, in which order; the others are left out,
and no chapter is renumbered). The edition is written into a folder beside DIR and committed at the
end, so that a release that fails or is stopped leaves DIR as the last release left it.
"""
from __future__ import annotations

import argparse
import os
import pwd
import re
import shutil
import stat
import tempfile
import time
from pathlib import Path
from shlex import quote

from ..config import ROOT, commit
from ..course import Chapter, all_chapters, term_chapters
from ..loop.setup import instructors_only
from .. import ui
from ..release import (FIRST_CHECK_CHAPTER, author, ccache_dir, first_check, git, measure_benchmarks, readme,
                       refusal, run_lessons, stage, tracked, tree_files, write_files)


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
        ui.say("Publish it: push to the repository your students cloned, and tell them to run ./workbook update")
        for line in push_lines(target, branch):
            ui.say(f"  {line}")
    else:
        files = len(tracked(target))
        ui.say(f"  first release: {files} files")
        ui.say("Publish it: push it to the repository your students will clone (a new, empty one), e.g.")
        ui.say(f"  git -C {quote(str(target))} remote add origin URL")
        ui.say(f"  git -C {quote(str(target))} push -u origin {branch}")
        if os.geteuid() == 0:
            ui.say("  As root into a folder on this machine that another user (OWNER) owns, git refuses the push "
                   "(\"detected dubious ownership\"), and files root wrote there would lock OWNER out: push as "
                   "OWNER, to the folder's path, once origin is added as above:")
            ui.say(f"  runuser -u OWNER -- git -c safe.directory={quote(str(target))} -C {quote(str(target))} "
                   f"push URL {branch}")
        ui.say(f"Later fixes: edit this tree, then ./workbook release {args.dir} -m 'what changed' adds one commit.")
    ui.say("Submissions made from it are graded here: ./workbook grade --help")


def remote_folder(target: Path, remote: str) -> Path | None:
    """The folder on this machine that REMOTE's push URL names; None for another machine's (ssh://,
    https://, host:path) or no such remote."""
    url = git("remote", "get-url", "--push", remote, cwd=target, check=False).strip()
    if url.startswith("file://"):
        url = url[len("file://"):]
    elif not url or re.match(r"^[a-z][a-z0-9+.-]*://", url) or re.match(r"^[^/]+:", url):
        return None
    return (target / url).resolve()


def can_reach(user: pwd.struct_passwd, path: Path) -> bool:
    """Whether USER may enter PATH and every folder above it (their read access to the edition)."""
    groups = set(os.getgrouplist(user.pw_name, user.pw_gid))
    for folder in [path, *path.parents]:
        info = folder.stat()
        bit = (stat.S_IXUSR if info.st_uid == user.pw_uid else
               stat.S_IXGRP if info.st_gid in groups else stat.S_IXOTH)
        if not info.st_mode & bit:
            return False
    return True


def push_lines(target: Path, branch: str) -> list[str]:
    """How to push the erratum: `git push`, or, when the repository students clone is a folder on
    this machine that another user owns, how to get past git's refusal ("detected dubious
    ownership"): as root, push as its owner (root's files there would lock the owner out); as
    anyone else, trust it with safe.directory."""
    remote = git("config", f"branch.{branch}.remote", cwd=target, check=False).strip() or "origin"
    folder = remote_folder(target, remote)
    plain = [f"git -C {quote(str(target))} push {quote(remote)} {branch}"]  # with or without an upstream
    if folder is None or not folder.exists() or folder.stat().st_uid == os.geteuid():
        return plain
    try:
        owner = pwd.getpwuid(folder.stat().st_uid)
    except KeyError:
        return plain + [f"({folder} belongs to uid {folder.stat().st_uid}, a user this machine cannot name: push "
                        f"as that user)"]
    if os.geteuid() != 0:
        return [f"{folder} ({remote}) belongs to {owner.pw_name}: git refuses to push into another user's "
                f"repository (\"detected dubious ownership\") until you say you trust it:",
                f"git config --global --add safe.directory {quote(str(folder))}", *plain]
    lines = [f"{folder} ({remote}) belongs to {owner.pw_name}, not root: git refuses root's push into it (\"detected "
             f"dubious ownership\"), and files root wrote there would lock {owner.pw_name} out. Push as "
             f"{owner.pw_name}:",
             f"runuser -u {owner.pw_name} -- git -c safe.directory={quote(str(target))} -C {quote(str(target))} "
             f"push {quote(str(folder))} {branch}"]
    if not can_reach(owner, target):
        lines.append(f"({owner.pw_name} cannot enter {target} or a folder above it: release into a folder "
                     f"{owner.pw_name} can read, or make it readable, first)")
    return lines


def write_edition(args, chapters: list[Chapter], staging: Path) -> None:
    """Stages 1 to 4: lessons, benchmark figures, files and README, into STAGING (a new folder
    beside DIR: DIR itself is not touched until stage 5)."""
    stage(1, "The lessons' output and figures, from the reference")
    reference = run_lessons(chapters)
    stage(2, "The benchmarks' figures")
    kept = benchmark_figures(args, chapters)
    stage(3, "The edition's files")
    _, untracked = tree_files(ROOT)
    if untracked:
        ui.say(f"  from the working tree, including {len(untracked)} file{'s' if len(untracked) > 1 else ''} git does "
               f"not track yet: {', '.join(untracked[:5])}{' ...' if len(untracked) > 5 else ''}")
    write_files(staging, chapters, reference, kept)
    ui.say(f"  {sum(1 for p in staging.rglob('*') if p.is_file())} files")
    stage(4, f"The README: what ./workbook check {FIRST_CHECK_CHAPTER} shows on a fresh copy (a scratch build)")
    (staging / "README.md").write_text(readme(chapters, first_check(staging, ccache_dir(reference)), kept))
    ui.say(f"  README.md: {len((staging / 'README.md').read_text().encode())} bytes")


def commit_new(target: Path, staging: Path, message: str) -> str:
    """A first release: STAGING gets its history, then becomes TARGET (one rename)."""
    git("init", "-q", "-b", "main", cwd=staging)
    git("add", "-A", cwd=staging)
    changed = git("diff", "--cached", "--stat", "--stat-width=100", cwd=staging)
    git(*author(), "commit", "-q", "-m", message, cwd=staging)
    if target.exists():
        target.rmdir()  # empty (refusal() said so)
    staging.rename(target)
    return changed


def commit_update(target: Path, staging: Path, message: str) -> str:
    """An erratum: STAGING's files committed onto TARGET's history without touching TARGET's files;
    then TARGET's work tree is moved to that commit by git (files the release dropped are deleted).
    Nothing changed: no commit, "" returned. A failure before the commit leaves TARGET as it was."""
    with_tree = ["--git-dir", str(target / ".git"), "--work-tree", str(staging)]
    before = git("rev-parse", "HEAD", cwd=target).strip()
    try:
        git(*with_tree, "add", "-A", cwd=staging)
        changed = git(*with_tree, "diff", "--cached", "--stat", "--stat-width=100", cwd=staging)
        if not changed.strip():
            return ""
        git(*author(), *with_tree, "commit", "-q", "-m", message, cwd=staging)
    except BaseException:
        git("reset", "-q", cwd=target, check=False)  # the index back to the last release
        raise
    for name in git("diff", "--name-only", "-z", "--diff-filter=D", before, "HEAD", cwd=target).split("\0"):
        if name:
            (target / name).unlink(missing_ok=True)
            for folder in (target / name).parents:  # a chapter left out: its folders too, as git does
                if folder == target or not folder.is_dir() or any(folder.iterdir()):
                    break
                folder.rmdir()
    git("reset", "-q", "--hard", cwd=target)
    return changed


def main(argv: list[str]) -> int:
    instructors_only("release")
    args = parse(argv)
    target, update = args.target, args.update
    started = time.monotonic()
    dirty = bool(git("status", "--porcelain", cwd=ROOT, check=False).strip())
    source = f"{commit(ROOT)}{' with uncommitted changes' if dirty else ''}"
    ui.say(ui.bold(f"{'Updating the student edition in' if update else 'Writing the student edition to'} "
                   f"{target}, from this tree at {source}"))
    chapters = term_chapters()
    if [c.folder for c in chapters] != [c.folder for c in all_chapters()]:
        ui.say(f"  the term (term.json): chapters {', '.join(str(c.number) for c in chapters)}")
    target.parent.mkdir(parents=True, exist_ok=True)
    # Everything is written into a folder beside DIR first, so that a release that fails or is
    # stopped half-way leaves DIR as it was (the next release then takes it as usual).
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.release-", dir=target.parent))
    # mkdtemp's folder is the owner's alone; the edition's is the mode DIR has, or a new folder's.
    umask = os.umask(0)
    os.umask(umask)
    staging.chmod(stat.S_IMODE(target.stat().st_mode) if target.exists() else 0o777 & ~umask)
    try:
        write_edition(args, chapters, staging)
        stage(5, "Committing")
        message = (args.message or "The student edition") + f"\n\nReleased from scalebook {source}.\n"
        changed = commit_update(target, staging, message) if update else commit_new(target, staging, message)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if update and not changed.strip():
        ui.say(f"  nothing changed since the last release: no commit made ({time.monotonic() - started:.0f} s)")
        return 0
    say_published(args, source, changed, started)
    return 0
