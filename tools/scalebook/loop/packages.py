"""Installs the Debian packages scalebook needs (as root), or names the exact command.

The Debian packages scalebook needs: found with one dpkg-query, installed when root, named with
the exact apt-get command otherwise.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from ..errors import PackageError
from ..ui import Progress, bold, say

# What building and checking the workbook needs. The grader's sandbox, the browser test and the
# PyTorch comparisons add their own (see `extra` and .ci/run).
PACKAGES = ["cmake", "ninja-build", "g++", "binutils", "doctest-dev", "libeigen3-dev", "doxygen",
            "graphviz", "libjs-mathjax", "doxygen-awesome-css", "gnuplot-nox", "python3", "ccache",
            "util-linux", "bubblewrap", "python3-seccomp"]


def installed(packages: list[str]) -> set[str]:
    """The packages among PACKAGES that dpkg reports as installed. dpkg-query exits non-zero when it
    does not know some of them (a fresh machine): that is an answer, not a failure."""
    result = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Status}\\n", *packages],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            stdin=subprocess.DEVNULL)
    found = set()
    for line in result.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[-3:] == ["install", "ok", "installed"]:
            found.add(parts[0].split(":")[0])
    return found


def ensure(stamp: Path, extra: list[str] | None = None) -> None:
    """Installs what is missing (as root) or raises PackageError naming it. The stamp skips the
    query on later runs until the package list changes."""
    wanted = PACKAGES + list(extra or [])
    if shutil.which("dpkg-query") is None:
        say("(not a Debian system: skipping the package check; CMake names anything missing)")
        return
    if not extra and stamp.exists() and stamp.stat().st_mtime >= Path(__file__).stat().st_mtime:
        return
    missing = [p for p in wanted if p not in installed(wanted)]
    if missing:
        install = "apt-get install -y " + " ".join(missing)
        if os.geteuid() != 0:
            raise PackageError("scalebook needs these Debian packages, which are not installed:\n"
                               f"  {' '.join(missing)}\n"
                               "Install them, then run ./workbook again:\n"
                               f"  sudo apt-get update && sudo {install}")
        progress = Progress(f"Installing the Debian packages scalebook needs: {' '.join(missing)}")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        for step in (["apt-get", "update"], ["apt-get", "install", "-y", *missing]):
            process = subprocess.Popen(step, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       text=True, env=env, stdin=subprocess.DEVNULL)
            output = []
            assert process.stdout is not None
            for line in process.stdout:
                output.append(line)
                progress.update(line.strip())
            if process.wait() != 0:
                progress.done()
                raise PackageError(f"'{' '.join(step)}' failed:\n" + "".join(output[-15:]) +
                                   f"\nInstall by hand, then run ./workbook again:\n  apt-get update && {install}")
        progress.done()
        still = [p for p in wanted if p not in installed(wanted)]
        if still:
            raise PackageError(f"still missing after apt-get install: {' '.join(still)}")
        say(f"{bold('Installed')}: {' '.join(missing)}")
    if not extra:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.touch()
