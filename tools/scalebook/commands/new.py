"""./workbook new exercise CHAPTER NAME | new chapter NN-topic: the files of a new exercise or chapter.

./workbook new exercise CHAPTER NAME [--signature DECL]: write exercise N.K (the chapter's next) for
the function NAME: its manifest entry, its remote.def line, its declaration in the contract, the
stub with its instructions above the fence, a reference solution, a first check, a hints section
and its lines on the lesson page.
./workbook new chapter NN-topic [--title TEXT] [--exercise NAME] [--signature DECL] [--summary TEXT]:
write the chapter's folder (manifest, CMakeLists.txt, contract, checks, lesson program and page, hints,
remote.def, a figure) and its first exercise, as above.

What is written builds at once (every build folder takes it at its next build), the stub fails its
check, and `./workbook lint` lists what is left to write (the lines marked SCALEBOOK-TODO, the bug
zoo). The signature is one C++ declaration, e.g. --signature 'Matrix rms_norm(const Matrix& x,
double eps)'; without it, 'double NAME(double x)'. A type in it that neither the contract nor lib
declares, named like a struct (LayerNormGrads), is written into the contract as a struct with its
SCALEBOOK_REMOTE_FIELDS line (its members left to write); any other unknown type is refused. The
first check compares the result with a value left to write, which nothing passes until written.
"""
from __future__ import annotations

import argparse

from ..config import ROOT
from .. import scaffold, ui


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = "\n".join(__doc__.splitlines()[2:]).strip()
    kinds = parser.add_subparsers(dest="kind", metavar="exercise|chapter", required=True)
    one = kinds.add_parser("exercise", help="a new exercise at the end of CHAPTER")
    one.add_argument("chapter", metavar="CHAPTER", help="a number (3) or a folder (03-attention-scaling)")
    one.add_argument("name", metavar="NAME", help="the function students write, snake_case (softmax_temperature)")
    one.add_argument("--signature", metavar="DECL", help="its C++ declaration (default: 'double NAME(double x)')")
    new = kinds.add_parser("chapter", help="a new chapter with its first exercise")
    new.add_argument("folder", metavar="NN-topic", help="the chapter's folder: its number and topic (08-layer-norm)")
    new.add_argument("--title", metavar="TEXT", help="the chapter's title, on its page and in its files' header "
                                                      "lines (default: the topic, 'Layer norm' for 08-layer-norm)")
    new.add_argument("--exercise", metavar="NAME", help="the first exercise's function (default: the topic, "
                                                         "layer_norm for 08-layer-norm)")
    new.add_argument("--signature", metavar="DECL", help="its C++ declaration (default: 'double NAME(double x)')")
    new.add_argument("--summary", metavar="TEXT", help="the chapter's line on the book's main page")


def run(args) -> int:
    if args.kind == "exercise":
        exercise, written, changed = scaffold.exercise(ROOT, args.chapter, args.name, args.signature)
        ui.say(ui.bold(f"Exercise {exercise}, {args.name}:"))
    else:
        written, changed = scaffold.chapter(ROOT, args.folder, args.exercise, args.signature, args.summary,
                                          args.title)
        ui.say(ui.bold(f"Chapter {args.folder}:"))
    for path in written:
        ui.say(f"  new      {path.relative_to(ROOT)}")
    for path in changed:
        ui.say(f"  changed  {path.relative_to(ROOT)}")
    ui.say("Next: write what ./workbook lint lists as left to write; ./workbook check shows the stub failing, "
           "./workbook test proves the checks.")
    return 0
