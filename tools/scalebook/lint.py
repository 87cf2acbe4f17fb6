"""The course's lint: every rule an exercise or a chapter must keep, checked in seconds without a build.

Each rule is a function of one chapter (ChapterFiles) or of the whole course, returning Problems:
a file, a line (0 for the whole file) and a sentence that says what is wrong and what to do. The
rules: the manifest to the files and the files to the manifest; an exercise's id and function names
the same in every place they appear (contract, remote.def, stub, solution, checks, hints, lesson
page); every named mistake with its advice; the rules the build's scripts hold (a lesson writes a
data file, a hidden bug-zoo mutant says what a hidden check must print); numbering; and what a
scaffold left to write (TODO). Further rules plug in through PLUGINS ("module:function", called with
the chapter's folder, returning objects with file, line and message): one line each.
"""
from __future__ import annotations

import importlib
import re
import time
from pathlib import Path
from typing import Callable, Iterable, NamedTuple

from .config import ROOT
from .loop.errata import FENCE, INSTRUCTIONS
from .course import (ADVICE, CHECK_NAME, Chapter, ManifestError, TERM_FILE,
                     read_manifest, read_term)

# What a scaffold (./workbook new) writes where the author has something left to write.
TODO = "SCALEBOOK-TODO"
# Rules of other modules, each "module:function" taking a chapter's folder (Path) and returning
# problems (objects or tuples with file, line, message). Add a line to add a rule.
PLUGINS: list[str] = [
    "scalebook.prose:check",   # a number typed by hand in a lesson page (prose.py)
]


class Problem(NamedTuple):
    file: str      # relative to the tree's root
    line: int      # 1-based; 0: the file as a whole
    message: str   # what is wrong, and the fix

    def __str__(self) -> str:
        return f"{self.file}{f':{self.line}' if self.line else ''}: {self.message}"


class ChapterFiles:
    """One chapter's manifest and the text of its files, read once for every rule."""

    def __init__(self, root: Path, chapter: Chapter):
        self.root, self.chapter = root, chapter
        self.folder = root / "chapters" / chapter.folder
        self.name = f"chapters/{chapter.folder}"
        self.instructor = (root / "solutions").is_dir()
        self._texts: dict[Path, str | None] = {}

    def text(self, path: Path) -> str | None:
        if path not in self._texts:
            try:
                self._texts[path] = path.read_text(errors="replace") if path.is_file() else None
            except OSError:
                self._texts[path] = None
        return self._texts[path]

    def rel(self, path: Path) -> str:
        return str(path.relative_to(self.root))

    def stub(self, source: str) -> Path:
        return self.root / "exercises" / self.chapter.folder / source

    def solution(self, source: str) -> Path:
        return self.root / "solutions" / self.chapter.folder / source

    @property
    def ch(self) -> str:
        return f"ch{self.chapter.number:02d}"


def line_at(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def line_of(text: str, pattern: str, flags: int = re.M) -> int:
    """The line where PATTERN first matches in TEXT, 0 when it does not."""
    match = re.search(pattern, text, flags)
    return line_at(text, match.start()) if match else 0


def code_only(text: str) -> str:
    """C++ source with its comments blanked, lines and offsets kept."""
    def blank(match: re.Match) -> str:
        return re.sub(r"[^\n]", " ", match.group(0)) if match.group(0).startswith("/") else match.group(0)
    return re.sub(r'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"', blank, text, flags=re.S)


def declares(code: str, function: str) -> bool:
    return re.search(rf"\b{re.escape(function)}\s*\(", code) is not None


# --- the rules of one chapter -------------------------------------------------------------------

def chapter_files(c: ChapterFiles) -> Iterable[Problem]:
    """The manifest to the files: every file it names, and those every chapter has, exist."""
    ch = c.chapter
    needed = {ch.contract: "the contract header students implement", ch.checks: "the checks",
              ch.lesson: "the lesson program", "lesson.md": "the lesson page", "hints.md": "the hints",
              "remote.def": "the contract's functions for grading, one SCALEBOOK_REMOTE line each",
              "CMakeLists.txt": "a CMakeLists.txt calling scalebook_add_chapter()"}
    for name, what in needed.items():
        if c.text(c.folder / name) is None:
            yield Problem(f"{c.name}/{name}", 0, f"missing: {what} (./workbook new chapter writes one)")
    cmake = c.text(c.folder / "CMakeLists.txt") or ""
    if cmake and "scalebook_add_chapter(" not in cmake:
        yield Problem(f"{c.name}/CMakeLists.txt", 0, "does not call scalebook_add_chapter(): the chapter is not built")
    if cmake and ch.bench != (f"{c.ch}_bench" in cmake):
        yield Problem(f"{c.name}/chapter.json", line_of(c.text(c.folder / "chapter.json") or "", r'"bench"'),
                      f"\"bench\" is {str(ch.bench).lower()} but CMakeLists.txt {'has no' if ch.bench else 'has a'} "
                      f"target {c.ch}_bench: make them agree")
    for figure in ch.figures:
        script = c.folder / "figures" / f"{figure}.gp"
        text = c.text(script)
        if text is None:
            yield Problem(c.rel(script), 0, f"missing: the manifest's figure {figure!r} is drawn by this gnuplot script")
        elif not re.search(r"^\s*set title\b", text, re.M):
            yield Problem(c.rel(script), 0, "no `set title`: it names the SVG for screen readers (the page's "
                                            "caption is its title)")
    if ch.hidden_checks and c.instructor and c.text(c.folder / ch.hidden_checks) is None:
        yield Problem(f"{c.name}/{ch.hidden_checks}", 0, "missing: the manifest's hidden_checks names it")
    for index, source in enumerate(ch.sources, start=1):
        if not source.startswith(f"ex{index}_"):
            yield Problem(f"{c.name}/chapter.json", line_of(c.text(c.folder / "chapter.json") or "", re.escape(source)),
                          f"exercise {ch.number}.{index}'s source {source!r} must be named ex{index}_<function>.cpp "
                          f"(its place in the chapter)")
        tracks = [("exercises", c.stub(source))] + ([("solutions", c.solution(source))] if c.instructor else [])
        for track, path in tracks:
            if c.text(path) is None:
                yield Problem(c.rel(path), 0, f"missing: exercise {ch.number}.{index}'s file in {track}/ "
                                              f"(./workbook new exercise writes it)")


def stray_files(c: ChapterFiles) -> Iterable[Problem]:
    """The files to the manifest: nothing in exercises/, solutions/ or figures/ that it does not name."""
    ch = c.chapter
    for track in ("exercises", "solutions"):
        folder = c.root / track / ch.folder
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if path.name == "variants" and track == "solutions" and path.is_dir():
                for variant in sorted(path.iterdir()):
                    if variant.name not in ch.sources:
                        yield Problem(c.rel(variant), 0, "a variant is named like the reference file it replaces, "
                                                         f"one of {', '.join(ch.sources)}")
            elif path.name not in ch.sources:
                yield Problem(c.rel(path), 0, f"not in the manifest: add it to \"exercises\" in {c.name}/chapter.json, "
                                              "or delete it")
    figures = c.folder / "figures"
    if figures.is_dir():
        for script in sorted(figures.glob("*.gp")):
            if script.stem not in ch.figures:
                yield Problem(c.rel(script), 0, f"not in the manifest: add \"{script.stem}\" to \"figures\" in "
                                                f"{c.name}/chapter.json, or delete it")


def remote_def(c: ChapterFiles) -> Iterable[Problem]:
    """remote.def lists every function the manifest gives an exercise, under that exercise's id."""
    text = c.text(c.folder / "remote.def")
    if text is None:
        return
    found: dict[str, list[str]] = {}
    for match in re.finditer(r"^\s*SCALEBOOK_REMOTE\(\s*([0-9.]+)\s*,\s*(\w+)", text, re.M):
        exercise, function = match.group(1), match.group(2)
        found.setdefault(exercise, []).append(function)
        if exercise not in c.chapter.exercises:
            yield Problem(f"{c.name}/remote.def", line_at(text, match.start()),
                          f"{exercise} is not an exercise of the chapter ({', '.join(c.chapter.exercises)})")
    for exercise, functions in c.chapter.functions_of().items():
        listed = found.get(exercise, [])
        for function in functions:
            if function not in listed:
                yield Problem(f"{c.name}/remote.def", 0, f"no line for {exercise}'s {function}: add "
                                                         f"SCALEBOOK_REMOTE({exercise}, {function}, RETURN, PARAMETER TYPES...)")
        for function in listed:
            if function not in functions:
                yield Problem(f"{c.name}/remote.def", line_of(text, rf"SCALEBOOK_REMOTE\(\s*{re.escape(exercise)}\s*,"
                                                                    rf"\s*{function}\b"),
                              f"{function} is not among {exercise}'s functions in chapter.json "
                              f"({', '.join(functions) or 'none'}): add it there or remove this line")


def contract(c: ChapterFiles) -> Iterable[Problem]:
    """The contract header declares every function, in namespace scalebook::chNN."""
    path = c.folder / c.chapter.contract
    text = c.text(path)
    if text is None:
        return
    code = code_only(text)
    if f"namespace scalebook::{c.ch}" not in code:
        yield Problem(c.rel(path), 0, f"no `namespace scalebook::{c.ch} {{`: the contract's functions live there")
    for exercise, functions in c.chapter.functions_of().items():
        for function in functions:
            found = re.search(rf"\b{re.escape(function)}\s*\(", code)
            if not found:
                yield Problem(c.rel(path), 0, f"no declaration of {function} (exercise {exercise}): declare it, "
                                              f"documented with ///, in namespace scalebook::{c.ch}")
                continue
            # The declaration's own comment, when it names an exercise, names this one.
            start = text.rfind("\n\n", 0, found.start())
            said = re.findall(r"Exercise (\d+\.\d+)", text[start:found.start()])
            if said and said[-1] != exercise:
                yield Problem(c.rel(path), line_at(text, found.start()), f"{function} is documented as exercise {said[-1]}; "
                                                                         f"the manifest makes it {exercise}")


def stub_layout(text: str) -> list[str]:
    """What is wrong with a stub's layout: its header comment holds the instructions, under
    INSTRUCTIONS, and ends with the FENCE line (only there); below it only code: the includes, the
    namespace, each signature and its not_implemented call, no comment but the namespace's closing
    one (so that a fix to the instructions merges with a student's code: scalebook/loop/errata.py)."""
    lines = text.splitlines()
    problems = []
    top = 0
    while top < len(lines) and lines[top].startswith("//"):
        top += 1
    header = lines[:top]
    if lines.count(FENCE) != 1 or not header or header[-1] != FENCE:
        problems.append("the header comment does not end with the fence line (and only there)")
    if INSTRUCTIONS not in header:
        problems.append(f"no {INSTRUCTIONS!r} line in the header comment")
    below = lines[top:]
    comments = [line for line in below if "//" in line and not re.match(r"^}  // namespace scalebook::ch\d\d$", line)]
    if comments:
        problems.append(f"a comment below the fence: {comments[0]!r}")
    if not below or not below[0].startswith("#include"):
        problems.append("the code below the fence does not start with an #include")
    if not any("not_implemented(" in line for line in below):
        problems.append("no not_implemented call")
    return problems


def stubs_and_solutions(c: ChapterFiles) -> Iterable[Problem]:
    """Each stub: the layout, its id, each function defined and calling not_implemented(id, name);
    each solution: each function defined, nothing left not implemented."""
    for (exercise, functions), source in zip(c.chapter.functions_of().items(), c.chapter.sources):
        stub = c.text(c.stub(source))
        if stub is not None:
            where = c.rel(c.stub(source))
            for problem in stub_layout(stub):
                yield Problem(where, 0, f"{problem} (README: Adding a chapter, step 2)")
            if not stub.startswith(f"// Exercise {exercise} "):
                yield Problem(where, 1, f"the first line must say `// Exercise {exercise} — WHAT`")
            for match in re.finditer(r'not_implemented\(\s*"([^"]*)"\s*,\s*"([^"]*)"', stub):
                if match.group(1) != exercise or match.group(2) not in functions:
                    yield Problem(where, line_at(stub, match.start()),
                                  f"not_implemented(\"{match.group(1)}\", \"{match.group(2)}\"): this file is "
                                  f"exercise {exercise}, whose functions are {', '.join(functions)}")
            for function in functions:
                if not declares(code_only(stub), function):
                    yield Problem(where, 0, f"{function} (exercise {exercise}) is not defined here")
                elif not re.search(rf'not_implemented\(\s*"{re.escape(exercise)}"\s*,\s*"{function}"\s*\)', stub):
                    yield Problem(where, 0, f"{function} must call scalebook::not_implemented(\"{exercise}\", "
                                            f"\"{function}\") until the student writes it")
            if f"namespace scalebook::{c.ch} {{" not in stub:
                yield Problem(where, 0, f"no `namespace scalebook::{c.ch} {{`")
        solution = c.text(c.solution(source)) if c.instructor else None
        if solution is not None:
            where = c.rel(c.solution(source))
            code = code_only(solution)
            for function in functions:
                if not declares(code, function):
                    yield Problem(where, 0, f"{function} (exercise {exercise}) is not defined here")
            if "not_implemented(" in code:
                yield Problem(where, line_of(solution, r"not_implemented\("),
                              "the reference calls not_implemented: write the reference solution")
            if f"namespace scalebook::{c.ch} {{" not in solution:
                yield Problem(where, 0, f"no `namespace scalebook::{c.ch} {{`")


CHECK_NAME_RULE = re.compile(r"^(\d+\.\d+) [^\[\];*?]*$")


def check_files(c: ChapterFiles) -> Iterable[Problem]:
    """The checks: the suite named after the folder, every name starting with an exercise id of the
    chapter (CMake registers them by it), none twice, at least one per exercise; hidden ones too."""
    path = c.folder / c.chapter.checks
    text = c.text(path)
    if text is None:
        return
    if f'TEST_SUITE("{c.chapter.folder}")' not in text:
        yield Problem(c.rel(path), 0, f"no TEST_SUITE(\"{c.chapter.folder}\") {{ ... }} around the checks")
    names = list(check_problems(c, path, text))
    visible = [n for n in names if isinstance(n, str)]
    yield from (n for n in names if isinstance(n, Problem))
    for exercise in c.chapter.exercises:
        if not any(n.startswith(f"{exercise} ") for n in visible):
            yield Problem(c.rel(path), 0, f"exercise {exercise} has no check: add TEST_CASE(\"{exercise} WHAT IT "
                                          f"CHECKS\")")
    if c.chapter.hidden_checks and c.instructor:
        hidden_path = c.folder / c.chapter.hidden_checks
        hidden_text = c.text(hidden_path)
        if hidden_text is not None:
            for item in check_problems(c, hidden_path, hidden_text):
                if isinstance(item, Problem):
                    yield item
                elif item in visible:
                    yield Problem(c.rel(hidden_path), line_of(hidden_text, re.escape(f'"{item}"')),
                                  f"the hidden check {item!r} has the name of a visible one: rename it")


def check_problems(c: ChapterFiles, path: Path, text: str):
    """The check names of one checks file (as str) and the Problems of their names."""
    seen = set()
    for match in CHECK_NAME.finditer(text):
        name, line = match.group(1), line_at(text, match.start())
        rule = CHECK_NAME_RULE.match(name)
        if not rule:
            yield Problem(c.rel(path), line, f"check name {name!r} must start with its exercise id "
                                             f"(\"{c.chapter.exercises[0]} ...\") and contain none of [ ] ; * ?")
        elif rule.group(1) not in c.chapter.exercises:
            yield Problem(c.rel(path), line, f"check {name!r}: {rule.group(1)} is not an exercise of the chapter "
                                             f"({', '.join(c.chapter.exercises)})")
        if name in seen:
            yield Problem(c.rel(path), line, f"two checks are named {name!r}")
        seen.add(name)
        yield name


def hints(c: ChapterFiles) -> Iterable[Problem]:
    """hints.md: its page id, and a section `## N.K function {#chNN_hint_N_K}` with three numbered
    tiers for every exercise, none for an exercise the chapter does not have."""
    path = c.folder / "hints.md"
    text = c.text(path)
    if text is None:
        return
    where = c.rel(path)
    if f"{{#{c.ch}_hints}}" not in text.splitlines()[0] if text else True:
        yield Problem(where, 1, f"the first line must end with the page id {{#{c.ch}_hints}}")
    sections = {m.group(1): (m, line_at(text, m.start()))
                for m in re.finditer(r"^## (\d+\.\d+) (\S+)(.*)$", text, re.M)}
    for exercise, functions in c.chapter.functions_of().items():
        if exercise not in sections:
            yield Problem(where, 0, f"no section for {exercise}: add `## {exercise} {functions[0] if functions else 'NAME'} "
                                    f"{{#{c.ch}_hint_{exercise.replace('.', '_')}}}` with three numbered tiers")
            continue
        match, line = sections[exercise]
        anchor = f"{{#{c.ch}_hint_{exercise.replace('.', '_')}}}"
        if functions and match.group(2) != functions[0]:
            yield Problem(where, line, f"the section of {exercise} is titled {match.group(2)!r}, not its function "
                                       f"{functions[0]!r}")
        if anchor not in match.group(3):
            yield Problem(where, line, f"the section of {exercise} needs the anchor {anchor}")
        body = text[match.end():]
        body = body[:re.search(r"^## ", body, re.M).start()] if re.search(r"^## ", body, re.M) else body
        tiers = re.findall(r"^\d+\.\s", body, re.M)
        if len(tiers) < 3:
            yield Problem(where, line, f"the section of {exercise} has {len(tiers)} numbered tier"
                                       f"{'s' if len(tiers) != 1 else ''}: write three, from a nudge to a pointer")
    for exercise, (match, line) in sections.items():
        if exercise not in c.chapter.exercises:
            yield Problem(where, line, f"a section for {exercise}, which is not an exercise of the chapter")


def lesson_page(c: ChapterFiles) -> Iterable[Problem]:
    """lesson.md: its page id, each exercise in its list, each stub shown and each solution shown
    inside \\if instructor, no file shown that the chapter does not have."""
    path = c.folder / "lesson.md"
    text = c.text(path)
    if text is None:
        return
    where = c.rel(path)
    if not text or f"{{#{c.ch}}}" not in text.splitlines()[0]:
        yield Problem(where, 1, f"the first line must end with the page id {{#{c.ch}}}")
    instructor = "".join(re.findall(r"\\if instructor\b(.*?)\\endif", text, re.S))
    public = re.sub(r"\\if instructor\b.*?\\endif", "", text, flags=re.S)
    for exercise, source in zip(c.chapter.exercises, c.chapter.sources):
        if f"\\include exercises/{c.chapter.folder}/{source}" not in public:
            yield Problem(where, 0, f"the stub of {exercise} is not shown: add `\\include exercises/{c.chapter.folder}/"
                                    f"{source}` to the exercises section")
        if f"\\include solutions/{c.chapter.folder}/{source}" not in instructor:
            yield Problem(where, 0, f"the reference of {exercise} is not shown to instructors: add `\\include "
                                    f"solutions/{c.chapter.folder}/{source}` inside \\if instructor ... \\endif")
        bullet = re.search(rf"\*\*{re.escape(exercise)} `?(\w+)?", text)
        functions = c.chapter.functions_of()[exercise]
        if not bullet:
            yield Problem(where, 0, f"{exercise} is not in the exercises list: add a bullet `- **{exercise} "
                                    f"`function(...)`** — what it computes`")
        elif bullet.group(1) and functions and bullet.group(1) not in functions:
            yield Problem(where, line_at(text, bullet.start()), f"the bullet of {exercise} names {bullet.group(1)}, not its "
                                                                f"function{'s' if len(functions) > 1 else ''} "
                                                                f"{', '.join(functions)}")
    for match in re.finditer(r"^\\include (exercises|solutions)/([^/\s]+)/(\S+)", text, re.M):
        if match.group(2) != c.chapter.folder or match.group(3) not in c.chapter.sources:
            yield Problem(where, line_at(text, match.start()), f"shows {match.group(1)}/{match.group(2)}/{match.group(3)}, "
                                                               "which is not one of the chapter's exercise files")


def file_names_in_prose(c: ChapterFiles) -> Iterable[Problem]:
    """An exercise file named in the chapter's prose (contract, page, hints, stubs) is one of its
    sources, and a range "exA_x.cpp to exB_y.cpp" runs from the first to the last."""
    paths = [c.folder / c.chapter.contract, c.folder / "lesson.md", c.folder / "hints.md",
             *(c.stub(s) for s in c.chapter.sources)]
    sources = c.chapter.sources
    for path in paths:
        text = c.text(path)
        if text is None:
            continue
        flat = re.sub(r"\n\s*(//|///)?\s*", " ", text)
        for match in re.finditer(r"\bex\d+_\w+\.cpp\b", text):
            if match.group(0) not in sources:
                yield Problem(c.rel(path), line_at(text, match.start()),
                              f"names {match.group(0)}, which is not one of the chapter's exercise files "
                              f"({sources[0]} to {sources[-1]})")
        for match in re.finditer(r"`?(ex\d+_\w+\.cpp)`?\s+to\s+`?(ex\d+_\w+\.cpp)\b", flat):
            if match.group(1) == sources[0] and match.group(2) in sources and match.group(2) != sources[-1]:
                yield Problem(c.rel(path), line_of(text, re.escape(match.group(2))),
                              f"\"{match.group(1)} to {match.group(2)}\": the last exercise file is now {sources[-1]}")


def named_mistakes(c: ChapterFiles) -> Iterable[Problem]:
    """Every mistake id the checks (visible and hidden) declare is snake_case, declared once per
    file and has advice in hints.md ("If the check names [ID]: ..."); every advice line's id and
    every bug-zoo mutant's id and also: are declared."""
    messages = check_messages(c.root)
    if messages is None:
        return
    files = [c.folder / c.chapter.checks]
    if c.chapter.hidden_checks and c.instructor:
        files.append(c.folder / c.chapter.hidden_checks)
    declared: set[str] = set()
    for path in files:
        if c.text(path) is None:
            continue
        ids = messages.declared_ids(path)
        declared |= set(ids)
        for mistake in ids:
            if not messages.ID.match(mistake):
                yield Problem(c.rel(path), line_of(c.text(path), re.escape(f'"{mistake}"')),
                              f"the mistake id {mistake!r} must be snake_case")
        for mistake in sorted({m for m in ids if ids.count(m) > 1}):
            yield Problem(c.rel(path), line_of(c.text(path), re.escape(f'"{mistake}"')),
                          f"the mistake id [{mistake}] is declared twice")
    # A mistake only a hidden check names gets no advice in hints.md, which the edition ships: it
    # would tell the students what the hidden checks look for.
    visible = set(messages.declared_ids(files[0])) if c.text(files[0]) is not None else set()
    text = c.text(c.folder / "hints.md") or ""
    advice = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = ADVICE.match(line.strip())
        if match:
            advice[match.group(1)] = number
    for mistake in sorted(visible - set(advice)):
        yield Problem(f"{c.name}/hints.md", 0, f"the mistake [{mistake}] has no advice: add `If the check names "
                                               f"[{mistake}]: ADVICE` to the section of its exercise")
    for mistake, line in sorted(advice.items()):
        if mistake not in declared:
            yield Problem(f"{c.name}/hints.md", line, f"advice for [{mistake}], which no check declares "
                                                      "(constexpr Named k...{\"id\", \"text\"})")
    zoo = c.folder / "bugzoo"
    for mutant in sorted(zoo.glob("*.mutant")) + sorted(zoo.glob("hidden/*.mutant")):
        fields = messages.mutant_fields(mutant)
        for mistake in [fields["id"], *fields["also"].split()]:
            if mistake not in declared and mutant.parent == zoo:
                yield Problem(c.rel(mutant), 0, f"its id [{mistake}] is not declared in the checks: declare "
                                                f"constexpr Named k...{{\"{mistake}\", \"WHAT IT DOES\"}}")


def bug_zoo(c: ChapterFiles) -> Iterable[Problem]:
    """The build's rules for mutants: `mistake:` and `file:` (one of the sources) on every one; a
    hidden one (bugzoo/hidden/) also `# expect: TEXT`, the text a failing hidden check prints, and a
    manifest with hidden_checks; every exercise has a mutant its checks must catch and name."""
    zoo = c.folder / "bugzoo"
    if not zoo.is_dir():
        if c.instructor:
            yield Problem(f"{c.name}/bugzoo", 0, "no bug zoo: write a bugzoo/NAME.mutant for each known mistake the "
                                                 "checks must catch and name (README: The bug zoo)")
        return
    mutated = set()
    for mutant in sorted(zoo.glob("*.mutant")) + sorted(zoo.glob("hidden/*.mutant")):
        text = c.text(mutant) or ""
        where = c.rel(mutant)
        hidden = mutant.parent.name == "hidden"
        if not re.search(r"^mistake:\s*\S", text, re.M):
            yield Problem(where, 1, "no `mistake: WHAT` line (what the mistake is, in a sentence)")
        file_match = re.search(r"^file:\s*(\S+)", text, re.M)
        if not file_match:
            yield Problem(where, 0, "no `file: exK_name.cpp` line naming the reference file it changes")
        elif file_match.group(1) not in c.chapter.sources:
            yield Problem(where, line_at(text, file_match.start()), f"file: {file_match.group(1)} is not one of the "
                                                                   f"chapter's sources ({', '.join(c.chapter.sources)})")
        else:
            mutated.add(file_match.group(1))
        if hidden and not re.search(r"^# expect:\s*\S", text, re.M):
            yield Problem(where, 0, "a hidden mutant needs `# expect: TEXT`, the text a failing hidden check's "
                                    "message must contain (e.g. `# expect: known mistake [ID]`)")
        if hidden and not c.chapter.hidden_checks:
            yield Problem(where, 0, "bugzoo/hidden holds mutants but chapter.json names no hidden_checks file")
    if c.instructor:
        for exercise, source in zip(c.chapter.exercises, c.chapter.sources):
            if source not in mutated:
                yield Problem(f"{c.name}/bugzoo", 0, f"no mutant of {source} (exercise {exercise}): write "
                                                     f"bugzoo/ID.mutant with `file: {source}`, a known mistake its "
                                                     "checks must catch and name")


def lesson_data(c: ChapterFiles) -> Iterable[Problem]:
    """The lesson writes a data file besides its output (the determinism test compares them), and
    every data file a figure plots is one the lesson writes."""
    path = c.folder / c.chapter.lesson
    text = c.text(path)
    if text is None:
        return
    if not re.search(r"\.(table|matrix)\(|\bdata_dir\(\)", code_only(text)):
        yield Problem(c.rel(path), 0, "the lesson writes no data file: write its numbers with lesson.table(...) or "
                                      "lesson.matrix(...) (the test that the lesson is deterministic compares them "
                                      "run to run)")
    for figure in c.chapter.figures:
        script = c.folder / "figures" / f"{figure}.gp"
        for match in re.finditer(r"[\"']([\w.-]+\.(?:dat|tsv|csv))[\"']", c.text(script) or ""):
            if match.group(1) not in text:
                yield Problem(c.rel(script), line_at(c.text(script), match.start()),
                              f"plots {match.group(1)}, which {c.chapter.lesson} does not write "
                              f"(lesson.table(\"{match.group(1)}\", ...))")


def code_spans(c: ChapterFiles) -> Iterable[Problem]:
    """A `|` inside an inline code span in the pages: Doxygen's Markdown takes such a line for a
    table row, ending the span (its error names the generated page, not this line)."""
    for name in ("lesson.md", "hints.md"):
        text = c.text(c.folder / name)
        if text is None:
            continue
        fenced = False
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip().startswith(("```", "~~~", "\\code", "\\endcode")):
                fenced = not fenced
                continue
            if fenced or line.lstrip().startswith("|"):
                continue
            for span in re.findall(r"`([^`]+)`", line):
                if "|" in span:
                    yield Problem(f"{c.name}/{name}", number, f"`{span}`: Doxygen reads a line with | as a table row "
                                                              "and breaks the code span; say it in words (or, and)")


def left_to_write(c: ChapterFiles) -> Iterable[Problem]:
    """What a scaffold left for the author: every SCALEBOOK-TODO line."""
    paths = sorted(p for p in c.folder.rglob("*") if p.is_file())
    for source in c.chapter.sources:
        paths += [c.stub(source)] + ([c.solution(source)] if c.instructor else [])
    for path in paths:
        text = c.text(path) if path.suffix not in (".svg", ".png") else None
        for number, line in enumerate((text or "").splitlines(), start=1):
            if TODO in line:
                said = line.split(TODO, 1)[1].split('"')[0].strip(" :-*/>")
                yield Problem(c.rel(path), number, f"left to write: {said or 'this line'}")


def plugins(c: ChapterFiles) -> Iterable[Problem]:
    for entry in PLUGINS:
        module, _, function = entry.partition(":")
        for found in getattr(importlib.import_module(module), function)(c.folder):
            file, line, message = (found.file, found.line, found.message) if hasattr(found, "message") else found
            file = Path(file)
            shown = str(file.relative_to(c.root)) if file.is_absolute() and c.root in file.parents else str(file)
            yield Problem(shown, int(line or 0), message)


CHAPTER_RULES: list[Callable[[ChapterFiles], Iterable[Problem]]] = [
    chapter_files, stray_files, remote_def, contract, stubs_and_solutions, check_files, hints, lesson_page,
    file_names_in_prose, named_mistakes, bug_zoo, lesson_data, code_spans, left_to_write, plugins]


_MESSAGES: dict[Path, object] = {}


def check_messages(root: Path):
    """lib/tests/check_messages.py (the one reader of Named ids and mutants' fields), or None."""
    path = root / "lib" / "tests" / "check_messages.py"
    if path not in _MESSAGES:
        if not path.is_file():
            return None
        import importlib.util
        spec = importlib.util.spec_from_file_location("check_messages", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _MESSAGES[path] = module
    return _MESSAGES[path]


# --- the course as a whole ----------------------------------------------------------------------

def course(root: Path) -> tuple[list[Chapter], list[Problem]]:
    """Every readable manifest, and the course's own problems: manifests that do not parse,
    numbering, folders without a manifest, track folders of no chapter, lib's claims, the term."""
    problems: list[Problem] = []
    chapters: list[Chapter] = []
    folders = sorted(p for p in (root / "chapters").iterdir() if p.is_dir()) if (root / "chapters").is_dir() else []
    for folder in folders:
        if not (folder / "chapter.json").is_file():
            problems.append(Problem(f"chapters/{folder.name}", 0, "no chapter.json: this folder is not built; "
                                                                  "`./workbook new chapter NN-topic` writes a chapter"))
            continue
        try:
            chapters.append(read_manifest(folder))
        except ManifestError as error:
            said = str(error).removeprefix("read_manifest: ")
            match = re.match(r"^(chapters/[^:]+):(\d+): (.*)$", said, re.S) or re.match(r"^(chapters/[^:]+): (.*)$", said, re.S)
            line = int(match.group(2)) if match and match.lastindex == 3 else 0
            problems.append(Problem(f"chapters/{folder.name}/chapter.json", line, match.group(match.lastindex) if match else said))
    chapters.sort(key=lambda c: c.number)
    for before, after in zip(chapters, chapters[1:]):
        if before.number == after.number:
            problems.append(Problem(f"chapters/{after.folder}/chapter.json", 0,
                                    f"number {after.number} is also chapters/{before.folder}'s: renumber one "
                                    "(folder, manifest, ids, namespace)"))
    known = {c.folder for c in chapters} | {f.name for f in folders}
    for track in ("exercises", "solutions"):
        if (root / track).is_dir():
            for folder in sorted(p for p in (root / track).iterdir() if p.is_dir()):
                if folder.name not in known:
                    problems.append(Problem(f"{track}/{folder.name}", 0, "no chapter has this folder: move it under "
                                                                         "its chapter's name, or delete it"))
    lib_sources = {p.name for p in (root / "lib" / "src").glob("*.cpp")}
    claimed: dict[str, str] = {}
    for chapter in chapters:
        for source in chapter.lib:
            if source not in lib_sources:
                problems.append(Problem(f"chapters/{chapter.folder}/chapter.json", 0,
                                        f"\"lib\" names {source}, which is not in lib/src"))
            elif source in claimed:
                problems.append(Problem(f"chapters/{chapter.folder}/chapter.json", 0,
                                        f"\"lib\" names {source}, which chapters/{claimed[source]} claims too"))
            claimed[source] = chapter.folder
    try:
        read_term(chapters, root)
    except ManifestError as error:
        problems.append(Problem(TERM_FILE, 0, str(error).removeprefix(f"{TERM_FILE}: ")))
    return chapters, problems


def lint(root: Path = ROOT, only: list[str] | None = None) -> tuple[list[Problem], dict]:
    """Every problem of the course in ROOT (of the chapters ONLY, folders, when given), and what was read."""
    started = time.monotonic()
    chapters, problems = course(root)
    if only is not None:
        chapters = [c for c in chapters if c.folder in only]
    files = 0
    for chapter in chapters:
        files_of = ChapterFiles(root, chapter)
        for rule in CHAPTER_RULES:
            problems += list(rule(files_of))
        files += sum(1 for text in files_of._texts.values() if text is not None)
    return problems, {"chapters": len(chapters), "exercises": sum(len(c.sources) for c in chapters),
                      "files": files, "seconds": time.monotonic() - started}
