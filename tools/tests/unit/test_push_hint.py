#!/usr/bin/env python3
"""The push `./workbook release` prints works when the repository students clone belongs to another
user, a case where git refuses a plain push ("detected dubious ownership").

As root (where this test runs; otherwise it says so and stops): a bare repository owned by uid
65534 and an edition owned by root. Control: root's own push is refused as dubious. The lines
release prints (scalebook/commands/release.py's push_lines) name the owner and the refusal, and the
push they print, run exactly as printed, publishes the edition with every file of the repository
still the owner's. An edition in a folder the owner cannot enter gets a line saying so, and the
printed push then does fail. As uid 65534 (not root) with an edition of their own and a shared
repository that root owns: control, the plain push is refused; the lines name root and the
safe.directory setting, and run as printed they publish the edition. Seconds, no build.

    test_push_hint.py
"""
from __future__ import annotations

import json
import os
import pwd
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from scalebook.commands.release import push_lines
from tests.harness import TOOLS, expect, finish

OWNER = "nobody"
IDENTITY = ["-c", "user.name=instructor", "-c", "user.email=instructor@localhost"]


def as_owner(command: list[str], home: Path, **options) -> subprocess.CompletedProcess:
    return subprocess.run(["runuser", "-u", OWNER, "--", "env", "-i", f"HOME={home}", "PATH=/usr/bin:/bin",
                           "LC_ALL=C", *command], capture_output=True, text=True, stdin=subprocess.DEVNULL, **options)


def edition(path: Path, course: Path, run=subprocess.run) -> None:
    """A one-commit repository at PATH whose origin is COURSE (RUN: as whom)."""
    for command in (["git", "init", "-q", "-b", "main", str(path)],
                    ["git", *IDENTITY, "-C", str(path), "commit", "-q", "--allow-empty", "-m", "The student edition"],
                    ["git", "-C", str(path), "remote", "add", "origin", str(course)]):
        result = run(command)
        assert result.returncode == 0, result


def dubious(said: str) -> str:
    return next((line.strip() for line in said.splitlines() if "dubious ownership" in line), said.strip()[-160:])


def head(repository: Path, revision: str = "HEAD") -> str:
    return subprocess.run(["git", "-c", f"safe.directory={repository}", "-C", str(repository), "rev-parse", "-q",
                           "--verify", revision], capture_output=True, text=True).stdout.strip()


def run_printed(line: str, home: Path | None = None) -> subprocess.CompletedProcess:
    """A line release printed, run as printed (as the owner when HOME is given: the non-root case)."""
    words = shlex.split(line)
    if home is not None:
        return as_owner(words, home)
    return subprocess.run(words, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          env=dict(os.environ, LC_ALL="C"))


def main() -> int:
    if os.geteuid() != 0:
        print("note: not root; the pushes into another user's repository need root to set up")
        return finish("nothing to try without root")
    owner = pwd.getpwnam(OWNER)
    with tempfile.TemporaryDirectory(prefix="scalebook-push-") as temp:
        base = Path(temp)
        os.chmod(base, 0o755)
        home = base / "home"
        home.mkdir()
        os.chown(home, owner.pw_uid, owner.pw_gid)

        # Root releases; the course's repository is OWNER's.
        course = base / "course.git"
        course.mkdir()
        os.chown(course, owner.pw_uid, owner.pw_gid)
        as_owner(["git", "init", "-q", "--bare", "-b", "main", str(course)], home, check=True)
        target = base / "edition"
        edition(target, course, lambda c: subprocess.run(c, capture_output=True))
        refused = subprocess.run(["git", "-C", str(target), "push", "-q", "origin", "main"], capture_output=True,
                                 text=True, env=dict(os.environ, LC_ALL="C"))
        expect(refused.returncode != 0 and "dubious ownership" in refused.stderr,
               f"control: root's own push into {OWNER}'s repository is refused: {dubious(refused.stderr)}")
        lines = push_lines(target, "main")
        print("\n".join(f"    {line}" for line in lines))
        printed = lines[-1] if lines else ""
        expect(len(lines) == 2 and f"belongs to {OWNER}, not root" in lines[0] and "dubious ownership" in lines[0]
               and printed.startswith(f"runuser -u {OWNER} -- git -c safe.directory={target} -C {target} push "
                                      f"{course} main"),
               "as root, release names the owner, git's refusal, and the push to run as the owner")
        pushed = run_printed(printed)
        files = [course, *course.rglob("*")]
        expect(pushed.returncode == 0 and head(course, "main") == head(target) != ""
               and all(p.lstat().st_uid == owner.pw_uid for p in files),
               f"that push, run as printed, publishes the edition and every file of the repository stays "
               f"{OWNER}'s ({len(files)} files) {pushed.stderr[-200:]}")

        # An edition the owner cannot reach: said, and the printed push does fail.
        private = base / "private"
        private.mkdir(mode=0o700)
        hidden = private / "edition"
        edition(hidden, course, lambda c: subprocess.run(c, capture_output=True))
        lines = push_lines(hidden, "main")
        said = any(f"{OWNER} cannot enter {hidden}" in line for line in lines)
        tried = run_printed(next((l for l in lines if l.startswith("runuser ")), "false"))
        expect(said and tried.returncode != 0,
               f"an edition {OWNER} cannot enter gets a line saying so, and the push does fail without it "
               f"(status {tried.returncode})")

        # Not root: OWNER releases into their own folder; the course's repository is root's, shared.
        shared = base / "shared.git"
        subprocess.run(["git", "init", "-q", "--bare", "--shared=0777", "-b", "main", str(shared)], check=True)
        subprocess.run(["chmod", "-R", "a+rwX", str(shared)], check=True)
        mine = base / "owners-edition"
        mine.mkdir()
        os.chown(mine, owner.pw_uid, owner.pw_gid)
        edition(mine, shared, lambda c: as_owner(c, home))
        refused = as_owner(["git", "-C", str(mine), "push", "-q", "origin", "main"], home)
        expect(refused.returncode != 0 and "dubious ownership" in refused.stderr,
               f"control: {OWNER}'s plain push into root's shared repository is refused: {dubious(refused.stderr)}")
        asked = as_owner([sys.executable, "-c", "import json, sys; from pathlib import Path; "
                          "from scalebook.commands.release import push_lines; "
                          "print(json.dumps(push_lines(Path(sys.argv[1]), 'main')))", str(mine)],
                         home, cwd=TOOLS)
        try:
            lines = json.loads(asked.stdout)
        except ValueError:
            lines = []
        print("\n".join(f"    {line}" for line in lines) or asked.stderr[-600:])
        commands = [line for line in lines if line.startswith("git ")]
        expect(bool(lines) and "belongs to root" in lines[0] and "dubious ownership" in lines[0]
               and commands == [f"git config --global --add safe.directory {shared}", f"git -C {mine} push origin main"],
               f"as {OWNER}, release names root, git's refusal, the safe.directory setting and the push")
        results = [run_printed(command, home) for command in commands]
        expect(all(r.returncode == 0 for r in results) and commands and head(shared, "main") == head(mine) != "",
               f"those lines, run as printed, publish the edition "
               f"{' '.join(r.stderr[-200:] for r in results)}")
    return finish("the push release prints works where git refuses a plain one")


if __name__ == "__main__":
    sys.exit(main())
