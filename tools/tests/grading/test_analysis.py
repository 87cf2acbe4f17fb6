#!/usr/bin/env python3
"""The class analysis (grading/analysis.py) on a made-up graded folder: seconds, no build.

A folder laid out as grading leaves it (DIR/ctest/students/NAME/src, DIR/students/NAME/report.json)
for chapter 4's masked softmax: a copy of the reference, the same with every variable renamed, an
independent correct solution, two untouched stubs, and a reference folder of two copies of the
reference. Reports
made up to the messages' form: named mistakes (declared or not by a made-up checks.cpp), the same
rare wrong output for two students, a wrong output four students share, an error-path failure two
share. Then the analysis, its JSON and pages, and every student's own folder, read back.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

from maintainer.generated_class import INDEPENDENT_SOFTMAX, SOFTMAX, renamed
from scalebook.course import all_chapters
from scalebook.grading import analysis, pages, similarity
from scalebook.grading.tree import reports_folder, tests_folder
from tests.grading.hostile_reports import BREAKOUTS, SCRIPT, the_class
from tests.harness import ROOT, expect, finish

CH4 = "04-causal-masking"
HOSTILE = "x<script>alert(1)</script>"
CHECKS = f"""constexpr Named kTransposed{{"mask_transposed", "the mask transposed (j >= i instead of j <= i)"}};
constexpr Named kAfter{{"mask_after_softmax",
                       "the mask applied after the softmax: "
                       "the allowed weights not renormalised"}};
constexpr Named kSentinel{{"finite_negative_sentinel", "a finite sentinel instead of -infinity"}};
"""


def check(name: str, status: str = "passed", message: str = "", exercise: str = "4.2") -> dict:
    return {"name": name, "chapter": CH4, "exercise": exercise, "status": status, "points": int(status == "passed"),
            "max_points": 1, "message": message}


def report(name: str, tests: list[dict]) -> dict:
    return {"submission": name, "score": 0, "max_score": 4, "tests": tests, "date": "2026-01-01", "commit": "abc"}


def named(*mistakes: str) -> str:
    said = " | ".join(f"the output matches known mistake [{m}]: some text" for m in mistakes)
    return f"w is wrong | {said} | actual 1 vs expected 2"


def make_reports() -> list[dict]:
    rare = "near(w, expected) is matrices differ: largest difference at (0, 0): actual 0.123 vs expected 1"
    common = "near(w, expected) is matrices differ: largest difference at (1, 1): actual 7 vs expected 1"
    odd = "near(w, expected) is matrices differ: largest difference at (2, 0): actual 3 vs expected 1"
    tests = {
        "alice": [check("4.2 rows", "failed", named("mask_transposed")), check("4.2 big", "failed", rare)],
        "bob": [check("4.2 rows"), check("4.2 big", "failed", rare)],
        "carol": [check("4.2 rows", "failed", named("mask_after_softmax")), check("4.2 big", "failed", common)],
        "dave": [check("4.2 rows", "failed", named("not_declared_here")), check("4.2 big", "failed", common),
                 check("4.2 rejects a narrow mask (throws)", "failed", "nothing thrown")],
        "erin": [check("4.2 rows"), check("4.2 big", "failed", common),
                 check("4.2 rejects a narrow mask (throws)", "failed", "nothing thrown")],
        HOSTILE: [check("4.2 rows", "failed", named("mask_transposed")), check("4.2 big", "failed", common)],
        "gina": [check("4.2 rows", "failed", named("mask_transposed")), check("4.2 big", "crashed", rare)],
        # The same unnamed output, but from a named mistake both made: explained, not flagged.
        "henry": [check("4.2 rows", "failed", named("finite_negative_sentinel")), check("4.2 big", "failed", odd)],
        "ivan": [check("4.2 rows", "failed", named("finite_negative_sentinel")), check("4.2 big", "failed", odd)],
        # A check whose output two mistakes produce names both: another check names one of them alone
        # (in another exercise here): that one; or none does: both are counted.
        "jack": [check("4.2 rows", "failed", named("mask_after_softmax", "finite_negative_sentinel")),
                 check("4.3 all", "failed", named("finite_negative_sentinel"), exercise="4.3")],
        "kate": [check("4.2 rows", "failed", named("mask_after_softmax", "finite_negative_sentinel"))],
    }
    made = [report(name, t) for name, t in tests.items()]
    made.append({"submission": "_refused-1", "refused": "not a folder", "tests": [], "score": 0, "max_score": 4})
    return made


def lay_out(out: Path, files: dict[str, str]) -> dict[str, dict]:
    submissions = {}
    for name, text in files.items():
        path = tests_folder(out / "ctest", name) / "src" / SOFTMAX
        path.parent.mkdir(parents=True)
        path.write_text(text)
        submissions[name] = {"sources": {SOFTMAX: hashlib.sha256(text.encode()).hexdigest()}}
    return submissions


def main() -> int:
    missing = similarity.available() or (None if pages.jinja2 else "no python3-jinja2")
    if missing:
        print(f"skipped: {missing}")
        return 77
    chapters = [c for c in all_chapters() if c.folder == CH4]
    reference = (ROOT / "solutions" / SOFTMAX).read_text()
    stub = (ROOT / "exercises" / SOFTMAX).read_text()
    with tempfile.TemporaryDirectory(prefix="scalebook-analysis-") as temp:
        base, out = Path(temp), Path(temp) / "grades"
        root = base / "root"  # the instructor's tree as the analysis reads it: stubs and checks.cpp
        shutil.copytree(ROOT / "exercises" / CH4, root / "exercises" / CH4)
        (root / "chapters" / CH4).mkdir(parents=True)
        (root / "chapters" / CH4 / "checks.cpp").write_text(CHECKS)
        files = {"alice": reference, "bob": renamed(reference), "carol": INDEPENDENT_SOFTMAX, "dave": stub,
                 "erin": stub, HOSTILE: reference.replace("row_max", "peak"), "fiona": reference}
        submissions = lay_out(out, files)
        tampered = tests_folder(out / "ctest", "erin") / "src" / SOFTMAX  # not what was taken in
        tampered.write_text(reference)
        last_year = base / "last-year"
        for name in ("one", "two"):  # two identical references: never compared with each other
            (last_year / name / "exercises" / CH4).mkdir(parents=True)
            (last_year / name / "exercises" / SOFTMAX).write_text(reference.replace("sum", "total"))
        reports = make_reports()
        for r in reports:
            reports_folder(out, r["submission"]).mkdir(parents=True)
            (reports_folder(out, r["submission"]) / "report.json").write_text(json.dumps(r))
        result = analysis.analyse(out, reports, submissions, chapters, [str(last_year)], "abc", root)
        check_mistakes(result)
        check_shared(result)
        check_similarity(result, reference)
        check_stub_lines(stub, reference)
        check_pages(out, reports, result, chapters)
        check_hostile(base / "hostile")
    return finish("the class analysis counts named mistakes, finds copies and shared wrong answers, and tells no student")


def check_mistakes(result: dict) -> None:
    named = result["named_mistakes"]
    expect(named["graded"] == 11, f"11 graded submissions counted, the refused one not: {named['graded']}")
    ex = next(e for e in named["exercises"] if e["exercise"] == "4.2")
    got = {m["id"]: m["students"] for m in ex["mistakes"]}
    expect(got == {"mask_transposed": sorted(["alice", "gina", HOSTILE]), "mask_after_softmax": ["carol", "kate"],
                   "finite_negative_sentinel": ["henry", "ivan", "jack", "kate"]},
           f"each declared mistake with exactly the students whose message names it; an undeclared id not: {got}")
    texts = {m["id"]: m["text"] for m in ex["mistakes"]}
    expect(texts.get("mask_after_softmax") == "the mask applied after the softmax: the allowed weights not renormalised",
           f"a mistake's text is the checks' declaration, its string literals joined: {texts}")
    again = [(m["id"], m["students"], m["exercises"]) for m in named["teach_again"]]
    expect(again == [("finite_negative_sentinel", ["henry", "ivan", "jack", "kate"], ["4.2", "4.3"])],
           f"4 of 11 (in two exercises) is a third or more: taught again, once; 3 of 11 is not: {again}")
    most = ex["failed_most"]
    expect(most[0] == {"check": "4.2 big", "failed": 9} and most[1]["check"] == "4.2 rows" and most[1]["failed"] == 9,
           f"the checks failed most, crashes included, with their counts: {most}")


def check_shared(result: dict) -> None:
    shared = [(s["check"], s["students"]) for s in result["shared_wrong_answers"]]
    expect(shared == [("4.2 big", ["alice", "bob"])],
           "only the rare wrong output two share is flagged (not one four share, not a named mistake, not an "
           f"error-path check's, not a crash's, not one two share who made the same named mistake): {shared}")


def check_stub_lines(stub: str, reference: str) -> None:
    blanked = similarity.without_stub(stub + "  int mine = 1;\n", stub)
    expect(blanked.strip() == "int mine = 1;" and blanked.count("\n") == stub.count("\n") + 1,
           f"the stub's lines are blanked, the student's own kept on its own line number: {blanked.strip()[:80]}")
    kept = similarity.without_stub(reference, stub)
    expect("row_max" in kept and "namespace scalebook::ch04 {" not in kept,
           "a solution keeps its own lines and loses those it shares with the stub")


def check_similarity(result: dict, reference: str) -> None:
    exercise = next(e for e in result["similarity"]["exercises"] if e["exercise"] == "4.2")
    pairs = similarity.flagged_pairs(exercise)
    expect(("alice", "bob") in pairs, f"the renamed-variable copy is flagged: {pairs}")
    expect(("alice", HOSTILE) in pairs, f"a copy with one name changed is flagged: {pairs}")
    expect(not any("carol" in p for p in pairs), f"the independent correct solution is not flagged: {pairs}")
    expect(not any("dave" in p or "erin" in p for p in pairs),
           f"two untouched stubs are not flagged (the stub's lines do not count); a file changed since intake is "
           f"left out: {pairs}")
    with_reference = {p for p in pairs if any(x.startswith("reference:") for x in p)}
    expected = {tuple(sorted((s, f"reference:last-year/{r}"))) for s in ("alice", "bob", "fiona", HOSTILE)
                for r in ("one", "two")}
    expect(with_reference == expected, "the copies of a reference folder's file are flagged with each reference, "
           f"and the references are not compared with each other: {sorted(with_reference)}")
    expect(exercise["compared"] == 6, f"six class files compared (the tampered one left out): {exercise['compared']}")
    pair = next(p for p in exercise["pairs"] if (p["a"], p["b"]) == ("alice", "bob"))
    identical = [g["files"] for g in exercise["identical"]]
    expect(identical == [["alice", "fiona"]] and ("bob", "fiona") in pairs and ("fiona", HOSTILE) in pairs,
           f"identical files are one group, flagged with what their first is like: {identical}")
    run = pair["runs"][0]
    line = 1 + next(i for i, text in enumerate(reference.splitlines()) if "double row_max" in text)
    expect(run["a_lines"] == run["b_lines"] and run["a_lines"][0] <= line <= run["a_lines"][1],
           f"a shared run's lines in each file, for the side-by-side view: {run}")


def check_pages(out: Path, reports: list[dict], result: dict, chapters) -> None:
    context = pages.make_context(ROOT, chapters, date="2026-01-01", commit="abc")
    pages.write_class_page(reports, out / "index.html", context, result)
    for r in reports:
        pages.write_feedback(r, reports_folder(out, r["submission"]) / "feedback.html", context)
    index = (out / "index.html").read_text()
    similar = (out / "similarity.html").read_text()
    expect("What the class got wrong" in index and "To teach again" in index and "finite_negative_sentinel" in index,
           "the class page has the analysis section and, at the top, the mistake to teach again")
    expect(index.index("To teach again") < index.index("Students × chapters"), "the mistake to teach again is at the top")
    expect("<script>alert" not in index + similar and "x&lt;script&gt;alert(1)&lt;/script&gt;" in similar,
           "a student's name is text on both pages, never markup")
    expect("signal, not proof" in similar and "my_row_max" in similar, "the similarity page says what it is and shows runs")
    data = json.loads((out / "analysis.json").read_text())
    expect(data["shared_wrong_answers"] == result["shared_wrong_answers"], "analysis.json holds the analysis")
    for r in reports:
        name = r["submission"]
        others = [o["submission"] for o in reports if o["submission"] != name and len(o["submission"]) > 4]
        folder = reports_folder(out, name)
        text = "".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())
        leaked = [o for o in others if o in text]
        expect(not leaked and "similar" not in text.lower() and "known mistake" not in text.replace(
            "known mistake [", ""), f"{name}'s own folder says nothing about another student: {leaked}", quiet=True)
    expect(sorted(p.name for p in out.iterdir()) == ["analysis.json", "ctest", "index.html", "similarity.html",
                                                    "students"],
           "the analysis writes beside the class page, in the grader's names, nothing under students/")


def check_hostile(out: Path) -> None:
    """The analysis of hostile_reports' class, and of reports forged into odd shapes, on the pages."""
    forged = {"status": "failed", "name": BREAKOUTS, "exercise": BREAKOUTS, "chapter": CH4, "message": BREAKOUTS,
              "mistakes": "not a list"}
    reports = the_class() + [report(SCRIPT, [forged]), report(SCRIPT + "2", [forged])]
    odd = [{"submission": 5, "tests": [{"status": "failed"}, "not a check"]}, {"submission": "x", "tests": "none"}]
    result = analysis.analyse(out, reports + odd, {}, [c for c in all_chapters() if c.folder == CH4], [], "abc")
    context = pages.make_context(ROOT, [], date="2026-01-01", commit="abc")
    pages.write_class_page(reports, out / "index.html", context, result)
    page = (out / "index.html").read_text()
    flagged = [g["students"] for g in result["shared_wrong_answers"]]
    expect([SCRIPT, SCRIPT + "2"] in flagged and "forged row</td>" not in page and "<h1 id=forged" not in page
           and "<script>window" not in page, "a forged report's shared message is flagged and shown as text")


if __name__ == "__main__":
    sys.exit(main())
