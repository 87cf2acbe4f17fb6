#!/usr/bin/env python3
"""`./workbook bench N --help` shows that benchmark's options at once: nothing built or configured,
no release figures printed first, in the maintainers' tree and in the student edition; a mistyped
option is refused the same way, before any build.

The maintainers' tree is a scratch copy of this one without a build/, so that a command that tried
to build would configure first, with a cmake that only notes the call and fails; the edition is the
same copy with an EDITION file and release figures for chapter 7 in docs/prebuilt, as release
writes them.

    test_bench_help.py
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.harness import copy_tree, expect, finish

FIGURES = "release figures that --help must not print"
OPTIONS = {"7": ["--repetitions N", "--sweep", "--out DIR", "--require"], "2": ["--repeat N", "--no-torch"]}


def workbook(tree: Path, fake: Path, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    """./workbook ARGS in TREE, with FAKE first on the PATH: its cmake only notes that it was called
    (FAKE/called) and fails, so that nothing can be configured or built."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, str(tree / "tools" / "workbook.py"), *args], cwd=tree, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=120,
                          env=dict(os.environ, PATH=f"{fake}:{os.environ.get('PATH', '/usr/bin:/bin')}"))
    return done, time.monotonic() - started


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="scalebook-bench-help-") as scratch:
        tree = Path(scratch) / "tree"
        copy_tree(tree)
        fake = Path(scratch) / "bin"
        fake.mkdir()
        (fake / "cmake").write_text(f"#!/bin/sh\necho \"$@\" >> {fake / 'called'}\nexit 1\n")
        (fake / "cmake").chmod(0o755)
        for where in ("the maintainers' tree", "the student edition"):
            if where == "the student edition":
                (tree / "EDITION").write_text("scalebook, student edition\n")
                prebuilt = tree / "docs" / "prebuilt" / "07-under-the-hood"
                prebuilt.mkdir(parents=True)
                (prebuilt / "bench.txt").write_text(FIGURES + "\n")
            for chapter, options in OPTIONS.items():
                helped, seconds = workbook(tree, fake, "bench", chapter, "--help")
                said = helped.stdout + helped.stderr
                ok = (helped.returncode == 0 and said.startswith(f"usage: ./workbook bench {chapter} ")
                      and all(option in helped.stdout for option in options)
                      and "--bench" not in said and "--whose" not in said and FIGURES not in said
                      and "Building" not in said and not (fake / "called").exists())
                expect(ok, f"in {where}, ./workbook bench {chapter} --help lists {', '.join(options)} and no "
                           f"internal option, builds nothing, prints no release figures ({seconds:.1f} s)"
                           + ("" if ok else f": {said[-600:]}"))
            wrong, _ = workbook(tree, fake, "bench", "7", "--repetitons", "3")
            expect(wrong.returncode == 2 and "unrecognized arguments: --repetitons" in wrong.stderr
                   and FIGURES not in wrong.stdout and not (fake / "called").exists(),
                   f"in {where}, a mistyped option is refused with the usage line before anything is built "
                   f"({wrong.stderr.strip().splitlines()[-1] if wrong.stderr.strip() else ''})")
    return finish("bench's --help and option errors come before any build")


if __name__ == "__main__":
    sys.exit(main())
