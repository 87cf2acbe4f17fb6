#!/usr/bin/env python3
"""The set-up on a fresh machine, simulated: dpkg-query and apt-get shims on PATH that behave like
the real ones for packages they do not know (dpkg-query prints what it knows, complains about the
rest on stderr and exits 1). As an unprivileged user `./workbook setup` must name the missing
packages with the apt-get command and exit non-zero; as root it must install exactly those, say so,
and a second run must find nothing to do."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.harness import ROOT, expect, finish

from scalebook.config import NPM, packages_for

DPKG_QUERY = r'''#!/bin/sh
# dpkg-query -W -f=FORMAT PKG...: like the real one, exit 1 when some package is unknown.
status=0
for arg in "$@"; do
  case $arg in -W|-f=*|--showformat=*) continue ;; esac
  if grep -qx -- "$arg" "$FAKE_DPKG_DB"; then
    echo "$arg install ok installed"
  else
    echo "dpkg-query: no packages found matching $arg" >&2
    status=1
  fi
done
exit $status
'''

APT_GET = r'''#!/bin/sh
echo "apt-get $*" >> "$FAKE_APT_LOG"
if [ "$(id -u)" != 0 ]; then echo "E: permission denied" >&2; exit 100; fi
if [ "$1" = install ]; then
  for arg in "$@"; do
    case $arg in install|-y|-q*) ;; *) echo "Setting up $arg ..."; echo "$arg" >> "$FAKE_DPKG_DB" ;; esac
    # Debian's npm brings the npm command.
    if [ "$arg" = npm ]; then cp "$FAKE_NPM" "$(dirname "$0")/npm"; fi
  done
fi
exit 0
'''

# npm ci, as far as the set-up sees it: it installs what the lockfile beside it pins (here: records
# the call and marks node_modules as holding that lockfile).
NPM_SHIM = r'''#!/bin/sh
echo "npm $* in $(pwd)" >> "$FAKE_NPM_LOG"
[ "$1" = ci ] && [ -f package-lock.json ] || { echo "npm ci: no package-lock.json" >&2; exit 1; }
mkdir -p node_modules && cp package-lock.json node_modules/.package-lock.json
'''
# What a fresh machine does not have: no npm, nor the Node.js it runs on.
ABSENT_COMMANDS = {"npm", "npx", "node", "nodejs", "corepack"}


def without_absent_commands(base: Path) -> Path:
    """A folder of links to every command on this PATH (the first of each name), but those of
    ABSENT_COMMANDS: PATH with it instead of its own folders is this machine without them."""
    folder = base / "system-bin"
    folder.mkdir()
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not directory or not Path(directory).is_dir():
            continue
        for entry in Path(directory).iterdir():
            link = folder / entry.name
            if entry.name in ABSENT_COMMANDS or link.exists() or link.is_symlink():
                continue
            if entry.is_file() and os.access(entry, os.X_OK):
                link.symlink_to(entry)
    return folder


def as_root_command() -> list[str] | None:
    if os.geteuid() == 0:
        return []
    if subprocess.run(["unshare", "--map-root-user", "true"], capture_output=True).returncode == 0:
        return ["unshare", "--map-root-user"]
    return None


def as_user_command() -> list[str] | None:
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv"):
        return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    return None


PRESENT = ["cmake", "g++", "python3", "util-linux", "binutils"]  # a bare machine has these


def fake_machine(base: Path) -> tuple[Path, dict, Path, Path]:
    """A copy of ./workbook, tools/ and the npm manifests config.json names in BASE on a simulated
    fresh machine: dpkg-query and apt-get shims first on PATH, with a package database holding
    PRESENT only, and no npm command until apt-get installs Debian's npm (then an npm shim that logs
    its calls to BASE/npm.log). Returns the tree, the environment, the database and apt-get's log
    (one line per call, its arguments)."""
    os.chmod(base, 0o755)
    tree = base / "workbook"
    tree.mkdir()
    shutil.copy2(ROOT / "workbook", tree / "workbook")
    shutil.copytree(ROOT / "tools", tree / "tools", ignore=shutil.ignore_patterns("__pycache__"))
    for folders in NPM.values():
        for folder in folders:
            shutil.copytree(ROOT / folder, tree / folder, dirs_exist_ok=True)  # (one under tools/ is there)
    shims = base / "bin"
    shims.mkdir()
    for name, text in (("dpkg-query", DPKG_QUERY), ("apt-get", APT_GET), ("fake-npm", NPM_SHIM)):
        (shims / name).write_text(text)
        (shims / name).chmod(0o755)
    db, apt_log, npm_log = base / "dpkg.db", base / "apt.log", base / "npm.log"
    db.write_text("".join(f"{p}\n" for p in PRESENT))
    apt_log.write_text("")
    npm_log.write_text("")
    for path in (db, apt_log, npm_log):
        path.chmod(0o666)
    (tree / "build").mkdir()
    (tree / "build").chmod(0o777)
    env = dict(os.environ, PATH=f"{shims}:{without_absent_commands(base)}", FAKE_DPKG_DB=str(db),
               FAKE_APT_LOG=str(apt_log), FAKE_NPM=str(shims / "fake-npm"), FAKE_NPM_LOG=str(npm_log))
    return tree, env, db, apt_log


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="scalebook-setup-") as temp:
        tree, env, db, apt_log = fake_machine(Path(temp))
        missing = [p for p in packages_for("workbook") if p not in PRESENT]

        def run(prefix: list[str]) -> subprocess.CompletedProcess:
            return subprocess.run([*prefix, str(tree / "workbook"), "setup"], env=env, cwd=tree,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  stdin=subprocess.DEVNULL, timeout=120)

        user = as_user_command()
        if user is None:
            print("skip: cannot run as an unprivileged user here")
        else:
            result = run(user)
            print(result.stdout)
            expect(result.returncode != 0, "as a user with packages missing: exits non-zero")
            expect(all(p in result.stdout for p in missing), "as a user: names every missing package")
            expect("sudo apt-get update && sudo apt-get install -y" in result.stdout,
                   "as a user: prints the apt-get command to run")
            expect(apt_log.read_text() == "", "as a user: never runs apt-get")

        root = as_root_command()
        if root is None:
            print("skip: cannot act as root here (no root, no user namespaces)")
        else:
            result = run(root)
            print(result.stdout)
            calls = apt_log.read_text().splitlines()
            expect(result.returncode == 0, f"as root: installs and exits 0 (got {result.returncode})")
            expect("Installing the Debian packages scalebook needs" in result.stdout,
                   "as root: says what it installs before the long step")
            expect(calls[:1] == ["apt-get update"], f"as root: apt-get update first ({calls[:1]})")
            installs = [c for c in calls if c.startswith("apt-get install")]
            expect(len(installs) == 1 and installs[0].split()[3:] == missing,
                   f"as root: installs exactly the missing packages ({installs})")
            apt_log.write_text("")
            again = run(root)
            expect(again.returncode == 0 and apt_log.read_text() == "",
                   "a second run finds everything installed and runs no apt-get")
    return finish("every set-up expectation holds")


if __name__ == "__main__":
    sys.exit(main())
