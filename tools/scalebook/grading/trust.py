"""Which repository a roster's path names, and whose it is: real paths and owners (for collect.py).

A path on a roster is trusted for what it names, and no further. Before anything is fetched, each
local repository's path is resolved component by component:

- Every symbolic link on the way is looked at. A link made by root, by the user who collects, or by
  the repository's own owner is followed (a course's /srv/git -> /data/git; a student's link to their
  own repository), and the repository's real path is noted. A link made by anybody else leads to a
  repository that is not its maker's (a student's git/mal.git -> git/ada.git, or to a repository
  only root can read): refused, naming the link, its maker and the repository's owner.
- The repository itself must be one: a bare repository or a work tree with a .git folder, whose
  objects are its own. A .git file or a commondir (a repository elsewhere), objects/info/alternates
  (objects borrowed from another repository) or a symbolic link inside it (say objects/pack ->
  a classmate's packs) is refused: the collector would read another repository than the one named.
- Two roster lines whose paths resolve to one repository (or name one URL) are flagged, each naming
  the other: one of them collects a classmate's work, or the roster has a typo.

What is fetched is the real path, never the path as written: a link swapped after the look finds
nothing to follow. And when collect runs as root, git reads each repository as its owner
(upload_pack: git-upload-pack under setpriv, with the owner's uid and groups), so that the kernel
itself refuses whatever the owner could not read (a link inside the repository made after the look,
a classmate's repository behind it). Each repository that passes is trusted for git by its real path
alone (trust_config: safe.directory in a global config file of the collection's own, which includes
the user's; git 2.39 reads safe.directory from no other place, and never `*`).
"""
from __future__ import annotations

import os
import pwd
import shlex
import stat
from pathlib import Path
from typing import NamedTuple

from ..verdicts import safe_text

INSIDE_LIMIT = 200_000          # entries of a repository looked at for a symbolic link (then: refused)


class Local(NamedTuple):
    """What a roster's local path names."""
    real: str                    # the repository's real path ("" when there is none)
    owner: int                   # its owner's uid (-1 when there is none)
    group: int                   # its group's gid
    refusal: str                 # why it is not collected ("" when it is)
    notes: tuple[str, ...] = ()  # what a person should know (links followed)


def user(uid: int) -> str:
    """A uid as a person reads it: its name and number, or the number."""
    try:
        return f"{safe_text(pwd.getpwuid(uid).pw_name, 40)} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def links_on(path: Path) -> list[tuple[str, int, str]]:
    """Each symbolic link met resolving PATH (absolute): (link, its owner's uid, what it points to),
    in order, links inside links' targets included."""
    found: list[tuple[str, int, str]] = []
    pending = list(path.parts[1:])
    current = Path("/")
    hops = 0
    while pending:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            current = current.parent
            continue
        candidate = current / part
        try:
            info = os.lstat(candidate)
        except OSError:
            return found
        if stat.S_ISLNK(info.st_mode):
            hops += 1
            if hops > 40:
                return found
            target = os.readlink(candidate)
            found.append((str(candidate), info.st_uid, target))
            pending = list(Path(target).parts[1:] if os.path.isabs(target) else Path(target).parts) + pending
            if os.path.isabs(target):
                current = Path("/")
            continue
        current = candidate
    return found


def inside_problem(real: Path) -> str:
    """Why the repository at REAL is not wholly its own, or ""."""
    dot_git = real / ".git"
    if dot_git.is_symlink():
        return f"its .git is a symbolic link to {safe_text(os.readlink(dot_git), 200)}"
    if dot_git.is_file():
        return "its .git is a file naming a repository elsewhere (a gitdir: line)"
    git_dir = dot_git if dot_git.is_dir() else real
    for name in ("commondir", "objects/info/alternates", "objects/info/http-alternates"):
        if os.path.lexists(git_dir / name):
            return (f"its {name} borrows {'objects' if 'alternates' in name else 'everything'} from another "
                    "repository")
    seen = 0
    for folder, folders, files in os.walk(git_dir):
        if folder == str(git_dir):   # hooks never run (core.hooksPath=/dev/null), reflogs are never read:
            folders[:] = [f for f in folders if f not in ("hooks", "logs")]  # a server may link its hooks
            files = [f for f in files if f != "hooks"]
        for name in folders + files:
            seen += 1
            if os.path.islink(os.path.join(folder, name)):
                relative = os.path.relpath(os.path.join(folder, name), git_dir)
                return f"{safe_text(relative, 200)} inside it is a symbolic link (to another repository's files?)"
        if seen > INSIDE_LIMIT:
            return f"it holds more than {INSIDE_LIMIT} files: not looked through"
    return ""


def inspect(path: str) -> Local:
    """The repository the absolute PATH names (see the module's docstring)."""
    absolute = Path(path)
    real = Path(os.path.realpath(absolute))
    try:
        info = os.stat(real)
    except OSError:
        return Local("", -1, -1, "")             # missing: collect says so
    if not stat.S_ISDIR(info.st_mode):
        return Local(str(real), info.st_uid, info.st_gid, "not a folder, so no repository")
    trusted = {0, os.geteuid(), info.st_uid}
    notes = []
    for link, maker, target in links_on(absolute):
        if maker not in trusted:
            return Local(str(real), info.st_uid, info.st_gid,
                         f"{safe_text(link, 200)} is a symbolic link made by {user(maker)} to "
                         f"{safe_text(str(real), 200)}, a repository of {user(info.st_uid)}: not its maker's")
        notes.append(f"{safe_text(link, 200)} -> {safe_text(target, 200)}")
    problem = inside_problem(real)
    if problem:
        return Local(str(real), info.st_uid, info.st_gid, f"{safe_text(str(real), 200)}: {problem}")
    if notes:
        notes = [f"the repository is {safe_text(str(real), 200)} (symbolic links followed: {'; '.join(notes)})"]
    return Local(str(real), info.st_uid, info.st_gid, "", tuple(notes))


def upload_pack(local: Local) -> str | None:
    """The git-upload-pack command that reads LOCAL as its owner, for `git fetch --upload-pack`;
    None where no other user can be taken (collect is not root, or the owner is root or the collector).
    The owner's groups are theirs (from the passwd database), or the repository's group alone."""
    if os.geteuid() != 0 or local.owner in (-1, 0):
        return None
    try:
        group, groups = pwd.getpwuid(local.owner).pw_gid, "--init-groups"
    except KeyError:
        group, groups = local.group, "--clear-groups"
    environment = ["env", "-u", "XDG_CONFIG_HOME", "HOME=/nonexistent", "GIT_CONFIG_GLOBAL=/dev/null",
                   "GIT_CONFIG_NOSYSTEM=1"]
    switch = ["setpriv", f"--reuid={local.owner}", f"--regid={group}", groups, "--no-new-privs", "--inh-caps=-all"]
    return shlex.join([*environment, *switch, "git-upload-pack"])


def quoted(value: str) -> str:
    """VALUE as a git config value in double quotes."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def trust_config(path: Path, reals: list[str]) -> Path:
    """A global git config file at PATH that includes the user's own (as git would find it) and
    trusts exactly the repositories REALS (safe.directory, one line each, real paths)."""
    own = os.environ.get("GIT_CONFIG_GLOBAL")
    includes = [own] if own else [str(Path.home() / ".gitconfig"),
                                  str(Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "git" / "config")]
    lines = ["[include]", *[f"\tpath = {quoted(p)}" for p in includes if p != str(path)], "[safe]",
             *[f"\tdirectory = {quoted(real)}" for real in sorted(set(reals))]]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path
