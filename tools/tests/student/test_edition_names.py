#!/usr/bin/env python3
"""The student edition names nothing it lacks: no solutions/, no reference build or preset, no
command it refuses.

No build: the files release writes into a new edition (tests/student/edition.py's edition_files,
through release's own write_files and readme) are grepped, outside tools/ (the command itself,
which names what it refuses), for edition.MISSING: `solutions/`, `--reference`, `build/reference`,
`--preset reference`, and `./workbook C` for every command C of tools/workbook.py's table that is
not for students (the instructors' the edition refuses, the maintainers' it lacks). Controls show
the grep can fail: each kind of mention, put into a file of the copy (a contract header, a page, a
hint, the README, a build file), is found and named with its line, while the commands the edition
has and one that only begins like a refused one (`./workbook timeout`) are not. Then the edition's
CMakePresets.json configures the student track only, and `./workbook --help` in it lists no refused
command while each still answers that it is not part of the edition (or does not exist). Seconds.

    test_edition_names.py
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.harness import expect, finish
from tests.student.edition import REFUSED, commit, edition_files, missing_named


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="scalebook-names-") as temp:
        base = Path(temp)
        tree = base / "edition"
        edition_files(tree, base)
        commit(tree, "The student edition")
        named = missing_named(tree)
        expect(not named, "no file of the edition outside tools/ (pages, hints, contract headers, stubs, the book's "
                          "sources, README, build files) names solutions/, the reference's build or presets, or "
                          f"./workbook {', '.join(REFUSED)}" + "".join(f"\n    {line}" for line in named[:30]))
        expect((tree / "README.md").exists() and "./workbook update" in (tree / "README.md").read_text(),
               "the grep read the edition's README, written from its template")

        # Controls: each kind of mention, planted, is found; what the edition has is not.
        planted = {
            "chapters/01-feature-scaling/feature_scaling.hpp": "/// the reference is in solutions/01-feature-scaling/",
            "chapters/03-attention-scaling/lesson.md": "Compare with `./workbook run 3 --reference`.",
            "chapters/02-small-models/hints.md": "See build/reference/docs for the figures.",
            "CMakeLists.txt": "# cmake --preset reference builds it",
            **{f"docs/planted-{name}.md": f"Then run ./workbook {name} DIR." for name in REFUSED},
        }
        harmless = {"docs/planted-fine.md": "./workbook check 1, ./workbook update, ./workbook bench 7 --help, "
                                            "./workbook timeout, ./workbook --timeout 9 check"}
        for name, line in {**planted, **harmless}.items():
            path = tree / name
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a") as out:
                out.write(f"\n{line}\n")
        commit(tree, "planted")
        found = missing_named(tree)
        for name, line in planted.items():
            expect(any(f.startswith(f"{name}:") and line.strip() in f for f in found),
                   f"control: a planted mention is found and named with its line: {name}: {line}")
        expect(not any(f.startswith("docs/planted-fine.md:") for f in found),
               "control: the commands the edition has, and ./workbook timeout, are not taken for refused ones")

        presets = json.loads((tree / "CMakePresets.json").read_text())
        configure = [p["name"] for p in presets.get("configurePresets", []) if not p.get("hidden")]
        expect(configure == ["student"], f"the edition's CMakePresets.json configures the student track only: {configure}")

        helped = subprocess.run([sys.executable, str(tree / "tools" / "workbook.py"), "--help"], capture_output=True,
                                text=True, cwd=tree)
        listed = [name for name in REFUSED if f"\n    {name} " in helped.stdout or f"\n    {name}\n" in helped.stdout]
        expect(helped.returncode == 0 and "update" in helped.stdout and not listed,
               f"the edition's ./workbook --help lists update and none of {', '.join(REFUSED)}: {listed}")
        for name in REFUSED:
            said = subprocess.run([sys.executable, str(tree / "tools" / "workbook.py"), name], capture_output=True,
                                  text=True, cwd=tree, stdin=subprocess.DEVNULL)
            expect(said.returncode == 2 and ("not part of the student edition" in said.stderr
                                             or "invalid choice" in said.stderr),
                   f"./workbook {name} in the edition is refused (status {said.returncode}): "
                   f"{said.stderr.strip().splitlines()[-1] if said.stderr.strip() else ''}")
    return finish("the edition names nothing it lacks")


if __name__ == "__main__":
    sys.exit(main())
