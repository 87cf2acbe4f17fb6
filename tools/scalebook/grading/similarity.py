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
PAIRS_SHOWN = 40        # of those, with their shared runs (the page shows these)
RUNS_LISTED = 6         # per pair, the longest first
RUN_LINES = 80          # per run and side, the lines shown
SIM_SECONDS = 120       # one exercise's comparison
FILE_INFO = re.compile(r"^File (\S+): (\d+) tokens?, (\d+) lines?")
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


def compare(files: dict[str, str], references: dict[str, str]) -> tuple[dict[str, int], dict[tuple, list]]:
    """sim_c++ on FILES ({who: text}, compared with each other and with the references) and
    REFERENCES ({who: text}, compared with the class only). Returns each file's token count and,
    per ordered pair (a, b), the runs of a found in b: (a_first, a_last, b_first, b_last, tokens)."""
    with tempfile.TemporaryDirectory(prefix="scalebook-sim-") as temp:
        names: dict[str, str] = {}  # our file name -> who: nothing a student chose reaches sim's arguments
        listed = []
        for index, (who, text) in enumerate([*files.items(), *references.items()]):
            name = f"f{index}.cpp"
            names[name] = who
            Path(temp, name).write_text(text, errors="surrogateescape")
            listed.append(name)
        if references:
            listed.insert(len(files), "/")
        try:
            done = subprocess.run([SIM, "-e", "-n", "-s", "-a", "-r", str(RUN_TOKENS), "-w", "200", "-i"],
                                  input="\n".join(listed) + "\n", capture_output=True, text=True, cwd=temp,
                                  timeout=SIM_SECONDS, errors="replace")
        except subprocess.TimeoutExpired as error:
            raise GradingError(f"similarity: {SIM} took more than {SIM_SECONDS} s") from error
        if done.returncode != 0:
            raise GradingError(f"similarity: {SIM} failed: {done.stderr.strip()[:300]}")
    return parse(done.stdout, names)


def parse(output: str, names: dict[str, str]) -> tuple[dict[str, int], dict[tuple, list]]:
    """sim_c++ -n's report read back: tokens per file, runs per ordered pair."""
    tokens: dict[str, int] = {}
    runs: dict[tuple, list] = {}
    for line in output.splitlines():
        info = FILE_INFO.match(line)
        if info and info.group(1) in names:
            tokens[names[info.group(1)]] = int(info.group(2))
            continue
        run = RUN_LINE.match(line)
        if run and run.group(1) in names and run.group(4) in names:
            a, b = names[run.group(1)], names[run.group(4)]
            if a != b:
                runs.setdefault((a, b), []).append(tuple(int(run.group(i)) for i in (2, 3, 5, 6, 7)))
    return tokens, runs


def pairs(tokens: dict[str, int], runs: dict[tuple, list], references: set[str]) -> list[dict]:
    """The pairs above the threshold, most similar first: each file's share in the other (percent;
    None where sim does not compare that way: a reference is never the first file) and the runs."""
    found: dict[tuple, dict] = {}
    for (a, b), listed in runs.items():
        key = (a, b) if b in references else (b, a) if a in references else tuple(sorted((a, b)))  # a reference second
        entry = found.setdefault(key, {"a": key[0], "b": key[1], "a_percent": None, "b_percent": None,
                                       "shared_tokens": 0, "runs": []})
        shared = sum(r[4] for r in listed)
        side = "a" if a == key[0] else "b"
        entry[f"{side}_percent"] = round(100 * shared / max(1, tokens.get(a, 0)))
        if shared >= entry["shared_tokens"]:
            entry["shared_tokens"] = shared
            entry["runs"] = [{"a_lines": [r[0], r[1]] if side == "a" else [r[2], r[3]],
                              "b_lines": [r[2], r[3]] if side == "a" else [r[0], r[1]], "tokens": r[4]}
                             for r in sorted(listed, key=lambda r: -r[4])]
    kept = []
    for entry in found.values():
        percent = max(p for p in (entry["a_percent"], entry["b_percent"]) if p is not None)
        if percent >= THRESHOLD and entry["shared_tokens"] >= MIN_TOKENS:
            kept.append(dict(entry, percent=percent, reference=entry["b"] in references))
    return sorted(kept, key=lambda e: (-e["percent"], -e["shared_tokens"], e["a"], e["b"]))


def exercise_pairs(files: dict[str, str], references: dict[str, str], stub: str) -> dict:
    """One exercise: its files (stub lines blanked) compared; the pairs above the threshold."""
    stripped = {who: without_stub(text, stub) for who, text in files.items()}
    stripped_refs = {who: without_stub(text, stub) for who, text in references.items()}
    if len(stripped) + len(stripped_refs) < 2 or not stripped:
        return {"compared": len(stripped), "pairs_above": 0, "pairs": []}
    tokens, runs = compare(stripped, stripped_refs)
    found = pairs(tokens, runs, set(references))
    texts = {**files, **references}
    for index, entry in enumerate(found[:PAIRS_KEPT]):
        entry["runs"] = [dict(run, a_text=lines_of(texts[entry["a"]], run["a_lines"]),
                              b_text=lines_of(texts[entry["b"]], run["b_lines"]))
                         for run in entry["runs"][:RUNS_LISTED]] if index < PAIRS_SHOWN else []
    return {"compared": len(stripped), "pairs_above": len(found), "pairs": found[:PAIRS_KEPT]}


def lines_of(text: str, span: list[int]) -> str:
    """Lines FIRST to LAST (counted from 1) of TEXT, at most RUN_LINES of them."""
    first, last = span
    lines = text.splitlines()[first - 1:min(last, first - 1 + RUN_LINES)]
    return "\n".join(lines) + ("\n..." if last - first + 1 > RUN_LINES else "")


def class_similarity(exercises: list[dict], jobs: int | None = None) -> list[dict]:
    """EXERCISES, each {exercise, file, files, references, stub}, compared JOBS at once (default:
    the cores); returns each one's {exercise, file, compared, pairs_above, pairs}."""
    jobs = jobs or max(1, len(os.sched_getaffinity(0)))
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(exercise_pairs, e["files"], e["references"], e["stub"]) for e in exercises]
        return [dict({"exercise": e["exercise"], "file": e["file"]}, **f.result())
                for e, f in zip(exercises, futures)]
