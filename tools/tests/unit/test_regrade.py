#!/usr/bin/env python3
"""A regrade's pieces, without a build (seconds): what a check's identity covers, which verdicts
changed, and accepting a preview.

- A check's identity (grading/inputs.py) changes when its own test case, the code outside the test
  cases or the binary's other inputs change, and only then: an erratum in one check leaves the others'
  verdicts reusable, a helper's leaves none. A check that spells __LINE__ (or a macro of the tree that
  does) makes every test case's place count; __COUNTER__ refuses the split (the binary's bytes then).
- The splitter reads literals, raw strings and comments as C++ does (a brace in a string is no brace).
- A visible error-path check's points do not depend on a hidden check (report.award_points).
- verdict_changes names every check gained, lost, changed or absent on one side, and nothing else; a
  check an erratum renamed in its place is compared with itself: only a student whose verdict moved
  shows, and the rename is said once.
- ctest_pattern selects exactly the tests named, whatever their characters (asked of CTest itself).
- --accept refuses a preview whose old grades changed since, an incomplete one, one against another
  folder and one still being written; accepting exchanges the folders, keeps the old set beside, and
  leaves each folder's CTest files naming its own place.
- --accept killed (SIGKILL) before each of its steps, with renameat2's exchange and with two renames:
  the old folder holds a whole set of grades at every kill, and the same command completes it.
"""
from __future__ import annotations

import copy
import fcntl
import json
import os
import signal
import subprocess
import tempfile
import types
from pathlib import Path

from scalebook.errors import UsageError
from scalebook.grading import regrade, tree
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


def rename_checks(base: Path) -> None:
    """An erratum that renames a hidden check (and changes its input) shows that rename once, and only
    the student whose verdict moved: not every student with a check lost and one gained."""
    def kit(names: list[tuple[str, str, bool]]) -> dict:
        return {"checks": {f"k{i}": {"chapter": "04-causal-masking", "exercise": exercise, "name": name,
                                     **({"hidden": True} if hidden else {})}
                           for i, (exercise, name, hidden) in enumerate(names)}}

    old_checks = [("4.1", "4.1 square", False), ("4.2", "4.2 over 96 tokens", True), ("4.2", "4.2 gone", False),
                  ("4.3", "4.3 plain", False)]
    new_checks = [("4.1", "4.1 square", False), ("4.2", "4.2 over 64 tokens", True), ("4.3", "4.3 plain", False),
                  ("4.3", "4.3 new", False)]
    renames = regrade.renamed_checks(kit(old_checks), kit(new_checks))
    expect(renames == {("04-causal-masking", "4.2 over 96 tokens"): "4.2 over 64 tokens"},
           f"renames: the check in the same place of the same exercise, and no other pairing: {renames}")
    old, new = base / "old", base / "new"
    statuses = {"ada": ("passed", "passed"), "fay": ("failed", "passed"), "gus": ("failed", "failed")}
    for folder_path, checks, which in ((old, old_checks, 0), (new, new_checks, 1)):
        (folder_path / "ctest" / "kit").mkdir(parents=True)
        (folder_path / "ctest" / "kit" / "kit.json").write_text(json.dumps(kit(checks)))
        for name, status in statuses.items():
            tests = [{"chapter": "04-causal-masking", "exercise": e, "name": n, "max_points": 1,
                      "status": status[which] if h else "passed", "points": int(status[which] == "passed" or not h),
                      "message": "", **({"hidden": True} if h else {})} for e, n, h in checks if n not in ("4.2 gone", "4.3 new")]
            record = {"submission": name, "score": sum(t["points"] for t in tests), "max_score": len(tests), "tests": tests}
            record_path(folder_path, name).parent.mkdir(parents=True)
            record_path(folder_path, name).write_text(json.dumps(record))
            (folder_path / "students" / name).mkdir(parents=True)
            (folder_path / "students" / name / "report.json").write_text("{}")
    plan = types.SimpleNamespace(compare={"dir": str(old), "commit": "aaa", "records": regrade.record_digests(old)},
                                 out_dir=new, commit="bbb", submissions={n: {} for n in statuses}, refused=[])
    preview = regrade.comparison(plan)
    changes = {s["submission"]: s["changes"] for s in preview["students"] if s["changes"]}
    expect(preview["changed"] == ["fay"] and [c["check"] for c in changes["fay"]] == ["4.2 over 64 tokens"]
           and changes["fay"][0]["renamed_from"] == "4.2 over 96 tokens" and changes["fay"][0]["kind"] == "gained",
           f"renames: only the student whose verdict moved is changed, under the new name: {preview['changed']} {changes}")
    expect(preview["renamed"] == [{"chapter": "04-causal-masking", "old": "4.2 over 96 tokens", "new": "4.2 over 64 tokens",
                                   "hidden": True}], f"renames: the preview lists the rename once: {preview['renamed']}")
    lines = "\n".join(regrade.terminal_lines(preview))
    expect("renamed in this tree" in lines and "(was 4.2 over 96 tokens)" in lines and "2 unchanged: ada, gus" in lines,
           f"renames: the terminal says so:\n{lines}")


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


def killed_accept(new: Path, old: Path, limit: int, how: str) -> tuple[int, str]:
    """--accept NEW --into OLD in a forked process that kills itself (SIGKILL) before its LIMIT-th
    step (0: never), each write, rename, exchange and CTest file counted; HOW "two renames": as on a
    filesystem that cannot exchange two folders. Returns its exit status (-9 when killed) and output."""
    said = new.parent / f"accept-{limit}.log"
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(os.open(said, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 1)
            os.dup2(1, 2)
            if how == "two renames":
                regrade.exchange = lambda first, second: False
            steps = [0]

            def step(function):
                def counted(*args, **kwargs):
                    steps[0] += 1
                    if steps[0] == limit:
                        os.kill(os.getpid(), signal.SIGKILL)
                    return function(*args, **kwargs)
                return counted

            for module, name in ((regrade, "write_json"), (regrade, "exchange"), (regrade, "relocate"),
                                 (os, "rename"), (os, "replace"), (tree, "write_submission_tests")):
                setattr(module, name, step(getattr(module, name)))
            regrade.accept(new, old)
            os._exit(0)
        except BaseException as error:  # noqa: BLE001 (the child reports and ends)
            print(f"{type(error).__name__}: {error}", flush=True)
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    return code, said.read_text(errors="replace") if said.exists() else ""


def accept_killed_checks(base: Path) -> None:
    """--accept killed (SIGKILL) before each of its steps (every write, rename, exchange and CTest file
    it makes), then run again: OLD holds one complete set of grades at every kill, the preview never
    says accepted while the old grades are in place, and the rerun completes the acceptance."""
    for how in ("exchange", "two renames"):
        limit, troubles = 0, []
        while limit < 60:
            limit += 1
            root = base / f"killed-{how.replace(' ', '-')}-{limit}"
            old, new = root / "grades", root / "regrade"
            folder(old, "aaa1111", ["alice", "bob"], "old")
            folder(new, "bbb2222", ["alice", "bob"], "new")
            (new / "compare.json").write_text(json.dumps(
                {"old": {"dir": str(old), "commit": "aaa1111"}, "new": {"dir": str(new), "commit": "bbb2222"},
                 "records": regrade.record_digests(old), "students": [], "changed": [], "work": {}}))
            code, said = killed_accept(new, old, limit, how)
            if code == 0:
                break
            if code != -signal.SIGKILL:
                troubles.append(f"step {limit}: exit {code} {said[-300:]}")
                continue
            held = (old / "marker.txt").read_text() if (old / "marker.txt").exists() else None
            complete = held is not None and all(record_path(old, n).exists() for n in ("alice", "bob"))
            kept = sorted(root.glob("grades.replaced-*"))
            between = how == "two renames" and held is None and len(kept) == 1 and (new / "marker.txt").exists()
            if not (complete or between):
                troubles.append(f"step {limit}: the old folder holds no complete set of grades")
            preview = json.loads((new / "compare.json").read_text()) if (new / "compare.json").exists() else {}
            if held == "old" and preview.get("accepted"):
                troubles.append(f"step {limit}: the preview says accepted while the old grades are in place")
            code, said = killed_accept(new, old, 0, how)
            kept = sorted(root.glob("grades.replaced-*"))
            done = (code == 0 and (old / "marker.txt").read_text() == "new" and not new.exists()
                    and len(kept) == 1 and (kept[0] / "marker.txt").read_text() == "old"
                    and json.loads((old / "compare.json").read_text()).get("accepted", {}).get("replaced") == str(kept[0])
                    and f"{old}/ctest/students/alice" in (record_path(old, "alice").parent / "CTestTestfile.cmake").read_text()
                    and f"{kept[0]}/ctest/students/alice" in
                    (record_path(kept[0], "alice").parent / "CTestTestfile.cmake").read_text())
            if not done:
                troubles.append(f"step {limit}: the rerun did not complete the acceptance ({code}: {said.strip()[-200:]})")
        expect(limit > 6 and not troubles, f"accept ({how}): killed before each of its {limit - 1} steps, a rerun "
                                           f"completes it and the old folder always holds a whole set: {troubles[:3]}")


def main() -> int:
    identity_checks()
    points_checks()
    changes_checks()
    with tempfile.TemporaryDirectory(prefix="scalebook-regrade-") as temp:
        (Path(temp) / "pattern").mkdir()
        pattern_checks(Path(temp) / "pattern")
        accept_checks(Path(temp))
        (Path(temp) / "renames").mkdir()
        rename_checks(Path(temp) / "renames")
        accept_killed_checks(Path(temp))
    return finish("a regrade reuses what did not change and replaces the grades only when accepted")


if __name__ == "__main__":
    raise SystemExit(main())
