"""The one parser of the manifests (scalebook/course.py) and what the build reads of it.

- The real course passes ./workbook lint (its manifests against its files, every rule; the course
  is held to its rules by lint, and to its numbers by its own checks, not by counts here).
- read_manifest, on the fixture course: defaults (figures, bench, points, tolerance, lib) for a
  manifest that leaves them out; ids out of order, a missing field, a field of the wrong type and a
  folder numbered unlike its manifest refused with the file and the field named.
- The build reads the manifests through the digest course.py writes (cmake_digest): included by
  CMake (`cmake -P`), every field of every chapter is the value Python read, a summary with ; " [ ]
  $ and \\ included. A digest that quoted naively fails this (tried: f'"{text}"' breaks on the
  quote, and a list joined with ; from an unquoted value splits the summary).
- The term file: chapters by number or folder, in its order, with its points; all_chapters takes
  its points, term_chapters its selection; a chapter it does not know refused. The shipped graders
  follow it as grade does: `./workbook gradescope-autograder` and `prairielearn-grader` without
  --chapters grade the term's chapters and ship the term file (its points); --chapters still
  chooses (in a fixture tree: a git checkout of the fixture course, seconds).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from scalebook.course import (ManifestError, all_chapters, cmake_digest, course_chapters, read_manifest,
                              term_chapters)
from scalebook.lint import lint
from tests.harness import COURSE_FOLDERS, FIXTURE_COURSE, ROOT, expect, finish, fixture_tree

SUMS, GAP = "01-fixture-sums", "03-fixture-gap"
TRICKY = 'a summary; with "quotes", [brackets], ${not_a_variable} and a back\\slash'


def refused(folder: Path, change) -> str:
    data = json.loads((folder / "chapter.json").read_text())
    change(data)
    (folder / "chapter.json").write_text(json.dumps(data))
    try:
        read_manifest(folder)
        return ""
    except ManifestError as error:
        return str(error)


def cmake_values(digest: str, work: Path, chapters) -> dict[str, str]:
    """Every field of the digest as CMake reads it, one `KEY=VALUE` line each (cmake -P)."""
    (work / "course.cmake").write_text(digest)
    keys = [f"SCALEBOOK_CHAPTER_{c.folder}_{field}" for c in chapters
            for field in ("NUMBER", "SUMMARY", "CONTRACT", "CHECKS", "LESSON", "BENCH", "HIDDEN_CHECKS", "SOURCES",
                          "FIGURES", "LIB", "POINTS")]
    script = ['include("${CMAKE_CURRENT_LIST_DIR}/course.cmake")',
              'message(STATUS "SCALEBOOK_COURSE_CHAPTERS=${SCALEBOOK_COURSE_CHAPTERS}")']
    script += [f'message(STATUS "{key}=${{{key}}}")' for key in keys]
    (work / "read.cmake").write_text("\n".join(script) + "\n")
    ran = subprocess.run(["cmake", "-P", str(work / "read.cmake")], capture_output=True, text=True)
    values = {}
    for line in ran.stdout.splitlines():
        key, _, value = line.removeprefix("-- ").partition("=")
        values[key] = value
    return values


def main() -> int:
    problems, read = lint(ROOT)
    expect(not problems, f"the real course passes lint ({read['chapters']} chapters, {read['files']} files)"
           + (f": {[str(p) for p in problems[:5]]}" if problems else ""))
    with tempfile.TemporaryDirectory(prefix="scalebook-manifest-") as temp:
        root = Path(temp) / "course"
        for folder in COURSE_FOLDERS:
            shutil.copytree(FIXTURE_COURSE / folder, root / folder)
        gap = read_manifest(root / "chapters" / GAP)
        expect(gap.figures == () and gap.bench is False and gap.points == (1,) and gap.tolerance == 0.0
               and gap.lib == () and gap.hidden_checks == "" and gap.checks == "checks.cpp",
               f"a manifest that leaves fields out gets the defaults: {gap}")
        sums = read_manifest(root / "chapters" / SUMS)
        expect(sums.points == (1, 2) and sums.hidden_count == 1 and sums.exercises == ["1.1", "1.2"],
               f"points per exercise and the hidden checks counted from their file: {sums.points}, {sums.hidden_count}")
        scratch = Path(temp) / "scratch"
        for name, change, words in (
                ("ids out of order", lambda d: d["exercises"].reverse(), ["exercise 1's id is '1.2'", "01-fixture-sums"]),
                ("no contract", lambda d: d.pop("contract"), ['"contract" is missing']),
                ("points as text", lambda d: d["exercises"][0].update(points="2"), ['"points" must be a whole number']),
                ("a folder numbered 01 for chapter 2", lambda d: d.update(number=2), ["NN its number 02"]),
                ("a source with a folder", lambda d: d["exercises"][0].update(source="../ex1_total.cpp"),
                 ["not a file name"])):
            shutil.rmtree(scratch, ignore_errors=True)
            shutil.copytree(root / "chapters" / SUMS, scratch / SUMS)
            said = refused(scratch / SUMS, change)
            expect(all(w in said for w in words), f"{name}: refused, saying {said!r}")

        # The digest, as CMake reads it, is what Python read.
        manifest = root / "chapters" / SUMS / "chapter.json"
        data = json.loads(manifest.read_text())
        data["summary"] = TRICKY
        manifest.write_text(json.dumps(data, indent=2))
        chapters = all_chapters(root)
        values = cmake_values(cmake_digest(chapters), Path(temp), chapters)
        expect(values.get("SCALEBOOK_COURSE_CHAPTERS") == f"{SUMS};{GAP}", f"CMake lists the chapters in number order: "
                                                                           f"{values.get('SCALEBOOK_COURSE_CHAPTERS')}")
        for chapter in chapters:
            prefix = f"SCALEBOOK_CHAPTER_{chapter.folder}_"
            wanted = {"NUMBER": f"{chapter.number:02d}", "SUMMARY": chapter.summary, "CONTRACT": chapter.contract,
                      "CHECKS": chapter.checks, "LESSON": chapter.lesson, "BENCH": "ON" if chapter.bench else "OFF",
                      "HIDDEN_CHECKS": chapter.hidden_checks, "SOURCES": ";".join(chapter.sources),
                      "FIGURES": ";".join(chapter.figures), "LIB": ";".join(chapter.lib),
                      "POINTS": ";".join(f"{e}={p}" for e, p in zip(chapter.exercises, chapter.points))}
            differing = {k: (values.get(prefix + k), v) for k, v in wanted.items() if values.get(prefix + k) != v}
            expect(not differing, f"{chapter.folder}: CMake reads every field as Python does"
                                  + (f": {differing}" if differing else ""))

        # The term file.
        (root / "term.json").write_text(json.dumps({"name": "t", "chapters": [GAP, {"chapter": 1, "points": {"1.1": 5}}]}))
        term = term_chapters(root)
        expect([c.folder for c in term] == [GAP, SUMS] and term[1].points == (5, 2),
               f"term_chapters: the term's chapters in its order, with its points: {[(c.folder, c.points) for c in term]}")
        expect([c.points for c in all_chapters(root)] == [(5, 2), (1,)] and
               [c.points for c in course_chapters(root)] == [(1, 2), (1,)],
               "all_chapters takes the term's points (what the build's digest says); course_chapters the manifests'")
        (root / "term.json").write_text(json.dumps({"chapters": [2]}))
        try:
            term_chapters(root)
            said = ""
        except ManifestError as error:
            said = str(error)
        expect("term.json" in said and "no chapter 2" in said, f"a term naming a chapter the course lacks is refused: {said!r}")
        shipped_graders_follow_the_term(Path(temp) / "graders" / "tree")
    return finish("one parser: the manifests and the term as Python and CMake read them")


def shipped_graders_follow_the_term(tree: Path) -> None:
    """The Gradescope zip's and the PrairieLearn context's autograder.json, and their term.json."""
    fixture_tree(tree)
    (tree / "term.json").write_text(json.dumps({"chapters": [{"chapter": 3, "points": {"3.1": 4}}]}) + "\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@localhost"]
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "the fixture course"]):
        subprocess.run([*git, *command], cwd=tree, check=True, capture_output=True)

    def shipped(command: str, *options: str) -> tuple[list[str], bool, str]:
        out = tree.parent / f"{command}-{len(options)}"
        target = out.with_suffix(".zip") if command == "gradescope-autograder" else out
        done = subprocess.run([sys.executable, str(tree / "tools" / "workbook.py"), command, str(target), *options],
                              cwd=tree, capture_output=True, text=True, env=dict(os.environ, NO_COLOR="1"))
        if command == "gradescope-autograder" and target.is_file():
            with zipfile.ZipFile(target) as archive:
                config, term = json.loads(archive.read("autograder.json")), "term.json" in archive.namelist()
        elif (target / "source" / "autograder.json").is_file():
            config, term = json.loads((target / "source" / "autograder.json").read_text()), (target / "source" / "term.json").is_file()
        else:
            config, term = {}, False
        return config.get("chapters", []), term, (done.stdout + done.stderr).strip()[-300:]

    for command in ("gradescope-autograder", "prairielearn-grader"):
        chapters, term, said = shipped(command)
        expect(chapters == [GAP] and term, f"{command} grades the term's chapters and ships its points: {chapters}, "
                                           f"term.json {'shipped' if term else 'not shipped'} {said if not chapters else ''}")
        chapters, _, said = shipped(command, "--chapters", "1")
        expect(chapters == [SUMS], f"{command} --chapters 1 grades chapter 1: {chapters} {said if not chapters else ''}")


if __name__ == "__main__":
    sys.exit(main())
