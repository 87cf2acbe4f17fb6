"""Times the grading pages (./workbook time pages) for a class of synthetic reports.

How long the grading pages take for a class: N synthetic reports shaped like the whole workbook
(every chapter and exercise of this tree, 4 checks each, a fixed-seed mix of statuses and messages of
a few hundred characters, some compile errors), then every feedback.html and the class page,
written into a scratch folder. Prints the time per feedback page and for the class page.

    ./workbook time pages [--students 200] [--seed 1]
"""
from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from scalebook.grading import pages

STATUSES = ["passed"] * 6 + ["failed", "crashed", "timed_out", "compile_error"]


def synthetic_report(name: str, context: dict, rng: random.Random) -> dict:
    tests = []
    for chapter in context["chapters"]:
        for exercise in chapter["exercises"]:
            broken = rng.random() < 0.05
            for k in range(4):
                status = "compile_error" if broken else rng.choice(STATUSES[:-1])
                message = "" if status == "passed" else (
                    f"{exercise['id']} check {k}: expected 0.7071 near 1.0 (tolerance 1e-9); "
                    + "values differ at (2, 3) " * rng.randint(1, 12))
                test = {"name": f"{exercise['id']} check {k}", "chapter": chapter["folder"],
                        "exercise": exercise["id"], "status": status,
                        "points": 1 if status == "passed" else 0, "max_points": 1, "message": message}
                if broken:
                    test.update(file=f"{chapter['folder']}/ex_{exercise['function']}.cpp", line=12,
                                source_line="  return q * k.transpose() / d_k  // missing ;")
                tests.append(test)
    return {"submission": name, "score": sum(t["points"] for t in tests),
            "max_score": sum(t["max_points"] for t in tests), "seconds": 10.0,
            "date": context["date"], "commit": context["commit"], "refused_files": [], "tests": tests}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="./workbook time pages", description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.students < 1:
        parser.error("--students must be at least 1")
    context = pages.make_context()
    rng = random.Random(args.seed)
    reports = [synthetic_report(f"student{i}", context, rng) for i in range(args.students)]
    checks = len(reports[0]["tests"])
    with tempfile.TemporaryDirectory(prefix="scalebook-time-pages-") as temporary:
        folder = Path(temporary)
        start = time.perf_counter()
        for report in reports:
            pages.write_feedback(report, folder / report["submission"] / "feedback.html", context)
        feedback = time.perf_counter() - start
        start = time.perf_counter()
        pages.write_class_page(reports, folder / "index.html", context)
        class_page = time.perf_counter() - start
        sizes = [p.stat().st_size for p in folder.glob("*/feedback.html")]
        index_size = (folder / "index.html").stat().st_size
    print(f"{args.students} students, {checks} checks each:")
    print(f"  feedback pages: {feedback:.2f} s in all, {1000 * feedback / args.students:.1f} ms each "
          f"(about {sum(sizes) / len(sizes) / 1024:.0f} KiB each)")
    print(f"  class page:     {class_page:.2f} s ({index_size / 1024:.0f} KiB)")
    return 0
