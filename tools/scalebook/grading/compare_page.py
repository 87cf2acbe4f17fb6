"""compare.html: a regrade's preview page (grading/regrade.py's comparison), in the pages' style."""
from __future__ import annotations

from pathlib import Path

from .pages import _count, _environment, _number, _page_basics, _points, _status_class, _write
from .visible import NAME_CHARS, visible


def render_compare_page(preview: dict, context: dict) -> str:
    """compare.html's text for a regrade's preview (grading/regrade.py's comparison)."""
    environment = _environment("write_compare_page")

    def total(score, maximum) -> str:
        return "-" if score is None else f"{_points(score)} / {_points(maximum)}"

    changed, unchanged = [], []
    for index, student in enumerate(preview.get("students", [])):
        name = visible(student.get("submission"), NAME_CHARS)
        if student.get("submission") not in preview.get("changed", []):
            unchanged.append(name)
            continue
        difference = ("" if student.get("old_score") is None or student.get("new_score") is None
                      else f"{_number(student['new_score']) - _number(student['old_score']):+g}")
        changes = [{"kind": visible(c.get("kind"), 20), "chapter": visible(c.get("chapter"), NAME_CHARS),
                    "check": visible(c.get("check"), NAME_CHARS), "hidden": c.get("hidden") is True,
                    "renamed_from": visible(c.get("renamed_from"), NAME_CHARS) if c.get("renamed_from") else "",
                    "message": visible(c.get("message"), 300, 3) if c.get("message") else "",
                    "old_status": visible(c.get("old_status"), 40), "new_status": visible(c.get("new_status"), 40),
                    "old_class": _status_class(c.get("old_status")), "new_class": _status_class(c.get("new_status")),
                    "points": f"{_number(c.get('delta')):+g} (of {_points(c.get('new_max') or c.get('old_max'))})"}
                   for c in student.get("changes", [])]
        changed.append({"name": name, "anchor": f"student-{index + 1}", "changes": changes,
                        "before": total(student.get("old_score"), student.get("old_max")),
                        "after": total(student.get("new_score"), student.get("new_max")),
                        "delta": difference, "note": visible(student.get("note"), 80)})
    old, new = preview.get("old", {}), preview.get("new", {})
    accepted = preview.get("accepted") or {}
    page = dict(_page_basics({"commit": new.get("commit"), "date": preview.get("date")}, context),
                old_dir=visible(old.get("dir"), 400), new_dir=visible(new.get("dir"), 400),
                old_commit=visible(old.get("commit"), 80), new_commit=visible(new.get("commit"), 80),
                accepted=visible(accepted.get("date"), 80) if accepted else "",
                changed=changed, unchanged=unchanged, class_size=len(preview.get("students", [])),
                renamed=[{"chapter": visible(r.get("chapter"), NAME_CHARS), "old": visible(r.get("old"), NAME_CHARS),
                          "new": visible(r.get("new"), NAME_CHARS), "hidden": r.get("hidden") is True}
                         for r in preview.get("renamed", []) if isinstance(r, dict)],
                work={k: _count((preview.get("work") or {}).get(k)) for k in ("reused", "checks_run", "compiled", "linked")})
    return environment.get_template("compare.html.j2").render(page)


def write_compare_page(preview: dict, path: Path, context: dict) -> None:
    """Writes a regrade's preview page to `path` (DIR/compare.html): per student whose grade or a
    verdict changed, each such check (gained, lost or changed, with points) and the totals; both
    trees' commits."""
    _write(path, render_compare_page(preview, context))
