"""The numbers of a lesson page (scalebook.prose), on a fixture course of its own: a number typed by
hand in the prose is reported with its line (the review's planted case, 709 made 610, among them),
what is not a result is left alone (list numbers, exercise ids, sections, versions, years in
citations, a formula's constants, code, commands, the References), a citation {{TEXT from SOURCE}}
is held to its source, and the docs build's fill-in puts the lesson's values in or names each one
that is missing."""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from scalebook import prose
from tests.harness import TOOLS, expect, finish

PAGE = r"""Chapter 1 — A fixture {#ch01}
===

@tableofcontents

## The question {#ch01_question}

A double overflows for x a little above {{exp_overflow}}, and the scores of exercise 1.2 and 2.1
reach {{largest_score}}. As in chapters 1 and 2 and section 4.3 of the 2nd ed. 2021 of the book,
and in Keras 3.3, PyTorch 2.5, Doxygen 1.9.4 and GPT-2 (Hoffmann et al., 2022; Kaplan et al. (2020)),
as LayerNorm does (Ba et al., 2016: a citation) and Harrison and Rubinfeld,
1978, say,
eq. 4 and table 2, bugs 2 and 3. The exponent is {{0.34 from Hoffmann et al.}}; the checks try
scores of {{1000 from checks.cpp}}; it is 0 or 1, never `softmax(1000)` here.
PLANTED

\f[
  \mathrm{Var}\!\left(\frac{q \cdot k}{\sqrt{d_k}}\right) = \frac{d_k + 3}{4 d_k}, \quad 10^{18}, \; 2^{-53}
\f]

With \f$n - 1\f$ and \f$x^2\f$ the formula keeps its constants.

\snippet 01-fixture/lesson.out ranges

\image html ch01_ranges.svg "The range of {{rows}} rows on 1 axis"

1. A list item's number is no result.
2. Nor is this one, 1.1's id.

```
a fenced block: 610 412 3.14
```

    ./workbook bench 2      # an indented block: 610

## References {#ch01_references}

- J. Hoffmann et al., "Training Compute-Optimal Large Language Models", 2022: E = 1.69, 400 runs.
"""

CHECKS = 'TEST_CASE("1.1 large scores") { CHECK(softmax(1000.0) == 1); }\n'


def course(root: Path, page: str) -> Path:
    """A fixture course of two chapters (their manifests give the exercise ids); ROOT/chapters/01-fixture."""
    for number, name in ((1, "01-fixture"), (2, "02-other")):
        folder = root / "chapters" / name
        folder.mkdir(parents=True, exist_ok=True)
        manifest = {"number": number, "contract": "contract.hpp", "summary": "a fixture.", "exercises": [{"id": f"{number}.{k}", "source": f"ex{k}.cpp"} for k in (1, 2)]}
        (folder / "chapter.json").write_text(json.dumps(manifest))
    folder = root / "chapters" / "01-fixture"
    (folder / "checks.cpp").write_text(CHECKS)
    (folder / "lesson.md").write_text(page)
    return folder


def problems_with(root: Path, planted: str) -> list[prose.Problem]:
    return prose.check(course(root, PAGE.replace("PLANTED", planted)))


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="scalebook-prose-") as temp:
        root = Path(temp)
        clean = problems_with(root, "")
        expect(clean == [], f"a page whose numbers come from the run or name their source has no problem: {clean}")
        planted_line = PAGE.split("\n").index("PLANTED") + 1

        # The review's planted case: the run's 709 typed by hand as 610, in prose and in a formula.
        for planted in ("A double overflows for x a little above 610.", r"It overflows above \f$x = 610\f$.",
                        "The fit gives 0.0910.", "Scores reach 1e+03.", "It took 4-fold validation.",
                        "A width of 64 units.", "It reads (0.7071, 0.7071).", "About 93 tokens per parameter.",
                        "a width-64 network", "The values are\n610. The lesson prints them.",
                        "Sizes (2048, 4096) rows.", "It fell by 2019, then."):
            found = problems_with(root, planted)
            lines = range(planted_line, planted_line + planted.count("\n") + 1)
            expect(found and all(p.line in lines and "typed by hand" in p.message for p in found),
                   f"a number typed by hand is reported on its line: {planted!r} -> {[str(p) for p in found]}")
        # A citation is held to its source.
        for planted, why in (("It is {{0.35 from checks.cpp}}.", "does not occur in checks.cpp"),
                             ("It is {{1000.5 from checks.cpp}}.", "does not occur in checks.cpp"),
                             ("It is {{0.34 from Chollet}}.", "neither a file"),
                             ("It is {{Two Words}}.", "a placeholder is"),
                             ("It is {{610.", "opens no placeholder")):
            found = problems_with(root, planted)
            expect(found and all(p.line == planted_line for p in found) and any(why in p.message for p in found),
                   f"a citation or placeholder that does not hold is reported: {planted!r} -> {[str(p) for p in found]}")
        found = problems_with(root, "It is {{1.69 from Hoffmann et al.}} and {{1000 from data/absent.txt}}.")
        expect(len(found) == 1 and "data/absent.txt" in found[0].message,
               f"a source is a file of the chapter or the repository, or words of the References: {found}")

        # The fill-in: values put in, citations shown as their text; every missing name reported.
        text = "A {{exp_overflow}} B {{0.34 from Hoffmann et al.}} C \\frac{a}{\\sqrt{d}}} D {{exp_overflow}}\n{{rows}}"
        filled = prose.fill(text, {"exp_overflow": "709", "rows": "404"})
        expect(filled == "A 709 B 0.34 C \\frac{a}{\\sqrt{d}}} D 709\n404", f"fill puts the values in: {filled!r}")
        try:
            prose.fill("one {{a}}\ntwo {{b}} {{c d}}", {"a": "1"}, "lesson.md")
            expect(False, "fill refuses a page naming a value the lesson did not give")
        except prose.ProseError as error:
            message = str(error)
            expect("lesson.md:2: {{b}}" in message and "no value named b" in message and "{{c d}}" in message
                   and "the lesson gave: a" in message, f"fill names each missing value with its line: {message}")
        output = "== [ranges] ==\nx = 3\n-- [ranges] --\n== [page-numbers] ==\nexp_overflow = 709\nshare = 49.0%\n-- [page-numbers] --\n"
        expect(prose.values_of(output) == {"exp_overflow": "709", "share": "49.0%"},
               f"values_of reads the page-numbers section only: {prose.values_of(output)}")

        # The command the docs build runs: exit status 1 and the names on a missing value.
        folder = course(root, PAGE.replace("PLANTED", ""))
        (root / "lesson.out").write_text(output)
        command = [sys.executable, "-m", "scalebook.prose", "fill", str(folder / "lesson.md"), str(root / "lesson.out"),
                   str(root / "filled.md")]
        result = subprocess.run(command, cwd=TOOLS, capture_output=True, text=True)
        expect(result.returncode == 1 and "no value named largest_score" in result.stderr and "no value named rows" in result.stderr
               and not (root / "filled.md").exists(),
               f"fill stops the docs build on a missing value, writing nothing: {result.returncode} {result.stderr}")
        (root / "lesson.out").write_text(output.replace("share", "largest_score").replace("-- [page", "rows = 12\n-- [page"))
        result = subprocess.run(command, cwd=TOOLS, capture_output=True, text=True)
        filled = (root / "filled.md").read_text() if (root / "filled.md").exists() else ""
        expect(result.returncode == 0 and "above 709, and" in filled and "reach 49.0%" in filled
               and "The exponent is 0.34;" in filled and "The range of 12 rows" in filled,
               f"fill writes the page with the run's numbers: {result.stderr}")
    return finish("every number typed by hand is reported, and the fill-in uses the run's values")


if __name__ == "__main__":
    sys.exit(main())
