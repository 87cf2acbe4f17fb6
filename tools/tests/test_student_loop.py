#!/usr/bin/env python3
"""The student loop as a student meets it, in a scratch copy of the workbook: chapter 3 solved but
for a crash in 3.3, an endless loop in 3.4 and a syntax error in 3.5. `./workbook check 3` must keep
3.1 and 3.2 passing and name each of the three failures; `progress` must agree; `watch` must live
through an 80x24 terminal; the command line must refuse what it does not understand."""
from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CH3 = "03-attention-scaling"
failures: list[str] = []


def expect(condition: bool, what: str) -> None:
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        failures.append(what)


def copy_tree(target: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True)
    files = [f for f in listed.stdout.decode().split("\0") if f] if listed.returncode == 0 else []
    if not files:
        shutil.copytree(ROOT, target, ignore=shutil.ignore_patterns("build", ".git"))
        return
    for name in files:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target / name)


def workbook(tree: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([str(tree / "workbook"), *args], cwd=tree, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL,
                          timeout=timeout, env=dict(os.environ, NO_COLOR="1"))


def insert_first_statement(path: Path, signature: str, statement: str) -> None:
    text = path.read_text()
    at = text.index(signature)
    brace = text.index("{", at)
    path.write_text(text[: brace + 1] + "\n  " + statement + text[brace + 1:])


def watch_in_small_terminal(tree: Path) -> None:
    """watch in an 80x24 pseudo-terminal: it must draw a screen, survive a save, and stay alive."""
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    process = subprocess.Popen([str(tree / "workbook"), "--timeout", "1", "watch", "3"], cwd=tree,
                               stdin=child, stdout=child, stderr=child, start_new_session=True,
                               env=dict(os.environ, TERM="xterm"))
    os.close(child)
    screen = b""

    def read_until(count: int, limit: float) -> None:
        nonlocal screen
        end = time.monotonic() + limit
        while screen.count(b"watching exercises/") < count and time.monotonic() < end:
            ready, _, _ = select.select([main], [], [], 0.5)
            if ready:
                try:
                    screen += os.read(main, 65536)
                except OSError:
                    break

    read_until(1, 300)
    (tree / "exercises" / CH3 / "ex1_dot_scores.cpp").touch()
    read_until(2, 300)
    alive = process.poll() is None
    os.killpg(process.pid, signal.SIGINT)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    os.close(main)
    text = screen.decode(errors="replace")
    expect(text.count("watching exercises/") >= 2, "watch re-checks after a save in an 80x24 terminal")
    expect(alive, "watch is still running after output longer than the screen")
    last = text.split("\x1b[H\x1b[2J")[-1]
    expect(len(last.splitlines()) <= 24, f"watch's screen fits 24 lines ({len(last.splitlines())})")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="scalebook-loop-") as temp:
        tree = Path(temp) / "workbook"
        tree.mkdir()
        copy_tree(tree)
        # Share the maintainers' compiler cache: lib and the checks are not recompiled from zero.
        subprocess.run(["cmake", "--preset", "student", f"-DSCALEBOOK_CCACHE_DIR={ROOT / 'build' / 'ccache'}"],
                       cwd=tree, stdout=subprocess.DEVNULL, check=True)

        # The command line refuses what it does not understand, with the usage line.
        for args, said in ((["check", "3", "4"], "unrecognized arguments: 4"),
                           (["check", "3.1"], "try '3'"),
                           (["run", "3", "--refrence"], "unrecognized arguments: --refrence"),
                           (["progress", "extra"], "unrecognized arguments: extra"),
                           (["hint", "3.9"], "no exercise 3.9")):
            result = workbook(tree, *args)
            expect(result.returncode == 2 and said in result.stdout and "usage:" in result.stdout,
                   f"./workbook {' '.join(args)}: exit 2, says '{said}' and the usage")
        usage = workbook(tree, "--help")
        commands = ("setup", "check", "watch", "hint", "run", "progress", "grade", "release", "bench", "test")
        expect(usage.returncode == 0 and all(f"  {c} " in usage.stdout or f"  {c}\n" in usage.stdout for c in commands),
               "./workbook --help exits 0 and lists every command")
        hint = workbook(tree, "hint", "03.1", "--tier", "2")
        expect(hint.returncode == 0 and "Hint 2 of 3 for exercise 3.1" in hint.stdout, "hint 03.1 --tier 2")

        exercises, solutions = tree / "exercises" / CH3, tree / "solutions" / CH3
        for source in solutions.glob("*.cpp"):
            shutil.copy2(source, exercises / source.name)
        # The chapters before 3 done too, so that the next step progress names is chapter 3's.
        for earlier in sorted((tree / "solutions").iterdir()):
            if earlier.name < CH3:
                for source in earlier.glob("*.cpp"):
                    shutil.copy2(source, tree / "exercises" / earlier.name / source.name)
        # ./workbook run on the student's code: chapter 1 solved prints exactly what the reference prints.
        mine, theirs = workbook(tree, "run", "1"), workbook(tree, "run", "1", "--reference")
        expect(mine.returncode == 0 and theirs.returncode == 0 and len(mine.stdout.splitlines()) > 20
               and mine.stdout == theirs.stdout,
               "run 1 on a solved chapter 1 prints the reference lesson's output, line for line")

        insert_first_statement(exercises / "ex3_softmax_rows.cpp", "Matrix softmax_rows(",
                               "{ volatile int* null = nullptr; *null = 1; }")
        insert_first_statement(exercises / "ex4_dot_product_variance.cpp", "double dot_product_variance(",
                               "for (volatile int spin = 0; ; spin = spin + 1) {}")
        with open(exercises / "ex5_row_entropy.cpp", "a") as out:
            out.write("\nthis line is not C++;\n")

        start = time.monotonic()
        result = workbook(tree, "--timeout", "2", "check", "3")
        print(result.stdout)
        seconds = time.monotonic() - start
        out = result.stdout
        expect(result.returncode == 0, "check exits 0: failing exercises are progress, not an error")
        expect(re.search(r"✓ 3\.1\n", out) and re.search(r"✓ 3\.2\n", out), "3.1 and 3.2 keep passing")
        expect(re.search(r"✗ 3\.3  crashed in \"3\.3 ", out) is not None and "SIGSEGV" in out,
               "3.3 crashed, with its check and the signal")
        expect(re.search(r"✗ 3\.4  timed out in \"3\.4 ", out) is not None, "3.4 timed out, with its check")
        expect(re.search(r"✗ 3\.5  does not compile — exercises/03-attention-scaling/ex5_row_entropy\.cpp:\d+:\d+: error", out)
               is not None, "3.5 does not compile, with the compiler's first error in the student's file")
        expect("chapter 3  2/5" in out, "progress counts 2 of 5")
        expect(seconds < 120, f"check with a hang returned in {seconds:.0f} s")

        lesson = workbook(tree, "run", "3")
        expect(lesson.returncode == 1 and "exercise 3.5 does not compile" in lesson.stdout,
               "run 3 with 3.5 broken names it instead of running the lesson")

        progress = workbook(tree, "--timeout", "2", "progress")
        expect("chapter 3  2/5" in progress.stdout and "next: exercise 3.3 — crashed" in progress.stdout,
               "progress agrees, and next: quotes what happened to 3.3")

        watch_in_small_terminal(tree)
    print(f"{len(failures)} failed" if failures else "every student-loop expectation holds")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
