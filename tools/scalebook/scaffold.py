"""./workbook new: every file a new exercise or chapter needs, written so that it builds at once.

An exercise N.K (K: the next place in chapter N) gets its manifest entry, its line in remote.def,
its declaration in the contract, a stub with its instructions above the fence, a reference
solution, a first check (which the stub fails), a hints section with three tiers, and its lines
on the lesson page (the bullet, the stub and, for instructors, the solution). A chapter gets its
folder with a manifest, CMakeLists.txt, contract, checks, lesson program (writing a data file) and
page, hints, remote.def and a figure, and its first exercise as above. Whatever is the author's to
write is marked SCALEBOOK-TODO, which `./workbook lint` lists as left to write.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import NamedTuple

from .config import ROOT
from .course import FOLDER, Chapter, course_chapters
from .errors import UsageError
from .lint import TODO
from .loop.errata import FENCE, INSTRUCTIONS

IDENTIFIER = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
KEYWORDS = {"alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char", "class", "const",
            "constexpr", "continue", "default", "delete", "do", "double", "else", "enum", "explicit", "export",
            "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable",
            "namespace", "new", "noexcept", "not", "nullptr", "operator", "or", "private", "protected", "public",
            "register", "return", "short", "signed", "sizeof", "static", "struct", "switch", "template", "this",
            "throw", "true", "try", "typedef", "typename", "union", "unsigned", "using", "virtual", "void",
            "volatile", "while", "main"}


class Signature(NamedTuple):
    returns: str
    name: str
    parameters: list[tuple[str, str]]   # (type, name)

    def declaration(self, unused: bool = False) -> str:
        shown = [f"{'[[maybe_unused]] ' if unused else ''}{t} {n}" for t, n in self.parameters]
        return f"{self.returns} {self.name}({', '.join(shown)})"


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


def parse_signature(text: str, name: str) -> Signature:
    """'RET NAME(TYPE a, TYPE b)' -> Signature; the name must be NAME, each parameter named."""
    match = re.fullmatch(r"\s*(.+?)\s*\b([A-Za-z_]\w*)\s*\((.*)\)\s*;?\s*", text, re.S)
    if not match or not match.group(1).strip():
        raise UsageError(f"new: --signature must look like 'Matrix {name}(const Matrix& x, double t)', not {text!r}")
    if match.group(2) != name:
        raise UsageError(f"new: --signature declares {match.group(2)}, not the exercise's function {name}")
    parameters = []
    for parameter in split_top(match.group(3)):
        found = re.fullmatch(r"(.+?[\s&*>])([A-Za-z_]\w*)", parameter.strip())
        if not found or found.group(2) in KEYWORDS or not found.group(1).strip():
            raise UsageError(f"new: the parameter {parameter!r} of --signature needs a type and a name")
        parameters.append((found.group(1).strip(), found.group(2)))
    if any(c in text for c in ";{}#\"'\\") or "\n" in text:
        raise UsageError("new: --signature is one C++ declaration, without ; { } # quotes or backslashes")
    return Signature(match.group(1).strip(), name, parameters)


def remote_type(type_: str) -> str:
    """A parameter's type as remote.def lists it (its declaration's type, as written)."""
    return " ".join(type_.split())


def local_of(type_: str, name: str) -> str:
    """A C++ local a first check passes for the parameter: value-initialised, a seeded Rng."""
    bare = re.sub(r"\bconst\b|[&*]", "", type_).strip()
    if bare.split("::")[-1] == "Rng":
        return f"Rng {name}(1);"
    return f"{bare} {name}{{}};"


class Pending(dict):
    """The files a command writes, path -> text, read back as they will be; written all at once at
    the end (write()), so that a refusal half-way leaves the tree as it was."""

    def text(self, path: Path) -> str:
        return self[path] if path in self else path.read_text()

    def write(self) -> None:
        for path, text in self.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)


def chapter_title(chapter_dir: Path, pending: Pending) -> str:
    """What the chapter is about: its page's title without 'Chapter N —'."""
    page = chapter_dir / "lesson.md"
    first = pending.text(page).splitlines()[0] if page in pending or page.is_file() else ""
    title = re.sub(r"\s*\{#\w+\}\s*$", "", first)
    return re.sub(r"^Chapter \d+\s*[—-]\s*", "", title).strip() or chapter_dir.name


def insert_before_last(text: str, marker: str, block: str, where: str) -> str:
    at = text.rfind(marker)
    if at < 0:
        raise UsageError(f"new: {where} has no line {marker.strip()!r} to write before; add it, then run new again")
    return text[:at] + block + text[at:]


def with_manifest_entry(text: str, entry: dict) -> str:
    """The manifest's TEXT with the exercise appended to "exercises", one line like the others (the
    file's layout kept)."""
    line = json.dumps(entry)
    closing = re.search(r'(\{[^{}]*"id"[^{}]*\})(\s*\n)(\s*)\]', text)
    if closing:
        text = text[:closing.end(1)] + ",\n" + closing.group(3) + "  " + line + text[closing.end(1):]
    else:
        data = json.loads(text)
        data["exercises"].append(entry)
        text = json.dumps(data, indent=2) + "\n"
    json.loads(text)
    return text


def write_new(path: Path, text: str, written: list[Path], pending: Pending) -> None:
    if path.exists() or path in pending:
        raise UsageError(f"new: {path.relative_to(ROOT)} exists already; nothing was written")
    pending[path] = text
    written.append(path)


def new_exercise(root: Path, chapter: Chapter, name: str, signature: Signature,
                 pending: Pending | None = None) -> tuple[list[Path], list[Path]]:
    """Writes exercise N.K of CHAPTER (the next K), with PENDING's files (a new chapter's) first;
    nothing is written unless all of it can be. Returns (files written, files changed)."""
    pending = Pending() if pending is None else pending
    folder, number = chapter.folder, chapter.number
    index = len(chapter.sources) + 1
    exercise, ch = f"{number}.{index}", f"ch{number:02d}"
    source = f"ex{index}_{name}.cpp"
    chapter_dir = root / "chapters" / folder
    title = chapter_title(chapter_dir, pending)
    stub_path = root / "exercises" / folder / source
    solution_path = root / "solutions" / folder / source
    for path in (stub_path, solution_path):
        if path.exists():
            raise UsageError(f"new: {path.relative_to(root)} exists already; nothing was written")
    written: list[Path] = []
    changed: list[Path] = []
    unused_call = ", ".join(n for _, n in signature.parameters)
    # The stub and the solution.
    write_new(stub_path, "\n".join([
        f"// Exercise {exercise} — {name}",
        f"// Chapter {number}: {title}.",
        "//",
        "// One exercise per file: saving this file recompiles only this exercise. The contract is",
        f"// chapters/{folder}/{chapter.contract}.",
        "//",
        INSTRUCTIONS,
        f"// {TODO}: what {name} returns, for which input, and which bad input throws what.",
        "//",
        FENCE,
        f'#include "{chapter.contract}"',
        "",
        f"namespace scalebook::{ch} {{",
        "",
        f"{signature.declaration(unused=True)} {{",
        f'  scalebook::not_implemented("{exercise}", "{name}");',
        "}",
        "",
        f"}}  // namespace scalebook::{ch}",
        ""]), written, pending)
    body = "  return {};" if signature.returns != "void" else "  return;"
    write_new(solution_path, "\n".join([
        f"// Reference for exercise {exercise} — {name}.",
        f"// Chapter {number}: {title}.",
        f'#include "{chapter.contract}"',
        "",
        f"namespace scalebook::{ch} {{",
        "",
        f"{signature.declaration(unused=True)} {{",
        f"  // {TODO}: the reference solution (the checks' expected values come from the contract, not from it).",
        body,
        "}",
        "",
        f"}}  // namespace scalebook::{ch}",
        ""]), written, pending)
    # The manifest, remote.def, the contract.
    manifest = chapter_dir / "chapter.json"
    pending[manifest] = with_manifest_entry(pending.text(manifest), {"id": exercise, "source": source,
                                                                     "functions": [name], "points": 1})
    types = [remote_type(t) for t, _ in signature.parameters]
    remote = chapter_dir / "remote.def"
    pending[remote] = (pending.text(remote).rstrip("\n") + "\n" +
                       f"SCALEBOOK_REMOTE({', '.join([exercise, name, signature.returns, *types])})\n")
    contract_path = chapter_dir / chapter.contract
    declaration = (f"/// \\brief Exercise {exercise}: {TODO} what {name} computes.\n"
                   + "".join(f"/// \\param {n} {TODO} what it is, its shape\n" for _, n in signature.parameters)
                   + f"/// \\throws ShapeError, ValueError {TODO} on which bad input\n"
                   + f"{signature.declaration()};\n\n")
    pending[contract_path] = insert_before_last(pending.text(contract_path), f"}}  // namespace scalebook::{ch}",
                                                declaration, str(contract_path.relative_to(root)))
    # The first check: the stub throws, so it fails; the reference returns.
    locals_ = "\n".join(f"  {local_of(t, n)}" for t, n in signature.parameters)
    inputs = f"  INPUTS({unused_call});\n" if signature.parameters else ""
    check = (f'TEST_CASE("{exercise} {name} {TODO} says what this check holds it to") {{\n'
             f"  // {TODO}: inputs where a mistake shows, the expected value derived here from the contract (never\n"
             f"  // copied from the reference's output), CHECK_MESSAGE with a sentence, suspect() for named mistakes.\n"
             f"{locals_}\n{inputs}"
             f"  CHECK_NOTHROW_MESSAGE({ch}::{name}({unused_call}), \"{name} must return (the stub throws: not implemented)\");\n"
             f"}}\n\n")
    checks_path = chapter_dir / chapter.checks
    pending[checks_path] = insert_before_last(pending.text(checks_path), "}  // TEST_SUITE", check,
                                              str(checks_path.relative_to(root)))
    # The hints and the page.
    hints_path = chapter_dir / "hints.md"
    pending[hints_path] = (pending.text(hints_path).rstrip("\n") + "\n\n" + "\n".join([
        f"## {exercise} {name} {{#{ch}_hint_{number}_{index}}}", "",
        f"1. {TODO}: a nudge: what to decide first.",
        f"2. {TODO}: a pointer: the formula or the helper that does it.",
        f"3. {TODO}: nearly the answer: the steps, and the input checks with the function's name.", ""]))
    page = chapter_dir / "lesson.md"
    pending[page] = page_with_exercise(pending.text(page), chapter, exercise, name, source, signature,
                                       str(page.relative_to(root)))
    changed += [manifest, remote, contract_path, checks_path, hints_path, page]
    # A range of files written "ex1_a.cpp to exN_b.cpp" in the chapter's prose now ends with this one.
    if chapter.sources:
        last = chapter.sources[-1]
        for path in (contract_path, page, root / "exercises" / folder / chapter.sources[0]):
            text = pending.text(path)
            fixed = re.sub(rf"(\b{re.escape(chapter.sources[0])}`?(?:\s|//)+to(?:\s|//)+`?){re.escape(last)}",
                           rf"\g<1>{source}", text)
            if fixed != text:
                pending[path] = fixed
                changed.append(path) if path not in changed else None
    pending.write()
    return written, changed


def page_with_exercise(text: str, chapter: Chapter, exercise: str, name: str, source: str, signature: Signature,
                       where: str) -> str:
    """lesson.md with the exercise's bullet, its stub and (inside \\if instructor) its solution."""
    folder = chapter.folder
    bullet = f"- **{exercise} `{name}({', '.join(n for _, n in signature.parameters)})`** — {TODO} what it computes.\n"
    bullets = list(re.finditer(r"^- \*\*\d+\.\d+ .*\n(?:  .*\n)*", text, re.M))
    if bullets:
        text = text[:bullets[-1].end()] + bullet + text[bullets[-1].end():]
    else:
        text = insert_before_last(text, "\\include exercises/", bullet + "\n", where) if "\\include exercises/" in text \
            else insert_before_last(text, "\\if instructor", bullet + "\n", where)
    stubs = list(re.finditer(rf"^\\include exercises/{re.escape(folder)}/\S+\n", text, re.M))
    line = f"\\include exercises/{folder}/{source}\n"
    if stubs:
        text = text[:stubs[-1].end()] + "\n" + line + text[stubs[-1].end():]
    else:
        text = insert_before_last(text, "\\if instructor", line + "\n", where)
    solutions = list(re.finditer(rf"^\\include solutions/{re.escape(folder)}/\S+\n", text, re.M))
    line = f"\\include solutions/{folder}/{source}\n"
    if solutions:
        text = text[:solutions[-1].end()] + "\n" + line + text[solutions[-1].end():]
    else:
        text = insert_before_last(text, "\\endif", line, where)
    return text


def check_name(name: str, chapters: list[Chapter]) -> None:
    if not IDENTIFIER.match(name) or name in KEYWORDS:
        raise UsageError(f"new: {name!r} is not a function name: lower-case snake_case (softmax_temperature), "
                         "not a C++ keyword")
    for chapter in chapters:
        for functions in chapter.functions:
            if name in functions:
                raise UsageError(f"new: {name} is already a function of chapter {chapter.number}")


def exercise(root: Path, chapter_arg: str, name: str, signature_text: str | None) -> tuple[str, list[Path], list[Path]]:
    from .course import resolve_chapter
    chapters = course_chapters(root)
    chapter = resolve_chapter(chapter_arg, chapters)
    check_name(name, chapters)
    signature = parse_signature(signature_text or f"double {name}(double x)", name)
    written, changed = new_exercise(root, chapter, name, signature)
    return f"{chapter.number}.{len(chapter.sources) + 1}", written, changed


def chapter(root: Path, folder: str, name: str | None, signature_text: str | None,
            summary: str | None) -> tuple[list[Path], list[Path]]:
    """chapters/FOLDER with every file, and its first exercise."""
    match = FOLDER.match(folder)
    if not match or match.group(1) == "00":
        raise UsageError(f"new: a chapter's folder is NN-topic, NN its two-digit number (01 to 99) and the topic "
                         f"lower-case words joined by - (08-layer-norm), not {folder!r}")
    number = int(match.group(1))
    chapters = course_chapters(root)
    for other in chapters:
        if other.number == number:
            raise UsageError(f"new: chapter {number} is chapters/{other.folder} already")
    for track in ("chapters", "exercises", "solutions"):
        if (root / track / folder).exists():
            raise UsageError(f"new: {track}/{folder} exists already; nothing was written")
    topic = folder.split("-", 1)[1]
    name = name or topic.replace("-", "_")
    check_name(name, chapters)
    signature = parse_signature(signature_text or f"double {name}(double x)", name)
    ch, words = f"ch{number:02d}", topic.replace("-", " ")
    header = f"{topic.replace('-', '_')}.hpp"
    chapter_dir = root / "chapters" / folder
    written: list[Path] = []
    pending = Pending()
    manifest = {"number": number, "summary": summary or f"{TODO}: what the chapter covers, in one line.",
                "contract": header, "checks": "checks.cpp", "lesson": "lesson.cpp", "figures": [f"{ch}_first_look"],
                "tolerance": 1e-12, "bench": False, "exercises": []}
    files = {
        "chapter.json": json.dumps(manifest, indent=2).replace('"exercises": []', '"exercises": [\n  ]') + "\n",
        "CMakeLists.txt": f"# Chapter {number:02d} — see lesson.md. Mechanics: cmake/Scalebook.cmake. One file per exercise, so that a\n"
                          "# student's edit recompiles only that exercise.\n"
                          "scalebook_add_chapter()  # from chapter.json: exercises, sources, points, figures, summary\n",
        header: f"// Chapter {number} contract — {words}.\n"
                f"// Students implement these in exercises/{folder}/, one file per exercise (the instructor's copy of\n"
                "// the workbook holds a reference implementation).\n"
                "#pragma once\n\n"
                '#include "scalebook/core.hpp"\n'
                '#include "scalebook/random.hpp"\n\n'
                "/// \\file\n"
                f"/// \\brief Chapter {number}'s exercise contract: {TODO} what the chapter's functions do.\n"
                "///\n"
                "/// Rules for every function here (the checks rely on them):\n"
                "/// - Bad input throws scalebook::ShapeError (empty, shapes that do not fit, sizes below their\n"
                "///   minimum) or scalebook::ValueError (NaN, infinity, values out of range), exactly those types.\n"
                "/// - Every error message starts with the function's name and \": \" (lib's require_* helpers\n"
                "///   in scalebook/core.hpp write messages that way).\n\n"
                f"/// \\brief Chapter {number}'s exercises: the functions and types of {header}.\n"
                f"namespace scalebook::{ch} {{\n\n"
                f"}}  // namespace scalebook::{ch}\n",
        "checks.cpp": f"// Chapter {number} checks — {words}.\n"
                      "//\n"
                      "// Every expected value is derived here from its formula, never copied from the reference's\n"
                      "// output. A failure names a known mistake only when the output is the one that mistake gives\n"
                      "// on the same input (suspect(), scalebook/testing.hpp).\n"
                      "#include <doctest/doctest.h>\n\n"
                      f'#include "{header}"\n'
                      '#include "scalebook/testing.hpp"\n\n'
                      "using namespace scalebook;\n"
                      f"namespace {ch} = scalebook::{ch};\n\n"
                      f'TEST_SUITE("{folder}") {{\n\n'
                      "}  // TEST_SUITE\n",
        "lesson.cpp": f"// Chapter {number} lesson — {words}.\n"
                      "//\n"
                      "// Prints every number the chapter's page shows (the page cuts the sections out of this\n"
                      f"// program's output with \\snippet) and writes {ch}_first_look.dat for the figure.\n"
                      "// Deterministic: fixed seeds, fixed precision, one thread.\n"
                      "#include <cstdio>\n"
                      "#include <vector>\n\n"
                      f'#include "{header}"\n'
                      '#include "scalebook/lesson.hpp"\n\n'
                      "int main(int argc, char** argv) {\n"
                      "  return scalebook::run_lesson(argc, argv, [](scalebook::Lesson& lesson) {\n"
                      '    lesson.begin("first-look");\n'
                      f"    // {TODO}: call the chapter's functions and print what the page shows.\n"
                      "    std::vector<double> xs, ys;\n"
                      "    for (int i = 1; i <= 4; ++i) {\n"
                      "      xs.push_back(i);\n"
                      "      ys.push_back(i * i);\n"
                      '      std::printf("x = %d  y = %d\\n", i, i * i);\n'
                      "    }\n"
                      '    lesson.end("first-look");\n'
                      f'    lesson.table("{ch}_first_look.dat", {{"x", "y"}}, {{xs, ys}});\n'
                      "  });\n"
                      "}\n",
        "lesson.md": f"Chapter {number} — {words[:1].upper() + words[1:]} {{#{ch}}}\n"
                     "===\n\n"
                     "@tableofcontents\n\n"
                     f"## The question {{#{ch}_question}}\n\n"
                     f"{TODO}: the question the chapter answers, and why it matters at scale.\n\n"
                     f"## A first look {{#{ch}_first_look}}\n\n"
                     f"{TODO}: what the lesson's first section shows.\n\n"
                     f"\\snippet {folder}/lesson.out first-look\n\n"
                     f"\\image html {ch}_first_look.svg \"{TODO} the figure's caption\"\n\n"
                     f"## Exercises {{#{ch}_exercises}}\n\n"
                     f"The contract is {header}; implement it in `exercises/{folder}/`, one file per exercise, so that\n"
                     "saving one recompiles only that exercise.\n\n"
                     "\\if instructor\n"
                     f"### Reference solution {{#{ch}_solution}}\n\n"
                     "\\endif\n\n"
                     f"See @ref {ch}_hints.\n\n"
                     f"## References {{#{ch}_references}}\n\n"
                     f"- {TODO}: the sources the chapter cites, with sections.\n",
        "hints.md": f"Chapter {number} hints {{#{ch}_hints}}\n"
                    "===\n\n"
                    f"Hints for the exercises of @ref {ch}, from a nudge to a specific pointer. `./workbook hint {number}.1`\n"
                    "shows them one at a time; try each before reading the next.\n",
        "remote.def": f"// Chapter {number}'s functions as the grader calls them in a separate process (scalebook/remote.hpp):\n"
                      "// SCALEBOOK_REMOTE(exercise id, function, return type, parameter types...).\n",
        f"figures/{ch}_first_look.gp": f"# Chapter {number}: {TODO} what the figure shows.\n"
                                       f"# Data: {ch}_first_look.dat, written by the lesson. The build sets the terminal and the output file.\n"
                                       f'set title "{TODO} the figure\'s title"\n'
                                       'set xlabel "x"\n'
                                       'set ylabel "y"\n'
                                       f'plot "{ch}_first_look.dat" using 1:2 with linespoints title "y"\n',
    }
    for relative, text in files.items():
        write_new(chapter_dir / relative, text, written, pending)
    new = Chapter(folder, number, (), summary=manifest["summary"], contract=header, figures=tuple(manifest["figures"]))
    more, changed = new_exercise(root, new, name, signature, pending)
    return written + more, [c for c in changed if c not in written]
