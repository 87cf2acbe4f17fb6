"""One rule for text from a submission: the same hostile bytes through Python's safe_text
(scalebook/verdicts.py) and C++'s safe() (grading/native/check.cpp, compiled here as grading compiles
it) give the same text, on one line and as a block, at several lengths: terminal escapes, every
kind of invalid UTF-8, bidirectional and zero-width characters, separators, tags, whitespace of
every kind, and seeded random bytes. Also what the rule promises, checked on the Python side: no
control character but tab and newline survives, and nothing is longer than its limit."""
from __future__ import annotations

import random
import subprocess
import sys
import tempfile
from pathlib import Path

from scalebook.verdicts import UNSAFE, safe_text
from tests.harness import TOOLS, expect, finish

NATIVE = TOOLS / "scalebook" / "grading" / "native" / "check.cpp"
HOSTILE = [
    b"plain text", b"", b"   ", b"\x1b[2J\x1b[31mred\x1b[0m and a bell\x07", b"tab\there, line\nthere, CR\r\nback",
    "right-to-left \u202eevil\u202c and \u2066isolate\u2069".encode(), "zero\u200bwidth\u200d join\ufeff".encode(),
    "soft\u00adhyphen, line\u2028paragraph\u2029".encode(), "tag \U000e0041\U000e0001 and emoji \U0001f600".encode(),
    b"\xff\xfe bytes \xc0\x80 overlong \xe0\x80\x80 surrogate \xed\xa0\x80 high \xf4\x90\x80\x80 cut \xe2\x82",
    b"C1 \xc2\x80\xc2\x85\xc2\x9f NBSP\xc2\xa0 ideographic\xe3\x80\x80 space", "nonchar \ufffe\uffff \ufff9".encode(),
    b"\x00NUL \x7fDEL " + b"x" * 300, "\u00e9t\u00e9 \u65e5\u672c \u0645\u0631\u062d\u0628\u0627".encode(),
    b"many     spaces\x0b\x0c\x1c\x1d\x1e\x1f end  ",
]


def compiled(folder: Path) -> Path:
    binary = folder / "grade_check"
    subprocess.run(["c++", "-std=c++20", "-O1", "-o", str(binary), str(NATIVE)], check=True)
    return binary


def cpp_safe(binary: Path, cases: list[tuple[bytes, int, bool]]) -> list[str]:
    """The C++ rule on every case, through one process (records: "LIMIT ONE_LINE LENGTH\\n" BYTES)."""
    records = b"".join(f"{limit} {int(one_line)} {len(data)}\n".encode() + data for data, limit, one_line in cases)
    output = subprocess.run([str(binary), "safe"], input=records, capture_output=True, timeout=120, check=True).stdout
    texts, at = [], 0
    while at < len(output):
        newline = output.index(b"\n", at)
        length = int(output[at:newline])
        texts.append(output[newline + 1:newline + 1 + length].decode("utf-8"))
        at = newline + 1 + length
    return texts


def samples() -> list[bytes]:
    rng = random.Random(20261205)  # fixed: the same bytes every run
    alphabet = [b"a", b" ", b"\t", b"\n", b"\r", b"\x1b", b"\xff", b"\xc2", b"\x85", b"\xe2\x80\xae", b"\xe2\x80",
                b"\xf0\x9f\x98\x80", b"\xed\xb0\x80", b"\xe3\x80\x80", b"\xef\xbb\xbf", b"\x00", b"\x7f"]
    fuzz = [b"".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 40))) for _ in range(150)]
    raw = [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 60))) for _ in range(150)]
    return HOSTILE + fuzz + raw


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="scalebook-safe-text-") as temp:
        binary = compiled(Path(temp))
        cases = [(data, limit, one_line) for data in samples() for limit in (500, 40, 7, 3) for one_line in (True, False)]
        differ = []
        for (data, limit, one_line), cpp in zip(cases, cpp_safe(binary, cases), strict=True):
            python = safe_text(data, limit, one_line)
            if python != cpp:
                differ.append(f"{data!r} limit {limit} one_line {one_line}: Python {python!r}, C++ {cpp!r}")
            if UNSAFE.search(python) or len(python) > max(limit, 3):
                differ.append(f"{data!r}: {python!r} breaks the rule")
        for line in differ[:10]:
            print(line)
        expect(not differ, f"Python's and C++'s sanitisers agree on {len(cases)} cases ({len(differ)} differ)")
        expect(safe_text(b"\x1b[2J", 500) == "\\x1b[2J" and safe_text("\u202e") == "\\u202e",
               "an escape and an override are shown as their codes")
    return finish("one text rule: the Python and C++ sanitisers agree")


if __name__ == "__main__":
    sys.exit(main())
