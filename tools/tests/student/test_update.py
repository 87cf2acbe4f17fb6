#!/usr/bin/env python3
"""`./workbook update` takes the instructor's fixes without losing a line of the student's work.

No build: the files release writes into an edition (edition.edition_files: release's own
write_files, without the lessons' output) in a git repository of the instructor's; the student,
not root (uid 65534 when this runs as root), clones it as the student README says. Before the first fix the student has solved 1.1 and
committed it, solved 1.3 without committing, and is half way through 1.2, not committed either.
The fix changes a sentence of chapter 1's page, a check of 1.2, the instructions of 1.1 and 1.3,
and the code of 1.2's stub (a parameter renamed), the very file being edited. A plain `git pull`
refuses and changes nothing. `./workbook update`, in a terminal (a pty) whose git would open an
editor for a merge message: no editor opens; 1.1 and 1.3 get the new instructions with the
student's code below the fence byte for byte; 1.2 is the student's byte for byte, with the
instructor's change beside it (.erratum.diff), and exit status 1 says a change is left to make by
hand; every other file is the instructor's new version; the uncommitted work is a commit of its
own; nothing else is left uncommitted. A control shows the editor would have opened: a plain
`git pull --no-rebase` in the same terminal opens it. Then a second fix changes 1.1's code and the
student takes it with a plain `git pull --no-rebase`, which stops on a conflict: the markers are
explained with the next step, and `./workbook update` finishes that merge keeping 1.1 byte for
byte. Again, update says there is nothing new and names the change still to make by hand. In the
instructor's tree, update refuses.

    test_update.py
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from scalebook.loop import errata
from tests.harness import WORKBOOK, expect, finish
from tests.student.edition import (CHAPTER, RENAMED, Student, above_fence, below_fence, commit, differing,
                                   edition_files, first_erratum, solved)


def edition(base: Path) -> Path:
    """The files release writes into a new edition (without a build), committed."""
    tree = base / "edition"
    edition_files(tree, base)
    commit(tree, "The student edition")
    return tree


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="scalebook-update-") as temp:
        base = Path(temp)
        os.chmod(base, 0o755)
        tree = edition(base)
        student = Student(base / "home", "")
        recorder = student.home / "editor.sh"
        opened = student.home / "editor-opened"
        recorder.write_text(f"#!/bin/sh\necho \"$@\" >> {opened}\nexit 0\n")
        recorder.chmod(0o755)
        student.own(recorder)
        for setting in (["safe.directory", str(tree / ".git")], ["core.editor", str(recorder)]):
            student.run(["git", "config", "--global", "--add", *setting], student.home)
        clone = student.home / "scalebook"
        cloned = student.run(["git", "clone", "-q", str(tree), str(clone)], student.home)
        expect(cloned.returncode == 0, f"the student clones the edition {cloned.stderr[-300:]}")
        me = ["-c", "user.name=student", "-c", "user.email=student@localhost"]  # update does without
        folder = clone / "exercises" / CHAPTER
        ex1, ex2, ex3 = (folder / name for name in ("ex1_fit_scaling.cpp", "ex2_apply_scaling.cpp",
                                                    "ex3_scale_train_test.cpp"))
        mine = {path: solved(path.read_text(), CHAPTER, path.name) for path in (ex1, ex2, ex3)}
        mine[ex2] = mine[ex2].replace("return", "return /* half done */", 1)
        for path, text in mine.items():
            path.write_text(text)
            student.own(path)
        student.run(["git", *me, "commit", "-q", "-m", "exercise 1.1", str(ex1.relative_to(clone))], clone)

        # The first fix: a page's sentence, a check, 1.1's and 1.3's instructions, 1.2's code.
        theirs = tree / "exercises" / CHAPTER
        first_erratum(tree)
        commit(tree, "Errata: chapter 1's page, a check of 1.2, the instructions of 1.1 and 1.3, 1.2's stub")

        before = {path: path.read_bytes() for path in (ex1, ex2, ex3)}
        pulled = student.run(["git", "pull"], clone)
        expect(pulled.returncode != 0 and {path: path.read_bytes() for path in before} == before,
               f"a plain git pull refuses and changes nothing: {pulled.stderr.strip()[-300:]}")

        updated = student.in_terminal(f"{clone / 'workbook'} update", clone)
        said = updated.stdout + updated.stderr
        print(f"--- ./workbook update (committed 1.1, uncommitted 1.2 and 1.3):\n{said}---")
        expect(not opened.exists(), "./workbook update opens no editor, in a terminal")
        expect(updated.returncode == 1 and "Traceback" not in said,
               f"update ends with status 1: a change is left to make by hand (status {updated.returncode})")
        new = {path: subprocess.run(["git", "show", f"HEAD:exercises/{CHAPTER}/{path.name}"], cwd=tree,
                                    capture_output=True, text=True).stdout for path in (ex1, ex2, ex3)}
        for path, what in ((ex1, "committed"), (ex3, "uncommitted")):
            now = path.read_text()
            expect(below_fence(now) == below_fence(mine[path]) and above_fence(now) == above_fence(new[path]),
                   f"{path.name} ({what} work): the new instructions above the fence, the student's code below "
                   f"it byte for byte")
        expect(ex2.read_bytes() == before[ex2], "1.2, the file being edited whose code the fix changed: the "
                                                "student's, byte for byte")
        diff = folder / f"ex2_apply_scaling.cpp{errata.PATCH_SUFFIX}"
        patch = diff.read_text() if diff.exists() else ""
        expect(f"-Matrix apply_scaling([[maybe_unused]] const Matrix& x, [[maybe_unused]] {RENAMED[0]} {{" in patch
               and f"+Matrix apply_scaling([[maybe_unused]] const Matrix& x, [[maybe_unused]] {RENAMED[1]} {{" in patch
               and "make the change" in said and str(diff.relative_to(clone)) in said,
               "the instructor's change to 1.2 is beside it as a patch, which update names")
        print(f"--- {diff.relative_to(clone)}:\n{patch}---")
        expect(not differing(clone, student, {f"exercises/{CHAPTER}/{p.name}" for p in (ex1, ex2, ex3)}),
               f"every other file is the instructor's new version: "
               f"{differing(clone, student, {f'exercises/{CHAPTER}/{p.name}' for p in (ex1, ex2, ex3)})}")
        status = student.run(["git", "status", "--porcelain"], clone).stdout
        expect(status == f"?? exercises/{CHAPTER}/ex2_apply_scaling.cpp{errata.PATCH_SUFFIX}\n",
               f"nothing is left uncommitted but the patch: {status!r}")
        parents = student.run(["git", "log", "-1", "--format=%P", "HEAD"], clone).stdout.split()
        saved = student.run(["git", "show", "--name-only", "--format=%s", "HEAD^1"], clone).stdout.split("\n")
        expect(len(parents) == 2 and saved[0] == errata.WIP_MESSAGE
               and sorted(filter(None, saved[1:])) == [f"exercises/{CHAPTER}/{p.name}" for p in (ex2, ex3)]
               and "Work in progress" in said,
               f"the uncommitted work is a commit of its own, merged with the fix: {saved}")

        # From here on the student has told git their name, as git pull needs (update did without).
        for setting in (["user.name", "student"], ["user.email", "student@localhost"]):
            student.run(["git", "config", "--global", *setting], student.home)

        # The control: in the same terminal, a plain git pull of a fix opens the editor.
        control = student.home / "habit"
        student.run(["git", "clone", "-q", str(tree), str(control)], student.home)
        student.run(["git", "reset", "-q", "--hard", "HEAD~1"], control)
        (control / "exercises" / CHAPTER / "ex5_knn_predict.cpp").write_text(
            (control / "exercises" / CHAPTER / "ex5_knn_predict.cpp").read_text() + "// mine\n")
        student.own(control)
        student.run(["git", *me, "commit", "-q", "-am", "mine"], control)
        habit = student.in_terminal("git pull -q --no-rebase", control)
        expect(opened.exists(), f"control: in that terminal, a plain git pull --no-rebase opens the editor "
                                f"{habit.stdout[-300:]}{habit.stderr[-300:]}")

        # The second fix changes 1.1's code; the student takes it with a plain git pull.
        student.run(["git", *me, "commit", "-q", "-am", "exercise 1.2, more"], clone)
        committed = ex1.read_bytes()
        stub1 = theirs / "ex1_fit_scaling.cpp"
        stub1.write_text(stub1.read_text().replace("const Matrix& train)", "const Matrix& rows)"))
        commit(tree, "Errata: 1.1's stub")
        pulled = student.run(["git", "pull", "--no-rebase"], clone)
        marked = errata.conflict_lines(ex1.read_text()) or [0]
        expect(pulled.returncode != 0 and marked != [0], f"a plain git pull stops on a conflict in 1.1 and leaves "
                                                         f"its markers {pulled.stdout[-300:]}{pulled.stderr[-300:]}")
        message = errata.marker_message("exercises/01-feature-scaling/ex1_fit_scaling.cpp", marked,
                                        student.merging(clone))
        expect("./workbook update" in message and f":{marked[0]} " in message,
               f"check's message for the markers names the line and the next step: {message}")
        updated = student.run([str(clone / "workbook"), "update"], clone)
        said = updated.stdout + updated.stderr
        print(f"--- ./workbook update after a git pull that stopped on a conflict:\n{said}---")
        expect(ex1.read_bytes() == committed, "update finishes the pull with 1.1 as the student had it, byte for byte")
        left = sorted(p.name for p in folder.iterdir() if not p.name.endswith(".cpp"))
        expect(left == ["ex1_fit_scaling.cpp.conflict", f"ex1_fit_scaling.cpp{errata.PATCH_SUFFIX}",
                        f"ex2_apply_scaling.cpp{errata.PATCH_SUFFIX}"],
               f"beside it: the file as the pull left it and the instructor's change: {left}")
        expect(not student.merging(clone), "the merge is finished")
        status = student.run(["git", "status", "--porcelain", "--untracked-files=no"], clone).stdout
        expect(status == "" and not differing(clone, student, {f"exercises/{CHAPTER}/{p.name}"
                                                                          for p in (ex1, ex2, ex3)}),
               f"committed, every other file the instructor's: {status!r}")

        again = student.run([str(clone / "workbook"), "update"], clone)
        said = again.stdout + again.stderr
        print(f"--- ./workbook update with nothing new:\n{said}---")
        expect(again.returncode == 1 and "No new fixes" in said and "ex1_fit_scaling.cpp.erratum.diff" in said,
               "with nothing new, update says so and names the changes still to make by hand")

        refused = subprocess.run([sys.executable, str(WORKBOOK), "update"], capture_output=True, text=True)
        expect(refused.returncode == 2 and "instructor's tree" in refused.stderr,
               f"in the instructor's tree, update refuses: {refused.stderr[-300:]}")
    return finish("update never costs the student a line")


if __name__ == "__main__":
    sys.exit(main())
