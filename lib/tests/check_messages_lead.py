#!/usr/bin/env python3
"""Every check's failure message must start with a sentence a student understands, never with a
bare C++ expression. doctest's results put the CHECK_MESSAGE text first and the expression after
it, so in chapters/*/checks.cpp this holds when:

- no assertion is a plain CHECK / REQUIRE / CHECK_FALSE / REQUIRE_FALSE (their message would be
  the expression alone);
- no *_MESSAGE's message is only a suspect(...) or diagnose(...) call, or "": those are empty when
  no known mistake matches, and the expression would lead again. said(sentence, suspect(...))
  puts a sentence first.

    check_messages_lead.py CHAPTERS_DIR
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

PLAIN = re.compile(r"\b(CHECK|REQUIRE|CHECK_FALSE|REQUIRE_FALSE)\s*\(")
MESSAGE = re.compile(r"\b(CHECK|REQUIRE|CHECK_FALSE|REQUIRE_FALSE)_MESSAGE\s*\(")
EMPTY_WHEN_UNMATCHED = re.compile(r"^(suspect|diagnose)\s*\(|^\"\"$")


def arguments(text: str, start: int) -> list[str]:
    """The top-level comma-separated arguments of the call whose '(' is at text[start]."""
    depth, args, current, i = 0, [], [], start
    quote = None
    while i < len(text):
        c = text[i]
        if quote:
            current.append(c)
            if c == "\\":
                current.append(text[i + 1])
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
            current.append(c)
        elif c in "([{":
            depth += 1
            if depth > 1:
                current.append(c)
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append("".join(current).strip())
                return args
            current.append(c)
        elif c == "," and depth == 1:
            args.append("".join(current).strip())
            current = []
        else:
            current.append(c)
        i += 1
    return args


def code_only(text: str) -> str:
    """The text with // comments blanked (string literals kept)."""
    return re.sub(r"//[^\n]*", lambda m: " " * len(m.group(0)), text)


def main() -> int:
    chapters = Path(sys.argv[1])
    problems = []
    for path in sorted(chapters.glob("*/checks.cpp")):
        text = code_only(path.read_text())
        line_of = lambda at: text.count("\n", 0, at) + 1  # noqa: E731
        for m in PLAIN.finditer(text):
            problems.append(f"{path}:{line_of(m.start())}: a plain {m.group(1)}: its message would be the bare "
                            f"expression; use {m.group(1)}_MESSAGE with a sentence")
        for m in MESSAGE.finditer(text):
            args = arguments(text, m.end() - 1)
            if len(args) >= 2 and EMPTY_WHEN_UNMATCHED.search(args[1]):
                problems.append(f"{path}:{line_of(m.start())}: the message is only {args[1][:40]}...: empty when no "
                                "known mistake matches; lead with a sentence, as said(sentence, suspect(...))")
    for problem in problems:
        print(problem)
    print(f"{len(problems)} checks would lead with a bare expression" if problems
          else "every check's message leads with a sentence")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
