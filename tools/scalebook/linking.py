"""The linker's word on an exercise file, in a student's terms.

The linker's word on an exercise file, in a student's terms: which of its calls nothing linked
into the chapter defines, and the sentence that says so. Shared by ./workbook check (build.py) and
the grading step (grading/link.py, which runs from the grading kit).
"""
from __future__ import annotations

import re
from pathlib import Path

NOT_LINKED = ("{file} does not link: {symbol} is an exercise's answer in lib, and lib's answers of "
              "chapter {number} and later are not linked into chapter {number}, here as in grading: "
              "write it yourself")
UNDEFINED = "{file} does not link: nothing linked into chapter {number} defines {symbol}"


def unlinked_calls(lines: list[str], objects: dict[str, str]) -> dict[str, list[str]]:
    """The linker's "undefined reference" errors that belong to an exercise: {exercise: [symbol]}.
    OBJECTS: object path as the link command names it -> exercise. gold names the object on the
    error's own line ("obj.o:file.cpp:function f: error: undefined reference to 'g'"); ld.bfd on the
    line before ("obj.o: in function `f':"). Errors of lib's own objects belong to no exercise."""
    found: dict[str, list[str]] = {}
    current = None
    for line in lines:
        named = next((e for obj, e in objects.items() if obj in line), None)
        match = re.search(r"undefined reference to [`'](.+)'\s*$", line)
        if match:
            gold = re.match(r"^[^:\s]+\.o\)?:", line) is not None
            exercise = named if gold else current
            if exercise is not None and match.group(1) not in found.get(exercise, []):
                found.setdefault(exercise, []).append(match.group(1))
        elif "in function" in line:
            current = named
    return found


def lib_answer(symbol: str, headers: Path) -> str | None:
    """scalebook::softmax_rows for a call to lib's own function of that name (declared in one of
    lib's headers, HEADERS/*.hpp), None for any other symbol."""
    match = re.match(r"^scalebook::(\w+)\(", symbol)
    if not match or not headers.is_dir():
        return None
    name = match.group(1)
    for header in headers.glob("*.hpp"):
        if re.search(rf"\b{name}\s*\(", header.read_text(errors="replace")):
            return f"scalebook::{name}"
    return None


def link_message(shown_file: str, number: int, symbols: list[str], headers: Path) -> str:
    """What a student reads when their exercise calls what chapter NUMBER's checks do not link
    (HEADERS: lib's headers, scalebook/*.hpp)."""
    for symbol in symbols:
        answer = lib_answer(symbol, headers)
        if answer:
            return NOT_LINKED.format(file=shown_file, symbol=answer + "()", number=number)
    return UNDEFINED.format(file=shown_file, symbol=symbols[0], number=number)
