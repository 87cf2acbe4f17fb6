"""What ./workbook grade and the steps of its CTest tree share: the settings an instructor may
change, the tree's layout, the verdict statuses and the text rules for anything that came from a
submission. Imported by every CTest step (tools/grade_step.py), so it imports little."""
from __future__ import annotations

import fcntl
import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .sandbox import Limits

MESSAGE_LIMIT = 500
OUTPUT_LIMIT = 4000


@dataclass(frozen=True)
class Settings:
    """Every time limit and budget of a grading run, with the defaults an instructor overrides on
    ./workbook grade's command line: wall-clock seconds, but CPU seconds for one call's CPU and for
    compiling (a busy machine must not fail an honest compile)."""
    call_seconds: int = 10          # one call of a student's function (wall; the worker's client)
    call_cpu_seconds: int = 5       # one call's CPU time (the worker's client)
    check_seconds: int = 60         # one check, however many calls it makes
    submission_seconds: int = 300   # all checks of one submission together
    compile_seconds: int = 30       # compiling one exercise file: CPU seconds
    compile_budget_seconds: int = 240  # compiling all of one submission's files together: CPU seconds
    limits: Limits = field(default_factory=Limits)

    def as_dict(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_dict(data: dict) -> "Settings":
        data = dict(data)
        data["limits"] = Limits(**data["limits"])
        return Settings(**data)


# --- the tree ------------------------------------------------------------------------------------
# DIR/CTestTestfile.cmake             subdirs("ctest")
# DIR/ctest/CTestTestfile.cmake       subdirs() of every submission
# DIR/ctest/kit/                      this tree's trusted half, copied once per run (see grade.py)
# DIR/ctest/objects/                  compiled exercise files by content (identical files compile once)
# DIR/ctest/NAME/                     one submission: CTestTestfile.cmake, src/, build/, runs/, results/

def read_json(path: Path, default=None):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return default


def write_json(path: Path, data) -> None:
    """Complete or absent, never half written."""
    temporary = path.with_name(path.name + f".{os.getpid()}.part")
    temporary.write_text(json.dumps(data, indent=1, ensure_ascii=True) + "\n")
    temporary.replace(path)


class Ledger:
    """The seconds a submission has spent compiling and checking in this CTest run (its start step
    resets it): the per-submission budgets. Lines "compile SECONDS" and "checks SECONDS", shared
    with tools/grade_check.cpp; steps of one submission may run at once (ctest -j): a lock."""

    def __init__(self, path: Path):
        self.path = path

    def _read(self) -> dict[str, float]:
        try:
            words = self.path.read_text().split()
        except OSError:
            return {}
        return {words[i]: float(words[i + 1]) for i in range(0, len(words) - 1, 2)}

    def spent(self, what: str) -> float:
        return self._read().get(what, 0.0)

    def add(self, what: str, seconds: float) -> None:
        with open(self.path.with_name(self.path.name + ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            data = self._read()
            data[what] = data.get(what, 0.0) + seconds
            temporary = self.path.with_name(self.path.name + ".part")
            temporary.write_text("".join(f"{k} {v}\n" for k, v in data.items()))
            temporary.replace(self.path)


# --- statuses ------------------------------------------------------------------------------------
STATUSES = ("passed", "failed", "crashed", "timed_out", "compile_error", "not_run")


def status_from_transport(code: str) -> str:
    """A results-file status (written by the trusted checks process) as a report status. Only the
    status field decides; never the message, which a submission can write."""
    if code == "passed":
        return "passed"
    if code == "crashed" or code.startswith("worker_crashed:"):
        return "crashed"
    if code.startswith("worker_timed_out:"):
        return "timed_out"
    return "failed"  # failed, worker_failed, anything unknown


LIMIT_NAMES = {"call_cpu": "call CPU", "call_wall": "call wall", "check_wall": "check wall",
               "submission_budget": "submission budget"}


def transport_prefix(code: str) -> str:
    """The named reason a transport status carries, e.g. 'timed_out: call wall', '' for none."""
    if code.startswith("worker_timed_out:"):
        limit = code.split(":", 1)[1]
        return f"timed_out: {LIMIT_NAMES.get(limit, safe_text(limit, 40))}"
    if code.startswith("worker_crashed:"):
        return f"crashed: {safe_text(code.split(':', 1)[1], 40)}"
    if code == "crashed":
        return "crashed: the trusted checks process"
    if code == "worker_failed":
        return "failed: the worker's reply"
    return ""


def is_error_path(check_name: str) -> bool:
    """An error-path check's name contains the word "throw" or "throws" (and no other's does)."""
    return re.search(r"\bthrows?\b", check_name) is not None


# --- text from a submission ----------------------------------------------------------------------
# Control characters (C0 but tab and newline, DEL, C1), characters XML 1.0 cannot hold, and the
# bidirectional overrides that reorder what a terminal or page shows: replaced by a visible escape.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_text(text: str | bytes, limit: int = MESSAGE_LIMIT, one_line: bool = True) -> str:
    """Hostile text made safe for every report format and the terminal: invalid UTF-8 and unsafe
    characters become visible escapes (\\x1b), whitespace runs one space (ONE_LINE), cut to LIMIT."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="backslashreplace")
    if one_line:
        text = " ".join(text.split())
    text = _UNSAFE.sub(_escape, text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def safe_block(text: str | bytes, limit: int = OUTPUT_LIMIT) -> str:
    """Like safe_text, keeping line breaks (a program's output)."""
    return safe_text(text, limit, one_line=False).replace("\r", "\\x0d")


# --- compile errors ------------------------------------------------------------------------------

def first_error(output: str, source: str, shown_as: str, source_text: bytes) -> dict:
    """The compiler's first error, preferring one in the exercise's own file (/src/SOURCE in the
    box), as {message, line, source_line}: the box's path shown as SHOWN_AS."""
    lines = output.splitlines()
    own = re.compile(rf"^/src/{re.escape(source)}:(\d+):(\d+): (?:fatal )?error: (.*)$")
    for line in lines:
        match = own.match(line)
        if match:
            number = int(match.group(1))
            source_lines = source_text.split(b"\n")
            text = source_lines[number - 1] if 0 < number <= len(source_lines) else b""
            return {"message": safe_text(f"{shown_as}:{number}: error: {match.group(3)}"),
                    "line": number, "source_line": safe_text(text, 300)}
    for line in lines:
        if re.search(r"\berror\b", line):
            return {"message": safe_text(line.replace(f"/src/{source}", shown_as))}
    return {"message": f"{shown_as}: does not compile"}
