#!/usr/bin/env python3
"""The rules every failure message of a chapter's checks is held to (README, "The rules the checks
hold every chapter to"), as code, in one place:

- a named mistake is evidence: it takes the one form "known mistake [ID]" (scalebook/testing.hpp),
  its ID is declared in that chapter's checks (`constexpr Named kX{"ID", "..."}`), and a bug-zoo
  mutant's messages name its own ID and no other (but those on its `also:` line);
- a difference says where (an index, a row, a head, a block...);
- the message shows the call's inputs ("input: ...", or the call itself with its literal arguments);
- a value prints as what it is: no pointer ("0x55c1fede77c0"), no doctest "{?}";
- no message refers to a comment in a file the student does not see.

    check_messages.py --results RESULTS_TSV [--chapter CHAPTER_DIR]
        every failed or crashed line of a check binary's results file obeys the rules
    check_messages.py --zoo MUTANT RESULTS_TSV
        as above, and the bug-zoo mutant MUTANT is caught and named (what the reference build's
        tests run for every mutant: cmake/check_mutant_caught.cmake)
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

MISTAKE = re.compile(r"known mistake \[([a-z][a-z0-9_]*)\]")  # as tools/scalebook/loop/run_checks.py's
NAMED = re.compile(r'\bNamed\s+\w+\s*\{\s*"([^"]*)"')          # constexpr Named kX{"id", "text"}
ID = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
POINTER = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")
# Where a difference is: an index, a position, a row, column, head, block, fold, entry, part...
LOCATION = re.compile(r"at \(\d+, \d+\)|at \[\d+\]|first at|shapes differ|differ in (length|shape)|\bin rows?\b|\bin (every )?columns?\b|"
                      r"\b(head|block|row|column|entry|fold|query|key|projection|tile|epoch|index|feature|"
                      r"unit|example|point)s? \d", re.IGNORECASE)
HIDDEN = re.compile(r"in the (check'?s? )?comment|worked in the comment|example in the comment", re.IGNORECASE)


def declared_ids(checks: Path) -> list[str]:
    """The ids of the Named mistakes a chapter's checks.cpp declares, in order."""
    return NAMED.findall(checks.read_text())


def message_problems(message: str) -> list[str]:
    """What is wrong with one failure message (an empty list when it obeys the rules)."""
    problems = []
    if POINTER.search(message):
        problems.append(f"a pointer printed as a value: {POINTER.search(message).group(0)}")
    if "{?}" in message:
        problems.append("a value printed as doctest's {?}")
    if HIDDEN.search(message):
        problems.append("it refers to a comment the student does not see")
    lead = re.split(r" \| |\n", message, maxsplit=1)[0]
    if re.search(r"\bdiffers?\b", message) and not LOCATION.search(message):
        problems.append("it says the output differs but not where")
    crash = re.match(r"^(SIG[A-Z]+|crashed)", message)
    shows_input = "input: " in message or re.match(r"^[a-z_]+\(", lead) is not None
    if not shows_input and not crash:
        problems.append("it does not show the call's inputs (an INPUTS(...) context, or the call itself)")
    if crash and "input: " not in message:
        problems.append("a crash that does not name its input (INPUTS(...) before the call)")
    return problems


def results_lines(results: Path) -> list[tuple[str, str, str]]:
    """(status, check, message) of the failed and crashed lines of a results file, unescaped."""
    lines = []
    for line in results.read_text(errors="replace").split("\n"):
        parts = line.split("\t", 2)
        if len(parts) == 3 and parts[0] in ("failed", "crashed"):
            message = re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), parts[2])
            lines.append((parts[0], parts[1], message))
    return lines


def check_results(results: Path, chapter: Path | None) -> list[str]:
    known = set(declared_ids(chapter / "checks.cpp")) if chapter else None
    problems = []
    for status, check, message in results_lines(results):
        for problem in message_problems(message):
            problems.append(f"{check}: {problem}: {message[:300]!r}")
        for mistake in MISTAKE.findall(message):
            if known is not None and mistake not in known:
                problems.append(f"{check}: names [{mistake}], which {chapter.name}/checks.cpp does not declare")
    return problems


def mutant_fields(mutant: Path) -> dict[str, str]:
    fields = {"id": mutant.stem, "also": ""}
    for line in mutant.read_text().splitlines():
        key, sep, value = line.partition(":")
        if sep and key in ("mistake", "id", "also", "file") and not line.startswith(("-", "+")):
            fields[key] = value.strip()
    return fields


def check_zoo(mutant: Path, results: Path) -> tuple[list[str], str]:
    """Problems with a mutant's run, and a one-line summary."""
    fields = mutant_fields(mutant)
    wanted, allowed = fields["id"], {fields["id"], *fields["also"].split()}
    chapter = mutant.parent.parent
    lines = results_lines(results)
    problems = check_results(results, chapter)
    if not lines:
        problems.append(f"{fields.get('mistake', mutant.stem)}: no check failed: this mistake would get full marks")
    named = False
    for status, check, message in lines:
        for mistake in MISTAKE.findall(message):
            if mistake == wanted:
                named = True
            elif mistake not in allowed:
                problems.append(f"{check}: names [{mistake}], a mistake this mutant is not (a guess its output does not "
                                f"support; an output two mistakes share goes on the mutant's also: line)")
    if lines and not named:
        problems.append(f"{fields.get('mistake', mutant.stem)}: {len(lines)} checks fail, but none says "
                        f"\"known mistake [{wanted}]\"")
    return problems, f"{fields.get('mistake', mutant.stem)}: {len(lines)} checks fail; one names [{wanted}]"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, help="a check binary's results file")
    parser.add_argument("--chapter", type=Path, help="the chapter folder whose checks wrote it")
    parser.add_argument("--zoo", type=Path, nargs=2, metavar=("MUTANT", "RESULTS"),
                        help="a bug-zoo mutant and the results of the checks run against it")
    args = parser.parse_args()
    if args.zoo:
        problems, summary = check_zoo(*args.zoo)
    elif args.results:
        problems, summary = check_results(args.results, args.chapter), "every failure message obeys the rules"
    else:
        parser.error("give --results or --zoo")
    for problem in problems:
        print(problem)
    print(summary if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
