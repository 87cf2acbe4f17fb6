"""Terminal output: colours only on a TTY, a one-line progress display, text cut to the screen."""
from __future__ import annotations

import os
import re
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


STYLE_CODE = re.compile(r"\033\[[0-9;]*m")


def printable(text: str) -> str:
    """Text from outside (a file name, a program's output) for the terminal: tabs as spaces, and
    anything that could move the cursor or change colours shown by its code, by the one text rule
    (verdicts.safe_text)."""
    from .verdicts import safe_text
    return safe_text(text.expandtabs(4), len(text) * 10 + 10, one_line=False)


def visible(text: str) -> int:
    """How many columns TEXT takes on screen: its length without the colour codes."""
    return len(STYLE_CODE.sub("", text))


def wrap(line: str, columns: int) -> list[str]:
    """LINE cut into screen lines of at most COLUMNS columns, at spaces; continuation lines keep
    the line's indent plus two spaces. Only a word longer than a whole line (a long path) is cut
    inside, after a slash or a dot where it has one."""
    if visible(line) <= columns:
        return [line]
    indent = len(line) - len(line.lstrip(" "))
    hang = " " * min(indent + 2, columns // 2)
    out: list[str] = []
    current, width, empty = " " * indent, indent, True
    for word in line[indent:].split(" "):
        size = visible(word)
        if not empty and width + 1 + size > columns:
            out.append(current)
            current, width, empty = hang, len(hang), True
        if empty and not word:
            continue  # no line starts with the spaces it was cut at
        if not empty:
            current, width = current + " ", width + 1
        while width + size > columns:  # longer than a whole line: the only cut inside a word
            plain = STYLE_CODE.sub("", word)  # a cut word loses its colour, never its text
            room = columns - width
            cut = max(plain.rfind("/", 0, room), plain.rfind(".", 0, room)) + 1 or room
            out.append(current + plain[:cut])
            word, size = plain[cut:], len(plain) - cut
            current, width = hang, len(hang)
        current, width, empty = current + word, width + size, False
    if not empty:
        out.append(current)
    return out


def wrap_all(lines: list[str], columns: int) -> list[str]:
    return [piece for line in lines for piece in wrap(line, columns)]
