"""The class's grades as CSV: one row per submission, points per chapter; no cell a formula.

Two rules for what a spreadsheet would compute: free text (a note, feedback) is made text with a
leading apostrophe (safe_cell); an identifier a gradebook matches students by (an email, a login, a
name Canvas compares) is never rewritten, since the apostrophe would make it match nobody: the
roster refuses one a spreadsheet would compute something from (formula_problem), and keeps the
rest as they are ('-kim@uni.example', '@jon' and '+A' are text to a gradebook and to a spreadsheet
shows nothing but an error mark).
"""
from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from ...course import Chapter
from ...files import atomic_write
from ...verdicts import safe_text


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# After a leading + - or @: nothing but numbers and operators, at least one operator (arithmetic).
_ARITHMETIC = re.compile(r"[\d.,%\s]*(?:[-+*/^&][\d.,%\s]+)+")


def safe_cell(value) -> str:
    """A spreadsheet never evaluates a cell of free text: formula-like text gets a leading apostrophe."""
    text = safe_text(str(value), 1000)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def formula_problem(text: str) -> str | None:
    """Why a spreadsheet would compute something from TEXT written as it is, or None: a formula
    ('=...'), or after a leading '+', '-' or '@' a function call or a link to another program (a '('
    or a '|', as in +cmd|' /C calc'!A0) or arithmetic (-2+3)."""
    if text.startswith("="):
        return "starts with '=': a spreadsheet would run it as a formula"
    if text[:1] in ("+", "-", "@") and ("(" in text or "|" in text):
        return (f"starts with '{text[0]}' and holds a '(' or '|': a spreadsheet would run it as a formula "
                "(a function call or a link to another program)")
    if text[:1] in ("+", "-", "@") and _ARITHMETIC.fullmatch(text[1:]):
        return f"starts with '{text[0]}' and is arithmetic: a spreadsheet would compute it"
    return None


def write_csv(reports: list[dict], path: Path, chapters: list[Chapter]) -> None:
    names = [c.folder for c in chapters]
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(["submission", *names, "total", "maximum", "note"])
    for report in sorted(reports, key=lambda r: r["submission"]):
        per_chapter = [sum(t["points"] for t in report["tests"] if t["chapter"] == c) for c in names]
        note = report.get("refused") or "; ".join(report.get("refused_files", []))
        writer.writerow([safe_cell(report["submission"]), *per_chapter, report["score"],
                         report["max_score"], safe_cell(note)])
    atomic_write(path, out.getvalue())
