"""The seconds one submission has spent compiling and checking: its budgets, shared by the steps."""
from __future__ import annotations

import fcntl
from pathlib import Path

from ..files import atomic_write


class Ledger:
    """The seconds a submission has spent compiling and checking in this CTest run (its start step
    resets it): the per-submission budgets. Lines "compile SECONDS" and "checks SECONDS", shared
    with grading/native/check.cpp; steps of one submission may run at once (ctest -j): a lock."""

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
            atomic_write(self.path, "".join(f"{k} {v}\n" for k, v in data.items()))
