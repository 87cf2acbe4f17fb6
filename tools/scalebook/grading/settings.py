"""The time limits and budgets of a grading run, with the defaults an instructor overrides."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .sandbox import Limits


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
