"""The errors a command reports to its user, each with the exit status workbook.py gives it."""
from __future__ import annotations


class WorkbookError(Exception):
    """A failure the user can act on: printed as "workbook: MESSAGE", exit status EXIT."""
    EXIT = 1


class UsageError(WorkbookError):
    """A user's mistake on the command line: printed with the usage line, exit status 2."""
    EXIT = 2


class BuildError(WorkbookError):
    """The workbook itself failed to build (not a student's exercise): shown with its log."""


class PackageError(WorkbookError):
    """Packages are missing and cannot be installed from here; the message says how."""
