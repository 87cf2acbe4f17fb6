#!/usr/bin/env python3
"""A regrade's pieces, without a build (seconds): what a check's identity covers, which verdicts
changed, and accepting a preview.

- A check's identity (grading/inputs.py) changes when its own test case, the code outside the test
  cases or the binary's other inputs change, and only then: an erratum in one check leaves the others'
  verdicts reusable, a helper's leaves none. A check that spells __LINE__ (or a macro of the tree that
  does) makes every test case's place count; __COUNTER__ refuses the split (the binary's bytes then).
- The splitter reads literals, raw strings and comments as C++ does (a brace in a string is no brace).
- A visible error-path check's points do not depend on a hidden check (report.award_points).
- verdict_changes names every check gained, lost, changed or absent on one side, and nothing else.
- ctest_pattern selects exactly the tests named, whatever their characters (asked of CTest itself).
- --accept refuses a preview whose old grades changed since, an incomplete one, one against another
  folder and one still being written; accepting exchanges the folders, keeps the old set beside, and
  leaves each folder's CTest files naming its own place.
"""
from __future__ import annotations

import copy
import fcntl
import json
import subprocess
import tempfile
from pathlib import Path

from scalebook.errors import UsageError
from scalebook.grading import regrade
from scalebook.grading.inputs import SplitError, identities_of, macro_definitions, split_checks
from scalebook.grading.report import award_points, ctest_pattern, record_path
from tests.harness import expect, finish

CHECKS = '''#include <doctest/doctest.h>
// TEST_CASE("9.9 not a check: a comment") {
int helper(int x) { return x + 1; }
const char* raw = R"x(TEST_CASE("9.9 nor this") { )x";

TEST_SUITE("01") {
TEST_CASE("1.1 first") {
  const char* brace = "}{";
  char close = '}';
  /* } */
  CHECK(helper(1) == 2);
}

TEST_CASE("1.2 second") {
  CHECK(helper(2) == 3);
}
}
'''


def identity_checks() -> None:
    cases = split_checks(CHECKS)[1]
    expect([c[0] for c in cases] == ["1.1 first", "1.2 second"] and cases[0][1].rstrip().endswith("CHECK(helper(1) == 2);\n}"),
           f"split: the test cases and nothing in comments or raw strings, a brace in a literal no brace: {[c[0] for c in cases]}")
    for broken in ('TEST_CASE("1.1 x") { "unclosed }\n', 'TEST_CASE("1.1 x") { { }', 'TEST_CASE(x) {}',
                   '#define CASE TEST_CASE("1.1 x") { }\n'):
        try:
            split_checks(broken)
            refused = False
        except SplitError:
            refused = True
        expect(refused, f"split: refuses what it cannot read as test cases: {broken!r}")

    def ids(text: str, context=("binary",), definitions=None) -> dict[str, str]:
        return identities_of({"checks.cpp": text}, list(context), definitions or {})[0]

    base = ids(CHECKS)
    erratum = ids(CHECKS.replace("CHECK(helper(2) == 3);", "CHECK(helper(2) == 3);\n  CHECK(helper(3) == 4);"))
    expect(erratum["1.1 first"] == base["1.1 first"] and erratum["1.2 second"] != base["1.2 second"],
           "identity: an erratum in one check (a line added) changes that check's identity alone")
    added = ids(CHECKS.replace("}\n}\n", '}\n\nTEST_CASE("1.2 third") {\n  CHECK(true);\n}\n}\n', 1)[::1])
    expect(added.get("1.1 first") == base["1.1 first"] and added.get("1.2 second") == base["1.2 second"]
           and "1.2 third" in added, "identity: a check added leaves the others' identities")
    helper = ids(CHECKS.replace("return x + 1;", "return x + 2;"))
    expect(all(helper[n] != base[n] for n in base), "identity: a change outside the test cases (a helper) changes every check's")
    context = ids(CHECKS, context=("another binary",))
    expect(all(context[n] != base[n] for n in base), "identity: another header or library of the binary changes every check's")
    renamed = ids(CHECKS.replace("1.1 first", "1.1 first, renamed"))
    expect("1.1 first" not in renamed and renamed["1.2 second"] == base["1.2 second"],
           "identity: a renamed check is another check")

    lined = CHECKS.replace("CHECK(helper(2) == 3);", "CHECK(__LINE__ > 0);")
    moved = lined.replace("  /* } */\n", "  /* } */\n  /* one more line */\n")
    expect(identities_of({"checks.cpp": lined}, ["b"], {})[1] == "test case and line"
           and ids(moved)["1.2 second"] != ids(lined)["1.2 second"],
           "identity: where a check spells __LINE__, a line added above another check changes that one's identity")
    plain_moved = CHECKS.replace("  /* } */\n", "  /* } */\n  /* one more line */\n")
    expect(ids(plain_moved)["1.2 second"] == base["1.2 second"],
           "identity: where nothing spells a line, a check that only moves keeps its identity")
    definitions = macro_definitions(b"#define WHERE(x) \\\n  report(x, __LINE__)\n#define OUTER(y) WHERE(y)\n")
    through = CHECKS.replace("CHECK(helper(2) == 3);", "OUTER(2);")
    expect(identities_of({"checks.cpp": through}, ["b"], definitions)[1] == "test case and line",
           "identity: a check spelling a macro of the tree that expands to __LINE__ (through another) goes line by line")
    try:
        identities_of({"checks.cpp": CHECKS.replace("CHECK(helper(2) == 3);", "int a = __COUNTER__;")}, ["b"], {})
        counted = False
    except SplitError:
        counted = True
    expect(counted, "identity: __COUNTER__ in a check refuses the split (the binary's bytes decide then)")


def record() -> dict:
    def test(name, status, points, exercise="4.2", hidden=False, message=""):
        return {"name": name, "chapter": "04-causal-masking", "exercise": exercise, "status": status, "points": points,
                "max_points": 1, "message": message, **({"hidden": True} if hidden else {}), "inputs": "k" + name}
    return {"submission": "alice", "score": 3, "max_score": 5, "fingerprint": "f", "work": {}, "tests": [
        test("4.2 visible one", "passed", 1), test("4.2 visible throws", "passed", 1),
        test("4.2 secret long row", "failed", 0, hidden=True, message="the input 4711 failed"),
        test("4.3 secret lowest double", "passed", 1, exercise="4.3", hidden=True),
        test("4.3 visible", "failed", 0, exercise="4.3", message="plain")]}


def points_checks() -> None:
    full = record()
    tests = copy.deepcopy(full["tests"])
    award_points(tests)
    by_name = {t["name"]: t["points"] for t in tests}
    expect(by_name["4.2 visible throws"] == 1,
           "points: a visible error-path check pays though a hidden check of its exercise failed (that shows nowhere)")
    tests[0]["status"] = "failed"
    for test in tests:
        test["points"] = 0
    award_points(tests)
    expect({t["name"]: t["points"] for t in tests}["4.2 visible throws"] == 0,
           "points: a visible error-path check still pays nothing when a visible check of its exercise failed")


def changes_checks() -> None:
    old = record()
    new = copy.deepcopy(old)
    new["tests"][2].update(status="passed", points=1)          # gained (a hidden check)
    new["tests"][0].update(status="crashed", points=0)         # lost
    new["tests"][4].update(message="another message")          # same verdict: not a change
    new["tests"][1]["max_points"] = 2                          # points of a check changed (an erratum to points)
    del new["tests"][3]                                        # a check removed
    new["tests"].append(dict(old["tests"][4], name="4.3 added", status="passed", points=1))
    changes = {c["check"]: c for c in regrade.verdict_changes(old, new)}
    expect(set(changes) == {"4.2 secret long row", "4.2 visible one", "4.2 visible throws", "4.3 secret lowest double",
                            "4.3 added"}, f"changes: every changed check and nothing else: {sorted(changes)}")
    expect(changes["4.2 secret long row"]["kind"] == "gained" and changes["4.2 secret long row"]["hidden"]
           and changes["4.2 visible one"]["kind"] == "lost" and changes["4.2 visible one"]["delta"] == -1
           and changes["4.3 secret lowest double"]["new_status"] == "absent"
           and changes["4.3 added"]["old_status"] == "absent" and changes["4.3 added"]["kind"] == "gained"
           and changes["4.2 visible throws"]["new_max"] == 2,
           "changes: gained, lost, absent on either side, a maximum changed, each with its points")


def pattern_checks(base: Path) -> None:
    names = ["a.b/04-x/4.2 masked (not [all]) +1 $x ^y | z? *", "a.b/04-x/4.2 masked (not [all]) +1 $x ^y | z? * more",
             "aXb/04-x/4.2 masked (not [all]) +1 $x ^y | z? *", "back\\slash/t"]
    (base / "CTestTestfile.cmake").write_text("".join(f"add_test([==[{n}]==] /bin/true)\n" for n in names))
    listed = subprocess.run(["ctest", "--test-dir", str(base), "-N", "-R", ctest_pattern([names[0], names[3]])],
                            capture_output=True, text=True).stdout
    found = [line.split(": ", 1)[1] for line in listed.splitlines() if line.strip().startswith("Test #")]
    expect(found == [names[0], names[3]], f"ctest_pattern: CTest selects exactly the names given: {found}")


def folder(path: Path, commit: str, names: list[str], marker: str) -> None:
    (path / "ctest" / "kit").mkdir(parents=True)
    (path / "ctest" / "run.json").write_text(json.dumps({"chapters": [], "commit": commit,
                                                         "submissions": {n: {} for n in names}}))
    (path / "ctest" / "kit" / "kit.json").write_text(json.dumps({"checks": {}, "chapters": {}}))
    for name in names:
        record_path(path, name).parent.mkdir(parents=True)
        record_path(path, name).write_text(json.dumps({"submission": name, "marker": marker}))
        (path / "students" / name).mkdir(parents=True)
        (path / "students" / name / "report.json").write_text(json.dumps({"submission": name}))
    (path / "marker.txt").write_text(marker)


def accept_checks(base: Path) -> None:
    old, new = base / "grades", base / "regrade"
    folder(old, "aaa1111", ["alice", "bob"], "old")
    folder(new, "bbb2222", ["alice", "bob"], "new")
    expect(regrade.compare_refusal(old, new) != "" and regrade.compare_refusal(old, base / "fresh") == ""
           and regrade.compare_refusal(old, old / "inside") != "" and regrade.compare_refusal(base / "nothing", base / "x") != "",
           "compare: a new folder only, outside the old one, which must be a grading folder")
    preview = {"old": {"dir": str(old), "commit": "aaa1111"}, "new": {"dir": str(new), "commit": "bbb2222"},
               "records": regrade.record_digests(old), "students": [], "changed": [], "work": {}}
    (new / "compare.json").write_text(json.dumps(preview))

    def refused(words: str, what: str) -> None:
        try:
            regrade.accept(new, old)
            said = ""
        except UsageError as error:
            said = str(error)
        expect(words in said and (old / "marker.txt").read_text() == "old", f"accept refuses {what}: {said[:120]}")

    record = record_path(old, "bob")
    record.write_text(record.read_text().replace("old", "regraded"))
    refused("changed since the preview", "a preview whose old grades changed since")
    record.write_text(record.read_text().replace("regraded", "old"))
    record_path(new, "bob").unlink()
    refused("not complete", "an incomplete preview")
    record_path(new, "bob").write_text(json.dumps({"submission": "bob", "marker": "new"}))
    shown = new / "students" / "bob" / "report.json"
    shown.unlink()
    refused("not complete", "a preview with a record whose student's report was never written (a stopped run)")
    shown.write_text(json.dumps({"submission": "bob"}))
    with open(new / "ctest" / regrade.LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        refused("is writing", "while a grading run writes the preview")
    other = base / "other"
    folder(other, "ccc", [], "other")
    try:
        regrade.accept(new, other)
        said = ""
    except UsageError as error:
        said = str(error)
    expect("not" in said and (other / "marker.txt").read_text() == "other", f"accept refuses another old folder: {said[:100]}")
    kept = regrade.accept(new, old)
    expect((old / "marker.txt").read_text() == "new" and (kept / "marker.txt").read_text() == "old" and not new.exists()
           and kept.parent == old.parent and kept.name.startswith("grades.replaced-"),
           f"accept: the regrade in the old folder's place, the old grades kept beside it ({kept.name})")
    text = (record_path(old, "alice").parent / "CTestTestfile.cmake").read_text()
    kept_text = (record_path(kept, "alice").parent / "CTestTestfile.cmake").read_text()
    expect(f"{old}/ctest/students/alice" in text and str(new) not in text and f"{kept}/ctest/students/alice" in kept_text,
           "accept: each folder's CTest files name its own place")
    expect(json.loads((old / "compare.json").read_text()).get("accepted", {}).get("replaced") == str(kept),
           "accept: the accepted preview says when, and where the grades it replaced are")


def main() -> int:
    identity_checks()
    points_checks()
    changes_checks()
    with tempfile.TemporaryDirectory(prefix="scalebook-regrade-") as temp:
        (Path(temp) / "pattern").mkdir()
        pattern_checks(Path(temp) / "pattern")
        accept_checks(Path(temp))
    return finish("a regrade reuses what did not change and replaces the grades only when accepted")


if __name__ == "__main__":
    raise SystemExit(main())
