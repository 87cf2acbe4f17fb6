"""Shows text from a submission in a page as text: escaped, unsafe characters visible, cut.

Text from a submission made visible in a page: escaped as HTML, every unsafe character a visible
escape, cut to a length with a note saying how much was cut.
"""
from __future__ import annotations

import re

from ..verdicts import UNSAFE, escape_code

try:
    from markupsafe import Markup, escape
except ImportError:  # the pages name what is missing (pages.PagesError)
    Markup = escape = None

MESSAGE_CHARS = 4000   # a message longer than this is cut (a compiler's first error fits easily)
MESSAGE_LINES = 60
NAME_CHARS = 200       # submission names, file names, check names


# Every character that might be shown as an escape (printable ASCII, newline and tab never are);
# which are is verdicts.py's one rule for text from a submission.
CANDIDATES = re.compile(r"[^\n\t\x20-\x7e]")


def _shown_as_escape(char: str) -> bool:
    return UNSAFE.match(char) is not None


def _escape_code(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, kept by Python's surrogateescape
        return f"\\x{code - 0xDC00:02x}"
    return escape_code(code)


def _as_text(value) -> str:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="surrogateescape")
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _cut(text: str, chars: int, lines: int) -> tuple[str, str]:
    """(the text shown, a note on what was cut or '')."""
    kept = text
    if kept.count("\n") >= lines:
        kept = "\n".join(kept.split("\n")[:lines])
    if len(kept) > chars:
        kept = kept[:chars]
    if len(kept) == len(text):
        return text, ""
    rest = len(text) - len(kept)
    more_lines = len(text.splitlines()) - len(kept.splitlines())
    return kept, (f"[{rest:,} more characters" + (f" in {more_lines:,} more lines" if more_lines > 0 else "")
                  + " not shown]")


def visible(value, chars: int = MESSAGE_CHARS, lines: int = MESSAGE_LINES) -> "Markup":
    """A submission's string as safe markup: HTML-escaped, every control, format or non-UTF-8
    character as a marked escape (<span class="esc">\\x1b</span>), cut to chars/lines."""
    text, note = _cut(_as_text(value), chars, lines)
    parts, start = [], 0
    for match in CANDIDATES.finditer(text):
        if _shown_as_escape(match.group()):
            parts.append(escape(text[start:match.start()]))
            parts.append(Markup('<span class="esc">{}</span>').format(_escape_code(match.group())))
            start = match.end()
    parts.append(escape(text[start:]))
    if note:
        parts.append(Markup('<span class="cut">{}</span>').format(note))
    return Markup("").join(parts)


def visible_plain(value, chars: int = NAME_CHARS) -> str:
    """The same as plain text (for <title> and attributes): escapes written out, no markup."""
    text, note = _cut(_as_text(value), chars, 1)
    return "".join(_escape_code(c) if _shown_as_escape(c) else c for c in text) + (" " + note if note else "")


def _code_spans(text: str) -> "Markup":
    """Hint text from hints.md: `code` becomes <code>, *word* <em>, everything else escaped text."""
    parts = []
    for index, piece in enumerate(_as_text(text).split("`")):
        if index % 2:
            parts.append(Markup("<code>{}</code>").format(visible(piece)))
            continue
        for inner, run in enumerate(re.split(r"\*([^*\s][^*]*?)\*", piece)):
            parts.append(Markup("<em>{}</em>").format(visible(run)) if inner % 2 else visible(run))
    return Markup("").join(parts)
