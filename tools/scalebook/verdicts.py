"""The verdict vocabulary and the rule for text that came from a submission.

The statuses a check can end in, which checks are error-path checks, and safe_text for anything a
submission wrote.
"""
from __future__ import annotations

import re
import unicodedata

MESSAGE_LIMIT = 500
STATUSES = ("passed", "failed", "crashed", "timed_out", "compile_error", "not_run")


def is_error_path(check_name: str) -> bool:
    """An error-path check's name contains the word "throw" or "throws" (and no other's does)."""
    return re.search(r"\bthrows?\b", check_name) is not None


# --- text from a submission ----------------------------------------------------------------------
# One rule for every format and the terminal (grading/native/check.cpp's safe() implements the same,
# and the pages, grading/visible.py, show the same characters as escapes; tools/tests test all three
# on the same bytes): every character of Unicode's categories Cc, Cf, Cs, Zl and Zp (controls,
# format characters such as zero-width spaces and joiners, bidirectional marks, overrides and
# isolates, surrogates, line and paragraph separators) and the noncharacters U+FFFE and U+FFFF is
# shown as a visible escape (\x1b, \u200b, \U000e0041), every byte that is not UTF-8 as \xNN; tab
# and newline are kept (one line: each run of spaces, tabs, newlines and carriage returns is one
# space, none at either end).
ESCAPED_CATEGORIES = ("Cc", "Cf", "Cs", "Zl", "Zp")
_RUNS = re.compile(r"[ \t\n\r]+")


def shown_as_escape(char: str) -> bool:
    """Whether CHAR is shown as an escape (tab and newline never are)."""
    if char in "\n\t":
        return False
    return unicodedata.category(char) in ESCAPED_CATEGORIES or char in "\ufffe\uffff"


def escape_code(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, kept by Python's surrogateescape
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def safe_text(text: str | bytes, limit: int = MESSAGE_LIMIT, one_line: bool = True) -> str:
    """Hostile text made safe for every report format and the terminal (the rule above), cut to
    LIMIT characters."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="surrogateescape")
    if one_line:
        text = _RUNS.sub(" ", text).strip(" ")
    text = "".join(escape_code(c) if shown_as_escape(c) else c for c in text)
    return text if len(text) <= limit else text[: limit - 3] + "..."
