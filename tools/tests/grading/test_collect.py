#!/usr/bin/env python3
"""./workbook collect on a class of local repositories made for the purpose (seconds; no grading).

The deadline picks the last commit dated at or before it along the default branch (a commit dated
earlier on top of a late one is late too), an extension moves it for one student, --now takes the
tip; a missing, an empty, a headless, a silent and a password-asking repository are one line each;
nothing of a repository runs or is fetched beyond its commits: hooks (the student's own and a hooks
path in the instructor's git config, which a collector without core.hooksPath=/dev/null would run),
a submodule, an LFS smudge filter, an ext:: address, a symlink in an exercise's place. The positive
control: the instructor's upload-pack hook records every repository git served, so the test sees
that the students' repositories were read and the submodule's never was. Collecting again fetches
only what changed and follows a new commit; a folder whose repository went away is removed. The
collection is 0700/0600. As root, a class whose repositories are owned by their students
(owned_by_students): collected with no git config, links to classmates' repositories refused, shared
repositories flagged, each repository read as its owner. Nothing collected: exit status 1. Ctrl-C
while three fetches wait on a silent server ends collect and every git at once.
"""
from __future__ import annotations

import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tests.harness import ROOT, WORKBOOK, course_chapter, expect, finish

# The course's chapter the class hands in (and test_course.py grades, with its hidden bug zoo), found
# from the manifests by its functions (tests/harness.py says why): its folder and files.
MASKS = course_chapter("causal_mask", "masked_softmax", "causal_attention")
CH4 = MASKS.folder
FILES = MASKS.chapter.sources
DEADLINE = "2025-03-02T23:59:00+01:00"     # 22:59 UTC


def git(*args: str, cwd: Path | None = None, date: str | None = None, env: dict | None = None) -> str:
    environment = dict(env or os.environ, GIT_AUTHOR_NAME="Student", GIT_AUTHOR_EMAIL="s@example.org",
                       GIT_COMMITTER_NAME="Student", GIT_COMMITTER_EMAIL="s@example.org", GIT_CONFIG_GLOBAL="/dev/null")
    if date:
        environment.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    done = subprocess.run(["git", *args], cwd=cwd, env=environment, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr}")
    return done.stdout.strip()


class Repository:
    """A student's bare repository (BASE/NAME.git, default branch main) and a work tree to commit from."""

    def __init__(self, base: Path, name: str, layout: str = "exercises/"):
        self.bare, self.work, self.layout = base / f"{name}.git", base / "work" / name, layout
        git("init", "-q", "--bare", "-b", "main", str(self.bare))
        git("init", "-q", "-b", "main", str(self.work))

    def commit(self, date: str, message: str, files: dict[str, str | None] | None = None) -> str:
        """Writes FILES (chapter-4 file name -> text, None removes it) and commits them dated DATE."""
        for name, text in (files or {}).items():
            path = self.work / self.layout / CH4 / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if text is None:
                path.unlink()
            else:
                path.write_text(text)
        git("add", "-A", cwd=self.work)
        git("commit", "-q", "--allow-empty", "-m", message, cwd=self.work, date=date)
        git("push", "-q", str(self.bare), "HEAD:refs/heads/main", "--force", cwd=self.work)
        return git("rev-parse", "HEAD", cwd=self.work)


def version(tag: str) -> dict[str, str]:
    return {name: (ROOT / "exercises" / CH4 / name).read_text() + f"// {tag}\n" for name in FILES}


def collect(base: Path, roster: Path, *options: str, env: dict) -> tuple[subprocess.CompletedProcess, dict, float]:
    start = time.monotonic()
    done = subprocess.run([sys.executable, str(WORKBOOK), "collect", str(roster), "--out", str(base / "subs"), *options],
                          capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=300)
    seconds = time.monotonic() - start
    print(done.stdout + done.stderr)
    report = json.loads((base / "subs" / "collection.json").read_text())
    return done, {e["id"]: e for e in report["students"]}, seconds


def silent_server() -> tuple[int, socket.socket]:
    """A git:// address that accepts and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held = []
    threading.Thread(target=lambda: held.extend(server.accept() for _ in range(8)), daemon=True).start()
    return server.getsockname()[1], server


class AsksPassword(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="repositories"')
        self.end_headers()

    def log_message(self, *args):
        pass


def main() -> int:
    base = Path(tempfile.mkdtemp(prefix="scalebook-collect-"))
    try:
        return run(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def run(base: Path) -> int:
    marks = base / "marks"
    marks.mkdir()
    # The instructor's git config: a hooks path whose hooks leave a mark, an LFS smudge filter that
    # leaves one, the ext:: transport allowed, and an upload-pack hook that records every repository
    # git serves (the control).
    hooks = base / "instructor-hooks"
    hooks.mkdir()
    for hook in ("reference-transaction", "post-checkout", "post-merge", "post-rewrite", "pre-auto-gc", "post-index-change"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {marks}/instructor-{hook}\n")
        (hooks / hook).chmod(0o755)
    served = base / "served.txt"
    (base / "serve.sh").write_text(f"#!/bin/sh\necho \"$PWD\" >> {served}\nexec \"$@\"\n")
    (base / "serve.sh").chmod(0o755)
    config = base / "gitconfig"
    config.write_text(f"[core]\n\thooksPath = {hooks}\n[uploadpack]\n\tpackObjectsHook = {base / 'serve.sh'}\n"
                      f"[filter \"lfs\"]\n\tsmudge = sh -c 'touch {marks}/lfs-smudge; cat'\n\tprocess = sh -c 'touch {marks}/lfs-process'\n"
                      "\trequired = true\n[protocol \"ext\"]\n\tallow = always\n")
    env = dict(os.environ, GIT_CONFIG_GLOBAL=str(config))

    alice = Repository(base, "alice")                   # on time, then late work, one commit dated "early" on top
    alice.commit("2025-02-27T10:00:00Z", "stubs", version("stubs"))
    on_time = alice.commit("2025-03-02T21:00:00Z", "solved", version("alice on time"))
    alice.commit("2025-03-03T09:00:00Z", "late fix", version("alice late"))
    alice.commit("2025-03-01T09:00:00Z", "backdated", version("alice backdated"))   # on top of a late one: late
    git("push", "-q", str(alice.bare), "HEAD:refs/heads/dev", cwd=alice.work)
    git("commit", "-q", "--allow-empty", "-m", "on dev", cwd=alice.work, date="2025-03-01T00:00:00Z")
    git("push", "-q", str(alice.bare), "HEAD:refs/heads/dev", cwd=alice.work)
    git("reset", "-q", "--hard", "HEAD~1", cwd=alice.work)
    bob = Repository(base, "bob", layout="")              # an extension; exercises-only layout
    bob_late = bob.commit("2025-03-04T12:00:00Z", "late but extended", version("bob"))
    carol = Repository(base, "carol")                     # every commit after the deadline
    carol.commit("2025-03-05T12:00:00Z", "too late", version("carol"))
    git("init", "-q", "--bare", str(base / "empty.git"))  # no commit at all
    headless = Repository(base, "headless")               # HEAD names a branch that does not exist
    headless.commit("2025-03-01T12:00:00Z", "work", version("headless"))
    git("symbolic-ref", "HEAD", "refs/heads/master", cwd=headless.bare)
    mallory = make_mallory(base, marks)
    port, _server = silent_server()
    asks = http.server.ThreadingHTTPServer(("127.0.0.1", 0), AsksPassword)
    threading.Thread(target=asks.serve_forever, daemon=True).start()

    roster = base / "roster.csv"
    roster.write_text("id,name,email,repository,deadline\n"
                      "alice,Alice,alice@uni.example,alice.git,\n"
                      "bob,Bob,bob@uni.example,bob.git,2025-03-05T00:00:00Z\n"
                      "carol,Carol,carol@uni.example,carol.git,\n"
                      "dave,Dave,dave@uni.example,no-such.git,\n"
                      "erin,Erin,erin@uni.example,empty.git,\n"
                      "frank,Frank,frank@uni.example,headless.git,\n"
                      "mallory,Mallory,mallory@uni.example,mallory.git,\n"
                      f"oscar,Oscar,oscar@uni.example,ext::sh -c touch% {marks}/ext-ran,\n"
                      f"peggy,Peggy,peggy@uni.example,git://127.0.0.1:{port}/silent.git,\n"
                      f"trent,Trent,trent@uni.example,http://127.0.0.1:{asks.server_address[1]}/private.git,\n")
    done, entries, seconds = collect(base, roster, "--deadline", DEADLINE, "--repo-timeout", "3", env=env)
    # The later runs without the repositories that cost their time bound.
    again_roster = base / "again.csv"
    again_roster.write_text("".join(line for line in roster.read_text().splitlines(keepends=True)
                                    if not line.startswith(("peggy", "trent"))))
    expect(done.returncode == 0, f"collect exits 0 when every roster line was read ({done.returncode})")
    expect(len(entries) == 10, f"one line per student in collection.json ({len(entries)})")
    subs = base / "subs"

    a = entries["alice"]
    expect(a["status"] == "collected" and a["commit"] == on_time,
           f"alice: the last commit dated at or before the deadline is collected ({a.get('commit', '')[:10]})")
    expect(a["later_count"] == 2 and [c["subject"] for c in a["later_commits"]] == ["backdated", "late fix"],
           f"alice: the later commits are listed, the backdated one on top of a late one included: {a['later_commits']}")
    expect("alice on time" in (subs / "alice" / "exercises" / CH4 / FILES[0]).read_text(),
           "alice: the folder holds the collected commit's files")
    expect(a["others"] == ["dev"] and a["branch"] == "main", f"alice: the unmerged branch dev is named ({a['others']})")
    expect(a["commit_date"] == "2025-03-02T21:00:00+00:00" and a["deadline"] == "2025-03-02T23:59:00+01:00",
           "alice: the commit's date and the deadline are recorded")
    b = entries["bob"]
    expect(b["status"] == "collected" and b["commit"] == bob_late and b["extension"] is True,
           "bob: his extension's deadline takes the commit made after the class's deadline")
    expect((subs / "bob" / "exercises" / CH4 / FILES[2]).exists(), "bob: an exercises-only repository's files are found")
    for name, status in [("carol", "nothing_before_deadline"), ("dave", "missing"), ("erin", "empty"),
                         ("frank", "no_default_branch"), ("oscar", "unreachable"), ("peggy", "unreachable"),
                         ("trent", "unreachable")]:
        expect(entries[name]["status"] == status and not (subs / name).exists(),
               f"{name}: {status}, one line, no folder: {entries[name].get('message')}")
    expect("ext" in entries["oscar"]["message"] and not (marks / "ext-ran").exists(),
           f"oscar: an ext:: address is refused by git and its command never ran: {entries['oscar']['message']}")
    expect("within 3 s" in entries["peggy"]["message"], f"peggy: a silent server costs the time bound: {entries['peggy']['message']}")
    expect(seconds < 60, f"the silent and the password-asking repositories held the run {seconds:.1f} s, not longer")

    m = entries["mallory"]
    folder = sorted(str(p.relative_to(subs / "mallory")) for p in (subs / "mallory").rglob("*"))
    expect(folder == ["exercises", f"exercises/{CH4}", f"exercises/{CH4}/{FILES[0]}"],
           f"mallory: the folder holds only the one exercise file that is a file: {folder}")
    expect(any("symbolic link" in n for n in m["notes"]) and any("submodule" in n for n in m["notes"])
           and any("LFS pointer" in n for n in m["notes"]), f"mallory: the symlink, submodule and LFS pointer are noted: {m['notes']}")
    expect(not any(marks.iterdir()), f"no hook, filter or command ran: {sorted(p.name for p in marks.iterdir())}")
    served_dirs = served.read_text().split() if served.exists() else []
    expect(str(alice.bare) in served_dirs and str(mallory.bare) in served_dirs,
           "control: the instructor's upload-pack hook saw the students' repositories served")
    expect(not any("secret" in d for d in served_dirs), f"mallory's submodule was never fetched: {served_dirs}")
    mirrors = list((subs / ".mirrors").iterdir())
    expect(mirrors and not any((m / "modules").exists() for m in mirrors), "no mirror holds a submodule")

    # Again, nothing changed: only what changed is fetched, the same commits collected; a folder
    # edited since (a file changed, one added) is written anew, the others kept.
    tampered = subs / "alice" / "exercises" / CH4 / FILES[0]
    tampered.write_text("edited by hand\n")
    (subs / "alice" / "exercises" / CH4 / "extra.cpp").write_text("stray\n")
    kept = (subs / "mallory" / "exercises" / CH4 / FILES[0]).stat().st_ino
    done, again, _ = collect(base, again_roster, "--deadline", DEADLINE, "--repo-timeout", "3", env=env)
    expect(again["alice"]["fetch"] == "unchanged" and again["alice"]["commit"] == on_time,
           f"again: alice's repository is unchanged ({again['alice'].get('fetch')})")
    expect("alice on time" in tampered.read_text() and not (subs / "alice" / "exercises" / CH4 / "extra.cpp").exists(),
           "again: a folder edited since the last collection is written anew from the commit")
    expect((subs / "mallory" / "exercises" / CH4 / FILES[0]).stat().st_ino == kept and again["mallory"]["notes"],
           "again: an unchanged folder is kept as it is, with its notes")
    # A new commit before the deadline (pushed on top of the late ones: late, not collected), then --now.
    alice.commit("2025-03-02T22:00:00Z", "one more", {FILES[1]: None})
    shutil.rmtree(base / "bob.git")
    done, third, _ = collect(base, again_roster, "--deadline", DEADLINE, "--repo-timeout", "3", env=env)
    expect(third["alice"]["fetch"] == "new commits" and third["alice"]["commit"] == on_time
           and third["alice"]["later_count"] == 3,
           "a commit dated before the deadline but pushed on top of late ones is late")
    expect(third["bob"]["status"] == "missing" and not (subs / "bob").exists(),
           "a repository gone since the last collection: its old folder is removed, not graded")
    done, now, _ = collect(base, again_roster, "--deadline", DEADLINE, "--now", "--repo-timeout", "3", env=env)
    tip = git("rev-parse", "HEAD", cwd=alice.work)
    expect(now["alice"]["commit"] == tip and now["alice"]["later_count"] == 3,
           "--now: the tip is collected, and the commits dated after the deadline still listed")
    expect(not (subs / "alice" / "exercises" / CH4 / FILES[1]).exists(),
           "a file removed in the collected commit is gone from the folder")
    expect(not any(marks.iterdir()), "no hook, filter or command ran in the later runs either")
    asks.shutdown()
    modes = {str(p.relative_to(subs)): oct(p.lstat().st_mode & 0o777) for p in [subs, *subs.rglob("*")]
             if p.lstat().st_mode & 0o077}
    expect(not modes, f"the collection is the collecting user's alone (0700 and 0600): open to others {list(modes.items())[:4]}")
    if os.geteuid() == 0:
        owned_by_students(base / "owners")
    else:
        print("skip: repositories owned by other users need root to make")
    stopped(base, port, env)
    nothing = base / "nothing.csv"
    nothing.write_text("id,name,email,repository\ngus,Gus,gus@uni.example,no-such.git\n")
    done, entries, _ = collect(base, nothing, "--deadline", DEADLINE, env=env)
    expect(done.returncode != 0 and entries["gus"]["status"] == "missing" and "nothing could be collected" in done.stderr,
           f"collect exits non-zero when nothing could be collected ({done.returncode})")
    return finish("every collection rule holds")


def stopped(base: Path, port: int, env: dict) -> None:
    """Ctrl-C while collect waits on a silent server (each git in a session of its own, which the
    terminal's signal does not reach): collect and every git it started end at once."""
    roster = base / "silent.csv"
    roster.write_text("id,name,email,repository\n" + "".join(
        f"s{i},S{i},s{i}@uni.example,git://127.0.0.1:{port}/silent{i}.git\n" for i in range(3)))
    process = subprocess.Popen([sys.executable, str(WORKBOOK), "collect", str(roster), "--out", str(base / "silent"),
                                "--deadline", DEADLINE, "--repo-timeout", "120"], env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    started = time.monotonic()
    gits: list[int] = []
    while len(gits) < 3 and time.monotonic() - started < 60:
        gits = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and running_git(p, base / "silent")]
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C sends: the terminal's process group
    sent = time.monotonic()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
    ended = time.monotonic() - sent
    time.sleep(0.5)
    left = [pid for pid in gits if Path(f"/proc/{pid}").exists() and running_git(Path(f"/proc/{pid}"), base / "silent")]
    expect(len(gits) == 3 and ended < 5 and not left,
           f"Ctrl-C ends collect at once ({ended:.1f} s) and every git it started ({len(gits)} seen, {len(left)} left)")


def running_git(proc: Path, folder: Path) -> bool:
    try:
        return str(folder).encode() in (proc / "cmdline").read_bytes() and b"fetch" in (proc / "cmdline").read_bytes() \
            and (proc / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def owned_by_students(base: Path) -> None:
    """A class on a course server: each repository owned by its student (uids with no name), 0700,
    collected by root with no git config at all (GIT_CONFIG_GLOBAL=/dev/null). A roster path that is a
    student's symbolic link to a classmate's repository, or to one only root can read, is refused and
    says why; so are a repository that borrows a classmate's objects (alternates) and one with a link
    inside to a classmate's packs; two roster lines naming one repository (one through '..') are both
    flagged; a student's link to their own repository is followed and noted; and git reads each
    repository as its owner (a pack root left inside a student's repository, unreadable to them, is
    not read)."""
    git_dir = base / "git"
    git_dir.mkdir(parents=True)
    base.parent.chmod(0o755)  # the server's folders above the repositories: every user may pass
    uids = {"ada": 4101, "mal": 4102, "rooty": 4103, "bea": 4104, "alt": 4105, "inner": 4106, "cy": 4107,
            "packed": 4108}
    made = {}
    for name in ("ada", "bea", "alt", "inner", "cy", "packed"):
        repository = Repository(git_dir, name)
        made[name] = repository.commit("2025-03-01T10:00:00Z", f"{name}'s work", version(name))
    secret = Repository(git_dir, "root-only")
    secret.commit("2025-03-01T10:00:00Z", "root's", version("root's"))
    (git_dir / "root-only.git").chmod(0o700)
    # alt: its refs name ada's commit, its objects are borrowed from ada's repository
    (git_dir / "alt.git" / "objects" / "info" / "alternates").write_text(f"{git_dir / 'ada.git' / 'objects'}\n")
    git("update-ref", "refs/heads/main", made["ada"], cwd=git_dir / "alt.git")
    # inner: its packs are ada's (a link it made inside its own repository)
    git("gc", "-q", cwd=git_dir / "ada.git")
    shutil.rmtree(git_dir / "inner.git" / "objects" / "pack")
    os.symlink(git_dir / "ada.git" / "objects" / "pack", git_dir / "inner.git" / "objects" / "pack")
    git("update-ref", "refs/heads/main", made["ada"], cwd=git_dir / "inner.git")
    # packed: its objects packed by root, readable by root alone
    git("gc", "-q", cwd=git_dir / "packed.git")
    homes = base / "homes"
    (homes / "cy").mkdir(parents=True)
    shutil.move(str(git_dir / "cy.git"), str(homes / "cy" / "cy.git"))
    for name in ("ada", "bea", "alt", "inner", "packed"):
        for path in [git_dir / f"{name}.git", *(git_dir / f"{name}.git").rglob("*")]:
            os.lchown(path, uids[name], uids[name])
        (git_dir / f"{name}.git").chmod(0o700)
    for path in (git_dir / "packed.git" / "objects" / "pack").iterdir():
        os.lchown(path, 0, 0)
        path.chmod(0o600)
    for path in [homes / "cy", *(homes / "cy").rglob("*")]:
        os.lchown(path, uids["cy"], uids["cy"])
    os.symlink(homes / "cy" / "cy.git", git_dir / "cy.git")
    os.lchown(git_dir / "cy.git", uids["cy"], uids["cy"])
    os.symlink(git_dir / "ada.git", git_dir / "mal.git")
    os.lchown(git_dir / "mal.git", uids["mal"], uids["mal"])
    os.symlink(git_dir / "root-only.git", git_dir / "rooty.git")
    os.lchown(git_dir / "rooty.git", uids["rooty"], uids["rooty"])
    roster = base / "roster.csv"
    roster.write_text("id,name,email,repository\n"
                      "ada,Ada,ada@uni.example,git/ada.git\n"
                      "mal,Mal,mal@uni.example,git/mal.git\n"
                      "rooty,Roo Ty,rooty@uni.example,git/rooty.git\n"
                      "bea,Bea,bea@uni.example,git/bea.git\n"
                      "twin,Twin,twin@uni.example,git/../git/bea.git\n"
                      "alt,Alt,alt@uni.example,git/alt.git\n"
                      "inner,Inner,inner@uni.example,git/inner.git\n"
                      "cy,Cy,cy@uni.example,git/cy.git\n"
                      "packed,Packed,packed@uni.example,git/packed.git\n")
    by_hand = base / "gitconfig"   # what a careful instructor did before: each roster path trusted, one by one
    by_hand.write_text("[safe]\n" + "".join(f"\tdirectory = {base / line.split(',')[3]}\n"
                                             for line in roster.read_text().splitlines()[1:]))
    for config, how in (("/dev/null", "no git config"), (str(by_hand), "each path trusted by hand")):
        trusted(base, roster, config, how, made, homes)


def trusted(base: Path, roster: Path, config: str, how: str, made: dict[str, str], homes: Path) -> None:
    """The class of owned_by_students collected as root with CONFIG as the user's git config (HOW)."""
    env = dict(os.environ, GIT_CONFIG_GLOBAL=config)
    shutil.rmtree(base / "subs", ignore_errors=True)
    done, entries, _ = collect(base, roster, "--deadline", DEADLINE, env=env)
    status = {name: e["status"] for name, e in entries.items()}
    expect(status["ada"] == "collected" and status["bea"] == "collected" and status["cy"] == "collected"
           and entries["ada"]["commit"] == made["ada"],
           f"{how}: repositories owned by their students are collected as root: {status} "
           f"{[e.get('message') for e in entries.values() if e['status'] == 'unreachable'][:2]}")
    mal = entries["mal"]
    expect(mal["status"] == "refused" and "git/mal.git" in mal["message"] and "uid 4102" in mal["message"]
           and "uid 4101" in mal["message"] and not (base / "subs" / "mal").exists(),
           f"{how}: a student's link to a classmate's repository is refused, naming the link and both users: "
           f"{mal.get('message')}")
    expect(entries["rooty"]["status"] == "refused" and "uid 0" in entries["rooty"]["message"],
           f"{how}: a student's link to a repository only root can read is refused: {entries['rooty'].get('message')}")
    expect(entries["alt"]["status"] == "refused" and "alternates" in entries["alt"]["message"],
           f"{how}: a repository that borrows a classmate's objects is refused: {entries['alt'].get('message')}")
    expect(entries["inner"]["status"] == "refused" and "objects/pack" in entries["inner"]["message"],
           f"{how}: a repository with a link inside to a classmate's packs is refused: {entries['inner'].get('message')}")
    twins = [entries["bea"].get("flags", []), entries["twin"].get("flags", [])]
    expect(all(len(f) == 1 for f in twins) and "line 6 (twin)" in twins[0][0] and "line 5 (bea)" in twins[1][0]
           and not entries["ada"].get("flags"),
           f"{how}: two roster lines naming one repository (one through '..') are both flagged: {twins}")
    expect(any("symbolic links followed" in n and str(homes / "cy" / "cy.git") in n
               for n in entries["cy"].get("notes", [])),
           f"{how}: a student's link to their own repository is followed and noted: {entries['cy'].get('notes')}")
    expect(status["packed"] == "unreachable",
           f"{how}: git reads a repository as its owner: a pack only root can read is not read "
           f"({entries['packed'].get('message')})")
    expect(done.returncode == 1 and "FLAGGED" in done.stdout,
           f"{how}: refusals make collect exit 1, flags are shown ({done.returncode})")
    summary = (base / "subs" / "collection.txt").read_text()
    expect("FLAGGED" in summary and "git/mal.git is a symbolic link" in summary,
           f"{how}: collection.txt says what was refused and flagged")


def make_mallory(base: Path, marks: Path) -> Repository:
    """Hooks in the repository itself, a submodule (its own bare repository, which must never be
    read), .gitattributes sending every file through LFS, an LFS pointer, a symlink and a gitlink in
    the exercises' places."""
    secret = Repository(base, "secret")
    secret.commit("2025-03-01T10:00:00Z", "secret", {"x.txt": "secret"})
    mallory = Repository(base, "mallory")
    folder = mallory.work / "exercises" / CH4
    folder.mkdir(parents=True)
    (folder / FILES[0]).write_text("version https://git-lfs.github.com/spec/v1\noid sha256:" + "0" * 64 + "\nsize 12\n")
    os.symlink("/etc/passwd", folder / FILES[1])
    (mallory.work / ".gitattributes").write_text("*.cpp filter=lfs diff=lfs merge=lfs -text\n")
    (mallory.work / ".gitmodules").write_text(f'[submodule "vendor"]\n\tpath = vendor\n\turl = {secret.bare}\n'
                                              f'[submodule "ex3"]\n\tpath = exercises/{CH4}/{FILES[2]}\n\turl = {secret.bare}\n')
    git("add", "-A", cwd=mallory.work)
    head = git("rev-parse", "HEAD", cwd=secret.work)
    for path in ("vendor", f"exercises/{CH4}/{FILES[2]}"):
        git("update-index", "--add", "--cacheinfo", f"160000,{head},{path}", cwd=mallory.work)
    git("commit", "-q", "-m", "hooks, submodules, lfs, a symlink", cwd=mallory.work, date="2025-03-01T12:00:00Z")
    git("push", "-q", str(mallory.bare), "HEAD:refs/heads/main", cwd=mallory.work)
    for hook in ("pre-receive", "post-update", "reference-transaction", "post-checkout", "update", "pre-upload"):
        (mallory.bare / "hooks" / hook).write_text(f"#!/bin/sh\ntouch {marks}/student-{hook}\n")
        (mallory.bare / "hooks" / hook).chmod(0o755)
    return mallory


if __name__ == "__main__":
    raise SystemExit(main())
