"""A regrade after an erratum: graded into a new folder, previewed, and accepted as a whole or not at all.

    ./workbook grade --compare OLD_DIR --out NEW_DIR [options] SUBMISSION...
    ./workbook grade --accept NEW_DIR --into OLD_DIR

--compare grades the submissions into NEW_DIR with this tree as it is now (after the erratum), and
reads OLD_DIR, never writes it: NEW_DIR's object cache starts with OLD_DIR's objects (hard links; a
cached object's key covers every byte its compile read, grading/compile.py), and every check whose
verdict key (grading/inputs.py: the submission's files of its chapter, the compile, link and run
fingerprints, the check's identity) is in the submission's old record keeps that verdict and is not
run (grading/report.py). Then it shows, per student, every check whose verdict or points changed and
the totals, on the terminal and in NEW_DIR/compare.html, and keeps the comparison in
NEW_DIR/compare.json with both trees' commits and a digest of every old record.

--accept checks that the preview is complete (every submission of its plan has a record, no grading
runs in either folder) and still describes OLD_DIR (no record there changed since), makes NEW_DIR's
CTest files name OLD_DIR's path, and exchanges the two folders in one step (renameat2's
RENAME_EXCHANGE: at every moment OLD_DIR holds one complete set of grades). The old set is kept beside
it, as OLD_DIR.replaced-DATE.
"""
from __future__ import annotations

import argparse
import contextlib
import ctypes
import datetime
import difflib
import errno
import fcntl
import hashlib
import os
import shutil
from pathlib import Path

from ..config import ROOT
from ..errors import UsageError
from ..files import read_json, write_json
from ..verdicts import safe_text
from .report import RECORD, read_record
from .supervise import log
from .tree import STUDENTS, tests_folder

LOCK = ".grading.lock"          # DIR/ctest/.grading.lock: held while a grading run writes DIR
COMPARISON = "compare.json"     # NEW_DIR/compare.json: the preview
PAGE = "compare.html"           # NEW_DIR/compare.html: the preview's page
RENAME_EXCHANGE = 2             # linux/fs.h
AT_FDCWD = -100


def is_grading_folder(folder: Path) -> bool:
    return (folder / "ctest" / "run.json").is_file()


def is_preview_of(new: Path, old: Path) -> bool:
    """Whether NEW holds a preview of OLD, finished or stopped before its end (its plan, written before
    any grading, names OLD), and not accepted."""
    plan = read_json(new / "ctest" / "run.json") or {}
    earlier = read_json(new / COMPARISON) or {}
    return ((plan.get("compare") or {}).get("dir") == str(old) or earlier.get("old", {}).get("dir") == str(old)) \
        and not earlier.get("accepted") and not earlier.get("accepting")


def unplanned(folder: Path) -> bool:
    """Whether FOLDER holds only what a grading run writes before its plan (stopped while its kit was
    built): ctest/ with no run.json, and nothing else."""
    return [p.name for p in folder.iterdir()] == ["ctest"] and not (folder / "ctest" / "run.json").exists()


def compare_refusal(old: Path, new: Path) -> str:
    """Why OLD (an earlier grading folder) cannot be compared with a regrade into NEW, or "". A NEW that
    holds a preview of OLD, finished or stopped, is resumed."""
    if not is_grading_folder(old):
        return f"{old} is not a grading folder (./workbook grade --out writes one: it has ctest/run.json)"
    if new == old or old in new.parents or new in old.parents:
        return f"the regrade goes into a folder of its own (--out), not into or around {old}"
    if new.exists() and any(new.iterdir()) and not is_preview_of(new, old) and not unplanned(new):
        if (read_json(new / COMPARISON) or {}).get("accepting"):
            return f"--out {new} is a preview being accepted: finish with ./workbook grade --accept {new} --into {old}"
        return f"--out {new} is not empty and is not a preview of {old}: give a new folder"
    return ""


@contextlib.contextmanager
def grading_lock(out_dir: Path):
    """Held while a grading run writes OUT_DIR, so that --accept never moves a folder being written."""
    (out_dir / "ctest").mkdir(parents=True, exist_ok=True)
    with open(out_dir / "ctest" / LOCK, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(f"another grading run is writing {out_dir}; wait for it to end") from None
        yield


def busy(folder: Path) -> bool:
    path = folder / "ctest" / LOCK
    if not path.exists():
        return False
    with open(path, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(lock, fcntl.LOCK_UN)
    return False


def record_digests(folder: Path) -> dict[str, str]:
    """Submission -> sha256 of its record, for every record in FOLDER."""
    found = {}
    for path in sorted((folder / "ctest" / STUDENTS).glob(f"*/{RECORD}")):
        found[path.parent.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def seed_objects(old: Path, new: Path) -> int:
    """OLD's object cache into NEW's (hard links where the filesystem allows, else copies): a file's
    object is reused only under the key of exactly the bytes its compile read. Returns the count."""
    source, target = old / "ctest" / "objects", new / "ctest" / "objects"
    target.mkdir(parents=True, exist_ok=True)
    count = 0
    for path in source.glob("*") if source.is_dir() else []:
        if path.suffix in (".lock", ".part") or ".part" in path.name or not path.is_file() or path.is_symlink():
            continue
        copy = target / path.name
        if copy.exists():
            continue
        try:
            os.link(path, copy)
        except OSError:
            shutil.copy2(path, copy)
        count += 1
    return count


def start(old: Path, new: Path) -> dict:
    """The regrade's plan entry: the grading compared with (its folder, its tree's commit, its records'
    digests), its object cache seeded into NEW."""
    plan = read_json(old / "ctest" / "run.json") or {}
    if is_preview_of(new, old):
        log(f"Regrade: {new} holds a preview of {old} that was stopped or finished before: resuming it (each "
            "submission graded already from the same inputs is kept)")
    seeded = seed_objects(old, new)
    log(f"Regrade: comparing with {old} (graded with the tree at {plan.get('commit', 'unknown')}); "
        f"{seeded} compiled objects and workers taken from its cache")
    return {"dir": str(old), "commit": plan.get("commit", "unknown"), "records": record_digests(old)}


# --- the comparison ----------------------------------------------------------------------------------

def renamed_checks(old_kit: dict | None, new_kit: dict | None) -> dict[tuple[str, str], str]:
    """The checks an erratum renamed: (chapter, old name) -> new name. Per chapter, the checks in the
    kits' order (their files' order) are matched by name; where a run of checks that only the old kit
    has sits in the place of a run that only the new one has, and both hold as many checks of an
    exercise (hidden, or visible), those are taken for each other in order (a check renamed, its text
    changed or not, in its place in its checks file; one removed and another added there look so too,
    and are compared so)."""
    renames: dict[tuple[str, str], str] = {}
    chapters = {c["chapter"] for c in [*((old_kit or {}).get("checks") or {}).values(),
                                       *((new_kit or {}).get("checks") or {}).values()]}
    for chapter in sorted(chapters):
        before = [c for c in ((old_kit or {}).get("checks") or {}).values() if c["chapter"] == chapter]
        after = [c for c in ((new_kit or {}).get("checks") or {}).values() if c["chapter"] == chapter]
        matcher = difflib.SequenceMatcher(None, [c["name"] for c in before], [c["name"] for c in after], autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "replace":
                continue
            kinds = {(c["exercise"], bool(c.get("hidden"))) for c in before[i1:i2]}
            for kind in kinds:
                was = [c for c in before[i1:i2] if (c["exercise"], bool(c.get("hidden"))) == kind]
                now = [c for c in after[j1:j2] if (c["exercise"], bool(c.get("hidden"))) == kind]
                if len(was) == len(now):
                    renames.update({(chapter, w["name"]): n["name"] for w, n in zip(was, now)})
    return renames


def verdict_changes(old: dict | None, new: dict | None, renames: dict[tuple[str, str], str] | None = None) -> list[dict]:
    """Every check whose status, points or maximum differ between two records of one submission (a
    check only one of them has counts as changed from or to "absent"; a check RENAMES names anew is
    compared with itself under its new name, and its change says what it was called)."""
    renames = renames or {}
    before = {(t["chapter"], renames.get((t["chapter"], t["name"]), t["name"])): t for t in (old or {}).get("tests", [])}
    after = {(t["chapter"], t["name"]): t for t in (new or {}).get("tests", [])}
    changes = []
    for key in sorted(set(before) | set(after), key=lambda k: (k[0], k[1])):
        was, now = before.get(key), after.get(key)
        summary = [(t["status"], t["points"], t["max_points"]) if t else None for t in (was, now)]
        if summary[0] == summary[1]:
            continue
        delta = (now["points"] if now else 0) - (was["points"] if was else 0)
        changes.append({"chapter": key[0], "check": key[1], "exercise": (now or was)["exercise"],
                        "hidden": bool((now or was).get("hidden")),
                        "old_status": was["status"] if was else "absent",
                        "new_status": now["status"] if now else "absent",
                        "old_points": was["points"] if was else 0, "new_points": now["points"] if now else 0,
                        "old_max": was["max_points"] if was else 0, "new_max": now["max_points"] if now else 0,
                        "delta": delta, "kind": "gained" if delta > 0 else "lost" if delta < 0 else "changed",
                        "message": safe_text(now["message"], 300) if now and now["status"] != "passed" else "",
                        **({"renamed_from": was["name"]} if was and now and was["name"] != now["name"] else {})})
    return changes


def comparison(plan) -> dict:
    """The preview of a regrade (PLAN: its grading run): the checks the erratum renamed; per
    submission, the checks whose verdict changed and the totals before and after; the work the
    regrade did and what it reused."""
    old_dir = Path(plan.compare["dir"])
    renames = renamed_checks(read_json(old_dir / "ctest" / "kit" / "kit.json"),
                             read_json(plan.out_dir / "ctest" / "kit" / "kit.json"))
    hidden = {(c["chapter"], c["name"]) for c in ((read_json(plan.out_dir / "ctest" / "kit" / "kit.json") or {})
                                                  .get("checks") or {}).values() if c.get("hidden")}
    names = sorted(set(plan.submissions) | set(plan.refused) | set(plan.compare["records"]))
    students, work = [], {"compiled": 0, "linked": 0, "checks_run": 0, "reused": 0}
    for name in names:
        old, new = read_record(old_dir, name), read_record(plan.out_dir, name)
        for key in work:
            work[key] += ((new or {}).get("work") or {}).get(key, 0)
        changes = verdict_changes(old, new, renames)
        entry = {"submission": name, "old_score": old["score"] if old else None,
                 "old_max": old["max_score"] if old else None, "new_score": new["score"] if new else None,
                 "new_max": new["max_score"] if new else None, "changes": changes,
                 "note": "graded only before" if new is None else "graded only now" if old is None else
                 "refused now" if new.get("refused") and not (old or {}).get("refused") else ""}
        students.append(entry)
    changed = [s for s in students if s["changes"] or s["note"] or s["old_score"] != s["new_score"]
               or s["old_max"] != s["new_max"]]
    return {"old": {"dir": str(old_dir), "commit": plan.compare["commit"]},
            "new": {"dir": str(plan.out_dir), "commit": plan.commit},
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "records": plan.compare["records"],
            "renamed": [{"chapter": chapter, "old": was, "new": now, "hidden": (chapter, now) in hidden}
                        for (chapter, was), now in sorted(renames.items())],
            "students": students, "changed": [s["submission"] for s in changed], "work": work}


def points(value) -> str:
    return "-" if value is None else f"{value:g}"


def terminal_lines(preview: dict) -> list[str]:
    """The preview as the terminal shows it: each student whose grade or a verdict changed, with
    every such check; the unchanged counted; both commits; what was reused and run."""
    old, new = preview["old"], preview["new"]
    lines = [f"Regrade preview: the tree at {new['commit']} against {old['dir']} (graded at {old['commit']})"]
    for rename in preview.get("renamed", []):
        lines.append(f"  renamed in this tree (in the same place of its checks file): {rename['chapter']}/{rename['old']} "
                     f"-> {rename['new']}{' [hidden]' if rename['hidden'] else ''}")
    for student in preview["students"]:
        if student["submission"] not in preview["changed"]:
            continue
        delta = ""
        if student["old_score"] is not None and student["new_score"] is not None:
            difference = student["new_score"] - student["old_score"]
            delta = f" ({difference:+g})" if difference else " (same total)"
        note = f" [{student['note']}]" if student["note"] else ""
        lines.append(f"  {safe_text(student['submission'], 70)}: {points(student['old_score'])}/"
                     f"{points(student['old_max'])} -> {points(student['new_score'])}/{points(student['new_max'])}"
                     f"{delta}{note}")
        for change in student["changes"]:
            hidden = " [hidden]" if change["hidden"] else ""
            was = f" (was {change['renamed_from']})" if change.get("renamed_from") else ""
            lines.append(f"    {change['kind']:<7} {change['chapter']}/{change['check']}{was}{hidden}: "
                         f"{change['old_status']} -> {change['new_status']} ({change['delta']:+g} of "
                         f"{change['new_max'] or change['old_max']:g})")
    unchanged = [s["submission"] for s in preview["students"] if s["submission"] not in preview["changed"]]
    if unchanged:
        shown = ", ".join(safe_text(n, 70) for n in unchanged[:10]) + (" ..." if len(unchanged) > 10 else "")
        lines.append(f"  {len(unchanged)} unchanged: {shown}")
    work = preview["work"]
    lines.append(f"Reused {work['reused']} verdicts; ran {work['checks_run']} checks, compiled {work['compiled']} "
                 f"files, linked {work['linked']} workers.")
    return lines


def preview(plan) -> int:
    """After a --compare run: the comparison on the terminal, in NEW_DIR/compare.json and compare.html."""
    data = comparison(plan)
    write_json(plan.out_dir / COMPARISON, data)
    try:
        from . import compare_page, pages
        compare_page.write_compare_page(data, plan.out_dir / PAGE, pages.make_context(ROOT, plan.chapters, commit=plan.commit))
        page = f"; the page: {plan.out_dir / PAGE}"
    except Exception as error:  # the comparison is written: a page that cannot be made is said
        page = f"; the page was not written: {safe_text(str(error))}"
    for line in terminal_lines(data):
        log(line)
    log(f"Nothing in {data['old']['dir']} has changed{page}. To replace its grades with these: "
        f"./workbook grade --accept {plan.out_dir} --into {data['old']['dir']}")
    return 0


# --- accepting --------------------------------------------------------------------------------------

def acceptance_refusal(new: Path, old: Path, resuming: bool = False) -> str:
    """Why NEW (a preview) may not replace OLD, or "". RESUMING: NEW is marked as being accepted by a
    run that was stopped before it moved anything."""
    data = read_json(new / COMPARISON)
    if data is None:
        return f"{new} holds no preview ({COMPARISON}): grade into it with --compare {old} first"
    if data["old"]["dir"] != str(old):
        return f"{new} is a preview against {data['old']['dir']}, not {old}"
    for folder in (old, new):
        if busy(folder):
            return f"a grading run is writing {folder}: wait for it to end"
    if record_digests(old) != data["records"]:
        return (f"{old}'s grades changed since the preview was made: preview again "
                f"(./workbook grade --compare {old} --out NEW_DIR ...)")
    plan = read_json(new / "ctest" / "run.json") or {}
    missing = [n for n in plan.get("submissions", {}) if read_record(new, n) is None]
    if missing:
        return f"the preview is not complete (no record for {', '.join(missing[:10])}): run it again"
    if data.get("accepted"):
        return f"{new} was accepted already"
    if data.get("accepting") and not resuming:
        return f"{new} is being accepted into {data['old']['dir']}"
    return ""


def relocate(folder: Path, location: Path) -> None:
    """FOLDER's CTest files written as they must be once FOLDER is at LOCATION (they name the
    submissions' folders and the kit by their paths)."""
    from ..course import all_chapters
    from .tree import write_submission_tests
    plan = read_json(folder / "ctest" / "run.json") or {}
    kit = read_json(folder / "ctest" / "kit" / "kit.json")
    if kit is None:
        return
    chapters = [c for c in all_chapters() if c.folder in plan.get("chapters", [])]
    for name in plan.get("submissions", {}):
        if tests_folder(folder / "ctest", name).is_dir():
            write_submission_tests(location / "ctest", name, kit, chapters, into=tests_folder(folder / "ctest", name))


def exchange(first: Path, second: Path) -> bool:
    """Exchanges two folders' places in one step (renameat2 RENAME_EXCHANGE); False where the kernel or
    the filesystem cannot."""
    libc = ctypes.CDLL(None, use_errno=True)
    function = getattr(libc, "renameat2", None)
    if function is None:
        return False
    if function(AT_FDCWD, os.fsencode(first), AT_FDCWD, os.fsencode(second), RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(code, f"exchanging {first} and {second}: {os.strerror(code)}")


def accept(new: Path, old: Path) -> Path:
    """NEW's grades in OLD's place, the old ones kept beside it; returns where they are kept.

    Each step can be killed and the same command completes it: the preview is marked "accepting"
    (with the name the old grades will be kept under) before anything moves, so that a rerun knows
    what it was doing; its CTest files are made to name OLD; the two folders are exchanged in one step
    (the mark moves with the preview, so a rerun that finds OLD marked knows the exchange was done);
    the old grades, now at NEW's path, are renamed to their kept name and their CTest files made to
    name it; last, the mark becomes "accepted". At every moment OLD holds one complete set of grades
    (where the filesystem cannot exchange, two renames leave it absent between them, and a rerun
    puts the preview there)."""
    data = read_json(new / COMPARISON)
    arrived = read_json(old / COMPARISON) or {}
    fresh = data is not None and not data.get("accepting") and not data.get("accepted")
    if not fresh and not (data or {}).get("accepting") and arrived.get("new", {}).get("dir") == str(new):
        if arrived.get("accepting"):  # a run stopped after the exchange: NEW's path holds the old grades
            return finish_acceptance(new, old, arrived, "exchanged in one step")
        if arrived.get("accepted"):
            raise UsageError(f"--accept: {new} was accepted already: {old} holds it since {arrived['accepted']['date']}, "
                             f"the grades it replaced are kept in {arrived['accepted']['replaced']}; nothing was changed")
    if data is not None and data.get("accepting") and data["old"]["dir"] == str(old):
        kept = Path(data["accepting"]["replaced"])      # a run stopped before the exchange: done again
        why = acceptance_refusal(new, old, resuming=True) if old.exists() else ""
        if why:
            unmark(new, data)
            raise UsageError(f"--accept: {why}; nothing was changed")
    else:
        why = acceptance_refusal(new, old)
        if why:
            raise UsageError(f"--accept: {why}; nothing was changed")
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        kept = old.with_name(f"{old.name}.replaced-{stamp}")
        data["accepting"] = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                             "replaced": str(kept)}
        write_json(new / COMPARISON, data)
    try:
        relocate(new, old)
        if not old.exists() and kept.exists():  # stopped between the two renames below
            exchanged = False
        else:
            exchanged = exchange(new, old)
            if not exchanged:             # two renames: OLD has no grades for the moment between them
                os.rename(old, kept)
        if not exchanged:
            try:
                os.rename(new, old)
            except OSError:
                os.rename(kept, old)
                raise
    except BaseException:
        if (new / COMPARISON).exists() and old.exists():  # nothing moved: NEW stays a preview of OLD
            unmark(new, data)
        raise
    return finish_acceptance(new, old, data, "exchanged in one step" if exchanged else
                             "moved (this filesystem cannot exchange two folders in one step)")


def unmark(new: Path, data: dict) -> None:
    """NEW a plain preview again, its CTest files naming its own place."""
    data.pop("accepting", None)
    write_json(new / COMPARISON, data)
    relocate(new, new)


def finish_acceptance(new: Path, old: Path, data: dict, how: str) -> Path:
    """After the exchange: the old grades (at NEW's path, unless a stopped run moved them already)
    under their kept name, naming it, and OLD's preview marked accepted."""
    kept = Path(data["accepting"]["replaced"])
    if new.exists() and not kept.exists():
        os.rename(new, kept)          # NEW's path holds the old grades: kept under their own name
    relocate(kept, kept)
    data["accepted"] = data.pop("accepting")
    write_json(old / COMPARISON, data)
    log(f"accepted: {old} now holds the regrade (the tree at {data['new']['commit']}), {how}; the grades it "
        f"replaced (the tree at {data['old']['commit']}) are kept in {kept}")
    return kept


def accept_command(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="./workbook grade --accept",
                                     description="replace an earlier grading's grades with a regrade previewed "
                                                 "by --compare, all of them at once")
    parser.add_argument("--accept", type=Path, required=True, metavar="NEW_DIR",
                        help="the regrade's folder (grade --compare OLD_DIR --out NEW_DIR)")
    parser.add_argument("--into", type=Path, required=True, metavar="OLD_DIR", help="the grading it replaces")
    args = parser.parse_args(argv)
    accept(args.accept.resolve(), args.into.resolve())
    return 0
