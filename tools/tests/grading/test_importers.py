#!/usr/bin/env python3
"""The gradebook files against the importers' own rules: Canvas's (Ruby, importers/canvas_import.rb),
Moodle's (PHP, importers/moodle_import.php) and PrairieLearn's (importers/prairielearn_upload.py),
each a replay of the importer's code cited line by line, on a class with hostile but valid
identifiers.

The class comes from a roster file, as `./workbook grade --roster` reads it: emails, logins, sections
and names that start with '-', '@' or '+' or hold '=', quotes, commas and markup (valid, and written
as they are), and lines no gradebook could match or a spreadsheet would compute (a Canvas id with a
letter O, formulas, an address Moodle refuses, a repeated email, a name Canvas takes for its Points
Possible row, a login Canvas's CSV reader rewrites), each refused with its line. Two students have
grades entered by hand in the LMS and nothing graded here (no submission; a refused one): the files
must leave those grades alone. The LMS side (its users, assignments, questions) is built from the
roster as the LMS would hold it; the replays then say whom each row reaches and what it changes.
"""
from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from scalebook.course import all_chapters
from scalebook.grading import export
from scalebook.grading.export.common import Options
from scalebook.grading.roster import read_roster
from scalebook.verdicts import safe_text
from tests.grading.importers import prairielearn_upload
from tests.harness import expect, finish

HERE = Path(__file__).resolve().parent / "importers"
CH3, CH4 = "03-attention-scaling", "04-causal-masking"
ROSTER = (
    "id,name,email,repository,section,login,canvas_id\n"
    "ada,Ada Lovelace,ada@uni.example,ada.git,A1,ada,101\n"
    "kim,Kim =Lee,-kim@uni.example,kim.git,+A,-kim,102\n"
    "jon,@jon,jon+cs101@uni.example,jon.git,-B,@jon,103\n"
    "eve,\"O'Neil, Eve \"\"Evie\"\"\",eve@uni.example,eve.git,@lab 2,eve|x,104\n"
    "zoe,Zoë <b>Z</b> & co,zoe@sub.uni.example,zoe.git,A1,zoe.z,105\n"
    "bob,Bob,bob@uni.example,bob.git,B,bob,106\n"
    "gus,Gus,gus@uni.example,gus.git,B,gus,107\n"
    "typo,Ty Po,typo@uni.example,typo.git,A1,typo,1O05\n"
    "calc,\"=HYPERLINK(\"\"http://evil\"\")\",calc@uni.example,calc.git,A1,calc,108\n"
    "dde,Dee,dde@uni.example,dde.git,A1,+cmd|' /C calc'!A0,109\n"
    "nodot,No Dot,nodot@localhost,nodot.git,A1,nodot,110\n"
    "twin,Twin,ADA@uni.example,twin.git,A1,twin,111\n"
    "pp,Points Possible Pete,pp@uni.example,pp.git,A1,pp,112\n"
    "num,Num,num@uni.example,num.git,A1,\"1,5\",113\n"
    "sum,Sum,sum@uni.example,sum.git,-2+3,sum,114\n")
REFUSED = {9: "Canvas would read it as user 1", 10: "run it as a formula", 11: "a link to another program",
           12: "not an address Moodle accepts", 13: "also on line 2", 14: "Points Possible",
           15: "read it as '1.5'", 16: "arithmetic"}
GRADED = ("ada", "kim", "jon", "eve", "zoe")
BY_HAND = {"bob": "7", "gus": "15"}        # grades the LMS holds, entered by hand: bob's submission is refused


def test(name: str, chapter: str, exercise: str, status: str, points: int, maximum: int = 1) -> dict:
    return {"name": f"{exercise} {name}", "chapter": chapter, "exercise": exercise, "status": status, "points": points,
            "max_points": maximum, "message": "" if status == "passed" else safe_text("<b>no</b> $x$ *y*"), "file": "x.cpp"}


def reports() -> list[dict]:
    """A report per graded student (each a score of its own), bob's refused, and one no roster line has."""
    made = []
    for index, name in enumerate(GRADED + ("stray",)):
        tests = [test("a", CH3, "3.1", "passed", 2 + index, 2 + index), test("b_c", CH3, "3.2", "failed", 0, 3),
                 test("d", CH4, "4.1", "passed" if index % 2 else "failed", index % 2 * 4, 4)]
        made.append({"submission": name, "score": sum(t["points"] for t in tests), "tests": tests, "commit": "abc1234",
                     "max_score": sum(t["max_points"] for t in tests), "refused_files": []})
    made.append({"submission": "bob", "score": 0, "max_score": 9, "tests": [], "refused": "not a folder", "commit": "abc"})
    return made


def points(report: dict, chapter: str | None = None) -> int:
    return sum(t["points"] for t in report["tests"] if chapter is None or t["chapter"] == chapter)


def options(**given) -> Options:
    """Options with the fields this tree's Options has (so that the test runs against an older exporter too)."""
    return Options(**{k: v for k, v in given.items() if k in Options._fields})


def run_replay(command: list[str]) -> dict | list:
    done = subprocess.run(command, capture_output=True, text=True, env={"LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"})
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:2])}: exit {done.returncode}: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def roster_checks(folder: Path) -> list:
    path = folder / "roster.csv"
    path.write_text(ROSTER, encoding="utf-8")
    students, refused = read_roster(path, deadlines=False)
    expect([s.id for s in students] == list(GRADED) + ["bob", "gus"],
           f"the hostile but valid lines are read, written as they are: {[s.id for s in students]}")
    expect([(s.email, s.login, s.section, s.name) for s in students[1:3]]
           == [("-kim@uni.example", "-kim", "+A", "Kim =Lee"), ("jon+cs101@uni.example", "@jon", "-B", "@jon")],
           "their identifiers are kept exactly (no apostrophe, no rewriting)")
    reasons = {r.line: r.reason for r in refused}
    for line, words in REFUSED.items():
        expect(words in reasons.get(line, ""), f"roster line {line} is refused, saying why: {reasons.get(line)}")
    expect(len(refused) == len(REFUSED), f"only those lines are refused ({sorted(reasons)})")
    return students


def canvas_course(students, with_ids: bool, logins: bool) -> dict:
    """The course as Canvas holds it: its users (ids 101..., names, SIS ids that are not the roster's
    ids, logins), a decoy user 1 (what '1O05'.to_i reads), assignment 4711, and bob's and gus's scores."""
    users = [{"id": 1, "name": "Decoy", "sortable_name": "Decoy", "sis_user_id": "sis-0", "login": "decoy"}]
    for index, s in enumerate(students):
        users.append({"id": int(s.canvas_id) if with_ids else 101 + index, "name": s.name, "sortable_name": s.name,
                      "sis_user_id": f"sis-{index + 1}", "login": s.login if logins else f"other-{index}"})
    ids = {s.id: u["id"] for s, u in zip(students, users[1:])}
    return {"students": users, "assignments": [{"id": 4711, "title": "Attention"}],
            "scores": {str(ids[name]): {"4711": score} for name, score in BY_HAND.items()}}, ids


def canvas_checks(folder: Path, students, chapters, by_id: dict) -> None:
    """Three rosters: with Canvas ids; without (Canvas matches the SIS Login ID); without logins
    either (Canvas matches the name)."""
    shapes = [("ID", "id", True, True), ("SIS Login ID", "sis_login_id", False, True), ("name", "name", False, False)]
    for what, how, with_ids, logins in shapes:
        roster = [s._replace(canvas_id=s.canvas_id if with_ids else "", login=s.login if logins else "")
                  for s in students]
        out = folder / f"canvas-{how}"
        said = export.write_exports(reports(), out, ["canvas"], options(
            chapters=chapters, maxima={CH3: 6, CH4: 4}, students=roster, assignment="Attention",
            assignment_ids=("4711",)))
        course, ids = canvas_course(students, with_ids, logins)
        (out / "course.json").write_text(json.dumps(course))
        result = run_replay(["ruby", str(HERE / "canvas_import.rb"), str(out / "exports" / "canvas.csv"),
                             str(out / "course.json")])
        expect(result.get("error") is None and result["assignments"] == [
            {"header": "Attention (4711)", "id": 4711, "title": "Attention", "new": False}]
            and not result["dropped_columns"] and result["points_possible"] == {"4711": "10"},
            f"Canvas ({what}): the header is valid and its column is assignment 4711, out of 10: "
            f"{ {k: result.get(k) for k in ('error', 'assignments', 'dropped_columns', 'points_possible')} }")
        reached = {row["student"]: (row["matched_by"], row["grades"].get("4711")) for row in result.get("rows", [])}
        wanted = {ids[name]: (how, str(points(by_id[name]))) for name in GRADED}
        expect(reached == wanted, f"Canvas ({what}): each graded student's row reaches that student, by the {what}, "
                                  f"with their points: {reached} (wanted {wanted})")
        changed = [(row["student"], row["changes"]) for row in result.get("rows", [])
                   if "clears the score" in row["changes"].values()]
        expect(not changed and not any(ids[name] in reached for name in BY_HAND),
               f"Canvas ({what}): no row for the students with nothing graded: their scores entered by hand stay "
               f"({changed})")
        expect(any("gus (no submission graded)" in line and "bob (its submission was refused)" in line for line in said)
               and any("stray" in line and "not in the roster" in line for line in said),
               f"Canvas ({what}): the terminal names who was left out and why: {said}")
    # The replay is the importer's rule, not ours: a reserved header is dropped, '1O05' reaches user 1.
    probe = folder / "probe.csv"
    probe.write_text("Student,ID,SIS User ID,SIS Login ID,Section,Project Final Grade,Attention (4711)\n"
                     "    Points Possible,,,,,10,10\nTy Po,1O05,typo,typo,A1,3,4\n")
    course, _ = canvas_course(students, True, True)
    (folder / "course.json").write_text(json.dumps(course))
    result = run_replay(["ruby", str(HERE / "canvas_import.rb"), str(probe), str(folder / "course.json")])
    expect(result["dropped_columns"] == ["Project Final Grade"] and result["rows"][0]["student"] == 1,
           f"the Canvas replay drops a column named like Canvas's own and reads ID 1O05 as user 1: {result}")


def moodle_site(students, key: str, rule: str, items: list[int], grademax: float = 100) -> dict:
    users = [{"id": 201 + i, "email": s.email, "idnumber": s.id, "username": s.login or s.id} for i, s in enumerate(students)]
    ids = {s.id: u["id"] for s, u in zip(students, users)}
    mapping = {}
    for index, item in enumerate(items):
        mapping[str(1 + 2 * index)] = str(item)
        mapping[str(2 + 2 * index)] = f"feedback_{item}"
    grades = {str(ids[name]): {str(item): {"finalgrade": float(score), "feedback": "entered by hand"} for item in items}
              for name, score in BY_HAND.items()}
    return {"rule": rule, "unlimitedgrades": False, "gradepointmax": 100, "users": users, "mapfrom": 0,
            "mapto": "useremail" if key == "email" else "useridnumber", "mapping": mapping,
            "items": {str(item): {"grademax": grademax, "grademin": 0} for item in items}, "grades": grades}, ids


def moodle_replay(out: Path, site: dict) -> dict:
    (out / "site.json").write_text(json.dumps(site))
    return run_replay(["php", str(HERE / "moodle_import.php"), str(out / "exports" / "moodle.csv"), str(out / "site.json")])


def moodle_checks(folder: Path, students, chapters, by_id: dict) -> None:
    """Email and ID number keys, a column per chapter, Moodle 4.4's bound of 100 and 5.0's grade item bound."""
    for key, per_chapter, rule in [("email", False, "4.4"), ("idnumber", True, "4.4"), ("email", False, "5.0dev")]:
        what = f"key {key}, {'a column per chapter' if per_chapter else 'the total'}, rule {rule}"
        out = folder / f"moodle-{key}-{per_chapter}-{rule}"
        export.write_exports(reports(), out, ["moodle"], options(
            chapters=chapters, maxima={CH3: 6, CH4: 4}, students=students, assignment="Attention",
            per_chapter=per_chapter, moodle_key=key))
        items = [31, 32] if per_chapter else [31]
        site, ids = moodle_site(students, key, rule, items, grademax=10)
        result = moodle_replay(out, site)
        expect(result["status"] is True and not result["errors"], f"Moodle ({what}): the import goes through: "
                                                                   f"{result['errors']}")
        final = result.get("final", {})
        columns = [CH3, CH4] if per_chapter else [None]
        wanted = {str(ids[n]): [float(points(by_id[n], c)) for c in columns] for n in GRADED}
        got = {u: [final.get(u, {}).get(str(i), {}).get("finalgrade") for i in items] for u in wanted}
        expect(got == wanted, f"Moodle ({what}): each graded student's grade lands on them: {got}")
        feedback = final.get(str(ids["kim"]), {}).get("31", {}).get("feedback") or ""
        kim = by_id["kim"]
        expect(feedback.startswith(f"{points(kim, columns[0])}/") and "3.2 b_c (failed)" in feedback,
               f"Moodle ({what}): kim's feedback lands with her grade: {feedback[:80]!r}")
        kept = {n: final.get(str(ids[n]), {}).get("31", {}) for n in BY_HAND}
        expect(all(kept[n].get("finalgrade") == float(BY_HAND[n]) and kept[n].get("feedback") == "entered by hand"
                   and not kept[n].get("cleared") for n in BY_HAND),
               f"Moodle ({what}): the grades entered by hand for the students with nothing graded stay: {kept}")
    # Points above 100: refused before grading without --scale-to; scaled with it.
    big = {CH3: 90, CH4: 87}
    kit = {"checks": {"a": {"chapter": CH3, "points": 90}, "b": {"chapter": CH4, "points": 87}}}
    request = {"formats": ["moodle"], "roster": None, "assignment": "Attention", "assignment_ids": [],
               "per_chapter": False, "moodle_key": "email"}
    refusal = getattr(export, "check_request", lambda *a: (None, []))(request, kit, chapters)[0]
    expect(refusal is not None and "177 points" in refusal and "--scale-to 100" in refusal,
           f"Moodle: a total out of 177 points is refused before grading, naming --scale-to: {refusal}")
    out = folder / "moodle-scaled"
    export.write_exports(reports(), out, ["moodle"], options(
        chapters=chapters, maxima=big, students=students, assignment="Attention", scale_to=100.0))
    for rule in ("4.4", "5.0dev"):
        site, ids = moodle_site(students, "email", rule, [31], grademax=100)
        result = moodle_replay(out, site)
        got = {n: result.get("final", {}).get(str(ids[n]), {}).get("31", {}).get("finalgrade") for n in GRADED}
        wanted = {n: round(points(by_id[n]) * 100 / 177, 2) for n in GRADED}
        expect(result["status"] is True and got == wanted,
               f"Moodle (rule {rule}, --scale-to 100): the import goes through, grades scaled to 100: {got} "
               f"{result['errors']}")
    addresses = [s.email for s in students] + ["nodot@localhost", "\"quoted\"@uni.example"]
    (folder / "emails.json").write_text(json.dumps(addresses))
    accepted = run_replay(["php", str(HERE / "moodle_import.php"), "--emails", str(folder / "emails.json")])
    expect(all(accepted[s.email] for s in students) and not accepted["nodot@localhost"],
           f"Moodle's validate_email (PHP's filter) accepts every address the roster kept and refuses the one it "
           f"refused: {accepted}")


def prairielearn_checks(folder: Path, students, chapters, by_id: dict) -> None:
    """The question scores upload: one question, then one per chapter."""
    for per_chapter, qids in [(False, ("scalebook/attention",)), (True, ("scalebook/ch03", "scalebook/ch04"))]:
        what = "a question per chapter" if per_chapter else "one question"
        out = folder / f"prairielearn-{per_chapter}"
        said = export.write_exports(reports(), out, ["prairielearn"], options(
            chapters=chapters, maxima={CH3: 6, CH4: 4}, students=students, assignment="Attention",
            per_chapter=per_chapter, qids=qids))
        path = out / "exports" / "prairielearn.csv"
        expect(path.is_file(), f"PrairieLearn ({what}): prairielearn.csv written: {said}")
        if not path.is_file():
            continue
        course = {"instance_questions": [{"id": 1000 + 10 * i + q, "uid": s.email, "instance": 1, "qid": qid}
                                         for i, s in enumerate(students) for q, qid in enumerate(qids)]}
        rows = prairielearn_upload.replay(path.read_text(encoding="utf-8"), course)
        iq = {(iq["uid"], iq["qid"]): iq["id"] for iq in course["instance_questions"]}
        columns = [CH3, CH4] if per_chapter else [None]
        maxima = [6, 4] if per_chapter else [10]
        wanted = {iq[(s.email, qid)]: round(100 * points(by_id[s.id], c) / m, 4)
                  for s in students if s.id in GRADED for qid, c, m in zip(qids, columns, maxima)}
        got = {r.get("instance_question"): r.get("score_perc") for r in rows if r["outcome"] == "updated"}
        errors = [r["error"] for r in rows if r["outcome"] != "updated"]
        expect(got == wanted and not errors, f"PrairieLearn ({what}): every row updates its student's question with "
                                             f"the percentage: {got} {errors[:2]}")
        feedback = (rows[0].get("feedback") or "") if rows else ""
        expect(feedback.startswith(f"{points(by_id['ada'], columns[0])}/") and "3\\.2 b\\_c \\(failed\\)" in feedback,
               f"PrairieLearn ({what}): the feedback lands, its Markdown characters escaped: {feedback[:120]!r}")


def option_checks(folder: Path) -> None:
    """./workbook grade refuses, before grading, a gradebook file an importer would misread."""
    from scalebook.commands.grade import parse_arguments
    roster = folder / "one.csv"
    roster.write_text("id,name,email,repository\nada,Ada,ada@uni.example,ada.git\n")
    for argv, words in [
            (["--export", "canvas", "--assignment", "Project Final Grade"], "Final Grade"),
            (["--export", "canvas", "--assignment", "Quiz (12)"], "ends in ' (digits)'"),
            (["--export", "moodle", "--assignment", "=SUM(1)"], "run it as a formula"),
            (["--export", "prairielearn"], "needs --prairielearn-qid"),
            (["--export", "prairielearn", "--prairielearn-qid", "@other/q"], "shared question")]:
        said = io.StringIO()
        try:
            with contextlib.redirect_stderr(said), contextlib.redirect_stdout(said):
                parse_arguments([*argv, "--roster", str(roster), "--chapters", "3,4", str(folder / "ada")])
            refused = False
        except SystemExit:
            refused = True
        expect(refused and words in said.getvalue(),
               f"grade {' '.join(argv)}: refused, saying '{words}': {said.getvalue().strip()[-240:]!r}")
    formats = (getattr(export, "FORMATS", ()), getattr(export, "AUTOGRADER_FORMATS", ()))
    expect(formats == (("canvas", "moodle", "prairielearn"), ("gradescope", "prairielearn-results")),
           f"--export offers the gradebook files; the per-submission results.json only as the autograders': {formats}")


def main() -> int:
    missing = [tool for tool in ("ruby", "php") if shutil.which(tool) is None]
    if missing:
        expect(False, f"{' and '.join(missing)} installed (config.json's 'importers' packages; ./workbook test "
                      "installs them)")
        return finish("")
    chapters = [c for c in all_chapters() if c.folder in (CH3, CH4)]
    by_id = {r["submission"]: r for r in reports()}
    with tempfile.TemporaryDirectory(prefix="scalebook-importers-") as temp:
        folder = Path(temp)
        # The LMS side is built from the valid lines (whatever the roster let through).
        students = [s for s in roster_checks(folder) if s.id in GRADED + tuple(BY_HAND)]
        canvas_checks(folder, students, chapters, by_id)
        moodle_checks(folder, students, chapters, by_id)
        prairielearn_checks(folder, students, chapters, by_id)
        option_checks(folder)
    return finish("the Canvas, Moodle and PrairieLearn files pass the importers' own rules")


if __name__ == "__main__":
    raise SystemExit(main())
