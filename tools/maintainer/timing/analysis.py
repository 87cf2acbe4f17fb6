"""Times the class analysis (./workbook time analysis) on a generated class of the whole workbook.

The merge step's analysis (grading/analysis.py: analysis.json, similarity.html, the class page with
its section) on STUDENTS generated submissions laid out as grading leaves them (DIR/ctest/students/
NAME/src, DIR/students/NAME/report.json): each one the reference solutions of every chapter with
MUTANTS bug-zoo mutants applied (fixed seed), or, for a share COPIES of them, an earlier one's files
with every variable renamed. Its report is made up to the checks' message form: every check of an
exercise with a mutant fails, two of them naming the mutant as a known mistake ("known mistake
[ID]"), one with a value of its own. The files are real, so the similarity engine's work is what a
class of this size costs. Prints the wall time, the CPU time (this process and its children: the
engine's node processes) and the machine's load.

    ./workbook time analysis [--students 200] [--mutants 2] [--copies 0.2] [--seed 1] [--distinct]

Files that are the same once the stub's lines are blanked are compared once (grading/similarity.py);
--distinct gives each file a line of its own, the case where the engine compares every pair.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import random
import resource
import tempfile
import time
from pathlib import Path

from maintainer.generated_class import all_mutants, apply_mutant, mutant_file, reference_copy, renamed
from scalebook.course import all_chapters
from scalebook.files import write_json
from scalebook.grading.run import Run, write_analysis, write_pages
from scalebook.grading.report import record_path
from scalebook.grading.tree import reports_folder, tests_folder

CHECKS_PER_EXERCISE = 4


def make_student(out: Path, name: str, chapters, mutants: list[tuple[str, str]], copy_of: str | None,
                 distinct: bool) -> dict:
    """NAME's files in DIR/ctest/students/NAME/src; returns its plan entry (the files' digests).
    DISTINCT: every file gets a line of code of its own, so that no two are the same."""
    src = tests_folder(out / "ctest", name) / "src"
    if copy_of is None:
        reference_copy(src, [c.folder for c in chapters])
        for chapter, mutant in mutants:
            apply_mutant(src, chapter, mutant)
    else:
        for path in (tests_folder(out / "ctest", copy_of) / "src").rglob("*.cpp"):
            target = src / path.relative_to(tests_folder(out / "ctest", copy_of) / "src")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(renamed(path.read_text(), "mine"))
    if distinct:
        for path in src.rglob("*.cpp"):
            text = path.read_text()
            at = text.index("\nnamespace scalebook::")
            path.write_text(text[:at] + f"\n[[maybe_unused]] static const int {name}_tag = 1;" + text[at:])
    return {"sources": {str(p.relative_to(src)): hashlib.sha256(p.read_bytes()).hexdigest()
                        for p in src.rglob("*.cpp")}, "refused_files": []}


def made_up_report(name: str, chapters, mutants: list[tuple[str, str]]) -> dict:
    broken = {mutant_file(chapter, mutant): mutant for chapter, mutant in mutants}
    tests = []
    for chapter in chapters:
        for exercise in chapter.exercises:
            mutant = broken.get(f"{chapter.folder}/{chapter.source_of(exercise)}")
            for k in range(CHECKS_PER_EXERCISE):
                failed = mutant is not None and k < 3
                message = "" if not failed else (
                    f"{exercise} check {k} is wrong | the output matches known mistake [{mutant}]: what it is"
                    if k < 2 else f"near(out, expected) is matrices differ: actual {len(mutant)} vs expected 1")
                tests.append({"name": f"{exercise} check {k}", "chapter": chapter.folder, "exercise": exercise,
                              "status": "failed" if failed else "passed", "points": 0 if failed else 1,
                              "max_points": 1, "message": message})
    return {"submission": name, "score": sum(t["points"] for t in tests), "max_score": len(tests),
            "tests": tests, "date": "", "commit": "timing", "refused_files": []}


def distinct_files(mutants: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """MUTANTS, in order, without a second one of a file already changed (they would not apply)."""
    files, kept = set(), []
    for chapter, mutant in mutants:
        if mutant_file(chapter, mutant) not in files:
            files.add(mutant_file(chapter, mutant))
            kept.append((chapter, mutant))
    return kept


def make_class(out: Path, args) -> Run:
    rng = random.Random(args.seed)
    chapters = all_chapters()
    zoo = all_mutants()
    plan = Run(out)
    plan.chapters, plan.commit, plan.submissions, plan.refused = chapters, "timing", {}, []
    applied: dict[str, list] = {}
    for index in range(args.students):
        name = f"student{index:03d}"
        copy_of = rng.choice(list(applied)) if applied and rng.random() < args.copies else None
        mutants = applied[copy_of] if copy_of else distinct_files(rng.sample(zoo, len(zoo)))[:args.mutants]
        applied[name] = mutants
        plan.submissions[name] = make_student(out, name, chapters, mutants, copy_of, args.distinct)
        report = made_up_report(name, chapters, mutants)
        reports_folder(out, name).mkdir(parents=True)
        write_json(reports_folder(out, name) / "report.json", report)
        write_json(record_path(out, name), report)  # what the merge step reads (Run.reports)
    plan.save()
    return plan


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="./workbook time analysis", description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--mutants", type=int, default=2, help="bug-zoo mutants per submission (default 2)")
    parser.add_argument("--copies", type=float, default=0.2, help="share of renamed copies (default 0.2)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--distinct", action="store_true",
                        help="a line of its own in every file: no two files alike (the engine compares every one)")
    args = parser.parse_args(argv)
    if args.students < 2 or not 0 <= args.copies < 1 or args.mutants < 0:
        parser.error("--students must be at least 2, --copies in [0, 1), --mutants at least 0")
    with tempfile.TemporaryDirectory(prefix="scalebook-time-analysis-") as temporary:
        out = Path(temporary)
        (out / "ctest").mkdir()
        plan = make_class(out, args)
        reports = plan.reports()
        files = sum(len(e["sources"]) for e in plan.submissions.values())
        load = os.getloadavg()
        cpu = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        analysis = write_analysis(plan, reports)
        write_pages(reports, out, plan.chapters, plan.commit, [], analysis)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        used = sum(a.ru_utime + a.ru_stime - b.ru_utime - b.ru_stime for a, b in zip(after, cpu))
        pairs = sum(e["pairs_above"] for e in analysis["similarity"]["exercises"])
        sizes = {p: (out / p).stat().st_size // 1024 for p in ("analysis.json", "similarity.html", "index.html")}
    print(f"{args.students} submissions, {files} exercise files, {len(reports[0]['tests'])} checks each "
          f"({args.mutants} mutants each, {args.copies:.0%} renamed copies{', every file distinct' * args.distinct}):")
    print(f"  analysis step: {wall:.1f} s wall, {used:.1f} s CPU (with the engine) on {len(os.sched_getaffinity(0))} "
          f"cores; load average before {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"  {pairs} similar pairs, {len(analysis['shared_wrong_answers'])} shared wrong answers, "
          f"{len(analysis['named_mistakes']['teach_again'])} mistakes to teach again; "
          + ", ".join(f"{p} {k} KiB" for p, k in sizes.items()))
    return 0
