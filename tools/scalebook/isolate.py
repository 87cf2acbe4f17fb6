"""The rule that a broken exercise costs only itself, for ./workbook check and grading alike.

From the exercise files that compiled and their symbol tables (nm -C -A -g): two files that define
the same symbol cost those two exercises, with one sentence naming the symbol, both files and the
fix; a file that calls a contract function of an exercise that did not compile cannot run. The
student's loop (loop/build.py, loop/run_checks.py) and grading's compile step (grading/link.py)
decide with these functions, so that they cannot disagree; tests/student/test_isolation.py gives both
the same broken trees. Standard library only: grading runs it from its kit.
"""
from __future__ import annotations

import re

DUPLICATE = ("{first} and {second} both define {symbol} ({first_file} and {second_file}): make it static, "
             "or put it in an unnamed namespace, in each file")
NM_LINE = re.compile(r"^(.+?\.o):(?:[0-9a-f]+)?\s+([A-Za-z])\s+(.*)$")
STRONG = "TDBRGS"   # nm's kinds of a definition another file's cannot coexist with
NOT_SYMBOLS = ("typeinfo", "vtable", "guard variable")


def read_symbols(nm_lines: list[str], exercise_of: dict[str, str]) -> dict[str, tuple[set[str], set[str]]]:
    """nm -C -A -g output -> {exercise: (strong symbols its file defines, symbols it needs)}.
    EXERCISE_OF: an object file's path as nm prints it -> its exercise."""
    table: dict[str, tuple[set[str], set[str]]] = {e: (set(), set()) for e in exercise_of.values()}
    for line in nm_lines:
        match = NM_LINE.match(line)
        if not match or match.group(1) not in exercise_of:
            continue
        defined, needed = table[exercise_of[match.group(1)]]
        kind, symbol = match.group(2), match.group(3)
        if kind == "U":
            needed.add(symbol)
        elif kind in STRONG and not symbol.startswith(NOT_SYMBOLS):
            defined.add(symbol)
    return table


def duplicates(compiled: list[str], table: dict[str, tuple[set[str], set[str]]], shown: dict[str, str],
               limit=None) -> dict[str, str]:
    """{exercise: sentence} for the two files (in COMPILED's order) that first define each symbol
    defined twice. SHOWN: exercise -> its file as the student knows it. LIMIT: how a symbol is cut
    for the sentence (a function of the text), or None."""
    owners: dict[str, list[str]] = {}
    for exercise in compiled:
        for symbol in table[exercise][0]:
            owners.setdefault(symbol, []).append(exercise)
    costs: dict[str, str] = {}
    for symbol, who in sorted(owners.items()):
        if len(who) < 2:
            continue
        first, second = who[0], who[1]
        sentence = DUPLICATE.format(first=first, second=second, symbol=limit(symbol) if limit else symbol,
                                    first_file=shown[first], second_file=shown[second])
        for exercise in (first, second):
            costs.setdefault(exercise, sentence)
    return costs


def calls_into(needed: set[str] | str, functions: list[str]) -> bool:
    """Whether a file that needs NEEDED (demangled symbols, or nm -u's text) calls one of FUNCTIONS,
    a chapter's contract functions (scalebook::chNN::NAME(...))."""
    text = needed if isinstance(needed, str) else "\n".join(needed)
    return any(re.search(rf"\bscalebook::ch\d+::{re.escape(name)}\(", text) for name in functions)


def blocked(exercise: str, needed: set[str] | str, broken: list[str], functions: dict[str, list[str]]) -> list[str]:
    """The exercises of BROKEN (not linked: they did not compile) whose contract functions EXERCISE's
    file calls. FUNCTIONS: exercise -> its contract functions (the chapter's manifest)."""
    return [other for other in broken if other != exercise and calls_into(needed, functions.get(other, []))]
