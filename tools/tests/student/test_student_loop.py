#!/usr/bin/env python3
"""The student loop as a student meets it, in a scratch copy of the workbook: chapter 3 solved but
for a crash in 3.3, an endless loop in 3.4 and a syntax error in 3.5. `./workbook check 3` must keep
3.1 and 3.2 passing and name each of the three failures; `progress` must agree; `watch` must live
through an 80x24 terminal; `run 1 --diff` must tell a solved chapter from a wrong one; the command
line must refuse what it does not understand.

--unit runs only the quick part (no build): watch's screen and the lesson comparison, on made-up
input."""
from __future__ import annotations

import argparse
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

from scalebook.course import read_manifest
from tests.harness import ROOT, copy_tree, expect, finish

CH3 = "03-attention-scaling"


def student_tree(temp: str) -> Path:
    """A scratch copy of the workbook in TEMP, configured as a student's (the student preset)."""
    tree = Path(temp) / "workbook"
    tree.mkdir()
    copy_tree(tree)
    # Share the maintainers' compiler cache ($CCACHE_DIR, else build/ccache): lib, the checks and
    # the exercise files as shipped (the stubs, cached by the reference build's proof that they
    # fail) are not recompiled from zero. A student's edited file misses the cache either way.
    cache = os.environ.get("CCACHE_DIR") or ROOT / "build" / "ccache"
    subprocess.run(["cmake", "--preset", "student", f"-DSCALEBOOK_CCACHE_DIR={cache}",
                    "-DSCALEBOOK_CACHE_EXERCISES=ON"],
                   cwd=tree, stdout=subprocess.DEVNULL, check=True)
    return tree


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
    plain = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", last).replace("\r", "")
    expect(all(len(line) <= 80 for line in plain.splitlines()),
           f"watch's lines fit 80 columns ({max(map(len, plain.splitlines()), default=0)})")
    expect(re.search(r"checked at \d\d:\d\d:\d\d after 03-attention-scaling/ex1_dot_scores\.cpp changed",
                     plain) is not None, "watch says when it last checked, after which file was saved")


LONG_MESSAGE = ("1.1 fit_scaling: the standard deviation of feature 2 is 0.5 but should be 1.0 — "
                "you divided by n − 1, and the contract asks for the population standard deviation "
                "(divide by n); inputs: rows [[1, 2], [3, 4], [5, 6]]; see exercises/01-feature-scaling/"
                "ex1_fit_scaling.cpp:12 and the chapter's page, section 'Standardising features', "
                "which works this very example through step by step before you write any code")


def unit_checks() -> None:
    """watch's screen and run --diff's comparison, on made-up input (no build needed)."""
    from scalebook.commands import watch
    from scalebook import lessondiff, ui
    from scalebook.course import Chapter, chapter_advice, hints_of
    from scalebook.loop.run_checks import mistake_ids
    words = LONG_MESSAGE.split()
    lines = ["chapter 1 feature-scaling", "  ✗ 1.1", "      " + LONG_MESSAGE] + [
        f"  ✗ 1.{k}  {LONG_MESSAGE}" for k in range(2, 9)]
    screen = watch.watch_screen(lines, "14:03:12", ["01-feature-scaling/ex1_fit_scaling.cpp"], 80, 24)
    expect(all(ui.visible(line) <= 80 for line in screen), "watch: every line fits 80 columns")
    expect(len(screen) <= 23, f"watch: the screen fits 24 rows, the cursor's included ({len(screen)} lines)")
    expect(screen[0].startswith("checked at 14:03:12 after 01-feature-scaling/ex1_fit_scaling.cpp changed"),
           "watch: the first line says when it last checked and which file changed")
    expect("watching exercises/" in screen[-1], "watch: the last line says what it is watching")
    pieces = ui.wrap("      " + LONG_MESSAGE, 80)
    expect(len(pieces) > 2 and " ".join(p.strip() for p in pieces).split() == words,
           "watch: a long message is wrapped at spaces, every word whole")
    expect(all(p.startswith("        ") for p in pieces[1:]), "watch: wrapped lines are indented under their start")
    path = "exercises/" + "a_folder_name_that_is_long/" * 5 + "ex1.cpp"
    cut = ui.wrap(f"  see {path}", 40)
    expect(all(ui.visible(p) <= 40 for p in cut) and "".join(p.strip() for p in cut[1:]) == path,
           "watch: a word longer than the screen is cut, its text kept")
    more = watch.changed_files({"a.cpp": (1.0, 3), "b.cpp": (1.0, 3)}, {"a.cpp": (2.0, 3), "c.cpp": (1.0, 1)})
    expect(more == ["a.cpp", "b.cpp", "c.cpp"], "watch: a saved, a removed and an added file are each named")
    expect(watch.what_changed(["01-x/.ex1.cpp.swp", "01-x/ex1.cpp", "01-x/ex1.cpp~"]) == " after 01-x/ex1.cpp changed"
           and watch.what_changed(["01-x/.ex1.cpp.swp"]) == " after 01-x/.ex1.cpp.swp changed",
           "watch: an editor's swap and backup files are named only when nothing else changed")
    expect("\x1b" not in watch.what_changed(["01-x/\x1b[2Jevil.cpp"]),
           "watch: a file name cannot send the terminal a control sequence")

    book = ["scaled feature ranges", "feature 0: mean 0.0000 std 1.0000", "accuracy 57/100",
            "loss after 100 steps 0.123456", "descent took 12.5 ms", "done"]
    mine = ["scaled feature ranges", "feature 0: mean -0.0000 std 0.9999", "accuracy 58/100",
            "loss after 100 steps 0.250000", "descent took 48.1 ms", "extra line", "done"]
    rows = lessondiff.compare(mine, book)
    kinds = [(row.kind, row.mine, row.book) for row in rows]
    expect(kinds == [("same", mine[0], book[0]), ("close", mine[1], book[1]), ("differs", mine[2], book[2]),
                     ("differs", mine[3], book[3]), ("close", mine[4], book[4]), ("differs", mine[5], None),
                     ("same", mine[6], book[5])],
           "run --diff: last digit and timing are fine; a count, a far number, an extra line differ")
    expect(lessondiff.classify("w = 1.5e-03", "w = 1.6e-03") == "close"
           and lessondiff.classify("w = 1.5e-03", "w = 1.7e-03") == "differs"
           and lessondiff.classify("p = 0.1235", "p = 0.12349999") == "close"
           and lessondiff.classify("x = nan", "x = 0.5") == "differs"
           and lessondiff.classify("b | -0.0000 |  9.99", "b |  0.0000 | 10.00") == "close",
           "run --diff: the tolerance is one unit in the last printed digit")
    drawn = lessondiff.render(rows, 80)
    hostile = lessondiff.render(lessondiff.compare(["\x1b]0;owned\x07\x1b[2J 1.5"], ["1.5"]), 80)
    expect(not any("\x1b" in line or "\x07" in line for line in hostile),
           "run --diff: the lesson's output cannot send the terminal a control sequence")
    expect(all(ui.visible(line) <= 80 for line in drawn), "run --diff: side by side fits 80 columns")
    expect(any(line.startswith("✗ accuracy 58/100") and line.rstrip().endswith("accuracy 57/100")
               for line in drawn), "run --diff: a differing line is marked, yours beside the book's")
    # A lesson's table wider than half the screen: stacked, so that no row's tail repeats down it;
    # and numbers within the chapter's tolerance (roundoff reports) are close, counts exact.
    table = [f"  n = {n:5d}   scores {n * 3:12.3e}   share {1.9 + n / 1e6:5.1f}%" for n in range(100, 600, 100)]
    stacked = lessondiff.render(lessondiff.compare(table, table), 60)
    expect(len(stacked) == len(table) + 1 and all(ui.visible(l) <= 60 for l in stacked),
           f"run --diff: a table wider than half the screen is shown once per line, not wrapped: {stacked}")
    noise = lessondiff.compare(["max diff 7.2e-16 in 10/16 tiles", "largest difference 5.55e-17"],
                               ["max diff 6.7e-16 in 10/16 tiles", "largest difference 0"], 1e-12)
    expect([r.kind for r in noise] == ["close", "close"], f"run --diff: roundoff within the tolerance is close: {noise}")
    expect(lessondiff.classify("in 11/16 tiles", "in 10/16 tiles", 1e-6) == "differs",
           "run --diff: a count must be equal, whatever the tolerance")
    expect(lessondiff.tolerance_of(ROOT / "chapters" / "07-under-the-hood") == 1e-12,
           "run --diff: a chapter's tolerance comes from its CMakeLists.txt")
    said = " ".join(lessondiff.summary(rows, 1))
    expect("2 lines as in the book" in said and "; 2 only in the last printed digit, within the checks' tolerance or in a timing" in said
           and "3 differing (✗)" in said
           and "your line 3, \"accuracy 58/100\", where the book has \"accuracy 57/100\"" in said, "run --diff: the summary counts each kind and names the first")

    # A hint for a named mistake is keyed on the mistake's id, may run over several lines of hints.md,
    # and ends at a blank line; hint selects it by the ids the last message names (not its text).
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp) / "chapters" / "09-made-up"
        folder.mkdir(parents=True)
        (folder / "hints.md").write_text(
            "## 9.1 made_up {#x}\n\n1. First tier,\n   on two lines.\n\n"
            "If the check names [off_by_one]: the end is exclusive.\nA second line of it.\n"
            "\nA paragraph that is no hint.\n"
            "If the check names [sign_flipped]: flip it.\n\n## 9.2 other {#y}\n\n1. Not 9.1's.\n\n"
            "If the check names [from_9_2]: 9.2's own.\n")
        chapter = Chapter("09-made-up", 9, ("9.1", "9.2"))
        hints = hints_of(chapter, "9.1", Path(temp))
        everything = chapter_advice(chapter, "9.2", Path(temp))
    expect(hints.tiers == ["First tier, on two lines."]
           and hints.by_mistake == [("off_by_one", "the end is exclusive. A second line of it."),
                                    ("sign_flipped", "flip it.")],
           f"hints: a named mistake's advice keeps its every line, and stops at a blank line: {hints}")
    expect([m for m, _ in everything] == ["from_9_2", "off_by_one", "sign_flipped"],
           f"hints: an exercise's own advice comes first, then the chapter's: {everything}")
    named = mistake_ids("x | the output matches known mistake [off_by_one]: ... | known mistake (forged]: no "
                        "| the output matches known mistake [sign_flipped]: ... [off_by_one]")
    expect(named == ["off_by_one", "sign_flipped"], f"mistake_ids reads the ids in the checks' one form, once each: {named}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--unit", action="store_true", help="only the quick checks that need no build")
    if parser.parse_args().unit:
        unit_checks()
        return finish("every quick student-loop expectation holds")
    unit_checks()
    with tempfile.TemporaryDirectory(prefix="scalebook-loop-") as temp:
        tree = student_tree(temp)

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
        beside = workbook(tree, "run", "1", "--diff")
        expect(beside.returncode == 0 and "Your lesson prints what the book shows." in beside.stdout
               and not re.search(r"^[✗≈] ", beside.stdout, re.M),
               "run 1 --diff on a solved chapter 1: every line as in the book, exit 0")
        fit = tree / "exercises" / "01-feature-scaling" / "ex1_fit_scaling.cpp"
        solved = fit.read_text()
        fit.write_text(solved.replace("static_cast<double>(n))", "static_cast<double>(n - 1))"))
        wrong = workbook(tree, "run", "1", "--diff")
        expect(solved != fit.read_text() and wrong.returncode == 1
               and re.search(r"^✗ CRIM .*│ CRIM |^✗ yours +CRIM .*\n +book +CRIM ", wrong.stdout, re.M) is not None
               and "The first difference is your line" in wrong.stdout,
               "run 1 --diff with the sample standard deviation in 1.1: the changed lines marked ✗, exit 1")
        fit.write_text(solved)

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
        # Every exercise of chapter 3 passes but the three broken above, however many the chapter has.
        total = len(read_manifest(tree / "chapters" / CH3).sources)
        counted = f"chapter 3  {total - 3}/{total}"
        expect(counted in out, f"progress counts {counted.split()[-1]}: "
                               f"{next((l for l in out.splitlines() if l.startswith('chapter 3 ')), 'no progress line')}")
        expect(seconds < 120, f"check with a hang returned in {seconds:.0f} s")

        lesson = workbook(tree, "run", "3")
        expect(lesson.returncode == 1 and "exercise 3.5 does not compile" in lesson.stdout,
               "run 3 with 3.5 broken names it instead of running the lesson")

        progress = workbook(tree, "--timeout", "2", "progress")
        expect(counted in progress.stdout and "next: exercise 3.3 — crashed" in progress.stdout,
               "progress agrees, and next: quotes what happened to 3.3")

        watch_in_small_terminal(tree)
    return finish("every student-loop expectation holds")


if __name__ == "__main__":
    sys.exit(main())
