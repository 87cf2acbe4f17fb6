#!/usr/bin/env python3
"""A non-root grader where user namespaces are refused: grading stops with the cause and the remedies.

    python3 -m tests.system.test_no_sandbox   (from tools/, as root: it drops to uid 65534 itself)

As on Ubuntu 24.04 (AppArmor) or in a container under Docker's default seccomp profile: a seccomp
filter makes unshare and clone with CLONE_NEWUSER fail (EPERM, as Docker's profile does; clone3
ENOSYS, so bubblewrap falls back to clone), then the process becomes uid 65534 and runs
`./workbook grade` on a submission. Neither sandbox can be made (bubblewrap cannot make its
namespaces; the uid box needs root), so the command must stop, exit status 2, with one message that
names both causes and the remedies, no traceback, and no grades written. Then the same with
SCALEBOOK_SANDBOX=uid as uid 65534 (the uid box asked for, not root). Seconds: no kit is built.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.harness import ROOT, WORKBOOK, expect, finish

NOBODY = 65534
CLONE_NEWUSER = 0x10000000


def refused_namespaces_then_nobody() -> None:
    """preexec_fn: the filter (no user namespaces), then uid 65534 (no_new_privs is the filter's)."""
    import errno

    import seccomp
    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    rules.add_rule(seccomp.ERRNO(errno.EPERM), "unshare")
    rules.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER))
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    rules.load()
    os.setgroups([])
    os.setresgid(NOBODY, NOBODY, NOBODY)
    os.setresuid(NOBODY, NOBODY, NOBODY)


def main() -> int:
    if os.geteuid() != 0:
        print("SKIP: this test drops from root to uid 65534")
        return 77
    # The packages grading needs, checked (and the check's stamp written) as root, as on an
    # instructor's machine set up before: uid 65534 may not write the tree's build/.
    from scalebook.loop import packages
    packages.ensure("grade")
    base = Path(tempfile.mkdtemp(prefix="no-sandbox-"))
    base.chmod(0o777)
    try:
        submission = base / "ada" / "exercises" / "04-causal-masking"
        submission.mkdir(parents=True)
        for source in (ROOT / "solutions" / "04-causal-masking").glob("ex*.cpp"):
            shutil.copy(source, submission / source.name)
        for path in [base / "ada", *(base / "ada").rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        for forced in (None, "uid"):
            out = base / f"grades-{forced or 'auto'}"
            env = {"PATH": "/usr/bin:/bin", "HOME": str(base), "LC_ALL": "C.UTF-8",
                   **({"SCALEBOOK_SANDBOX": forced} if forced else {})}
            done = subprocess.run(["/usr/bin/python3", str(WORKBOOK), "grade", "--out", str(out), "--chapters", "4",
                                   str(base / "ada")], capture_output=True, text=True, env=env,
                                  preexec_fn=refused_namespaces_then_nobody, cwd=base)
            said = done.stdout + done.stderr
            print(said.strip())
            how = f"(SCALEBOOK_SANDBOX={forced})" if forced else "(chosen here)"
            expect(done.returncode == 2, f"{how} grading stops with exit status 2 ({done.returncode})")
            expect("Traceback" not in said, f"{how} no traceback")
            expect(not (out / "grades.csv").exists() and not any(out.rglob("report.json")),
                   f"{how} no grades are written")
            if forced is None:
                expect("bubblewrap cannot create its namespaces" in said, f"{how} the message names bubblewrap's refusal")
                expect("No permissions to create new namespace" in said or "Operation not permitted" in said,
                       f"{how} ... in bubblewrap's own words")
                expect("the uid box needs root" in said, f"{how} the message says why the uid box cannot be made")
                expect("Remedies:" in said and "seccomp=unconfined" in said and "grade as root" in said,
                       f"{how} the message gives the remedies for this cause")
            else:
                expect("the uid box needs root" in said, f"{how} the message says the uid box needs root")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return finish("a non-root grader without user namespaces is stopped with the cause and the remedies")


if __name__ == "__main__":
    sys.exit(main())
