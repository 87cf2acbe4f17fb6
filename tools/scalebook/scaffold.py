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
from .lint import TODO, declared_types, lib_headers, split_top, type_names
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


def bare_type(type_: str) -> str:
    """A parameter's type without const, & and *: what a local of it is declared as."""
    return " ".join(re.sub(r"\bconst\b|[&*]", " ", type_).split())


# A first check's inputs: small, finite and not empty (the contract's error rules throw on empty
# input), so that a correct function returns on them.
EXAMPLE_VALUES = {"Matrix": "scalebook::testing::from_rows(2, 3, {0.5, -1.0, 2.0, 1.5, 0.25, -3.0})",
                  "Vector": "(Vector(3) << 0.5, -1.0, 2.0).finished()",
                  "RowVector": "scalebook::testing::row({0.5, -1.0, 2.0})",
                  "double": "0.5", "float": "0.5f", "int": "3", "long": "3", "Index": "3", "std::size_t": "3",
                  "std::int64_t": "3", "bool": "true", "std::vector<double>": "{0.5, -1.0, 2.0}"}
# What the scaffolded check compares a result with: NaN, which near() never matches, so that no
# answer passes (the stub, the scaffold's `return {}`, any plausible mistake, a correct answer
# too) until the author writes the value the contract gives.
NUMBERS = {"double", "float", "int", "long", "Index", "std::size_t", "std::int64_t"}
EIGEN_RESULTS = {"Matrix": "Matrix::Constant(1, 1, {nan})", "Vector": "Vector::Constant(1, {nan})",
                 "RowVector": "RowVector::Constant(1, {nan})"}


def local_of(type_: str, name: str) -> str:
    """A C++ local a first check passes for the parameter (TYPE_ as the checks file names it)."""
    bare = bare_type(type_)
    if bare.split("::")[-1] == "Rng":
        return f"Rng {name}(1);"
    if bare in EXAMPLE_VALUES:
        return f"{bare} {name} = {EXAMPLE_VALUES[bare]};"
    return f"{bare} {name}{{}};"


def first_check(ch: str, exercise: str, signature: Signature, own: set[str]) -> str:
    """The exercise's first check: inputs a correct function returns on, and a comparison with a
    value left for the author (SCALEBOOK-TODO), which nothing matches until it is written. OWN: the
    chapter's types, which the checks file names with their namespace (ch08::LayerNormGrads)."""
    def checks_type(type_: str) -> str:
        return re.sub(r"(?<![\w:])(" + "|".join(map(re.escape, sorted(own))) + r")\b", rf"{ch}::\1", type_) if own else type_

    signature = Signature(checks_type(signature.returns), signature.name,
                          [(checks_type(t), n) for t, n in signature.parameters])
    name, arguments = signature.name, ", ".join(n for _, n in signature.parameters)
    call = f"{ch}::{name}({arguments})"
    lines = [f'TEST_CASE("{exercise} {name} {TODO} says what this check holds it to") {{',
             f"  // {TODO}: inputs where a mistake shows (not empty, not NaN: the contract's rules throw there).",
             *(f"  {local_of(t, n)}" for t, n in signature.parameters)]
    shown = [n for t, n in signature.parameters if bare_type(t) in EXAMPLE_VALUES]  # what doctest can print
    if shown:
        lines.append(f"  INPUTS({', '.join(shown)});")
    returns, nan = signature.returns, "std::numeric_limits<double>::quiet_NaN()"
    value = f"  // {TODO}: the value the contract gives for these inputs, derived here from its formula (never " \
            "copied from the reference's output); suspect() names a known mistake's output."
    message = f'"{name}({arguments}) {TODO}: must give WHAT for these inputs, because WHY"'
    if returns in EIGEN_RESULTS:
        lines += [f"  const {returns} got = {call};", value,
                  f"  const {returns} expected = {EIGEN_RESULTS[returns].format(nan=nan)};",
                  f"  CHECK_MESSAGE(scalebook::testing::near(got, expected), {message});"]
    elif returns in NUMBERS:
        lines += [f"  const {returns} got = {call};", value, f"  const double expected = {nan};",
                  f"  CHECK_MESSAGE(scalebook::testing::near(static_cast<double>(got), expected), {message});"]
    else:
        lines += [f"  {call};" if returns == "void" else f"  [[maybe_unused]] const {returns} got = {call};",
                  f"  // {TODO}: compare the result with the value the contract gives for these inputs, derived "
                  "here from its formula (never copied from the reference's output).",
                  "  const bool as_the_contract_says = false;",
                  f"  CHECK_MESSAGE(as_the_contract_says, {message});"]
    return "\n".join(lines) + "\n}\n\n"


def comment_title(title: str) -> str:
    """A chapter's title as its C++ files' header lines say it: lower-case first, unless its first
    word is a name (LayerNorm, RMSNorm)."""
    first = title.split(" ", 1)[0]
    return title[:1].lower() + title[1:] if first[1:] == first[1:].lower() else title


def check_title(title: str) -> str:
    title = title.strip()
    if not title or len(title) > 120 or any(ord(c) < 32 or c in "\\{}@<>`$#" or 0x7f <= ord(c) < 0xa0 for c in title):
        raise UsageError(f"new: --title is the chapter's title in plain words on one line, at most 120 characters "
                         f"and without \\ {{ }} @ < > ` $ # (Doxygen reads them as markup), not {title!r}")
    return title


class Needed(NamedTuple):
    structs: list[str]    # types of the signature no header declares, written by new as structs
    includes: list[str]   # lib headers the contract must include for the others (random.hpp for Rng)
    own: set[str]         # the signature's types the chapter declares, new structs included


def types_needed(root: Path, chapter_dir: Path, contract: Path, pending: "Pending", signature: Signature) -> Needed:
    """What the signature's types need: a type lib declares, its header in the contract; one the
    chapter declares, nothing; one nobody declares that is a whole type named like a struct
    (LayerNormGrads), the struct; any other is refused (lint's rule: scalebook.lint.remote_types)."""
    headers = sorted({*chapter_dir.glob("*.hpp"), *(p for p in pending if p.parent == chapter_dir and p.suffix == ".hpp")})
    chapter, lib = declared_types(headers, pending.text), declared_types(lib_headers(root))
    text = pending.text(contract)
    structs, includes, own = [], [], set()
    for type_ in [signature.returns, *(t for t, _ in signature.parameters)]:
        for name in type_names(type_):
            if name in chapter.where:
                own.add(name)
                continue
            if name in lib.where:
                header = lib.where[name][0].name
                if f'#include "scalebook/{header}"' not in text and header not in includes:
                    includes.append(header)
            elif bare_type(type_) == name and re.fullmatch(r"[A-Z][A-Za-z0-9]*", name):
                structs += [name] if name not in structs else []
                own.add(name)
            else:
                raise UsageError(f"new: --signature uses {name}, which neither {contract.relative_to(root)} nor lib "
                                 "declares: declare it in the contract first, or give it as a whole return or parameter "
                                 "type named like a struct (LayerNormGrads), which new writes with its "
                                 "SCALEBOOK_REMOTE_FIELDS line")
    return Needed(structs, includes, own)


REMOTE_BLOCK = ("\n// The structs above cross the grader's process boundary field by field (remote.def). Only the\n"
                "// grader's targets have scalebook/remote.hpp on their include path.\n"
                '#if __has_include("scalebook/remote.hpp")\n#include "scalebook/remote.hpp"\n{lines}#endif\n')


def contract_with(text: str, ch: str, needed: Needed, declaration: str, where: str) -> str:
    """The contract's TEXT with the lib headers it needs, the new structs and the declaration (before
    the namespace's end), and each struct's SCALEBOOK_REMOTE_FIELDS line."""
    for header in needed.includes:
        top = text[:text.index("namespace scalebook::")] if "namespace scalebook::" in text else text
        includes = list(re.finditer(r'^#include "scalebook/[^"]+"\n', top, re.M))
        at = includes[-1].end() if includes else text.index("\n", text.index("#pragma once")) + 1
        text = text[:at] + f'#include "scalebook/{header}"\n' + text[at:]
    structs = "".join(f"/// \\brief {TODO}: what a {name} holds.\n"
                      f"struct {name} {{\n"
                      f"  Matrix result;  ///< {TODO}: its data members, each documented, named in order by "
                      "SCALEBOOK_REMOTE_FIELDS below\n"
                      "};\n\n" for name in needed.structs)
    text = insert_before_last(text, f"}}  // namespace scalebook::{ch}", structs + declaration, where)
    if needed.structs:
        lines = "".join(f"SCALEBOOK_REMOTE_FIELDS(scalebook::{ch}::{name}, result);\n" for name in needed.structs)
        block = re.search(r'^#if __has_include\("scalebook/remote.hpp"\)|^#ifdef SCALEBOOK_REMOTE_FIELDS', text, re.M)
        end = re.search(r"^#endif", text[block.end():], re.M) if block else None
        if end:
            at = block.end() + end.start()
            text = text[:at] + lines + text[at:]
        else:
            text = text.rstrip("\n") + "\n" + REMOTE_BLOCK.format(lines=lines)
    return text


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
    return comment_title(re.sub(r"^Chapter \d+\s*[—-]\s*", "", title).strip() or chapter_dir.name)


def insert_before_last(text: str, marker: str, block: str, where: str) -> str:
    at = text.rfind(marker)
    if at < 0:
        raise UsageError(f"new: {where} has no line {marker.strip()!r} to write before; add it, then run new again")
    return text[:at] + block + text[at:]


def manifest_text(data: dict) -> str:
    """A manifest as the course's are written: a field a line, lists of names on their line, an
    exercise a line."""
    lines = []
    for key, value in data.items():
        if key == "exercises":
            entries = ",\n".join(f"    {json.dumps(e)}" for e in value)
            lines.append(f'  "exercises": [\n{entries}\n  ]' if value else '  "exercises": [\n  ]')
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


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
        text = manifest_text(data)
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
    contract_path = chapter_dir / chapter.contract
    needed = types_needed(root, chapter_dir, contract_path, pending, signature)
    written: list[Path] = []
    changed: list[Path] = []
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
    declaration = (f"/// \\brief Exercise {exercise}: {TODO} what {name} computes.\n"
                   + "".join(f"/// \\param {n} {TODO} what it is, its shape\n" for _, n in signature.parameters)
                   + f"/// \\throws ShapeError, ValueError {TODO} on which bad input\n"
                   + f"{signature.declaration()};\n\n")
    pending[contract_path] = contract_with(pending.text(contract_path), ch, needed, declaration,
                                           str(contract_path.relative_to(root)))
    # The first check: nothing passes it (the stub throws, the scaffold's reference returns {}) until
    # the author writes the value the contract gives.
    checks_path = chapter_dir / chapter.checks
    pending[checks_path] = insert_before_last(pending.text(checks_path), "}  // TEST_SUITE",
                                              first_check(ch, exercise, signature, needed.own),
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
            summary: str | None, title: str | None = None) -> tuple[list[Path], list[Path]]:
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
    title = check_title(title) if title is not None else words[:1].upper() + words[1:]
    about = comment_title(title)   # as the C++ files' header lines say it
    header = f"{topic.replace('-', '_')}.hpp"
    chapter_dir = root / "chapters" / folder
    written: list[Path] = []
    pending = Pending()
    manifest = {"number": number, "summary": summary or f"{TODO}: what the chapter covers, in one line.",
                "contract": header, "checks": "checks.cpp", "lesson": "lesson.cpp", "figures": [f"{ch}_first_look"],
                "tolerance": 1e-12, "bench": False, "exercises": []}
    files = {
        "chapter.json": manifest_text(manifest),
        "CMakeLists.txt": f"# Chapter {number:02d} — see lesson.md. Mechanics: cmake/Scalebook.cmake. One file per exercise, so that a\n"
                          "# student's edit recompiles only that exercise.\n"
                          "scalebook_add_chapter()  # from chapter.json: exercises, sources, points, figures, summary\n",
        header: f"// Chapter {number} contract — {about}.\n"
                f"// Students implement these in exercises/{folder}/, one file per exercise (the instructor's copy of\n"
                "// the workbook holds a reference implementation).\n"
                "#pragma once\n\n"
                '#include "scalebook/core.hpp"\n\n'
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
        "checks.cpp": f"// Chapter {number} checks — {about}.\n"
                      "//\n"
                      "// Every expected value is derived here from its formula, never copied from the reference's\n"
                      "// output. A failure names a known mistake only when the output is the one that mistake gives\n"
                      "// on the same input (suspect(), scalebook/testing.hpp).\n"
                      "#include <doctest/doctest.h>\n\n"
                      "#include <limits>\n\n"
                      f'#include "{header}"\n'
                      '#include "scalebook/testing.hpp"\n\n'
                      "using namespace scalebook;\n"
                      f"namespace {ch} = scalebook::{ch};\n\n"
                      f'TEST_SUITE("{folder}") {{\n\n'
                      "}  // TEST_SUITE\n",
        "lesson.cpp": f"// Chapter {number} lesson — {about}.\n"
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
        "lesson.md": f"Chapter {number} — {title} {{#{ch}}}\n"
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
