"""Configures and builds, and builds one chapter's checks so a broken file costs its exercise only.

Configuring and building, with progress on screen, and one chapter's checks built so that an
exercise file that does not compile costs that exercise only.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import zlib
from pathlib import Path

from ..config import LIB_HEADERS, ROOT
from ..course import Chapter
from ..errors import BuildError
from .. import isolate
from ..linking import link_message, unlinked_calls
from ..ui import Progress
from ..verdicts import safe_text
from .run_checks import undefined_symbols


def configure(preset: str, build_dir: Path, log_dir: Path, extra: list[str] | None = None) -> None:
    """Configures once; later builds re-run CMake by themselves when a CMakeLists changes."""
    if (build_dir / "build.ninja").exists():
        return
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / "configure.log"
    command = ["cmake", "--preset", preset, *(extra or [])]
    with open(log, "w") as out:
        code = subprocess.run(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL).returncode
    if code != 0:
        raise BuildError(f"configuring the {preset} track failed:\n{tail(log)}\n(log: {shown(log)})")


def build(build_dir: Path, targets: list[str], log: Path, progress: Progress | None = None,
          keep_going: bool = False, timeout: float | None = None) -> tuple[int, str]:
    """Builds TARGETS with ninja; streams its "[3/58] ..." lines to PROGRESS. Returns the exit
    status and the whole output (also written to LOG). Ninja is called directly, not through
    `cmake --build`, which would only start a second program to start it (a tenth of a second of
    every check on a loaded machine); ninja re-runs CMake itself when a CMakeLists changed."""
    ninja = make_program(build_dir)
    if ninja:
        command = [ninja, "-C", str(build_dir), *targets] + (["-k", "0"] if keep_going else [])
    else:
        command = ["cmake", "--build", str(build_dir), "--target", *targets]
        command += ["--", "-k", "0"] if keep_going else []
    log.parent.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          stdin=subprocess.DEVNULL, text=True, errors="replace",
                          start_new_session=True) as process:
        try:
            assert process.stdout is not None
            for line in process.stdout:
                lines.append(line)
                if progress is not None and re.match(r"^\[\d+/\d+\] ", line):
                    progress.update(line.strip())
            code = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(process)
            lines.append(f"\n(stopped after {timeout} s)\n")
            code = 124
        except BaseException:
            kill_group(process)
            raise
    text = "".join(lines)
    log.write_text(text)
    return code, text


def kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, 9)
    except ProcessLookupError:
        pass
    process.wait()


class ChapterBuild:
    """What build_checks made (a plain class: see CheckResult on dataclasses)."""

    def __init__(self, binary: Path | None, compile_errors: dict[str, str] | None = None,
                 log: Path | None = None, failure: str = ""):
        self.binary = binary                         # the checks to run, None: nothing links
        self.compile_errors = compile_errors or {}   # exercise id -> first error
        self.log = log
        self.failure = failure                       # why nothing links, if binary is None


def exercise_objects(build_dir: Path, chapter: Chapter) -> list[tuple[str, str, Path]]:
    """(exercise id, source file, object file) from the build's exercises.tsv."""
    table = build_dir / "chapters" / chapter.folder / "exercises.tsv"
    if not table.is_file():
        raise BuildError(f"the build in {shown(build_dir)} has no chapter {chapter.folder} (its configure did not "
                         f"take chapters/{chapter.folder}/chapter.json): run cmake --preset once more, or remove "
                         f"{shown(build_dir)} and run ./workbook again")
    rows = []
    for line in table.read_text().splitlines():
        exercise, source, obj = line.split("\t")
        rows.append((exercise, source, Path(os.path.normpath(obj))))
    return rows


def failed_outputs(output: str) -> dict[str, list[str]]:
    """ninja's FAILED: edges, each with the lines it printed."""
    failed: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in output.splitlines():
        if line.startswith("FAILED: "):
            current = []
            for path in line[len("FAILED: "):].split():
                failed[os.path.normpath(path)] = current
        elif re.match(r"^\[\d+/\d+\] |^ninja: ", line):
            current = None
        elif current is not None:
            current.append(line)
    return failed


def first_error(lines: list[str], source: str) -> str:
    """The compiler's first error, preferring one in the exercise's own file."""
    for pattern in (rf"{re.escape(source)}:\d+:\d+: (fatal )?error", r"\berror\b", r"Error"):
        for line in lines:
            if re.search(pattern, line):
                text = line.replace(str(ROOT) + "/", "")
                return re.sub(r"^.*?/(exercises|submission)/", r"\1/", text) if source in text else text
    return "the file does not compile"


def forget_changed_sources(build_dir: Path, chapter: Chapter, state_dir: Path) -> None:
    """ninja rebuilds by modification time; a file copied with its old time (cp -p, a backup, an
    editor that keeps times) would keep its stale object. The content decides instead: an exercise
    whose length or CRC-32 changed since the last build loses its object, so it is compiled again.
    (A CRC, not SHA-256: hashlib loads OpenSSL, a hundredth of a second of every check, to detect
    an edit, not an attack.)"""
    record = state_dir / f"{chapter.folder}.sources.json"
    before = json.loads(record.read_text()) if record.exists() else {}
    now = {}
    table = build_dir / "chapters" / chapter.folder / "exercises.tsv"
    if not table.exists():
        return
    track = track_dir(build_dir)
    for exercise, source, obj in exercise_objects(build_dir, chapter):
        path = track / chapter.folder / source
        data = path.read_bytes() if path.exists() else b""
        digest = f"{len(data)}:{zlib.crc32(data):08x}" if path.exists() else ""
        now[source] = digest
        if before.get(source) not in (None, digest):
            obj.unlink(missing_ok=True)
    state_dir.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(now))


def cached(build_dir: Path, name: str) -> str | None:
    """A variable of a configured build's CMakeCache.txt, None when it has none."""
    cache = build_dir / "CMakeCache.txt"
    if cache.exists():
        for line in cache.read_text(errors="replace").splitlines():
            if line.startswith(name + ":"):
                return line.split("=", 1)[1]
    return None


def track_dir(build_dir: Path) -> Path:
    """SCALEBOOK_TRACK_DIR of a configured build."""
    return Path(cached(build_dir, "SCALEBOOK_TRACK_DIR") or ROOT / "exercises")


def make_program(build_dir: Path) -> str | None:
    """The ninja a Ninja build was configured with (None: another generator, or not configured)."""
    if cached(build_dir, "CMAKE_GENERATOR") != "Ninja":
        return None
    program = cached(build_dir, "CMAKE_MAKE_PROGRAM")
    return program if program and Path(program).exists() else None


def build_checks(build_dir: Path, chapter: Chapter, state_dir: Path,
                 progress: Progress | None = None, timeout: float | None = None) -> ChapterBuild:
    """Builds chNN_checks. When some exercise files do not compile, links chNN_checks_partial from
    the objects of those that did, so the other exercises keep their verdicts."""
    log = state_dir / f"{chapter.folder}.build.log"
    forget_changed_sources(build_dir, chapter, state_dir)
    checks = build_dir / "chapters" / chapter.folder / f"{chapter.target}_checks"
    code, output = build(build_dir, [f"{chapter.target}_checks"], log, progress, keep_going=True,
                         timeout=timeout)
    if code == 0:
        return ChapterBuild(checks, {}, log)
    if code == 124:
        return ChapterBuild(None, {}, log, f"the build took longer than {timeout:g} s")
    failed = failed_outputs(output)
    compiled, errors = [], {}
    objects = exercise_objects(build_dir, chapter)
    for exercise, source, obj in objects:
        relative = os.path.normpath(os.path.relpath(obj, build_dir))
        if relative in failed or str(obj) in failed:
            errors[exercise] = first_error(failed.get(relative) or failed.get(str(obj)) or [], source)
        else:
            compiled.append(obj)
    # Every file compiled but the checks do not link: an exercise that calls what the chapter does
    # not link (lib's answer of this chapter or a later one, or a function never written) costs
    # that exercise only.
    link_lines = failed.get(os.path.normpath(os.path.relpath(checks, build_dir))) or []
    named = {os.path.normpath(os.path.relpath(obj, build_dir)): e for e, _, obj in objects}
    named.update({str(obj): e for e, _, obj in objects})
    folder = track_dir(build_dir).name + "/" + chapter.folder
    for exercise, symbols in unlinked_calls(link_lines, named).items():
        source, obj = next((s, o) for e, s, o in objects if e == exercise)
        errors[exercise] = link_message(f"{folder}/{source}", chapter.number, symbols, LIB_HEADERS)
        compiled = [o for o in compiled if o != obj]
    # Two files that define one symbol: those two exercises, in grading's words (isolate.py).
    if link_lines and compiled:
        for exercise, sentence in duplicate_definitions(objects, compiled, folder).items():
            errors[exercise] = sentence
            compiled = [o for e, _, o in objects if o in compiled and e != exercise]
    if not errors:  # something other than an exercise failed: the checks or the library
        lines = [line for lines in failed.values() for line in lines] or output.splitlines()
        return ChapterBuild(None, {}, log, first_error(lines, "checks.cpp"))
    failure = link_partial(build_dir, chapter, compiled, objects, errors, folder, log, progress, timeout)
    if failure is not None:
        return ChapterBuild(None, errors, log, failure)
    partial = checks.with_name(f"{chapter.target}_checks_partial")
    return ChapterBuild(partial, errors, log)


def link_partial(build_dir: Path, chapter: Chapter, compiled: list[Path], objects: list[tuple[str, str, Path]],
                 errors: dict[str, str], folder: str, log: Path, progress: Progress | None,
                 timeout: float | None) -> str | None:
    """Links chNN_checks_partial from COMPILED (adding to ERRORS the exercises whose calls into lib
    would not link in the whole chapter either); returns why it did not link, or None."""
    rsp = build_dir / "chapters" / chapter.folder / "track_objects.rsp"
    partial = build_dir / "chapters" / chapter.folder / f"{chapter.target}_checks_partial"
    for _ in range(2):
        rsp.write_text("".join(f"{obj}\n" for obj in compiled))  # rewritten: relinks with fresh objects
        code, more = build(build_dir, [partial.name], log.with_suffix(".partial.log"), progress,
                           timeout=timeout)
        if code != 0:
            return first_error(more.splitlines(), "checks")
        # The partial link leaves every call unresolved, so that the exercises which compiled run
        # without those which did not; a call it left into lib (not into this chapter's exercises)
        # would not link in the whole chapter either, and costs its exercise as above.
        left = undefined(partial)
        own = f"scalebook::ch{chapter.number:02d}::"
        unlinked = {}
        for exercise, source, obj in objects:
            calls = [s for s in undefined(obj) if s in left and s.startswith("scalebook::")
                     and not s.startswith(own)] if obj in compiled else []
            if calls:
                unlinked[obj] = link_message(f"{folder}/{source}", chapter.number, calls, LIB_HEADERS)
                errors[exercise] = unlinked[obj]
        if not unlinked:
            return None
        compiled = [o for o in compiled if o not in unlinked]
    return None


def duplicate_definitions(objects: list[tuple[str, str, Path]], compiled: list[Path], folder: str) -> dict[str, str]:
    """{exercise: sentence} for the exercise files among COMPILED that define a symbol another one
    defines (isolate.duplicates, on nm's table of their objects)."""
    mine = [(e, s, o) for e, s, o in objects if o in compiled]
    try:
        listed = subprocess.run(["nm", "-C", "-A", "-g", *[str(o) for _, _, o in mine]], capture_output=True,
                                text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    table = isolate.read_symbols(listed.splitlines(), {str(o): e for e, _, o in mine})
    shown = {e: f"{folder}/{s}" for e, s, _ in mine}
    return isolate.duplicates([e for e, _, _ in mine], table, shown, lambda symbol: safe_text(symbol, 200))


def undefined(path: Path) -> set[str]:
    """The demangled symbols an object file or a program needs and does not define (nm -u)."""
    return {line.split(None, 1)[1] for line in undefined_symbols(path).splitlines()
            if line.strip().startswith("U ")}


def tail(path: Path, lines: int = 25) -> str:
    text = path.read_text(errors="replace").splitlines()
    return "\n".join(text[-lines:])


def shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)

