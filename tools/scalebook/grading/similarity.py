"""Finds copied code: each exercise's files of the class compared with Debian's sim_c++.

Per exercise, every submission's file is compared with every other one's, and with the files of
optional reference folders (last year's class, public solutions), which are not compared with each
other, by Debian's similarity tester (package similarity-tester, `sim_c++ -e`: each pair on its
own). sim_c++ compares token sequences with every identifier, number and string made equal, so
renaming variables or changing the layout or the comments hides nothing. The lines of the released
stub are blanked in every file first (their line numbers kept), so that the starter code two
students share does not count. A pair is listed when one of its files is at least THRESHOLD
percent the other's material and they share at least MIN_TOKENS tokens; with the runs they share,
by line, for the page that shows them side by side. A signal, not proof: it never changes a grade.
"""
from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import GradingError

SIM = "sim_c++"
THRESHOLD = 60          # percent of one file's tokens found in the other
MIN_TOKENS = 40         # shared tokens below this never make a pair (a loop header or two)
RUN_TOKENS = 24         # sim's shortest run (its default)
PAIRS_KEPT = 500        # per exercise in analysis.json, the most similar first; the count says how many more
PAIRS_SHOWN = 12        # of those, with their shared runs (the page shows these)
RUNS_LISTED = 4         # per pair, the longest first
RUN_LINES = 60          # per run and side, the lines shown
SIM_SECONDS = 120       # one exercise's comparison
FILE_TOKENS = re.compile(r"^File (\S+): (\d+) tokens?", re.MULTILINE)
RUN_SIZES = re.compile(r"^(\S+): line \d+-\d+\s*\|(\S+): line \d+-\d+\s*\[(\d+)\]", re.MULTILINE)
RUN_LINE = re.compile(r"^(\S+): line (\d+)-(\d+)\s*\|(\S+): line (\d+)-(\d+)\s*\[(\d+)\]\s*$")


def available() -> str | None:
    """Why the comparison cannot run here, or None."""
    if shutil.which(SIM) is None:
        return (f"{SIM} is not installed (Debian's similarity-tester: apt-get install -y similarity-tester); "
                "the similarity page is left out")
    return None


def without_stub(text: str, stub: str) -> str:
    """TEXT with every line that is also a line of the released STUB (leading and trailing
    whitespace aside) left blank: the starter code does not count, and line numbers stay."""
    given = {line.strip() for line in stub.splitlines() if line.strip()}
    return "".join(("\n" if line.strip() in given else line + "\n") for line in text.splitlines())


class Files:
    """An exercise's files written for sim_c++ under names of ours (f0.cpp, ...): nothing a student
    chose reaches its arguments. FILES are compared with each other and with REFERENCES; the
    references are never compared with each other (sim's old files, after "/")."""

    def __init__(self, folder: str, files: dict[str, str], references: dict[str, str]):
        self.folder, self.names, self.class_size = folder, {}, len(files)
        for index, (who, text) in enumerate([*files.items(), *references.items()]):
            self.names[f"f{index}.cpp"] = who
            Path(folder, f"f{index}.cpp").write_text(text, errors="surrogateescape")
        self.ours = {who: name for name, who in self.names.items()}

    def sim(self, options: list[str], only: set[str] | None = None) -> str:
        """sim_c++'s report on every file (or those of ONLY), each pair on its own (-e), both ways (-a)."""
        listed = [n for n, who in self.names.items() if only is None or who in only]
        new = [n for n in listed if int(n[1:-4]) < self.class_size]
        old = [n for n in listed if int(n[1:-4]) >= self.class_size]
        try:
            done = subprocess.run([SIM, "-e", "-s", "-a", "-r", str(RUN_TOKENS), "-w", "200", *options, "-i"],
                                  input="\n".join(new + (["/"] + old if old else [])) + "\n", capture_output=True,
                                  text=True, cwd=self.folder, timeout=SIM_SECONDS, errors="replace")
        except subprocess.TimeoutExpired as error:
            raise GradingError(f"similarity: {SIM} took more than {SIM_SECONDS} s") from error
        if done.returncode != 0:
            raise GradingError(f"similarity: {SIM} failed: {done.stderr.strip()[:300]}")
        return done.stdout

    def percents(self) -> tuple[dict[str, int], dict[tuple, int]]:
        """Each file's tokens, and per ordered pair (a, b) the percent of a's tokens in runs also
        in b, from sim_c++ -n's list of runs (sim's own -p is ten times slower with -e)."""
        output = self.sim(["-n"])
        tokens = {self.names[n]: int(t) for n, t in FILE_TOKENS.findall(output) if n in self.names}
        shared: dict[tuple, int] = {}
        for a, b, count in RUN_SIZES.findall(output):
            if a != b and a in self.names and b in self.names:
                shared[(a, b)] = shared.get((a, b), 0) + int(count)
        found = {}
        for (a, b), count in shared.items():
            who = self.names[a]
            percent = round(100 * count / max(1, tokens.get(who, 0)))
            if percent >= THRESHOLD:
                found[(who, self.names[b])] = percent
        return tokens, found

    def runs(self, pairs: list[tuple[str, str]]) -> dict[tuple, list]:
        """Per ordered pair of PAIRS, the runs of a found in b: (a_first, a_last, b_first, b_last, tokens)."""
        wanted = {p for pair in pairs for p in (pair, pair[::-1])}
        found: dict[tuple, list] = {}
        if not pairs:
            return found
        for line in self.sim(["-n"], {who for pair in pairs for who in pair}).splitlines():
            run = RUN_LINE.match(line)
            if run and run.group(1) in self.names and run.group(4) in self.names:
                key = (self.names[run.group(1)], self.names[run.group(4)])
                if key in wanted:
                    found.setdefault(key, []).append(tuple(int(run.group(i)) for i in (2, 3, 5, 6, 7)))
        return found


def pairs(tokens: dict[str, int], percents: dict[tuple, int], references: set[str]) -> list[dict]:
    """The pairs above the threshold sharing MIN_TOKENS or more, most similar first: each file's
    share in the other (percent; None where sim does not compare that way or it is below the
    threshold: a reference is never the first file), and the tokens that share is."""
    found: dict[tuple, list] = {}  # (a, b): [a's percent, b's percent, shared tokens]
    for (a, b), percent in percents.items():
        key = (a, b) if b in references else (b, a) if a in references else (a, b) if a < b else (b, a)
        slot = found.get(key)
        if slot is None:
            slot = found[key] = [None, None, 0]
        slot[0 if a == key[0] else 1] = percent
        slot[2] = max(slot[2], percent * tokens.get(a, 0) // 100)
    ranked = sorted((-max(p for p in slot[:2] if p is not None), -slot[2], key)
                    for key, slot in found.items() if slot[2] >= MIN_TOKENS)
    return [{"a": a, "b": b, "a_percent": found[(a, b)][0], "b_percent": found[(a, b)][1], "percent": -percent,
             "shared_tokens": -shared, "reference": b in references} for percent, shared, (a, b) in ranked]


def shown_runs(listed: list, a_first: bool, texts: tuple[str, str]) -> list[dict]:
    """A pair's longest runs as (a, b) line spans and the lines themselves, for the side-by-side view."""
    runs = []
    for r in sorted(listed, key=lambda r: -r[4])[:RUNS_LISTED]:
        a_lines, b_lines = ([r[0], r[1]], [r[2], r[3]]) if a_first else ([r[2], r[3]], [r[0], r[1]])
        runs.append({"a_lines": a_lines, "b_lines": b_lines, "tokens": r[4],
                     "a_text": lines_of(texts[0], a_lines), "b_text": lines_of(texts[1], b_lines)})
    return runs


def grouped(stripped: dict[str, str]) -> dict[str, list[str]]:
    """Files with the same text after the stub's lines are blanked: {first name: every name}. sim_c++
    compares one of each (identical files are 100 % alike without asking it)."""
    groups: dict[str, list[str]] = {}
    for who in sorted(stripped):
        groups.setdefault(stripped[who], []).append(who)
    return {members[0]: members for members in groups.values()}


def group_pairs(stripped: dict[str, str], groups: dict[str, list[str]], refs: dict[str, list[str]],
                temp: str, stripped_refs: dict[str, str]) -> tuple[dict[str, int], list[dict], dict[tuple, list]]:
    """Each group's tokens, the pairs of groups above the threshold, most similar first, and the
    runs of the first PAIRS_SHOWN."""
    written = Files(temp, {g: stripped[g] for g in groups}, {g: stripped_refs[g] for g in refs})
    tokens, percents = written.percents()
    found = pairs(tokens, percents, set(refs))
    return tokens, found, written.runs([(p["a"], p["b"]) for p in found[:PAIRS_SHOWN]])


def exercise_pairs(files: dict[str, str], references: dict[str, str], stub: str) -> dict:
    """One exercise: its files (stub lines blanked) compared. The files that are then the same
    ("identical": each group's names) and the pairs above the threshold, each between two groups
    (a, and a_same the files identical to it; b and b_same), the first PAIRS_SHOWN with their
    shared runs; pairs_above counts the pairs of files, those of identical files too."""
    stripped = {who: without_stub(text, stub) for who, text in files.items()}
    stripped_refs = {who: without_stub(text, stub) for who, text in references.items()}
    result = {"compared": len(stripped), "references": len(stripped_refs), "pairs_above": 0, "identical": [],
              "pairs": []}
    if len(stripped) + len(stripped_refs) < 2 or not stripped:
        return result
    groups, refs = grouped(stripped), grouped(stripped_refs)
    with tempfile.TemporaryDirectory(prefix="scalebook-sim-") as temp:
        tokens, found, runs = group_pairs(stripped, groups, refs, temp, stripped_refs)
    same = [{"files": members, "tokens": tokens.get(group, 0)} for group, members in groups.items()
            if len(members) > 1 and tokens.get(group, 0) >= MIN_TOKENS]
    result["identical"] = sorted(same, key=lambda g: (-len(g["files"]), g["files"]))
    result["pairs_above"] = sum(len(g["files"]) * (len(g["files"]) - 1) // 2 for g in same)
    texts = {**files, **references}
    for index, entry in enumerate(found):
        a_same = groups[entry["a"]][1:]
        b_same = (refs if entry["reference"] else groups)[entry["b"]][1:]
        result["pairs_above"] += (1 + len(a_same)) * (1 + len(b_same))
        if index >= PAIRS_KEPT:
            continue
        forward = runs.get((entry["a"], entry["b"]), [])
        spans, a_first = (forward, True) if forward else (runs.get((entry["b"], entry["a"]), []), False)
        entry.update(a_same=a_same, b_same=b_same,
                     runs=shown_runs(spans, a_first, (texts[entry["a"]], texts[entry["b"]])) if index < PAIRS_SHOWN else [])
        result["pairs"].append(entry)
    return result


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
    """EXERCISES, each {exercise, file, files, references, stub}, compared JOBS at once (default:
    the cores), each in a process of its own (reading sim's report is Python's work: threads would
    share one core); returns each one's {exercise, file, compared, pairs_above, pairs}."""
    jobs = min(jobs or max(1, len(os.sched_getaffinity(0))), max(1, len(exercises)))
    if jobs == 1:
        return [dict({"exercise": e["exercise"], "file": e["file"]},
                     **exercise_pairs(e["files"], e["references"], e["stub"])) for e in exercises]
    context = multiprocessing.get_context("fork")  # the merge step's grading threads have all ended
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        futures = [pool.submit(exercise_pairs, e["files"], e["references"], e["stub"]) for e in exercises]
        return [dict({"exercise": e["exercise"], "file": e["file"]}, **f.result())
                for e, f in zip(exercises, futures)]
