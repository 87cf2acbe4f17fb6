"""The course: its chapters as the build sees them (folders, exercise ids and files), the term, hints.

The one parser of chapters/*/chapter.json and of term.json: read_manifest checks every field and
sets every default; the build reads what it parsed through the digest write_digest makes at each
configure (`python3 -m scalebook.course --digest FILE`, CMakeLists.txt), never the JSON itself.
"""
from __future__ import annotations

import json
import re
from typing import NamedTuple
from pathlib import Path

from .config import ROOT
from .errors import UsageError, WorkbookError


# NamedTuples, not dataclasses: the dataclasses module alone costs every command a thirtieth of a
# second to import, a tenth of the student's budget for a check.
class Chapter(NamedTuple):
    """One chapter, from its manifest chapters/FOLDER/chapter.json (the build reads the same file,
    through the digest write_digest makes at configure time)."""
    folder: str                          # 03-attention-scaling
    number: int                          # 3
    sources: tuple[str, ...]             # ex1_dot_scores.cpp, ... in exercise order
    summary: str = ""
    bench: bool = False                  # ./workbook bench N
    functions: tuple[tuple[str, ...], ...] = ()   # per exercise: the contract functions it defines
    points: tuple[int, ...] = ()         # per exercise: what each of its checks is worth (the term's, where it says)
    figures: tuple[str, ...] = ()
    hidden_checks: str = ""              # the hidden checks' file (instructor's tree only), or ""
    hidden_count: int = 0                # how many hidden checks grading runs besides checks.cpp's
    tolerance: float = 0.0               # the relative difference its checks allow a correct output
    contract: str = ""                   # the header students implement
    checks: str = "checks.cpp"
    lesson: str = "lesson.cpp"
    lib: tuple[str, ...] = ()            # lib/src files holding lib's copy of this chapter's answers

    @property
    def target(self) -> str:
        return f"ch{self.number:02d}"

    @property
    def topic(self) -> str:
        return self.folder.split("-", 1)[1]

    @property
    def exercises(self) -> list[str]:
        return [f"{self.number}.{k}" for k in range(1, len(self.sources) + 1)]

    def source_of(self, exercise: str) -> str:
        return self.sources[int(exercise.split(".")[1]) - 1]

    def functions_of(self) -> dict[str, list[str]]:
        """Exercise id -> the contract functions its file defines."""
        return {e: list(f) for e, f in zip(self.exercises, self.functions)}


class ManifestError(WorkbookError, ValueError):
    """A chapter's manifest or the term file says something the course cannot be built from: the
    message names the file, the field and what it must be."""


# A check's name in a checks file, as CMake reads it (cmake/Scalebook.cmake, _scalebook_check_names).
CHECK_NAME = re.compile(r'TEST_CASE *\("([^"]+)"')
FOLDER = re.compile(r"^(\d\d)-[a-z0-9]+(-[a-z0-9]+)*$")     # 03-attention-scaling
FILE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")       # a file of the chapter's folder, no path
TERM_FILE = "term.json"


def check_names(path: Path) -> list[str]:
    """The TEST_CASE("...") names of a checks file, in order, read as CMake registers them."""
    found = (CHECK_NAME.search(line) for line in path.read_text().splitlines())
    return [match.group(1) for match in found if match]


def _field(data: dict, key: str, kind: type, where: str, default=None, required: bool = False):
    """DATA[KEY] when it is a KIND (bool is no int here), DEFAULT when absent and not REQUIRED."""
    if key not in data:
        if required:
            raise ManifestError(f"{where}: the field \"{key}\" is missing")
        return default
    value = data[key]
    kinds = (int, float) if kind is float else (kind,)
    if not isinstance(value, kinds) or (kind is not bool and isinstance(value, bool)):
        raise ManifestError(f"{where}: \"{key}\" must be {KIND_WORDS[kind]}, not {json.dumps(value)[:60]}")
    return value


KIND_WORDS = {str: "a string", int: "a whole number", float: "a number", bool: "true or false",
              list: "a list", dict: "an object"}


def _file_names(values: list, where: str, key: str) -> tuple[str, ...]:
    for value in values:
        if not isinstance(value, str) or not FILE_NAME.match(value):
            raise ManifestError(f"{where}: \"{key}\" holds {json.dumps(value)[:60]}, which is not a file name "
                                "(letters, digits, _ . -, no folder)")
    return tuple(values)


def read_manifest(folder: Path) -> Chapter:
    """FOLDER/chapter.json as a Chapter, every field checked and every default set here (the build
    reads the digest of this, never the JSON): a manifest whose ids are not N.1, N.2... in order
    is refused (an id is also an exercise's place in the list). The hidden checks are counted from
    their file in the instructor's tree, and read from hidden_count in the student edition, which
    has no such file."""
    path = folder / "chapter.json"
    where = f"chapters/{folder.name}/chapter.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as error:
        raise ManifestError(f"{where}: cannot be read ({error})") from None
    except json.JSONDecodeError as error:
        raise ManifestError(f"{where}:{error.lineno}: not JSON: {error.msg}") from None
    if not isinstance(data, dict):
        raise ManifestError(f"{where}: must hold one JSON object")
    number = _field(data, "number", int, where, required=True)
    match = FOLDER.match(folder.name)
    if not match or int(match.group(1)) != number or not 1 <= number <= 99:
        raise ManifestError(f"{where}: the folder must be named NN-topic with NN its number {number:02d} "
                            f"(lower-case words joined by -), e.g. {number:02d}-layer-norm")
    exercises = _field(data, "exercises", list, where, required=True)
    if not exercises:
        raise ManifestError(f"{where}: \"exercises\" lists none: a chapter has at least one exercise")
    sources, functions, points = [], [], []
    for index, exercise in enumerate(exercises, start=1):
        at = f"{where}: exercise {index}"
        if not isinstance(exercise, dict):
            raise ManifestError(f"{at} must be an object with id, source, functions, points")
        if exercise.get("id") != f"{number}.{index}":
            raise ManifestError(f"read_manifest: {where}: exercise {index}'s id is {exercise.get('id')!r}, not "
                                f"'{number}.{index}' (an id is its exercise's place in the list)")
        source = _field(exercise, "source", str, at, required=True)
        _file_names([source], at, "source")
        if not source.endswith(".cpp"):
            raise ManifestError(f"{at}: \"source\" must be a .cpp file, not {source!r}")
        names = _field(exercise, "functions", list, at, default=[])
        for name in names:
            if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise ManifestError(f"{at}: \"functions\" holds {json.dumps(name)[:60]}, which is not a C++ name")
        worth = _field(exercise, "points", int, at, default=1)
        if worth < 1:
            raise ManifestError(f"{at}: \"points\" must be 1 or more, not {worth}")
        sources.append(source)
        functions.append(tuple(names))
        points.append(worth)
    if len(set(sources)) != len(sources):
        raise ManifestError(f"{where}: two exercises name the same source file")
    hidden = _field(data, "hidden_checks", str, where, default="")
    if hidden:
        _file_names([hidden], where, "hidden_checks")
    hidden_count = len(check_names(folder / hidden)) if hidden and (folder / hidden).is_file() else \
        _field(data, "hidden_count", int, where, default=0)
    figures = _file_names(_field(data, "figures", list, where, default=[]), where, "figures")
    lib = _file_names(_field(data, "lib", list, where, default=[]), where, "lib")
    files = {key: _field(data, key, str, where, required=key == "contract", default=f"{key}.cpp")
             for key in ("contract", "checks", "lesson")}
    _file_names(list(files.values()), where, "contract, checks and lesson")
    tolerance = float(_field(data, "tolerance", float, where, default=0.0))
    return Chapter(folder.name, number, tuple(sources), _field(data, "summary", str, where, required=True),
                   _field(data, "bench", bool, where, default=False), tuple(functions), tuple(points),
                   figures, hidden, hidden_count, tolerance, files["contract"], files["checks"], files["lesson"],
                   lib)


def manifest_folders(root: Path = ROOT) -> list[Path]:
    """Every chapters/*/ holding a chapter.json, by folder name."""
    return sorted(path.parent for path in (root / "chapters").glob("*/chapter.json"))


def course_chapters(root: Path = ROOT) -> list[Chapter]:
    """Every chapter with a manifest, in number order, as the manifests say (no term applied)."""
    chapters = sorted((read_manifest(folder) for folder in manifest_folders(root)), key=lambda c: c.number)
    for before, after in zip(chapters, chapters[1:]):
        if before.number == after.number:
            raise ManifestError(f"chapters/{before.folder} and chapters/{after.folder} both have number "
                                f"{before.number}: renumber one (its folder, manifest and ids)")
    return chapters


class Term(NamedTuple):
    """term.json: which chapters this term teaches, in which order, and the points it gives."""
    chapters: tuple[str, ...]                     # folders, in the term's order
    points: dict[str, int]                        # exercise id -> what each of its checks is worth
    name: str = ""


def read_term(chapters: list[Chapter], root: Path = ROOT) -> Term | None:
    """ROOT/term.json checked against CHAPTERS, or None when there is none. It says
    {"name": "...", "chapters": [1, "03-attention-scaling", {"chapter": 5, "points": {"5.2": 2}}]}:
    a chapter by number or folder, in the term's order, optionally with points per exercise."""
    path = root / TERM_FILE
    if not path.is_file():
        return None
    where = TERM_FILE
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise ManifestError(f"{where}:{error.lineno}: not JSON: {error.msg}") from None
    if not isinstance(data, dict):
        raise ManifestError(f"{where}: must hold one JSON object with \"chapters\"")
    listed = _field(data, "chapters", list, where, required=True)
    by_key = {c.number: c for c in chapters} | {c.folder: c for c in chapters}
    folders, points = [], {}
    for entry in listed:
        spec = entry if isinstance(entry, dict) else {"chapter": entry}
        key = spec.get("chapter")
        chapter = by_key.get(key) if isinstance(key, (int, str)) and not isinstance(key, bool) else None
        if chapter is None:
            raise ManifestError(f"{where}: no chapter {json.dumps(key)}; the chapters are "
                                f"{', '.join(c.folder for c in chapters)}")
        if chapter.folder in folders:
            raise ManifestError(f"{where}: chapter {chapter.folder} is listed twice")
        folders.append(chapter.folder)
        for exercise, worth in _field(spec, "points", dict, f"{where}: chapter {chapter.folder}", default={}).items():
            if exercise not in chapter.exercises:
                raise ManifestError(f"{where}: points for {exercise!r}, which is not an exercise of "
                                    f"{chapter.folder} ({', '.join(chapter.exercises)})")
            if not isinstance(worth, int) or isinstance(worth, bool) or worth < 1:
                raise ManifestError(f"{where}: the points of {exercise} must be a whole number, 1 or more")
            points[exercise] = worth
    if not folders:
        raise ManifestError(f"{where}: \"chapters\" lists none")
    return Term(tuple(folders), points, str(data.get("name", "")))


def _with_points(chapter: Chapter, term: Term | None) -> Chapter:
    if term is None:
        return chapter
    return chapter._replace(points=tuple(term.points.get(e, p) for e, p in zip(chapter.exercises, chapter.points)))


def all_chapters(root: Path = ROOT) -> list[Chapter]:
    """Every chapter with a manifest (chapters/*/chapter.json), in number order, as the build lists
    them, with the term's points where it sets them."""
    chapters = course_chapters(root)
    term = read_term(chapters, root)
    return [_with_points(c, term) for c in chapters]


def term_chapters(root: Path = ROOT) -> list[Chapter]:
    """The chapters this term teaches, in its order (term.json), with its points; every chapter in
    number order when there is no term file. Release, grading and the exports follow this."""
    chapters = course_chapters(root)
    term = read_term(chapters, root)
    if term is None:
        return chapters
    by_folder = {c.folder: c for c in chapters}
    return [_with_points(by_folder[folder], term) for folder in term.chapters]


def cmake_digest(chapters: list[Chapter]) -> str:
    """The course as CMake reads it (cmake/Scalebook.cmake): one set() per field of every chapter,
    so that CMake parses no JSON and takes every default from read_manifest."""
    def value(text: str) -> str:
        if "]==]" in text:
            raise ManifestError(f"a manifest's text holds ']==]', which the build cannot quote: {text[:60]}")
        return f"[==[{text}]==]"

    def items(values) -> str:
        return value(";".join(str(v) for v in values))

    lines = ["# The course's manifests as the build reads them, written by tools/scalebook/course.py at",
             "# configure time from chapters/*/chapter.json and term.json: edit those, not this.",
             f"set(SCALEBOOK_COURSE_CHAPTERS {items(c.folder for c in chapters)})"]
    for c in chapters:
        prefix = f"SCALEBOOK_CHAPTER_{c.folder}_"
        fields = {"NUMBER": f"{c.number:02d}", "SUMMARY": c.summary, "CONTRACT": c.contract, "CHECKS": c.checks,
                  "LESSON": c.lesson, "BENCH": "ON" if c.bench else "OFF", "HIDDEN_CHECKS": c.hidden_checks}
        lists = {"SOURCES": c.sources, "FIGURES": c.figures, "LIB": c.lib,
                 "POINTS": [f"{e}={p}" for e, p in zip(c.exercises, c.points)]}
        lines += [f"set({prefix}{key} {value(text)})" for key, text in fields.items()]
        lines += [f"set({prefix}{key} {items(values)})" for key, values in lists.items()]
    return "\n".join(lines) + "\n"


def write_digest(output: Path, root: Path = ROOT) -> None:
    """OUTPUT: the digest of every chapter of ROOT (cmake_digest), rewritten only when it changed."""
    text = cmake_digest(all_chapters(root))
    if not output.exists() or output.read_text() != text:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text)


def resolve_chapter(arg: str, chapters: list[Chapter] | None = None) -> Chapter:
    """3, 03 or 03-attention-scaling -> the chapter; anything else is a UsageError that helps."""
    chapters = chapters if chapters is not None else all_chapters()
    known = ", ".join(str(c.number) for c in chapters)
    if re.fullmatch(r"\d+\.\d+", arg):
        raise UsageError(f"'{arg}' is an exercise; commands take the chapter: "
                         f"try '{arg.split('.')[0].lstrip('0') or '0'}'")
    for chapter in chapters:
        if arg == chapter.folder or (arg.isdigit() and int(arg) == chapter.number):
            return chapter
    raise UsageError(f"no chapter '{arg}'; the chapters are {known}")


def resolve_exercise(arg: str, chapters: list[Chapter] | None = None) -> tuple[Chapter, str]:
    """3.2 or 03.2 -> (chapter, "3.2")."""
    match = re.fullmatch(r"(\d+)\.(\d+)", arg)
    if not match:
        raise UsageError(f"an exercise id looks like 3.2, not '{arg}'")
    chapter = resolve_chapter(match.group(1), chapters)
    exercise = f"{chapter.number}.{int(match.group(2))}"
    if exercise not in chapter.exercises:
        raise UsageError(f"no exercise {arg}; chapter {chapter.number} has {', '.join(chapter.exercises)}")
    return chapter, exercise


class Hints(NamedTuple):
    tiers: list[str]                      # tier 1, 2, 3 ... as text
    by_mistake: list[tuple[str, str]]     # (mistake id the check names, advice)


# A named mistake's advice in hints.md: 'If the check names [ID]: advice' (the id the checks print
# as "known mistake [ID]", scalebook.loop.run_checks.mistake_ids).
ADVICE = re.compile(r"^If the check names \[([a-z][a-z0-9_]*)\]:\s*(.*)")


def hints_of(chapter: Chapter, exercise: str, root: Path = ROOT) -> Hints:
    """The '## ID ...' section of chapters/NN/hints.md: its numbered items are the tiers; lines
    'If the check names [MISTAKE_ID]: advice' are hints for a named mistake."""
    section: list[str] = []
    inside = False
    for line in (root / "chapters" / chapter.folder / "hints.md").read_text().splitlines():
        if line.startswith("## "):
            inside = line.startswith(f"## {exercise} ")
            continue
        if inside:
            section.append(line)
    tiers: list[list[str]] = []
    by_mistake: list[tuple[str, list[str]]] = []
    current: list[str] | None = None  # the tier, or the mistake's advice, that a next line continues
    for line in section:
        item = re.match(r"^\d+\.\s+(.*)", line)
        mistake = ADVICE.match(line.strip())
        if item:
            current = [item.group(1)]
            tiers.append(current)
        elif mistake:
            current = [mistake.group(2)]
            by_mistake.append((mistake.group(1), current))
        elif line.strip() and current is not None:
            current.append(line.strip())
        elif not line.strip() and by_mistake and current is by_mistake[-1][1]:
            current = None  # a mistake's advice ends at a blank line
    return Hints([" ".join(t) for t in tiers], [(text, " ".join(advice)) for text, advice in by_mistake])


def chapter_advice(chapter: Chapter, exercise: str, root: Path = ROOT) -> list[tuple[str, str]]:
    """(mistake id, advice) for a named mistake a check of EXERCISE may name: the exercise's own
    advice first, then the rest of the chapter's (4.3's checks may name 4.1's mask mistake)."""
    own = hints_of(chapter, exercise, root).by_mistake
    seen = {mistake for mistake, _ in own}
    rest = []
    for other in chapter.exercises:
        if other != exercise:
            rest += [(m, a) for m, a in hints_of(chapter, other, root).by_mistake if m not in seen]
            seen |= {m for m, _ in rest}
    return own + rest


if __name__ == "__main__":  # the build's configure step: python3 -m scalebook.course --digest FILE
    import sys
    if len(sys.argv) != 3 or sys.argv[1] != "--digest":
        sys.exit("usage: python3 -m scalebook.course --digest FILE")
    try:
        write_digest(Path(sys.argv[2]))
    except ManifestError as error:
        sys.exit(str(error))
