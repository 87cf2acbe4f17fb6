"""The errors a command reports to its user, each with the exit status workbook.py gives it.

Every error a user can act on is a WorkbookError: tools/workbook.py prints it as "workbook: MESSAGE"
and exits with its EXIT, in one place. Anything else is a bug, and shows its traceback.
"""
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


class SandboxError(WorkbookError):
    """No bubblewrap, no user namespaces or no seccomp module: grading refuses to run unboxed."""
    EXIT = 2


class GradingError(WorkbookError):
    """The grading kit could not be built from this tree, or ctest gave no results."""


class SlurmError(WorkbookError):
    """Slurm could not be used: a command failed, a daemon did not start, a bad argument. The
    message names the function and what went wrong (with the daemon's log where there is one)."""
    EXIT = 2


class PagesError(WorkbookError):
    """A page could not be written: Jinja2 is missing, or a report is not shaped like report.json.
    The message names the function and what was wrong."""


class ReleaseError(WorkbookError):
    """The student edition could not be written: the message says which step failed and why."""
