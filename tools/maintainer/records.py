"""What ./workbook mutate reads and writes in a chapter's bug zoo: equivalent.txt, named.txt and MUTANTS.md."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .mutate import Mutant


def keyed_lines(chapter_dir: Path, name: str, separator: str) -> dict[str, str]:
    """The lines `KEY<SEPARATOR>REST` of chapters/NN-topic/bugzoo/NAME (# lines are comments), by key."""
    path = chapter_dir / "bugzoo" / name
    known: dict[str, str] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                key, _, rest = line.partition(separator)
                known[key.strip()] = rest
    return known


def named_list(chapter_dir: Path) -> dict[str, str]:
    """chapters/NN-topic/bugzoo/named.txt: the operator mutants that are a known mistake, each as
    `KEY  [ID]  # why`; a check may name ID on them, and on no other operator mutant."""
    return {key: rest.split("]", 1)[0].strip() for key, rest in keyed_lines(chapter_dir, "named.txt", "  [").items()}


def equivalent_list(chapter_dir: Path) -> dict[str, str]:
    """chapters/NN-topic/bugzoo/equivalent.txt: the operator mutants no input tells from the reference."""
    return {key: reason.strip() for key, reason in keyed_lines(chapter_dir, "equivalent.txt", "  #").items()}


MUTANTS_HEADER = ("| run | mutants | stillborn | killed | equivalent | survivors | named wrongly |",
                  "|-----|--------:|----------:|-------:|-----------:|----------:|--------------:|")
# The header rows before the names were checked (a row of theirs has no "named wrongly" figure).
OLD_HEADER = ("| run | mutants | stillborn | killed | equivalent | survivors |",
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
            if line.startswith("| ") and line not in MUTANTS_HEADER + OLD_HEADER and len(cells) in (6, 7):
                rows[cells[0]] = line if len(cells) == 7 else line + " - |"  # not checked then
            elif line.startswith("Survivors of "):
                current = line[len("Survivors of "):].split(" (`")[0].rstrip(":")
                lists[current] = [line]
            elif current and line.startswith("- "):
                lists[current].append(line)
    return rows, lists


def recorded_row(chapter_dir: Path, label: str) -> tuple[list[int], list[str]]:
    """The figures of the row LABEL of MUTANTS.md and the keys of the survivors and of the mutants
    named wrongly that it lists."""
    rows, lists = recorded(chapter_dir)
    if label not in rows:
        raise SystemExit(f"mutate.py: {chapter_dir.name}/bugzoo/MUTANTS.md has no row {label!r} to recheck "
                         f"(its rows: {', '.join(rows) or 'none'})")
    figures = [int(c.strip()) if c.strip().isdigit() else 0 for c in rows[label].strip().strip("|").split("|")[1:]]
    keys = [line.split("`")[1] for line in lists.get(label, [])[1:]]
    return figures, keys


def named_wrongly_keys(chapter_dir: Path, label: str) -> set[str]:
    """The keys of the mutants the row LABEL lists as named wrongly (killed, but naming a mistake
    they are not)."""
    _, lists = recorded(chapter_dir)
    return {line.split("`")[1] for line in lists.get(label, [])[1:] if line.startswith("- named wrongly: ")}


def record_run(chapter_dir: Path, chapter_number: int, label: str, row: list[int], survivors: list[Mutant],
               command: str, wrongly_named: list[tuple[Mutant, list[str]]] | None = None) -> Path:
    """Replace (or add) the row LABEL of chapters/NN-topic/bugzoo/MUTANTS.md with this run's figures."""
    path = chapter_dir / "bugzoo" / "MUTANTS.md"
    rows, lists = recorded(chapter_dir)
    rows[label] = "| " + " | ".join([label, *map(str, row)]) + " |"
    lists[label] = [f"Survivors of {label} (`{command}`):" if survivors else f"Survivors of {label} (`{command}`): none"]
    lists[label] += [f"- `{m.key}` ({m.what})" for m in survivors]
    lists[label] += [f"- named wrongly: `{m.key}` ({m.what}) named {', '.join(f'[{i}]' for i in ids)}"
                     for m, ids in (wrongly_named or [])]
    text = [f"# Operator mutants of chapter {chapter_number}'s reference solutions", "",
            "Written by `./workbook mutate` with `--record`: each row is one run over the solutions' operator",
            "mutants. A stillborn mutant does not compile; an equivalent one is listed with its reason in",
            "`equivalent.txt`; a survivor passes every check and is a mistake the checks let through. A",
            "killed mutant is named wrongly when a failing check names a known mistake it is not (`named.txt`",
            "lists the operator mutants that are a known mistake); - where a run did not check names.", "",
            *MUTANTS_HEADER, *rows.values(), ""]
    for name in rows:
        if name in lists:
            text += [*lists[name], ""]
    path.write_text("\n".join(text))
    return path
