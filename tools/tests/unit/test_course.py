"""Each chapter's manifest (chapters/NN-topic/chapter.json, read by CMake and ./workbook alike) agrees
with what the chapter holds: every exercise's source in exercises/ and solutions/, its functions as
remote.def lists them for grading, a hints section, a figure script for each figure, a benchmark
target where the manifest says there is one; and a manifest whose ids are out of order is refused."""
from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path

from scalebook.course import all_chapters, read_manifest
from tests.harness import ROOT, expect, finish


def remote_functions(folder: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for match in re.finditer(r"^SCALEBOOK_REMOTE\(\s*([0-9.]+)\s*,\s*(\w+)", (folder / "remote.def").read_text(), re.M):
        found.setdefault(match.group(1), []).append(match.group(2))
    return found


def check_chapter(chapter) -> None:
    folder = ROOT / "chapters" / chapter.folder
    expect(chapter.folder.startswith(f"{chapter.number:02d}-"), f"{chapter.folder}: its number is {chapter.number}")
    for track in ("exercises", "solutions"):
        missing = [s for s in chapter.sources if not (ROOT / track / chapter.folder / s).is_file()]
        expect(not missing, f"{chapter.folder}: every source is in {track}/ (missing: {missing})")
    expect(chapter.functions_of() == remote_functions(folder),
           f"{chapter.folder}: the manifest's functions are remote.def's ({chapter.functions_of()})")
    hints = (folder / "hints.md").read_text()
    expect(all(re.search(rf"^## {re.escape(e)} ", hints, re.M) for e in chapter.exercises),
           f"{chapter.folder}: hints.md has a section for every exercise")
    expect(all((folder / "figures" / f"{f}.gp").is_file() for f in chapter.figures),
           f"{chapter.folder}: every figure has its script")
    expect(chapter.bench == (f"{chapter.target}_bench" in (folder / "CMakeLists.txt").read_text()),
           f"{chapter.folder}: bench is {chapter.bench}, as its CMakeLists.txt has a benchmark or not")
    expect(all(p >= 1 for p in chapter.points) and len(chapter.points) == len(chapter.sources),
           f"{chapter.folder}: every exercise's checks are worth a point or more")


def main() -> int:
    chapters = all_chapters()
    expect([c.number for c in chapters] == list(range(1, len(chapters) + 1)) and len(chapters) >= 7,
           f"the chapters are numbered 1 to {len(chapters)}, in order")
    for chapter in chapters:
        check_chapter(chapter)
    with tempfile.TemporaryDirectory(prefix="scalebook-manifest-") as temp:
        folder = Path(temp) / "03-attention-scaling"
        folder.mkdir()
        data = json.loads((ROOT / "chapters" / "03-attention-scaling" / "chapter.json").read_text())
        data["exercises"][0], data["exercises"][1] = data["exercises"][1], data["exercises"][0]
        (folder / "chapter.json").write_text(json.dumps(data))
        try:
            read_manifest(folder)
            refused = ""
        except ValueError as error:
            refused = str(error)
        expect("read_manifest" in refused and "3.2" in refused, f"ids out of order are refused, naming them: {refused}")
    return finish("every manifest agrees with its chapter")


if __name__ == "__main__":
    sys.exit(main())
