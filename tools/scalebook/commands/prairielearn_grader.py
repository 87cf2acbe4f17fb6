"""./workbook prairielearn-grader OUT_DIR [--chapters LIST] [limits]: PrairieLearn's external grader image.

Write the Docker build context of an external grader for PrairieLearn: a Dockerfile and, in source/,
the files the Gradescope zip holds (grading/autograder.py), with prairielearn as the entrypoint in
place of run_autograder. `docker build OUT_DIR` installs the Debian packages grading needs, builds
the grading kit into the image and grades the stubs once (setup.sh); push the image where
PrairieLearn pulls from and name it in each question's externalGradingOptions.
"""
from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from ..grading.autograder import shipped
from ..grading.prairielearn import ENTRYPOINT
from ..loop.setup import instructors_only
from .gradescope_autograder import add_grader_options, grader_options

HOME = "/scalebook"        # the image's copy of the shipped tree
DOCKERFILE = """# PrairieLearn's external grader for scalebook (./workbook prairielearn-grader; grading/prairielearn.py).
# BASE: Debian 12 (tested), or another image with CMake 3.25 or newer from apt and every package setup.sh
# installs (Debian 13, Ubuntu 24.04).
ARG BASE={base}
FROM ${{BASE}}
COPY source {home}
RUN {home}/setup.sh && rm -rf /var/lib/apt/lists/*
CMD ["{home}/prairielearn"]
"""


def options_example(tag: str, timeout: int) -> dict:
    """A question's externalGradingOptions for the image TAG (PrairieLearn's docs/externalGrading.md)."""
    return {"externalGradingOptions": {"enabled": True, "image": tag, "entrypoint": f"{HOME}/prairielearn",
                                       "timeout": timeout}}


def write_context(out: Path, chapters, limits: dict[str, int], hidden_policy: str, base: str) -> dict:
    """OUT/Dockerfile and OUT/source/ (the shipped files, their modes kept); returns the config."""
    config, members = shipped(chapters, limits, Path(__file__).resolve().parents[3], hidden_policy,
                              {"prairielearn": ENTRYPOINT})
    if out.exists():
        shutil.rmtree(out / "source", ignore_errors=True)
    (out / "source").mkdir(parents=True, exist_ok=True)
    for name, (data, executable) in sorted(members.items()):
        target = out / "source" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(0o755 if executable else 0o644)
    (out / "Dockerfile").write_text(DOCKERFILE.format(base=base, home=HOME))
    return config


def main(argv: list[str]) -> int:
    instructors_only("prairielearn-grader")
    parser = argparse.ArgumentParser(prog="./workbook prairielearn-grader",
                                     description=" ".join(__doc__.splitlines()[2:7]))
    parser.add_argument("out", type=Path, metavar="OUT_DIR", help="the Docker build context to write")
    parser.add_argument("--base", default="debian:bookworm", metavar="IMAGE",
                        help="the image to build on (default debian:bookworm; any with CMake 3.25 or newer from apt)")
    parser.add_argument("--tag", default="scalebook-grader", metavar="NAME",
                        help="the image's name in the example question options printed (default scalebook-grader)")
    add_grader_options(parser, "what students see of the hidden checks: a count per chapter (count, the default) "
                               "or each by its label and verdict (names)")
    args = parser.parse_args(argv)
    chapters, limits = grader_options(parser, args)
    if args.out.exists() and not args.out.is_dir():
        parser.error(f"{args.out}: not a folder")
    config = write_context(args.out.resolve(), chapters, limits, args.hidden_policy, args.base)
    print(f"{args.out}: PrairieLearn external grader for chapters {', '.join(c.folder for c in chapters)} "
          f"(this tree at {config['commit']}). Build and push it:\n"
          f"  docker build -t {args.tag} {args.out} && docker push {args.tag}\n"
          "then, in each question's info.json (the kit's first grading in a container takes a minute: "
          "keep the timeout generous):\n" + json.dumps(options_example(args.tag, 120), indent=2))
    return 0
