"""Configuring and building, with progress on screen, and one chapter's checks built so that an
exercise file that does not compile costs that exercise only."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .chapters import ROOT, Chapter
from .ui import Progress


class BuildError(Exception):
    """The workbook itself failed to build (not a student's exercise): shown with its log."""


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
    """cmake --build for TARGETS; streams ninja's "[3/58] ..." lines to PROGRESS. Returns the exit
    status and the whole output (also written to LOG)."""
    command = ["cmake", "--build", str(build_dir), "--target", *targets]
    if keep_going:
        command += ["--", "-k", "0"]
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


@dataclass
class ChapterBuild:
    binary: Path | None                                        # the checks to run, None: nothing links
    compile_errors: dict[str, str] = field(default_factory=dict)  # exercise id -> first error
    log: Path | None = None
    failure: str = ""                                          # why nothing links, if binary is None


def exercise_objects(build_dir: Path, chapter: Chapter) -> list[tuple[str, str, Path]]:
    """(exercise id, source file, object file) from the build's exercises.tsv."""
    table = build_dir / "chapters" / chapter.folder / "exercises.tsv"
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
    editor that keeps times) would keep its stale object. Content hashes decide instead: an
    exercise whose text changed since the last build loses its object, so it is compiled again."""
    record = state_dir / f"{chapter.folder}.sources.json"
    before = json.loads(record.read_text()) if record.exists() else {}
    now = {}
    table = build_dir / "chapters" / chapter.folder / "exercises.tsv"
    if not table.exists():
        return
    track = track_dir(build_dir)
    for exercise, source, obj in exercise_objects(build_dir, chapter):
        path = track / chapter.folder / source
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else ""
        now[source] = digest
        if before.get(source) not in (None, digest):
            obj.unlink(missing_ok=True)
    state_dir.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(now))


def track_dir(build_dir: Path) -> Path:
    """SCALEBOOK_TRACK_DIR of a configured build."""
    for line in (build_dir / "CMakeCache.txt").read_text().splitlines():
        if line.startswith("SCALEBOOK_TRACK_DIR:"):
            return Path(line.split("=", 1)[1])
    return ROOT / "exercises"


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
    for exercise, source, obj in exercise_objects(build_dir, chapter):
        relative = os.path.normpath(os.path.relpath(obj, build_dir))
        if relative in failed or str(obj) in failed:
            errors[exercise] = first_error(failed.get(relative) or failed.get(str(obj)) or [], source)
        else:
            compiled.append(obj)
    if not errors:  # something other than an exercise failed: the checks or the library
        lines = [line for lines in failed.values() for line in lines] or output.splitlines()
        return ChapterBuild(None, {}, log, first_error(lines, "checks.cpp"))
    rsp = build_dir / "chapters" / chapter.folder / "track_objects.rsp"
    rsp.write_text("".join(f"{obj}\n" for obj in compiled))  # rewritten: relinks with fresh objects
    partial = checks.with_name(f"{chapter.target}_checks_partial")
    code, more = build(build_dir, [partial.name], log.with_suffix(".partial.log"), progress,
                       timeout=timeout)
    if code != 0:
        return ChapterBuild(None, errors, log, first_error(more.splitlines(), "checks"))
    return ChapterBuild(partial, errors, log)


def tail(path: Path, lines: int = 25) -> str:
    text = path.read_text(errors="replace").splitlines()
    return "\n".join(text[-lines:])


def shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def which(program: str) -> str | None:
    return shutil.which(program)


def python_for_torch() -> str:
    """Debian's python3 (where python3-torch lives) when present, else python3 on PATH."""
    return "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable
