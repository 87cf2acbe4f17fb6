"""A class of report dicts (as report.json holds them) written by the most motivated students: markup,
scripts, cell and element breakouts, terminal escape sequences, bytes that are not UTF-8, bidi and
invisible characters, a 100 kB line, names with quotes. Shared by test_pages.py and
test_pages_browser.py.

Each payload that would run a script sets window.__pwned or calls alert(); a page is safe when
neither happens and every payload is shown as text in its own place.
"""
from __future__ import annotations

CHAPTER_1, CHAPTER_3 = "01-feature-scaling", "03-attention-scaling"
DATE, COMMIT = "2026-12-02T10:00:00+01:00", "1a2b3c4"

SCRIPT = "<script>window.__pwned = 'script'; alert('script')</script>"
BREAKOUTS = ("</pre></article></section></main><h1 id=forged>forged</h1>"
             "<img src=x onerror=\"window.__pwned='img'\"><svg onload=\"window.__pwned='svg'\">"
             "</td></tr><tr><td>forged row</td><td>99</td>"
             "<style>body{display:none}</style><base href=\"http://evil.invalid/\">"
             "<meta http-equiv=\"refresh\" content=\"0;url=http://evil.invalid/\">"
             "<a href=\"javascript:window.__pwned='link'\">click</a> {{ 7*7 }} &lt;not an entity")
TERMINAL = ("\x1b[31mred\x1b[0m \x1b[2J\x1b[H cleared \x1b]8;;http://evil.invalid\x07a link\x1b]8;;\x07"
            " passed\rFAILED \x00nul \x7fdel \x9bcsi")
INVISIBLE = "admin\u202e\u2066txt.exe \u200bzero width \ufeffbom"
NOT_UTF8 = "caf\udce9 \udcff\udcfe"        # the bytes 0xE9, 0xFF, 0xFE as surrogateescape keeps them
LONG_LINE = "A" * 100_000
MANY_LINES = "line\n" * 5_000

# Names: quotes, markup, a cell breakout; a terminal escape (grading refuses such names today, but
# the pages must not depend on that).
NAMES = {
    "quotes": "o'brien\"&co",
    "markup": "<b>bold</b></td><td>extra",
    "escape": "esc\x1b[31mred",
    "plain": "alice",
}


def _test(name: str, chapter: str, exercise: str, status: str, points: int, maximum: int,
          message: str = "", **extra) -> dict:
    return {"name": name, "chapter": chapter, "exercise": exercise, "status": status,
            "points": points, "max_points": maximum, "message": message, **extra}


def report(name: str, tests: list[dict], **extra) -> dict:
    return {"submission": name, "score": sum(t["points"] for t in tests),
            "max_score": sum(t["max_points"] for t in tests), "seconds": 12.5, "date": DATE,
            "commit": COMMIT, "refused_files": [], "sandbox": "bubblewrap", "fingerprint": "0" * 64,
            "tests": tests, **extra}


def hostile_report(name: str = NAMES["markup"]) -> dict:
    """One submission whose every string attacks the page."""
    return report(name, [
        _test("1.1 means per column", CHAPTER_1, "1.1", "passed", 1, 1),
        _test("1.1 population sd " + SCRIPT, CHAPTER_1, "1.1", "failed", 0, 1,
              "the output matches known mistake [ddof_one]: " + SCRIPT + BREAKOUTS),
        _test("1.2 applies the scaling", CHAPTER_1, "1.2", "compile_error", 0, 2,
              "error: expected ';' " + TERMINAL, file="01-feature-scaling/ex2_apply\x1b[8m_scaling.cpp",
              line=12, source_line="  return x" + SCRIPT + "</pre>"),
        _test("1.3 test rows never fitted", CHAPTER_1, "1.3", "crashed", 0, 1, INVISIBLE + NOT_UTF8),
        _test("1.4 loss falls", CHAPTER_1, "1.4", "timed_out", 0, 1, LONG_LINE),
        _test("1.5 neighbours", CHAPTER_1, "1.5", "failed\"><script>window.__pwned='status'</script>", 0, 1,
              MANY_LINES),
        _test("3.1 dot scores", CHAPTER_3, "3.1", "passed", 2, 2),
    ], refused_files=["exercises/01-feature-scaling/ex9.cpp" + SCRIPT, b"raw\xff\xfe bytes"])


def honest_report(name: str, passes: set[str]) -> dict:
    """A submission that passes every check of the exercises in `passes` and fails the others."""
    tests = []
    for chapter, exercise, checks in ((CHAPTER_1, "1.1", 2), (CHAPTER_1, "1.2", 1), (CHAPTER_1, "1.3", 1),
                                      (CHAPTER_1, "1.4", 1), (CHAPTER_1, "1.5", 1), (CHAPTER_3, "3.1", 1)):
        for k in range(checks):
            passed = exercise in passes
            tests.append(_test(f"{exercise} check {k}", chapter, exercise, "passed" if passed else "failed",
                               1 if passed else 0, 1, "" if passed else f"{exercise} is wrong"))
    return report(name, tests)


def the_class() -> list[dict]:
    """Eight submissions (one refused, three passing nothing): each exercise passed by a known
    number of them."""
    return [
        hostile_report(NAMES["markup"]),                                  # passes 3.1 only
        honest_report(NAMES["quotes"], {"1.1", "1.2", "3.1"}),
        honest_report(NAMES["escape"], {"1.1"}),
        honest_report(NAMES["plain"], {"1.1", "1.2", "1.3", "1.4", "1.5", "3.1"}),
        {"submission": "refused-one", "score": 0, "max_score": 8, "seconds": 0, "tests": [],
         "refused": "not a folder " + SCRIPT},
        *(honest_report(name, set()) for name in ("student10", "student2", "Student3")),
    ]


# How many of the eight pass every check of each exercise (counted by hand from the_class()).
PASSED_BY = {"1.1": 3, "1.2": 2, "1.3": 1, "1.4": 1, "1.5": 1, "3.1": 3}
