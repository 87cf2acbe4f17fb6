#!/usr/bin/env python3
"""Every exercise stub keeps its instructions and the student's code apart, so that a fix to the
instructions always merges with a student's work (scalebook/loop/errata.py says why).

The layout: the file's header comment holds the instructions, under "// What to write:", and ends
with the fence line; below it only code (the includes, the namespace, each signature and its
not_implemented call), no comment but the namespace's closing one. Then, with git's own three-way
merge (git merge-file), for every stub: the student's file is the stub above the fence and the
reference's code below it (a solved exercise: every line below the fence changed); an erratum
changes every line above the fence, or the first, the instructions' first or the last one alone,
deletes the last, or adds a line just above the fence. Each must merge without a conflict into
exactly the erratum's lines above the fence and the student's code, byte for byte, below it. A
control shows the check can fail: the instructions right above the signature, as the stubs had
them before, do conflict.

    test_stub_layout.py
"""
from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

from scalebook.course import all_chapters
from scalebook.lint import stub_layout as layout_problems
from scalebook.loop.errata import FENCE, INSTRUCTIONS
from tests.harness import ROOT, expect, finish


def merge(ours: str, base: str, theirs: str, work: Path) -> tuple[int, str]:
    """git merge-file's verdict (0: clean, >0: that many conflicts) and its result."""
    for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
        (work / name).write_text(text)
    done = subprocess.run(["git", "merge-file", "-p", str(work / "ours"), str(work / "base"), str(work / "theirs")],
                          capture_output=True, text=True)
    return done.returncode, done.stdout


def errata_of(stub: list[str], fence: int) -> list[tuple[str, list[str]]]:
    """Fixes above the fence: every line changed at once; the first line, the instructions' first
    line and the last line above the fence changed alone; that last line deleted; a line added just
    above the fence. (Each merge is a process: one per line of every stub would take a minute on
    a loaded machine, and a fix of fewer lines makes a hunk inside the all-lines one.)"""
    def changed(*lines: int) -> list[str]:
        return [line + " (corrected)" if i in lines else line for i, line in enumerate(stub)]
    first = stub.index(INSTRUCTIONS) + 1
    return [("every line changed", changed(*range(fence))), ("line 1 changed", changed(0)),
            (f"line {first + 1} changed", changed(first)), (f"line {fence} changed", changed(fence - 1)),
            (f"line {fence} deleted", stub[:fence - 1] + stub[fence:]),
            ("a line added above the fence", stub[:fence] + ["// One more sentence."] + stub[fence:])]


def code_of(solution: str) -> list[str]:
    lines = solution.splitlines()
    return lines[next(i for i, line in enumerate(lines) if line.startswith("#include")):]


def main() -> int:
    chapters = all_chapters()
    stubs = [(c, s) for c in chapters for s in c.sources]
    present = [ROOT / "exercises" / c.folder / s for c, s in stubs]
    expect(bool(stubs) and all(p.is_file() for p in present),
           f"every exercise file the manifests name is here to check: {len(stubs)} in {len(chapters)} chapters")
    merges = 0
    with tempfile.TemporaryDirectory(prefix="scalebook-stub-layout-") as scratch:
        work = Path(scratch)
        for chapter, source in stubs:
            name = f"exercises/{chapter.folder}/{source}"
            text = (ROOT / name).read_text()
            problems = layout_problems(text)
            expect(not problems, f"{name}: instructions above the fence, only code below it"
                                 + (f": {'; '.join(problems)}" if problems else ""), quiet=True)
            if problems:
                continue
            stub = text.splitlines()
            fence = stub.index(FENCE)
            mine = stub[:fence + 1] + code_of((ROOT / "solutions" / chapter.folder / source).read_text())
            clean = []
            for what, fixed in errata_of(stub, fence):
                conflicts, result = merge("\n".join(mine) + "\n", text, "\n".join(fixed) + "\n", work)
                merges += 1
                at = fixed.index(FENCE)
                wanted = "\n".join(fixed[:at + 1] + mine[fence + 1:]) + "\n"
                if conflicts or result != wanted:
                    clean.append(f"{what}: {'a conflict' if conflicts else 'merged into something else'}")
            expect(not clean, f"{name}: every fix of its instructions merges with a solved exercise, whose code "
                              f"stays byte for byte" + (f": {clean[:3]}" if clean else ""), quiet=True)
        print(f"ok   {merges} fixes of instructions merged with solved exercises, each result compared byte for byte")

        # The control: instructions right above the signature (the old layout) conflict with a
        # student's edit of the signature, which git's merge treats as adjacent.
        old = "// Return x.\n// Throw on NaN.\nint f([[maybe_unused]] int x) {\n  not_implemented();\n}\n"
        solved = "// Return x.\n// Throw on NaN.\nint f(int x) {\n  return x;\n}\n"
        fixed = "// Return x.\n// Throw ValueError on NaN.\nint f([[maybe_unused]] int x) {\n  not_implemented();\n}\n"
        conflicts, _ = merge(solved, old, fixed, work)
        expect(conflicts > 0, "control: without the fence, a fix of the line above the signature conflicts "
                              "with a solved exercise (the check above can fail)")
        expect(layout_problems(old) != [], "control: the layout check rejects a stub without the fence")
    # The book's browser check (a script of its own, run by Debian's python3 with selenium) finds a
    # stub's instructions and fence by the same lines.
    browser = (ROOT / "docs" / "tests" / "check_docs_in_browser.py").read_text()
    said = dict(re.findall(r'^(STUB_INSTRUCTIONS|STUB_FENCE) = "(.*)"$', browser, re.M))
    expect(said.get("STUB_INSTRUCTIONS") == INSTRUCTIONS and FENCE.startswith(said.get("STUB_FENCE") or "?"),
           f"the book's browser check looks for the same instructions and fence lines: {said}")
    return finish("every stub keeps instructions and code apart")


if __name__ == "__main__":
    sys.exit(main())
