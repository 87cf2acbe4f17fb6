#!/usr/bin/env python3
"""The student edition end to end, as a student who is not root gets it.

From a scratch copy of this tree (the instructor's), `./workbook release` refuses a folder that is
neither empty nor an edition, then writes the edition: stages shown, its path, commit and how to
publish it at the end. The edition has no solutions, bug zoo, instructor sections, maintainers'
tests or timing scripts, and no hidden check: grep finds none of their names or lines of their
code in the edition, its prebuilt docs or anything the student's build makes of it (objects, the
check binaries, the book), while the edition's manifests count them and `./workbook check 4` says
how many further checks run at grading. No file of it outside tools/ names solutions/, the reference's build
or presets, or a command it refuses; its CMakePresets.json configures the student track only. Its
README is written for students (the set-up, the loop with a real failing check, fixes by
./workbook update, the layout) and shows the benchmarks' figures measured at release. As root,
the repository students clone belongs to another user: root's own push is refused, the push
release prints (as that user) publishes the edition and each erratum. As a non-root user (uid
65534 when this runs as root), following the README: git's safe.directory, a clone in a folder the
student owns, `./workbook bench 7 --help` (its options, nothing built), then every `./workbook`
command that the README and the book's pages show, each of which must run (an unsolved exercise
may fail it, as the command says; a refusal or any other error fails the test). The book shows the
stubs as shipped, their instructions and fence included. Errata (errata_by_update): a student with
committed and uncommitted work takes a fix to pages, a check, instructions and the code of the
very file being edited with `./workbook update`, and a second fix by a plain git pull that stops
on a conflict, which check explains and update finishes; the student's code survives byte for
byte and everything else is the instructor's. This tree grades a submission made from the
edition. `./workbook bench 2` and `bench 7` name the exercise to finish first on the stubs, and
with chapters 2, 3, 4 and 7 solved time the student's own code; CMakePresets.json's student
presets configure, build and list the checks with plain cmake and ctest, as an editor's CMake
support runs them."""
from __future__ import annotations

import html
import json
import os
import pwd
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scalebook.loop.errata import FENCE, INSTRUCTIONS, PATCH_SUFFIX
from scalebook.course import all_chapters, check_names
from tests.harness import ROOT, expect, failures, finish
from tests.student.edition import (CHAPTER, CHECK_MARK, RENAMED, SENTENCE_MARK, STUDENT, Student, above_fence,
                                   below_fence, commit, differing, first_erratum, missing_named, solved)



def shown_file(page: Path, name: str) -> str:
    """The code the book page shows under the caption NAME (docs/prepare_page.cmake), as text."""
    def text(markup: str) -> str:
        return html.unescape(re.sub(r"<[^>]+>", "", markup))
    blocks = re.findall(r'<div class="scalebook-file-name">(.*?)</div>(.*?)<!-- fragment -->', page.read_text(), re.S)
    return next((text(code) for caption, code in blocks if text(caption) == name), "")


def cache_of_this_tree() -> str:
    cache = ROOT / "build" / "reference" / "CMakeCache.txt"
    match = re.search(r"^SCALEBOOK_CCACHE_DIR:PATH=(.*)$", cache.read_text(), re.M) if cache.exists() else None
    return match.group(1) if match else str(ROOT / "build" / "ccache")


def instructor_copy(base: Path) -> Path:
    """This tree's files (as they are now) in a git repository of their own, with a reference build
    that shares this tree's compiler cache."""
    copy = base / "instructor"
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode()
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).exists():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, copy / name)
    commit(copy, "the instructor's tree")
    subprocess.run(["cmake", "--preset", "reference", f"-DSCALEBOOK_CCACHE_DIR={cache_of_this_tree()}"],
                   cwd=copy, check=True, stdout=subprocess.DEVNULL)
    return copy


def release(instructor: Path, edition: Path, *extra: str) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    result = subprocess.run([str(instructor / "workbook"), "release", str(edition), *extra], capture_output=True,
                            text=True, stdin=subprocess.DEVNULL, env=dict(os.environ, NO_COLOR="1"))
    return result, time.monotonic() - started


def shown_commands(clone: Path) -> list[str]:
    """Every `./workbook ...` command the README and the book's pages (lessons, hints, main page,
    the exercise stubs the book shows) name, comments and prompts stripped, in order."""
    sources = [clone / "README.md", clone / "docs" / "mainpage.md.in",
               *sorted(clone.glob("chapters/*/lesson.md")), *sorted(clone.glob("chapters/*/hints.md")),
               *sorted(clone.glob("exercises/*/*.cpp"))]
    found: list[str] = []
    for path in sources:
        text = path.read_text()
        candidates = re.findall(r"\./workbook(?:[ \t]+[a-z]+)?(?:[ \t]+[0-9]+(?:\.[0-9]+)?)?"
                                r"(?:[ \t]+--[a-z-]+(?:[ \t]+[0-9]+)?)?", text)
        for command in candidates:
            command = " ".join(command.split())
            if command not in found:
                found.append(command)
    return found


def runs_as_promised(student: Student, clone: Path, command: str) -> tuple[bool, str]:
    """Runs COMMAND as the student: it must not be refused and may fail only on unsolved exercises."""
    words = command.split()[1:]
    if words[:1] == ["watch"]:  # runs until stopped: it must check once and say it is watching
        prefix = ["runuser", "-u", STUDENT, "--"] if student.root else []
        with subprocess.Popen([*prefix, "env", "-i", *[f"{k}={v}" for k, v in student.env.items()],
                               str(clone / "workbook"), *words], cwd=clone, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL) as process:
            seen = ""
            deadline = time.monotonic() + 600
            assert process.stdout is not None
            os.set_blocking(process.stdout.fileno(), False)
            while time.monotonic() < deadline and "watching exercises/" not in seen and process.poll() is None:
                time.sleep(0.5)
                try:
                    seen += os.read(process.stdout.fileno(), 65536).decode(errors="replace")
                except BlockingIOError:
                    pass
            process.terminate()
            process.wait()
        return "watching exercises/" in seen, seen[-400:]
    result = student.run([str(clone / "workbook"), *words], clone)
    said = result.stdout + result.stderr
    unsolved = re.search(r"not implemented yet|is not implemented|did not run: .*not implemented", said)
    refused = result.returncode == 2 or "not part of the student edition" in said or "usage:" in result.stderr
    ok = not refused and (result.returncode == 0 or bool(unsolved))
    return ok, f"status {result.returncode}: {said[-500:]}"


def benches_time_the_students_code(student: Student, clone: Path, instructor: Path) -> None:
    """With chapters 2, 3, 4 and 7 solved (the reference's files in the student's exercises/),
    `./workbook bench 2` and `bench 7` run and time the student's own code, both sides of each
    comparison alike; then the student's exercises/ is as it was."""
    for chapter in ("02-small-models", "03-attention-scaling", "04-causal-masking", "07-under-the-hood"):
        for source in (instructor / "solutions" / chapter).glob("*.cpp"):
            mine = clone / "exercises" / chapter / source.name
            mine.write_text(source.read_text())
            student.own(mine)
    runs = {"2": ["--repeat", "2"], "7": ["--repetitions", "2"]}
    said = {}
    for number, extra in runs.items():
        started = time.monotonic()
        bench = student.run([str(clone / "workbook"), "bench", number, *extra], clone)
        said[number] = bench.stdout + bench.stderr
        print(f"--- ./workbook bench {number} {' '.join(extra)} with solved exercises "
              f"({time.monotonic() - started:.0f} s):\n{said[number]}---", flush=True)
        expect(bench.returncode == 0 and "Traceback" not in said[number],
               f"./workbook bench {number} runs on solved exercises (status {bench.returncode})")
    mine = said["2"].split("Now on this machine", 1)[-1]
    rows = {label: re.search(rf"^  {re.escape(label)}.*?\s([0-9.]+)\s+([0-9.]+)$", mine, re.M)
            for label in ("yours: exercises 2.1-2.4", "lib's trainer")}
    expect(all(rows.values()) and "best of 2 runs" in mine and "CPU seconds" in mine
           and all(float(m.group(1)) > 0 for m in rows.values() if m)
           and abs(float(rows["yours: exercises 2.1-2.4"].group(2)) - float(rows["lib's trainer"].group(2))) < 0.05,
           "bench 2 trains with the student's 2.1-2.4 and lib's trainer, each the best of 2 runs in CPU "
           "seconds, to the same validation MAE")
    mine = said["7"].split("Now on this machine", 1)[-1]
    timed = [re.search(rf"^  {re.escape(label)}.*?\s([0-9.]+)\s+[0-9.]+$", mine, re.M)
             for label in ("naive, yours: 4.3 causal_attention", "tiled, yours: 7.6 tiled_attention")]
    expect(all(timed) and all(float(m.group(1)) > 0 for m in timed if m) and "the best of 2 repetitions" in mine,
           "bench 7 times the student's 4.3 against their 7.6, each the best of 2 repetitions")
    restored = student.run(["git", "checkout", "--", "exercises"], clone)
    expect(restored.returncode == 0 and not student.run(["git", "status", "--porcelain"], clone).stdout.strip(),
           "the student's exercises/ is as it was after the benchmarks")


def presets_work_as_an_editor_uses_them(student: Student, clone: Path) -> None:
    """What VS Code's CMake Tools runs, by hand: CMakePresets.json's student configure, build and
    test presets, and the test list its test explorer reads, each check of the edition in it."""
    checks = sum(len(re.findall(r'TEST_CASE[ ]*\("', p.read_text())) for p in clone.glob("chapters/*/checks.cpp"))
    configured = student.run(["cmake", "--preset", "student", f"-DSCALEBOOK_CCACHE_DIR={student.cache}"], clone)
    built = student.run(["cmake", "--build", "--preset", "student"], clone)
    listed = student.run(["ctest", "--preset", "student", "-N"], clone)
    count = re.search(r"^Total Tests: (\d+)$", listed.stdout, re.M)
    expect(configured.returncode == 0 and built.returncode == 0 and listed.returncode == 0 and count is not None
           and int(count.group(1)) == checks > 0 and "01-feature-scaling/1.1 " in listed.stdout,
           f"cmake --preset student, cmake --build --preset student and ctest --preset student -N work in the "
           f"edition, listing its {checks} checks: {count.group(0) if count else ''} "
           f"{configured.stderr[-300:]}{built.stdout[-300:]}{built.stderr[-300:]}{listed.stderr[-300:]}")
    shown = student.run(["ctest", "--preset", "student", "--show-only=json-v1"], clone)
    try:
        names = [test["name"] for test in json.loads(shown.stdout)["tests"]]
    except (ValueError, KeyError):
        names = []
    expect(len(names) == checks and all("/" in name for name in names),
           f"ctest's JSON test list (what CMake Tools' test explorer reads) names the {checks} checks: {len(names)}")


def course_repository(base: Path, edition: Path, first: str) -> Path | None:
    """As root: the repository students clone, a folder that another user (uid 65534) owns. Root's
    own push into it is refused ("dubious ownership"); the push release prints for that case, run
    as its owner, publishes the edition. None when this does not run as root."""
    if os.geteuid() != 0:
        print("note: not root; the push into a repository another user owns was not tried")
        return None
    expect(f"runuser -u OWNER -- git -c safe.directory={edition} -C {edition} push URL main" in first,
           "the first release says how root pushes into a folder another user owns")
    owner = pwd.getpwnam(STUDENT)
    course = base / "course.git"
    course.mkdir()
    os.chown(course, owner.pw_uid, owner.pw_gid)
    subprocess.run(["runuser", "-u", STUDENT, "--", "git", "init", "-q", "--bare", "-b", "main", str(course)],
                   check=True)
    subprocess.run(["git", "-C", str(edition), "remote", "add", "origin", str(course)], check=True)
    refused = subprocess.run(["git", "-C", str(edition), "push", "-q", "origin", "main"], capture_output=True,
                             text=True)
    expect(refused.returncode != 0 and "dubious ownership" in refused.stderr,
           f"root's own push into it is refused: {refused.stderr.strip()[-200:]}")
    pushed = subprocess.run(shlex.split(f"runuser -u {STUDENT} -- git -c safe.directory={edition} -C {edition} "
                                        f"push -q {course} main"), capture_output=True, text=True)
    expect(pushed.returncode == 0 and published(course, edition),
           f"the first release's push, run as the owner, publishes the edition {pushed.stderr[-300:]}")
    return course


def published(course: Path, edition: Path) -> bool:
    """COURSE's main is the edition's last commit, and every file in COURSE still belongs to its owner."""
    head = subprocess.run(["git", "-C", str(edition), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    theirs = subprocess.run(["git", "-c", f"safe.directory={course}", "--git-dir", str(course), "rev-parse", "main"],
                            capture_output=True, text=True).stdout
    owner = pwd.getpwnam(STUDENT).pw_uid
    return head.strip() == theirs.strip() != "" and all(p.lstat().st_uid == owner for p in [course, *course.rglob("*")])


def publish_erratum(said: str, course: Path | None, edition: Path) -> None:
    """Runs the push that an erratum's release printed for a repository another user owns."""
    if course is None:
        return
    line = next((l.strip() for l in said.splitlines() if l.strip().startswith(f"runuser -u {STUDENT} -- git")), "")
    expect(f"-c safe.directory={edition} -C {edition} push {course} main" in line,
           f"the erratum's release names the owner and prints the exact push: {line!r}")
    pushed = subprocess.run(shlex.split(line), capture_output=True, text=True) if line else None
    expect(pushed is not None and pushed.returncode == 0 and published(course, edition),
           f"that push, run as printed, publishes the erratum {pushed.stderr[-300:] if pushed else ''}")


def errata_by_update(student: Student, clone: Path, instructor: Path, edition: Path, mine: dict[Path, str],
                     course: Path | None) -> None:
    """Two releases of errata, taken as the edition's README says, by a student who has solved 1.1
    (committed), 1.3 (not committed) and 1.2 (not committed, the file being edited). The first fixes
    a sentence of chapter 1's page, a check of 1.2, the instructions of 1.1 and 1.3 and the code of
    1.2's stub; `./workbook update` merges it: the instructions arrive above the fence of 1.1 and 1.3
    with the student's code below byte for byte, 1.2 is the student's byte for byte with the
    instructor's change beside it, every other file is the instructor's, and `./workbook check 1`
    runs the fixed check and names the change to make by hand. The second changes 1.1's code and the
    student takes it with a plain `git pull --no-rebase`, which stops on a conflict: check explains
    the markers and names update, which finishes the merge with 1.1 byte for byte."""
    folder = clone / "exercises" / CHAPTER
    ex1, ex2, ex3 = (folder / name for name in ("ex1_fit_scaling.cpp", "ex2_apply_scaling.cpp",
                                                "ex3_scale_train_test.cpp"))
    theirs = instructor / "exercises" / CHAPTER
    fixed = first_erratum(instructor)
    commit(instructor, "a sentence, a check, two exercises' instructions and a stub's signature fixed")
    second, seconds = release(instructor, edition, "-m", "Errata: chapter 1's page, a check of 1.2, 1.1 to 1.3's stubs")
    print(f"--- the erratum's release took {seconds:.0f} s; its output:\n{second.stdout}{second.stderr}---")
    changed = subprocess.run(["git", "show", "--name-only", "--format=", "HEAD"], cwd=edition,
                             capture_output=True, text=True).stdout.split()
    log = subprocess.run(["git", "log", "--format=%s"], cwd=edition, capture_output=True, text=True).stdout
    expect(second.returncode == 0 and len(log.splitlines()) == 2 and log.startswith("Errata: chapter 1"),
           f"the erratum is one more commit with the instructor's message: {log!r}")
    shipped = [f"docs/prebuilt/{CHAPTER}/stubs/{Path(name).name}" for name in fixed if name.startswith("exercises/")]
    # The README shows what ./workbook check 1 prints on a fresh copy, which lists each failed check
    # by name: the renamed check of 1.2 changes it, and nothing else of the erratum may.
    readme = ["README.md"] if CHECK_MARK in (edition / "README.md").read_text() else []
    expect(sorted(changed) == sorted(fixed + shipped + readme),
           f"the erratum holds exactly what changed (the book's copy of the stubs, and the README's "
           f"check 1 where it names the renamed check): {changed}")
    expect("./workbook update" in second.stdout, "release tells the instructor to tell students ./workbook update")
    publish_erratum(second.stdout, course, edition)

    before = {path: path.read_bytes() for path in (ex1, ex2, ex3)}
    new = {path: (edition / "exercises" / CHAPTER / path.name).read_text() for path in (ex1, ex2, ex3)}
    updated = student.in_terminal(f"{clone / 'workbook'} update", clone)  # as the README says, in a terminal
    said = (updated.stdout + updated.stderr).replace("\r\n", "\n")
    print(f"--- ./workbook update (1.1 committed, 1.2 and 1.3 not; the fix changes 1.2's code):\n{said}---")
    expect(updated.returncode == 1 and "Traceback" not in said and "Work in progress" in said,
           f"update saves the uncommitted work, merges, and ends with status 1: a change is left to make by hand "
           f"(status {updated.returncode})")
    for path, what in ((ex1, "committed"), (ex3, "not committed")):
        now = path.read_text()
        expect(below_fence(now) == below_fence(mine[path]) and above_fence(now) == above_fence(new[path]),
               f"{path.name} ({what}): the fixed instructions above the fence, the student's code below it, byte "
               f"for byte")
    expect(ex2.read_bytes() == before[ex2], f"{ex2.name}, the file being edited, whose code the fix changed: the "
                                            f"student's, byte for byte")
    diff = folder / f"{ex2.name}{PATCH_SUFFIX}"
    patch = diff.read_text() if diff.exists() else ""
    print(f"--- {diff.relative_to(clone)}:\n{patch}---")
    expect(f"+Matrix apply_scaling([[maybe_unused]] const Matrix& x, [[maybe_unused]] {RENAMED[1]} {{"
           in patch and str(diff.relative_to(clone)) in said, "the instructor's change to 1.2 is beside it, named")
    others = differing(clone, student, {f"exercises/{CHAPTER}/{p.name}" for p in (ex1, ex2, ex3)})
    expect(not others and SENTENCE_MARK in (clone / "chapters" / CHAPTER / "lesson.md").read_text(),
           f"every other file is the instructor's new version: {others}")
    status = student.run(["git", "status", "--porcelain"], clone).stdout
    expect(status == f"?? exercises/{CHAPTER}/{diff.name}\n", f"nothing but the patch is left uncommitted: {status!r}")
    check = student.run([str(clone / "workbook"), "check", "1"], clone)
    print(f"--- ./workbook check 1 after the update:\n{check.stdout}{check.stderr}---")
    registered = (clone / "build" / "student" / "checks.tsv").read_text()
    expect(all(f"✓ 1.{k}" in check.stdout for k in (1, 2, 3)) and f"1.2 {CHECK_MARK} " in registered
           and "To make by hand" in check.stdout and diff.name in check.stdout,
           "./workbook check 1 runs the fixed check (registered by its new name), 1.1 to 1.3 pass, and it names "
           "the change to make by hand")

    # The student reads the patch (a parameter's name: nothing to change in their code), deletes it
    # and commits as the README says; the second fix changes 1.1's code.
    student.run(["rm", str(diff)], clone)
    student.run(["git", "add", "exercises"], clone)
    student.run(["git", "commit", "-q", "-m", "exercises 1.2 and 1.3"], clone)
    committed = ex1.read_bytes()
    stub1 = theirs / "ex1_fit_scaling.cpp"
    stub1.write_text(stub1.read_text().replace("const Matrix& train)", "const Matrix& rows)"))
    commit(instructor, "1.1's parameter renamed")
    third, _ = release(instructor, edition, "-m", "Errata: 1.1's stub")
    expect(third.returncode == 0, f"the second erratum is released {third.stderr[-300:]}")
    publish_erratum(third.stdout, course, edition)
    pulled = student.run(["git", "pull", "--no-rebase"], clone)  # out of habit, not as the README says
    expect(pulled.returncode != 0 and "CONFLICT" in pulled.stdout and student.merging(clone),
           f"a plain git pull stops on a conflict in 1.1 {pulled.stdout[-300:]}")
    check = student.run([str(clone / "workbook"), "check", "1"], clone)
    print(f"--- ./workbook check 1 after a git pull that stopped on a conflict:\n{check.stdout}{check.stderr}---")
    expect(re.search(r"✗ 1\.1 .*conflict markers \(lines \d+-\d+\).*run \./workbook update", check.stdout)
           is not None and "conflict marker in file" not in check.stdout,
           "./workbook check 1 explains the markers in 1.1 and names the next step")
    updated = student.run([str(clone / "workbook"), "update"], clone)
    said = updated.stdout + updated.stderr
    print(f"--- ./workbook update after that git pull:\n{said}---")
    expect(ex1.read_bytes() == committed and not student.merging(clone)
           and (folder / f"{ex1.name}{PATCH_SUFFIX}").exists() and (folder / f"{ex1.name}.conflict").exists(),
           "update finishes the merge with 1.1 as the student had it, byte for byte, the instructor's change "
           "and the file as git pull left it beside it")
    others = differing(clone, student, {f"exercises/{CHAPTER}/{p.name}" for p in (ex1, ex2, ex3)})
    expect(not others, f"every other file is the instructor's new version: {others}")
    check = student.run([str(clone / "workbook"), "check", "1"], clone)
    expect("✓ 1.1" in check.stdout, f"1.1 passes again: {check.stdout[-400:]}")


def no_hidden_check(instructor: Path, edition: Path, clone: Path, student: Student) -> None:
    """The edition holds no hidden check, by name or by code: not its tree, not the prebuilt docs, not
    what a student's build makes of it (objects, check binaries, the book); its manifests count them
    and ./workbook check says how many run at grading."""
    chapters = [c for c in all_chapters(instructor) if c.hidden_checks]
    names = [n for c in chapters for n in check_names(instructor / "chapters" / c.folder / c.hidden_checks)]
    shipped = "\n".join(p.read_text(errors="replace") for p in instructor.rglob("*")
                        if p.is_file() and p.suffix in (".cpp", ".hpp", ".md", ".json", ".py", ".txt")
                        and not any(part in ("bugzoo", "build", ".git", "tests") for part in p.relative_to(instructor).parts)
                        and not p.name.startswith("hidden_checks"))
    code = sorted({line.strip() for c in chapters
                   for line in (instructor / "chapters" / c.folder / c.hidden_checks).read_text().splitlines()
                   if len(line.strip()) >= 30 and line.strip() not in shipped})
    expect(chapters and names and len(code) >= 10,
           f"the instructor's tree has hidden checks to look for: {len(names)} names, {len(code)} lines of their own code")
    patterns = clone.parent / "hidden-patterns.txt"
    patterns.write_text("\n".join([*names, *code]) + "\n")
    found_in_instructor = subprocess.run(["grep", "-rlaF", "-f", str(patterns), str(instructor / "chapters")],
                                         capture_output=True, text=True).stdout.split()
    expect(any(Path(f).name.startswith("hidden_checks") for f in found_in_instructor),
           "the search finds the hidden checks where they are (the instructor's tree)")
    leaked = subprocess.run(["grep", "-rlaF", "-f", str(patterns), str(edition), str(clone)],
                            capture_output=True, text=True).stdout.split()
    built = sum(1 for p in (clone / "build").rglob("*") if p.is_file())
    expect(not leaked and built > 100,
           f"the edition, its prebuilt docs and the student's build ({built} files: objects, binaries, the book) "
           f"hold no hidden check's name or code: {leaked[:5]}")
    for chapter in chapters:
        manifest = json.loads((edition / "chapters" / chapter.folder / "chapter.json").read_text())
        expect("hidden_checks" not in manifest and manifest.get("hidden_count") == chapter.hidden_count,
               f"{chapter.folder}'s manifest in the edition counts its hidden checks ({manifest.get('hidden_count')}) "
               "and names no file")
        check = student.run([str(clone / "workbook"), "check", str(chapter.number)], clone)
        expect(f"{chapter.hidden_count} further check" in check.stdout and re.search(r"\bruns? only when your work is graded", check.stdout),
               f"./workbook check {chapter.number} in the edition says how many further checks run at grading: "
               f"{check.stdout[-400:]}")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="scalebook-release-") as temp:
        base = Path(temp)
        os.chmod(base, 0o755)  # the student reaches the edition and their home through it
        instructor = instructor_copy(base)
        edition = base / "edition"

        junk = base / "not-an-edition"
        junk.mkdir()
        (junk / "notes.txt").write_text("mine\n")
        refused, _ = release(instructor, junk)
        expect(refused.returncode == 2 and "neither empty nor a student edition" in refused.stderr
               and sorted(p.name for p in junk.iterdir()) == ["notes.txt"],
               f"release refuses a folder that is neither empty nor an edition, changing nothing: {refused.stderr[-300:]}")

        first, seconds = release(instructor, edition)
        print(f"--- release took {seconds:.0f} s; its output:\n{first.stdout}{first.stderr}---", flush=True)
        expect(first.returncode == 0, "release writes the edition")
        expect(all(f"[{n}/5]" in first.stdout for n in range(1, 6)) and str(edition) in first.stdout
               and re.search(r"commit [0-9a-f]{7,}", first.stdout) is not None and "push" in first.stdout,
               "release shows its stages and ends with the path, the commit and how to publish")

        readme = (edition / "README.md").read_text()
        print(f"the edition's README: {len(readme.encode())} bytes, {len(readme.splitlines())} lines")
        for word in ("solutions", "bug zoo", "bugzoo", "./workbook test", "./workbook grade", "sandbox",
                     "mutant", "maintainer"):
            expect(word not in readme, f"the edition's README does not mention {word!r}")
        expect(re.search(r"@[A-Z_]+@", readme) is None, "release filled in every part of the README")
        expect("✗ 1.1" in readme and "not implemented" in readme, "the README shows a real failing check")
        expect("./workbook update" in readme and FENCE in readme and PATCH_SUFFIX in readme
               and "safe.directory" in readme and "CONFLICT" in readme,
               "the README explains fixes by ./workbook update, the fence, a change to make by hand, a git pull's "
               "conflict and safe.directory")
        expect("measured at release" in readme and "ch07_bench" not in readme.split("## Benchmarks")[0],
               "the README shows the benchmarks' figures, labelled as measured at release")
        expect(not (edition / "solutions").exists() and not any(edition.glob("chapters/*/bugzoo"))
               and not (edition / "tools" / "maintainer").exists() and not (edition / "tools" / "tests").exists()
               and not (edition / "cmake" / "apply_mutant.py").exists(),
               "the edition has no solutions, bug zoo, maintainers' tests or timing scripts")
        expect(not any("\\if instructor" in p.read_text() for p in edition.glob("chapters/*/lesson.md")),
               "the edition's pages have no instructor sections")
        named = missing_named(edition)
        expect(not named, "no file of the edition (pages, headers, stubs, the book's sources, build files; tools/ "
                          "is the command that refuses) names solutions/, the reference's build or presets, or a "
                          "command the edition refuses" + "".join(f"\n    {line}" for line in named[:20]))
        presets = json.loads((edition / "CMakePresets.json").read_text())
        expect([p["name"] for p in presets["configurePresets"] if not p.get("hidden")] == ["student"],
               "the edition's CMakePresets.json configures only the student track")
        course = course_repository(base, edition, first.stdout)

        student = Student(base / "home", cache_of_this_tree())
        clone = student.home / "scalebook"
        trusted = student.run(["git", "config", "--global", "--add", "safe.directory", str(edition / ".git")],
                              student.home)
        cloned = student.run(["git", "clone", "-q", str(edition), str(clone)], student.home)
        expect(trusted.returncode == 0 and cloned.returncode == 0,
               f"the student clones the edition as the README says {cloned.stderr[-300:]}")
        if not clone.exists():
            print(f"{len(failures)} failed: nothing more to try without a clone")
            return 1
        for setting in (["user.name", "student"], ["user.email", "student@localhost"]):
            student.run(["git", "config", "--global", *setting], student.home)
        configured = student.run(["cmake", "--preset", "student", f"-DSCALEBOOK_CCACHE_DIR={student.cache}"], clone)
        expect(configured.returncode == 0, f"the student's build configures {configured.stderr[-300:]}")
        helped = student.run([str(clone / "workbook"), "bench", "7", "--help"], clone)
        expect(helped.returncode == 0 and "--repetitions N" in helped.stdout and "Measured at release" not in
               helped.stdout and "Building" not in helped.stdout
               and not (clone / "build" / "student" / "chapters" / "07-under-the-hood" / "ch07_bench").exists(),
               f"./workbook bench 7 --help shows its options, without the release figures or a build: "
               f"{helped.stdout[-300:]}{helped.stderr[-300:]}")

        commands = shown_commands(clone)
        print(f"the `./workbook` commands the README and the pages show ({len(commands)}):")
        for command in commands:
            print(f"  {command}")
        commands.sort(key=lambda c: c != "./workbook")  # the set-up first
        for command in commands:
            started = time.monotonic()
            ok, said = runs_as_promised(student, clone, command)
            expect(ok, f"`{command}` runs in the edition, as a non-root student ({time.monotonic() - started:.0f} s)"
                       + ("" if ok else f": {said}"))
        bench = student.run([str(clone / "workbook"), "bench", "7"], clone)
        said = bench.stdout + bench.stderr
        expect("Measured at release" in bench.stdout and bench.returncode == 3 and "Finish exercise 7.6 first" in said
               and "Traceback" not in said,
               f"./workbook bench 7 on the stubs shows the release figures, then names the exercise to finish "
               f"first (status {bench.returncode}): {said[-400:]}")
        bench = student.run([str(clone / "workbook"), "bench", "2", "--no-torch"], clone)
        said = bench.stdout + bench.stderr
        expect(bench.returncode == 3 and "Finish exercise 2.1 first" in said and "Traceback" not in said,
               f"./workbook bench 2 on the stubs names the exercise to finish first (status {bench.returncode}): "
               f"{said[-400:]}")
        benches_time_the_students_code(student, clone, instructor)
        presets_work_as_an_editor_uses_them(student, clone)

        # The book shows the stubs as shipped, whatever the student's exercises/ hold. The student
        # solves 1.1 as the README says: code below the fence, the instructions left as they are.
        folder = clone / "exercises" / CHAPTER
        ex1, ex2, ex3 = (folder / name for name in ("ex1_fit_scaling.cpp", "ex2_apply_scaling.cpp",
                                                    "ex3_scale_train_test.cpp"))
        mine = {path: solved(path.read_text(), CHAPTER, path.name) for path in (ex1, ex2, ex3)}
        ex1.write_text(mine[ex1])
        student.own(ex1)
        os.utime(clone / "chapters" / CHAPTER / "lesson.md")
        rebuilt = student.run([str(clone / "workbook")], clone)
        page = clone / "build" / "student" / "docs" / "html" / "ch01.html"
        stub = shown_file(page, f"exercises/{CHAPTER}/ex1_fit_scaling.cpp")
        expect(rebuilt.returncode == 0 and 'not_implemented("1.1"' in stub and INSTRUCTIONS in stub
               and FENCE in stub and "population" in stub,
               f"the edition's book shows 1.1's stub as shipped, its instructions and the fence, not the student's "
               f"code {rebuilt.stderr[-300:]}")
        no_hidden_check(instructor, edition, clone, student)
        # The edition's book in a browser, as its readers get it (every book page at a phone's
        # width: it says nothing of solutions and shows none), when this machine has the browser.
        browser_check = ROOT / "docs" / "tests" / "check_docs_in_browser.py"
        if all(Path(p).exists() for p in ("/usr/bin/chromium", "/usr/bin/chromedriver")):
            browser = subprocess.run(["/usr/bin/python3", str(browser_check), str(page.parent), "--edition",
                                      "student", "--book-pages-only", "--widths", "phone",
                                      "--screenshots", str(base / "screenshots")], capture_output=True, text=True)
            expect(browser.returncode == 0, f"the edition's book passes the browser check: "
                                            f"{browser.stdout[-800:]}{browser.stderr[-800:]}")
            # And WCAG 2.1 AA on every page of it (axe-core light and dark, keyboard, figures, math).
            accessible = subprocess.run(["/usr/bin/python3", str(ROOT / "docs" / "tests" / "check_accessibility.py"),
                                         str(page.parent), "--edition", "student"], capture_output=True, text=True)
            print("".join(accessible.stdout.splitlines(keepends=True)[-1:]), end="")
            expect(accessible.returncode == 0, f"the edition's book meets WCAG 2.1 AA: "
                                               f"{accessible.stdout[-800:]}{accessible.stderr[-1500:]}")
        else:
            print("note: no chromium/chromedriver here; the edition's book was not opened in a browser")
        check = student.run([str(clone / "workbook"), "check", "1"], clone)
        expect("✓ 1.1" in check.stdout, f"in the edition, a solved 1.1 passes its checks {check.stdout[-600:]}")
        committed = student.run(["git", "commit", "-q", "-am", "exercise 1.1"], clone)
        expect(committed.returncode == 0, f"the student commits their work {committed.stderr[-300:]}")
        # Then solves 1.3 and 1.2 without committing: 1.2 is the file still being edited.
        for path in (ex3, ex2):
            path.write_text(mine[path])
            student.own(path)

        errata_by_update(student, clone, instructor, edition, mine, course)

        refused = student.run([str(clone / "workbook"), "run", "3", "--reference"], clone)
        expect(refused.returncode == 2 and "not part of the student edition" in refused.stderr,
               "run --reference says the reference is not part of the edition")

        # This tree grades a submission made from the edition: exactly 1.1's points.
        submission = base / "alice"
        shutil.copytree(clone, submission, ignore=shutil.ignore_patterns("build", ".git"))
        grades = base / "grades"
        graded = subprocess.run([str(ROOT / "workbook"), "grade", "--out", str(grades), "--chapters", "1",
                                 str(submission)], capture_output=True, text=True)
        print(graded.stdout[-500:])
        report = json.loads((grades / "students" / "alice" / "report.json").read_text())
        solved_points = sum(t["max_points"] for t in report["tests"] if t["exercise"] in ("1.1", "1.2", "1.3"))
        expect(report["score"] == solved_points and solved_points > 0,
               f"this tree grades the edition's submission: {report['score']} = 1.1 to 1.3's {solved_points} points")
    return finish("every release expectation holds")


if __name__ == "__main__":
    sys.exit(main())
