"""The course: its chapters as the build sees them (folders, exercise ids and files) and their hints."""
from __future__ import annotations

import json
import re
from typing import NamedTuple
from pathlib import Path

from .config import ROOT
from .errors import UsageError


# NamedTuples, not dataclasses: the dataclasses module alone costs every command a thirtieth of a
# second to import, a tenth of the student's budget for a check.
class Chapter(NamedTuple):
    """One chapter, from its manifest chapters/FOLDER/chapter.json (the build reads the same file)."""
    folder: str                          # 03-attention-scaling
    number: int                          # 3
    sources: tuple[str, ...]             # ex1_dot_scores.cpp, ... in exercise order
    summary: str = ""
    bench: bool = False                  # ./workbook bench N
    functions: tuple[tuple[str, ...], ...] = ()   # per exercise: the contract functions it defines
    points: tuple[int, ...] = ()         # per exercise: what each of its checks is worth
    figures: tuple[str, ...] = ()
    hidden_checks: str = ""              # the hidden checks' file (instructor's tree only), or ""
    hidden_count: int = 0                # how many hidden checks grading runs besides checks.cpp's
    tolerance: float = 0.0               # the relative difference its checks allow a correct output

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


# A check's name in a checks file, as CMake reads it (cmake/Scalebook.cmake, _scalebook_check_names).
CHECK_NAME = re.compile(r'TEST_CASE *\("([^"]+)"')


def check_names(path: Path) -> list[str]:
    """The TEST_CASE("...") names of a checks file, in order, read as CMake registers them."""
    found = (CHECK_NAME.search(line) for line in path.read_text().splitlines())
    return [match.group(1) for match in found if match]


def read_manifest(folder: Path) -> Chapter:
    """FOLDER/chapter.json as a Chapter; a manifest whose ids are not N.1, N.2... in order is refused
    (an id is also an exercise's place in the list). The hidden checks are counted from their file in
    the instructor's tree, and read from hidden_count in the student edition, which has no such file."""
    data = json.loads((folder / "chapter.json").read_text())
    number = int(data["number"])
    exercises = data["exercises"]
    for index, exercise in enumerate(exercises, start=1):
        if exercise["id"] != f"{number}.{index}":
            raise ValueError(f"read_manifest: {folder / 'chapter.json'}: exercise {index}'s id is "
                             f"{exercise['id']!r}, not '{number}.{index}'")
    hidden = str(data.get("hidden_checks", ""))
    hidden_count = len(check_names(folder / hidden)) if hidden else int(data.get("hidden_count", 0))
    return Chapter(folder.name, number, tuple(e["source"] for e in exercises), data.get("summary", ""),
                   bool(data.get("bench", False)), tuple(tuple(e.get("functions", [])) for e in exercises),
                   tuple(int(e.get("points", 1)) for e in exercises), tuple(data.get("figures", [])),
                   hidden, hidden_count, float(data.get("tolerance", 0.0)))


def all_chapters(root: Path = ROOT) -> list[Chapter]:
    """Every chapter with a manifest (chapters/*/chapter.json), in number order, as the build lists them."""
    chapters = [read_manifest(path.parent) for path in (root / "chapters").glob("*/chapter.json")]
    return sorted(chapters, key=lambda c: c.number)


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
