"""Writes the student edition: its files, the lessons' output, the benchmarks' figures, its README.

Writing the student edition: what it leaves out, the lessons' output and figures from the reference,
the benchmarks' figures, its README, and the checks of a scratch copy of it.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from .errors import ReleaseError
from .config import ROOT, is_edition, packages_for
from .course import Chapter, check_names, manifest_folders
from .loop.build import build
from . import ui

# Paths of the instructor's tree that the edition leaves out.
LEFT_OUT = [r"^solutions/", r"^chapters/[^/]+/bugzoo/", r"^tools/tests/", r"^tools/maintainer/",
            r"^cmake/apply_mutant\.py$", r"^\.ci/", r"^docs/tests/", r"^README\.md$", r"^docs/student-README\.md$",
            r"^term\.json$"]
README_SOURCE = ROOT / "docs" / "student-README.md"
EDITION_NOTE = "scalebook, student edition\n"
FIRST_CHECK_CHAPTER = 1            # the README shows what `./workbook check 1` prints on a fresh copy
STAGES = 5


def stage(number: int, text: str) -> None:
    ui.say(ui.bold(f"[{number}/{STAGES}] {text}"))


def git(*args: str, cwd: Path, check: bool = True) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=check).stdout


def tracked(tree: Path) -> list[str]:
    return sorted(f for f in git("ls-files", "-z", cwd=tree).split("\0") if f)


def tree_files(tree: Path) -> tuple[list[str], list[str]]:
    """The files of TREE's working tree that release reads: git's tracked files that are still
    there, and the files git does not track yet but does not ignore (a chapter being written);
    returns (all of them, the untracked ones among them)."""
    listed = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=tree).split("\0")
    untracked = set(git("ls-files", "-z", "--others", "--exclude-standard", cwd=tree).split("\0"))
    files = sorted({f for f in listed if f and (tree / f).is_file()})
    return files, [f for f in files if f in untracked]


def left_out_chapters(chapters: list[Chapter], root: Path = ROOT) -> list[str]:
    """Patterns for the folders of the chapters this tree has and the term leaves out (term.json)."""
    kept = {c.folder for c in chapters}
    return [rf"^(chapters|exercises|solutions|docs/prebuilt)/{re.escape(folder.name)}/"
            for folder in manifest_folders(root) if folder.name not in kept]


def without_instructor_sections(text: str) -> str:
    return re.sub(r"\n?\\if instructor\b.*?\\endif\n?", "\n", text, flags=re.S)


def student_presets(text: str) -> str:
    """CMakePresets.json without the presets that build the reference solution, which the edition
    does not have (a configure preset whose track is the reference's, or that inherits one, and the
    build, test and workflow presets that use one): an editor lists only presets that work."""
    data = json.loads(text)
    configure = {preset["name"]: preset for preset in data.get("configurePresets", [])}

    def reference(name: str) -> bool:
        preset = configure.get(name, {})
        parents = preset.get("inherits", [])
        parents = [parents] if isinstance(parents, str) else parents
        values = preset.get("cacheVariables", {}).values()
        return (any(str(value).rstrip("/").endswith("/solutions") for value in values)
                or any(reference(parent) for parent in parents))

    kept = {"configure": {name for name in configure if not reference(name)}}
    data["configurePresets"] = [p for p in data.get("configurePresets", []) if p["name"] in kept["configure"]]
    for kind in ("build", "test"):
        presets = [p for p in data.get(f"{kind}Presets", [])  # a hidden one may name no configure preset
                   if p.get("configurePreset") is None or p["configurePreset"] in kept["configure"]]
        data[f"{kind}Presets"] = presets
        kept[kind] = {p["name"] for p in presets}
    data["workflowPresets"] = [w for w in data.get("workflowPresets", [])
                               if all(step["name"] in kept[step["type"]] for step in w.get("steps", []))]
    for key in [k for k, v in data.items() if k.endswith("Presets") and not v]:
        del data[key]
    return json.dumps(data, indent=2) + "\n"


def is_released_edition(target: Path) -> bool:
    """An edition release wrote (config.is_edition) with the git history it gave it."""
    return (is_edition(target) and (target / ".git").exists() and
            subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=target,
                           capture_output=True).returncode == 0)


def refusal(target: Path) -> str:
    """Why DIR cannot take a release, or "" when it can (new, empty, or a clean edition)."""
    if ROOT == target or ROOT in target.parents:
        return "DIR must be outside this tree"
    if target.exists() and not target.is_dir():
        return f"{target} is a file, not a folder"
    if not target.exists() or not any(target.iterdir()):
        return ""
    if not is_released_edition(target):
        return (f"{target} is neither empty nor a student edition (an edition has an EDITION file and "
                "the git history release gave it); nothing was changed")
    dirty = git("status", "--porcelain", cwd=target)
    if dirty:
        return (f"{target} has changes that are not committed; commit or discard them, then release "
                f"again (nothing was changed):\n{dirty[:600]}")
    return ""


def run_lessons(chapters: list[Chapter]) -> Path:
    """Builds every chapter's lesson output and figures in the reference build; returns the build."""
    reference = ROOT / "build" / "reference"
    if not (reference / "build.ninja").exists():
        ui.say("  configuring the reference build (once)")
        subprocess.run(["cmake", "--preset", "reference"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    progress = ui.Progress("  building and running the lessons on the reference")
    code, output = build(reference, [f"{c.target}_docs_assets" for c in chapters],
                         reference / "workbook" / "release.build.log", progress)
    progress.done()
    if code != 0:
        raise ReleaseError(f"release: the reference's lessons did not build:\n{output[-3000:]}")
    return reference


def ccache_dir(reference: Path) -> str:
    cache = reference / "CMakeCache.txt"
    match = re.search(r"^SCALEBOOK_CCACHE_DIR:PATH=(.*)$", cache.read_text(), re.M) if cache.exists() else None
    return match.group(1) if match else str(ROOT / "build" / "ccache")


def without_hidden_checks(manifest: str, chapter: Chapter) -> str:
    """A chapter's manifest for the edition: its hidden_checks entry (the file's name) replaced by
    hidden_count, how many there are (./workbook check says so); the rest as written."""
    text = re.sub(r'^(\s*)"hidden_checks":\s*"[^"]*"', rf'\1"hidden_count": {chapter.hidden_count}', manifest,
                  count=1, flags=re.M)
    data = json.loads(text)
    if "hidden_checks" in data or data.get("hidden_count", 0) != chapter.hidden_count:
        raise ReleaseError(f"release: chapters/{chapter.folder}/chapter.json: its hidden_checks entry must be one "
                           'line, "hidden_checks": "FILE", for the edition to leave it out')
    return text


def hidden_files(chapters: list[Chapter]) -> set[str]:
    """The hidden checks' files (each chapter's manifest names its own): never in the edition."""
    return {f"chapters/{c.folder}/{c.hidden_checks}" for c in chapters if c.hidden_checks}


def leaked_hidden_checks(target: Path, chapters: list[Chapter]) -> list[str]:
    """Files of the edition in TARGET that name a hidden check (a hint or a page quoting one): the
    edition must not hold them, by name or by text."""
    names = [name for c in chapters if c.hidden_checks
             for name in check_names(ROOT / "chapters" / c.folder / c.hidden_checks)]
    found = []
    for path in sorted(p for p in target.rglob("*") if p.is_file() and ".git" not in p.relative_to(target).parts):
        data = path.read_bytes()
        found += [f"{path.relative_to(target)}: {name}" for name in names if name.encode() in data]
    return found


def write_files(target: Path, chapters: list[Chapter], reference: Path, kept: dict[str, str]) -> None:
    """Every file of the edition but its README, into TARGET (a new folder): the working tree's files
    (tracked or not yet), less what the edition leaves out and the chapters the term leaves out."""
    hidden = hidden_files(chapters)
    by_folder = {c.folder: c for c in chapters}
    left_out = LEFT_OUT + left_out_chapters(chapters)
    files, _ = tree_files(ROOT)
    for name in files:
        if any(re.search(pattern, name) for pattern in left_out) or name in hidden:
            continue
        source, copy = ROOT / name, target / name
        copy.parent.mkdir(parents=True, exist_ok=True)
        manifest = re.match(r"^chapters/([^/]+)/chapter\.json$", name)
        if re.match(r"^chapters/[^/]+/lesson\.md$", name):
            copy.write_text(without_instructor_sections(source.read_text()))
        elif name == "CMakePresets.json":
            copy.write_text(student_presets(source.read_text()))
        elif manifest and manifest.group(1) in by_folder:
            copy.write_text(without_hidden_checks(source.read_text(), by_folder[manifest.group(1)]))
        else:
            shutil.copy2(source, copy)
    for chapter in chapters:
        generated = reference / "docs" / "generated" / chapter.folder
        prebuilt = target / "docs" / "prebuilt" / chapter.folder
        prebuilt.mkdir(parents=True, exist_ok=True)
        for path in sorted(generated.iterdir()):
            if path.suffix in (".out", ".svg"):
                shutil.copy2(path, prebuilt / path.name)
        # The book shows the exercise stubs as released, not the student's work in progress.
        stubs = prebuilt / "stubs"
        stubs.mkdir(exist_ok=True)
        for source in chapter.sources:
            shutil.copy2(target / "exercises" / chapter.folder / source, stubs / source)
    for relative, text in kept.items():
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        (target / relative).write_text(text)
    (target / "EDITION").write_text(EDITION_NOTE)
    leaks = leaked_hidden_checks(target, chapters)
    if leaks:
        raise ReleaseError("release: these files of the edition name a hidden check, which the edition must not "
                           "hold (say it in the hidden checks' file only):\n  " + "\n  ".join(leaks[:20]))


def first_check(target: Path, cache: str) -> str:
    """What `./workbook check 1` prints in a fresh copy of the edition (a scratch copy, built with
    this tree's compiler cache), without colours."""
    with tempfile.TemporaryDirectory(prefix="scalebook-release-check-") as scratch:
        copy = Path(scratch) / "edition"
        shutil.copytree(target, copy, ignore=shutil.ignore_patterns(".git", "build"), symlinks=True)
        subprocess.run(["cmake", "--preset", "student", f"-DSCALEBOOK_CCACHE_DIR={cache}",
                        "-DSCALEBOOK_BUILD_DOCS=OFF"], cwd=copy, check=True, stdout=subprocess.DEVNULL)
        env = dict(os.environ, NO_COLOR="1", COLUMNS="100")
        result = subprocess.run([str(copy / "workbook"), "check", str(FIRST_CHECK_CHAPTER)], cwd=copy,
                                capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    lines = result.stdout.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(f"chapter {FIRST_CHECK_CHAPTER}")), None)
    if result.returncode != 0 or start is None:
        raise ReleaseError(f"release: ./workbook check {FIRST_CHECK_CHAPTER} failed in a scratch copy of the edition:\n"
                 f"{result.stdout[-2000:]}{result.stderr[-2000:]}")
    return "\n".join(lines[start:]).rstrip()


def measure_benchmarks(chapters: list[Chapter]) -> dict[str, str]:
    """`./workbook bench N` here (the reference), for each chapter whose manifest says it has a
    benchmark: its output, headed by when and where it was measured, as docs/prebuilt/CHAPTER/bench.txt."""
    found = {}
    for chapter in (c for c in chapters if c.bench):
        number = chapter.number
        ui.say(f"  ./workbook bench {number}")
        env = dict(os.environ, NO_COLOR="1", PYTHONUNBUFFERED="1")  # its lines as they come
        lines: list[str] = []
        with subprocess.Popen([str(ROOT / "workbook"), "bench", str(number)], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, env=env, stdin=subprocess.DEVNULL) as process:
            assert process.stdout is not None
            for line in process.stdout:
                ui.say(f"    {line.rstrip()}")
                lines.append(line.rstrip())
        if process.returncode != 0:
            raise ReleaseError(f"release: ./workbook bench {number} failed (status {process.returncode})")
        shown = [line for line in lines if not re.match(r"^(Building |  \[\d+/\d+\] )", line)]
        header = (f"./workbook bench {number}, reference solution, measured at release on "
                  f"{time.strftime('%Y-%m-%d')} ({socket.gethostname()}, {os.cpu_count()} cores, "
                  f"load average {os.getloadavg()[0]:.1f})")
        found[f"docs/prebuilt/{chapter.folder}/bench.txt"] = "\n".join([header, *shown]).rstrip() + "\n"
    return found


def readme(chapters: list[Chapter], check_output: str, benches: dict[str, str]) -> str:
    text = README_SOURCE.read_text()
    listing = "\n".join(f"{c.number}. **{c.topic.replace('-', ' ')}**: {c.summary}" for c in chapters)
    bench_text = "\n\n".join(benches[key].rstrip() for key in sorted(benches, reverse=True)) or \
        "(not measured for this edition)"
    values = {"CHAPTERS": "The chapters:\n\n" + listing,
              "PACKAGES": " ".join(packages_for("workbook")),
              "FIRST_CHECK": check_output,
              "BENCH": bench_text}
    for key, value in values.items():
        text = text.replace(f"@{key}@", value)
    left = re.findall(r"@[A-Z_]+@", text)
    if left:
        raise ReleaseError(f"release: {README_SOURCE.relative_to(ROOT)} names {', '.join(left)}, which release does not fill in")
    return text


def author() -> list[str]:
    """The instructor's git identity when this tree has one, otherwise scalebook's."""
    name = git("config", "user.name", cwd=ROOT, check=False).strip() or "scalebook"
    email = git("config", "user.email", cwd=ROOT, check=False).strip() or "scalebook@localhost"
    return ["-c", f"user.name={name}", "-c", f"user.email={email}"]
