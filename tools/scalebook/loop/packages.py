"""Installs the Debian packages a command needs (as root), or names the exact command to run; and
the npm packages of a kind that has them.

The packages come from config.json, by purpose (./workbook, bench, grade, test): found with one
dpkg-query, installed when root, named with the exact apt-get command otherwise. A package another
installed one provides counts as installed (nodejs from another source than Debian's provides npm).
A kind with an npm folder in config.json's "npm" (package.json and its package-lock.json) is
installed with Debian's npm, exactly as locked (`npm ci`, no package's install script run), into
build/npm/KIND, and its modules are found there (npm_modules): from then on nothing is downloaded.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from ..config import CONFIG_FILE, NPM, PURPOSES, ROOT, packages_for
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
    missing = set(packages) - found
    if missing:  # provided by an installed package (dpkg-query -W names no virtual package)
        every = subprocess.run(["dpkg-query", "-W", "-f=${Status}|${Provides}\\n"], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, stdin=subprocess.DEVNULL)
        for line in every.stdout.splitlines():
            status, _, provides = line.partition("|")
            if status.split()[-3:] == ["install", "ok", "installed"]:
                names = {p.strip().split(" ")[0].split(":")[0] for p in provides.split(",") if p.strip()}
                found |= names & missing
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
    if not (stamp.exists() and stamp.stat().st_mtime >= newest):
        missing = [p for p in wanted if p not in installed(wanted)]
        if missing:
            install(missing, wanted)
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.touch()
    for kind in PURPOSES[purpose]:
        if kind in NPM:
            ensure_npm(kind)


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


NPM_FILES = ("package.json", "package-lock.json")


def npm_target(kind: str) -> Path:
    """build/npm/KIND: where KIND's npm packages are installed."""
    return ROOT / "build" / "npm" / kind


def npm_digest(kind: str) -> str:
    """What KIND's installed packages must have been installed from: its manifest and lockfile."""
    digest = hashlib.sha256()
    for name in NPM_FILES:
        digest.update((ROOT / NPM[kind] / name).read_bytes())
    return digest.hexdigest()


def npm_modules(kind: str) -> Path | None:
    """KIND's node_modules folder, when it was installed from the lockfile as it is now; else None."""
    target = npm_target(kind)
    try:
        stamp = (target / ".installed").read_text().strip()
    except OSError:
        return None
    return target / "node_modules" if stamp == npm_digest(kind) and (target / "node_modules").is_dir() else None


def ensure_npm(kind: str) -> None:
    """KIND's npm packages installed into build/npm/KIND exactly as its lockfile pins them (npm ci:
    the registry's tarballs, their integrity checked; no install script of theirs run), unless they
    already are; or PackageError naming what to do."""
    if npm_modules(kind) is not None:
        return
    if shutil.which("npm") is None:
        raise PackageError(f"scalebook needs npm to install the {kind} packages ({NPM[kind]}/package-lock.json); "
                           "install Debian's nodejs and npm, then run the command again:\n"
                           "  sudo apt-get update && sudo apt-get install -y nodejs npm")
    target = npm_target(kind)
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for name in NPM_FILES:
        shutil.copyfile(ROOT / NPM[kind] / name, target / name)
    command = ["npm", "ci", "--ignore-scripts", "--omit=dev", "--no-audit", "--no-fund", "--loglevel=error"]
    progress = Progress(f"Installing the {kind} npm packages ({NPM[kind]}/package-lock.json)")
    env = dict(os.environ, npm_config_update_notifier="false")
    try:
        done = subprocess.run(command, cwd=target, capture_output=True, text=True, env=env,
                              stdin=subprocess.DEVNULL, timeout=900)
    except subprocess.TimeoutExpired:
        done = None
    progress.done()
    if done is None or done.returncode != 0:
        said = (done.stdout + done.stderr).strip().splitlines()[-15:] if done else ["took more than 900 s"]
        raise PackageError(f"'{' '.join(command)}' in {target} failed:\n" + "\n".join(said) +
                           "\nThe npm registry must be reachable once, for this install; run the command again.")
    (target / ".installed").write_text(npm_digest(kind) + "\n")
    say(f"{bold('Installed')}: the {kind} npm packages into {target.relative_to(ROOT)}")
