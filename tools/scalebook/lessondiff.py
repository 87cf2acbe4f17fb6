"""Compares a chapter's lesson output on the student's code with the book's.

A chapter's lesson output on the student's code beside the book's (the reference's output the
book build recorded), line by line. Three kinds of line:

  same      the same text;
  close     differs only where an implementation may legitimately differ: a number in the last
            digit it is printed with (rounding of the last bit in a different order of operations),
            a number within the chapter's tolerance (the relative difference its checks allow a
            correct output, "tolerance" in its chapter.json: a roundoff of 7.2e-16 against 6.7e-16,
            0 against 5.6e-17), or a timing (a line with a duration or a rate in it);
  differs   anything else: a number off by more than its last printed digit, a different integer
            (a count, an index, a class), different words, a line missing or extra.

Lines are paired by their text with the numbers taken out, so a line whose numbers changed is set
beside its counterpart instead of showing as one line removed and one added.
"""
from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass
from pathlib import Path

from . import ui

NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
TIMING = re.compile(r"\d\s*(?:ns|µs|us|ms|s|sec|seconds?|GFLOP/s|GB/s|it/s)(?![\w/])")
MARK = {"same": " ", "close": "≈", "differs": "✗"}


@dataclass
class Row:
    kind: str             # same, close, differs
    mine: str | None      # the student's line (None: the book has a line the student's output lacks)
    book: str | None      # the book's line (None: an extra line in the student's output)
    mine_number: int = 0  # 1-based line numbers, 0 where the side has no line
    book_number: int = 0


def skeleton(line: str) -> str:
    """The line with every number replaced by # and its spaces collapsed (a number printed one
    character wider moves a column): what pairs a line with its counterpart."""
    return " ".join(NUMBER.sub("#", line).split())


def last_digit(token: str) -> float:
    """The value of one unit in the last digit TOKEN is printed with ("0.125" -> 0.001,
    "1.5e-03" -> 1e-4); 0 for an integer, whose every digit counts."""
    mantissa, _, exponent = token.lower().partition("e")
    if "." not in mantissa and not exponent:
        return 0.0
    decimals = len(mantissa.split(".", 1)[1]) if "." in mantissa else 0
    return 10.0 ** (int(exponent or 0) - decimals)


def numbers_close(mine: str, book: str, tolerance: float = 0.0) -> bool:
    """Two numbers as printed agree up to one unit in the last printed digit of the coarser one, or
    to the chapter's TOLERANCE relative to max(1, |value|) (or to a relative 1e-9, for numbers
    printed with every digit). Two integers (counts, indices, classes) must be equal."""
    a, b = float(mine), float(book)
    if a == b:
        return True
    unit = max(last_digit(mine), last_digit(book))
    if unit == 0.0:
        return False
    if not (math.isfinite(a) and math.isfinite(b)):
        return False
    return (abs(a - b) <= unit * (1 + 1e-9) or abs(a - b) <= 1e-9 * max(abs(a), abs(b))
            or abs(a - b) <= tolerance * max(1.0, abs(a), abs(b)))


def tolerance_of(folder: Path) -> float:
    """A chapter's "tolerance" (its manifest, chapter.json, read by the one parser); 0 when it has none."""
    from .course import read_manifest
    return read_manifest(folder).tolerance


def classify(mine: str, book: str, tolerance: float = 0.0) -> str:
    if mine == book:
        return "same"
    if skeleton(mine) != skeleton(book):
        return "differs"
    if TIMING.search(book):
        return "close"
    pairs = zip(NUMBER.findall(mine), NUMBER.findall(book))
    return "close" if all(numbers_close(a, b, tolerance) for a, b in pairs) else "differs"


def compare(mine: list[str], book: list[str], tolerance: float = 0.0) -> list[Row]:
    """The two outputs aligned: paired lines classified (numbers within the chapter's TOLERANCE
    are close), unpaired ones marked as differing."""
    rows: list[Row] = []
    matcher = difflib.SequenceMatcher(None, [skeleton(l) for l in mine], [skeleton(l) for l in book],
                                      autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2)):
                rows.append(Row(classify(mine[i], book[j], tolerance), mine[i], book[j], i + 1, j + 1))
            continue
        # replaced, inserted or deleted lines: paired in order as far as both sides go
        for k in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + k, j1 + k
            rows.append(Row("differs", mine[i] if i < i2 else None, book[j] if j < j2 else None,
                            i + 1 if i < i2 else 0, j + 1 if j < j2 else 0))
    return rows


def render(rows: list[Row], columns: int) -> list[str]:
    """Side by side: a mark, the student's line, the book's line, when every line fits its half of
    the screen. When one does not, a lesson's table would wrap, and the tails of its rows repeat
    down the screen ("1.9%", "1.9%", ...): then the lines are stacked instead, each line the two
    sides share shown once, and a line that differs shown as yours, then the book's."""
    half = max(10, (columns - 5) // 2)
    colour = {"same": ui.dim, "close": ui.yellow, "differs": ui.red}
    widest = max((ui.visible(ui.printable(text)) for row in rows for text in (row.mine, row.book) if text is not None),
                 default=0)
    if widest > half:
        return render_stacked(rows, columns, colour)
    out = [ui.bold(f"  {'your lesson':<{half}} │ the book")]
    out.append(f"  {'─' * half}─┼─{'─' * half}")
    for row in rows:
        left = ui.wrap(ui.printable(row.mine), half) if row.mine is not None else [""]
        right = ui.wrap(ui.printable(row.book), half) if row.book is not None else [""]
        if row.mine is None:
            left = [ui.red("(missing)")]
        if row.book is None:
            right = [ui.red("(not in the book)")]
        for k in range(max(len(left), len(right))):
            mark = colour[row.kind](MARK[row.kind]) if k == 0 else " "
            l = left[k] if k < len(left) else ""
            r = right[k] if k < len(right) else ""
            out.append(f"{mark} {l}{' ' * (half - ui.visible(l))} │ {r}".rstrip())
    return out


def render_stacked(rows: list[Row], columns: int, colour: dict) -> list[str]:
    """One column: a shared line once; a close or differing line as "yours" then "book"."""
    width = max(10, columns - 9)
    out = [ui.bold("  your lesson; the book's under each difference")]
    for row in rows:
        if row.kind == "same":
            for k, part in enumerate(ui.wrap(ui.printable(row.mine), width + 7)):
                out.append(f"  {part}".rstrip())
            continue
        mark = colour[row.kind](MARK[row.kind])
        mine = ui.wrap(ui.printable(row.mine), width) if row.mine is not None else [ui.red("(missing)")]
        book = ui.wrap(ui.printable(row.book), width) if row.book is not None else [ui.red("(not in the book)")]
        for k, part in enumerate(mine):
            out.append(f"{mark if k == 0 else ' '} yours {part}".rstrip())
        for part in book:
            out.append(f"  book  {part}".rstrip())
    return out


def summary(rows: list[Row], chapter: int) -> list[str]:
    counts = {kind: sum(1 for r in rows if r.kind == kind) for kind in MARK}
    out = [f"{count(counts['same'], 'line')} as in the book; "
           f"{counts['close']} only in the last printed digit, within the checks' tolerance or in a timing "
           f"({MARK['close']}: fine); "
           f"{counts['differs']} differing ({MARK['differs']})."]
    first = next((r for r in rows if r.kind == "differs"), None)
    if first is None:
        out.append("Your lesson prints what the book shows.")
    elif first.mine is None:
        out.append(f"The first difference: the book's line {first.book_number} is missing from yours.")
    elif first.book is None:
        out.append(f"The first difference: your line {first.mine_number} is not in the book.")
    else:
        out.append(f"The first difference is your line {first.mine_number}, "
                   f"\"{shortened(ui.printable(first.mine))}\", where the book has "
                   f"\"{shortened(ui.printable(first.book))}\": find the exercise that computes it, and "
                   f"see what ./workbook check {chapter} says about it.")
    return out


def shortened(line: str, limit: int = 60) -> str:
    line = " ".join(line.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")
