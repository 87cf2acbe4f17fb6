"""The verdict vocabulary and the rule for text that came from a submission.

The statuses a check can end in, which checks are error-path checks, and safe_text for anything a
submission wrote.
"""
from __future__ import annotations

import re

MESSAGE_LIMIT = 500
STATUSES = ("passed", "failed", "crashed", "timed_out", "compile_error", "not_run")


def is_error_path(check_name: str) -> bool:
    """An error-path check's name contains the word "throw" or "throws" (and no other's does)."""
    return re.search(r"\bthrows?\b", check_name) is not None


# --- text from a submission ----------------------------------------------------------------------
# Control characters (C0 but tab and newline, DEL, C1), characters XML 1.0 cannot hold, and the
# bidirectional overrides that reorder what a terminal or page shows: replaced by a visible escape.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_text(text: str | bytes, limit: int = MESSAGE_LIMIT, one_line: bool = True) -> str:
    """Hostile text made safe for every report format and the terminal: invalid UTF-8 and unsafe
    characters become visible escapes (\\x1b), whitespace runs one space (ONE_LINE), cut to LIMIT."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="backslashreplace")
    if one_line:
        text = " ".join(text.split())
    text = _UNSAFE.sub(_escape, text)
    return text if len(text) <= limit else text[: limit - 3] + "..."
