"""What ./workbook mutate reads and writes in a chapter's bug zoo: equivalent.txt and MUTANTS.md."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .mutate import Mutant


def equivalent_list(chapter_dir: Path) -> dict[str, str]:
    path = chapter_dir / "bugzoo" / "equivalent.txt"
    known: dict[str, str] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                key, _, reason = line.partition("  #")
                known[key.strip()] = reason.strip()
    return known


MUTANTS_HEADER = ("| run | mutants | stillborn | killed | equivalent | survivors |",
                  "|-----|--------:|----------:|-------:|-----------:|----------:|")


def recorded(chapter_dir: Path) -> tuple[dict[str, str], dict[str, list[str]]]:
    """The rows of chapters/NN-topic/bugzoo/MUTANTS.md by label, and the lines listing each row's survivors."""
    path = chapter_dir / "bugzoo" / "MUTANTS.md"
    rows: dict[str, str] = {}
    lists: dict[str, list[str]] = {}
    if path.exists():
        current = None
        for line in path.read_text().splitlines():
            cells = [c.strip() for c in line.strip("|").split("|")]
            if line.startswith("| ") and line not in MUTANTS_HEADER and len(cells) == 6:
                rows[cells[0]] = line
            elif line.startswith("Survivors of "):
                current = line[len("Survivors of "):].split(" (`")[0].rstrip(":")
                lists[current] = [line]
            elif current and line.startswith("- "):
                lists[current].append(line)
    return rows, lists


def recorded_row(chapter_dir: Path, label: str) -> tuple[list[int], list[str]]:
    """The figures of the row LABEL of MUTANTS.md and the keys of the survivors it lists."""
    rows, lists = recorded(chapter_dir)
    if label not in rows:
        raise SystemExit(f"mutate.py: {chapter_dir.name}/bugzoo/MUTANTS.md has no row {label!r} to recheck "
                         f"(its rows: {', '.join(rows) or 'none'})")
    figures = [int(c.strip()) for c in rows[label].strip().strip("|").split("|")[1:]]
    keys = [line.split("`")[1] for line in lists.get(label, [])[1:]]
    return figures, keys


def record_run(chapter_dir: Path, chapter_number: int, label: str, row: list[int], survivors: list[Mutant],
               command: str) -> Path:
    """Replace (or add) the row LABEL of chapters/NN-topic/bugzoo/MUTANTS.md with this run's figures."""
    path = chapter_dir / "bugzoo" / "MUTANTS.md"
    rows, lists = recorded(chapter_dir)
    rows[label] = "| " + " | ".join([label, *map(str, row)]) + " |"
    lists[label] = [f"Survivors of {label} (`{command}`):" if survivors else f"Survivors of {label} (`{command}`): none"]
    lists[label] += [f"- `{m.key}` ({m.what})" for m in survivors]
    text = [f"# Operator mutants of chapter {chapter_number}'s reference solutions", "",
            "Written by `./workbook mutate` with `--record`: each row is one run over the solutions' operator",
            "mutants. A stillborn mutant does not compile; an equivalent one is listed with its reason in",
            "`equivalent.txt`; a survivor passes every check and is a mistake the checks let through.", "",
            *MUTANTS_HEADER, *rows.values(), ""]
    for name in rows:
        if name in lists:
            text += [*lists[name], ""]
    path.write_text("\n".join(text))
    return path
