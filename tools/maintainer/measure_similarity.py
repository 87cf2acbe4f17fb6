"""./workbook measure-similarity: how good the similarity signal is, measured on known pairs.

Per exercise, the known originals are the reference solution (solutions/NN-topic/), the maintainers'
variant (solutions/NN-topic/variants/, where there is one) and solutions written independently from
the contract (tools/tests/grading/similarity/independent/WHO/NN-topic/, each of which passes its
chapter's checks, and generated_class's masked softmax). Measured on each engine:

- False positives: every pair with an independently written solution in it, which should not be
  flagged; and apart, each reference and its variant (the maintainers wrote a variant by rewriting
  the reference, so a flagged one is listed with the longest run of lines it kept word for word).
- Recall: every original against each of its disguised copies (maintainer/disguise.py: renamed,
  reordered, loops rewritten, padded with dead statements in each style, all at once).

Engines: "dolos" (grading/similarity.py as ./workbook grade runs it), with the contract's error
paths left out too ("error paths left out": the checks a contract prescribes, which measured worse)
and with no names of calls or members, no operators, no numbers ("syntax only"), "dolos-raw" (Dolos's own tokens and defaults: k-grams of 23, windows of
17, the stub as its ignored file, nothing normalised), and "sim_c++" (Debian 12's similarity-tester
as grading ran it before, `sim_c++ -e -s -a -r 24 -n` on files with the stub's lines blanked;
skipped where it is not installed). A pair's score is Dolos's similarity (sim_c++: the larger of the
two files' shares in each other, as grading used it), flagged at the engine's threshold (dolos:
similarity.THRESHOLD and MIN_KGRAMS; sim_c++: 60 % and 40 tokens). --sweep prints, per engine, the
false positives and the recall at every threshold from 30 to 95 %.

    ./workbook measure-similarity [--sweep] [--compile] [--chapters 3,4] [--show N] [--json FILE]

--compile first checks that every disguised copy still compiles (g++ -fsyntax-only against the
chapter's contract), which takes minutes.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from maintainer.disguise import DISGUISES
from maintainer.generated_class import INDEPENDENT_SOFTMAX, SOFTMAX
from scalebook.config import ROOT
from scalebook.course import all_chapters
from scalebook.grading import similarity

INDEPENDENT = ROOT / "tools" / "tests" / "grading" / "similarity" / "independent"
SIM_THRESHOLD, SIM_MIN_TOKENS = 60, 40


def code_lines(text: str) -> list[str]:
    """TEXT's lines of code with comments and layout left out."""
    kept = []
    for line in text.splitlines():
        line = re.sub(r"\s+", "", line.split("//")[0])
        if line and line not in ("{", "}") and not line.startswith("#include"):
            kept.append(line)
    return kept


def longest_verbatim(a: str, b: str) -> int:
    """The longest run of consecutive lines of code A and B share word for word."""
    left, right = code_lines(a), code_lines(b)
    best, previous = 0, [0] * (len(right) + 1)
    for x in left:
        current = [0] * (len(right) + 1)
        for j, y in enumerate(right, start=1):
            if x == y:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


def originals(chapters) -> list[dict]:
    """Per exercise: its stub, contract functions and known originals {label: text}."""
    found = []
    for chapter in chapters:
        functions = chapter.functions_of()
        for exercise in chapter.exercises:
            source = chapter.source_of(exercise)
            relative = f"{chapter.folder}/{source}"
            texts = {"reference": (ROOT / "solutions" / relative).read_text()}
            variant = ROOT / "solutions" / chapter.folder / "variants" / source
            if variant.exists():
                texts["variant"] = variant.read_text()
            for folder in sorted(INDEPENDENT.iterdir()) if INDEPENDENT.is_dir() else []:
                if (folder / relative).exists():
                    texts[f"independent/{folder.name}"] = (folder / relative).read_text()
            if relative == SOFTMAX:
                texts["independent/generated_class"] = INDEPENDENT_SOFTMAX
            found.append({"exercise": exercise, "chapter": chapter, "file": relative,
                          "contract": similarity.contract_texts(ROOT / "chapters" / chapter.folder,
                                                                ROOT / "lib" / "include"),
                          "stub": (ROOT / "exercises" / relative).read_text(), "functions": functions[exercise],
                          "texts": texts})
    return found


def known_pairs(exercise: dict) -> tuple[list[tuple], list[tuple], list[tuple]]:
    """(independent pairs, variant pairs, copies): pairs with an independently written solution in
    them; the reference and the maintainers' variant; each original and each of its disguised copies."""
    labels = list(exercise["texts"])
    independent, variants = [], []
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            (variants if {a, b} == {"reference", "variant"} else independent).append((a, b))
    copies = [(a, f"{a} {name}", name) for a in labels for name in DISGUISES]
    return independent, variants, copies


def all_texts(exercise: dict) -> dict[str, str]:
    texts = dict(exercise["texts"])
    for label, text in exercise["texts"].items():
        for name, disguise in DISGUISES.items():
            texts[f"{label} {name}"] = disguise(text)
    return texts


def dolos_scores(exercises: list[dict], normalise: bool, drop_checks: bool = False, lexical: bool = True,
                 kgram: int = similarity.KGRAM, window: int = similarity.WINDOW) -> list[dict[tuple, tuple]]:
    """Per exercise, {(a, b): (score percent, shared k-grams)} for every pair of its texts."""
    work = []
    for index, exercise in enumerate(exercises):
        texts = exercise["all"]
        names = {f"f{i}": label for i, label in enumerate(texts)}
        exercise["names"] = names
        options = ({"lexical": lexical, "kgram": kgram, "window": window} if normalise
                   else {"kgram": 23, "window": 17, "normalise": False})
        work.append(dict(similarity.job({n: texts[l] for n, l in names.items()}, {}, exercise["stub"],
                                        exercise["functions"], exercise["contract"], index, threshold=0, min_kgrams=1,
                                        fragments=0, **options),
                         drop_checks=drop_checks))
    answers = {a["id"]: a for a in similarity.run_engine(work)}
    scores = []
    for index, exercise in enumerate(exercises):
        answer, names = answers[index], exercise["names"]
        totals = {n: f["kgrams"] for n, f in answer["files"].items()}
        found = {}
        for pair in answer["pairs"]:
            share = max(pair["a_shared"] / max(1, totals[pair["a"]]), pair["b_shared"] / max(1, totals[pair["b"]]))
            key = (names[pair["a"]], names[pair["b"]])
            found[key] = found[key[::-1]] = (round(100 * pair["similarity"]), min(pair["a_shared"], pair["b_shared"]),
                                             round(100 * share), pair["longest"])
        scores.append(found)
    return scores


FILE_TOKENS = re.compile(r"^File (\S+): (\d+) tokens?", re.MULTILINE)
RUN_SIZES = re.compile(r"^(\S+): line \d+-\d+\s*\|(\S+): line \d+-\d+\s*\[(\d+)\]", re.MULTILINE)


def sim_scores(exercises: list[dict]) -> list[dict[tuple, tuple]] | None:
    """The same as dolos_scores with Debian 12's sim_c++, as grading ran it before (None: not installed)."""
    if shutil.which("sim_c++") is None:
        return None
    scores = []
    for exercise in exercises:
        texts = exercise["all"]
        with tempfile.TemporaryDirectory(prefix="scalebook-sim-") as temp:
            names = {}
            for i, (label, text) in enumerate(texts.items()):
                names[f"f{i}.cpp"] = label
                Path(temp, f"f{i}.cpp").write_text(similarity.without_stub(text, exercise["stub"]))
            done = subprocess.run(["sim_c++", "-e", "-s", "-a", "-r", "24", "-w", "200", "-n", "-i"],
                                  input="\n".join(names) + "\n", capture_output=True, text=True, cwd=temp,
                                  errors="replace", check=True)
        tokens = {names[n]: int(t) for n, t in FILE_TOKENS.findall(done.stdout) if n in names}
        shared: dict[tuple, int] = {}
        for a, b, count in RUN_SIZES.findall(done.stdout):
            if a != b and a in names and b in names:
                shared[(names[a], names[b])] = shared.get((names[a], names[b]), 0) + int(count)
        found = {}
        for (a, b), count in shared.items():
            mine = round(100 * count / max(1, tokens[a]))
            other = found.get((b, a), (0, 0))
            best = (max(mine, other[0]), max(count, other[1]))
            found[(a, b)] = found[(b, a)] = best
        scores.append(found)
    return scores


def flagged(score: tuple | None, threshold: int, minimum: int) -> bool:
    return score is not None and score[0] >= threshold and score[1] >= minimum


def tally(exercises, scores, threshold: int, minimum: int) -> dict:
    """False positives (pairs with an independent solution, and the variants), recall per disguise."""
    result = {"independent": 0, "false_positives": [], "variants": 0, "variants_flagged": [], "copies": {},
              "missed": []}
    for exercise, found in zip(exercises, scores):
        independent, variants, copies = exercise["pairs"]
        for a, b in independent:
            result["independent"] += 1
            if flagged(found.get((a, b)), threshold, minimum):
                result["false_positives"].append((exercise["exercise"], a, b, found[(a, b)]))
        for a, b in variants:
            result["variants"] += 1
            if flagged(found.get((a, b)), threshold, minimum):
                run = longest_verbatim(exercise["texts"][a], exercise["texts"][b])
                result["variants_flagged"].append((exercise["exercise"], found[(a, b)], run))
        for a, b, name in copies:
            entry = result["copies"].setdefault(name, [0, 0])
            entry[1] += 1
            if flagged(found.get((a, b)), threshold, minimum):
                entry[0] += 1
            else:
                result["missed"].append((exercise["exercise"], a, name, found.get((a, b))))
    return result


def compile_check(exercises: list[dict]) -> list[str]:
    """The disguised copies g++ refuses (-fsyntax-only against the chapter's contract)."""
    refused = []
    with tempfile.TemporaryDirectory(prefix="scalebook-disguised-") as temp:
        for exercise in exercises:
            chapter = exercise["chapter"]
            for label, text in exercise["all"].items():
                path = Path(temp, "copy.cpp")
                path.write_text(text)
                done = subprocess.run(["g++", "-std=c++20", "-fsyntax-only", f"-DSCALEBOOK_EXERCISE_CHAPTER={chapter.number}",
                                       f"-I{ROOT / 'chapters' / chapter.folder}", f"-I{ROOT / 'lib' / 'include'}",
                                       "-isystem", "/usr/include/eigen3", str(path)], capture_output=True, text=True)
                if done.returncode != 0:
                    refused.append(f"{exercise['exercise']} {label}: {done.stderr.strip().splitlines()[0][:200]}")
    return refused


def summary(name: str, result: dict, threshold: int, minimum: int, unit: str) -> list[str]:
    copies = result["copies"]
    caught = sum(c[0] for c in copies.values())
    total = sum(c[1] for c in copies.values())
    lines = [f"{name} (a pair is flagged at {threshold} % with {minimum} {unit} shared or more):",
             f"  false positives: {len(result['false_positives'])} of {result['independent']} pairs with an "
             f"independently written correct solution; {len(result['variants_flagged'])} of {result['variants']} "
             "reference-variant pairs",
             f"  recall: {caught} of {total} disguised copies ({100 * caught / max(1, total):.0f} %)"]
    short = [m for m in result["missed"] if m[3] is not None and m[3][0] >= threshold]
    if short:
        lines.append(f"  of the {total - caught} missed, {len(short)} are alike enough but share fewer than {minimum} "
                     f"{unit} (too short to pair: {', '.join(sorted({f'{m[0]} {m[1]}' for m in short}))})")
    lines += [f"    {disguise}: {c[0]} of {c[1]}" for disguise, c in copies.items()]
    lines += [f"    variant flagged: {v[0]} at {v[1][0]} %, sharing {v[2]} consecutive lines of code word for word"
              for v in result["variants_flagged"]]
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="./workbook measure-similarity", description=__doc__.split("\n\n")[0])
    parser.add_argument("--chapters", help="comma-separated chapter numbers (default: all)")
    parser.add_argument("--sweep", action="store_true", help="false positives and recall at every threshold")
    parser.add_argument("--compile", action="store_true", help="check that every disguised copy compiles first")
    parser.add_argument("--show", type=int, default=8, help="list this many false positives and misses per engine")
    parser.add_argument("--json", type=Path, help="write every score to this file")
    args = parser.parse_args(argv)
    reason = similarity.available()
    if reason:
        print(f"measure-similarity: {reason}", file=sys.stderr)
        return 1
    chapters = all_chapters()
    if args.chapters:
        wanted = {int(c) for c in args.chapters.split(",")}
        chapters = [c for c in chapters if c.number in wanted]
    exercises = originals(chapters)
    for exercise in exercises:
        exercise["pairs"] = known_pairs(exercise)
        exercise["all"] = all_texts(exercise)
    if args.compile:
        started = time.monotonic()
        refused = compile_check(exercises)
        print(f"compiled {sum(len(e['all']) for e in exercises)} files in {time.monotonic() - started:.0f} s; "
              f"{len(refused)} refused")
        for line in refused:
            print("  " + line)
        if refused:
            return 1
    engines = {}
    for name, run in (("dolos", lambda: dolos_scores(exercises, True)),
                      ("dolos, error paths left out", lambda: dolos_scores(exercises, True, True)),
                      ("dolos, syntax only", lambda: dolos_scores(exercises, True, lexical=False)),
                      ("dolos-raw", lambda: dolos_scores(exercises, False)), ("sim_c++", lambda: sim_scores(exercises))):
        started = time.monotonic()
        scores = run()
        if scores is None:
            print(f"{name}: not installed here, skipped")
            continue
        engines[name] = (scores, time.monotonic() - started)
    texts = sum(len(e["all"]) for e in exercises)
    print(f"{len(exercises)} exercises, {sum(len(e['texts']) for e in exercises)} originals, {texts} texts in all")
    for name, (scores, seconds) in engines.items():
        threshold, minimum = ((similarity.THRESHOLD, similarity.MIN_KGRAMS) if name.startswith("dolos")
                              else (SIM_THRESHOLD, SIM_MIN_TOKENS))
        result = tally(exercises, scores, threshold, minimum)
        unit = "k-grams" if name.startswith("dolos") else "tokens"
        print("\n".join(summary(name, result, threshold, minimum, unit)) + f"\n  ({seconds:.1f} s)")
        for fp in sorted(result["false_positives"], key=lambda f: -f[3][0])[:args.show]:
            print(f"    false positive: {fp[0]} {fp[1]} / {fp[2]}: {fp[3][0]} %, {fp[3][1]} shared")
        for miss in sorted(result["missed"], key=lambda m: (m[3] or (0, 0))[0])[:args.show]:
            print(f"    missed: {miss[0]} {miss[1]} {miss[2]}: {miss[3]}")
        if args.sweep:
            print("  threshold: false positives, recall")
            for threshold in range(30, 100, 5):
                swept = tally(exercises, scores, threshold, minimum)
                caught = sum(c[0] for c in swept["copies"].values())
                total = sum(c[1] for c in swept["copies"].values())
                print(f"    {threshold:3d} %: {len(swept['false_positives']):3d} of {swept['independent']}, "
                      f"{caught} of {total} ({100 * caught / max(1, total):.0f} %)")
    if args.json:
        args.json.write_text(json.dumps({name: [{f"{a} | {b}": s for (a, b), s in found.items()} for found in scores]
                                         for name, (scores, _) in engines.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
