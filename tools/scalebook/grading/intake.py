"""Takes submissions in: names checked, exercise files copied out, inputs fingerprinted.

Taking submissions in: their names checked, the exercise files this tree names copied out of
them (regular files only, size-limited, every path component opened relative to the one before
without following a link, nothing special ever opened, within a time bound), and the fingerprint
of every input of their verdicts.
"""
from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import threading
import time
from pathlib import Path

from ..course import Chapter

SOURCE_LIMIT = 1 << 20          # an exercise file larger than 1 MiB is refused
INTAKE_SECONDS = 60             # reading one submission's files: longer, and it is refused
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
OPEN_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class Refused(Exception):
    """A submission that cannot be taken in: the message says why."""


def open_folder(path: Path) -> int:
    """A descriptor of the submission folder PATH. The folders above it are the instructor's: they
    are resolved once, and then every component, PATH's own included, is opened relative to the one
    before without following a link (a component swapped for a symlink meanwhile fails to open):
    what is read below is PATH's, whatever is renamed or linked while it is read."""
    parent = Path(os.path.realpath(Path(path).absolute().parent))
    fd = os.open("/", OPEN_FOLDER)
    try:
        for part in [*parent.parts[1:], Path(path).name]:
            inner = os.open(part, OPEN_FOLDER, dir_fd=fd)
            os.close(fd)
            fd = inner
    except OSError:
        os.close(fd)
        raise
    return fd


def open_inner(fd: int, name: str) -> int | None:
    """The folder NAME in the open folder FD, never through a link; None if it is not a folder."""
    try:
        return os.open(name, OPEN_FOLDER, dir_fd=fd)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            return None
        raise


def read_source(folder: int, name: str) -> bytes | str | None:
    """The bytes of the exercise file NAME in the open folder FOLDER, or why it is refused (a str),
    or None when it is missing. Never opens anything but a regular file, never follows a link,
    never waits on a FIFO or a device, never reads more than SOURCE_LIMIT + 1 bytes."""
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file (symlinks are refused)"
    try:
        fd = os.open(name, OPEN_FILE, dir_fd=folder)
    except FileNotFoundError:
        return None
    except OSError:  # a symlink swapped in since (ELOOP), or anything it cannot open
        return "not a regular file (symlinks are refused)"
    try:
        info = os.fstat(fd)  # what was opened, whatever was there a moment before
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file (symlinks are refused)"
        if info.st_size > SOURCE_LIMIT:
            return f"larger than {SOURCE_LIMIT >> 20} MiB"
        data = bytearray()
        while len(data) <= SOURCE_LIMIT:
            chunk = os.read(fd, SOURCE_LIMIT + 1 - len(data))
            if not chunk:
                break
            data += chunk
        if len(data) > SOURCE_LIMIT:
            return f"larger than {SOURCE_LIMIT >> 20} MiB"
        return bytes(data)
    finally:
        os.close(fd)


def read_sources(submission: Path, chapters: list[Chapter], deadline: float) -> tuple[dict[str, bytes], list[str]]:
    """{relative path: bytes} of the exercise files this tree names, and the refusals."""
    taken, refused = {}, []
    root = open_folder(submission)
    try:
        inner = open_inner(root, "exercises")
        exercises = inner if inner is not None else root
        try:
            for chapter in chapters:
                folder = open_inner(exercises, chapter.folder)
                if folder is None:
                    try:
                        if stat.S_ISLNK(os.stat(chapter.folder, dir_fd=exercises, follow_symlinks=False).st_mode):
                            refused += [f"{chapter.folder}/{s}: not a regular file (symlinks are refused)"
                                        for s in chapter.sources]
                    except OSError:
                        pass
                    continue
                try:
                    for source in chapter.sources:
                        if time.monotonic() > deadline:
                            raise Refused(f"refused: its files could not be read within {INTAKE_SECONDS} s")
                        data = read_source(folder, source)
                        if isinstance(data, str):
                            refused.append(f"{chapter.folder}/{source}: {data}")
                        elif data is not None:
                            taken[f"{chapter.folder}/{source}"] = data
                finally:
                    os.close(folder)
        finally:
            if inner is not None:
                os.close(inner)
    finally:
        os.close(root)
    return taken, refused


def take_sources(submission: Path, into: Path | None, chapters: list[Chapter],
                 seconds: float = INTAKE_SECONDS) -> tuple[dict[str, str], list[str]]:
    """Copies the exercise files this tree names out of the submission (INTO None: only reads
    them), as read_sources reads them, within SECONDS (a thread: a file system that blocks a read
    cannot hold the run). Returns {relative path: sha256} and the list of refusals; Refused when
    the folder cannot be opened as it was given or is not read in time."""
    result: list = []

    def work() -> None:
        try:
            result.append(read_sources(submission, chapters, time.monotonic() + seconds))
        except (OSError, Refused) as error:
            result.append(error)

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(seconds + 5)
    if not result:
        raise Refused(f"refused: its files could not be read within {seconds:.0f} s")
    if isinstance(result[0], Refused):
        raise result[0]
    if isinstance(result[0], OSError):
        raise Refused("refused: not a folder, or it changed while it was read (symlinks are refused)")
    taken, refused = result[0]
    if into is not None:
        for relative, data in taken.items():
            (into / relative).parent.mkdir(parents=True, exist_ok=True)
            (into / relative).write_bytes(data)
    return {path: hashlib.sha256(data).hexdigest() for path, data in taken.items()}, refused


def fingerprint(sources: dict[str, str], kit: dict) -> str:
    """Every input of a verdict: the kit (checks, lib, server, headers, steps, compiler, sandbox
    mode), the settings (copied into the kit) and the submission's files."""
    digest = hashlib.sha256(kit["fingerprint"].encode())
    for path, sha in sorted(sources.items()):
        digest.update(f"{path}\t{sha}\n".encode())
    return digest.hexdigest()


def refusal(submission: Path, seen: set[str], out_dir: Path) -> str | None:
    """Why a submission is refused before anything is read from it, or None. Its name is its own:
    student-named folders live in folders of their own (tree.py), where no grader file is."""
    name = submission.name
    if not NAME.match(name):
        return "refused: the folder's name must be letters, digits, '.', '_' or '-', starting with a letter or digit"
    if submission.is_symlink() or not submission.is_dir():
        return "refused: not a folder (symlinks are refused)"
    if name in seen:
        return "refused: another submission has the same name"
    resolved = submission.resolve()
    if out_dir == resolved or out_dir in resolved.parents or resolved in out_dir.parents:
        return "refused: the output folder is inside or around it"
    return None


def refused_name(submission: Path) -> str:
    """The name a refused submission's report goes under: '_refused-' and a digest of the path as
    given, which no submission's own name can be (a name starts with a letter or digit), and which
    differs for a duplicate."""
    return "_refused-" + hashlib.sha256(os.fsencode(str(submission))).hexdigest()[:8]
