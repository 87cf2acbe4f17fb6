"""The analysis on the instructor's pages: the class page's section and the similarity page.

From DIR/analysis.json's dict (grading/analysis.py): the section "What the class got wrong" of the
class page (DIR/index.html, instructor-only) and DIR/similarity.html (instructor-only), with the
pages' Jinja2 environment (autoescape) and rule for text: every name, check, message and line of
code is a submission's string, shown through visible(). Nothing here is written under
DIR/students.
"""
from __future__ import annotations

from pathlib import Path

from . import pages, similarity
from .visible import NAME_CHARS, visible, visible_plain

MESSAGE_CHARS = 600


def _names(students: list) -> list:
    return [visible(s, NAME_CHARS) for s in students]


def class_section(analysis: dict | None) -> dict | None:
    """The class page's view of the analysis (None: no section)."""
    if not analysis:
        return None
    named = analysis.get("named_mistakes", {})
    graded = named.get("graded", 0)
    exercises = []
    for entry in named.get("exercises", []):
        if not entry["failed_most"] and not entry["mistakes"]:
            continue
        exercises.append({"id": visible(entry["exercise"], 40),
                          "failed_most": [{"check": visible(c["check"], NAME_CHARS), "failed": c["failed"]}
                                          for c in entry["failed_most"]],
                          "mistakes": [_mistake(m) for m in entry["mistakes"]]})
    shared = [{"exercise": visible(f["exercise"], 40), "check": visible(f["check"], NAME_CHARS),
               "message": visible(f["message"], MESSAGE_CHARS, 4), "students": _names(f["students"])}
              for f in analysis.get("shared_wrong_answers", [])]
    similar = analysis.get("similarity", {})
    pairs = sum(e.get("pairs_above", 0) for e in similar.get("exercises", []))
    return {"graded": graded, "teach_again": [dict(_mistake(m), exercises=[visible(e, 40) for e in m["exercises"]])
                                              for m in named.get("teach_again", [])],
            "exercises": exercises, "shared": shared, "similar_pairs": pairs,
            "similarity_skipped": visible(similar.get("skipped", ""), 300) if similar.get("skipped") else None,
            "seconds": analysis.get("seconds", 0)}


def _mistake(mistake: dict) -> dict:
    return {"id": visible(mistake["id"], 80), "text": visible(mistake["text"], 400, 2), "count": mistake["count"],
            "students": _names(mistake["students"])}


def _pair_view(exercise: str, index: int, pair: dict) -> dict:
    runs = [{"a_lines": "{}-{}".format(*run["a_lines"]), "b_lines": "{}-{}".format(*run["b_lines"]),
             "kgrams": run["kgrams"], "a_text": visible(run.get("a_text", ""), 8000, 90),
             "b_text": visible(run.get("b_text", ""), 8000, 90)} for run in pair["runs"]]
    return {"anchor": f"pair-{visible_plain(exercise, 20)}-{index + 1}", "a": visible(pair["a"], NAME_CHARS),
            "b": visible(pair["b"], NAME_CHARS), "a_same": _names(pair.get("a_same", [])),
            "b_same": _names(pair.get("b_same", [])), "percent": pair["percent"], "a_percent": pair["a_percent"],
            "b_percent": pair["b_percent"], "shared_kgrams": pair["shared_kgrams"], "reference": pair["reference"],
            "runs": runs}


def similarity_view(analysis: dict) -> list[dict]:
    """Per exercise with identical files or a pair above the threshold: those, and the runs of its pairs."""
    listed = []
    for entry in analysis.get("similarity", {}).get("exercises", []):
        if not entry.get("pairs") and not entry.get("identical"):
            continue
        listed.append({"id": visible(entry["exercise"], 40), "file": visible(entry["file"], NAME_CHARS),
                       "compared": entry["compared"], "references": entry.get("references", 0),
                       "pairs_above": entry["pairs_above"], "listed": len(entry["pairs"]),
                       "identical": [{"files": _names(g["files"]), "kgrams": g["kgrams"]}
                                     for g in entry.get("identical", [])],
                       "pairs": [_pair_view(entry["exercise"], index, pair)
                                 for index, pair in enumerate(entry["pairs"][:similarity.PAIRS_SHOWN])]})
    return listed


def render_similarity_page(analysis: dict, commit: str) -> str:
    environment = pages._environment("write_similarity_page")
    similar = analysis.get("similarity", {})
    page = dict(pages._page_basics({}, {"date": analysis.get("date", ""), "commit": commit}),
                exercises=similarity_view(analysis),
                skipped=visible(similar.get("skipped", ""), 300) if similar.get("skipped") else None,
                threshold=similar.get("threshold_percent"), min_kgrams=similar.get("min_kgrams"),
                kgram=similar.get("kgram"),
                references=[visible(r, NAME_CHARS) for r in similar.get("references", [])],
                compared=max((e["compared"] for e in similar.get("exercises", [])), default=0))
    return environment.get_template("similarity.html.j2").render(page)


def write_similarity_page(analysis: dict, out_dir: Path, commit: str) -> None:
    """DIR/similarity.html: the grader's page, beside index.html, never under DIR/students."""
    pages._write(out_dir / "similarity.html", render_similarity_page(analysis, commit))
