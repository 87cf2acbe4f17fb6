"""Finds copied code: each exercise's files of the class compared with Dolos's fingerprint index.

Per exercise, every submission's file is compared with every other one's, and with the files of
optional reference folders (last year's class, public solutions), which are not compared with each
other. The engine is grading/dolos/compare.mjs, run by Debian's nodejs: tree-sitter's C++ grammar
parses each file, what students cannot help sharing is left out (comments, layout, every name,
number and string, the contract functions' signatures, the released stub's statements) and so is
what a copier adds to hide a copy (statements that do nothing, locals never read, branches that
never run), and Dolos (@dodona/dolos-core) compares the winnowed k-grams of what is left. Its npm
packages are pinned by grading/dolos/package-lock.json and installed into build/dolos by the
project's own package step (loop/packages.py: npm ci), never at grading time.

A pair is listed when Dolos's similarity (the share of both files' k-grams found in the other) is
at least THRESHOLD percent and each file has at least MIN_KGRAMS of its k-grams in the other; with
the fragments they share, by line, for the page that shows them side by side. The parameters come from the measurement (./workbook measure-similarity: false
positives on correct solutions written independently, recall on renamed, reordered and padded
copies; the README gives the figures). A signal, not proof: it never changes a grade.
"""
from __future__ import annotations

import concurrent.futures
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from ..config import ROOT
from ..errors import GradingError
from ..loop import packages

ENGINE = ROOT / "tools" / "scalebook" / "grading" / "dolos" / "compare.mjs"
NODE = "node"
TOOL = "Dolos (@dodona/dolos-core) on tree-sitter's C++ syntax trees, normalised (grading/dolos/compare.mjs)"
KGRAM = 20              # tokens per k-gram: about a statement (an opening, a node, a closing token each)
WINDOW = 4              # k-grams per winnowing window: a fingerprint at least every 4 k-grams
THRESHOLD = 78          # Dolos's similarity of a pair, percent: the k-grams of both files found in the other
MIN_KGRAMS = 40         # k-grams each file must have in the other: a check and a return (26 to 30) never pair
PAIRS_KEPT = 500        # per exercise in analysis.json, the most similar first; the count says how many more
PAIRS_SHOWN = 12        # of those, with their shared fragments (the page shows these)
RUNS_LISTED = 4         # per pair, the longest first
RUN_LINES = 60          # per fragment and side, the lines shown
ENGINE_SECONDS = 600    # one engine run (a share of the class's exercises)


def available() -> str | None:
    """Why the comparison cannot run here, or None."""
    if shutil.which(NODE) is None:
        return ("node is not installed (Debian's nodejs and npm: ./workbook grade installs them as root); "
                "the similarity page is left out")
    if packages.npm_modules(ENGINE.parent) is None:
        return ("the similarity engine's npm packages are not installed (./workbook grade installs them from "
                "tools/scalebook/grading/dolos/package-lock.json); the similarity page is left out")
    return None


def run_engine(jobs: list[dict]) -> list[dict]:
    """compare.mjs's answer to JOBS (its input format), in one node process."""
    modules = packages.npm_modules(ENGINE.parent)
    if modules is None:
        raise GradingError("similarity: the engine's npm packages are not installed")
    try:
        done = subprocess.run([NODE, str(ENGINE)], input=json.dumps(jobs), capture_output=True, text=True,
                              timeout=ENGINE_SECONDS, errors="replace",
                              env=dict(os.environ, SCALEBOOK_SIMILARITY_MODULES=str(modules)))
    except subprocess.TimeoutExpired as error:
        raise GradingError(f"similarity: the engine took more than {ENGINE_SECONDS} s") from error
    except OSError as error:
        raise GradingError(f"similarity: the engine could not start: {error}") from error
    if done.returncode != 0:
        raise GradingError(f"similarity: the engine failed: {done.stderr.strip()[-600:]}")
    try:
        return json.loads(done.stdout)
    except ValueError as error:
        raise GradingError(f"similarity: the engine's answer is not JSON: {done.stdout[:200]!r}") from error


def job(files: dict[str, str], references: dict[str, str], stub: str, functions: list[str],
        contract: list[str], key=None, threshold: int = THRESHOLD, min_kgrams: int = MIN_KGRAMS, kgram: int = KGRAM,
        window: int = WINDOW, normalise: bool = True, lexical: bool = True, fragments: int = PAIRS_SHOWN) -> dict:
    """One exercise as compare.mjs takes it: FILES compared with each other and with REFERENCES."""
    return {"id": key, "files": files, "old": references, "stub": stub, "functions": list(functions),
            "contract": contract, "kgram": kgram, "window": window, "threshold": threshold,
            "min_kgrams": min_kgrams, "normalise": normalise, "lexical": lexical, "fragments": fragments}


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def contract_texts(chapter_folder: Path, lib_include: Path) -> list[str]:
    """The chapter's contract headers (CHAPTER_FOLDER/*.hpp) and the lib headers they include, at
    any depth: what every student is given, whose names the engine counts as nobody's own."""
    texts, seen = [], set()
    pending = sorted(chapter_folder.glob("*.hpp"))
    while pending:
        path = pending.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        text = path.read_text(errors="replace")
        texts.append(text)
        for name in INCLUDE.findall(text):
            for base in (path.parent, lib_include):
                if (base / name).is_file():
                    pending.append((base / name).resolve())
                    break
    return texts


def without_stub(text: str, stub: str) -> str:
    """TEXT with every line that is also a line of the released STUB (leading and trailing
    whitespace aside) left blank: two files that are the same once this is done are one group."""
    given = {line.strip() for line in stub.splitlines() if line.strip()}
    return "".join(("\n" if line.strip() in given else line + "\n") for line in text.splitlines())


def grouped(stripped: dict[str, str]) -> dict[str, list[str]]:
    """Files with the same text after the stub's lines are blanked: {first name: every name}. The
    engine compares one of each (identical files are alike without asking it)."""
    groups: dict[str, list[str]] = {}
    for who in sorted(stripped):
        groups.setdefault(stripped[who], []).append(who)
    return {members[0]: members for members in groups.values()}


def percent(shared: int, total: int) -> int:
    return round(100 * shared / max(1, total))


def ranked_pairs(answer: dict, names: dict[str, str], references: set[str]) -> list[dict]:
    """The engine's pairs as the page lists them, most similar first: the class's file first, a
    reference second; Dolos's similarity (percent), each file's share in the other (percent of its
    k-grams) and the k-grams they share."""
    totals = {name: entry["kgrams"] for name, entry in answer["files"].items()}
    listed = []
    for pair in answer["pairs"]:
        a, b = names[pair["a"]], names[pair["b"]]
        a_percent, b_percent = percent(pair["a_shared"], totals[pair["a"]]), percent(pair["b_shared"], totals[pair["b"]])
        fragments = pair["fragments"]
        if a in references or (b not in references and b < a):
            a, b, a_percent, b_percent = b, a, b_percent, a_percent
            fragments = [[f[2], f[3], f[0], f[1], f[4]] for f in fragments]
        listed.append({"a": a, "b": b, "percent": round(100 * pair["similarity"]), "a_percent": a_percent,
                       "b_percent": b_percent, "shared_kgrams": min(pair["a_shared"], pair["b_shared"]),
                       "reference": b in references, "fragments": fragments})
    return listed  # the engine's order: the most similar first, those with their fragments


def shown_runs(fragments: list, texts: tuple[str, str]) -> list[dict]:
    """A pair's longest fragments as (a, b) line spans and the lines themselves, for the side-by-side view."""
    return [{"a_lines": [f[0], f[1]], "b_lines": [f[2], f[3]], "kgrams": f[4],
             "a_text": lines_of(texts[0], [f[0], f[1]]), "b_text": lines_of(texts[1], [f[2], f[3]])}
            for f in fragments[:RUNS_LISTED]]


def exercise_job(files: dict[str, str], references: dict[str, str], stub: str, functions: list[str],
                 contract: list[str], key=None) -> tuple[dict, dict]:
    """The engine's job for one exercise, one file per group of identical ones (under names of ours:
    nothing a student chose is the engine's to read as anything but text), and what to finish it with."""
    stripped = {who: without_stub(text, stub) for who, text in files.items()}
    stripped_refs = {who: without_stub(text, stub) for who, text in references.items()}
    groups, refs = grouped(stripped), grouped(stripped_refs)
    names = {f"f{i}": who for i, who in enumerate([*groups, *refs])}
    ours = {who: name for name, who in names.items()}
    texts = {**files, **references}
    work = job({ours[g]: texts[g] for g in groups}, {ours[g]: texts[g] for g in refs}, stub, functions, contract, key)
    return work, {"files": files, "references": references, "groups": groups, "refs": refs, "names": names}


def finish_exercise(answer: dict | None, context: dict) -> dict:
    """One exercise's result from the engine's ANSWER: the files that are the same ("identical": each
    group's names) and the pairs above the threshold, each between two groups (a, and a_same the
    files identical to it; b and b_same), the first PAIRS_SHOWN with their shared fragments;
    pairs_above counts the pairs of files, those of identical files too."""
    files, references, groups, refs, names = (context[k] for k in ("files", "references", "groups", "refs", "names"))
    result = {"compared": len(files), "references": len(references), "pairs_above": 0, "identical": [], "pairs": []}
    if answer is None:
        return result
    kgrams = {names[n]: entry["kgrams"] for n, entry in answer["files"].items()}
    same = [{"files": members, "kgrams": kgrams.get(group, 0)} for group, members in groups.items()
            if len(members) > 1 and kgrams.get(group, 0) >= MIN_KGRAMS]
    result["identical"] = sorted(same, key=lambda g: (-len(g["files"]), g["files"]))
    result["pairs_above"] = sum(len(g["files"]) * (len(g["files"]) - 1) // 2 for g in same)
    texts = {**files, **references}
    for index, entry in enumerate(ranked_pairs(answer, names, set(refs))):
        fragments = entry.pop("fragments")
        a_same = groups[entry["a"]][1:]
        b_same = (refs if entry["reference"] else groups)[entry["b"]][1:]
        result["pairs_above"] += (1 + len(a_same)) * (1 + len(b_same))
        if index >= PAIRS_KEPT:
            continue
        entry.update(a_same=a_same, b_same=b_same,
                     runs=shown_runs(fragments, (texts[entry["a"]], texts[entry["b"]])) if index < PAIRS_SHOWN else [])
        result["pairs"].append(entry)
    return result


def exercise_pairs(files: dict[str, str], references: dict[str, str], stub: str, functions: list[str],
                   contract: list[str]) -> dict:
    """One exercise compared (see finish_exercise)."""
    work, context = exercise_job(files, references, stub, functions, contract)
    enough = len(context["groups"]) + len(context["refs"]) >= 2 and context["groups"]
    return finish_exercise(run_engine([work])[0] if enough else None, context)


def flagged_pairs(exercise: dict) -> set[tuple[str, str]]:
    """Every pair of files an exercise's result flags, identical ones included (sorted names)."""
    found = set()
    for group in exercise.get("identical", []):
        found |= {(x, y) for i, x in enumerate(group["files"]) for y in group["files"][i + 1:]}
    for pair in exercise["pairs"]:
        found |= {tuple(sorted((x, y))) for x in [pair["a"], *pair.get("a_same", [])]
                  for y in [pair["b"], *pair.get("b_same", [])]}
    return found


def lines_of(text: str, span: list[int]) -> str:
    """Lines FIRST to LAST (counted from 1) of TEXT, at most RUN_LINES of them."""
    first, last = span
    lines = text.splitlines()[first - 1:min(last, first - 1 + RUN_LINES)]
    return "\n".join(lines) + ("\n..." if last - first + 1 > RUN_LINES else "")


def class_similarity(exercises: list[dict], jobs: int | None = None) -> list[dict]:
    """EXERCISES, each {exercise, file, files, references, stub, functions, contract}, compared by JOBS node
    processes at once (default: the cores), each given a share of the exercises; returns each one's
    {exercise, file, compared, references, pairs_above, identical, pairs}."""
    prepared = [exercise_job(e["files"], e["references"], e["stub"], e["functions"], e["contract"], index)
                for index, e in enumerate(exercises)]
    runnable = [work for work, context in prepared
                if len(context["groups"]) + len(context["refs"]) >= 2 and context["groups"]]
    jobs = max(1, min(jobs or len(os.sched_getaffinity(0)), len(runnable)))
    shares = [runnable[i::jobs] for i in range(jobs)]
    answers: dict = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:  # each thread waits on its node
        for answer in pool.map(run_engine, [share for share in shares if share]):
            answers.update({a["id"]: a for a in answer})
    return [dict({"exercise": e["exercise"], "file": e["file"]}, **finish_exercise(answers.get(index), context))
            for index, (e, (_, context)) in enumerate(zip(exercises, prepared))]
