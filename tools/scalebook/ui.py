"""Terminal output: colours only on a TTY, a one-line progress display, text cut to the screen."""
from __future__ import annotations

import os
import shutil
import sys

TTY = sys.stdout.isatty() and os.environ.get("TERM") != "dumb" and "NO_COLOR" not in os.environ


def style(code: str, text: str) -> str:
    return f"\033[{code}m{text}\033[0m" if TTY else text


def bold(text: str) -> str:
    return style("1", text)


def green(text: str) -> str:
    return style("32", text)


def red(text: str) -> str:
    return style("31", text)


def yellow(text: str) -> str:
    return style("33", text)


def dim(text: str) -> str:
    return style("2", text)


def width() -> int:
    return max(40, shutil.get_terminal_size((100, 40)).columns)


def height() -> int:
    return max(10, shutil.get_terminal_size((100, 40)).lines)


class Progress:
    """Shows what a long step is doing: on a terminal one line rewritten in place, elsewhere a line
    now and then, so a log or CI never sits silent and never floods."""

    def __init__(self, stage: str):
        self.stage = stage
        self.last = ""
        self.count = 0
        print(bold(stage), flush=True)

    def update(self, line: str) -> None:
        self.count += 1
        if TTY:
            text = f"  {line}"[: width() - 1]
            sys.stdout.write("\r\033[K" + dim(text))
            sys.stdout.flush()
        elif self.count % 10 == 1:
            print(f"  {line}", flush=True)
        self.last = line

    def done(self) -> None:
        if TTY and self.count:
            sys.stdout.write("\r\033[K")
            sys.stdout.flush()


def say(text: str = "") -> None:
    print(text, flush=True)


def fit(lines: list[str], limit: int) -> list[str]:
    """At most LIMIT lines, the last one saying how many were left out."""
    if len(lines) <= limit:
        return lines
    return lines[: limit - 1] + [dim(f"  ... ({len(lines) - limit + 1} more lines)")]
