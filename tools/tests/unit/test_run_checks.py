#!/usr/bin/env python3
"""run_checks runs only the checks it is given, from the first round on.

When an exercise does not compile, the chapter's checks are linked without it and its functions
left unresolved; the binary still holds that exercise's checks, which crash on their first call.
Here a stand-in for a doctest checks binary (it honours --test-case and --scalebook-results, and
dies of SIGSEGV in any check of exercise 1.1, listed first, as the real binary does) is asked for
1.2's checks only: both must pass. A run_checks that let the first round run every check would
see the binary die before any asked-for check and report both as not run.

    test_run_checks.py
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from scalebook.loop.run_checks import run_checks
from tests.harness import expect, finish

FAKE = r'''#!/usr/bin/env python3
import fnmatch, os, re, signal, sys
CASES = ["1.1 mean of a worked example", "1.2 each entry, scaled", "1.2 bad input, refused"]
args = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
wanted = [p.replace("\\,", ",") for p in re.split(r"(?<!\\),", args["--test-case"])] if "--test-case" in args else ["*"]
with open(args["--scalebook-results"], "w") as out:
    for case in CASES:
        if not any(fnmatch.fnmatchcase(case, p) for p in wanted):
            continue
        out.write(f"start\t{case}\t\n"); out.flush()
        if case.startswith("1.1 "):
            os.kill(os.getpid(), signal.SIGSEGV)  # calls 1.1's function, which did not compile
        out.write(f"passed\t{case}\t\n"); out.flush()
'''


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="scalebook-run-checks-") as scratch:
        fake = Path(scratch) / "ch01_checks_partial"
        fake.write_text(FAKE)
        fake.chmod(0o755)
        asked = ["1.2 each entry, scaled", "1.2 bad input, refused"]
        results = run_checks(fake, asked, Path(scratch) / "run", timeout=20)
        expect([results[name].status for name in asked] == ["passed", "passed"],
               f"with 1.1 not compiled, 1.2's checks run and pass: "
               f"{[(r.name, r.status, r.message) for r in results.values()]}")
    return finish("run_checks runs only the checks it is given")


if __name__ == "__main__":
    sys.exit(main())
