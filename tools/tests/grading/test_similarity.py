#!/usr/bin/env python3
"""The similarity signal on known pairs, through the class analysis (grading/analysis.py): seconds.

A made-up graded folder (as grading leaves it: DIR/ctest/students/NAME/src) of chapters 3 and 4:
the reference solutions ("ref"), the maintainers' variants where a chapter has them ("variant"),
solutions written independently from the contract (tools/tests/grading/similarity/independent/:
"one", "two"; generated_class's masked softmax, "generated"), and copies of the reference disguised
as a copier would (maintainer/disguise.py): renamed, reordered, loops rewritten, a dead statement
after every line in each style, and all of that at once. Then:

- no two correct solutions written apart are paired (the reference, its variant, the independent
  ones): the old engine paired 4.2's reference and variant (73 %) and 3.3's variant and "one";
- every disguise keeps every pair the renamed copy has (the old engine lost every padded copy),
  and the renamed copy is paired with the reference in most exercises (those with more than a
  statement or two of the student's own);
- junk that is not C++ (bytes, unbalanced braces, a 3,000-line file) is compared without a crash
  and pairs with nothing; the engine refuses a malformed job with a message naming what is wrong.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from maintainer.disguise import DISGUISES
from maintainer.generated_class import INDEPENDENT_SOFTMAX, SOFTMAX
from scalebook.course import all_chapters
from scalebook.grading import analysis, pages, similarity
from scalebook.grading.tree import tests_folder
from tests.harness import ROOT, expect, finish

CHAPTERS = ("03-attention-scaling", "04-causal-masking")
INDEPENDENT = ROOT / "tools" / "tests" / "grading" / "similarity" / "independent"
JUNK = {"junk-bytes": "\x00\x01\ufffd }}}{{{ int int ( ;;; \x1b[2J",
        "junk-braces": "namespace x {\nint f( {\n  for (;;\n" * 50,
        "junk-long": "int padding_line = 0;\n" * 3000}


def class_of(chapters) -> dict[str, dict[str, str]]:
    """Each submission's files {relative path: text}."""
    students: dict[str, dict[str, str]] = {}
    for chapter in chapters:
        for source in chapter.sources:
            relative = f"{chapter.folder}/{source}"
            reference = (ROOT / "solutions" / relative).read_text()
            students.setdefault("ref", {})[relative] = reference
            for name, disguise in DISGUISES.items():
                students.setdefault(f"copy {name}", {})[relative] = disguise(reference)
            variant = ROOT / "solutions" / chapter.folder / "variants" / source
            if variant.exists():
                students.setdefault("variant", {})[relative] = variant.read_text()
            for folder in sorted(INDEPENDENT.iterdir()):
                if (folder / relative).exists():
                    students.setdefault(folder.name, {})[relative] = (folder / relative).read_text()
            for name, text in JUNK.items():
                students.setdefault(name, {})[relative] = text
    students.setdefault("generated", {})[SOFTMAX] = INDEPENDENT_SOFTMAX
    return students


def lay_out(out: Path, students: dict[str, dict[str, str]]) -> dict[str, dict]:
    submissions = {}
    for name, files in students.items():
        sources = {}
        for relative, text in files.items():
            path = tests_folder(out / "ctest", name) / "src" / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode("utf-8", errors="surrogateescape"))
            sources[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
        submissions[name] = {"sources": sources}
    return submissions


def check_pairs(result: dict) -> None:
    written_apart = {"ref", "variant", "one", "two", "generated"}
    renamed_paired, exercises = 0, 0
    for exercise in result["similarity"]["exercises"]:
        pairs = similarity.flagged_pairs(exercise)
        apart = sorted(p for p in pairs if set(p) <= written_apart)
        expect(not apart, f"{exercise['exercise']}: no two correct solutions written apart are paired: {apart}")
        junk = sorted(p for p in pairs if any(x.startswith("junk") for x in p))
        expect(not junk, f"{exercise['exercise']}: junk pairs with nothing: {junk}", quiet=True)
        exercises += 1
        if ("copy renamed", "ref") not in pairs:
            continue
        renamed_paired += 1
        lost = [name for name in DISGUISES if tuple(sorted(("ref", f"copy {name}"))) not in pairs]
        expect(not lost, f"{exercise['exercise']}: every disguised copy of the reference is paired with it: "
                         f"lost {lost}")
    expect(renamed_paired >= 0.75 * exercises, f"the renamed copy is paired with the reference in {renamed_paired} "
                                               f"of {exercises} exercises (3 in 4 at least)")


def check_refusals() -> None:
    modules = similarity.packages.npm_modules(similarity.ENGINE.parent)
    for job, said in (("not json", "compare.mjs:"), ('{"a": 1}', "not a list of jobs"),
                      ('[{"id": 1, "kgram": 0, "window": 4, "threshold": 78, "min_kgrams": 1, "fragments": 0}]',
                       "kgram must be")):
        done = subprocess.run(["node", str(similarity.ENGINE)], input=job, capture_output=True, text=True,
                              env=dict(os.environ, SCALEBOOK_SIMILARITY_MODULES=str(modules)))
        expect(done.returncode == 2 and said in done.stderr and "\n    at " not in done.stderr,
               f"a malformed job is refused with a message, no stack trace ({done.returncode}): {done.stderr.strip()}")
    try:
        similarity.run_engine([{"id": 1}])
        expect(False, "the analysis turns the engine's refusal into a GradingError")
    except similarity.GradingError as error:
        expect("similarity: the engine failed" in str(error) and "kgram" in str(error),
               f"the analysis turns the engine's refusal into a GradingError naming it: {error}")


def main() -> int:
    missing = similarity.available() or (None if pages.jinja2 else "no python3-jinja2")
    if missing:
        print(f"skipped: {missing}")
        return 77
    chapters = [c for c in all_chapters() if c.folder in CHAPTERS]
    with tempfile.TemporaryDirectory(prefix="scalebook-similarity-") as temp:
        out = Path(temp) / "grades"
        submissions = lay_out(out, class_of(chapters))
        result = analysis.analyse(out, [], submissions, chapters, [], "abc")
        print(json.dumps([{e["exercise"]: [(p["a"], p["b"], p["percent"]) for p in e["pairs"]]}
                          for e in result["similarity"]["exercises"]])[:3000])
        check_pairs(result)
        page = (out / "similarity.html").read_text()
        expect("Dolos" in page and "copy padded (mixed)" in page, "the similarity page names the engine and the pairs")
    check_refusals()
    return finish("similarity: independent solutions apart, renamed, reordered and padded copies paired")


if __name__ == "__main__":
    sys.exit(main())
