"""Collects the class's repositories at the deadline into submission folders, with a collection report.

Each student's repository is fetched into a bare mirror kept in OUT/.mirrors/ (one per repository
address, so that collecting again fetches only what changed), and nothing of it ever runs: git is
started with hooks off (core.hooksPath=/dev/null), no submodule fetched, no LFS smudge or other
filter, only the file, git, http(s) and ssh transports (so a roster cannot name `ext::COMMAND`),
no prompt for a password (a repository that asks is unreachable), its objects checked as they
arrive (fsck) and a time bound per repository. Nothing is checked out: the exercise files this
tree names are read from the chosen commit's tree object by object, regular files of at most 1 MiB
only (a symlink, a submodule or a larger file in their place is noted and not written), and written
as plain files into OUT/ID/exercises/NN-topic/, the only things a submission folder holds.

The chosen commit: along the first parents of the default branch (the repository's HEAD), from its
first commit on, the last commit before the first one dated after the student's deadline. Every
commit above it is late, even one dated earlier: it sits on top of a late one, so it was made after
the deadline whatever its date says. Commit dates are written by the student's own machine: `--now`
takes the tip whatever its date, and the report always lists the commits dated after the deadline.

OUT/collection.json records, per student, the commit, its date, the deadline, the time of
collection and the later commits (or why nothing was collected: missing, empty, unreachable, no
commit before the deadline, a roster line refused); OUT/collection.txt says the same in a table.
Grading reads the record beside a submission folder (`collection_record`) and puts the commit into
the grade reports.
"""
from __future__ import annotations

import concurrent.futures
import datetime
import hashlib
import shutil
import threading
import time
from pathlib import Path
from typing import NamedTuple

from ..course import Chapter
from ..files import atomic_write, private, read_json, write_json
from ..verdicts import safe_text
from . import trust
from .intake import SOURCE_LIMIT
from .git_hardened import GitTimeout, address, git, git_environment, is_local, last_error
from .roster import Refused, Student, without_credentials

REPORT, SUMMARY = "collection.json", "collection.txt"
MIRRORS, WORK = ".mirrors", ".work"     # not ids: an id starts with a letter or a digit
LATER_LISTED = 20                        # later commits listed per student (all are counted)


class Collector:
    """One collection run: the roster's students into OUT, their repositories fetched JOBS at once."""

    def __init__(self, out: Path, chapters: list[Chapter], deadline: datetime.datetime | None, now: bool,
                 timeout: float, roster_folder: Path, places: dict[str, "Place"] | None = None):
        self.out, self.chapters, self.deadline, self.now = out, chapters, deadline, now
        self.timeout, self.roster_folder = timeout, roster_folder
        self.places = places or {}                # student id -> what their roster line names
        self.env = git_environment()
        trusted = [p.local.real for p in self.places.values() if p.local and p.local.real and not p.local.refusal]
        if trusted:  # each local repository trusted by its real path, in a global config of this run's own
            self.env["GIT_CONFIG_GLOBAL"] = str(trust.trust_config(out / WORK / "gitconfig", trusted))
        self.locks: dict[str, threading.Lock] = {}
        self.fetched: dict[str, dict] = {}        # mirror -> what its fetch gave (once per run)
        self.guard = threading.Lock()
        self.collected_at = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        earlier = read_json(out / REPORT) or {}
        self.earlier = {e.get("id"): e for e in earlier.get("students", []) if isinstance(e, dict)}

    # --- one repository ----------------------------------------------------------------------------------
    def mirror_of(self, where: str) -> Path:
        return self.out / MIRRORS / (hashlib.sha256(where.encode()).hexdigest()[:20] + ".git")

    def fetch(self, place: "Place") -> dict:
        """Fetches PLACE's HEAD and branches into its mirror once per run (students sharing a
        repository share it). Returns {"mirror", "error"|None, "status", "changed"}."""
        mirror = self.mirror_of(place.key)
        with self.guard:
            lock = self.locks.setdefault(str(mirror), threading.Lock())
        with lock:
            if str(mirror) in self.fetched:
                return self.fetched[str(mirror)]
            result = self.fetch_once(place, mirror)
            self.fetched[str(mirror)] = result
            return result

    def fetch_once(self, place: "Place", mirror: Path) -> dict:
        """PLACE's source (a local repository's real path, or the URL) fetched into MIRROR; a local
        one read by git-upload-pack as the repository's owner where collect may take that user."""
        started = time.monotonic()
        where = place.source
        if place.local is not None and not place.local.real:
            return {"mirror": mirror, "status": "missing", "error": "no repository at this path"}
        upload = ["--upload-pack", place.upload] if place.upload else []
        fresh = not (mirror / "HEAD").exists()
        if fresh:
            mirror.parent.mkdir(parents=True, exist_ok=True)
            made = git(["init", "--quiet", "--bare", "--template=", str(mirror)], 60, self.env)
            if made.returncode != 0:
                return {"mirror": mirror, "status": "unreachable", "error": last_error(made.stderr, where)}
        try:
            fetched = git(["-C", str(mirror), "fetch", "--quiet", "--no-tags", "--prune", "--no-recurse-submodules",
                           "--no-write-fetch-head", *upload, "--", where, "+HEAD:refs/collect/head",
                           "+refs/heads/*:refs/heads/*"], self.timeout, self.env)
        except GitTimeout:
            return {"mirror": mirror, "status": "unreachable",
                    "error": f"no answer within {self.timeout:g} s (--repo-timeout)"}
        if fetched.returncode != 0:
            status, error = self.why_not(where, upload, fetched.stderr)
            return {"mirror": mirror, "status": status, "error": error}
        return {"mirror": mirror, "status": "fetched", "error": None, "fresh": fresh,
                "seconds": round(time.monotonic() - started, 2)}

    def why_not(self, where: str, upload: list[str], stderr: bytes) -> tuple[str, str]:
        """Why a fetch failed: an empty repository, one whose HEAD names no branch, or unreachable."""
        try:
            listed = git(["ls-remote", "--symref", *upload, "--", where], self.timeout, self.env)
        except GitTimeout:
            return "unreachable", last_error(stderr, where)
        if listed.returncode != 0:
            return "unreachable", last_error(listed.stderr or stderr, where)
        refs = [line.split("\t", 1)[-1] for line in listed.stdout.decode(errors="replace").splitlines()]
        if not refs:
            return "empty", "the repository has no commits"
        if "HEAD" not in refs:
            branches = [r.removeprefix("refs/heads/") for r in refs if r.startswith("refs/heads/")]
            return "no_default_branch", safe_text(
                "its HEAD names no branch that exists" + (f" (branches: {', '.join(branches[:10])})" if branches else ""), 300)
        return "unreachable", last_error(stderr, where)

    # --- one student -------------------------------------------------------------------------------------
    def collect(self, student: Student) -> dict:
        """STUDENT's entry of the report, their submission folder written (or removed: nothing collected)."""
        deadline = student.deadline or self.deadline
        place = self.places.get(student.id) or place_of(student, self.roster_folder)
        entry = {"id": student.id, "line": student.line, "repository": without_credentials(student.repository),
                 "deadline": deadline.isoformat() if deadline else None, "now": self.now,
                 "extension": student.deadline is not None, "collected_at": self.collected_at.isoformat()}
        if place.local is not None and place.local.real:
            entry.update(real_path=place.local.real, owner=trust.user(place.local.owner))
        if place.local is not None and place.local.refusal:
            entry.update(status="refused", message=f"the repository's path is refused: {place.local.refusal}")
            self.remove_folder(student.id)
            return entry
        fetched = self.fetch(place)
        if fetched["error"]:
            entry.update(status=fetched["status"], message=fetched["error"])
            self.remove_folder(student.id)
            return entry
        mirror = fetched["mirror"]
        heads = self.heads(mirror)
        tip = heads.pop("refs/collect/head")
        earlier = self.earlier.get(student.id, {})
        change = ("first fetch" if fetched["fresh"] or not earlier.get("tip") else
                  "unchanged" if earlier["tip"] == tip else "new commits")
        if change == "unchanged" and self.same_question(earlier, entry):
            # The same tip and the same deadline: the same answer as last time, without walking the history.
            chosen = {"commit": earlier["commit"], "date": earlier["commit_date"]} if earlier.get("commit") else None
            later, later_count = earlier.get("later_commits", []), earlier.get("later_count", 0)
        else:
            chosen, later = self.choose(self.first_parents(mirror), deadline)
            later_count = len(later)
        branch, others = self.branches(mirror, tip, heads)
        entry.update(fetch=change, tip=tip, branch=branch, later_count=later_count,
                     later_commits=later[:LATER_LISTED], others=others)
        if chosen is None:
            entry.update(status="nothing_before_deadline",
                         message=f"every commit of the default branch is dated after {deadline.isoformat()}")
            self.remove_folder(student.id)
            return entry
        if self.unchanged_folder(student.id, chosen["commit"], earlier):
            files, notes = earlier["files"], earlier.get("notes", [])
        else:
            files, notes = self.write_folder(mirror, chosen["commit"], student.id)
        entry.update(status="collected", commit=chosen["commit"], commit_date=chosen["date"], files=files,
                     notes=[*(place.local.notes if place.local else ()), *notes],
                     message=f"{len(files)} exercise file{'s' if len(files) != 1 else ''}")
        return entry

    def first_parents(self, mirror: Path) -> list[dict]:
        """The default branch's commits, tip first, along first parents: commit, date (ISO, as
        committed), seconds since the epoch, subject (safe text)."""
        shown = git(["-C", str(mirror), "log", "--first-parent", "--format=%H%x1f%ct%x1f%cI%x1f%s", "refs/collect/head"],
                    self.timeout, self.env)
        history = []
        for line in shown.stdout.decode(errors="replace").splitlines():
            commit, epoch, date, subject = (line.split("\x1f", 3) + [""])[:4]
            history.append({"commit": commit, "epoch": int(epoch), "date": date, "subject": safe_text(subject, 120)})
        return history

    def choose(self, history: list[dict], deadline: datetime.datetime | None) -> tuple[dict | None, list[dict]]:
        """The commit collected and the late ones (each {commit, date, subject}): those above the last
        commit of the on-time start of the history. With --now, the tip, and the same late ones (none
        without a deadline)."""
        if deadline is None:
            return history[0], []
        on_time = len(history)  # history[on_time:] (oldest last) is dated at or before the deadline throughout
        while on_time > 0 and history[on_time - 1]["epoch"] <= deadline.timestamp():
            on_time -= 1
        late = [shown(c) for c in history[:on_time]]
        if self.now:
            return history[0], late
        return (history[on_time] if on_time < len(history) else None), late

    def heads(self, mirror: Path) -> dict[str, str]:
        """The mirror's branches and the default branch's tip (refs/collect/head): {ref: commit}."""
        listed = git(["-C", str(mirror), "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads",
                      "refs/collect/head"], 60, self.env)
        return {ref: sha for sha, ref in (line.split(" ", 1) for line in
                                          listed.stdout.decode(errors="replace").splitlines() if " " in line)}

    def same_question(self, earlier: dict, entry: dict) -> bool:
        """Whether the earlier collection chose among the same commits by the same rule."""
        return (earlier.get("status") in ("collected", "nothing_before_deadline") and earlier.get("deadline") == entry["deadline"]
                and earlier.get("now") == self.now and "later_commits" in earlier)

    def branches(self, mirror: Path, tip: str, heads: dict[str, str]) -> tuple[str | None, list[str]]:
        """The default branch's name (a branch at its tip) and the branches with commits it lacks
        (work pushed to the wrong branch?); the second question asked of git only when there are others."""
        at_tip = [ref.removeprefix("refs/heads/") for ref, sha in heads.items() if sha == tip]
        others = []
        if len(at_tip) < len(heads):
            unmerged = git(["-C", str(mirror), "for-each-ref", "--format=%(refname:short)", "--no-merged=refs/collect/head",
                            "refs/heads"], 60, self.env)
            others = [safe_text(n, 100) for n in unmerged.stdout.decode(errors="replace").split()][:10]
        return (safe_text(at_tip[0], 100) if at_tip else None), others

    def unchanged_folder(self, student_id: str, commit: str, earlier: dict) -> bool:
        """Whether OUT/ID holds exactly what the earlier collection wrote from COMMIT (so it is kept)."""
        if earlier.get("status") != "collected" or earlier.get("commit") != commit or not isinstance(earlier.get("files"), dict):
            return False
        folder = self.out / student_id / "exercises"
        if folder.is_symlink() or not folder.is_dir():
            return False
        present = {str(p.relative_to(folder)) for p in folder.rglob("*") if not p.is_dir() or p.is_symlink()}
        if present != set(earlier["files"]):
            return False
        for relative, sha in earlier["files"].items():
            path = folder / relative
            if path.is_symlink() or hashlib.sha256(path.read_bytes()).hexdigest() != sha:
                return False
        return True

    def write_folder(self, mirror: Path, commit: str, student_id: str) -> tuple[dict[str, str], list[str]]:
        """OUT/ID/exercises/NN-topic/FILE for each exercise file this tree names that the commit holds
        as a regular file of at most SOURCE_LIMIT bytes, and nothing else; returns {path: sha256}
        (intake's form) and notes on what was not written."""
        listed = git(["-C", str(mirror), "ls-tree", "-r", "-z", "-l", "--full-tree", commit], self.timeout, self.env)
        entries = {}
        for record in listed.stdout.split(b"\0"):
            if b"\t" in record:
                meta, path = record.split(b"\t", 1)
                mode, kind, sha, size = meta.decode().split()
                entries[path.decode(errors="surrogateescape")] = (mode, kind, sha, size)
        prefix = "exercises/" if any(p.startswith("exercises/") for p in entries) else ""
        wanted, notes = {}, []
        for chapter in self.chapters:
            for source in chapter.sources:
                relative = f"{chapter.folder}/{source}"
                entry = entries.get(prefix + relative)
                if entry is None:
                    continue
                mode, kind, sha, size = entry
                if mode == "120000":
                    notes.append(f"{relative}: a symbolic link, not written")
                elif kind == "commit":
                    notes.append(f"{relative}: a submodule, not written (submodules are never fetched)")
                elif kind != "blob":
                    notes.append(f"{relative}: not a file, not written")
                elif int(size) > SOURCE_LIMIT:
                    notes.append(f"{relative}: larger than {SOURCE_LIMIT >> 20} MiB, not written")
                else:
                    wanted[relative] = sha
        contents = self.blobs(mirror, sorted(set(wanted.values())))
        staging = self.out / WORK / student_id
        shutil.rmtree(staging, ignore_errors=True)
        files = {}
        for relative, sha in sorted(wanted.items()):
            data = contents[sha]
            if data.startswith(b"version https://git-lfs.github.com/spec/"):
                notes.append(f"{relative}: a Git LFS pointer (LFS files are never downloaded), written as it is")
            target = staging / "exercises" / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            files[relative] = hashlib.sha256(data).hexdigest()
        (staging / "exercises").mkdir(parents=True, exist_ok=True)
        self.remove_folder(student_id)
        staging.rename(self.out / student_id)
        return files, notes

    def blobs(self, mirror: Path, shas: list[str]) -> dict[str, bytes]:
        """The contents of SHAS, read in one `git cat-file --batch`."""
        if not shas:
            return {}
        shown = git(["-C", str(mirror), "cat-file", "--batch"], self.timeout, self.env,
                    data="".join(f"{sha}\n" for sha in shas).encode())
        contents, at, data = {}, 0, shown.stdout
        for sha in shas:
            end = data.index(b"\n", at)
            size = int(data[at:end].split()[2])
            contents[sha] = data[end + 1:end + 1 + size]
            at = end + 1 + size + 1
        return contents

    def remove_folder(self, student_id: str) -> None:
        """The student's submission folder from an earlier collection: it must not be graded as this one's."""
        folder = self.out / student_id
        if folder.is_symlink() or folder.is_file():
            folder.unlink()
        elif folder.exists():
            shutil.rmtree(folder)


def shown(commit: dict) -> dict:
    return {"commit": commit["commit"], "date": commit["date"], "subject": commit["subject"]}


class Place(NamedTuple):
    """What a roster line's repository is: KEY names its mirror and says which lines share one
    repository (a local one's real path, a URL without its credentials), SOURCE is what git fetches
    (the real path, never the path as written), LOCAL what grading/trust.py found of a local path,
    UPLOAD the git-upload-pack that reads it as its owner (or None)."""
    key: str
    source: str
    local: trust.Local | None
    upload: str | None


def place_of(student: Student, roster_folder: Path) -> Place:
    where = address(student.repository, roster_folder)
    if not is_local(where):
        return Place(without_credentials(where), where, None, None)
    local = trust.inspect(where)
    if not local.real or local.refusal:
        return Place(local.real or where, local.real or where, local, None)
    return Place(local.real, local.real, local, trust.upload_pack(local))


def shared_repositories(students: list[Student], places: dict[str, Place]) -> dict[str, list[str]]:
    """Student id -> a flag per other roster line whose repository is the same (after resolving)."""
    by_key: dict[str, list[Student]] = {}
    for student in students:
        place = places[student.id]
        if place.local is None or (place.local.real and not place.local.refusal):  # a refusal names the real path
            by_key.setdefault(place.key, []).append(student)
    flags: dict[str, list[str]] = {}
    for key, sharing in by_key.items():
        for student in sharing if len(sharing) > 1 else []:
            others = ", ".join(f"line {o.line} ({o.id})" for o in sharing if o is not student)
            flags[student.id] = [f"one repository for several roster lines: {safe_text(key, 200)} is also {others}'s"]
    return flags


def collect_class(students: list[Student], refused: list[Refused], out: Path, chapters: list[Chapter],
                  deadline: datetime.datetime | None, now: bool, timeout: float, jobs: int,
                  roster_folder: Path, progress=None) -> dict:
    """Collects every student into OUT (the collecting user's alone: 0700 folders, 0600 files), JOBS
    repositories at once, and writes collection.json and collection.txt. Returns the report."""
    out.mkdir(mode=0o700, parents=True, exist_ok=True)
    private(out)  # what an earlier run (or an older collect) left open to others
    places = {s.id: place_of(s, roster_folder) for s in students}
    flags = shared_repositories(students, places)
    collector = Collector(out, chapters, deadline, now, timeout, roster_folder, places)
    started = time.monotonic()
    entries: dict[str, dict] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(collector.collect, s): s for s in students}
        for future in concurrent.futures.as_completed(futures):
            student = futures[future]
            try:
                entry = future.result()
            except Exception as error:  # one student's trouble is one line of the report
                entry = {"id": student.id, "line": student.line, "status": "unreachable",
                         "repository": without_credentials(student.repository),
                         "message": safe_text(f"collecting failed: {error}", 300)}
            if flags.get(student.id):
                entry["flags"] = flags[student.id]
            entries[student.id] = entry
            if progress:
                progress(entry)
    for line in refused:
        entries[f"line {line.line}"] = {"id": line.id, "line": line.line, "status": "refused",
                                         "message": f"roster line {line.line}: {line.reason}"}
    shutil.rmtree(out / WORK, ignore_errors=True)
    report = {"collected_at": collector.collected_at.isoformat(), "deadline": deadline.isoformat() if deadline else None,
              "now": now, "seconds": round(time.monotonic() - started, 2),
              "students": sorted(entries.values(), key=lambda e: e["line"])}
    write_json(out / REPORT, report)
    atomic_write(out / SUMMARY, summary(report))
    return report


def summary(report: dict) -> str:
    """The collection report as a table a person reads (every cell safe text)."""
    head = (f"Collected {report['collected_at']}" +
            (f", deadline {report['deadline']}" if report["deadline"] else "") +
            (" (--now: the tip of each default branch, whatever its date)" if report["now"] else "") + "\n")
    rows = [("line", "id", "status", "commit", "commit date", "later", "notes")]
    for e in report["students"]:
        notes = "; ".join([e.get("message", "")] + [f"FLAGGED: {f}" for f in e.get("flags", [])] + e.get("notes", []) +
                          ([f"extension to {e['deadline']}"] if e.get("extension") else []) +
                          ([f"unmerged branches: {', '.join(e['others'])}"] if e.get("others") else []))
        rows.append((str(e["line"]), e["id"] or "-", e["status"], (e.get("commit") or "")[:10],
                     e.get("commit_date") or "", str(e.get("later_count", "")), notes))
    widths = [max(len(r[i]) for r in rows) for i in range(6)]
    lines = ["  ".join(cell.ljust(widths[i]) if i < 6 else cell for i, cell in enumerate(r)).rstrip() for r in rows]
    counts: dict[str, int] = {}
    for e in report["students"]:
        counts[e["status"]] = counts.get(e["status"], 0) + 1
    tail = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    return head + "\n".join(lines) + f"\n{tail}; {report['seconds']:.1f} s\n"


def collection_record(submission: Path, sources: dict[str, str], chapters: list[Chapter]) -> dict | None:
    """What the report of a submission collected by `collect` says about it (the collection.json
    beside its folder, the entry of its name), for its grade report: the commit, its date, the
    deadline, the time of collection and the later commits. None when it was not collected so. When
    its files of CHAPTERS are no longer those collected (SOURCES: intake's {path: sha256}), it says so."""
    report = read_json(submission.parent / REPORT)
    if not isinstance(report, dict):
        return None
    entry = next((e for e in report.get("students", []) if isinstance(e, dict) and e.get("id") == submission.name
                  and e.get("status") == "collected"), None)
    if entry is None:
        return None
    record = {key: entry.get(key) for key in ("commit", "commit_date", "deadline", "extension", "collected_at",
                                               "later_count", "later_commits")}
    if entry.get("flags"):
        record["flags"] = entry["flags"]
    record["now"] = bool(report.get("now"))
    folders = {c.folder for c in chapters}
    collected = {p: sha for p, sha in (entry.get("files") or {}).items() if p.split("/")[0] in folders}
    if collected != sources:
        record["changed_since"] = "the folder's exercise files are not those of this commit"
    return record


def absent_students(given: list[Path], roster: list[Student] | None) -> list[dict]:
    """The students with no submission among GIVEN (the folders graded): those of each collection.json
    beside them (with collect's status and message: missing, empty, refused...) and those of ROSTER
    (the grading's --roster); each {id, status, why}, in the roster's or the report's order."""
    names = {path.name for path in given}
    found: dict[str, dict] = {}
    for folder in dict.fromkeys(path.absolute().parent for path in given):
        report = read_json(folder / REPORT)
        for entry in report.get("students", []) if isinstance(report, dict) else []:
            if not isinstance(entry, dict):
                continue
            key = entry.get("id") or f"line {entry.get('line')}"
            if key not in names and key not in found:
                found[key] = {"id": key, "status": str(entry.get("status", "")), "why": str(entry.get("message", ""))}
    for student in roster or []:
        if student.id not in names and student.id not in found:
            found[student.id] = {"id": student.id, "status": "no submission",
                                 "why": "the roster names this student; no folder of theirs was given to grade"}
    return list(found.values())
