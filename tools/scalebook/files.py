"""Files written complete or not at all, JSON read back without a crash on a missing or torn one, and
folders kept to their user."""
from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path


def atomic_write(path: Path, data: str | bytes) -> None:
    """Writes PATH through a temporary file in the same folder and a rename: complete or absent,
    never half written (also when two processes write it at once)."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.part")
    if isinstance(data, bytes):
        temporary.write_bytes(data)
    else:
        temporary.write_text(data, encoding="utf-8")
    temporary.replace(path)


def atomic_copy(source: Path, path: Path) -> None:
    """Copies SOURCE to PATH, its mode too (a program stays executable), complete or not at all (a
    temporary file in PATH's folder, renamed)."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.part")
    shutil.copy2(source, temporary)
    temporary.replace(path)


def read_json(path: Path, default=None):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return default


def write_json(path: Path, data) -> None:
    atomic_write(path, json.dumps(data, indent=1, ensure_ascii=True) + "\n")


def private(folder: Path) -> None:
    """FOLDER and all it holds readable and writable by its user only (0700 folders and programs,
    0600 files): a class's sources, histories, scores and feedback are nobody else's. New files get
    that from the umask the command sets (os.umask(0o077)); this takes away what an earlier run left
    open, or what a copy kept of its source's mode. Symbolic links are left as they are."""
    paths = [str(folder)]
    for top, folders, names in os.walk(folder):  # never into a linked folder
        paths += [os.path.join(top, name) for name in folders + names]
    for path in paths:
        try:
            info = os.lstat(path)
            if not stat.S_ISLNK(info.st_mode) and info.st_mode & 0o077:
                os.chmod(path, stat.S_IMODE(info.st_mode) & 0o700)
        except OSError:
            pass
