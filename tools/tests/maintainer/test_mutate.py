#!/usr/bin/env python3
"""./workbook mutate on a small sample: its mutants come from the C++ tokens (a comparison in a
template argument list such as static_cast<double> is never one of them), the blind-spot classes
among them (sort stability, loop bounds, narrowing, sentinels, boundary constants); a build folder that is not
configured, or whose chapter checks are not built, gets exit status 2 and one sentence with the
command that builds them (no traceback); and a sample of 7.5's mutants is killed by chapter 7's
checks in the reference build BUILD_DIR.

    test_mutate.py BUILD_DIR
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from scalebook.config import debian_python
from tests.harness import ROOT
PYTHON = debian_python()  # where python3-clang is


def mutate(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, str(ROOT / "tools" / "workbook.py"), "mutate", *args], capture_output=True, text=True,
                          timeout=1800)


def main() -> int:
    build = sys.argv[1]
    failures = []
    listed = mutate("7", "--exercise", "7.5", "--list")
    lines = listed.stdout.splitlines()
    if listed.returncode != 0 or not lines or not lines[-1].endswith("mutants"):
        failures.append(f"--list failed: {listed.stdout}{listed.stderr}")
    mutants = lines[:-1]
    for wanted in ("max -> min", "- -> +", "< -> <=", "(sign dropped)"):
        if not any(wanted in m for m in mutants):
            failures.append(f"no mutant '{wanted}' among 7.5's: {mutants}")
    # The blind-spot classes have operators: sort stability, loop bounds, narrowing, sentinels, boundaries.
    knn = mutate("1", "--exercise", "1.5", "--list").stdout
    tiled = mutate("7", "--exercise", "7.6", "--list").stdout
    flops = mutate("7", "--exercise", "7.1", "--list").stdout
    for wanted, listing in (("stable_sort -> sort", knn), ("(loop bound one short)", knn), ("double -> float", knn),
                            ("infinity -> max", tiled), ("(equality made an ordering)", tiled),
                            ("Count -> int", flops)):
        if wanted not in listing:
            failures.append(f"no mutant '{wanted}' among the blind-spot operators' mutants")
    if "(boundary constant moved by 10)" not in mutate("3", "--exercise", "3.5", "--list").stdout:
        failures.append("no boundary constant moved by 10 among 3.5's mutants (its tolerance 1e-9)")
    one = mutate("1", "--exercise", "1.1", "--list").stdout
    if "19:68" in one or "<double>" in one:
        failures.append(f"a template argument list was mutated as a comparison:\n{one}")
    with tempfile.TemporaryDirectory(prefix="mutate-test-") as scratch:
        # Not configured: an empty folder.
        empty = mutate("7", "--build", scratch)
        said = empty.stderr.strip()
        if empty.returncode != 2 or "Traceback" in empty.stderr or len(said.splitlines()) != 1 or \
                f"cmake --preset reference -B {scratch} && cmake --build {scratch} --target ch07_checks" not in said:
            failures.append(f"an unconfigured build folder did not give status 2 and the command that builds it "
                            f"(status {empty.returncode}):\n{empty.stdout}{empty.stderr}")
        # Configured, but the chapter's checks are not built: a build.ninja whose ch07_checks is due.
        folder = Path(scratch)
        (folder / "build.ninja").write_text("rule touch\n  command = touch $out\n"
                                            "build checks_binary: touch\nbuild ch07_checks: phony checks_binary\n")
        (folder / "compile_commands.json").write_text("[]\n")
        unbuilt = mutate("7", "--build", scratch)
        said = unbuilt.stderr.strip()
        if unbuilt.returncode != 2 or "Traceback" in unbuilt.stderr or len(said.splitlines()) != 1 or \
                "not built" not in said or f"cmake --build {scratch} --target ch07_checks -j2" not in said or \
                "--preset" in said:
            failures.append(f"a build folder without chapter 7's checks did not give status 2 and the command that "
                            f"builds them (status {unbuilt.returncode}):\n{unbuilt.stdout}{unbuilt.stderr}")
    sample = mutate("7", "--exercise", "7.5", "--sample", "2", "--seed", "5", "--build", build)
    if sample.returncode != 0 or "2 killed" not in sample.stdout:
        failures.append(f"the sample of 7.5's mutants was not killed:\n{sample.stdout}{sample.stderr}")
    for failure in failures:
        print(f"FAIL: {failure}")
    print("./workbook mutate: " + ("its sample is killed" if not failures else f"{len(failures)} problems"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
