#!/usr/bin/env python3
"""Every function a chapter page's code calls is shown on that page or linked to its documentation.

Usage: check_helpers_shown.py HTML_DIR SOURCE_DIR

A chapter page (HTML_DIR/chNN.html) shows pieces of its lesson program (chapters/NN-*/lesson.cpp)
with \\snippet. For every call `name(` in the page's code fragments (not the lesson's output,
which sits in div.scalebook-output):

  - a function the lesson defines itself (a helper of lesson.cpp) must be defined in one of the
    page's code fragments: the reader cannot follow a link to it, so the page has to show it;
  - a function declared in a header, lib's (lib/include/scalebook/*.hpp) or a chapter's
    (chapters/*/*.hpp), must be a link, and into the page of the namespace the lesson calls it
    from: for `ch03::softmax_rows` the namespace the lesson's alias names; for an unqualified
    call the lesson's using-declaration, or those of the namespaces it opens that declare the name
    in a header it includes (Doxygen resolves a name declared twice by the order of its INPUT);
  - a method call (`rng.uniform()`) of a class those headers declare must be a link, or the class
    must be linked on the page (Doxygen links the method only when it can tell the object's type).

Standard library only (html.parser): the test needs no browser. Exits 1 and lists every unshown,
unlinked or mislinked call. The first rule is also ./workbook lint's (tools/scalebook/lint.py calls
unshown_helpers() on the page's \\snippet regions read from the source, in well under a second).
"""

from __future__ import annotations

import html.parser
import re
import sys
from pathlib import Path

CHAPTER_PAGE = re.compile(r"^ch(\d+)\.html$")
KEYWORDS = {"if", "for", "while", "switch", "return", "catch", "sizeof", "alignof", "decltype",
            "static_cast", "const_cast", "reinterpret_cast", "dynamic_cast", "operator", "main",
            "defined", "noexcept", "static_assert", "new", "delete", "throw"}
# Member names that std:: and Eigen types have too: `v.begin()` is no call into the workbook.
COMMON_MEMBERS = {"begin", "end", "size", "data", "rows", "cols", "row", "col", "at", "clear",
                  "push_back", "back", "front", "empty", "sum", "mean", "state", "matrix"}

TYPE = r"(?:[\w:]+(?:<[^;{}()]*?>)?(?:\s*[&*]+)?\s+)"
# A definition: return type(s), the name, a parameter list (one level of nested parentheses), then
# const / noexcept / override and the opening brace.
DEFINITION = re.compile(
    r"^[ \t]*(?:template\s*<[^;{}]*>\s*)?" + TYPE + r"+[&*]*(\w+)\s*\(((?:[^;{}()]|\([^;{}()]*\))*)\)"
    r"\s*(?:const\s*)?(?:noexcept\s*)?(?:override\s*)?\{", re.M)
# A declaration in a header: return type(s), the name, "(": the rest may span lines.
DECLARATION = re.compile(
    r"^([ \t]*)(?:template\s*<[^;{}]*>\s*)?(?:\[\[\w+\]\]\s*)?" + TYPE + r"+[&*]*(\w+)\s*\(", re.M)
CALL = re.compile(r"(?:(\.|->)|((?:\w+::)+))?\b(\w+)\s*\(")


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def definitions(code: str) -> set[str]:
    return {m.group(1) for m in DEFINITION.finditer(strip_comments(code)) if m.group(1) not in KEYWORDS}


class Headers:
    """What the headers declare: free functions with their namespaces, methods with their classes."""

    def __init__(self, headers: list[Path]) -> None:
        self.free: dict[str, set[tuple[str, Path]]] = {}  # name -> {(namespace, header)}
        self.methods: dict[str, set[str]] = {}             # name -> {class}
        for header in headers:
            text = strip_comments(header.read_text(encoding="utf-8"))
            text = re.sub(r"^[ \t]*#.*(?:\\\n.*)*", "", text, flags=re.M)  # preprocessor lines
            namespaces = [(m.start(), m.group(1)) for m in re.finditer(r"^namespace\s+([\w:]+)\s*\{", text, re.M)]
            classes = [(m.start(), m.group(1)) for m in re.finditer(r"^(?:class|struct)\s+(\w+)", text, re.M)]
            for m in DECLARATION.finditer(text):
                name = m.group(2)
                if name in KEYWORDS or name.isupper():
                    continue
                if m.group(1):  # indented: a member of the class around it
                    owner = [c for at, c in classes if at < m.start()]
                    if owner:
                        self.methods.setdefault(name, set()).add(owner[-1])
                else:
                    namespace = [n for at, n in namespaces if at < m.start()]
                    self.free.setdefault(name, set()).add((namespace[-1] if namespace else "", header.resolve()))


def included(source: Path, include_dirs: list[Path], seen: set[Path] | None = None) -> set[Path]:
    """The workbook headers a source file includes, directly or through other headers."""
    seen = set() if seen is None else seen
    for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', source.read_text(encoding="utf-8"), re.M):
        for folder in [source.parent] + include_dirs:
            header = (folder / name).resolve()
            if header.is_file():
                if header not in seen:
                    seen.add(header)
                    included(header, include_dirs, seen)
                break
    return seen


def namespace_aliases(code: str) -> dict[str, str]:
    """`namespace ch03 = scalebook::ch03;` and `using namespace scalebook;` of a lesson."""
    aliases = {"scalebook": "scalebook"}
    for alias, target in re.findall(r"namespace\s+(\w+)\s*=\s*([\w:]+)\s*;", code):
        aliases[alias] = target
    for target in re.findall(r"using\s+namespace\s+([\w:]+)\s*;", code):
        aliases.setdefault(target.split("::")[-1], target)
    return aliases


def namespace_page(namespace: str) -> str:
    """Doxygen's file name of a namespace's page: scalebook::ch03 -> namespacescalebook_1_1ch03."""
    return "namespace" + namespace.replace("_", "__").replace("::", "_1_1")


class Fragments(html.parser.HTMLParser):
    """The code fragments of a page: their text, and the links in it (start, end, href)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, str]] = []  # (tag, role): fragment, line, link, output or ""
        self.fragments: list[dict] = []
        self.link_start = 0
        self.href = ""

    def _role(self, role: str) -> bool:
        return any(r == role for _, r in self.stack)

    def handle_starttag(self, tag, attrs):
        if tag in ("br", "img", "hr", "meta", "link", "input"):
            return
        classes = (dict(attrs).get("class") or "").split()
        role = ""
        if "scalebook-output" in classes:
            role = "output"
        elif tag == "div" and "fragment" in classes and not self._role("output") and not self._role("fragment"):
            role = "fragment"
            self.fragments.append({"text": "", "links": []})
        elif tag == "div" and "line" in classes and self._role("fragment"):
            role = "line"  # a line of code; a fragment also holds the hidden tooltips of its links
            if self.fragments[-1]["text"]:
                self.fragments[-1]["text"] += "\n"
        elif tag == "a" and self._role("line") and not self._role("output"):
            role = "link"
            self.link_start = len(self.fragments[-1]["text"])
            self.href = dict(attrs).get("href") or ""
        self.stack.append((tag, role))

    def handle_endtag(self, tag):
        while self.stack:
            open_tag, role = self.stack.pop()
            if role == "link":
                self.fragments[-1]["links"].append((self.link_start, len(self.fragments[-1]["text"]), self.href))
            if open_tag == tag:
                break

    def handle_data(self, data):
        if self._role("line") and not self._role("output"):
            self.fragments[-1]["text"] += data


def blank_comments(code: str) -> str:
    """CODE with its // comments blanked, not removed: positions stay valid."""
    return re.sub(r"//[^\n]*", lambda m: " " * len(m.group(0)), code)


def unshown_helpers(fragments: list[str], lesson_code: str) -> list[tuple[int, int, str]]:
    """The calls in a page's code FRAGMENTS of a function the lesson (LESSON_CODE) defines itself
    that no fragment defines: (fragment, line in it, name), each once. The reader cannot follow a
    link to such a helper, so the page has to show it."""
    local = definitions(lesson_code)
    shown = set().union(*(definitions(f) for f in fragments))
    found = []
    for index, fragment in enumerate(fragments):
        text = blank_comments(fragment)
        defined_at = {m.start(1) for m in DEFINITION.finditer(text)}  # a definition is no call
        for call in CALL.finditer(text):
            qualifier, name = call.group(2), call.group(3)
            if name in local and not qualifier and name not in shown and name not in KEYWORDS \
                    and call.start(3) not in defined_at:
                line = text[: call.start(3)].count("\n") + 1
                if (index, line, name) not in found:
                    found.append((index, line, name))
    return found


def check_page(page: Path, lesson: Path, headers: Headers, include_dirs: list[Path]) -> list[str]:
    lesson_code = lesson.read_text(encoding="utf-8")
    local = definitions(lesson_code)
    aliases = namespace_aliases(lesson_code)
    # Where an unqualified name can come from: the namespaces the lesson opens (and the chapter's
    # and lib's, which the exercise stubs on the page sit in), among the headers it includes.
    visible = set(aliases.values())
    visible |= set(re.findall(r"^namespace\s+(scalebook::ch\d+)\s*\{", "\n".join(
        h.read_text(encoding="utf-8") for h in lesson.parent.glob("*.hpp")), re.M))
    declared_by_using = {name: ns for ns, name in re.findall(r"using\s+((?:\w+::)*\w+)::(\w+)\s*;", lesson_code)}
    reachable = included(lesson, include_dirs)
    parser = Fragments()
    parser.feed(page.read_text(encoding="utf-8"))
    linked_text = set()
    for fragment in parser.fragments:
        linked_text |= {fragment["text"][start:end].split("::")[-1] for start, end, _ in fragment["links"]}
    failures = [f"{page.name}: `{name}(` (code fragment line {line}) calls {lesson.parent.name}/lesson.cpp's {name}, "
                "which the page never shows: put its definition in a \\snippet region on the page"
                for _, line, name in unshown_helpers([f["text"] for f in parser.fragments], lesson_code)]
    for fragment in parser.fragments:
        text = blank_comments(fragment["text"])
        defined_at = {m.start(1) for m in DEFINITION.finditer(text)}  # a definition is no call
        for call in CALL.finditer(text):
            member, qualifier, name = call.group(1), call.group(2), call.group(3)
            if name in KEYWORDS or call.start(3) in defined_at:
                continue
            line = text[: call.start(3)].count("\n") + 1
            where = f"{page.name}: `{(qualifier or '') + name}(` (code fragment line {line})"
            if name in local and not qualifier:
                continue  # unshown_helpers' rule
            if member and (name not in headers.methods or name in COMMON_MEMBERS):
                continue
            if not member and name not in headers.free:
                continue
            links = [href for start, end, href in fragment["links"] if start <= call.start(3) < end]
            if member:
                # Doxygen links obj.method() only when it can tell obj's type; a link to the class
                # on the same page leads to the method's documentation as well.
                if not links and not headers.methods[name] & linked_text:
                    failures.append(f"{where} is a method of {' or '.join(sorted(headers.methods[name]))}, "
                                    "neither linked nor its class linked on the page (is its header in the book?)")
                continue
            if not links:
                failures.append(f"{where} is declared in a header but is no link to its documentation "
                                "(is the header in the book's INPUT, its file and its namespace documented?)")
                continue
            target = links[0].split("#")[0].removesuffix(".html")
            if qualifier:
                scope = qualifier[:-2].split("::")
                scope[0] = aliases.get(scope[0], scope[0])
                expected = {"::".join(scope)}
            elif name in declared_by_using:
                expected = {declared_by_using[name]}
            else:
                expected = {ns for ns, header in headers.free[name] if ns in visible and header in reachable}
            if expected and target not in {namespace_page(ns) for ns in expected}:
                failures.append(f"{where} links to {links[0]}, but the lesson calls "
                                f"{' or '.join(sorted(ns + '::' + name for ns in expected))}")
    return failures


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    html_dir, source_dir = Path(argv[1]), Path(argv[2])
    header_files = sorted((source_dir / "lib" / "include" / "scalebook").glob("*.hpp"))
    header_files += sorted((source_dir / "chapters").glob("*/*.hpp"))
    headers = Headers(header_files)
    include_dirs = [source_dir / "lib" / "include"]
    pages = sorted(p for p in html_dir.glob("ch*.html") if CHAPTER_PAGE.match(p.name))
    if not pages:
        print(f"check_helpers_shown: no chapter page (chNN.html) in {html_dir}; build the docs first",
              file=sys.stderr)
        return 1
    failures = []
    for page in pages:
        number = CHAPTER_PAGE.match(page.name).group(1)
        lessons = sorted((source_dir / "chapters").glob(f"{number}-*/lesson.cpp"))
        if not lessons:
            failures.append(f"{page.name}: no chapters/{number}-*/lesson.cpp")
            continue
        failures += check_page(page, lessons[0], headers, include_dirs)
    for failure in failures:
        print(failure)
    print(f"check_helpers_shown: {len(pages)} chapter pages, {len(failures)} unshown or unlinked calls")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
