"""Runs a chapter's checks so that a crash or a hang costs only the check it happens in.

Running a chapter's checks so that a crash or a hang costs the check it happens in, not the
chapter: the check binary writes each check's start and end to a results file as it goes; when the
process dies or stalls inside a check, that check is named (with the signal, or the time limit) and
the binary runs again on the checks that have not run yet.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

from .. import isolate
from ..verdicts import ORDER, VERDICT_WORDS


class CheckResult:
    """A plain class, not a dataclass: importing dataclasses would cost every check a thirtieth of
    a second."""

    def __init__(self, name: str, status: str, message: str = ""):
        self.name = name
        self.status = status      # passed, failed, crashed, timed_out, compile_error, not_run
        self.message = message

    def __repr__(self) -> str:
        return f"CheckResult({self.name!r}, {self.status!r}, {self.message!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, CheckResult) and (self.name, self.status, self.message) == (
            other.name, other.status, other.message)

    @property
    def exercise(self) -> str:
        return self.name.split(" ", 1)[0]


def unescape(text: str) -> str:
    """The results file's escapes (\\n, \\\\) back to text."""
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), text)


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def doctest_filter(names: list[str]) -> str:
    return ",".join(name.replace(",", "\\,") for name in names)


def read_results(path: Path) -> list[tuple[str, str, str]]:
    """(status, name, message) lines; a last line cut short by a dying process is dropped."""
    if not path.exists():
        return []
    text = path.read_text(errors="replace")
    rows = []
    for line in text.split("\n")[:-1]:  # only whole lines
        parts = line.split("\t", 2)
        if len(parts) == 3:
            rows.append((parts[0], parts[1], unescape(parts[2])))
    return rows


def watch_round(command: list[str], results_file: Path, log_path: Path, work_dir: Path, timeout: float,
                env: dict[str, str] | None) -> tuple[int | None, str | None, float]:
    """Runs one round of the checks binary, killing it when no check has started or ended for
    TIMEOUT seconds. Returns its exit status, the check it stalled in (None) and when it last moved."""
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                                   stdin=subprocess.DEVNULL, cwd=work_dir, start_new_session=True)
        running, since, seen = None, time.monotonic(), 0
        stalled = None
        while process.poll() is None:
            rows = read_results(results_file)
            if len(rows) != seen:
                seen = len(rows)
                last = rows[-1]
                running = last[1] if last[0] == "start" else None
                since = time.monotonic()
            if time.monotonic() - since > timeout:
                stalled = running
                kill_group(process.pid)
                process.wait()
                break
            try:  # a sleep that ends as soon as the checks do: no poll's wait added to every check
                process.wait(timeout=0.02)
            except subprocess.TimeoutExpired:
                pass
    kill_group(process.pid)  # whatever the check left running dies with it
    return process.returncode, stalled, since


def kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def read_round(results_file: Path, names: list[str], results: dict[str, CheckResult]) -> tuple[str | None, bool]:
    """The verdicts one round wrote into RESULTS; returns the check it was inside when it ended (if
    any) and whether it got anywhere."""
    started = None
    progressed = False
    for status, name, message in read_results(results_file):
        if name not in names or name in results:
            continue
        if status == "start":
            started = name
            continue
        started = None if name == started else started
        progressed = True
        if status == "crashed":  # "SIGFPE - ... | input: ...": the signal, and the call's inputs
            signal_text, _, contexts = message.partition(" | ")
            results[name] = CheckResult(
                name, "crashed", f"the process died of {signal_text.split(' - ')[0]} inside this check"
                + (f" | {contexts}" if contexts else ""))
        elif status == "passed":
            results[name] = CheckResult(name, "passed")
        else:
            results[name] = CheckResult(name, "failed", message)
    return started, progressed


def blame_interrupted(started: str, stalled: str | None, code: int | None, remaining: list[str], timeout: float,
                      skip_after_timeout: bool, results: dict[str, CheckResult]) -> None:
    """The check a round ended inside: timed out (and, with SKIP_AFTER_TIMEOUT, its exercise's other
    checks not run), or crashed with the signal or exit status."""
    if stalled == started:
        results[started] = CheckResult(started, "timed_out", f"still running after {timeout:g} s: an endless loop?")
        if skip_after_timeout:  # the exercise's other checks would most likely hang too
            for name in remaining:
                if name.split(" ", 1)[0] == started.split(" ", 1)[0] and name not in results:
                    results[name] = CheckResult(name, "not_run", f"not run: '{started}' timed out")
    elif code is not None and code < 0:
        results[started] = CheckResult(started, "crashed", f"the process died of {signal_name(-code)} inside this check")
    else:
        results[started] = CheckResult(started, "crashed", f"the process exited (status {code}) inside this check")


def never_started(stalled: str | None, since: float, code: int | None, log_path: Path, timeout: float) -> str:
    """Why a round died before its first check: static initialisation, or the binary itself."""
    if stalled is not None or (time.monotonic() - since) > timeout:
        return f"the checks did not start within {timeout:g} s"
    if code is not None and code < 0:
        return f"the checks process died of {signal_name(-code)} before its first check"
    output = log_path.read_text(errors="replace").strip()
    return f"the checks process ended (status {code}) before its first check" + (
        f": {output.splitlines()[-1]}" if output else "")


def run_checks(binary: Path, names: list[str], work_dir: Path, timeout: float,
               wrapper: list[str] | None = None, skip_after_timeout: bool = True,
               env: dict[str, str] | None = None) -> dict[str, CheckResult]:
    """Runs every check in NAMES (the registered names, in order) and returns a result for each.
    SKIP_AFTER_TIMEOUT: once a check times out, the same exercise's other checks are not run
    (a student waits for one time limit, not one per check)."""
    work_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, CheckResult] = {}
    rounds = 0
    while len(results) < len(names):
        rounds += 1
        remaining = [n for n in names if n not in results]
        results_file = work_dir / f"results.{rounds}.tsv"
        results_file.unlink(missing_ok=True)
        # Always the names asked for: the binary may hold checks of exercises that did not compile
        # (the partial link), which would crash first and stop the round before any of NAMES ran.
        command = [*(wrapper or []), str(binary), "--no-colors", "--no-version",
                   f"--scalebook-results={results_file}", f"--test-case={doctest_filter(remaining)}"]
        log_path = work_dir / f"output.{rounds}.log"
        code, stalled, since = watch_round(command, results_file, log_path, work_dir, timeout, env)
        started, progressed = read_round(results_file, names, results)
        if started is not None and started not in results:
            progressed = True
            blame_interrupted(started, stalled, code, remaining, timeout, skip_after_timeout, results)
        if not progressed:
            why = never_started(stalled, since, code, log_path, timeout)
            for name in remaining:
                results.setdefault(name, CheckResult(name, "not_run", why))
    return results


# The texts a verdict shows, in one place so that tools/tests/test_messages.py can run them all and
# hold them to one rule: no phrase said twice in a row ("does not compile: does not compile:").
COMPILE_ERROR = "does not compile — {error}"
DEPENDS_ON_BROKEN = "not run: {exercise} does not compile — {error}"
DEPENDS_JOIN = "; "


def exercise_verdicts(exercises: list[str], results: dict[str, CheckResult],
                      compile_errors: dict[str, str]) -> dict[str, CheckResult]:
    """Per exercise: the worst of its checks (a representative CheckResult), or its compile error
    (the message is the compiler's first error alone; verdict_text() says "does not compile")."""
    verdicts: dict[str, CheckResult] = {}
    for exercise in exercises:
        if exercise in compile_errors:
            verdicts[exercise] = CheckResult(f"{exercise} compile", "compile_error", compile_errors[exercise])
            continue
        mine = [r for r in results.values() if r.exercise == exercise]
        if not mine:
            verdicts[exercise] = CheckResult(f"{exercise} -", "not_run", "no check ran")
            continue
        verdicts[exercise] = min(mine, key=lambda r: ORDER[r.status])
    return verdicts


def undefined_symbols(obj: Path) -> str:
    """The demangled names an object file calls but does not define ("" if nm cannot tell)."""
    try:
        return subprocess.run(["nm", "-uC", str(obj)], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def explain_dependencies(verdicts: dict[str, CheckResult], compile_errors: dict[str, str],
                         sources: dict[str, tuple[str, Path]], functions: dict[str, list[str]]) -> None:
    """An exercise whose file calls a contract function of one that does not compile cannot run (the
    call lands nowhere): its verdict becomes not_run, naming that exercise and its first error.
    SOURCES: exercise -> (source file, object file); FUNCTIONS: exercise -> its contract functions
    (the manifest). Which exercise a file calls is read from the object's undefined symbols
    (isolate.blocked, as grading decides); a crash with no such symbol to go by is put down to every
    earlier exercise that does not compile (an exercise may call the ones before it)."""
    for exercise, verdict in verdicts.items():
        if verdict.status in ("passed", "compile_error") or exercise not in sources:
            continue
        calls = undefined_symbols(sources[exercise][1])
        broken = isolate.blocked(exercise, calls, [e for e in compile_errors if e in sources], functions)
        if not broken and verdict.status == "crashed":
            number = int(exercise.split(".")[1])
            broken = [e for e in compile_errors if int(e.split(".")[1]) < number]
        if broken:
            verdict.status = "not_run"
            verdict.message = DEPENDS_JOIN.join(
                DEPENDS_ON_BROKEN.format(exercise=e, error=compile_errors[e])
                for e in sorted(broken, key=lambda e: int(e.split(".")[1])))


def verdict_text(status: str, message: str) -> str:
    """One line for an exercise that did not pass, as check, watch and progress show it."""
    if status == "compile_error":
        return COMPILE_ERROR.format(error=message)
    if status == "not_run" and message.startswith("not run"):
        return message
    what = VERDICT_WORDS[status]
    return f"{what}: {message}" if what and message else what or message


def registered_checks(build_dir: Path, chapter_folder: str) -> list[str]:
    """The check names CMake registered for a chapter (build_dir/checks.tsv), in order."""
    names = []
    for line in (build_dir / "checks.tsv").read_text().splitlines():
        parts = line.split("\t")
        if len(parts) == 5 and parts[0] == chapter_folder:
            names.append(parts[4])
    return names


# How a check's message names a mistake (lib/testing/scalebook/testing.hpp, kMistakeForm): "known
# mistake [ID]: what it is", ID in snake_case. The checks print it only when the output is what
# that mistake produces on that input; hints, the grading report and the class page key on ID.
MISTAKE = re.compile(r"known mistake \[([a-z][a-z0-9_]*)\]")


def mistake_ids(message: str) -> list[str]:
    """The ids of the mistakes a check's failure message names, in order, each once."""
    return list(dict.fromkeys(MISTAKE.findall(message)))


def diagnosis(message: str) -> str:
    """The one line that says what is wrong: a named mistake if the check found one, else the
    message's first part."""
    parts = [re.sub(r"^threw: ", "", p.strip()) for p in re.split(r"\s\|\s|\n", message) if p.strip()]
    for part in parts:
        if MISTAKE.search(part):
            return part
    return parts[0] if parts else ""
