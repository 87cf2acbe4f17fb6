#!/usr/bin/env python3
"""The term end to end: collect a class of repositories, grade it with hidden checks, export every
format, apply an erratum to the instructor's tree, preview the regrade and accept it; as root and as
an unprivileged user (uid 65534); collecting 30 unchanged repositories again, timed; a regrade of 30
submissions after a one-check erratum, its compiles and check runs counted and timed; and Gradescope's
autograder run in a local /autograder layout made with bubblewrap. Minutes: label long.

The instructor's tree is a copy of this one with a git history of its own (BASE/instructor): its
"term" commit has a mistake in chapter 4's first hidden check (a line that fails it for everyone), and
the erratum commit removes it. The class (local bare repositories, chapter 4 graded): `ontime` (the
solutions before the deadline, a broken commit after it), `late` (the stubs before, the solutions
after: the stubs are graded), `extended` (the solutions after the class's deadline, before the
student's own), `missing`, `empty`, `hooked` (hooks in its repository, a submodule, one exercise
broken) and `tuned` (the solutions with a hidden bug-zoo mistake: every visible check passes it). The
hook must not run, the submodule's repository must never be read (the instructor's upload-pack hook,
which records every repository git serves, is the control), every grade report must name the commit
collected, `tuned` must keep every visible point and lose the hidden ones, what a student is given
(report.json, junit.xml, the feedback page, every export) must name no hidden check, and the exports
must follow their formats (lms_formats.py) with these scores joined to the roster. The regrade must
leave the old grades as they were until accepted, show each student the hidden check gained, compile
nothing and run that one check per submission, and name both commits; accepted, the old folder holds
the new grades and CTest reruns a check there. A second erratum that renames the hidden check shows
that rename once and no student changed. The student's page names the commit graded, when it was
collected and the later one ignored; the class page the late student, the extension and the
roster's students without a submission.
"""
from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import tempfile
import time
import zipfile
from pathlib import Path

from scalebook.config import packages_for
from scalebook.course import check_names
from scalebook.grading.report import ctest_pattern
from tests.grading import lms_formats
from tests.grading.test_collect import CH4, FILES, MASKS, Repository, git, version
from tests.harness import ROOT, copy_tree, expect, finish, load

DEADLINE = "2025-03-02T23:59:00+01:00"
USER = 65534
COLLECT_LIMIT = 5.0        # seconds: collecting 30 unchanged repositories again
COMMAND = ROOT / "workbook"  # what an instructor runs (Debian's python3, which has python3-seccomp)
TUNED = ROOT / "chapters" / CH4 / "bugzoo" / "hidden" / "inline_sentinel.mutant"   # passes every visible check
HIDDEN = Path("chapters") / CH4 / "hidden_checks.cpp"
MISTAKE = '  CHECK_MESSAGE(false, "the check\'s own mistake, which the erratum removes");\n'


def solutions(tag: str) -> dict[str, str]:
    return {name: (ROOT / "solutions" / CH4 / name).read_text() + f"// {tag}\n" for name in FILES}


def tuned(tag: str) -> dict[str, str]:
    """The solutions with a mistake of chapter 4's hidden bug zoo: tuned to the visible checks."""
    mutant = load(ROOT / "cmake" / "apply_mutant.py")
    fields, _ = mutant.parse(TUNED)
    files = solutions(tag)
    files[fields["file"]] = "\n".join(mutant.apply(TUNED, files[fields["file"]].splitlines())) + "\n"
    return files


class Instructor:
    """The instructor's tree: a copy of this one with its own git history. Its term commit has a mistake
    in chapter 4's first hidden check; erratum() commits the fix."""

    def __init__(self, base: Path):
        self.root = base / "instructor"
        copy_tree(self.root)
        if (ROOT / "build" / "ccache").is_dir():  # the kit compiles from a copy of this tree's cache
            shutil.copytree(ROOT / "build" / "ccache", self.root / "build" / "ccache", symlinks=True)
        self.command = self.root / "workbook"
        self.hidden_name = check_names(self.root / HIDDEN)[0]
        text = (self.root / HIDDEN).read_text()
        body = text.find(") {\n", text.find(f'TEST_CASE("{self.hidden_name}"')) + len(") {\n")
        assert body > len(") {\n"), f"{HIDDEN} does not open its first check's body with ') {{' at a line's end"
        (self.root / HIDDEN).write_text(text[:body] + MISTAKE + text[body:])
        git("init", "-q", "-b", "main", str(self.root))
        git("add", "-A", cwd=self.root)
        git("commit", "-q", "-m", "The term's tree", cwd=self.root)
        self.term = git("rev-parse", "--short", "HEAD", cwd=self.root)

    def erratum(self, user: int | None, home: Path) -> str:
        """Removes the mistake and commits it, as USER; returns the new commit."""
        (self.root / HIDDEN).write_text((self.root / HIDDEN).read_text().replace(MISTAKE, "", 1))
        return self.commit("Erratum: chapter 4's hidden check", user, home)

    def rename_erratum(self, user: int | None, home: Path) -> tuple[str, str]:
        """Renames the first hidden check (its label stays) and commits it, as USER; returns both names."""
        text = (self.root / HIDDEN).read_text()
        renamed = f"{self.hidden_name}, renamed"
        (self.root / HIDDEN).write_text(text.replace(f'TEST_CASE("{self.hidden_name}"', f'TEST_CASE("{renamed}"', 1))
        self.commit("Erratum: a hidden check renamed", user, home)
        return self.hidden_name, renamed

    def commit(self, message: str, user: int | None, home: Path) -> str:
        """Commits the tree as it is, as USER; returns the new commit."""
        env = {"GIT_AUTHOR_NAME": "Instructor", "GIT_AUTHOR_EMAIL": "i@example.org", "GIT_COMMITTER_NAME": "Instructor",
               "GIT_COMMITTER_EMAIL": "i@example.org", "GIT_CONFIG_GLOBAL": "/dev/null"}
        for argv in (["git", "add", "-A"], ["git", "commit", "-q", "-m", message]):
            done = run([*argv], user, home, env, cwd=self.root)
            assert done.returncode == 0, f"{argv}: {done.stderr}"
        return run(["git", "rev-parse", "--short", "HEAD"], user, home, env, cwd=self.root).stdout.strip()

    def reset(self) -> None:
        git("reset", "-q", "--hard", self.term, cwd=self.root)


def broken(tag: str) -> dict[str, str]:
    files = solutions(tag)
    files[FILES[0]] = version(tag)[FILES[0]]  # 4.1 back to its stub
    return files


def as_user(user: int | None, home: Path) -> tuple[list[str], dict]:
    prefix = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "--"] if user is not None else []
    return prefix, dict(os.environ, HOME=str(home))


def run(command: list[str], user: int | None, home: Path, env_extra: dict | None = None,
        timeout: float = 1200, cwd: Path | None = None) -> subprocess.CompletedProcess:
    prefix, env = as_user(user, home)
    env.update(env_extra or {})
    done = subprocess.run([*prefix, *command], capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL,
                          timeout=timeout, cwd=cwd)
    print(done.stdout[-4000:] + done.stderr[-4000:])
    return done


def make_class(base: Path, marks: Path) -> Path:
    """The class's repositories in BASE and its roster (BASE/roster.csv)."""
    ontime = Repository(base, "ontime")
    ontime.commit("2025-02-28T10:00:00Z", "stubs", version("ontime stubs"))
    ontime.commit("2025-03-02T20:00:00Z", "solved", solutions("ontime"))
    ontime.commit("2025-03-03T08:00:00Z", "broke it after the deadline", broken("ontime late"))
    late = Repository(base, "late")
    late.commit("2025-02-28T10:00:00Z", "stubs", version("late stubs"))
    late.commit("2025-03-03T10:00:00Z", "solved, too late", solutions("late"))
    extended = Repository(base, "extended")
    extended.commit("2025-03-04T10:00:00Z", "solved within the extension", solutions("extended"))
    git("init", "-q", "--bare", str(base / "empty.git"))
    secret = Repository(base, "secret")
    secret.commit("2025-03-01T10:00:00Z", "a library", {"lib.txt": "x"})
    hooked = Repository(base, "hooked")
    (hooked.work / ".gitmodules").write_text(f'[submodule "vendor"]\n\tpath = vendor\n\turl = {secret.bare}\n')
    git("update-index", "--add", "--cacheinfo", f"160000,{git('rev-parse', 'HEAD', cwd=secret.work)},vendor",
        cwd=hooked.work)
    hooked.commit("2025-03-02T21:00:00Z", "solved but 4.1, with a submodule", broken("hooked"))
    Repository(base, "tuned").commit("2025-03-02T19:00:00Z", "every visible check passes", tuned("tuned"))
    for hook in ("pre-receive", "update", "post-update", "reference-transaction", "post-checkout", "pre-upload"):
        (hooked.bare / "hooks" / hook).write_text(f"#!/bin/sh\ntouch {marks}/{hook}\n")
        (hooked.bare / "hooks" / hook).chmod(0o755)
    roster = base / "roster.csv"
    roster.write_text("id,name,email,repository,deadline,section\n"
                      "ontime,Ona Time,ona@uni.example,ontime.git,,A\n"
                      "late,Lee Late,lee@uni.example,late.git,,A\n"
                      "extended,Ext Ended,ext@uni.example,extended.git,2025-03-05T12:00:00+01:00,B\n"
                      "missing,Miss Ing,miss@uni.example,missing.git,,B\n"
                      "empty,Em Pty,em@uni.example,empty.git,,B\n"
                      "hooked,Hoo Ked,hoo@uni.example,hooked.git,,A\n"
                      "tuned,Tu Ned,tun@uni.example,tuned.git,,B\n")
    return roster


def course(base: Path, user: int | None, instructor: Instructor) -> None:
    """Collect, grade (hidden checks counted) and export the class as USER (None: root), then the
    erratum, the regrade's preview and its acceptance."""
    who = "root" if user is None else f"uid {user}"
    marks = base / "marks"
    marks.mkdir(parents=True)
    home = base / "home"
    home.mkdir()
    roster = make_class(base, marks)
    served = base / "served.txt"
    (base / "serve.sh").write_text(f"#!/bin/sh\necho \"$PWD\" >> {served}\nexec \"$@\"\n")
    (base / "serve.sh").chmod(0o755)
    (base / "gitconfig").write_text(f"[uploadpack]\n\tpackObjectsHook = {base / 'serve.sh'}\n")
    if user is not None:
        foreign = Repository(base, "foreign")  # stays root's: another user's repository, which git refuses untrusted
        foreign.commit("2025-03-01T10:00:00Z", "solved", solutions("foreign"))
        with open(roster, "a") as out:
            out.write("foreign,For Eign,for@uni.example,foreign.git,,A\n")
        for path in [base, *base.rglob("*")]:
            if "foreign" not in path.name and not any(p.name.startswith("foreign") for p in path.parents):
                os.lchown(path, user, user)
        (base / "foreign.git").chmod(0o755)
    subs, grades = base / "subs", base / "grades"
    env = {"GIT_CONFIG_GLOBAL": str(base / "gitconfig")}
    done = run([str(instructor.command), "collect", str(roster), "--deadline", DEADLINE, "--out", str(subs)],
               user, home, env)
    expect(done.returncode == 0, f"{who}: collect exits 0 ({done.returncode})")
    collection = {e["id"]: e for e in json.loads((subs / "collection.json").read_text())["students"]}
    statuses = {name: e["status"] for name, e in collection.items()}
    wanted = {"ontime": "collected", "late": "collected", "extended": "collected", "missing": "missing",
              "empty": "empty", "hooked": "collected", "tuned": "collected"}
    if user is not None:  # collect trusts the repository the roster names, by its real path: no git config
        wanted["foreign"] = "collected"
    expect(statuses == wanted, f"{who}: each student's status in the collection report: {statuses}")
    expect(not any(marks.iterdir()), f"{who}: no hook of the repository ran: {sorted(p.name for p in marks.iterdir())}")
    read = served.read_text().split() if served.exists() else []
    expect(str(base / "hooked.git") in read and not any("secret" in r for r in read),
           f"{who}: the hooked repository was served and its submodule's never was: {read}")
    expect(not (subs / "hooked" / "vendor").exists() and not (subs / "hooked" / ".gitmodules").exists(),
           f"{who}: the submission folder holds no submodule and no .gitmodules")

    folders = sorted(str(p) for p in subs.iterdir() if p.is_dir() and not p.name.startswith("."))
    options = ["--chapters", MASKS.number, "--jobs", "2", "--roster", str(roster), "--export",
               "gradescope,prairielearn-results,canvas,moodle,prairielearn", "--prairielearn-qid", "scalebook/causal-masking",
               "--assignment", "Causal masking", "--assignment-id", "4711", "--show-hidden", "count"]
    done = run([str(instructor.command), "grade", "--out", str(grades), *options, *folders], user, home)
    expect(done.returncode == 0, f"{who}: grade exits 0 ({done.returncode})")
    absent = "2 roster students: missing, empty"
    expect(f"no submission for {absent}" in done.stdout + done.stderr,
           f"{who}: grade names the roster's students it was given no submission of ({absent})")
    records = {p.parent.name: json.loads(p.read_text()) for p in grades.glob("ctest/students/*/record.json")}
    reports = {p.parent.name: json.loads(p.read_text()) for p in grades.glob("students/*/report.json")}
    scores = {name: r["score"] for name, r in reports.items()}
    maximum = reports["ontime"]["max_score"] if "ontime" in reports else 0
    hidden = [t for t in records.get("ontime", {}).get("tests", []) if t.get("hidden")]
    expect(maximum > 0 and len(hidden) >= 2 and [t["status"] for t in hidden] == ["failed"] + ["passed"] * (len(hidden) - 1),
           f"{who}: the record holds chapter 4's hidden checks, the first failing for everyone (the term's mistake)")
    expect(scores.get("ontime") == scores.get("extended") == maximum - 1,
           f"{who}: the on-time and the extended students get all but the mistaken check from the commit collected: {scores}")
    expect(scores.get("late") == 0, f"{who}: the late student is graded on the stubs committed in time ({scores.get('late')})")
    expect(0 < scores.get("hooked", 0) < maximum - 1, f"{who}: the hooked student loses 4.1's checks and those that call it ({scores.get('hooked')})")
    tuned_tests = records.get("tuned", {}).get("tests", [])
    expect(tuned_tests and all(t["status"] == "passed" and t["points"] == t["max_points"] for t in tuned_tests
                               if not t.get("hidden")) and scores.get("tuned", maximum) < maximum - 1,
           f"{who}: the submission tuned to the visible checks keeps every visible point and loses a hidden one "
           f"({scores.get('tuned')} of {maximum}, the mistaken check aside)")
    for name, report in reports.items():
        expect(report.get("collected", {}).get("commit") == collection[name]["commit"],
               f"{who}: {name}'s grade report names the commit collected", quiet=True)
    expect(reports.get("ontime", {}).get("collected", {}).get("later_count") == 1,
           f"{who}: the report counts the later commit")
    page = (grades / "students" / "ontime" / "feedback.html").read_text()
    expect(collection["ontime"]["commit"][:12] in page and "1 later commit(s) were not graded" in page
           and "broke it after the deadline" in page and collection["ontime"]["collected_at"] in page,
           f"{who}: the student's page says which commit was graded, when it was collected, and the later one ignored")
    class_page = (grades / "index.html").read_text()
    expect(">ontime</a>: 1 later commit(s)" in class_page and ">extended</a>: deadline 2025-03-05" in class_page
           and "<li>missing: missing" in class_page and "<li>empty: empty" in class_page,
           f"{who}: the class page lists the late student, the extension and the roster's students without a submission")
    secrets = check_names(instructor.root / HIDDEN)
    given = [p for p in grades.rglob("*") if p.is_file() and p.relative_to(grades).parts[0] in ("students", "exports")
             and p.suffix in (".json", ".xml", ".html", ".csv")]  # what a student may be given
    leaked = [f"{p.relative_to(grades)}: {s}" for p in given for s in secrets if s in p.read_text(errors="replace")
              and not (p.parent.parent.name == "gradescope" and hidden_only_for_instructors(p, s))]
    expect(given and not leaked, f"{who}: nothing a student is given names a hidden check (--show-hidden count): {leaked[:3]}")
    expect("hidden checks" in (grades / "students" / "tuned" / "feedback.html").read_text()
           and "4.3 allowed scores" in (grades / "ctest" / "students" / "tuned" / "feedback.html").read_text(),
           f"{who}: the student's page counts the hidden checks; the instructor's names them")
    if maximum:
        exports(grades / "exports", reports, maximum, who)
    regrade(base, user, home, instructor, grades, records, options, folders, who)


def hidden_only_for_instructors(path: Path, name: str) -> bool:
    """Gradescope's results.json may name a hidden check in a test whose visibility is hidden."""
    data = json.loads(path.read_text())
    shown = json.dumps([t for t in data["tests"] if t.get("visibility") != "hidden"]) + data.get("output", "")
    return name not in shown


def digest_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def regrade(base: Path, user: int | None, home: Path, instructor: Instructor, grades: Path, records: dict,
            options: list[str], folders: list[str], who: str) -> None:
    """The erratum, the preview against GRADES (untouched by it), and --accept."""
    before = digest_of(grades)
    new_commit = instructor.erratum(user, home)
    preview = base / "regrade"
    done = run([str(instructor.command), "grade", "--compare", str(grades), "--out", str(preview), *options, *folders],
               user, home)
    said = done.stdout + done.stderr
    expect(done.returncode == 0, f"{who}: grade --compare exits 0 ({done.returncode})")
    expect(digest_of(grades) == before, f"{who}: the preview leaves the old grades as they were, byte for byte")
    data = json.loads((preview / "compare.json").read_text())
    gained = {s["submission"]: s["changes"] for s in data["students"] if s["changes"]}
    graded = sorted(records)
    fixed = [n for n in graded if n != "late"]
    expect(sorted(gained) == fixed and all(len(c) == 1 and c[0]["check"] == instructor.hidden_name and c[0]["kind"] == "gained"
                                           and c[0]["hidden"] and c[0]["delta"] == 1 for c in gained.values()),
           f"{who}: the preview shows each student the hidden check gained (+1), the stubs none: {sorted(gained)}")
    expect(data["old"]["commit"] == instructor.term and data["new"]["commit"] == new_commit,
           f"{who}: the preview names both trees' commits ({data['old']['commit']}, {data['new']['commit']})")
    work = data["work"]
    checks = len(records["ontime"]["tests"])
    expect(work["compiled"] == 0 and work["linked"] == 0 and work["checks_run"] == len(graded)
           and work["reused"] == len(graded) * (checks - 1),
           f"{who}: the regrade compiles nothing and runs the one changed check per submission: {work}")
    lines = [line for line in said.splitlines() if "gained" in line]
    expect(len(lines) == len(fixed) and f"(graded at {instructor.term})" in said and new_commit in said
           and "--accept" in said, f"{who}: the terminal shows each check gained, both commits and how to accept")
    page = (preview / "compare.html").read_text()
    expect(all(f">{n}</a>" in page for n in fixed) and instructor.hidden_name in page and "<script" not in page,
           f"{who}: compare.html shows the students whose grade changed and the check")
    new_records = {p.parent.name: json.loads(p.read_text()) for p in preview.glob("ctest/students/*/record.json")}
    expect(all(r["commit"] == new_commit for r in new_records.values())
           and new_records["ontime"]["score"] == records["ontime"]["score"] + 1,
           f"{who}: the new records name the erratum's commit and carry the point gained")
    done = run([str(instructor.command), "grade", "--accept", str(preview), "--into", str(grades)], user, home)
    kept = [p for p in grades.parent.iterdir() if p.name.startswith("grades.replaced-")]
    expect(done.returncode == 0 and not preview.exists() and len(kept) == 1
           and json.loads((grades / "ctest" / "students" / "ontime" / "record.json").read_text())["commit"] == new_commit
           and json.loads((kept[0] / "ctest" / "students" / "ontime" / "record.json").read_text())["commit"] == instructor.term
           and (grades / "exports" / "canvas.csv").exists(),
           f"{who}: --accept puts the regrade in the old folder's place, exports too, and keeps the old grades beside it")
    again = run(["ctest", "--test-dir", str(grades), "-R", ctest_pattern([f"ontime/{CH4}/{instructor.hidden_name}"])],
                user, home)
    expect(again.returncode == 0 and "100% tests passed" in again.stdout,
           f"{who}: ctest reruns the regraded check in the accepted folder (its CTest files name its new place)")
    old_name, new_name = instructor.rename_erratum(user, home)
    renamed = base / "regrade-renamed"
    done = run([str(instructor.command), "grade", "--compare", str(grades), "--out", str(renamed), *options, *folders],
               user, home)
    data = json.loads((renamed / "compare.json").read_text()) if (renamed / "compare.json").exists() else {}
    expect(done.returncode == 0 and data.get("changed") == [] and data.get("renamed") == [
               {"chapter": CH4, "old": old_name, "new": new_name, "hidden": True}]
           and data.get("work", {}).get("checks_run") == len(graded) and "renamed in this tree" in done.stdout,
           f"{who}: an erratum that renames a hidden check shows the rename once and no student changed: "
           f"{data.get('changed')} {data.get('renamed')} {data.get('work')}")


def exports(folder: Path, reports: dict, maximum: int, who: str) -> None:
    for name, report in reports.items():
        data = json.loads((folder / "gradescope" / name / "results.json").read_text())
        problems = lms_formats.validate_gradescope(data)
        expect(not problems and data["score"] == report["score"],
               f"{who}: Gradescope results.json of {name} follows the format, score {data['score']} {problems[:2]}")
        text = (folder / "prairielearn-results" / name / "results.json").read_text()
        problems = lms_formats.validate_prairielearn(text)
        expect(not problems and json.loads(text)["score"] == report["score"] / maximum,
               f"{who}: PrairieLearn results.json of {name} follows the format {problems[:2]}")
    canvas = (folder / "canvas.csv").read_text(encoding="utf-8")
    problems = lms_formats.validate_canvas(canvas, 1, with_ids=True)
    expect(not problems, f"{who}: Canvas gradebook follows the format {problems[:3]}")
    rows = list(csv.reader(io.StringIO(canvas)))
    expect(rows[0][5] == "Causal masking (4711)" and rows[1][5] == str(maximum),
           f"{who}: Canvas's assignment column and points possible: {rows[0][5]}, {rows[1][5]}")
    by_id = {r[2]: r[5] for r in rows[2:]}
    expect(by_id.get("ontime") == str(reports["ontime"]["score"]) and by_id.get("late") == "0" and "missing" not in by_id
           and "empty" not in by_id, f"{who}: Canvas rows joined to the roster, none for a student with nothing graded: "
                                     f"{by_id}")
    scores = list(csv.reader(io.StringIO((folder / "prairielearn.csv").read_text(encoding="utf-8"))))
    expect(["ona@uni.example", "1", "scalebook/causal-masking"] in [r[:3] for r in scores[1:]],
           f"{who}: PrairieLearn's scores upload names each graded student by uid, instance and qid: {scores[:2]}")
    moodle = (folder / "moodle.csv").read_text(encoding="utf-8")
    problems = lms_formats.validate_moodle(moodle, 1)
    expect(not problems, f"{who}: Moodle import file follows the format {problems[:3]}")
    rows = {r[0]: r for r in list(csv.reader(io.StringIO(moodle)))[1:]}
    expect(rows.get("ona@uni.example", ["", ""])[1] == str(reports["ontime"]["score"])
           and "graded commit" in rows["ona@uni.example"][2] and "hidden checks: " in rows["ona@uni.example"][2],
           f"{who}: Moodle keyed by email, grade and feedback naming the commit, the hidden checks counted: "
           f"{rows.get('ona@uni.example')}")


def load_average() -> str:
    """The machine's load averages over 1, 5 and 15 minutes, printed with each figure: the machine
    is shared, and a figure means little without them."""
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def regrade_timing(base: Path, instructor: Instructor, count: int = 30) -> None:
    """COUNT submissions (the solutions, each with a line of its own in every file) graded, then again
    with nothing changed, then after a one-check erratum: each preview timed, its compiles and check
    runs counted (the records' work: what was compiled, linked and run, and what was reused)."""
    subs, grades, home = base / "subs", base / "grades", base / "home"
    home.mkdir(parents=True)
    for index in range(count):
        for name, text in solutions(f"student {index}").items():
            (subs / f"s{index:02d}" / "exercises" / CH4).mkdir(parents=True, exist_ok=True)
            (subs / f"s{index:02d}" / "exercises" / CH4 / name).write_text(text)
    folders = sorted(str(p) for p in subs.iterdir())
    options = ["--chapters", MASKS.number, "--jobs", "2"]

    def timed(*argv: str) -> tuple[subprocess.CompletedProcess, float]:
        start = time.monotonic()
        done = run([str(instructor.command), "grade", *argv, *options, *folders], None, home, timeout=2400)
        return done, time.monotonic() - start

    done, first = timed("--out", str(grades))
    records = [json.loads(p.read_text()) for p in grades.glob("ctest/students/*/record.json")]
    checks = len(records[0]["tests"]) if records else 0
    work = {k: sum(r["work"][k] for r in records) for k in ("compiled", "linked", "checks_run", "reused")}
    expect(done.returncode == 0 and len(records) == count and work["compiled"] == len(FILES) * count and work["checks_run"] == count * checks,
           f"{count} submissions graded: every file compiled, every check run: {work}")
    print(f"figure: grading {count} submissions of chapter 4 ({checks} checks, {work['compiled']} files compiled, "
          f"{work['checks_run']} checks run): {first:.1f} s (load average {load_average()})")
    for what, erratum in (("nothing changed", False), ("a one-check erratum", True)):
        if erratum:
            instructor.erratum(None, home)
        preview = base / ("after-erratum" if erratum else "unchanged")
        done, seconds = timed("--compare", str(grades), "--out", str(preview))
        data = json.loads((preview / "compare.json").read_text()) if (preview / "compare.json").exists() else {}
        work = data.get("work", {})
        changed = {c["check"] for s in data.get("students", []) for c in s["changes"]}
        rerun = {t["name"] for p in preview.glob("ctest/students/*/record.json") for t in json.loads(p.read_text())["tests"]
                 if not t.get("reused")}
        wanted = count if erratum else 0
        expect(done.returncode == 0 and work.get("compiled") == 0 and work.get("linked") == 0
               and work.get("checks_run") == wanted and work.get("reused") == count * checks - wanted
               and rerun == ({instructor.hidden_name} if erratum else set())
               and changed == ({instructor.hidden_name} if erratum else set()),
               f"regrade of {count} submissions, {what}: nothing compiled or linked, "
               f"{'that one check run per submission' if erratum else 'no check run'}: {work}, rerun {sorted(rerun)}")
        print(f"figure: regrade preview of {count} submissions, {what}: {seconds:.1f} s; compiled {work.get('compiled')} "
              f"files, linked {work.get('linked')} workers, ran {work.get('checks_run')} checks "
              f"({', '.join(sorted(rerun)) or 'none'}), reused {work.get('reused')} verdicts (load average {load_average()})")
    instructor.reset()


def timing(base: Path) -> float:
    """Collects 30 repositories, then again with nothing changed: seconds of the second run."""
    lines = ["id,name,email,repository"]
    for index in range(30):
        name = f"s{index:02d}"
        Repository(base, name).commit("2025-03-01T10:00:00Z", "work", solutions(name))
        lines.append(f"{name},Student {index},{name}@uni.example,{name}.git")
    roster = base / "roster.csv"
    roster.write_text("\n".join(lines) + "\n")
    command = [str(COMMAND), "collect", str(roster), "--deadline", DEADLINE, "--out", str(base / "subs")]
    first = subprocess.run(command, capture_output=True, text=True)
    start = time.monotonic()
    again = subprocess.run(command, capture_output=True, text=True)
    seconds = time.monotonic() - start
    report = json.loads((base / "subs" / "collection.json").read_text())
    fetches = {e.get("fetch") for e in report["students"]}
    expect(first.returncode == 0 and again.returncode == 0 and fetches == {"unchanged"},
           f"30 repositories collected again: every one unchanged ({fetches})")
    expect(seconds < COLLECT_LIMIT, f"collecting 30 unchanged repositories again took {seconds:.2f} s (< {COLLECT_LIMIT:g} s)")
    print(f"figure: collecting 30 unchanged repositories again: {seconds:.2f} s wall "
          f"(collect's own count {report['seconds']:.2f} s)")
    return seconds


# --- Gradescope's autograder in a local /autograder ----------------------------------------------------
def box(layout: Path, fake_bin: Path, command: str) -> subprocess.CompletedProcess:
    """COMMAND in a bubblewrap box whose /autograder is LAYOUT, with Gradescope's working directory.
    The host's /proc is bound (not a new one): the grader's own boxes mount a proc of their own,
    which the kernel allows only where the proc above is fully visible (as it must be on Gradescope)."""
    binds = ["--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
             "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--ro-bind", "/etc", "/etc",
             "--ro-bind", "/var", "/var", "--bind", "/proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
             "--bind", str(layout), "/autograder", "--ro-bind", str(fake_bin), "/fakebin"]
    cache = ROOT / "build" / "ccache"
    if cache.is_dir():  # the kit compiles from the instructor's cache (its keys are relative to the source tree)
        (layout / "source" / "build" / "ccache").mkdir(parents=True, exist_ok=True)
        binds += ["--bind", str(cache), "/autograder/source/build/ccache"]
    done = subprocess.run(["bwrap", *binds, "--chdir", "/autograder", "--clearenv", "--setenv", "PATH",
                           "/fakebin:/usr/sbin:/usr/bin", "--setenv", "HOME", "/tmp", "--die-with-parent", "--", command],
                          capture_output=True, text=True, timeout=1800)
    print(done.stdout[-3000:] + done.stderr[-3000:])
    return done


def autograder(base: Path) -> None:
    first, second = base / "a.zip", base / "b.zip"
    for target in (first, second):
        done = subprocess.run([str(COMMAND), "gradescope-autograder", str(target), "--chapters", MASKS.number],
                              capture_output=True, text=True)
        expect(done.returncode == 0, f"gradescope-autograder writes {target.name}: {(done.stdout + done.stderr).strip()[:300]}")
        time.sleep(1.1)  # a zip that kept file times would differ now
    expect(first.read_bytes() == second.read_bytes(), "the zip is deterministic: the same tree gives the same bytes")
    with zipfile.ZipFile(first) as archive:
        names = archive.namelist()
        modes = {i.filename: i.external_attr >> 16 for i in archive.infolist()}
        contents = {n: archive.read(n) for n in names}
    expect("setup.sh" in names and "run_autograder" in names and modes["run_autograder"] & 0o111
           and modes["setup.sh"] & 0o111, "setup.sh and run_autograder are at the zip's root, executable")
    answers = {p.read_bytes() for p in (ROOT / "solutions").rglob("*") if p.is_file()}
    expect(not any(n.startswith("solutions/") for n in names) and not any(c in answers for c in contents.values()),
           "the zip holds no solution, under any name")
    expect(not any(n.startswith(("tools/tests/", "tools/maintainer/", "docs/", "data/", "build/")) or "/bugzoo/" in n
                   for n in names), "nor the tests, the maintainers' tools, the book, the data, a build or the bug zoo")
    layout = base / "autograder"
    (layout / "source").mkdir(parents=True)
    with zipfile.ZipFile(first) as archive:
        for info in archive.infolist():
            target = layout / "source" / info.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(info))
            target.chmod((info.external_attr >> 16) & 0o777)
    shutil.copy2(layout / "source" / "run_autograder", layout / "run_autograder")
    fake_bin = base / "fakebin"
    fake_bin.mkdir()
    (fake_bin / "apt-get").write_text("#!/bin/sh\necho \"$@\" >> /autograder/apt-get.txt\n")
    (fake_bin / "apt-get").chmod(0o755)
    done = box(layout, fake_bin, "/autograder/source/setup.sh")
    expect(done.returncode == 0, f"setup.sh builds the image's kit and grades the stubs ({done.returncode})")
    installs = [line.split() for line in (layout / "apt-get.txt").read_text().splitlines() if line.startswith("install")]
    expect(len(installs) == 1 and set(installs[0][3:]) == set(packages_for("autograder")),
           f"setup.sh installs from apt exactly the packages its grade --no-similarity checks for (the "
           f"autograder purpose: no similarity engine): {installs}")
    # A student who uploads the files alone, then one who hands in a copy of the workbook with the stubs.
    for kind, files, score in (("loose files", solutions("gradescope"), "full"), ("whole copy", version("stubs"), "zero")):
        shutil.rmtree(layout / "submission", ignore_errors=True)
        shutil.rmtree(layout / "results", ignore_errors=True)
        for name, text in files.items():
            target = layout / "submission" / (name if kind == "loose files" else f"exercises/{CH4}/{name}")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        (layout / "results").mkdir()
        done = box(layout, fake_bin, "/autograder/run_autograder")
        path = layout / "results" / "results.json"
        expect(done.returncode == 0 and path.exists(), f"run_autograder ({kind}) writes /autograder/results/results.json")
        if path.exists():
            data = json.loads(path.read_text())
            problems = lms_formats.validate_gradescope(data)
            maximum = sum(t["max_score"] for t in data["tests"])
            expect(not problems and maximum > 0 and data["score"] == (maximum if score == "full" else 0),
                   f"run_autograder ({kind}): results.json follows the format, {score} marks ({data['score']}/{maximum}) "
                   f"{problems[:2]}")


def main() -> int:
    base = Path(tempfile.mkdtemp(prefix="scalebook-course-"))
    base.chmod(0o755)
    phases = []

    def phase(name: str, step, *args) -> None:
        start = time.monotonic()
        step(*args)
        phases.append(f"{name} {time.monotonic() - start:.0f} s")

    try:
        instructor = Instructor(base)
        phase("the class as root", course, base / "root", None, instructor)
        instructor.reset()
        phase("a regrade of 30 submissions", regrade_timing, base / "regrade", instructor)
        if os.geteuid() == 0:
            (base / "user").mkdir()
            for path in [instructor.root, *instructor.root.rglob("*")]:  # the instructor is this user now
                os.lchown(path, USER, USER)
            phase("the class as uid 65534", course, base / "user", USER, instructor)
        else:
            print("skip: the unprivileged run needs root to switch to uid 65534 (run the test as root)")
        phase("30 repositories", timing, base / "timing")
        if os.geteuid() == 0 and shutil.which("bwrap"):
            phase("Gradescope's autograder", autograder, base / "gradescope")
        else:
            print("skip: the autograder's /autograder layout needs root and bubblewrap")
        print("phases: " + ", ".join(phases))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return finish("the term runs from roster to gradebook")


if __name__ == "__main__":
    raise SystemExit(main())
