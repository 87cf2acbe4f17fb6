"""The instructor's fixes (errata) taken into a student's copy without losing a line of their work.

How the stubs keep the two apart: every exercise file's instructions end its header comment, under
INSTRUCTIONS, and FENCE follows them; the student's code goes below the fence. A fix to the
instructions changes lines above the fence only, and git's three-way merge reports a conflict only
where both sides changed the same or adjacent lines: the fence, unchanged on both sides, lies
between the instructor's lines and the student's, so such a fix always merges
(tools/tests/unit/test_stub_layout.py proves it on every stub, for every instruction line).

`./workbook update` (update() below) takes the fixes: it commits the student's uncommitted changes
first (a commit of their own, so nothing can be overwritten), merges the fixes without an editor,
and where git still finds a conflict it keeps the student's version of every file in exercises/
byte for byte, writing the instructor's change to that file beside it (FILE.erratum.diff) to be
made by hand; any other file (the instructor's: pages, checks, headers) takes the instructor's
version, the student's own edit of it staying in their history. It also finishes a merge that a
plain `git pull` left with conflicts. `./workbook check` explains conflict markers left in an
exercise file (marker_message) and reminds of the .erratum.diff files still there (pending()).
"""
from __future__ import annotations

import getpass
import os
import re
import subprocess
from pathlib import Path

from ..config import ROOT
from ..errors import WorkbookError
from .. import ui

INSTRUCTIONS = "// What to write:"
FENCE = "// ---- Your code goes below this line; fixes to the lines above never touch it ----"
PATCH_SUFFIX = ".erratum.diff"
STUDENT_FILES = "exercises/"
WIP_MESSAGE = ("Work in progress, committed by ./workbook update before taking the instructor's fixes")
MERGE_MESSAGE = "Take the instructor's fixes (./workbook update)"
MARKER = re.compile(r"^(<{7}|={7}|>{7}|\|{7})(?: |$)")


class GitError(WorkbookError):
    """git refused or failed; the message says what to do."""


# --- conflict markers and pending changes: what ./workbook check says --------------------------------

def conflict_lines(text: str) -> list[int]:
    """The numbers of the lines that are git's conflict markers (<<<<<<<, |||||||, =======, >>>>>>>)."""
    return [number for number, line in enumerate(text.splitlines(), 1) if MARKER.match(line)]


def merging(root: Path = ROOT) -> bool:
    """Whether git is in the middle of a merge (a `git pull` that stopped on a conflict)."""
    return subprocess.run(["git", "rev-parse", "-q", "--verify", "MERGE_HEAD"], cwd=root, capture_output=True,
                          stdin=subprocess.DEVNULL).returncode == 0


def marker_message(shown: str, lines: list[int], in_merge: bool) -> str:
    """What an exercise file with conflict markers needs, in one line: the exact next step."""
    where = f"{shown}:{lines[0]} has git's conflict markers (lines {lines[0]}-{lines[-1]})"
    if in_merge:
        return (f"{where}, from a git pull that stopped on a conflict: run ./workbook update, which "
                f"finishes it keeping your code and puts your instructor's change beside the file")
    return (f"{where}: your version is between <<<<<<< and =======, the other between ======= and "
            f">>>>>>>; keep your code, make the other side's change in it by hand, and delete the "
            f"marker lines")


def pending(root: Path = ROOT) -> list[Path]:
    """The instructor's changes update left beside exercise files, still to be made by hand."""
    return sorted((root / STUDENT_FILES).glob(f"*/*{PATCH_SUFFIX}"))


def pending_lines(root: Path = ROOT) -> list[str]:
    found = pending(root)
    if not found:
        return []
    lines = ["", ui.yellow("To make by hand:") + " your instructor's changes to files you had changed "
             "(./workbook update kept yours):"]
    for path in found:
        lines.append(f"  {path.relative_to(root)}")
    lines.append("  Each says what to change; make the change in the file beside it, then delete the .diff.")
    return lines


# --- git --------------------------------------------------------------------------------------------

def git_env() -> dict[str, str]:
    """git never opens an editor (merge messages are given) and speaks English (its words are parsed)."""
    return dict(os.environ, GIT_EDITOR="true", GIT_MERGE_AUTOEDIT="no", LC_ALL="C", LANGUAGE="C")


def git(*args: str, root: Path = ROOT, check: bool = True, quiet_stdin: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(["git", "-c", "core.quotePath=false", *args], cwd=root, capture_output=True, text=True,
                            env=git_env(), stdin=subprocess.DEVNULL if quiet_stdin else None)
    if check and result.returncode != 0:
        raise GitError(f"git {' '.join(args)} failed (status {result.returncode}):\n"
                       f"{ui.printable(result.stderr.strip() or result.stdout.strip())}")
    return result


def out(*args: str, root: Path = ROOT) -> str:
    return git(*args, root=root).stdout.strip()


def identity(root: Path) -> list[str]:
    """-c options naming the student when git knows no name for them (no user.name or user.email):
    the commits update makes need one."""
    known = all(git("var", f"GIT_{who}_IDENT", root=root, check=False).returncode == 0
                for who in ("AUTHOR", "COMMITTER"))
    if known:
        return []
    user = getpass.getuser()
    return ["-c", f"user.name={user}", "-c", f"user.email={user}@localhost"]


def short(commit: str, root: Path) -> str:
    return out("rev-parse", "--short", commit, root=root)


def is_students(path: str) -> bool:
    return path.startswith(STUDENT_FILES)


def beside(path: Path, suffix: str) -> Path:
    """PATH + SUFFIX, or PATH + "-2" + SUFFIX ... when that is taken: nothing is overwritten."""
    candidate = path.with_name(path.name + suffix)
    number = 2
    while candidate.exists():
        candidate = path.with_name(f"{path.name}-{number}{suffix}")
        number += 1
    return candidate


# --- update -----------------------------------------------------------------------------------------

def stopped_state(root: Path) -> str:
    """Why git cannot merge now (a rebase, cherry-pick or revert half done), or ""."""
    for name, what, undo in (("rebase-merge", "a rebase", "git rebase --abort"),
                             ("rebase-apply", "a rebase", "git rebase --abort"),
                             ("CHERRY_PICK_HEAD", "a cherry-pick", "git cherry-pick --abort"),
                             ("REVERT_HEAD", "a revert", "git revert --abort")):
        if Path(root, out("rev-parse", "--git-path", name, root=root)).exists():
            return (f"git is in the middle of {what}, which update does not finish for you: `{undo}` "
                    f"undoes it (your commits stay), then run ./workbook update again")
    return ""


def upstream(root: Path) -> tuple[str, str]:
    """(remote, remote branch) the current branch takes its fixes from."""
    branch = git("symbolic-ref", "-q", "--short", "HEAD", root=root, check=False).stdout.strip()
    if not branch:
        raise GitError("you are not on a branch (git says \"detached HEAD\"): `git switch main` goes back to "
                       "yours (git names any commit you would leave behind), then run ./workbook update again")
    remote = git("config", f"branch.{branch}.remote", root=root, check=False).stdout.strip()
    merge = git("config", f"branch.{branch}.merge", root=root, check=False).stdout.strip()
    if not remote or not merge:
        raise GitError(f"your branch {branch} does not say where your instructor's copy is (it was not "
                       f"made by git clone): `git branch --set-upstream-to=origin/main` says it is origin's "
                       f"main; then run ./workbook update again")
    return remote, merge.removeprefix("refs/heads/")


def uncommitted(root: Path) -> list[str]:
    """The tracked files with changes not committed (staged or not)."""
    listed = git("status", "--porcelain=v1", "-z", "--untracked-files=no", root=root).stdout
    entries = listed.split("\0")
    paths, skip = [], False
    for entry in entries:
        if skip:  # a rename's second path
            skip = False
            continue
        if entry:
            paths.append(entry[3:])
            skip = entry[0] in "RC"
    return paths


def save_work(root: Path, ident: list[str]) -> tuple[str, list[str]]:
    """Commits the student's uncommitted changes to tracked files; returns (commit, the files) or ("", [])."""
    changed = uncommitted(root)
    if not changed:
        return "", []
    git("add", "-u", root=root)
    git(*ident, "commit", "-q", "--no-verify", "-m", WIP_MESSAGE, root=root)
    return short("HEAD", root), changed


def move_untracked_aside(root: Path, base: str, theirs: str) -> list[tuple[str, str]]:
    """Files the fixes add where the student has an untracked file of the same name: git would refuse
    to merge; each moves to NAME.yours (or NAME-2.yours ...). Returns (path, where it went)."""
    added = git("diff", "--name-only", "-z", "--diff-filter=A", base, theirs, root=root).stdout.split("\0")
    moved = []
    for path in filter(None, added):
        where = root / path
        if (where.exists() or where.is_symlink()) and not git("ls-files", "--error-unmatch", "--", path, root=root,
                                                                check=False).returncode == 0:
            target = beside(where, ".yours")
            where.rename(target)
            moved.append((path, str(target.relative_to(root))))
    return moved


def unmerged(root: Path) -> dict[str, set[int]]:
    """Path -> the index stages git holds for it (1 base, 2 ours, 3 theirs) while a merge has conflicts."""
    stages: dict[str, set[int]] = {}
    for entry in filter(None, git("ls-files", "-u", "-z", root=root).stdout.split("\0")):
        info, path = entry.split("\t", 1)
        stages.setdefault(path, set()).add(int(info.split()[2]))
    return stages


def patch_text(path: str, base: str, theirs: str, root: Path) -> str:
    """The instructor's change to PATH (base to theirs) as a patch, after a note saying what it is."""
    diff = git("diff", "--no-color", "--no-ext-diff", base, theirs, "--", path, root=root).stdout
    return (f"Your instructor's fix to\n\n    {path}\n\nwhich ./workbook update did not make because you had "
            f"changed the same lines: your file\nis kept as you had it. Make the same change in it by hand: below, "
            f"lines starting with \"-\"\nare the stub's lines before the fix, lines starting with \"+\" after it, "
            f"the others are\ncontext. Then delete this file.\n\n{diff}")


class Resolution:
    """What resolve() did with the conflicts (a plain class: see CheckResult on dataclasses)."""

    def __init__(self):
        self.kept: list[tuple[str, str]] = []        # exercise files kept as the student's, and the .diff
        self.restored: list[str] = []                # exercise files the student had deleted: the new stub
        self.instructors: list[tuple[str, str]] = []  # other files: the instructor's now; the student's commit
        self.marked: list[tuple[str, str]] = []      # a pull's conflicted file, saved as it was


def resolve(root: Path, base: str, ours: str, theirs: str, save_marked: bool) -> Resolution:
    """Settles every conflict of the merge under way: an exercise file keeps the student's version
    (stage 2) and gets the instructor's change beside it; any other file takes the instructor's
    (stage 3), or goes when the instructor removed it. SAVE_MARKED: the working files hold what a
    `git pull` wrote (conflict markers, perhaps edited since): each is saved beside as .conflict."""
    done = Resolution()
    for path, stages in sorted(unmerged(root).items()):
        where = root / path
        if is_students(path) and 2 in stages:
            if save_marked and where.exists():
                text = where.read_text(errors="replace")
                if conflict_lines(text):
                    target = beside(where, ".conflict")
                    target.write_text(text)
                    done.marked.append((path, str(target.relative_to(root))))
                else:  # the student already settled it by hand: theirs to keep, as it is
                    git("add", "--", path, root=root)
                    continue
            git("checkout", "--ours", "--", path, root=root)
            git("add", "--", path, root=root)
            diff = beside(where, PATCH_SUFFIX)
            diff.write_text(patch_text(path, base, theirs, root))
            done.kept.append((path, str(diff.relative_to(root))))
        elif is_students(path) and 3 in stages:  # the student deleted it, the instructor changed it
            git("checkout", "--theirs", "--", path, root=root)
            git("add", "--", path, root=root)
            done.restored.append(path)
        elif 3 in stages:
            git("checkout", "--theirs", "--", path, root=root)
            git("add", "--", path, root=root)
            done.instructors.append((path, ours))
        else:  # the instructor removed it
            git("rm", "-q", "--cached", "--", path, root=root)
            if where.exists():
                where.unlink()
            if 2 in stages:
                done.instructors.append((path, ours))
    return done


def finish_pull(root: Path, ident: list[str]):
    """A merge a `git pull` left half done: settled as update would have, and committed."""
    base = out("merge-base", "HEAD", "MERGE_HEAD", root=root)
    ours, theirs = out("rev-parse", "HEAD", root=root), out("rev-parse", "MERGE_HEAD", root=root)
    yield ui.bold("Finishing the merge that git pull started") + " (it stopped on a conflict) with these fixes:"
    yield from (f"  {ui.printable(line)}" for line in out("log", "--format=%h %s", f"{ours}..{theirs}",
                                                         root=root).splitlines())
    done = resolve(root, base, ours, theirs, save_marked=True)
    git(*ident, "commit", "-q", "--no-verify", "-m", MERGE_MESSAGE, root=root)
    yield from merged_lines(root, base, ours, theirs, done)


def names(root: Path, *args: str) -> list[str]:
    return list(filter(None, git("diff", "--name-only", "-z", *args, root=root).stdout.split("\0")))


def merged_lines(root: Path, base: str, ours: str, theirs: str, done: Resolution):
    """What the merge did, file by file, then what is left to do."""
    fixed, mine = names(root, base, theirs), set(names(root, base, ours))
    by_hand = {path for path, _ in done.kept}
    yield f"Merged the fixes ({len(fixed)} file{'s' if len(fixed) != 1 else ''}):"
    for path in fixed:
        note = ""
        if path in by_hand:
            note = "  (yours kept: see below)"
        elif is_students(path) and path in mine:
            note = "  (the instructions; your code is as you had it)"
        yield f"  {path}{note}"
    yield from report(done)
    chapters = chapters_touched(fixed)
    if chapters:
        yield ""
        yield f"{ui.yellow('next:')} " + "; ".join(f"./workbook check {n}" for n in chapters)


def report(done: Resolution) -> list[str]:
    lines = []
    for path, saved in done.marked:
        lines.append(f"  {path}: the file as git pull left it, with its conflict markers, is saved as {saved}")
    for path, diff in done.kept:
        lines += [f"{ui.red('✗')} {path}: your instructor changed its code where you had changed yours.",
                  "  Your file is kept as you had it, byte for byte. Their change, to make by hand, is beside it:",
                  f"    {diff}",
                  "  It says what to change; make the change in your file, then delete the .diff."]
    for path in done.restored:
        lines.append(f"  {path}: you had deleted it; it is back, with your instructor's fix")
    for path, commit in done.instructors:
        lines.append(f"  {path}: you had changed this file of your instructor's; it is now theirs (yours: "
                     f"git show {commit[:10]}:{path})")
    return lines


def chapters_touched(paths: list[str]) -> list[int]:
    numbers = set()
    for path in paths:
        match = re.match(r"^(?:exercises|chapters|docs/prebuilt)/(\d\d)-", path)
        if match:
            numbers.add(int(match.group(1)))
    return sorted(numbers)


def update(root: Path = ROOT) -> int:
    """./workbook update: 0 when every fix is in, 1 when a change is left to make by hand."""
    for line in updating(root):
        ui.say(line)
    return 1 if any(p for p in pending(root)) else 0


def updating(root: Path):
    """The steps of update, as the lines it prints."""
    top = git("rev-parse", "--show-toplevel", root=root, check=False)
    if top.returncode != 0 or Path(top.stdout.strip()).resolve() != root.resolve():  # not one's own: a home's?
        raise GitError("this copy is not a git clone of your instructor's, so fixes cannot reach it: clone the "
                       "workbook with git (the README's set-up), then copy your files of exercises/ into the clone")
    stopped = stopped_state(root)
    if stopped:
        raise GitError(stopped)
    ident = identity(root)
    if merging(root):
        yield from finish_pull(root, ident)
        yield ""
    remote, branch = upstream(root)
    fetched = git("fetch", "-q", remote, root=root, check=False, quiet_stdin=False)
    if fetched.returncode != 0:
        raise GitError(f"could not reach your instructor's copy ({remote}); nothing was changed. git says:\n"
                       f"{ui.printable(fetched.stderr.strip())}")
    theirs = out("rev-parse", f"refs/remotes/{remote}/{branch}", root=root)
    new = out("log", "--format=%h %s", f"HEAD..{theirs}", root=root).splitlines()
    if not new:
        yield ui.green("No new fixes: you have every fix your instructor published.")
        yield from pending_lines(root)
        return
    yield ui.bold(f"Fixes from your instructor: {len(new)} new commit{'s' if len(new) > 1 else ''}")
    yield from (f"  {ui.printable(line)}" for line in new)
    saved, files = save_work(root, ident)
    if saved:
        yield f"Your uncommitted changes are saved first, as a commit of their own ({saved}, \"Work in progress\"):"
        yield from (f"  {path}" for path in files)
    ours = out("rev-parse", "HEAD", root=root)
    base = out("merge-base", "HEAD", theirs, root=root)
    for path, where in move_untracked_aside(root, base, theirs):
        yield f"  {path}: a fix adds this file, so yours (not in git) is moved to {where}"
    merged = git(*ident, "merge", "-q", "--ff", "--no-edit", "--no-verify", "-m", MERGE_MESSAGE, theirs,
                 root=root, check=False)
    done = Resolution()
    if merged.returncode != 0:
        if not unmerged(root):
            git("merge", "--abort", root=root, check=False)
            raise GitError(f"git could not merge the fixes; your files are as they were. git says:\n"
                           f"{ui.printable((merged.stderr or merged.stdout).strip())}")
        done = resolve(root, base, ours, theirs, save_marked=False)
        git(*ident, "commit", "-q", "--no-verify", "-m", MERGE_MESSAGE, root=root)
    yield from merged_lines(root, base, ours, theirs, done)
