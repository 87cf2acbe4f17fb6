"""On a simulated fresh machine (dpkg-query and apt-get shims: tests/student/test_setup.py),
`./workbook test` installs, as root, every package its tests need (the mutation test's python3-clang,
the Slurm test's slurm-wlm and munge, the pages' python3-jinja2, the browser's, clangd) before it
builds anything, and `./workbook grade` installs what the pages need; as an unprivileged user each
names the exact apt-get command and installs nothing. The lists come from config.json by purpose:
the expectations are derived from a copy of it, changed first so that a list that is not read
from there would show. The machine has no npm: `./workbook test` adds Debian's npm to what it
installs, then runs `npm ci` on each pinned manifest (axe-core's) into build/NAME."""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from scalebook.config import NPM_COMMAND_PACKAGE, npm_folders_for, packages_for
from tests.harness import expect, finish
from tests.student.test_setup import PRESENT, as_root_command, as_user_command, fake_machine

# A package only this test's copy of config.json asks for: it must reach apt-get as it is written there.
MARKER = "scalebook-fresh-machine-marker"


def run(tree: Path, env: dict, prefix: list[str], *words: str) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, str(tree / "workbook"), *words], env=env, cwd=tree, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL, timeout=300)


def installs(apt_log: Path) -> list[list[str]]:
    """The package lists of every `apt-get install` call logged."""
    return [line.split()[3:] for line in apt_log.read_text().splitlines() if line.startswith("apt-get install")]


def check_command(words: list[str], purpose: str, what: str) -> None:
    """WORDS as a user (named, nothing installed), then as root (exactly the missing ones installed)."""
    with tempfile.TemporaryDirectory(prefix="scalebook-fresh-") as temp:
        tree, env, db, apt_log = fake_machine(Path(temp))
        config = tree / "tools" / "scalebook" / "config.json"
        data = json.loads(config.read_text())
        data["packages"]["slurm"].append(MARKER)
        config.write_text(json.dumps(data))
        wanted = [p for p in packages_for(purpose) if p not in PRESENT]
        if purpose == "test":
            wanted.insert(wanted.index("munge") + 1, MARKER)
        folders = npm_folders_for(purpose)
        if folders:
            wanted.append(NPM_COMMAND_PACKAGE)
        expect("tools/scalebook/grading/dolos" in folders and ("docs/tests/axe" in folders) == (purpose == "test"),
               f"{what}: the similarity engine's npm packages are needed by grade and test, axe-core's by the tests "
               f"alone ({folders})")
        for needed in {"test": ["python3-clang", "slurm-wlm", "munge", "python3-jinja2", "nodejs"],
                       "grade": ["python3-jinja2", "nodejs"]}[purpose]:
            expect(needed in wanted, f"{what}: {needed} is among what it needs")
        user = as_user_command()
        if user is not None:
            result = run(tree, env, user, *words)
            expect(result.returncode != 0 and f"sudo apt-get install -y {' '.join(wanted)}" in result.stdout,
                   f"{what} as a user: names the exact command (status {result.returncode}): {result.stdout[-600:]}")
            expect(apt_log.read_text() == "", f"{what} as a user: runs no apt-get")
        root = as_root_command()
        if root is not None:
            result = run(tree, env, root, *words)
            expect(installs(apt_log) == [wanted],
                   f"{what} as root: installs exactly what was missing ({installs(apt_log)}): {result.stdout[-600:]}")
            expect(all(p in db.read_text().split() for p in wanted), f"{what} as root: every package is now there")
            npm_calls = (Path(temp) / "npm.log").read_text().splitlines()
            expected_calls = [f"npm ci --ignore-scripts --no-audit --no-fund in {tree / 'build' / Path(f).name}"
                              for f in folders]
            expect(npm_calls == expected_calls,
                   f"{what} as root: npm ci once for each pinned manifest, with Debian's npm ({npm_calls})")
            for folder in folders:
                installed = tree / "build" / Path(folder).name
                expect((installed / "package-lock.json").read_bytes() == (tree / folder / "package-lock.json").read_bytes()
                       and (installed / "node_modules" / ".package-lock.json").is_file(),
                       f"{what} as root: {folder}'s lockfile is what npm ci installed in {installed}")
            again = run(tree, env, root, *words)
            expect(installs(apt_log) == [wanted] and len((Path(temp) / "npm.log").read_text().splitlines()) == len(folders),
                   f"{what} as root, a second time: nothing more installed: {again.stdout[-400:]}")


def main() -> int:
    # test goes on to build the reference track, which this copy (no CMakeLists) cannot: only its
    # set-up is judged; grade --help stops after its set-up.
    check_command(["test"], "test", "./workbook test")
    check_command(["grade", "--help"], "grade", "./workbook grade")
    return finish("a fresh machine gets what test and grade need, installed (root) or named (user)")


if __name__ == "__main__":
    sys.exit(main())
