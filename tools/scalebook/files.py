"""Files written complete or not at all, and JSON read back without a crash on a missing or torn one."""
from __future__ import annotations

import json
import os
import shutil
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
