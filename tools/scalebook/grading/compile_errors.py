"""The compiler's first error in an exercise file, as a report shows it."""
from __future__ import annotations

import re

from ..verdicts import safe_text


def first_error(output: str, source: str, shown_as: str, source_text: bytes) -> dict:
    """The compiler's first error, preferring one in the exercise's own file (/src/SOURCE in the
    box), as {message, line, source_line}: the box's path shown as SHOWN_AS."""
    lines = output.splitlines()
    own = re.compile(rf"^/src/{re.escape(source)}:(\d+):(\d+): (?:fatal )?error: (.*)$")
    for line in lines:
        match = own.match(line)
        if match:
            number = int(match.group(1))
            source_lines = source_text.split(b"\n")
            text = source_lines[number - 1] if 0 < number <= len(source_lines) else b""
            return {"message": safe_text(f"{shown_as}:{number}: error: {match.group(3)}"),
                    "line": number, "source_line": safe_text(text, 300)}
    for line in lines:
        if re.search(r"\berror\b", line):
            return {"message": safe_text(line.replace(f"/src/{source}", shown_as))}
    return {"message": f"{shown_as}: does not compile"}
