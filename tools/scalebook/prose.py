"""The numbers of a lesson page: filled in from the lesson's run, and none typed by hand.

A chapter's page (chapters/NN-topic/lesson.md) states numbers of two kinds, and writes each so that
it cannot go stale:

  {{name}}               a number about the lesson's run: the lesson gives it with
                         Lesson::value("name", x, "%.3g") (scalebook/lesson.hpp), which prints it in
                         its output's "page-numbers" section, and the docs build puts that text here
                         (fill). A page naming a value its lesson did not give fails the docs build.
  {{TEXT from SOURCE}}   a fact from a source, shown as TEXT: SOURCE is a file of the chapter or of
                         the repository (checks.cpp, scaling_laws.hpp, data/README.md), and then every
                         number of TEXT must occur in that file; or words of the page's References
                         section ("Hoffmann et al."), whose entry gives the citation.

check() finds every other number in the page's prose and reports it: a number typed by hand goes
stale the day the run changes (a 709 made 610 passes every test otherwise). Not reported, because they
are not results: exercise ids of the course (6.2); a number after a word that refers to a part of a
text or a program (chapter 2, section 4.3, eq. 4, table 2, version 1.13, exercises 1.1 to 1.3); a
version after a name (Keras 3.3, PyTorch 2.5, Doxygen 1.9.4); a year (1950 to 2035) in a citation
((2022), 2nd ed. 2021, "Rubinfeld, 1978)"); 0 and 1; in a formula, one-digit numbers, integer exponents and indices and
the base 10 of a power (the formula's own constants). Code (`...`, fenced and indented blocks), Doxygen commands
(\\snippet, \\include, an \\image's file), anchors, links' targets and the References section are not
prose.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import NamedTuple

PAGE = "lesson.md"
SECTION = "page-numbers"  # the lesson output's section of named values (lib/src/lesson.cpp)

PLACEHOLDER = re.compile(r"\{\{([^{}\n]*)\}\}")  # no brace inside: LaTeX's {...}} is no placeholder
NAME = re.compile(r"[a-z][a-z0-9_]*")
SOURCED = re.compile(r"(?P<text>.*?[0-9].*?) from (?P<source>\S.*)")
NUMBER = re.compile(r"(?<![\w.])[0-9]+(?:\.[0-9]+)*(?:[eE][-+]?[0-9]+)?(?![\w])")
# Lines that hold no prose: Doxygen's commands (an \image keeps its caption, checked below).
COMMAND = re.compile(r"^\s*[\\@](snippet|include|dontinclude|skip|skipline|until|line|if|ifnot|else|elseif|endif|"
                     r"tableofcontents|htmlonly|endhtmlonly|latexonly|endlatexonly|cond|endcond|page|subpage|"
                     r"section|subsection|anchor)\b")
IMAGE = re.compile(r'^\s*[\\@]image\s+\S+\s+\S+\s*(?:"(?P<caption>[^"]*)")?')
# Words after which a number names a part of a text or a program, not a result.
REFERRING = {"chapter", "chapters", "section", "sections", "§", "sec.", "eq.", "eqs.", "equation", "equations",
             "table", "tables", "figure", "figures", "fig.", "algorithm", "algorithms", "footnote", "footnotes",
             "approach", "approaches", "appendix", "line", "lines", "page", "pages", "p.", "pp.", "version",
             "versions", "v", "listing", "exercise", "exercises", "release", "issue", "pr", "step", "steps", "part",
             "ed.", "edition", "bug", "bugs", "head"}
JOINING = {"and", "or", "to", "through", "–", "-", ",", "&"}
STRIPPED = [
    re.compile(r"`[^`]*`"),                          # code spans
    re.compile(r"\{#[^}]*\}"),                       # anchors
    re.compile(r"[\\@](ref|subpage)\s+\S+(\s+\"[^\"]*\")?"),
    re.compile(r"\]\([^)]*\)"),                      # a link's target
    re.compile(r"<[^>]*>"),                          # HTML tags
    re.compile(r"https?://\S+"),
    re.compile(r"\b(arXiv|doi|DOI|ISBN):\s*\S+"),
    re.compile(r"(?<![\w.])#[0-9]+"),                # issue and pull-request numbers
]
MATH = re.compile(r"\\f\$(.*?)\\f\$|\\f\[(.*?)\\f\]")


class Problem(NamedTuple):
    file: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


class ProseError(Exception):
    """A page's numbers cannot be filled in; the message names the page, the lines and the names."""


def values_of(output: str) -> dict[str, str]:
    """The named values of a lesson's output (its "page-numbers" section: `name = text` lines)."""
    values: dict[str, str] = {}
    inside = False
    for line in output.splitlines():
        if line == f"== [{SECTION}] ==":
            inside = True
        elif line == f"-- [{SECTION}] --":
            inside = False
        elif inside and " = " in line:
            name, text = line.split(" = ", 1)
            values[name] = text
    return values


def fill(text: str, values: dict[str, str], page: str = PAGE) -> str:
    """TEXT with each {{name}} replaced by the lesson's value and each {{TEXT from SOURCE}} by TEXT.
    Raises ProseError naming every placeholder that has no value or is malformed, with its line."""
    missing: list[str] = []

    def replace(match: re.Match, number: int) -> str:
        inner = match.group(1).strip()
        if NAME.fullmatch(inner):
            if inner in values:
                return values[inner]
            missing.append(f"{page}:{number}: {{{{{inner}}}}}: the lesson gave no value named {inner}")
            return match.group(0)
        sourced = SOURCED.fullmatch(inner)
        if sourced:
            return sourced.group("text")
        missing.append(f"{page}:{number}: {match.group(0)} is neither {{{{name}}}} nor {{{{TEXT from SOURCE}}}}")
        return match.group(0)

    lines = [PLACEHOLDER.sub(lambda m, n=n: replace(m, n), line) for n, line in enumerate(text.split("\n"), 1)]
    if missing:
        given = ", ".join(sorted(values)) or f"none (its output has no {SECTION} section)"
        raise ProseError("the page's numbers cannot all be filled in from its lesson's run:\n  " + "\n  ".join(missing)
                         + f"\n(the lesson gave: {given}; a lesson names a number with Lesson::value)")
    return "\n".join(lines)


def exercise_ids(chapter_folder: Path) -> set[str]:
    """The course's exercise ids: every manifest beside the chapter's (chapters/*/chapter.json)."""
    from .course import read_manifest  # the one manifest parser
    ids: set[str] = set()
    for manifest in chapter_folder.parent.glob("*/chapter.json"):
        try:
            ids.update(read_manifest(manifest.parent).exercises)
        except (ValueError, KeyError):
            continue  # a broken manifest is the manifest check's to report
    return ids


def references_of(lines: list[str]) -> str:
    """The text of the page's References section (a `## References` heading to the next heading)."""
    start = next((k for k, line in enumerate(lines) if re.match(r"^#+\s*References\b", line)), None)
    if start is None:
        return ""
    end = next((k for k in range(start + 1, len(lines)) if re.match(r"^#{1,2}\s", lines[k])), len(lines))
    return "\n".join(lines[start + 1:end])


def source_problem(text: str, source: str, folder: Path, references: str) -> str | None:
    """Why {{TEXT from SOURCE}} is not a checkable citation, or None when it is."""
    for base in (folder, folder.parent.parent):
        path = base / source
        if path.is_file():
            held = {float(n) for n in NUMBER.findall(path.read_text(errors="replace")) if is_number(n)}
            absent = [n for n in NUMBER.findall(text) if not is_number(n) or float(n) not in held]
            if absent:
                return f"{{{{{text} from {source}}}}}: {', '.join(absent)} does not occur in {source}"
            return None
    if source in references:
        return None
    return (f"{{{{{text} from {source}}}}}: \"{source}\" is neither a file of the chapter or the repository "
            f"nor words of the page's References section")


def is_number(token: str) -> bool:
    try:
        float(token)
        return True
    except ValueError:  # 3.2.2
        return False


def referred(before: str) -> bool:
    """Whether the text BEFORE a number ends with a referring word, perhaps across a list of numbers
    ("chapters 1 and 2", "sections 3.2.2 and 3.2.3")."""
    words = re.findall(r"[\w.§]+|[–,&-]", before.lower())
    while words:
        word = words.pop()
        if word in REFERRING:
            return True
        if word in JOINING or NUMBER.fullmatch(word) or (word.endswith(".") and NUMBER.fullmatch(word[:-1])):
            continue
        return False
    return False


def excused_in_text(token: str, before: str, after: str, ids: set[str]) -> bool:
    if token in ("0", "1") or token in ids:
        return True
    if referred(before):
        return True
    if re.search(r"[A-Z][\w]*-$", before):
        return True  # part of a name: GPT-2, FlashAttention-2 (not width-64)
    previous = re.search(r"(?<![\w.])([A-Z][\w+]*)\s+$", before)
    if previous and not re.search(r"[eE]", token) and not re.search(r"[.!?]\s+[A-Z][\w+]*\s+$|^\s*[A-Z][\w+]*\s+$", before):
        return True  # a version after a name, not a sentence's first word: Keras 3.3, Debian 12
    if token.count(".") >= 2:
        return True  # 3.2.2, 1.9.4: a section or a version, never a measured number
    if re.fullmatch(r"[0-9]{4}", token) and 1950 <= int(token) <= 2035:
        if before.rstrip().endswith(("(", ",", "ed.", "al.")) and (not after.strip() or after.lstrip()[0] in "),;:."):
            return True  # a year in a citation: (2022), "Rubinfeld, 1978)", 2nd ed. 2021, et al., 2016:
    return False


def excused_in_math(token: str, before: str, after: str) -> bool:
    if re.fullmatch(r"[0-9]", token):
        return True
    if re.fullmatch(r"[0-9]+", token) and re.search(r"[\^_]\{?-?$", before):
        return True  # an integer exponent or index: 10^{18}, 2^{-53}, x_{12}
    if token == "10" and after.startswith("^"):
        return True
    return False


def check(chapter_folder: Path) -> list[Problem]:
    """The problems of the numbers of CHAPTER_FOLDER's lesson page: each number typed by hand in its
    prose, each malformed placeholder, each {{TEXT from SOURCE}} whose source does not hold it."""
    page = chapter_folder / PAGE
    if not page.is_file():
        return [Problem(page, 0, f"the chapter has no {PAGE}")]
    lines = page.read_text(errors="replace").split("\n")
    references = references_of(lines)
    ids = exercise_ids(chapter_folder)
    problems: list[Problem] = []

    def report(number: int, message: str) -> None:
        problems.append(Problem(page, number, message))

    in_fence = in_references = in_display = in_indented = False
    previous = ""
    for number, line in enumerate(lines, 1):
        # An indented code block: four spaces or a tab, after a blank line or more of the block.
        in_indented = bool(re.match(r"^( {4}|\t)", line)) and (in_indented or not previous.strip()) and not in_display
        previous = line
        if re.match(r"^\s*(```|~~~)", line):
            in_fence = not in_fence
            continue
        if in_fence or in_indented:
            continue
        if re.match(r"^#{1,2}\s", line):
            in_references = bool(re.match(r"^#+\s*References\b", line))
        if in_references:
            continue
        if COMMAND.match(line):
            continue
        image = IMAGE.match(line)
        if image:
            line = image.group("caption") or ""
        # A list item's number or bullet: at a paragraph's start or after another item (a wrapped
        # sentence may begin with a number and a full stop: that one is prose).
        if not lines[number - 2].strip() or number == 1 or re.match(r"^\s*([0-9]+\.|[-*+])\s|^\s{2,}", lines[number - 2]):
            line = re.sub(r"^\s*([0-9]+\.|[-*+])\s", " ", line)
        # Placeholders: checked, then left out of the prose.
        if "{{" in PLACEHOLDER.sub("", line):
            report(number, "a {{ that opens no placeholder: a placeholder is {{name}} or {{TEXT from SOURCE}}, "
                           "without braces inside (write LaTeX's {{ as { {)")
        for match in PLACEHOLDER.finditer(line):
            inner = match.group(1).strip()
            sourced = SOURCED.fullmatch(inner)
            if sourced:
                why = source_problem(sourced.group("text"), sourced.group("source"), chapter_folder, references)
                if why:
                    report(number, why)
            elif not NAME.fullmatch(inner):
                report(number, f"{match.group(0)}: a placeholder is {{{{name}}}} (lower-case letters, digits and _), "
                               "a value the lesson gives, or {{TEXT from SOURCE}}")
        line = PLACEHOLDER.sub(" ¤ ", line)
        for pattern in STRIPPED:
            line = pattern.sub(" ", line)
        # Split into text and formulas: inline \f$...\f$, display \f[...\f] (which may span lines).
        pieces: list[tuple[str, bool]] = []
        rest = line
        if in_display:
            end = rest.find("\\f]")
            if end < 0:
                pieces.append((rest, True))
                rest = ""
            else:
                pieces.append((rest[:end], True))
                rest = rest[end + 3:]
                in_display = False
        while rest:
            match = MATH.search(rest)
            opening = rest.find("\\f[")
            if match is None and opening >= 0:
                pieces.append((rest[:opening], False))
                pieces.append((rest[opening + 3:], True))
                in_display = True
                break
            if match is None:
                pieces.append((rest, False))
                break
            pieces.append((rest[:match.start()], False))
            pieces.append((match.group(1) if match.group(1) is not None else match.group(2), True))
            rest = rest[match.end():]
        for text, math in pieces:
            for found in NUMBER.finditer(text):
                token, before, after = found.group(0), text[:found.start()], text[found.end():]
                if not before.strip() and number > 1:
                    before = lines[number - 2] + " "  # a sentence wrapped before the number
                if math and excused_in_math(token, before, after):
                    continue
                if not math and excused_in_text(token, before, after, ids):
                    continue
                report(number, f"{token} is typed by hand: a number about the run is a value the lesson gives "
                               f"(Lesson::value, written {{{{name}}}} here); a fact from a source is written "
                               f"{{{{{token} from SOURCE}}}}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m scalebook.prose", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    filling = commands.add_parser("fill", help="write PAGE with its numbers filled in from a lesson's OUTPUT")
    filling.add_argument("page", type=Path)
    filling.add_argument("output", type=Path, help="the lesson's output (lesson.out)")
    filling.add_argument("filled", type=Path, help="where to write the filled page")
    checking = commands.add_parser("check", help="report the numbers typed by hand in chapters' pages")
    checking.add_argument("folders", type=Path, nargs="+", metavar="CHAPTER_FOLDER")
    args = parser.parse_args(argv)
    if args.command == "fill":
        output = args.output.read_text(errors="replace") if args.output.is_file() else ""
        try:
            filled = fill(args.page.read_text(), values_of(output), str(args.page))
        except ProseError as error:
            print(f"prose: {error}", file=sys.stderr)
            return 1
        args.filled.parent.mkdir(parents=True, exist_ok=True)
        temporary = args.filled.with_name(args.filled.name + ".tmp")
        temporary.write_text(filled)
        temporary.replace(args.filled)
        return 0
    problems = [problem for folder in args.folders for problem in check(folder)]
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
