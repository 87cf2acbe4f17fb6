#!/usr/bin/env python3
"""An exercise cannot hand in lib's answer: compiled with the flags the build gives exercise files
(compile_commands.json of BUILD_DIR), a chapter's exercise that includes lib's copy of what that
chapter (or a later one) teaches fails to compile with a message that says why, while lib's copies
of earlier chapters stay available.

    test_layering.py BUILD_DIR
"""
from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

# (chapter, lib header, allowed?)
CASES = [(3, "scalebook/softmax.hpp", False), (3, "scalebook/linalg.hpp", False),
         (3, "scalebook/masking.hpp", False), (4, "scalebook/masking.hpp", False),
         (4, "scalebook/softmax.hpp", True), (4, "scalebook/linalg.hpp", True),
         (1, "scalebook/standardize.hpp", False), (2, "scalebook/standardize.hpp", True),
         (1, "scalebook/mlp.hpp", False), (2, "scalebook/mlp.hpp", False),
         (3, "scalebook/mlp.hpp", True), (1, "scalebook/data.hpp", True)]


def main() -> int:
    build = Path(sys.argv[1])
    commands = json.loads((build / "compile_commands.json").read_text())
    failures = []
    for chapter, header, allowed in CASES:
        entry = next((c for c in commands if f"/solutions/{chapter:02d}-" in c["file"]), None)
        if entry is None:
            failures.append(f"no exercise file of chapter {chapter} in compile_commands.json")
            continue
        words = shlex.split(entry["command"])
        out = words.index("-o")
        words[out:out + 2] = ["-fsyntax-only"]
        words += ["-include", header]
        result = subprocess.run(words, cwd=entry["directory"], capture_output=True, text=True)
        compiled = result.returncode == 0
        said = f"lib's copy of what chapter" in result.stderr or "teaches" in result.stderr
        ok = compiled if allowed else (not compiled and said)
        print(("ok   " if ok else "FAIL ") + f"chapter {chapter} exercise including {header}: "
              + ("compiles" if compiled else "refused: " + next(
                  (l for l in result.stderr.splitlines() if "#error" in l or "error:" in l), "?")))
        if not ok:
            failures.append(f"chapter {chapter} / {header}")
    print(f"{len(failures)} failed" if failures else "every layering expectation holds")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
