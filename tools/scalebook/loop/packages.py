"""Installs the Debian packages a command needs (as root), or names the exact command to run.

The packages come from config.json, by purpose (./workbook, bench, grade, test): found with one
dpkg-query, installed when root, named with the exact apt-get command otherwise. A few come from
the npm registry instead (axe-core, and the similarity engine's Dolos and tree-sitter, which Debian
does not package): each folder config.json names
holds a package.json and its package-lock.json, and `npm ci` installs exactly what the lockfile
pins (versions and integrity hashes) into build/FOLDER-NAME/node_modules. Nothing is fetched later,
while building or testing. Debian's npm is among the packages to install when no npm command is
found (a Node.js from elsewhere, such as NodeSource's, brings its own, which Debian's would conflict
with).
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from ..config import CONFIG_FILE, NPM_COMMAND_PACKAGE, ROOT, npm_folders_for, packages_for
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
    folders = npm_folders_for(purpose)
    if folders and shutil.which("npm") is None and NPM_COMMAND_PACKAGE not in wanted:
        wanted = [*wanted, NPM_COMMAND_PACKAGE]
    lockfiles = [ROOT / folder / "package-lock.json" for folder in folders]
    newest = max(CONFIG_FILE.stat().st_mtime, Path(__file__).stat().st_mtime,
                 *(lock.stat().st_mtime for lock in lockfiles if lock.exists()))
    if stamp.exists() and stamp.stat().st_mtime >= newest:
        return
    missing = [p for p in wanted if p not in installed(wanted)]
    if missing:
        install(missing, wanted)
    for folder in folders:
        install_npm(ROOT / folder)
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


def npm_destination(folder: Path) -> Path:
    """Where FOLDER's npm packages are installed: build/NAME (its node_modules inside)."""
    return ROOT / "build" / folder.name


def npm_modules(folder: Path) -> Path | None:
    """build/NAME/node_modules when npm ci installed FOLDER's lockfile as it is now there; else None."""
    destination = npm_destination(folder)
    lock = destination / "package-lock.json"
    if (lock.is_file() and (destination / "node_modules" / ".package-lock.json").is_file()
            and lock.read_bytes() == (folder / "package-lock.json").read_bytes()):
        return destination / "node_modules"
    return None


def install_npm(folder: Path) -> None:
    """`npm ci` of FOLDER's package.json and package-lock.json, in build/NAME: exactly the versions and
    integrity hashes the lockfile pins, no install scripts run. Skipped when build/NAME holds that
    very lockfile and its node_modules. PackageError when npm is missing or the install fails."""
    destination = npm_destination(folder)
    manifest, lock = folder / "package.json", folder / "package-lock.json"
    if npm_modules(folder) is not None:
        return
    npm = shutil.which("npm")
    if npm is None:
        raise PackageError(f"scalebook needs npm to install {folder.relative_to(ROOT)}'s pinned packages: "
                           "install Node.js and npm (Debian: apt-get install -y nodejs npm), then run the "
                           "command again")
    destination.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(manifest, destination / "package.json")
    shutil.copyfile(lock, destination / "package-lock.json")
    progress = Progress(f"Installing the npm packages pinned in {folder.relative_to(ROOT)}/package-lock.json")
    result = subprocess.run([npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=destination,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
    progress.done()
    if result.returncode != 0:
        (destination / "package-lock.json").unlink(missing_ok=True)
        raise PackageError(f"'npm ci' of {folder.relative_to(ROOT)} failed:\n{result.stdout[-2000:]}\n"
                           f"Install by hand: cd {destination} && npm ci --ignore-scripts")
    say(f"{bold('Installed')} from npm: what {folder.relative_to(ROOT)}/package-lock.json pins")
