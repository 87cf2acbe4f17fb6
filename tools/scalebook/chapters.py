"""The chapters as the build sees them: folders, exercise ids and files, hints."""
from __future__ import annotations

import re
from typing import NamedTuple
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class UsageError(Exception):
    """A user's mistake on the command line: printed with the usage line, exit status 2."""


# NamedTuples, not dataclasses: the dataclasses module alone costs every command a thirtieth of a
# second to import, a tenth of the student's budget for a check.
class Chapter(NamedTuple):
    folder: str          # 03-attention-scaling
    number: int          # 3
    sources: tuple[str, ...]  # ex1_dot_scores.cpp, ... in exercise order

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


def all_chapters(root: Path = ROOT) -> list[Chapter]:
    """The chapters listed in SCALEBOOK_CHAPTERS, with the SOURCES of their CMakeLists."""
    listed = re.search(r'set\(SCALEBOOK_CHAPTERS "([^"]*)"', (root / "CMakeLists.txt").read_text())
    result = []
    for folder in listed.group(1).split(";") if listed else []:
        text = (root / "chapters" / folder / "CMakeLists.txt").read_text()
        sources = re.search(r"SOURCES\s+(.*?)\s+CHECKS\b", text, re.S).group(1).split()
        result.append(Chapter(folder, int(folder[:2]), tuple(sources)))
    return result


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
# as "known mistake [ID]", scalebook.checks.mistake_ids).
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
