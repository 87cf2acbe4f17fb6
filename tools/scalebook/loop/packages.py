"""Installs the Debian packages a command needs (as root), or names the exact command to run.

The packages come from config.json, by purpose (./workbook, bench, grade, test): found with one
dpkg-query, installed when root, named with the exact apt-get command otherwise.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from ..config import CONFIG_FILE, ROOT, packages_for
from ..errors import PackageError
from ..ui import Progress, bold, say


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


def stamp_of(purpose: str) -> Path:
    """build/.packages-PURPOSE-ok: PURPOSE's packages were all installed when it was written."""
    return ROOT / "build" / f".packages-{purpose}-ok"


def ensure(purpose: str = "workbook") -> None:
    """Installs what PURPOSE needs and is missing (as root) or raises PackageError naming it. The
    stamp skips the query on later runs until the package lists (config.json) or this file change."""
    wanted = packages_for(purpose)
    stamp = stamp_of(purpose)
    if shutil.which("dpkg-query") is None:
        say("(not a Debian system: skipping the package check; CMake names anything missing)")
        return
    newest = max(CONFIG_FILE.stat().st_mtime, Path(__file__).stat().st_mtime)
    if stamp.exists() and stamp.stat().st_mtime >= newest:
        return
    missing = [p for p in wanted if p not in installed(wanted)]
    if missing:
        install(missing, wanted)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.touch()


def install(missing: list[str], wanted: list[str]) -> None:
    """apt-get update and install MISSING as root, with progress; otherwise PackageError with the command."""
    command = "apt-get install -y " + " ".join(missing)
    if os.geteuid() != 0:
        raise PackageError("scalebook needs these Debian packages, which are not installed:\n"
                           f"  {' '.join(missing)}\n"
                           "Install them, then run ./workbook again:\n"
                           f"  sudo apt-get update && sudo {command}")
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
                               f"\nInstall by hand, then run ./workbook again:\n  apt-get update && {command}")
    progress.done()
    still = [p for p in wanted if p not in installed(wanted)]
    if still:
        raise PackageError(f"still missing after apt-get install: {' '.join(still)}")
    say(f"{bold('Installed')}: {' '.join(missing)}")
