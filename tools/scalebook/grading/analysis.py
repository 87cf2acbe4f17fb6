"""What the class got wrong: named mistakes counted, copied code found, shared wrong answers flagged.

Written by the merge step of ./workbook grade (after every submission is graded), for the
instructor only, from the reports and the files graded:

DIR/analysis.json     everything below, as data
DIR/index.html        the class page's section "What the class got wrong" (grading/pages.py)
DIR/similarity.html   the pairs of similar files, their shared runs side by side

1. Named mistakes. A check's failure message names a known mistake as "known mistake [ID]: TEXT"
   (lib/testing/scalebook/testing.hpp), only when the output is what that mistake produces; the
   report carries each check's ids ("mistakes"). Per exercise: each mistake, how many made it and
   who, beside the checks failed most (a check whose output several mistakes produce names them
   all: student_mistakes() keeps the one the student's other checks name alone). A mistake made by
   a third of the graded class or more is listed at the top of the class page, to teach again.
   Only ids a chapter's checks declare (`constexpr Named kX{"id", "text"}` in
   chapters/NN-topic/checks.cpp) count, with that text.
2. Similarity: grading/similarity.py (Dolos's fingerprint index over tree-sitter's C++ syntax trees).
3. Shared wrong answers. Two (or up to SHARED_AT_MOST) students who fail the same check with the
   same message, when that message names no known mistake, comes from a value check (not an
   error-path one), no other student's report has it and those students made no named mistake in
   common: the same rare wrong value, a sign of shared code that comparing files cannot see (code
   moved between files, or included).
All three are signals for a person to look at, never proof, and never change a grade. Nothing of
this reaches a student's folder (DIR/students/NAME).
"""
from __future__ import annotations

import datetime
import hashlib
import re
import time
from pathlib import Path

from ..config import ROOT
from ..course import Chapter
from ..files import write_json
from ..loop.run_checks import mistake_ids  # the one reading of "known mistake [ID]" (hint, pages, here)
from ..verdicts import is_error_path
from . import similarity
from .intake import read_sources
from .tree import tests_folder

SHARED_AT_MOST = 3      # a wrong value more students share is a common slip, not a sign
TEACH_AGAIN = 1 / 3     # a mistake made by this share of the graded class
CHECKS_LISTED = 3       # per exercise, the checks failed most
DECLARED = re.compile(r'\bNamed\s+\w+\s*\{\s*"([a-z][a-z0-9_]*)"\s*,\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\}')
# Sentences the grader writes itself (grading/report.py, native/check.cpp): no value of the student's.
GRADER_SENTENCES = ("ctest did not see this check pass", "failed: the worker's reply")


def declared_mistakes(chapters: list[Chapter], root: Path = ROOT) -> dict[str, dict[str, str]]:
    """Per chapter folder, the named mistakes its checks declare: {id: text}."""
    found = {}
    for chapter in chapters:
        try:
            source = (root / "chapters" / chapter.folder / "checks.cpp").read_text()
        except OSError:
            source = ""
        found[chapter.folder] = {m.group(1): "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(2)))
                                 for m in DECLARED.finditer(source)}
    return found


def _text(value) -> str:
    return value if isinstance(value, str) else ""


def _graded(reports: list[dict]) -> list[dict]:
    return [r for r in reports if isinstance(r, dict) and not r.get("refused") and isinstance(r.get("tests"), list)]


def _tests(report: dict):
    for test in report["tests"]:
        if isinstance(test, dict):
            yield test


def test_mistakes(test: dict) -> list[str]:
    """The ids a report's check observed: its "mistakes", or (an older report) read from its message."""
    if _text(test.get("status")) != "failed":
        return []
    listed = test.get("mistakes")
    if isinstance(listed, list):
        return [i for i in listed if isinstance(i, str)]
    return mistake_ids(_text(test.get("message")))


def student_mistakes(report: dict, declared: dict[str, dict[str, str]]) -> dict[str, set]:
    """The declared mistakes one student made, per exercise. A check whose output matches several
    mistakes at once names them all; where the student's other checks name one of those alone
    (anywhere: a mistake shows in the exercises that call its function too), that one is the
    mistake, else each of them is counted."""
    named = [(_text(t.get("exercise")), [m for m in test_mistakes(t) if m in declared.get(_text(t.get("chapter")), {})])
             for t in _tests(report)]
    definite = {ids[0] for _, ids in named if len(ids) == 1}
    made: dict[str, set] = {}
    for exercise, ids in named:
        if ids:
            made.setdefault(exercise, set()).update(set(ids) & definite or ids)
    return made


def named_mistakes(reports: list[dict], declared: dict[str, dict[str, str]]) -> dict:
    """Per exercise, the checks failed most and the named mistakes made, with who made them; and
    the mistakes a third of the graded class made (teach_again, each once, with its exercises)."""
    graded = _graded(reports)
    exercises: dict[str, dict] = {}
    for report in graded:
        name = _text(report.get("submission"))
        for test in _tests(report):
            entry = exercises.setdefault(_text(test.get("exercise")), {
                "exercise": _text(test.get("exercise")), "chapter": _text(test.get("chapter")), "checks": {},
                "mistakes": {}})
            if _text(test.get("status")) != "passed":
                entry["checks"].setdefault(_text(test.get("name")), set()).add(name)
        for exercise, ids in student_mistakes(report, declared).items():
            for mistake in ids:
                exercises[exercise]["mistakes"].setdefault(mistake, set()).add(name)
    listed, teach = [], {}
    for entry in sorted(exercises.values(), key=lambda e: _exercise_key(e["exercise"])):
        checks = sorted(entry["checks"].items(), key=lambda c: (-len(c[1]), c[0]))[:CHECKS_LISTED]
        mistakes = [{"id": m, "text": declared[entry["chapter"]][m], "count": len(who), "students": sorted(who)}
                    for m, who in sorted(entry["mistakes"].items(), key=lambda c: (-len(c[1]), c[0]))]
        listed.append({"exercise": entry["exercise"], "chapter": entry["chapter"],
                       "failed_most": [{"check": c, "failed": len(who)} for c, who in checks],
                       "mistakes": mistakes})
        for mistake in mistakes:
            known = teach.setdefault(mistake["id"], dict(mistake, students=set(), exercises=[]))
            known["students"].update(mistake["students"])
            known["exercises"].append(entry["exercise"])
    again = [dict(m, students=sorted(m["students"]), count=len(m["students"])) for m in teach.values()
             if graded and len(m["students"]) >= TEACH_AGAIN * len(graded)]
    return {"graded": len(graded), "exercises": listed,
            "teach_again": sorted(again, key=lambda m: (-m["count"], m["id"]))}


def _exercise_key(exercise: str) -> tuple:
    parts = re.findall(r"\d+", exercise)
    return (0, [int(p) for p in parts], exercise) if parts else (1, [], exercise)


def shared_wrong_answers(reports: list[dict]) -> list[dict]:
    """The same rare wrong value: per check, a failure message that two to SHARED_AT_MOST students
    have and nobody else, naming no known mistake, from a value check; unless those students made
    a named mistake in common (anywhere: one exercise's mistake shows in those that call it)."""
    by_check: dict[tuple, dict[str, set]] = {}
    made: dict[str, set] = {}
    for report in _graded(reports):
        name = _text(report.get("submission"))
        made[name] = {m for test in _tests(report) for m in test_mistakes(test)}
        for test in _tests(report):
            message, check = _text(test.get("message")), _text(test.get("name"))
            if (_text(test.get("status")) != "failed" or is_error_path(check) or not message
                    or mistake_ids(message) or message.startswith(GRADER_SENTENCES)):
                continue
            key = (_text(test.get("exercise")), check)
            by_check.setdefault(key, {}).setdefault(message, set()).add(name)
    flagged = []
    for (exercise, check), messages in by_check.items():
        for message, who in messages.items():
            if 2 <= len(who) <= SHARED_AT_MOST and not set.intersection(*(made[w] for w in who)):
                flagged.append({"exercise": exercise, "check": check, "message": message, "students": sorted(who)})
    return sorted(flagged, key=lambda f: (_exercise_key(f["exercise"]), f["check"], f["students"]))


def class_files(out_dir: Path, submissions: dict[str, dict], relative: str) -> dict[str, str]:
    """Each graded submission's copy of RELATIVE (DIR/ctest/students/NAME/src/...), as graded: a
    copy whose digest is not the one taken in is left out."""
    files = {}
    for name, entry in submissions.items():
        sha = (entry.get("sources") or {}).get(relative)
        if not sha:
            continue
        try:
            data = (tests_folder(out_dir / "ctest", name) / "src" / relative).read_bytes()
        except OSError:
            continue
        if hashlib.sha256(data).hexdigest() == sha:
            files[name] = data.decode("utf-8", errors="surrogateescape")
    return files


def reference_files(folders: list[str], chapters: list[Chapter]) -> dict[str, dict[str, str]]:
    """The files of the reference folders, {relative: {"FOLDER/SUBMISSION": text}}: a folder is one
    submission (it holds exercises/ or a chapter's folder) or a class of them (its sub-folders)."""
    found: dict[str, dict[str, str]] = {}
    for folder in map(Path, folders):
        looks_like_one = (folder / "exercises").is_dir() or any((folder / c.folder).is_dir() for c in chapters)
        members = [folder] if looks_like_one else sorted(p for p in folder.iterdir() if p.is_dir()) \
            if folder.is_dir() else []
        for member in members:
            label = folder.name if member == folder else f"{folder.name}/{member.name}"
            try:
                taken, _ = read_sources(member, chapters, time.monotonic() + 60)
            except Exception:  # an unreadable reference is left out, said by its absence in analysis.json
                continue
            for relative, data in taken.items():
                found.setdefault(relative, {})[f"reference:{label}"] = data.decode("utf-8", errors="surrogateescape")
    return found


def similar_code(out_dir: Path, submissions: dict[str, dict], chapters: list[Chapter], references: list[str],
                 root: Path = ROOT, wanted: bool = True) -> dict:
    """Per exercise, the pairs of similar files (grading/similarity.py); or why it was not run."""
    reason = similarity.available() if wanted else "not asked for (grade --no-similarity)"
    if reason:
        return {"skipped": reason, "exercises": []}
    others = reference_files(references, chapters)
    work = []
    for chapter in chapters:
        contract = similarity.contract_texts(root / "chapters" / chapter.folder, root / "lib" / "include")
        functions = chapter.functions_of()
        for exercise in chapter.exercises:
            relative = f"{chapter.folder}/{chapter.source_of(exercise)}"
            try:
                stub = (root / "exercises" / relative).read_text()
            except OSError:
                stub = ""
            work.append({"exercise": exercise, "file": relative, "stub": stub, "functions": functions[exercise],
                         "contract": contract, "files": class_files(out_dir, submissions, relative),
                         "references": others.get(relative, {})})
    return {"tool": similarity.TOOL, "threshold_percent": similarity.THRESHOLD,
            "min_kgrams": similarity.MIN_KGRAMS, "kgram": similarity.KGRAM, "window": similarity.WINDOW,
            "references": [str(f) for f in references], "exercises": similarity.class_similarity(work)}


def analyse(out_dir: Path, reports: list[dict], submissions: dict[str, dict], chapters: list[Chapter],
            references: list[str] | None = None, commit: str = "", root: Path = ROOT, similarity: bool = True) -> dict:
    """The class's analysis, written to DIR/analysis.json and DIR/similarity.html; returned for
    the class page."""
    started = time.monotonic()
    result = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "note": "signals for a person to look at, not proof; they never change a grade",
              "named_mistakes": named_mistakes(reports, declared_mistakes(chapters, root)),
              "shared_wrong_answers": shared_wrong_answers(reports),
              "similarity": similar_code(out_dir, submissions, chapters, references or [], root,
                                                 similarity)}
    from .analysis_pages import write_similarity_page  # Jinja2 only where pages are written
    write_similarity_page(result, out_dir, commit)
    for exercise in result["similarity"]["exercises"]:  # the code itself is on the page, not in the data
        for pair in exercise["pairs"]:
            for run in pair["runs"]:
                run.pop("a_text", None), run.pop("b_text", None)
    result["seconds"] = round(time.monotonic() - started, 2)
    write_json(out_dir / "analysis.json", result)
    return result
