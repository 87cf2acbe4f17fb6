#!/usr/bin/env python3
"""End-to-end test of ./workbook grade on submissions made for the purpose.

Each fixture is the reference solutions (or the stubs) with one deliberate defect patched in, so the
fixtures never drift from the chapters: a chapter that does not compile, a crash, a hang, a process
that exits early, one that prints a fake success, and a whole-copy submission that edits its tests
and build files. Grading must give each the statuses the README promises, keep the maximum from the
instructor's tree, and leave every submission folder untouched.
"""
from __future__ import annotations

import csv
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.harness import ROOT, WORKBOOK, course_chapter, expect, finish

# The course's chapters graded here, by the functions the fixtures patch (tests/harness.py says why).
SCORES = course_chapter("dot_scores", "scaled_scores", "softmax_rows", "row_entropy")
MASKS = course_chapter("causal_mask")
CH3, CH4 = SCORES.folder, MASKS.folder
CH4_FILE = MASKS.file("causal_mask")
CH3_DOT, CH3_SCALED, CH3_ENTROPY = SCORES.file("dot_scores"), SCORES.file("scaled_scores"), SCORES.file("row_entropy")
DOT, SCALED, SOFTMAX, ENTROPY = (SCORES.id(f) for f in ("dot_scores", "scaled_scores", "softmax_rows", "row_entropy"))
MASK = MASKS.id("causal_mask")


def patch(path: Path, signature: str, body_line: str, include: str = "") -> None:
    """Inserts body_line as the first statement of the function whose definition starts `signature`."""
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(signature) and line.endswith("{"))
    lines.insert(at + 1, "  " + body_line)
    if include:
        lines.insert(0, include)
    path.write_text("\n".join(lines) + "\n")


def make_fixtures(base: Path) -> dict[str, Path]:
    solutions, stubs = ROOT / "solutions", ROOT / "exercises"
    made = {}

    def from_solutions(name: str) -> Path:
        shutil.copytree(solutions, base / name)  # the "just exercises/" form
        made[name] = base / name
        return base / name

    from_solutions("reference")

    whole = base / "stubs"  # the "whole copy of the workbook" form
    shutil.copytree(stubs, whole / "exercises")
    made["stubs"] = whole

    broken = from_solutions("does-not-compile")
    with open(broken / CH3_ENTROPY, "a") as out:
        out.write("\nthis line is not C++;\n")

    patch(from_solutions("crashes") / CH3_DOT, "Matrix dot_scores(",
          "{ volatile int* null = nullptr; *null = 1; }")
    patch(from_solutions("hangs") / CH4_FILE, "BoolMatrix causal_mask(",
          "std::this_thread::sleep_for(std::chrono::hours(1));", include="#include <thread>")
    patch(from_solutions("exits-early") / CH3_ENTROPY, "Vector row_entropy(", "std::exit(0);",
          include="#include <cstdlib>")
    patch(from_solutions("prints-pass") / CH4_FILE, "BoolMatrix causal_mask(",
          'std::puts("[doctest] Status: SUCCESS!"); std::fflush(stdout); std::_Exit(0);',
          include="#include <cstdio>\n#include <cstdlib>")

    # A helper copied between two files: costs those two exercises only.
    for name in (CH3_DOT, CH3_SCALED):
        path = (made.get("helper") or from_solutions("helper")) / name
        text = path.read_text()
        at = text.index(f"namespace {SCORES.namespace} {{")
        path.write_text(text[:at] + "double helper(double x) { return 2 * x; }\n" + text[at:])

    # dot_scores's file does not compile: scaled_scores's, which calls dot_scores, cannot run.
    with open(from_solutions("dependency") / CH3_DOT, "a") as out:
        out.write("\nint broken = ;\n")

    # Edits its tests and build files to pass everything; its exercises are the stubs.
    hostile = base / "edits-tests"
    shutil.copytree(stubs, hostile / "exercises")
    for chapter in (CH3, CH4):
        (hostile / "chapters" / chapter).mkdir(parents=True)
        (hostile / "chapters" / chapter / "checks.cpp").write_text(
            f'#include <doctest/doctest.h>\nTEST_CASE("{DOT} always passes") {{ CHECK(true); }}\n')
    (hostile / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.25)\nproject(x)\n")
    made["edits-tests"] = hostile
    return made


def tree_hash(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        digest.update(str(path.relative_to(folder)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def by_exercise(report: dict, prefix: str) -> list[dict]:
    return [t for t in report["tests"] if t["exercise"].startswith(prefix)]


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="scalebook-grading-") as temp:
        base = Path(temp)
        fixtures = make_fixtures(base / "submissions")
        before = {name: tree_hash(path) for name, path in fixtures.items()}
        out = base / "grades"
        start = time.monotonic()
        timeout = 2
        result = subprocess.run([sys.executable, str(WORKBOOK), "grade", "--out", str(out),
                                 "--chapters", f"{SCORES.number},{MASKS.number}", "--jobs", "2", "--timeout", str(timeout),
                                 *map(str, fixtures.values())],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        elapsed = time.monotonic() - start
        print(result.stdout)
        expect(result.returncode == 0, f"grade exits 0 when every submission was graded (got {result.returncode})")

        reports = {}  # the instructor's records: every check, the hidden ones too (the students' views below)
        for name in fixtures:
            path = out / "ctest" / "students" / name / "record.json"
            expect(path.exists() and (out / "students" / name / "report.json").exists(),
                   f"{name}: record.json and report.json written")
            if path.exists():
                reports[name] = json.loads(path.read_text())
        if len(reports) != len(fixtures):
            return finish("every grading expectation holds")

        maximum = reports["reference"]["max_score"]
        expect(maximum > 0, "the reference has checks")
        for name, report in reports.items():
            expect(report["max_score"] == maximum, f"{name}: maximum {report['max_score']} is the instructor's {maximum}")
            expect(report["submission"] == name, f"{name}: named after its folder")
            for test in report["tests"]:
                for field in ("name", "chapter", "exercise", "status", "points", "max_points", "message"):
                    expect(field in test, f"{name}: test entry has '{field}'")
            expect(before[name] == tree_hash(fixtures[name]), f"{name}: submission folder untouched")

        ref = reports["reference"]
        expect(ref["score"] == maximum and all(t["status"] == "passed" for t in ref["tests"]),
               "the reference solutions get full marks")
        stubs = reports["stubs"]
        expect(stubs["score"] == 0, f"the untouched stubs get zero (got {stubs['score']})")
        expect(all("not implemented yet" in t["message"] for t in stubs["tests"] if t["status"] == "failed"),
               "a stub's failure message says 'not implemented yet'")

        broken = reports["does-not-compile"]
        ex5 = by_exercise(broken, ENTROPY)
        expect(ex5 and all(t["status"] == "compile_error" for t in ex5),
               "an exercise file that does not compile: its checks are compile_error")
        expect(all("error" in t["message"] and Path(CH3_ENTROPY).name in t["message"] for t in ex5),
               "compile_error carries the compiler's first error in the student's file")
        expect(all(t.get("line", 0) > 0 and "this line is not C++" in t.get("source_line", "") for t in ex5),
               "compile_error names the line and shows the student's line")
        expect(all(t.get("hint") for t in ex5), "a failed check carries its exercise's first hint")
        others = [t for t in broken["tests"] if not t["exercise"].startswith(ENTROPY)]
        expect(all(t["status"] == "passed" for t in others),
               "the chapter's other exercises and the other chapter keep their points")

        crashes = reports["crashes"]
        expect(all(t["status"] == "crashed" for t in by_exercise(crashes, DOT)), f"a segfault in {DOT} is 'crashed'")
        expect(all("SIGSEGV" in t["message"] for t in by_exercise(crashes, DOT)), "the crash names the signal")
        expect(all(t["status"] == "passed" for t in by_exercise(crashes, SOFTMAX) + by_exercise(crashes, f"{MASKS.number}.")),
               "checks that do not call the crashing function still pass")

        hangs = reports["hangs"]
        expect(all(t["status"] == "timed_out" for t in by_exercise(hangs, MASK)), f"a hang in {MASK} is 'timed_out'")
        expect(all(t["status"] == "passed" for t in by_exercise(hangs, f"{SCORES.number}.")), "a hang in the other chapter costs this one nothing")
        # A check that calls a hanging function a dozen times waits out the limit once: the function
        # is not called again in that check (lib/remote/client.cpp). Compiling takes a few seconds.
        # Measured against the submissions of the same size graded in the same run, so that the
        # compiles and a busy machine count on both sides.
        hung = sum(t["status"] == "timed_out" for t in hangs["tests"])
        baseline = max(reports[n]["seconds"] for n in ("crashes", "exits-early", "prints-pass"))
        expect(hung > 0 and hangs["seconds"] - baseline < hung * timeout + 5,
               f"{hung} timed-out checks cost one time-out each ({hangs['seconds']:.0f} s for {hung} x {timeout} s, "
               f"beside {baseline:.0f} s for a submission that does not hang)")

        early = reports["exits-early"]
        expect(all(t["status"] != "passed" and "student process ended" in t["message"]
                   for t in by_exercise(early, ENTROPY)), "exit(0) inside an exercise fails its checks")
        expect(all(t["status"] == "passed" for t in by_exercise(early, DOT)), "other exercises still pass")

        helper = reports["helper"]
        wanted = (f"{DOT} and {SCALED} both define helper(double) (exercises/{CH3_DOT} and "
                  f"exercises/{CH3_SCALED}): make it static, or put it in an unnamed namespace, in each file")
        expect(all(t["status"] == "compile_error" and t["message"] == wanted
                   for t in by_exercise(helper, DOT) + by_exercise(helper, SCALED)),
               f"a helper defined in two files costs those two: {by_exercise(helper, DOT)[0]['message']}")
        expect(all(t["status"] == "passed" for t in helper["tests"] if t["exercise"] not in (DOT, SCALED)),
               "every other exercise keeps its verdict")
        dependency = reports["dependency"]
        expect(all(t["status"] == "not_run" and t["message"].startswith(
                   f"not run: {DOT} does not compile \u2014 exercises/{CH3_DOT}:")
                   for t in by_exercise(dependency, SCALED)),
               f"an exercise calling one that does not compile is not run: {by_exercise(dependency, SCALED)[0]['message']}")
        expect(all(t["status"] == "passed" for t in by_exercise(dependency, SOFTMAX)
                   + by_exercise(dependency, f"{MASKS.number}.")),
               "exercises that do not call it keep their verdicts")

        fake = reports["prints-pass"]
        expect(all(t["status"] != "passed" for t in by_exercise(fake, MASK)), "printing a fake success earns nothing")

        hostile = reports["edits-tests"]
        expect(hostile["score"] == 0, f"edited tests and build files gain nothing (got {hostile['score']})")

        with open(out / "grades.csv") as f:
            rows = list(csv.reader(f))
        chapters = [CH3, CH4]  # one column per graded chapter, in syllabus order
        expect(rows[0] == ["submission", *chapters, "total", "maximum", "note"], f"grades.csv header {rows[0]}")
        expect(sorted(r[0] for r in rows[1:]) == sorted(fixtures), "grades.csv has one row per submission")
        total = 1 + len(chapters)
        for row in rows[1:]:
            expect(sum(int(x) for x in row[1:total]) == int(row[total]) == reports[row[0]]["score"],
                   f"{row[0]}: csv totals add up")

        junit = ET.parse(out / "students" / "crashes" / "junit.xml").getroot()
        shown = json.loads((out / "students" / "crashes" / "report.json").read_text())  # hidden checks counted
        expect(len(junit.findall("testcase")) == len(shown["tests"]), "junit.xml has one testcase per check the student sees")
        expect(len(junit.findall("testcase/error")) == sum(t["status"] in ("crashed", "timed_out", "compile_error",
                                                                           "not_run")
                                                          for t in shown["tests"]), "crashes are junit errors")

        # Bounded time: every hung check is stopped at the timeout.
        expect(elapsed < 300, f"grading {len(fixtures)} submissions took {elapsed:.0f} s")
        print(f"graded {len(fixtures)} fixture submissions in {elapsed:.1f} s")

        # The CTest tree: one check of one student again, with nothing but CTest.
        check = SCORES.first_check("dot_scores")
        again = subprocess.run(["ctest", "--test-dir", str(out), "-R", "crashes/.*" + re.escape(check),
                                "--output-on-failure"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(again.stdout[-1500:])
        expect(f"crashes/{CH3}/{check}" in again.stdout and
               "SIGSEGV" in again.stdout and "1 tests failed out of 4" in again.stdout,
               "ctest -R re-runs one check of one submission (with its start, build and batch fixtures; by hand "
               "the batch runs nothing and the check runs alone) and shows why")
        label = MASKS.chapter.target
        chapter = subprocess.run(["ctest", "--test-dir", str(out), "-L", f"^{label}$", "-j", "2"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        runs = re.findall(rf"Test +#\d+: (\S+)/{re.escape(CH4)}/{MASKS.number}\.", chapter.stdout)
        expect(len(set(runs)) == len(fixtures) and f"/{CH3}/{SCORES.number}." not in chapter.stdout,
               f"ctest -L {label} regrades that chapter of every submission and nothing else ({len(set(runs))})")
    return finish("every grading expectation holds")


if __name__ == "__main__":
    sys.exit(main())
