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

import functools
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


CODE_TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"', re.S)   # a comment, or a string kept whole


def code_only(text: str) -> str:
    """C++ source with its comments blanked, lines and offsets kept."""
    def blank(match: re.Match) -> str:
        found = match.group(0)
        if not found.startswith("/"):
            return found
        return " " * len(found) if "\n" not in found else "".join(c if c == "\n" else " " for c in found)
    return CODE_TOKEN.sub(blank, text)


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


# --- the types that cross the grader's process boundary ---------------------------------------

# Names a type may be made of that no header of the workbook declares: C++'s own words.
BUILTIN_TYPES = {"void", "bool", "char", "short", "int", "long", "unsigned", "signed", "float", "double", "const",
                 "volatile", "auto", "size_t"}
TYPE_DECLARATION = re.compile(r"\b(?:(struct|class|union)|enum(?:\s+class|\s+struct)?)\s+(\w+)\s*(?::[^{;]*)?\{"
                              r"|\busing\s+(\w+)\s*=\s*([^;]*);")
REMOTE_FIELDS = re.compile(r"\bSCALEBOOK_REMOTE_FIELDS\(\s*([\w:]+)\s*,([^;]*?)\)\s*;", re.S)


def type_names(type_text: str) -> list[str]:
    """The names in a C++ type that some header must declare (Matrix, LayerNormGrads): not C++'s
    own words, nor names of std:: or Eigen::."""
    names = []
    for match in re.finditer(r"\b[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*", type_text):
        parts = re.sub(r"\s", "", match.group(0)).split("::")
        if parts[0] not in ("std", "Eigen") and parts[-1] not in BUILTIN_TYPES:
            names.append(parts[-1])
    return names


class Declared(NamedTuple):
    """What headers declare at namespace scope: name -> (header, kind: struct, class, enum, using),
    the text a `using` stands for, the data members of each struct."""
    where: dict[str, tuple[Path, str]]
    aliases: dict[str, str]
    fields: dict[str, list[str]]


def matching_brace(code: str, opening: int) -> int:
    """The offset just past the } that closes the { at OPENING."""
    depth = 0
    for at in range(opening, len(code)):
        depth += {"{": 1, "}": -1}.get(code[at], 0)
        if depth == 0:
            return at + 1
    return len(code)


def data_members(body: str) -> list[str]:
    """The data members of a struct's BODY in order (what a structured binding binds): not its
    methods, static members, types or access labels."""
    flat, depth = "", 0
    for char in body:
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            flat += ";" if depth == 0 else ""
        elif depth == 0:
            flat += char
    members = []
    for statement in flat.split(";"):
        statement = re.sub(r"\b(?:public|private|protected)\s*:", "", statement).strip()
        if not statement or re.match(r"(static|using|typedef|friend|template|struct|class|enum)\b", statement):
            continue
        head = re.split(r"=", statement, maxsplit=1)[0]
        name = re.search(r"(\w+)\s*(?:\[[^\]]*\]\s*)*$", head)
        if "(" not in head and name:
            members.append(name.group(1))
    return members


def declared_types(headers: Iterable[Path], texts: Callable[[Path], str | None] = None) -> Declared:
    """What HEADERS declare (TEXTS reads a header; by default its file)."""
    where, aliases, fields = {}, {}, {}
    for header in headers:
        text = texts(header) if texts else (header.read_text(errors="replace") if header.is_file() else None)
        code = code_only(text or "")
        for match in TYPE_DECLARATION.finditer(code):
            if match.group(3):
                where.setdefault(match.group(3), (header, "using"))
                aliases.setdefault(match.group(3), match.group(4))
                continue
            kind = match.group(1) or "enum"
            where.setdefault(match.group(2), (header, kind))
            if kind == "struct":
                fields.setdefault(match.group(2), data_members(code[match.end():matching_brace(code, match.end() - 1) - 1]))
    return Declared(where, aliases, fields)


def lib_headers(root: Path) -> list[Path]:
    return sorted((root / "lib" / "include" / "scalebook").glob("*.hpp"))


@functools.lru_cache(maxsize=None)
def lib_types(root: Path) -> Declared:
    """What lib's headers declare: read once for every chapter."""
    return declared_types(lib_headers(root))


def split_top(text: str) -> list[str]:
    """TEXT split at the commas outside <...>, (...) and {...}."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char in "<({"
        depth -= char in ">)}"
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [p.strip() for p in parts + [current] if p.strip()]


def remote_lines(text: str) -> list[tuple[int, str, str, list[str]]]:
    """remote.def's SCALEBOOK_REMOTE lines: (line, exercise, function, [return type, parameter types])."""
    lines = []
    for match in re.finditer(r"^\s*SCALEBOOK_REMOTE\((.*)\)\s*$", text, re.M):
        parts = split_top(match.group(1))
        if len(parts) >= 3:
            lines.append((line_at(text, match.start()), parts[0], parts[1], parts[2:]))
    return lines


def remote_types(c: ChapterFiles) -> Iterable[Problem]:
    """Every type remote.def names is declared by the chapter's headers or lib's; every struct of
    the chapter that crosses the process boundary (a return or parameter type, a member of one, what
    a `using` of one stands for) has its SCALEBOOK_REMOTE_FIELDS line, naming its data members in order."""
    text = c.text(c.folder / "remote.def")
    if text is None:
        return
    headers = sorted(c.folder.glob("*.hpp"))
    chapter = declared_types(headers, c.text)
    lib = lib_types(c.root)
    contract = c.rel(c.folder / c.chapter.contract)
    crossing: dict[str, str] = {}   # a struct of the chapter -> the call it crosses in
    for line, exercise, function, types in remote_lines(text):
        for name in type_names(" ".join(types)):
            if name not in chapter.where and name not in lib.where:
                yield Problem(f"{c.name}/remote.def", line,
                              f"{name} ({exercise}'s {function}) is declared neither in the chapter's headers nor in "
                              f"lib: declare it in {contract} (a struct with its SCALEBOOK_REMOTE_FIELDS line), or use "
                              "a type lib declares (Matrix, Vector, RowVector, Index, ...)")
            elif name in chapter.where:
                crossing.setdefault(name, f"{exercise}'s {function}")
    fields_lines = {}
    for header in headers:
        for match in REMOTE_FIELDS.finditer(code_only(c.text(header) or "")):
            names = [n.strip() for n in match.group(2).split(",") if n.strip()]
            fields_lines[match.group(1).split("::")[-1]] = (header, line_at(c.text(header), match.start()), names)
    pending = list(crossing)
    while pending:
        name = pending.pop()
        header, kind = chapter.where[name]
        inner = chapter.aliases.get(name, "")
        if kind == "struct":
            members, found = chapter.fields[name], fields_lines.get(name)
            if found is None:
                yield Problem(c.rel(header), line_of(c.text(header) or "", rf"^\s*struct\s+{name}\b"),
                              f"struct {name} crosses the grader's process boundary ({crossing[name]}) but has no "
                              f"SCALEBOOK_REMOTE_FIELDS(scalebook::{c.ch}::{name}, {', '.join(members)}); line: add it "
                              "after the namespace, inside #if __has_include(\"scalebook/remote.hpp\") ... #endif")
            elif found[2] != members:
                yield Problem(c.rel(found[0]), found[1],
                              f"SCALEBOOK_REMOTE_FIELDS of {name} names {', '.join(found[2])}; its data members are "
                              f"{', '.join(members) or 'none'}, in that order")
            inner = member_types(code_only(c.text(header) or ""), name)
        for other in type_names(inner):
            if other in chapter.where and other not in crossing:
                crossing[other] = crossing[name]
                pending.append(other)


def member_types(code: str, struct: str) -> str:
    """The text of STRUCT's body in CODE, its nested braces left out (the types of its members)."""
    match = re.search(rf"\bstruct\s+{struct}\s*(?::[^{{;]*)?\{{", code)
    if not match:
        return ""
    body = code[match.end():matching_brace(code, match.end() - 1) - 1]
    return re.sub(r"\{[^{}]*\}", " ", body)


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


def check_texts(c: ChapterFiles) -> Iterable[Problem]:
    """A check's own text names no mistake and guesses none (a mistake is named on evidence only,
    by suspect() and its kin: "known mistake [ID]"): no "known mistake" or "looks like" in a string
    of the checks, no question, no reference to a comment the student does not see, no call of
    detail::name_mistakes; and hints.md keys its advice on the id, never on a message's text."""
    messages = check_messages(c.root)
    files = [c.folder / c.chapter.checks] + ([c.folder / c.chapter.hidden_checks]
                                              if c.chapter.hidden_checks and c.instructor else [])
    for path in files:
        text = code_only(c.text(path) or "")
        for match in re.finditer(r'"((?:[^"\\\n]|\\.)*)"', text):
            literal, line = match.group(1), line_at(text, match.start())
            if re.search(r"known mistake|looks like", literal):
                yield Problem(c.rel(path), line, f"a mistake named in a check's own text: name it with suspect() on "
                                                 f"evidence: {literal[:60]!r}")
            if "?" in literal:
                yield Problem(c.rel(path), line, f"a question in a message is a guess: state the rule, or name the "
                                                 f"mistake on evidence: {literal[:60]!r}")
            if messages is not None and messages.HIDDEN.search(literal):
                yield Problem(c.rel(path), line, f"a message refers to a comment the student does not see: "
                                                 f"{literal[:60]!r}")
        if "name_mistakes" in text:
            yield Problem(c.rel(path), line_of(text, r"name_mistakes"), "calls detail::name_mistakes, which names a "
                                                                        "mistake without evidence: use suspect()")
    for number, line in enumerate((c.text(c.folder / "hints.md") or "").splitlines(), start=1):
        if line.startswith("If the check says"):
            yield Problem(f"{c.name}/hints.md", number, "advice keyed on a message's text: write `If the check names "
                                                        "[ID]: ADVICE`, the id its checks declare")


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


# Raw TeX in a title, as the browser test finds it in the rendered titles (docs/tests/
# check_docs_in_browser.py, LAYOUT_JS's rawTex), here in the source with its $...$ math left out;
# and Doxygen's own math commands, which a title does not render.
RAW_TEX_IN_TITLE = re.compile(r"(^|[^A-Za-z0-9_])[A-Za-z]_[A-Za-z0-9{]|\\[a-z]+|\$")
DOXYGEN_MATH = re.compile(r"\\f[$\[\](){}]")


def page_lines(text: str) -> Iterable[tuple[int, str]]:
    """A page's lines outside code blocks (``` ~~~ \\code), numbered from 1."""
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip().startswith(("```", "~~~", "\\code", "\\endcode")):
            fenced = not fenced
        elif not fenced:
            yield number, line


def titles(c: ChapterFiles) -> Iterable[Problem]:
    """The titles of the pages (the page's, its headings, its figures' captions) hold math only as
    $...$: Doxygen shows \\f$ ... \\f$ there as typed (in the heading, the table of contents, the
    sidebar), and TeX outside $...$ too (d_k, \\sqrt)."""
    for name in ("lesson.md", "hints.md"):
        text = c.text(c.folder / name)
        for number, line in page_lines(text or ""):
            heading = re.match(r"#{1,6}\s+(.*)", line)
            caption = re.match(r'\\image\s+html\s+\S+\s+"(.*)"', line)
            title = line if number == 1 else heading.group(1) if heading else caption.group(1) if caption else None
            if title is None:
                continue
            what = "the page's title" if number == 1 else "a heading" if heading else "a figure's caption"
            title = re.sub(r"\s*\{#[\w-]+\}\s*$", "", title)
            plain = re.sub(r"`[^`]*`", "", re.sub(r"\$[^$]+\$", "", title))
            raw = RAW_TEX_IN_TITLE.search(plain)
            if DOXYGEN_MATH.search(title):
                yield Problem(f"{c.name}/{name}", number, f"\\f$ in {what}: Doxygen shows it as typed there (and in the "
                                                          "table of contents and the sidebar); write the math as "
                                                          "$\\\\varepsilon$, the form a title takes")
            elif raw:
                yield Problem(f"{c.name}/{name}", number, f"raw TeX in {what}: {plain[raw.start():raw.start() + 16].strip()!r} "
                                                          "shows as typed; write math as $...$ ($\\\\sqrt{d_k}$)")


def snippet_regions(text: str, region: str) -> list[tuple[int, str]]:
    """Each block of TEXT that `\\snippet FILE REGION` shows (between two lines marked [REGION]):
    (its first line's number, its text)."""
    lines = text.splitlines()
    marks = [i for i, line in enumerate(lines) if f"[{region}]" in line]
    return [(start + 2, "\n".join(lines[start + 1:end])) for start, end in zip(marks[::2], marks[1::2])]


def helpers_shown(c: ChapterFiles) -> Iterable[Problem]:
    """Every \\snippet of the page names a region its file has, and a helper the lesson defines
    itself that the page's code calls is shown on the page: the rule of the docs build's
    docs/tests/check_helpers_shown.py, on the page's fragments as read from the source."""
    page = c.text(c.folder / "lesson.md")
    lesson = c.text(c.folder / c.chapter.lesson)
    checker = tool_module(c.root, "docs/tests/check_helpers_shown.py")
    if page is None or lesson is None:
        return
    fragments: list[tuple[str, int, int]] = []   # (file, first line, text) of each code fragment
    texts: list[str] = []
    for number, line in page_lines(page):
        match = re.match(r"\\snippet(?:\{[^}]*\})?\s+(\S+)\s+(\S+)", line)
        if not match or not match.group(1).endswith((".cpp", ".hpp")):
            continue
        source = c.root / match.group(1)
        text = c.text(source)
        regions = snippet_regions(text or "", match.group(2)) if text is not None else []
        if text is None:
            yield Problem(f"{c.name}/lesson.md", number, f"\\snippet {match.group(1)}: no such file")
        elif not regions:
            yield Problem(f"{c.name}/lesson.md", number, f"\\snippet {match.group(1)} {match.group(2)}: the file has no "
                                                         f"region marked //! [{match.group(2)}] ... //! [{match.group(2)}]")
        for first, region in regions:
            fragments.append((match.group(1), first, number))
            texts.append(region)
    for block in re.findall(r"^```[^\n]*\n(.*?)^```", page, re.S | re.M):
        texts.append(block)
        fragments.append(("", 0, 0))
    if checker is None:
        return
    for index, line, name in checker.unshown_helpers(texts, lesson):
        source, first, at = fragments[index]
        yield Problem(f"{c.name}/lesson.md", at, f"the snippet shows a call of {name} ({source}:{first + line - 1}), "
                                                 f"which {c.chapter.lesson} defines and the page never shows: put its "
                                                 "definition in a \\snippet region on the page")


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
    chapter_files, stray_files, remote_def, remote_types, contract, stubs_and_solutions, check_files, hints, lesson_page,
    file_names_in_prose, named_mistakes, check_texts, bug_zoo, lesson_data, code_spans, titles, helpers_shown, left_to_write,
    plugins]


_MODULES: dict[Path, object] = {}


def tool_module(root: Path, relative: str):
    """A checker of the tree's own (ROOT/RELATIVE, e.g. lib/tests/check_messages.py) as a module,
    read once; None where the tree has none (a student's edition)."""
    path = root / relative
    if path not in _MODULES:
        if not path.is_file():
            return None
        import importlib.util
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _MODULES[path] = module
    return _MODULES[path]


def check_messages(root: Path):
    """lib/tests/check_messages.py (the one reader of Named ids and mutants' fields), or None."""
    return tool_module(root, "lib/tests/check_messages.py")


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
