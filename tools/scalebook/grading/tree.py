"""Writes the CTest tree of a grading run and reads CTest's word on each test back.

The CTest tree of a grading run: one test per (submission, check), the compile steps as fixtures,
and CTest's word on each test read back from its JUnit file.
"""
from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from ..course import Chapter


# A grading folder DIR has two namespaces: the grader's names (DIR/grades.csv, DIR/index.html,
# DIR/ctest/kit, DIR/ctest/run.json, DIR/slurm, ...) and the students' (DIR/students/NAME for each
# student's reports, DIR/ctest/students/NAME for its CTest tree). A student's name is only ever used
# inside a "students" folder, which holds nothing else: no name a student chooses can meet a file
# the grader writes.
STUDENTS = "students"


def reports_folder(out_dir: Path, name: str) -> Path:
    """DIR/students/NAME: NAME's report.json, junit.xml and feedback.html."""
    return out_dir / STUDENTS / name


def tests_folder(tree: Path, name: str) -> Path:
    """DIR/ctest/students/NAME: NAME's CTest tree (its files, builds, runs and results)."""
    return tree / STUDENTS / name


def bracket(text: str) -> str:
    """A CMake bracket argument: no escapes needed (names never hold "]==]")."""
    return f"[==[{text}]==]"


def write_submission_tests(tree: Path, name: str, kit: dict, chapters: list[Chapter], into: Path | None = None) -> None:
    """TREE/students/NAME/CTestTestfile.cmake (or INTO/CTestTestfile.cmake: a tree's file written for the place
    it will have, grading/regrade.py), naming every path by TREE."""
    # The compile step runs from the kit's copy of this package: -m from the kit's tools/ (its working
    # directory), and -E -s -S so that no environment variable or site folder adds to what it imports.
    step = [sys.executable, "-E", "-s", "-S", "-m", "scalebook.grading.step"]
    step_dir = str(tree / "kit" / "tools")
    check_step = str(tree / "kit" / "bin" / "grade_check")
    folder = tests_folder(tree, name)
    lines = [f"# The grading of {name}: written by ./workbook grade; run with ctest.\n"]

    def test(test_name: str, argv: list[str], properties: dict[str, str]) -> None:
        lines.append(f"add_test({bracket(test_name)} {' '.join(bracket(a) for a in argv)})\n")
        props = " ".join(f"{key} {bracket(value)}" for key, value in properties.items())
        lines.append(f"set_tests_properties({bracket(test_name)} PROPERTIES {props})\n")

    test(f"{name}/start", [check_step, "start", str(folder)], {"FIXTURES_SETUP": name, "LABELS": name})
    for chapter in chapters:
        fixture = f"{name}/{chapter.folder}"
        test(f"{name}/{chapter.folder}/build", [*step, "build", str(folder), chapter.folder],
             {"FIXTURES_SETUP": fixture, "FIXTURES_REQUIRED": name, "LABELS": f"{name};{chapter.target}",
              "WORKING_DIRECTORY": step_dir})
        checks = {key: check for key, check in kit["checks"].items() if check["chapter"] == chapter.folder}
        if checks:
            # The chapter's checks in one trusted process, under ./workbook grade only (SCALEBOOK_BATCH):
            # a check takes its verdict from it, or runs alone where it has none, or under ctest -R.
            binary = str(tree / "kit" / "checks" / next(iter(checks.values()))["binary"])
            test(f"{name}/{chapter.folder}/batch", [check_step, "batch", str(folder), chapter.folder, binary],
                 {"FIXTURES_SETUP": f"{fixture}/batch", "FIXTURES_REQUIRED": f"{name};{fixture}",
                  "LABELS": f"{name};{chapter.target}"})
        for key, check in checks.items():
            binary = str(tree / "kit" / "checks" / check["binary"])
            test(f"{name}/{chapter.folder}/{check['name']}",
                 [check_step, "check", str(folder), chapter.folder, key, check["name"], check["exercise"], binary],
                 {"FIXTURES_REQUIRED": f"{name};{fixture};{fixture}/batch",
                  "LABELS": f"{name};{chapter.target};ex{check['exercise']}"})
    (into or folder).joinpath("CTestTestfile.cmake").write_text("".join(lines))


def write_tree(out_dir: Path, names: list[str]) -> None:
    (out_dir / "CTestTestfile.cmake").write_text(
        "# A class's grading as a CTest tree (./workbook grade): ctest --test-dir THIS -R 'alice/.*4\\.2'\n"
        'subdirs("ctest")\n')
    (out_dir / "ctest" / "CTestTestfile.cmake").write_text(
        "".join(f"subdirs({bracket(STUDENTS + '/' + n)})\n" for n in sorted(names)))


def ctest_outcomes(junit: Path) -> dict[str, str]:
    """Test name -> CTest's word for it: passed, failed, timeout, notrun."""
    outcomes = {}
    try:
        root = ET.parse(junit).getroot()
    except (OSError, ET.ParseError):
        return outcomes
    for case in root.iter("testcase"):
        status = case.get("status", "")
        failure = case.find("failure")
        if status == "run" and failure is None:
            outcomes[case.get("name", "")] = "passed"
        elif status in ("notrun", "disabled"):
            outcomes[case.get("name", "")] = "notrun"
        elif failure is not None and "Timeout" in (failure.get("message") or ""):
            outcomes[case.get("name", "")] = "timeout"
        else:
            outcomes[case.get("name", "")] = "failed"
    return outcomes
