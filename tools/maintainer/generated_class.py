"""A generated class for the class analysis's test and timing: mutants, renamed copies, own code.

Each submission is a copy of the reference solutions (the "just exercises/" form) with, where asked,
bug-zoo mutants applied (chapters/NN-topic/bugzoo/NAME.mutant, by cmake/apply_mutant.py's own rule),
or a copy of another submission with its variables and parameters renamed, or chapter 4's masked
softmax written independently (its own structure and names, the same results bit for bit).
"""
from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

from scalebook.config import ROOT

CH4 = "04-causal-masking"
SOFTMAX = f"{CH4}/ex2_masked_softmax.cpp"

# Chapter 4's masked softmax written from the contract alone: a while loop over rows, the maximum
# found among the allowed entries, exponentials only where allowed. Bit-identical to the
# reference (masked entries add an exact 0 to its sum).
INDEPENDENT_SOFTMAX = """\
// masked_softmax, my own way: the row's largest allowed score, then exponentials where allowed.
#include "causal_masking.hpp"

#include <cmath>

namespace scalebook::ch04 {

Matrix masked_softmax(const Matrix& scores, const BoolMatrix& allowed) {
  require_nonempty("masked_softmax", "scores", scores);
  const bool same_shape = allowed.rows() == scores.rows() && allowed.cols() == scores.cols();
  if (!same_shape)
    throw ShapeError("masked_softmax: allowed " + shape_of(allowed) + " must have the shape of scores " +
                     shape_of(scores));
  require_finite("masked_softmax", "scores", scores);
  Matrix out = Matrix::Zero(scores.rows(), scores.cols());
  Index r = 0;
  while (r < scores.rows()) {
    bool seen = false;
    double top = 0.0;
    for (Index c = 0; c < scores.cols(); ++c) {
      if (!allowed(r, c)) continue;
      if (!seen || scores(r, c) > top) top = scores(r, c);
      seen = true;
    }
    if (seen) {
      double total = 0.0;
      for (Index c = 0; c < scores.cols(); ++c) {
        if (!allowed(r, c)) continue;
        out(r, c) = std::exp(scores(r, c) - top);
        total += out(r, c);
      }
      out.row(r) /= total;
    }
    ++r;
  }
  return out;
}

}  // namespace scalebook::ch04
"""

TYPES = r"(?:double|float|int|bool|Index|Matrix|Vector|RowVector|BoolMatrix|auto|std::size_t|std::vector<[^;(){}]*?>)"
DECLARED = re.compile(rf"\b{TYPES}\s*&?\s+([a-z_][a-z0-9_]*)\s*(?=[=;({{,)\[])")


def _apply_mutant_module():
    spec = importlib.util.spec_from_file_location("apply_mutant", ROOT / "cmake" / "apply_mutant.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


APPLY = _apply_mutant_module()


def mutant_path(chapter: str, name: str) -> Path:
    return ROOT / "chapters" / chapter / "bugzoo" / f"{name}.mutant"


def mutant_file(chapter: str, name: str) -> str:
    """The file of solutions/CHAPTER a mutant changes, as CHAPTER/FILE."""
    fields, _ = APPLY.parse(mutant_path(chapter, name))
    return f"{chapter}/{fields['file']}"


def all_mutants(chapters: list[str] | None = None) -> list[tuple[str, str]]:
    """(chapter, mutant) for every bug-zoo mutant of CHAPTERS (default: every chapter)."""
    found = []
    for folder in sorted((ROOT / "chapters").iterdir()):
        if chapters is None or folder.name in chapters:
            found += [(folder.name, p.stem) for p in sorted((folder / "bugzoo").glob("*.mutant"))]
    return found


def reference_copy(target: Path, chapters: list[str] | None = None) -> Path:
    """TARGET: the reference solutions (of CHAPTERS, default all)."""
    source = ROOT / "solutions"
    if chapters is None:
        shutil.copytree(source, target)
    else:
        for chapter in chapters:
            shutil.copytree(source / chapter, target / chapter)
    return target


def apply_mutant(submission: Path, chapter: str, name: str) -> None:
    """The mutant CHAPTER/bugzoo/NAME applied to SUBMISSION's copy of its file."""
    relative = mutant_file(chapter, name)
    path = submission / relative
    mutated = APPLY.apply(mutant_path(chapter, name), path.read_text().splitlines())
    path.write_text("\n".join(mutated) + "\n")


FUNCTION = re.compile(r"^[A-Za-z][\w:<>]*\s+([A-Za-z_]\w*)\(", re.MULTILINE)
LITERALS = re.compile(r'("(?:[^"\\\n]|\\.)*"|//[^\n]*)')


def renamed(text: str, tag: str = "my") -> str:
    """TEXT with every variable and parameter it declares renamed (TAG_NAME): what a student who
    copies does to hide it. Functions, members (.row), qualified names, strings and comments are kept."""
    functions = set(FUNCTION.findall(text))
    names = sorted(set(DECLARED.findall(text)) - functions, key=len, reverse=True)
    parts = LITERALS.split(text)
    for index in range(0, len(parts), 2):  # the code between literals and comments
        for name in names:
            parts[index] = re.sub(rf"(?<![\w.:>]){re.escape(name)}\b(?!\s*::)", f"{tag}_{name}", parts[index])
    return "".join(parts)


def renamed_copy(source: Path, target: Path, tag: str = "my") -> Path:
    """TARGET: SOURCE's files with their variables renamed."""
    shutil.copytree(source, target)
    for path in target.rglob("*.cpp"):
        path.write_text(renamed(path.read_text(), tag))
    return target
