#!/usr/bin/env python3
"""The class analysis after a real grading run: a generated class of chapter 4. A minute or two: long.

Fourteen submissions of chapter 4, each the reference with at most one change: bug-zoo mutants
applied to known students (mask_transposed to five, a third of the class or more; diagonal_masked
to one; finite_negative_sentinel to two; mask_after_softmax to one), a copy of another student's
files with every variable renamed, an independent correct masked softmax, and two students with the
same odd bug (row 2 never sees key 0), written two different ways. `./workbook grade` must write
a class page that counts exactly those named mistakes for exactly those students and puts the one
a third made at the top, a similarity page that flags the renamed copy and not the independent
solution, and the odd bug's pair as a shared wrong answer; and no student's folder may say
anything of another student.
"""
from __future__ import annotations

import json
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from maintainer.generated_class import (CH4, INDEPENDENT_SOFTMAX, SOFTMAX, apply_mutant, reference_copy,
                                        renamed_copy)
from scalebook.grading.similarity import flagged_pairs
from tests.harness import WORKBOOK, expect, finish

MUTANTS = {"mask_transposed": ["birch", "cedar", "dogwood", "eucalyptus", "sequoia"],
           "diagonal_masked": ["ginkgo"], "finite_negative_sentinel": ["hazel", "holly"],
           "mask_after_softmax": ["juniper"]}
MASK = f"{CH4}/ex1_causal_mask.cpp"
MASK_LINE = "    for (Index j = 0; j < n_k; ++j) allowed(i, j) = j <= i + offset;"
ODD = {"oakwood": MASK_LINE.replace("j <= i + offset;", "j <= i + offset && !(i == 2 && j == 0);"),
       "pinewood": MASK_LINE + "\n  if (n_q > 2) allowed(2, 0) = false;"}


def make_class(into: Path) -> list[Path]:
    made = [reference_copy(into / "alder", [CH4])]
    for mutant, students in MUTANTS.items():
        for name in students:
            apply_mutant(reference_copy(into / name, [CH4]), CH4, mutant)
            made.append(into / name)
    made.append(renamed_copy(into / "alder", into / "larch"))
    made.append(reference_copy(into / "maple", [CH4]))
    (into / "maple" / SOFTMAX).write_text(INDEPENDENT_SOFTMAX)
    for name, line in ODD.items():
        path = reference_copy(into / name, [CH4]) / MASK
        text = path.read_text()
        assert text.count(MASK_LINE) == 1, "the reference's mask loop moved: update this test"
        path.write_text(text.replace(MASK_LINE, line))
        made.append(into / name)
    return made


def check_mistakes(data: dict) -> None:
    named = data["named_mistakes"]
    found: dict[str, set] = {}
    for exercise in named["exercises"]:
        for mistake in exercise["mistakes"]:
            found.setdefault(mistake["id"], set()).update(mistake["students"])
    expected = {mutant: set(students) for mutant, students in MUTANTS.items()}
    expect(found == expected, f"the named mistakes counted are exactly the mutants applied, for exactly the students "
           f"they were applied to: {sorted((k, sorted(v)) for k, v in found.items())}")
    expect([m["id"] for m in named["teach_again"]] == ["mask_transposed"],
           f"the mistake five of fourteen made is to teach again, and no other: {named['teach_again']}")


def check_similarity(data: dict) -> None:
    softmax = next(e for e in data["similarity"]["exercises"] if e["exercise"] == "4.2")
    pairs = flagged_pairs(softmax)
    expect(softmax["pairs_above"] == len(pairs), f"every pair of this class is in analysis.json ({len(pairs)})")
    expect(("alder", "larch") in pairs, "the renamed-variable copy is flagged with its source")
    expect(not any("maple" in p for p in pairs), f"the independent masked softmax is flagged with no one: "
           f"{sorted(p for p in pairs if 'maple' in p)}")


def check_shared(data: dict) -> None:
    groups = [(g["exercise"], g["check"], g["students"]) for g in data["shared_wrong_answers"]]
    expect(groups and all(students == ["oakwood", "pinewood"] for _, _, students in groups),
           f"the odd bug written two ways is flagged as a shared wrong answer, and nothing else is: {groups}")


def check_private(out: Path, names: list[str]) -> None:
    for name in names:
        folder = out / "students" / name
        text = "".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())
        others = [n for n in names if n != name and n in text]
        expect(not others and "similar" not in text.lower(), f"{name}'s own files say nothing of another student: "
               f"{others}", quiet=True)
        report = json.loads((folder / "report.json").read_text())
        own = {m for t in report["tests"] for m in t.get("mistakes", [])}
        mine = {m for m, students in MUTANTS.items() if name in students}
        expect(mine <= own and (own or not mine) and (mine or not own),
               f"{name}'s report carries the ids its checks named, its own mistake's among them: {sorted(own)}",
               quiet=True)
    for page in ("analysis.json", "similarity.html", "index.html"):
        mode = stat.S_IMODE((out / page).stat().st_mode)
        expect(mode & 0o077 == 0, f"{page} is the grading user's alone ({mode:o})")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="scalebook-analysis-class-") as temp:
        base = Path(temp)
        submissions = make_class(base / "class")
        out = base / "grades"
        started = time.monotonic()
        done = subprocess.run([sys.executable, str(WORKBOOK), "grade", "--out", str(out), "--chapters", "4",
                               "--jobs", "2", *map(str, submissions)], capture_output=True, text=True)
        print(done.stdout[-3000:] + done.stderr[-3000:])
        expect(done.returncode == 0, f"the class is graded ({time.monotonic() - started:.0f} s)")
        data = json.loads((out / "analysis.json").read_text())
        print(f"analysis step: {data['seconds']} s for {len(submissions)} submissions")
        check_mistakes(data)
        check_similarity(data)
        check_shared(data)
        index = (out / "index.html").read_text()
        top = index[:index.index("Students × chapters")]
        expect("To teach again" in top and "mask_transposed" in top, "the class page says at the top what to teach again")
        expect("larch" in (out / "similarity.html").read_text(), "the similarity page names the pair")
        check_private(out, [s.name for s in submissions])
    return finish("the class analysis of a graded class counts its mistakes, finds its copy and its shared wrong answer")


if __name__ == "__main__":
    sys.exit(main())
