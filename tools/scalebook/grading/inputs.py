"""What each verdict depends on, as keys: so that a regrade reuses exactly the verdicts whose inputs
did not change (./workbook grade --compare), and the object cache shares exactly the compiles that
read the same bytes.

A verdict is a function of its inputs, and these keys cover all of them:

  compile key   an exercise file's object (grading/compile.py): the compiler (its version), the
                flags (grading/compile.py, in the kit's copy of this package), the headers the box
                sees (the kit's include/ and the chapter's own headers), the precompiled header's
                list, Eigen's headers, the sandbox's mode and the compile limits; and every byte of
                the submission's files of that chapter (a file may #include a sibling), by name.
  link key      a chapter's worker and its exercises' compile verdicts (grading/link.py): the compile
                key of every file, the worker's server and lib's archives it links, gold's version.
  build key     the two together for one submission's chapter: link fingerprint, chapter, and the
                names and bytes (sha256) of the submission's files of that chapter.
  verdict key   one check of one submission: the build key of its chapter, the run fingerprint (the
                check step and the box's first process, the no-fork filter, every limit, the sandbox's
                mode and bubblewrap's version, this package) and the check's identity below. Only a
                verdict that follows from these is kept under its key (grading/report.py: not a time
                limit, a crash, a step that did not finish; nothing of a chapter where a compile's time
                limit struck, of a submission whose budget did, or of one whose checks, then and now
                together, could have reached it).

A check's identity is what of the trusted checks binary can decide its verdict: its own test case's
text (TEST_CASE("name") to its closing brace), everything of the checks files outside the test cases
(helpers, includes, globals), every file those files' compiles read (ninja's dependency log: the
contract, lib's and the checks' helpers, doctest, Eigen, the standard library), the compile and link
commands, and every other input the binary is linked from (the proxies, lib's archives, doctest's
main), by their bytes. The other test cases' text is left out: a test case is a function of its own,
and grading already relies on a check giving the same verdict alone as with its chapter's others
(native/check.cpp runs a check alone where the chapter's run has no verdict for it). A check's
message never carries a source line (lib/testing's listener reports the expression and the message,
not __LINE__), so a test case that moves is the same check; where a checks file spells __LINE__,
__builtin_LINE, source_location or __FILE__, or a macro that a header of this tree defines with one of
them (lib's eigen_assert does, but it is expanded in Eigen's headers, whose lines no erratum moves),
the identity includes every test case's line; where one spells __COUNTER__ (whose value depends on the
test cases before), it is the binary's bytes, as it is wherever the files cannot be split or ninja's
log cannot be read: sound, and coarser (an erratum then reruns every check of that chapter).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

from ..course import check_names

LINE_TOKENS = re.compile(rb"__LINE__|__builtin_LINE|source_location|__FILE__")
COUNTER_TOKEN = re.compile(rb"__COUNTER__")


def digest(*parts: bytes | str) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        hasher.update(len(data).to_bytes(8, "little") + data)
    return hasher.hexdigest()


class Digests:
    """sha256 of files by content, each file read once: remembered by its device, inode, size and
    change time (a file rewritten gets a new change time), in a file beside the kit's build so that
    the next grading run reads only what changed (Eigen's and the standard library's headers, mostly)."""

    def __init__(self, store: Path | None = None):
        self.store = store
        self.known: dict[str, str] = {}
        if store is not None:
            try:
                self.known = json.loads(store.read_text())
            except (OSError, ValueError):
                self.known = {}
        self.changed = False

    def of(self, path: Path) -> str:
        info = path.stat()
        stamp = f"{path}\0{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_ctime_ns}"
        found = self.known.get(stamp)
        if found is None:
            found = self.known[stamp] = hashlib.sha256(path.read_bytes()).hexdigest()
            self.changed = True
        return found

    def save(self) -> None:
        if self.store is None or not self.changed:
            return
        try:
            temporary = self.store.with_name(f"{self.store.name}.{os.getpid()}.part")
            temporary.write_text(json.dumps(self.known))
            temporary.replace(self.store)
        except OSError:  # a kit this user may not write: the digests are made again next time
            pass


DIGESTS = Digests()


def files_digest(paths: list[Path], relative_to: Path | None = None, digests: Digests = DIGESTS) -> str:
    """Names and contents of PATHS (a name relative to RELATIVE_TO when given), in order."""
    hasher = hashlib.sha256()
    for path in paths:
        name = str(path.relative_to(relative_to)) if relative_to else str(path)
        hasher.update(f"{name}\0{digests.of(path)}\n".encode())
    return hasher.hexdigest()


def tree_digest(folder: Path, skip=lambda path: False, digests: Digests = DIGESTS) -> str:
    """Every file under FOLDER, by its path in it and its contents."""
    return files_digest(sorted(p for p in folder.rglob("*") if p.is_file() and not skip(p)), folder, digests)


# --- splitting a checks file into its test cases ---------------------------------------------------

class SplitError(ValueError):
    pass


def _skip_literal(text: str, at: int) -> int:
    """TEXT[AT] opens a comment, a string, a character or a raw string literal: the index after it;
    otherwise AT."""
    if text.startswith("//", at):
        end = text.find("\n", at)
        return len(text) if end < 0 else end
    if text.startswith("/*", at):
        end = text.find("*/", at + 2)
        if end < 0:
            raise SplitError("an unclosed comment")
        return end + 2
    raw = re.match(r'(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(', text[at:at + 24])
    if raw and (at == 0 or not (text[at - 1].isalnum() or text[at - 1] == "_")):
        close = text.find(f'){raw.group(1)}"', at + raw.end())
        if close < 0:
            raise SplitError("an unclosed raw string")
        return close + len(raw.group(1)) + 2
    if text[at] in "\"'":
        quote, index = text[at], at + 1
        while index < len(text) and text[index] != quote:
            if text[index] == "\n":
                raise SplitError("a literal that runs past its line")
            index += 2 if text[index] == "\\" else 1
        if index >= len(text):
            raise SplitError("an unclosed literal")
        return index + 1
    return at


def _matching(text: str, at: int, opening: str, closing: str) -> int:
    """The index after the bracket that closes TEXT[AT] (an OPENING), literals and comments skipped."""
    depth, index = 0, at
    while index < len(text):
        after = _skip_literal(text, index)
        if after != index:
            index = after
            continue
        if text[index] == opening:
            depth += 1
        elif text[index] == closing:
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    raise SplitError(f"no '{closing}' closes the '{opening}' at offset {at}")


def split_checks(text: str) -> tuple[str, list[tuple[str, str, int]]]:
    """A checks file's text as (its skeleton, [(name, test case text, first line)]): each test case
    from TEST_CASE( to its body's closing brace, and the skeleton the file with each test case
    replaced by a marker (identities_of drops the markers and the whitespace around them where no
    line counts). SplitError where the file cannot be split so."""
    cases: list[tuple[str, str, int]] = []
    pieces, last, index = [], 0, 0
    while index < len(text):
        after = _skip_literal(text, index)
        if after != index:
            index = after
            continue
        if text.startswith("TEST_CASE", index) and (index == 0 or not (text[index - 1].isalnum() or text[index - 1] == "_")) \
                and not (text[index + 9:index + 10].isalnum() or text[index + 9:index + 10] == "_"):
            if text[text.rfind("\n", 0, index) + 1:index].lstrip().startswith("#"):
                raise SplitError(f"TEST_CASE at offset {index} is part of a preprocessor directive")
            opening = index + 9
            while opening < len(text) and text[opening] in " \t\n":
                opening += 1
            if text[opening:opening + 1] != "(":
                raise SplitError(f"TEST_CASE at offset {index} is not followed by '('")
            closed = _matching(text, opening, "(", ")")
            name = re.match(r'\(\s*"([^"]+)"', text[opening:closed])
            if not name:
                raise SplitError(f"TEST_CASE at offset {index} does not start with its name")
            body = closed
            while body < len(text) and text[body] in " \t\n":
                body += 1
            if text[body:body + 1] != "{":
                raise SplitError(f"the test case '{name.group(1)}' has no body")
            end = _matching(text, body, "{", "}")
            cases.append((name.group(1), text[index:end], text.count("\n", 0, index) + 1))
            pieces.append(text[last:index])
            pieces.append("\0TEST_CASE\0")
            last = index = end
            continue
        index += 1
    pieces.append(text[last:])
    return "".join(pieces), cases


# --- the checks binary's inputs, from the kit's build ------------------------------------------------

def ninja(build_dir: Path, *args: str) -> str:
    done = subprocess.run(["ninja", "-C", str(build_dir), "-t", *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise SplitError(f"ninja -t {' '.join(args)}: {done.stderr.strip()[:300]}")
    return done.stdout


def link_inputs(build_dir: Path, binary: str) -> list[str]:
    """The explicit and implicit inputs of BINARY's link, as ninja -t query lists them."""
    inputs, inside = [], False
    for line in ninja(build_dir, "query", binary).splitlines():
        stripped = line.strip()
        if stripped.startswith("input:"):
            inside = True
        elif stripped.startswith("outputs:"):
            inside = False
        elif inside and stripped and not stripped.startswith("||"):
            inputs.append(stripped.lstrip("| ").strip())
    return inputs


def object_deps(build_dir: Path, obj: str) -> list[Path]:
    """Every file OBJ's compile read (ninja's dependency log), as paths."""
    found = []
    for line in ninja(build_dir, "deps", obj).splitlines()[1:]:
        if line.startswith(" ") and line.strip():
            path = Path(line.strip())
            found.append(path if path.is_absolute() else (build_dir / path).resolve())
    if not found:
        raise SplitError(f"ninja's log has no dependencies for {obj}")
    return found


def check_identities(build_dir: Path, binary: Path, chapter_dir: Path, files: list[str],
                     root: Path, digests: Digests = DIGESTS) -> tuple[dict[str, str], str]:
    """Check name -> identity for the checks binary BINARY (built in BUILD_DIR from the checks files
    FILES of CHAPTER_DIR), and how it was found: "test case", "test case and line" or, where the
    files cannot be split or the build's logs read, "binary" (every check's identity the binary's
    bytes)."""
    names = [name for file in files for name in check_names(chapter_dir / file)]
    try:
        return _identities(build_dir, binary, chapter_dir, files, root, names, digests)
    except (SplitError, OSError) as why:
        whole = digest("binary", binary.read_bytes())
        return {name: digest(whole, name) for name in names}, f"binary ({why})"


def _identities(build_dir: Path, binary: Path, chapter_dir: Path, files: list[str], root: Path,
                names: list[str], digests: Digests) -> tuple[dict[str, str], str]:
    relative = str(binary.resolve().relative_to(build_dir.resolve()))
    inputs = link_inputs(build_dir, relative)
    sources = [(chapter_dir / file).resolve() for file in files]
    objects = [i for i in inputs if any(i.endswith(f"/{file}.o") and "_objects.dir/" in i for file in files)]
    if len(objects) != len(files):
        raise SplitError(f"the link of {relative} does not show one object per checks file: {objects}")
    context = [f"link\0{ninja(build_dir, 'commands', relative).splitlines()[-1]}"]
    for item in inputs:
        if item not in objects:
            context.append(f"input\0{item}\0{digests.of(build_dir / item)}")
    texts, definitions = {}, {}
    for obj, source in zip(objects, sources):
        context.append(f"compile\0{ninja(build_dir, 'commands', obj).splitlines()[-1]}")
        for dep in object_deps(build_dir, obj):
            if dep == source:
                continue
            context.append(f"dep\0{dep}\0{digests.of(dep)}")
            if root in dep.parents:
                definitions.update(macro_definitions(dep.read_bytes()))
        texts[source] = source.read_text()
    identities, how = identities_of({source.name: text for source, text in texts.items()}, context, definitions)
    if sorted(identities) != sorted(names) or len(identities) != len(names):
        raise SplitError("the test cases found are not the checks registered")
    return identities, how


def identities_of(texts: dict[str, str], context: list[str], definitions: dict[bytes, bytes]) -> tuple[dict[str, str], str]:
    """Check name -> identity for the checks files TEXTS (file name -> text) compiled into one binary
    whose other inputs CONTEXT describes; DEFINITIONS: the macros the tree's headers define (a check
    that spells one using __LINE__ makes identities line by line). See the module's docstring."""
    spelled = "".join(texts.values()).encode()
    definitions = dict(definitions)
    for text in texts.values():
        definitions.update(macro_definitions(text.encode()))

    def spells(tokens: re.Pattern) -> bool:
        return tokens.search(spelled) is not None or any(
            re.search(rb"\b%s\b" % re.escape(name), spelled) for name in macros_using(definitions, tokens))

    if spells(COUNTER_TOKEN):
        raise SplitError("a checks file spells __COUNTER__, or a macro of this tree that does")
    with_lines = spells(LINE_TOKENS)
    split = {file: split_checks(text) for file, text in sorted(texts.items())}
    context = list(context)
    for file, (skeleton, cases) in split.items():
        if with_lines:  # every line as it is: each marker says where its test case starts and ends
            spans = iter(cases)
            skeleton = re.sub("\0TEST_CASE\0", lambda _: "\0TEST_CASE {2} {1}\0".format(
                *(lambda case: (case[0], case[1].count("\n"), case[2]))(next(spans))), skeleton)
        else:  # the code between test cases, each piece without the whitespace at its ends: a check
            # added or moved leaves it as it is (a test case never sits inside a literal or a directive)
            skeleton = "\n".join(piece.strip() for piece in skeleton.split("\0TEST_CASE\0") if piece.strip())
        context.append(f"skeleton\0{file}\0{skeleton}")
    shared = digest(*context)
    identities = {}
    for file, (_, cases) in split.items():
        for name, text, line in cases:
            if name in identities:
                raise SplitError(f"two test cases are named '{name}'")
            identities[name] = digest(shared, file, text, str(line) if with_lines else "")
    return identities, "test case and line" if with_lines else "test case"


def macro_definitions(header: bytes) -> dict[bytes, bytes]:
    """The macros HEADER defines: name -> replacement (continuation lines joined)."""
    return {m.group(1): m.group(2) for m in
            re.finditer(rb"^[ \t]*#[ \t]*define[ \t]+(\w+)((?:[^\n]*\\\n)*[^\n]*)", header, re.M)}


def macros_using(definitions: dict[bytes, bytes], tokens: re.Pattern) -> set[bytes]:
    """The macros of DEFINITIONS whose expansion spells one of TOKENS, directly or through another
    such macro."""
    found = {name for name, body in definitions.items() if tokens.search(body)}
    while True:
        more = {name for name, body in definitions.items() if name not in found
                and any(re.search(rb"\b%s\b" % re.escape(other), body) for other in found)}
        if not more:
            return found
        found |= more


# --- the keys --------------------------------------------------------------------------------------

def chapter_files(sources: dict[str, str], chapter: str) -> str:
    """The names and sha256 of a submission's files of CHAPTER (intake's SOURCES: path -> sha256)."""
    return "".join(f"{path}\t{sha}\n" for path, sha in sorted(sources.items()) if path.startswith(f"{chapter}/"))


def build_key(kit: dict, chapter: str, sources: dict[str, str]) -> str:
    return digest("build", kit["keys"]["link"][chapter], chapter, chapter_files(sources, chapter))


def verdict_key(kit: dict, check: dict, build: str) -> str:
    return digest("verdict", kit["keys"]["run"], build, check["identity"])


def settings_part(settings: dict, names: tuple[str, ...]) -> str:
    return json.dumps({name: settings[name] for name in names}, sort_keys=True)
