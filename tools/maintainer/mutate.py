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
from dataclasses import dataclass, field
from pathlib import Path

from scalebook.config import CHECK_TIMEOUT, ROOT
from scalebook.course import resolve_chapter
from scalebook.loop.run_checks import registered_checks, run_checks

from .mutants import OPERATORS, Mutant, cindex, mutants_of
from .records import equivalent_list, record_run, recorded_row

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


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    """The command line, with python3-clang's operator kinds loaded (or the error that names it)."""
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
    return args


def select_mutants(args: argparse.Namespace, chapter_dir: Path, sources: dict[str, Path]
                   ) -> tuple[list[Mutant], list[int] | None]:
    """The mutants to try (every one of SOURCES', a --sample of them, or a --recheck row's
    survivors) and the figures of the row --recheck starts from (None without --recheck)."""
    include_dirs = [str(chapter_dir), str(ROOT / "lib" / "include"), "/usr/include/eigen3"]
    mutants = [m for path in sources.values() for m in mutants_of(path, include_dirs)]
    if args.sample and args.sample < len(mutants):
        mutants = sorted(random.Random(args.seed).sample(mutants, args.sample), key=lambda m: (m.file, m.start))
    if not args.recheck:
        return mutants, None
    base, keys = recorded_row(chapter_dir, args.recheck)
    missing = set(keys) - {m.key for m in mutants}
    if missing:
        raise SystemExit(f"mutate.py: the survivors {sorted(missing)} of {args.recheck!r} are no mutants of "
                         "the solutions any more: run every mutant again")
    return [m for m in mutants if m.key in keys], base


@dataclass
class Rig:
    """What turns a mutated file into a checks binary in BUILD: the link of the chapter's checks,
    where the reference's exercise objects sit in it, and the checks to run."""
    build: Path
    target: str                        # chNN
    link: list[str]
    library: str | None                # libchNN_reference.a, when the link names the archive
    reference_objects: dict[str, str]  # exercise id -> its reference object
    names: list[str]                   # the registered checks, in order
    sanitize: list[str]                # AddressSanitizer's options, unless the checks own malloc
    env: dict[str, str]                # the checks' environment


def rig_of(build: Path, chapter, solutions: Path) -> Rig:
    link = link_command(build, f"{chapter.target}_checks")
    # The checks link the reference either as its archive or as its exercise objects themselves.
    library = next((w for w in link if w.endswith(f"lib{chapter.target}_reference.a")), None)
    reference_objects = {}
    for e in chapter.exercises:
        command, _ = compile_command(build, solutions / chapter.source_of(e))
        reference_objects[e] = str(build / command[command.index("-o") + 1])
    # A mutant's file is compiled and linked with AddressSanitizer, so that an access past the end
    # of a matrix's data stops the check (as the asan preset would) instead of passing unseen.
    # Eigen assumes glibc's 16-byte aligned malloc only without the sanitizer, whose malloc is as
    # aligned: told so, the mutant's matrices are freed the same way as the other objects'.
    sanitize = [] if replaces_malloc(build, link) else ["-fsanitize=address", "-DEIGEN_MALLOC_ALREADY_ALIGNED=1"]
    return Rig(build, chapter.target, link, library, reference_objects, registered_checks(build, chapter.folder),
               sanitize, {**os.environ, "ASAN_OPTIONS": "detect_leaks=0"})


def link_with(rig: Rig, exercise: str, obj: Path, binary: Path) -> list[str]:
    """The checks' link with OBJ in place of EXERCISE's reference object, writing BINARY."""
    linked = list(rig.link)
    if rig.library is not None:
        at = linked.index(rig.library)
        linked[at:at + 1] = [str(obj) if e == exercise else o for e, o in rig.reference_objects.items()]
    else:  # swap the mutated file's object for the reference's, wherever the link names it
        reference = rig.reference_objects[exercise]
        linked = [str(obj) if w == reference or str(rig.build / w) == reference else w for w in linked]
        if str(obj) not in linked:
            raise SystemExit(f"the link of {rig.target}_checks names neither lib{rig.target}_reference.a "
                             f"nor {reference}: ./workbook mutate cannot place a mutant in it")
    linked[linked.index("-o") + 1] = str(binary)
    return linked + rig.sanitize


def try_source(rig: Rig, exercise: str, source: Path, text: bytes, work: Path, run: str,
               timeout: float) -> tuple[str, str, list]:
    """Compiles TEXT as EXERCISE's reference file SOURCE, as the build compiles the reference and
    as every mutant is, links the checks with it and runs them: ("compile" or "link", the error,
    []) or ("ran", "", the checks that did not pass)."""
    mutated_source = work / source.name
    mutated_source.write_bytes(text)
    command, directory = compile_command(rig.build, source)
    obj = work / "mutant.o"
    command = [w if w != str(source) else str(mutated_source) for w in command]
    command[command.index("-o") + 1] = str(obj)
    # An index past a std::vector's end stops the check (as the asan preset would) instead of
    # reading whatever lies there: ABI-compatible with the reference's other objects.
    command[command.index("-o"):command.index("-o")] = ["-D_GLIBCXX_ASSERTIONS", *rig.sanitize]
    compiled = subprocess.run(command, cwd=directory, capture_output=True, text=True, timeout=600)
    if compiled.returncode != 0:
        return "compile", compiled.stderr[-2000:], []
    linked = subprocess.run(link_with(rig, exercise, obj, work / "checks"), cwd=rig.build, capture_output=True,
                            text=True)
    if linked.returncode != 0:
        return "link", linked.stderr[-2000:], []
    results = run_checks(work / "checks", rig.names, work / run, timeout, env=rig.env)
    return "ran", "", [r for r in results.values() if r.status != "passed"]


def control(rig: Rig, exercises: list[str], sources: dict[str, Path], work: Path, timeout: float) -> None:
    """Each file of the run, unchanged but built as its mutants are, passes every check; otherwise
    the harness, not a mutant, would be what fails them (SystemExit saying how)."""
    for exercise in exercises:
        source = sources[exercise]
        step, error, failing = try_source(rig, exercise, source, source.read_bytes(), work, f"control-{exercise}",
                                          timeout)
        if step != "ran" or failing:
            raise SystemExit(f"mutate.py: the reference {source.name}, built as its mutants are "
                             f"({' '.join(['-D_GLIBCXX_ASSERTIONS', *rig.sanitize])}), "
                             + (f"does not {step}: {error}" if step != "ran" else
                                f"fails {failing[0].name!r}: {failing[0].message[:500]}"))


@dataclass
class Tally:
    """Each tried mutant, by what became of it."""
    killed: list[Mutant] = field(default_factory=list)
    survivors: list[Mutant] = field(default_factory=list)
    equivalent: list[Mutant] = field(default_factory=list)
    stillborn: list[Mutant] = field(default_factory=list)


def try_all(rig: Rig, mutants: list[Mutant], exercises: list[str], sources: dict[str, Path],
            known: dict[str, str], args: argparse.Namespace) -> Tally:
    """Every mutant tried in a scratch folder, one line each as it is decided, after the control."""
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="mutate-") as scratch:
        control(rig, sorted({next(e for e in exercises if sources[e].name == m.file) for m in mutants}), sources,
                Path(scratch), args.timeout)
        for number, m in enumerate(mutants, 1):
            exercise = next(e for e in exercises if sources[e].name == m.file)
            text = sources[exercise].read_bytes()
            step, error, failing = try_source(rig, exercise, sources[exercise],
                                              text[:m.start] + m.mutated.encode() + text[m.end:], Path(scratch),
                                              f"run{number}", args.timeout)
            if step != "ran":
                tally.stillborn.append(m)
                print(f"[{number}/{len(mutants)}] {m.key}: does not {step}" + (f"\n{error}" if args.verbose else ""),
                      flush=True)
                continue
            if failing:
                tally.killed.append(m)
            elif m.key in known:
                tally.equivalent.append(m)
            else:
                tally.survivors.append(m)
            print(f"[{number}/{len(mutants)}] {m.key}: "
                  f"{'killed by ' + repr(failing[0].name) if failing else 'equivalent' if m.key in known else 'SURVIVED'}"
                  + (f" ({failing[0].status}: {failing[0].message[:300]})" if failing and args.verbose else ""),
                  flush=True)
    return tally


def report(chapter, chapter_dir: Path, mutants: list[Mutant], tally: Tally, base: list[int] | None,
           args: argparse.Namespace, argv: list[str] | None) -> None:
    """The run's figures and survivors, and with --record its row of MUTANTS.md."""
    print(f"chapter {chapter.number}: {len(mutants)} mutants, {len(tally.killed)} killed, "
          f"{len(tally.survivors)} survived, {len(tally.equivalent)} equivalent, {len(tally.stillborn)} did not compile")
    for m in tally.survivors:
        print(f"  survivor: {m.key}  ({m.what})")
    if not args.record:
        return
    command = "./workbook mutate " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:])
                                            if a not in (args.record, "--record"))
    row = [len(mutants), len(tally.stillborn), len(tally.killed), len(tally.equivalent), len(tally.survivors)]
    if base is not None:  # the recheck's mutants are the base row's survivors
        row = [base[0], base[1] + len(tally.stillborn), base[2] + len(tally.killed),
               base[3] + len(tally.equivalent), len(tally.survivors)]
    written = record_run(chapter_dir, chapter.number, args.record, row, tally.survivors, command)
    print(f"recorded in {written.relative_to(ROOT)}")


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    chapter = resolve_chapter(args.chapter)
    chapter_dir = ROOT / "chapters" / chapter.folder
    solutions = ROOT / "solutions" / chapter.folder
    exercises = [args.exercise] if args.exercise else chapter.exercises
    sources = {e: solutions / chapter.source_of(e) for e in exercises}
    build = args.build.resolve()
    # The build is looked at before the mutants are made (libclang parses each file with Eigen's
    # headers: seconds each): a build that cannot run them is said at once.
    why = "" if args.list else unbuilt(build, f"{chapter.target}_checks")
    if why:  # one sentence and the command that fixes it, not a traceback
        print(f"mutate.py: {why}; build the chapter's checks first with: "
              f"{build_command(build, f'{chapter.target}_checks')}", file=sys.stderr)
        return 2
    mutants, base = select_mutants(args, chapter_dir, sources)
    if args.list:
        for m in mutants:
            print(f"{m.key}  ({m.what})")
        print(f"{len(mutants)} mutants")
        return 0
    tally = try_all(rig_of(build, chapter, solutions), mutants, exercises, sources, equivalent_list(chapter_dir), args)
    report(chapter, chapter_dir, mutants, tally, base, args, argv)
    return 1 if tally.survivors else 0
