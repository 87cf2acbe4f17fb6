"""Mutation testing of a chapter's checks (./workbook mutate): which one-token mutants they let through.

Mutation testing of a chapter's checks: small operator mutants of each reference solution, in
the spirit of mull and Stryker, and which of them the checks let through.

    ./workbook mutate CHAPTER [--build DIR] [--sample N] [--seed S] [--exercise ID] [--timeout S] [--list]
                      [--record LABEL] [--recheck LABEL]

Each mutant changes one token of one file of solutions/NN-topic/ (found with libclang's lexer,
python3-clang, never with regular expressions over the text): a comparison flipped or made
strict, + and - or * and / exchanged, an integer constant moved by one, a floating constant
nudged, a sign dropped, std::abs removed, min and max exchanged, && and || exchanged, true and
false exchanged; and, aimed at the blind spots of a class's code, a small or huge constant moved
tenfold, infinity made the largest finite double, a double narrowed to float and a 64-bit count to
int, a loop bound made one short, an equality made an ordering, stable_sort made sort and
lower_bound and upper_bound exchanged. The mutated file is compiled as the build compiles the
reference (with -D_GLIBCXX_ASSERTIONS and, unless the checks replace malloc, AddressSanitizer, so
that an index past a vector's or a matrix's end stops the check), linked with the
chapter's checks and the other reference files, and the checks run under the usual time limit
per check (tools/scalebook/loop/run_checks.py). A mutant that does not compile is stillborn; one that
fails a check is killed; one that passes every check survives. A survivor that computes the same
results as the reference (an equivalent mutant) is listed, with a one-line reason, in
chapters/NN-topic/bugzoo/equivalent.txt as

    FILE:LINE:COLUMN ORIGINAL -> MUTATED  # reason

and is reported as equivalent rather than as a survivor. With --record LABEL the run's figures
become the row LABEL of chapters/NN-topic/bugzoo/MUTANTS.md (other rows are kept), with its
survivors listed below the table. --recheck LABEL tests only the survivors that row lists (after
new checks were added: a mutant the checks killed stays killed) and, with --record, counts the row's
killed and equivalent mutants with the ones this run adds. The exit status is 1 when a survivor is
left, 0 otherwise, and 2 when the build folder is not configured or the chapter's checks are not built
(with the command that builds them). Run with Debian's /usr/bin/python3 (where python3-clang lives).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from scalebook.config import CHECK_TIMEOUT, ROOT
from scalebook.course import resolve_chapter
from scalebook.loop.run_checks import registered_checks, run_checks

try:
    import clang.cindex as cindex
except ImportError:  # pragma: no cover - named in the error below
    cindex = None

SWAPS = {"<": ["<="], "<=": ["<"], ">": [">="], ">=": [">"], "==": ["!=", "<=", ">="], "!=": ["=="],
         "+": ["-"], "-": ["+"], "*": ["/"], "/": ["*"], "&&": ["||"], "||": ["&&"],
         "+=": ["-="], "-=": ["+="], "*=": ["/="], "/=": ["*="],
         "true": ["false"], "false": ["true"], "min": ["max"], "max": ["min"]}
# The cursors of an operator token that is an operator (not a template's <> or a pointer's *).
OPERATORS = set()  # filled once clang.cindex is imported
# '<' after these, or '<' and '>' next to these, open and close template arguments.
TEMPLATES = {"vector", "pair", "array", "numeric_limits", "optional", "function", "Matrix", "Map"}
TYPES = {"double", "float", "int", "long", "bool", "char", "unsigned", "Index", "size_t", "int64_t",
         "uint64_t", "uint8_t", "Matrix", "Vector", "RowVector", "BoolMatrix", "std", "Eigen", "Fold"}
# Algorithms whose ties another one breaks differently (sort stability).
UNSTABLE = {"stable_sort": "sort", "lower_bound": "upper_bound", "upper_bound": "lower_bound"}
# Wide integer types a count is kept in, narrowed to int by the "narrowed" operator.
WIDE = {"Count", "int64_t"}
# Where a '-' is a sign, not a subtraction: after these tokens.
BEFORE_SIGN = {"(", "=", ",", "return", "{", "?", ":", "*", "/", "+", "-", "<", ">", "<=", ">=", "=="}


@dataclass
class Mutant:
    file: str       # file name in solutions/NN-topic/
    line: int
    column: int
    start: int      # byte offsets in the file
    end: int
    original: str
    mutated: str
    what: str

    @property
    def key(self) -> str:
        return f"{self.file}:{self.line}:{self.column} {self.original} -> {self.mutated or '(deleted)'}"


def mutants_of(path: Path, include_dirs: list[str]) -> list[Mutant]:
    """Every mutant of one file, from its tokens."""
    index = cindex.Index.create()
    unit = index.parse(str(path), args=["-x", "c++", "-std=c++20", *[f"-I{d}" for d in include_dirs]])
    tokens = [t for t in unit.get_tokens(extent=unit.cursor.extent)
              if t.location.file and Path(t.location.file.name) == path]
    out: list[Mutant] = []
    in_body = False
    # A for statement's condition: the tokens between the two ';' of its parentheses.
    loop_condition = set()
    for i, token in enumerate(tokens):
        if token.spelling == "for" and i + 1 < len(tokens) and tokens[i + 1].spelling == "(":
            depth, semicolons = 0, []
            for j in range(i + 1, len(tokens)):
                s = tokens[j].spelling
                depth += s == "("
                depth -= s == ")"
                if s == ";" and depth == 1:
                    semicolons.append(j)
                if depth == 0:
                    break
            if len(semicolons) == 2:
                loop_condition.update(range(semicolons[0] + 1, semicolons[1]))
    for i, token in enumerate(tokens):
        text, kind = token.spelling, token.kind
        if kind == cindex.TokenKind.COMMENT:
            continue
        if text == "{":
            in_body = True  # nothing before the first body: includes, namespaces, declarations
        if not in_body or kind == cindex.TokenKind.COMMENT:
            continue
        previous = tokens[i - 1].spelling if i else ""
        following = tokens[i + 1].spelling if i + 1 < len(tokens) else ""
        start, end = token.extent.start.offset, token.extent.end.offset

        def add(mutated: str, what: str) -> None:
            out.append(Mutant(path.name, token.location.line, token.location.column, start, end, text, mutated, what))

        if kind == cindex.TokenKind.PUNCTUATION and text in SWAPS:
            if token.cursor.kind not in OPERATORS:
                continue  # the parser says it is no operator here: a template's <>, a declarator's *
            if (text == "<" and (previous in TEMPLATES or previous.endswith("_cast") or following in TYPES)) or \
                    (text == ">" and previous in TYPES):
                continue  # a template argument list, not a comparison
            if text == "-" and previous in BEFORE_SIGN:
                add("", "sign dropped")
                continue
            for mutated in SWAPS[text]:
                add(mutated, "operator exchanged" if text != "==" or mutated == "!=" else "equality made an ordering")
            if text in ("<", "<=") and i in loop_condition:
                add(f"+ 1 {text}", "loop bound one short")
        elif kind == cindex.TokenKind.KEYWORD and text in ("true", "false"):
            add(SWAPS[text][0], "boolean flipped")
        elif kind == cindex.TokenKind.IDENTIFIER and text in ("min", "max") and previous == "::":
            add(SWAPS[text][0], "min and max exchanged")
        elif kind == cindex.TokenKind.IDENTIFIER and text in ("abs", "fabs") and following == "(":
            if previous == "::" and i >= 2 and tokens[i - 2].spelling == "std":
                start = tokens[i - 2].extent.start.offset
                out.append(Mutant(path.name, token.location.line, tokens[i - 2].location.column, start, end,
                                  "std::" + text, "", "abs removed"))
        elif kind == cindex.TokenKind.IDENTIFIER and text in UNSTABLE and previous == "::":
            add(UNSTABLE[text], "stable order of ties lost")
        elif kind == cindex.TokenKind.IDENTIFIER and text == "infinity" and previous == "::" and following == "(":
            add("max", "infinity made a finite sentinel")
        elif kind == cindex.TokenKind.KEYWORD and text == "double" and i + 1 < len(tokens) and \
                tokens[i + 1].kind == cindex.TokenKind.IDENTIFIER:
            add("float", "narrowed to float")
        elif kind == cindex.TokenKind.IDENTIFIER and text in WIDE and i + 1 < len(tokens) and \
                tokens[i + 1].kind == cindex.TokenKind.IDENTIFIER and following not in TYPES and \
                i + 2 < len(tokens) and tokens[i + 2].spelling in ("=", ";", ",", "{", "("):
            if previous == "::" and i >= 2:  # std::int64_t: the whole name becomes int
                start = tokens[i - 2].extent.start.offset
                out.append(Mutant(path.name, token.location.line, tokens[i - 2].location.column, start, end,
                                  tokens[i - 2].spelling + "::" + text, "int", "narrowed to int"))
            else:
                add("int", "narrowed to int")
        elif kind == cindex.TokenKind.LITERAL and text[:1].isdigit():
            number = text.rstrip("uUlLfF")
            if all(c.isdigit() for c in number):
                value = int(number)
                add(str(value + 1), "constant plus one")
                if value > 0:
                    add(str(value - 1), "constant minus one")
            else:
                try:
                    value = float(number)
                except ValueError:
                    continue
                add(repr(value * 1.01 if value else 1e-9), "constant nudged")
                if value and (abs(value) < 1e-3 or abs(value) >= 1e6):  # a tolerance or a sentinel
                    add(repr(value * 10), "boundary constant moved by 10")
                    add(repr(value / 10), "boundary constant moved by 10")
    return out


def equivalent_list(chapter_dir: Path) -> dict[str, str]:
    path = chapter_dir / "bugzoo" / "equivalent.txt"
    known: dict[str, str] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                key, _, reason = line.partition("  #")
                known[key.strip()] = reason.strip()
    return known


MUTANTS_HEADER = ("| run | mutants | stillborn | killed | equivalent | survivors |",
                  "|-----|--------:|----------:|-------:|-----------:|----------:|")


def recorded(chapter_dir: Path) -> tuple[dict[str, str], dict[str, list[str]]]:
    """The rows of chapters/NN-topic/bugzoo/MUTANTS.md by label, and the lines listing each row's survivors."""
    path = chapter_dir / "bugzoo" / "MUTANTS.md"
    rows: dict[str, str] = {}
    lists: dict[str, list[str]] = {}
    if path.exists():
        current = None
        for line in path.read_text().splitlines():
            cells = [c.strip() for c in line.strip("|").split("|")]
            if line.startswith("| ") and line not in MUTANTS_HEADER and len(cells) == 6:
                rows[cells[0]] = line
            elif line.startswith("Survivors of "):
                current = line[len("Survivors of "):].split(" (`")[0].rstrip(":")
                lists[current] = [line]
            elif current and line.startswith("- "):
                lists[current].append(line)
    return rows, lists


def recorded_row(chapter_dir: Path, label: str) -> tuple[list[int], list[str]]:
    """The figures of the row LABEL of MUTANTS.md and the keys of the survivors it lists."""
    rows, lists = recorded(chapter_dir)
    if label not in rows:
        raise SystemExit(f"mutate.py: {chapter_dir.name}/bugzoo/MUTANTS.md has no row {label!r} to recheck "
                         f"(its rows: {', '.join(rows) or 'none'})")
    figures = [int(c.strip()) for c in rows[label].strip().strip("|").split("|")[1:]]
    keys = [line.split("`")[1] for line in lists.get(label, [])[1:]]
    return figures, keys


def record_run(chapter_dir: Path, chapter_number: int, label: str, row: list[int], survivors: list[Mutant],
               command: str) -> Path:
    """Replace (or add) the row LABEL of chapters/NN-topic/bugzoo/MUTANTS.md with this run's figures."""
    path = chapter_dir / "bugzoo" / "MUTANTS.md"
    rows, lists = recorded(chapter_dir)
    rows[label] = "| " + " | ".join([label, *map(str, row)]) + " |"
    lists[label] = [f"Survivors of {label} (`{command}`):" if survivors else f"Survivors of {label} (`{command}`): none"]
    lists[label] += [f"- `{m.key}` ({m.what})" for m in survivors]
    text = [f"# Operator mutants of chapter {chapter_number}'s reference solutions", "",
            "Written by `./workbook mutate` with `--record`: each row is one run over the solutions' operator",
            "mutants. A stillborn mutant does not compile; an equivalent one is listed with its reason in",
            "`equivalent.txt`; a survivor passes every check and is a mistake the checks let through.", "",
            *MUTANTS_HEADER, *rows.values(), ""]
    for name in rows:
        if name in lists:
            text += [*lists[name], ""]
    path.write_text("\n".join(text))
    return path


def compile_command(build: Path, source: Path) -> tuple[list[str], str]:
    for entry in json.loads((build / "compile_commands.json").read_text()):
        if Path(entry["file"]) == source:
            return shlex.split(entry["command"]), entry["directory"]
    raise SystemExit(f"mutate.py: {source} is not in {build}/compile_commands.json: configure the reference build")


def link_command(build: Path, target: str) -> list[str]:
    out = subprocess.run(["ninja", "-C", str(build), "-t", "commands", target], capture_output=True, text=True,
                         check=True).stdout.strip().splitlines()[-1]
    words = shlex.split(out.replace(": && ", "").replace(" && :", ""))
    return words


def replaces_malloc(build: Path, link: list[str]) -> bool:
    """Whether an object the checks link defines malloc (chapter 7's allocation meter): then
    AddressSanitizer, which must own malloc, cannot run in that binary."""
    objects = [str(build / w) for w in link if w.endswith(".o")]
    symbols = subprocess.run(["nm", "--defined-only", *objects], capture_output=True, text=True).stdout
    return any(line.split()[-2:] == ["T", "malloc"] for line in symbols.splitlines() if line.strip())


def build_command(build: Path, target: str) -> str:
    """The command that configures (if need be) and builds TARGET in BUILD, as the student types it."""
    try:
        shown = str(build.relative_to(ROOT))
    except ValueError:
        shown = str(build)
    configure = ""
    if not (build / "build.ninja").exists():
        presets = {p["name"] for p in json.loads((ROOT / "CMakePresets.json").read_text())["configurePresets"]}
        # build/NAME of a preset is that preset's folder; elsewhere, the reference preset's build.
        configure = (f"cmake --preset {build.name} && " if build.parent == ROOT / "build" and build.name in presets
                     else f"cmake --preset reference -B {shlex.quote(shown)} && ")
    return f"{configure}cmake --build {shlex.quote(shown)} --target {target} -j2"


def unbuilt(build: Path, target: str) -> str:
    """Why BUILD cannot run TARGET's mutants (not configured, TARGET unknown, not built or out of
    date), or "" when it can."""
    if not (build / "build.ninja").exists() or not (build / "compile_commands.json").exists():
        return f"{build} is not a configured build"
    dry = subprocess.run(["ninja", "-C", str(build), "-n", target], capture_output=True, text=True)
    if dry.returncode != 0:
        return f"{build} has no target {target} (is it a build of the reference track?)"
    # The steps a build would run; CMake's check of its globbed folders (and the re-run it may start)
    # shows in every dry run, so it does not count.
    due = [line for line in dry.stdout.splitlines() if line.startswith("[")
           and "Re-checking globbed directories" not in line and "Re-running CMake" not in line]
    if due:
        return f"the checks {target} are not built, or older than their sources, in {build}"
    if not (build / "checks.tsv").exists():
        return f"{build} has no checks.tsv listing the checks"
    return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="./workbook mutate", description=__doc__.split("\n\n")[0])
    parser.add_argument("chapter", help="a chapter number (3) or folder name (03-attention-scaling)")
    parser.add_argument("--build", type=Path, default=ROOT / "build" / "reference",
                        help="a configured reference build whose chapter checks are built (default build/reference)")
    parser.add_argument("--sample", type=int, default=0, help="test N mutants drawn at random (default: all)")
    parser.add_argument("--seed", type=int, default=1, help="the draw's seed (default 1)")
    parser.add_argument("--exercise", help="only this exercise's file, e.g. 7.5")
    parser.add_argument("--timeout", type=float, default=CHECK_TIMEOUT,
                        help=f"seconds one check may run (default {CHECK_TIMEOUT:g}, as in ./workbook check)")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--record", metavar="LABEL",
                        help="write this run's figures as the row LABEL of chapters/NN-topic/bugzoo/MUTANTS.md")
    parser.add_argument("--recheck", metavar="LABEL",
                        help="test only the survivors listed for the row LABEL of MUTANTS.md")
    parser.add_argument("--verbose", action="store_true", help="show why a mutant did not compile or link, and what killed it")
    args = parser.parse_args(argv)
    if cindex is None:
        parser.error("python3-clang is missing: run with Debian's /usr/bin/python3 (apt-get install python3-clang)")
    OPERATORS.update({cindex.CursorKind.BINARY_OPERATOR, cindex.CursorKind.COMPOUND_ASSIGNMENT_OPERATOR,
                      cindex.CursorKind.UNARY_OPERATOR, cindex.CursorKind.CALL_EXPR,
                      cindex.CursorKind.CXX_BOOL_LITERAL_EXPR})
    chapter = resolve_chapter(args.chapter)
    chapter_dir = ROOT / "chapters" / chapter.folder
    solutions = ROOT / "solutions" / chapter.folder
    exercises = [args.exercise] if args.exercise else chapter.exercises
    sources = {e: solutions / chapter.source_of(e) for e in exercises}
    include_dirs = [str(chapter_dir), str(ROOT / "lib" / "include"), "/usr/include/eigen3"]
    mutants = [m for e in exercises for m in mutants_of(sources[e], include_dirs)]
    if args.sample and args.sample < len(mutants):
        mutants = sorted(random.Random(args.seed).sample(mutants, args.sample), key=lambda m: (m.file, m.start))
    base = None
    if args.recheck:
        base, keys = recorded_row(chapter_dir, args.recheck)
        missing = set(keys) - {m.key for m in mutants}
        if missing:
            raise SystemExit(f"mutate.py: the survivors {sorted(missing)} of {args.recheck!r} are no mutants of "
                             "the solutions any more: run every mutant again")
        mutants = [m for m in mutants if m.key in keys]
    if args.list:
        for m in mutants:
            print(f"{m.key}  ({m.what})")
        print(f"{len(mutants)} mutants")
        return 0

    build = args.build.resolve()
    why = unbuilt(build, f"{chapter.target}_checks")
    if why:  # one sentence and the command that fixes it, not a traceback
        print(f"mutate.py: {why}; build the chapter's checks first with: "
              f"{build_command(build, f'{chapter.target}_checks')}", file=sys.stderr)
        return 2
    link = link_command(build, f"{chapter.target}_checks")
    # The checks link the reference either as its archive or as its exercise objects themselves.
    library = next((w for w in link if w.endswith(f"lib{chapter.target}_reference.a")), None)
    reference_objects = {}
    for e in chapter.exercises:
        command, _ = compile_command(build, solutions / chapter.source_of(e))
        reference_objects[e] = str(build / command[command.index("-o") + 1])
    names = registered_checks(build, chapter.folder)
    # A mutant's file is compiled and linked with AddressSanitizer, so that an access past the end
    # of a matrix's data stops the check (as the asan preset would) instead of passing unseen.
    # Eigen assumes glibc's 16-byte aligned malloc only without the sanitizer, whose malloc is as
    # aligned: told so, the mutant's matrices are freed the same way as the other objects'.
    sanitize = [] if replaces_malloc(build, link) else ["-fsanitize=address", "-DEIGEN_MALLOC_ALREADY_ALIGNED=1"]
    asan_env = {**os.environ, "ASAN_OPTIONS": "detect_leaks=0"}
    known = equivalent_list(chapter_dir)
    killed, survivors, equivalent, stillborn = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="mutate-") as scratch:
        work = Path(scratch)

        def try_source(exercise: str, text: bytes, run: str) -> tuple[str, str, list]:
            """Compiles TEXT as EXERCISE's file, as its mutants are, links the checks with it and
            runs them: ("compile" or "link", the error, []) or ("ran", "", the failing results)."""
            source = work / sources[exercise].name
            source.write_bytes(text)
            command, directory = compile_command(build, sources[exercise])
            obj = work / "mutant.o"
            command = [w if w != str(sources[exercise]) else str(source) for w in command]
            command[command.index("-o") + 1] = str(obj)
            # An index past a std::vector's end stops the check (as the asan preset would) instead
            # of reading whatever lies there: ABI-compatible with the reference's other objects.
            command[command.index("-o"):command.index("-o")] = ["-D_GLIBCXX_ASSERTIONS", *sanitize]
            compiled = subprocess.run(command, cwd=directory, capture_output=True, text=True, timeout=600)
            if compiled.returncode != 0:
                return "compile", compiled.stderr[-2000:], []
            objects = [str(obj) if e == exercise else o for e, o in reference_objects.items()]
            binary = work / "checks"
            linked = [w for w in link]
            if library is not None:
                at = linked.index(library)
                linked[at:at + 1] = objects
            else:  # swap the mutated file's object for the reference's, wherever the link names it
                reference = reference_objects[exercise]
                linked = [str(obj) if w == reference or str(build / w) == reference else w for w in linked]
                if str(obj) not in linked:
                    raise SystemExit(f"the link of {chapter.target}_checks names neither lib{chapter.target}_reference.a "
                                     f"nor {reference}: ./workbook mutate cannot place a mutant in it")
            linked[linked.index("-o") + 1] = str(binary)
            linked += sanitize
            link_run = subprocess.run(linked, cwd=build, capture_output=True, text=True)
            if link_run.returncode != 0:
                return "link", link_run.stderr[-2000:], []
            results = run_checks(binary, names, work / run, args.timeout, env=asan_env)
            return "ran", "", [r for r in results.values() if r.status != "passed"]

        # The control: each file of the run, unchanged but built as its mutants are, passes every
        # check; otherwise the harness, not a mutant, would be what fails them.
        for exercise in sorted({next(e for e in exercises if sources[e].name == m.file) for m in mutants}):
            step, error, failing = try_source(exercise, sources[exercise].read_bytes(), f"control-{exercise}")
            if step != "ran" or failing:
                raise SystemExit(f"mutate.py: the reference {sources[exercise].name}, built as its mutants are "
                                 f"({' '.join(['-D_GLIBCXX_ASSERTIONS', *sanitize])}), "
                                 + (f"does not {step}: {error}" if step != "ran" else
                                    f"fails {failing[0].name!r}: {failing[0].message[:500]}"))
        for number, m in enumerate(mutants, 1):
            exercise = next(e for e in exercises if sources[e].name == m.file)
            text = sources[exercise].read_bytes()
            step, error, failing = try_source(exercise, text[:m.start] + m.mutated.encode() + text[m.end:],
                                              f"run{number}")
            if step != "ran":
                stillborn.append(m)
                print(f"[{number}/{len(mutants)}] {m.key}: does not {step}" + (f"\n{error}" if args.verbose else ""),
                      flush=True)
                continue
            if failing:
                killed.append(m)
            elif m.key in known:
                equivalent.append(m)
            else:
                survivors.append(m)
            print(f"[{number}/{len(mutants)}] {m.key}: "
                  f"{'killed by ' + repr(failing[0].name) if failing else 'equivalent' if m.key in known else 'SURVIVED'}"
                  + (f" ({failing[0].status}: {failing[0].message[:300]})" if failing and args.verbose else ""),
                  flush=True)
    print(f"chapter {chapter.number}: {len(mutants)} mutants, {len(killed)} killed, {len(survivors)} survived, "
          f"{len(equivalent)} equivalent, {len(stillborn)} did not compile")
    for m in survivors:
        print(f"  survivor: {m.key}  ({m.what})")
    if args.record:
        command = "./workbook mutate " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:])
                                                if a not in (args.record, "--record"))
        row = [len(mutants), len(stillborn), len(killed), len(equivalent), len(survivors)]
        if base is not None:  # the recheck's mutants are the base row's survivors
            row = [base[0], base[1] + len(stillborn), base[2] + len(killed), base[3] + len(equivalent), len(survivors)]
        print(f"recorded in {record_run(chapter_dir, chapter.number, args.record, row, survivors, command).relative_to(ROOT)}")
    return 1 if survivors else 0
