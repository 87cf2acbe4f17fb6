#!/usr/bin/env python3
"""The student edition end to end: `./workbook release` writes it; a clean clone of it has no
solutions, no bug zoo and no instructor sections; `./workbook` starts there (book included) and
`run --reference` says the reference is not part of it; its book shows the exercise stubs as
shipped, not the student's edits; a submission made from it, with 3.1 solved, is graded by this
tree with exactly 3.1's points."""
from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
failures: list[str] = []


def expect(condition: bool, what: str) -> None:
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        failures.append(what)


def shown_file(page: Path, name: str) -> str:
    """The code the book page shows under the caption NAME (docs/prepare_page.cmake), as text."""
    def text(markup: str) -> str:
        return html.unescape(re.sub(r"<[^>]+>", "", markup))
    blocks = re.findall(r'<div class="scalebook-file-name">(.*?)</div>(.*?)<!-- fragment -->', page.read_text(), re.S)
    return next((text(code) for caption, code in blocks if text(caption) == name), "")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="scalebook-release-") as temp:
        base = Path(temp)
        edition, clone = base / "edition", base / "student"
        result = subprocess.run([str(ROOT / "workbook"), "release", str(edition)], capture_output=True, text=True)
        expect(result.returncode == 0, f"release writes the edition ({result.stdout[-300:]}{result.stderr[-300:]})")
        subprocess.run(["git", "clone", "-q", str(edition), str(clone)], check=True)
        expect(not (clone / "solutions").exists(), "the edition has no solutions/")
        expect(not any(clone.glob("chapters/*/bugzoo")), "the edition has no bug zoo")
        expect(not any("\\if instructor" in p.read_text() for p in clone.glob("chapters/*/lesson.md")),
               "the edition's pages have no instructor sections")
        log = subprocess.run(["git", "log", "--oneline"], cwd=clone, capture_output=True, text=True).stdout
        expect(len(log.splitlines()) == 1, "the edition has its own history (one commit)")

        env = dict(os.environ, NO_COLOR="1")
        subprocess.run(["cmake", "--preset", "student", f"-DSCALEBOOK_CCACHE_DIR={ROOT / 'build' / 'ccache'}"],
                       cwd=clone, check=True, stdout=subprocess.DEVNULL)
        start = subprocess.run([str(clone / "workbook")], cwd=clone, capture_output=True, text=True, env=env)
        expect(start.returncode == 0 and "chapter 3  0/5" in start.stdout and
               (clone / "build" / "student" / "docs" / "html" / "index.html").exists(),
               "./workbook starts in the edition: progress and the book")
        reference = subprocess.run([str(clone / "workbook"), "run", "3", "--reference"], cwd=clone,
                                   capture_output=True, text=True, env=env)
        expect(reference.returncode == 2 and "not part of the student edition" in reference.stderr,
               "run --reference says the reference is not part of the edition")

        shutil.copy2(ROOT / "solutions" / "03-attention-scaling" / "ex1_dot_scores.cpp",
                     clone / "exercises" / "03-attention-scaling" / "ex1_dot_scores.cpp")
        check = subprocess.run([str(clone / "workbook"), "check", "3"], cwd=clone, capture_output=True,
                               text=True, env=env)
        expect("✓ 3.1" in check.stdout, f"in the edition, a solved 3.1 passes its checks {check.stdout[-600:]}{check.stderr[-600:]}")

        # The book shows the stubs as shipped: with 3.1 solved and marked, the book is built again
        # (its chapter 3 page touched, so Doxygen does run) and still shows 3.1's stub.
        solved = clone / "exercises" / "03-attention-scaling" / "ex1_dot_scores.cpp"
        marker = "the student's own line, which the book does not show"
        solved.write_text(solved.read_text().replace("namespace scalebook::ch03 {\n",
                                                     f"namespace scalebook::ch03 {{\n// {marker}\n", 1))
        os.utime(clone / "chapters" / "03-attention-scaling" / "lesson.md")
        rebuilt = subprocess.run([str(clone / "workbook")], cwd=clone, capture_output=True, text=True, env=env)
        page = clone / "build" / "student" / "docs" / "html" / "ch03.html"
        stub = shown_file(page, "exercises/03-attention-scaling/ex1_dot_scores.cpp")
        expect(rebuilt.returncode == 0 and page.stat().st_mtime > solved.stat().st_mtime,
               f"./workbook builds the book again after an edit {rebuilt.stdout[-300:]}{rebuilt.stderr[-300:]}")
        expect('not_implemented("3.1", "dot_scores")' in stub and marker not in stub
               and "require_queries_keys" not in stub,
               f"the edition's book shows 3.1's stub as shipped, not the student's code: {stub!r}")
        # The edition's book in a browser, as its readers get it (every book page at a phone's
        # width: it says nothing of solutions and shows none), when this machine has the browser.
        check = ROOT / "docs" / "tests" / "check_docs_in_browser.py"
        if all(Path(p).exists() for p in ("/usr/bin/chromium", "/usr/bin/chromedriver")):
            browser = subprocess.run(["/usr/bin/python3", str(check), str(page.parent), "--edition", "student",
                                      "--book-pages-only", "--widths", "phone",
                                      "--screenshots", str(base / "screenshots")],
                                     capture_output=True, text=True)
            expect(browser.returncode == 0, f"the edition's book passes the browser check: "
                                            f"{browser.stdout[-800:]}{browser.stderr[-800:]}")
        else:
            print("note: no chromium/chromedriver here; the edition's book was not opened in a browser")
        submission = base / "alice"
        shutil.copytree(clone, submission, ignore=shutil.ignore_patterns("build", ".git"))
        grades = base / "grades"
        graded = subprocess.run([str(ROOT / "workbook"), "grade", "--out", str(grades), "--chapters", "3",
                                 str(submission)], capture_output=True, text=True)
        print(graded.stdout[-500:])
        report = json.loads((grades / "alice" / "report.json").read_text())
        points_31 = sum(t["max_points"] for t in report["tests"] if t["exercise"] == "3.1")
        expect(report["score"] == points_31 and points_31 > 0,
               f"this tree grades the edition's submission: {report['score']} = 3.1's {points_31} points")
    print(f"{len(failures)} failed" if failures else "every release expectation holds")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
