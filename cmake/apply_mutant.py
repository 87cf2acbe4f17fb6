#!/usr/bin/env python3
"""Apply one bug-zoo mutant (chapters/NN-topic/bugzoo/NAME.mutant) to the current reference.

    apply_mutant.py MUTANT SOLUTIONS_DIR OUTPUT_FILE      writes the mutated copy of the named file
    apply_mutant.py --field FIELD MUTANT                   prints a header field (mistake, id, also, file)

A mutant is a small change, never a copy: header lines `mistake:` and `file:` (a file of
solutions/NN-topic/), optionally `id:` (the id of the named mistake it is an instance of, when
another mutant's name is that id; by default the mutant's own name) and `also:` (ids of other
mistakes whose output it also gives on some check's input, space-separated, each with its reason
in a comment), then hunks. A hunk is a run of `-` lines, the exact text of consecutive
lines of the reference, followed by the `+` lines that replace them; `@@` separates hunks and `#`
starts a comment. Each run of `-` lines must occur exactly once in the reference: when the
reference moves on, the mutant stops applying and the build says so, instead of testing old code.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

FIELDS = ("mistake", "id", "also", "file")
REQUIRED = ("mistake", "file")


class MutantError(Exception):
    pass


def parse(path: Path) -> tuple[dict[str, str], list[tuple[list[str], list[str]]]]:
    fields: dict[str, str] = {}
    hunks: list[tuple[list[str], list[str]]] = []
    removed: list[str] = []
    added: list[str] = []

    def close_hunk(number: int) -> None:
        nonlocal removed, added
        if added and not removed:
            raise MutantError(f"{path}:{number}: a hunk needs '-' lines to anchor its '+' lines")
        if removed:
            hunks.append((removed, added))
        removed, added = [], []

    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if line.startswith("-"):
            if added:  # a new run of '-' after '+' lines starts a new hunk
                close_hunk(number)
            removed.append(line[1:])
        elif line.startswith("+"):
            if not removed:
                raise MutantError(f"{path}:{number}: '+' line before any '-' line")
            added.append(line[1:])
        elif line.strip() == "@@":
            close_hunk(number)
        elif line.startswith("#") or not line.strip():
            continue
        else:
            key, sep, value = line.partition(":")
            if not sep or key.strip() not in FIELDS or removed:
                raise MutantError(f"{path}:{number}: expected 'mistake:', 'id:', 'also:', 'file:', "
                                  f"a '-'/'+' line or '@@', got: {line!r}")
            fields[key.strip()] = value.strip()
    close_hunk(0)
    fields.setdefault("id", path.stem)
    fields.setdefault("also", "")
    missing = [f for f in REQUIRED if not fields.get(f)]
    if missing:
        raise MutantError(f"{path}: missing {', '.join(missing)}")
    if not hunks:
        raise MutantError(f"{path}: no change ('-' and '+' lines)")
    return fields, hunks


def apply(path: Path, reference: list[str]) -> list[str]:
    _, hunks = parse(path)
    lines = list(reference)
    for removed, added in hunks:
        width = len(removed)
        places = [i for i in range(len(lines) - width + 1) if lines[i:i + width] == removed]
        if len(places) != 1:
            where = "does not occur" if not places else f"occurs {len(places)} times"
            raise MutantError(f"{path}: the mutant no longer applies: its lines\n"
                              + "\n".join("  -" + r for r in removed)
                              + f"\n{where} in the reference; update the mutant to the current code")
        at = places[0]
        lines[at:at + width] = added
    if lines == reference:
        raise MutantError(f"{path}: the change leaves the reference as it is")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--field", choices=FIELDS, help="print this header field and exit")
    parser.add_argument("mutant", type=Path)
    parser.add_argument("solutions", type=Path, nargs="?", help="the chapter's solutions folder")
    parser.add_argument("output", type=Path, nargs="?", help="where the mutated file is written")
    args = parser.parse_args()
    try:
        fields, _ = parse(args.mutant)
        if args.field:
            print(fields[args.field])
            return 0
        if args.solutions is None or args.output is None:
            parser.error("SOLUTIONS_DIR and OUTPUT_FILE are required unless --field is given")
        source = args.solutions / fields["file"]
        if not source.is_file():
            raise MutantError(f"{args.mutant}: file: {fields['file']} is not in {args.solutions}")
        mutated = apply(args.mutant, source.read_text().splitlines())
        args.output.parent.mkdir(parents=True, exist_ok=True)
        # The mutant stands in for the reference file: compiler messages name the mutant.
        text = "\n".join(mutated) + "\n"
        if not args.output.exists() or args.output.read_text() != text:
            args.output.write_text(text)
    except MutantError as error:
        print(f"bug zoo: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
