#!/usr/bin/env python3
"""The student edition end to end, as a student who is not root gets it.

From a scratch copy of this tree (the instructor's), `./workbook release` refuses a folder that is
neither empty nor an edition, then writes the edition: stages shown, its path, commit and how to
publish it at the end. The edition has no solutions, bug zoo, instructor sections, maintainers'
tests or timing scripts, and no hidden check: grep finds none of their names or lines of their
code in the edition, its prebuilt docs or anything the student's build makes of it (objects, the
check binaries, the book), while the edition's manifests count them and `./workbook check 4` says
how many further checks run at grading; its README is written for students (the set-up, the loop with a real
failing check, fixes by git pull, the layout) and shows the benchmarks' figures measured at
release. As a non-root user (uid 65534 when this runs as root), following the README: git's
safe.directory, a clone in a folder the student owns, then every `./workbook` command that the
README and the book's pages show, each of which must run (an unsolved exercise may fail it, as
the command says; a refusal or any other error fails the test). The book shows the stubs as
shipped. The student commits a solved 1.1; the instructor fixes a sentence of chapter 1's page
and a check of 1.2 and releases again with a message: one commit with exactly those two files;
the student pulls: the work is kept, the fix is there, and `./workbook check 1` runs the fixed
check. This tree grades a submission made from the edition. `./workbook bench 2` and `bench 7` name the
exercise to finish first on the stubs, and with chapters 2, 3, 4 and 7 solved time the student's
own code; CMakePresets.json's student presets configure, build and list the checks with plain
cmake and ctest, as an editor's CMake support runs them."""
from __future__ import annotations

import html
import json
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scalebook.course import all_chapters, check_names
from tests.harness import ROOT, expect, failures, finish

STUDENT = "nobody"          # when this runs as root: the student is uid 65534
SENTENCE_MARK = "(corrected in an erratum)"
CHECK_MARK = "per the erratum"


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


class Student:
    """Runs commands as the student: uid 65534 with a home of its own when this runs as root,
    otherwise as the user running the test, with a plain PATH and no colours."""

    def __init__(self, home: Path, cache: str):
        self.home = home
        home.mkdir(parents=True)
        self.root = os.geteuid() == 0
        if self.root:
            entry = pwd.getpwnam(STUDENT)
            os.chown(home, entry.pw_uid, entry.pw_gid)
        (home / "tmp").mkdir()
        self.own(home / "tmp")
        # The instructor's compiler cache, read-only: the student's build is the same code.
        self.env = {"HOME": str(home), "PATH": "/usr/local/bin:/usr/bin:/bin", "NO_COLOR": "1", "LANG": "C.UTF-8",
                    "CCACHE_READONLY": "1", "CCACHE_TEMPDIR": str(home / "tmp"), "COLUMNS": "120"}
        self.cache = cache

    def own(self, path: Path) -> None:
        if self.root:
            entry = pwd.getpwnam(STUDENT)
            for item in [path, *path.rglob("*")]:
                os.lchown(item, entry.pw_uid, entry.pw_gid)

    def run(self, command: list[str], cwd: Path, timeout: float = 1800) -> subprocess.CompletedProcess:
        prefix = ["runuser", "-u", STUDENT, "--"] if self.root else []
        return subprocess.run([*prefix, "env", "-i", *[f"{k}={v}" for k, v in self.env.items()], *command],
                              cwd=cwd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


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


def commit(tree: Path, message: str) -> None:
    if not (tree / ".git").exists():
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=tree, check=True)
    subprocess.run(["git", "add", "-A"], cwd=tree, check=True)
    subprocess.run(["git", "-c", "user.name=instructor", "-c", "user.email=instructor@localhost", "commit", "-q",
                    "-m", message], cwd=tree, check=True)


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
        expect(f"{chapter.hidden_count} further check" in check.stdout and "run only when your work is graded" in check.stdout,
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
        expect("git pull --no-rebase" in readme and "safe.directory" in readme and "conflict" in readme,
               "the README explains fixes by git pull, conflicts and safe.directory")
        expect("measured at release" in readme and "ch07_bench" not in readme.split("## Benchmarks")[0],
               "the README shows the benchmarks' figures, labelled as measured at release")
        expect(not (edition / "solutions").exists() and not any(edition.glob("chapters/*/bugzoo"))
               and not (edition / "tools" / "maintainer").exists() and not (edition / "tools" / "tests").exists()
               and not (edition / "cmake" / "apply_mutant.py").exists(),
               "the edition has no solutions, bug zoo, maintainers' tests or timing scripts")
        expect(not any("\\if instructor" in p.read_text() for p in edition.glob("chapters/*/lesson.md")),
               "the edition's pages have no instructor sections")
        pages = "\n".join(p.read_text() for p in [*edition.glob("chapters/*/lesson.md"), edition / "README.md"])
        for dead in ("build/reference", "--reference", "solutions/", "--preset reference"):
            expect(dead not in pages, f"no page of the edition names {dead!r}")

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

        # The book shows the stubs as shipped, whatever the student's exercises/ hold.
        solved = clone / "exercises" / "01-feature-scaling" / "ex1_fit_scaling.cpp"
        solution = (instructor / "solutions" / "01-feature-scaling" / "ex1_fit_scaling.cpp").read_text()
        solved.write_text(solution)
        student.own(solved)
        os.utime(clone / "chapters" / "01-feature-scaling" / "lesson.md")
        rebuilt = student.run([str(clone / "workbook")], clone)
        page = clone / "build" / "student" / "docs" / "html" / "ch01.html"
        stub = shown_file(page, "exercises/01-feature-scaling/ex1_fit_scaling.cpp")
        expect(rebuilt.returncode == 0 and 'not_implemented("1.1"' in stub,
               f"the edition's book shows 1.1's stub as shipped, not the student's code {rebuilt.stderr[-300:]}")
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
        else:
            print("note: no chromium/chromedriver here; the edition's book was not opened in a browser")
        check = student.run([str(clone / "workbook"), "check", "1"], clone)
        expect("✓ 1.1" in check.stdout, f"in the edition, a solved 1.1 passes its checks {check.stdout[-600:]}")
        committed = student.run(["git", "commit", "-q", "-am", "exercise 1.1"], clone)
        expect(committed.returncode == 0, f"the student commits their work {committed.stderr[-300:]}")

        # Errata: a sentence of chapter 1's page and a check of 1.2, fixed in the instructor's tree.
        lesson = instructor / "chapters" / "01-feature-scaling" / "lesson.md"
        text = lesson.read_text()
        paragraph = next(line for line in text.splitlines() if line.endswith(".") and len(line) > 40)
        lesson.write_text(text.replace(paragraph, f"{paragraph} {SENTENCE_MARK}", 1))
        checks = instructor / "chapters" / "01-feature-scaling" / "checks.cpp"
        checks.write_text(checks.read_text().replace('TEST_CASE("1.2 ', f'TEST_CASE("1.2 {CHECK_MARK} ', 1))
        commit(instructor, "a sentence and a check fixed")
        second, seconds = release(instructor, edition, "-m", "Errata: chapter 1's page and a check of 1.2")
        print(f"--- the erratum's release took {seconds:.0f} s; its output:\n{second.stdout}{second.stderr}---")
        changed = subprocess.run(["git", "show", "--name-only", "--format=", "HEAD"], cwd=edition,
                                 capture_output=True, text=True).stdout.split()
        log = subprocess.run(["git", "log", "--format=%s"], cwd=edition, capture_output=True, text=True).stdout
        expect(second.returncode == 0 and len(log.splitlines()) == 2 and log.startswith("Errata: chapter 1"),
               f"the erratum is one more commit with the instructor's message: {log!r}")
        expect(sorted(changed) == ["chapters/01-feature-scaling/checks.cpp", "chapters/01-feature-scaling/lesson.md"],
               f"the erratum holds exactly what changed: {changed}")
        pulled = student.run(["git", "pull", "--no-rebase"], clone)  # as the README says
        expect(pulled.returncode == 0, f"the student pulls the erratum {pulled.stdout[-300:]}{pulled.stderr[-300:]}")
        expect(solved.read_text() == solution, "the student's committed 1.1 is kept")
        expect(SENTENCE_MARK in (clone / "chapters" / "01-feature-scaling" / "lesson.md").read_text(),
               "the fixed sentence is in the student's copy")
        check = student.run([str(clone / "workbook"), "check", "1"], clone)
        expect("✓ 1.1" in check.stdout and CHECK_MARK in check.stdout,
               f"./workbook check 1 runs the fixed check: {check.stdout[-600:]}{check.stderr[-300:]}")

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
        points_11 = sum(t["max_points"] for t in report["tests"] if t["exercise"] == "1.1")
        expect(report["score"] == points_11 and points_11 > 0,
               f"this tree grades the edition's submission: {report['score']} = 1.1's {points_11} points")
    return finish("every release expectation holds")


if __name__ == "__main__":
    sys.exit(main())
