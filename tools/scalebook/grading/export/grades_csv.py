"""The class's grades as CSV: one row per submission, points per chapter; no cell a formula."""
from __future__ import annotations

import csv
import io
from pathlib import Path

from ...course import Chapter
from ...files import atomic_write
from ...verdicts import safe_text


def safe_cell(value) -> str:
    """A spreadsheet never evaluates a cell: formula-like text gets a leading apostrophe."""
    text = safe_text(str(value), 1000)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


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
