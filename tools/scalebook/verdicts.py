"""The verdict vocabulary and the rule for text that came from a submission.

The statuses a check can end in, which checks are error-path checks, and safe_text for anything a
submission wrote.
"""
from __future__ import annotations

import re

MESSAGE_LIMIT = 500
# Every status a check or an exercise can end in, in the reports' order (the pages take the last
# one present as a student's worst); ORDER ranks them worst first for one exercise's verdict.
STATUSES = ("passed", "failed", "crashed", "timed_out", "compile_error", "not_run")
ORDER = {"compile_error": 0, "crashed": 1, "timed_out": 2, "failed": 3, "not_run": 4, "passed": 5}
MARK = {status: "\u2713" if status == "passed" else "\u2717" for status in STATUSES}
# What check and progress say after an exercise's id; a verdict's own sentence says "not run".
WORDS = {"passed": "", "failed": "", "crashed": "crashed", "timed_out": "timed out", "compile_error": "does not compile",
         "not_run": "not checked"}
VERDICT_WORDS = dict(WORDS, not_run="not run")
ERRORS = ("crashed", "timed_out", "compile_error", "not_run")   # JUnit <error>: the check did not judge


def is_error_path(check_name: str) -> bool:
    """An error-path check's name contains the word "throw" or "throws" (and no other's does)."""
    return re.search(r"\bthrows?\b", check_name) is not None


# --- text from a submission ----------------------------------------------------------------------
# The one rule for text that came from a submission (a message, a program's output, a compiler's, a
# name), written again, for speed, in grading/native/check.cpp's safe(); tests/unit/test_safe_text.py
# gives both the same hostile bytes and wants the same text. Bytes are decoded as UTF-8, a byte that
# is not shown as \xNN; every character that could move a terminal's cursor, change its colours,
# reorder or hide text, or that XML 1.0 cannot hold is shown as \xNN (below U+0100), \uNNNN or
# \UNNNNNNNN: the control characters but tab and newline (C0, DEL, C1), the format characters
# (Unicode's Cf: soft hyphen, zero-width and bidirectional marks, embeddings and overrides, tags),
# the line and paragraph separators, lone surrogates and the noncharacters U+FFFE and U+FFFF. On one
# line, every run of whitespace is one space and none is left at either end. Cut to LIMIT characters,
# the last three of them "...".
UNSAFE_RANGES = ((0x00, 0x08), (0x0B, 0x1F), (0x7F, 0x9F), (0xAD, 0xAD), (0x600, 0x605), (0x61C, 0x61C),
                 (0x6DD, 0x6DD), (0x70F, 0x70F), (0x890, 0x891), (0x8E2, 0x8E2), (0x180E, 0x180E),
                 (0x200B, 0x200F), (0x2028, 0x202E), (0x2060, 0x2064), (0x2066, 0x206F), (0xD800, 0xDFFF),
                 (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0xFFFE, 0xFFFF), (0x110BD, 0x110BD), (0x110CD, 0x110CD),
                 (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001),
                 (0xE0020, 0xE007F))
# What str.split() takes for whitespace, written out so that the C++ copy can say the same.
WHITESPACE = (0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B),
              0x2028, 0x2029, 0x202F, 0x205F, 0x3000)
UNSAFE = re.compile("[" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in UNSAFE_RANGES) + "]")
_SPACES = re.compile("[" + "".join(f"\\U{c:08x}" for c in WHITESPACE) + "]+")


def escape_code(code: int) -> str:
    """A character shown by its code: \\x1b, \\u202e, \\U000e0001."""
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def safe_text(text: str | bytes, limit: int = MESSAGE_LIMIT, one_line: bool = True) -> str:
    """Hostile text made safe for every report format and the terminal, by the rule above."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="backslashreplace")
    if one_line:
        text = " ".join(part for part in _SPACES.split(text) if part)
    text = UNSAFE.sub(lambda match: escape_code(ord(match.group(0))), text)
    return text if len(text) <= limit else text[: max(0, limit - 3)] + "..."
