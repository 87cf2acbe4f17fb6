"""Takes submissions in: names checked, exercise files copied out, inputs fingerprinted.

Taking submissions in: their names checked, the exercise files this tree names copied out of
them (regular files only, size-limited), and the fingerprint of every input of their verdicts.
"""
from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

from ..course import Chapter

SOURCE_LIMIT = 1 << 20          # an exercise file larger than 1 MiB is refused
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
RESERVED = {"grades.csv", "grading", "kit", "build", "ctest", "objects", "testing", "index.html",
            "ctesttestfile.cmake"}


def exercises_folder(submission: Path) -> Path:
    inner = submission / "exercises"
    return inner if inner.is_dir() and not inner.is_symlink() else submission


def take_sources(submission: Path, into: Path | None, chapters: list[Chapter]) -> tuple[dict[str, str], list[str]]:
    """Copies the exercise files this tree names out of the submission (INTO None: only reads
    them): regular files only (no symlinks, no devices, no folders in their place), at most 1 MiB
    each. Returns {relative path: sha256} and the list of refusals."""
    taken, refused = {}, []
    exercises = exercises_folder(submission)
    for chapter in chapters:
        folder = exercises / chapter.folder
        for source in chapter.sources:
            path = folder / source
            try:
                info = os.lstat(path)
                folder_info = os.lstat(folder)
            except OSError:
                continue  # missing: that exercise does not compile
            if stat.S_ISLNK(folder_info.st_mode) or stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
                refused.append(f"{chapter.folder}/{source}: not a regular file (symlinks are refused)")
                continue
            if info.st_size > SOURCE_LIMIT:
                refused.append(f"{chapter.folder}/{source}: larger than {SOURCE_LIMIT >> 20} MiB")
                continue
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as handle:
                data = handle.read(SOURCE_LIMIT + 1)
            if into is not None:
                (into / chapter.folder).mkdir(parents=True, exist_ok=True)
                (into / chapter.folder / source).write_bytes(data)
            taken[f"{chapter.folder}/{source}"] = hashlib.sha256(data).hexdigest()
    return taken, refused


def fingerprint(sources: dict[str, str], kit: dict) -> str:
    """Every input of a verdict: the kit (checks, lib, server, headers, steps, compiler, sandbox
    mode), the settings (copied into the kit) and the submission's files."""
    digest = hashlib.sha256(kit["fingerprint"].encode())
    for path, sha in sorted(sources.items()):
        digest.update(f"{path}\t{sha}\n".encode())
    return digest.hexdigest()


def refusal(submission: Path, seen: set[str], out_dir: Path) -> str | None:
    """Why a submission is refused before anything is read from it, or None."""
    name = submission.name
    if not NAME.match(name) or name.lower() in RESERVED:
        return "refused: the folder's name must be letters, digits, '.', '_' or '-' and not a reserved name"
    if submission.is_symlink() or not submission.is_dir():
        return "refused: not a folder (symlinks are refused)"
    if name in seen:
        return "refused: another submission has the same name"
    resolved = submission.resolve()
    if out_dir == resolved or out_dir in resolved.parents or resolved in out_dir.parents:
        return "refused: the output folder is inside or around it"
    return None


def safe_name(name: str) -> str:
    """The name a submission's reports go under: its own, or refused-HASH for a name that may not be one."""
    if NAME.match(name) and name.lower() not in RESERVED:
        return name
    return "refused-" + hashlib.sha256(name.encode()).hexdigest()[:8]
