#!/usr/bin/env python3
"""A hidden check's running time reaches nothing a student is given (grading/hidden.py).

One student, `kim`, is graded twice on chapter 4 (its hidden checks included), each time into a
folder of its own, by the names policy (each hidden check shown by its label and verdict) with every
export (the gradebook files and the autograders' results.json): once with the solutions, once with the solutions made to sleep 2 s whenever masked_softmax
is given more than 12 rows, which only a hidden check does (no visible check's sequence is longer than
12). Both earn every point. The instructor's records must show the sleep (the control: the slow
run's seconds are at least 1.5 s more), and everything the student is given (DIR/students/kim/:
report.json, junit.xml, feedback.html; DIR/exports/: every file) must be the same bytes in both runs.
Before, report.json's and junit.xml's seconds and Gradescope's execution_time told the sleep. A
minute or two: label long.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from scalebook.grading.export import AUTOGRADER_FORMATS, FORMATS
from tests.harness import ROOT, expect, finish

CH4 = "04-causal-masking"
COMMAND = ROOT / "workbook"
SLEEP = ("  if (scores.rows() > 12) std::this_thread::sleep_for(std::chrono::seconds(2));  "
         "// only a hidden check's rows are this long\n")


def submission(folder: Path, slow: bool) -> None:
    shutil.copytree(ROOT / "solutions" / CH4, folder / "exercises" / CH4)
    if slow:
        path = folder / "exercises" / CH4 / "ex2_masked_softmax.cpp"
        lines = path.read_text().splitlines(keepends=True)
        at = next(i for i, line in enumerate(lines) if line.startswith("Matrix masked_softmax(")) + 1
        path.write_text("#include <chrono>\n#include <thread>\n" + "".join(lines[:at]) + SLEEP + "".join(lines[at:]))


def given(out: Path) -> dict[str, bytes]:
    """Every file a student may be given: their own folder and the exports."""
    files = {}
    for top in ("students", "exports"):
        for path in sorted((out / top).rglob("*")):
            if path.is_file():
                files[str(path.relative_to(out))] = path.read_bytes()
    return files


def main() -> int:
    base = Path(tempfile.mkdtemp(prefix="scalebook-hidden-timing-"))
    try:
        roster = base / "roster.csv"
        roster.write_text("id,name,email,repository,deadline,section,login,canvas_id\n"
                          "kim,Kim Kay,kim@uni.example,kim.git,,A,kim,101\n")
        outputs = {}
        for kind in ("fast", "slow"):
            submission(base / kind / "kim", kind == "slow")
            out = base / f"grades-{kind}"
            done = subprocess.run([str(COMMAND), "grade", "--out", str(out), "--chapters", "4", "--jobs", "1",
                                   "--show-hidden", "names", "--roster", str(roster),
                                   "--export", ",".join(FORMATS + AUTOGRADER_FORMATS),
                                   "--assignment", "Causal masking", "--prairielearn-qid", "causal-masking",
                                   str(base / kind / "kim")],
                                  capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=1800)
            print(done.stdout[-2500:] + done.stderr[-2500:])
            expect(done.returncode == 0, f"{kind}: grade exits 0 ({done.returncode})")
            outputs[kind] = out
        records = {kind: json.loads((out / "ctest" / "students" / "kim" / "record.json").read_text())
                   for kind, out in outputs.items()}
        hidden = [t for t in records["slow"]["tests"] if t.get("hidden")]
        expect(all(r["score"] == r["max_score"] for r in records.values()) and len(hidden) >= 2,
               f"both runs earn every point, hidden checks included: "
               f"{[(r['score'], r['max_score']) for r in records.values()]}")
        gap = records["slow"]["seconds"] - records["fast"]["seconds"]
        expect(gap >= 1.5, f"control: the instructor's record shows the slow run's sleep ({gap:+.2f} s)")
        fast, slow = given(outputs["fast"]), given(outputs["slow"])
        differing = sorted(name for name in set(fast) | set(slow) if fast.get(name) != slow.get(name))
        expect(len(fast) >= 3 + len(FORMATS + AUTOGRADER_FORMATS) and not differing,
               f"everything the student is given is the same bytes in both runs ({len(fast)} files; "
               f"differing: {differing})")
        shown = b"".join(fast.values()).decode(errors="replace")
        names = [t["name"] for t in hidden]
        expect(not any(n in shown for n in names) and all(t["label"] in shown for t in hidden),
               "by the names policy the student's files show each hidden check's label, never its name")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return finish("nothing a student is given depends on how long a hidden check ran")


if __name__ == "__main__":
    raise SystemExit(main())
