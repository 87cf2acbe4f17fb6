#!/usr/bin/env python3
"""Every message template a verdict is shown with, run on every status: none says a phrase twice
in a row ("does not compile: does not compile:"), and an exercise that cannot run because another
one does not compile names that one and its first error, in check's, watch's and progress's
lines alike. And every check in chapters/*/checks.cpp leads its failure message with a specific
sentence, never a generic one ("the result is wrong", or the check's own name said again): what is
wrong, on which input, what to look at next.

Named mistakes: every id a chapter's checks declare (`constexpr Named kX{"id", ...}`) is
snake_case, declared once, and has advice in that chapter's hints.md ("If the check names
[id]: ..."), and every advice line's id is declared; every bug-zoo mutant's id is declared; no
message names a mistake outside the evidence helpers (no "known mistake" or question-mark guess
in a check's own text). With BUILD_DIR, the checks run against the untouched stubs, and every
failure message obeys lib/tests/check_messages.py's rules (inputs shown, a difference located, no
pointer or {?}); the rules themselves are tried on messages made to break each one.

    test_messages.py [BUILD_DIR]
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from scalebook import lint, ui
from scalebook.course import all_chapters, course_chapters
from scalebook.loop import run_checks as checks, screen
from tests.harness import COURSE_FOLDERS, FIXTURE_COURSE, ROOT, load

lead = load(ROOT / "lib" / "tests" / "check_messages_lead.py")
MESSAGE, arguments, code_only = lead.MESSAGE, lead.arguments, lead.code_only
check_messages = load(ROOT / "lib" / "tests" / "check_messages.py")

ERROR = "exercises/05-multi-head/ex4_head_attention.cpp:12:5: error: 'q' was not declared in this scope"


def doubled(text: str) -> str | None:
    """A run of one to six words said twice in a row, ignoring case and punctuation between."""
    words = re.findall(r"[\w'.\-]+", text.lower())
    for size in range(1, 7):
        for i in range(len(words) - 2 * size + 1):
            if words[i:i + size] == words[i + size:i + 2 * size] and not all(w.isdigit() for w in words[i:i + size]):
                return " ".join(words[i:i + size])
    return None


CHAPTERS = ROOT / "chapters"
# A lead that says only that something is wrong, not what, on which input, or where to look.
GENERIC = re.compile(r"^(the |your )?(result|output|answer|value|return value|computation)s?( of [\w ]+)?"
                     r" (is|are|was|were) (wrong|incorrect|not right|bad|off)\b"
                     r"|^(wrong|incorrect|bad) (result|output|answer|value)s?\b|^(check|test) failed\b", re.IGNORECASE)
TEST_CASE = re.compile(r'\bTEST_CASE\(\s*"([^"]*)"')
SAID = re.compile(r"\bsaid\s*\(")


def literal(argument: str) -> str | None:
    """The text of an argument that starts with a string literal ("a" "b" joined), else None."""
    parts = re.match(r'^((?:"(?:[^"\\]|\\.)*"\s*)+)', argument)
    return "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', parts.group(1))) if parts else None


def generic_lead(lead: str, check: str) -> str | None:
    """Why LEAD, the first sentence of a message in the check named CHECK, is generic, or None."""
    if GENERIC.search(lead.strip()):
        return "it says only that the result is wrong"
    title = re.sub(r"^\d+\.\d+\s+", "", check).strip().lower()
    rest = lead.strip().lower()
    if title and (rest == title or rest.partition(": ")[2].strip() == title):
        return "it only repeats the check's name"
    return None


def generic_leads(chapters: Path) -> list[str]:
    """Every message lead in CHAPTERS/*/checks.cpp that is generic, as 'file:line: lead (why)'."""
    found = []
    for path in sorted(chapters.glob("*/checks.cpp")):
        text = code_only(path.read_text())
        cases = [(m.start(), m.group(1)) for m in TEST_CASE.finditer(text)]
        leads = [(m.start(), arguments(text, m.end() - 1)[:1]) for m in SAID.finditer(text)]
        leads += [(m.start(), arguments(text, m.end() - 1)[1:2]) for m in MESSAGE.finditer(text)]
        for at, argument in leads:
            lead = literal(argument[0]) if argument else None
            check = next((name for start, name in reversed(cases) if start < at), "")
            why = generic_lead(lead, check) if lead is not None else None
            if why:
                found.append(f"{path.relative_to(chapters.parent)}:{text.count(chr(10), 0, at) + 1}: {lead!r} ({why})")
    return found


def named_mistake_problems(root: Path) -> list[str]:
    """Named mistakes (declared, unique, snake_case, with advice; no guess outside the helpers), by
    lint's rules (scalebook.lint: named_mistakes, check_texts), on every chapter of ROOT."""
    found = []
    for chapter in course_chapters(root):
        files = lint.ChapterFiles(root, chapter)
        found += [str(problem) for rule in (lint.named_mistakes, lint.check_texts) for problem in rule(files)]
    return found


def stub_problems(build: Path) -> list[str]:
    """Every chapter's checks on the untouched stubs: every message obeys the rules."""
    found = []
    for binary in sorted(build.glob("chapters/*/ch*_checks_on_stubs")):
        with tempfile.TemporaryDirectory() as temp:
            results = Path(temp) / "results.tsv"
            subprocess.run([str(binary), f"--scalebook-results={results}", "--no-colors"], capture_output=True,
                           timeout=600)
            chapter = CHAPTERS / binary.parent.name
            for problem in check_messages.check_results(results, chapter):
                found.append(f"{binary.parent.name} (stubs): {problem}")
    return found


def detector_problems() -> list[str]:
    """The rules themselves: each catches the message it exists for, and passes a good one."""
    found = []
    good = ("dot_scores(q, k) [input: q = (2, 3), all 1; k = (4, 2), all 1] threw nothing where "
            "scalebook::ShapeError was expected: q and k must have the same d_k")
    bad = {"a pointer": "extrapolate with the law 0x55c1fede77c0 threw | input: x",
           "{?}": "the result {?} | input: x",
           "differs but not where": "the layer's output differs from PyTorch's | input: q = (3, 12)",
           "inputs": "fit_scaling of the 4 x 2 example worked in the comment gave the wrong means",
           "a comment": "the example worked in the comment | input: x = 1",
           "crash": "SIGFPE - Floating point error signal"}
    if check_messages.message_problems(good):
        found.append(f"the message rules flag a good message: {check_messages.message_problems(good)}")
    for what, message in bad.items():
        if not check_messages.message_problems(message):
            found.append(f"the message rules miss {what}: {message!r}")
    if check_messages.message_problems("near(...) is matrices differ: largest difference at (0, 1) | input: q = 1"):
        found.append("the message rules flag a difference that says where")
    return found


def main() -> int:
    ui.TTY = False
    failures: list[str] = []

    def expect(condition: bool, what: str) -> None:
        if not condition:
            failures.append(what)

    def clean(text: str, where: str) -> None:
        phrase = doubled(text)
        expect(phrase is None, f"{where}: '{phrase}' is said twice in a row: {text!r}")

    # The dependency rule, on a chapter whose 5.4 does not compile and whose 5.5 calls it.
    chapter = next(c for c in all_chapters() if c.number == 5)
    sources = {e: (chapter.source_of(e), Path(f"/nonexistent/{e}.o")) for e in chapter.exercises}
    calls = {"5.5": "U scalebook::ch05::head_attention(Eigen::Matrix<double, -1, -1, 0, -1, -1> const&)\n"}
    real_undefined = checks.undefined_symbols
    checks.undefined_symbols = lambda obj: calls.get(obj.stem, "")  # type: ignore[assignment]
    try:
        results = {"5.5 a check": checks.CheckResult("5.5 a check", "failed", "the output differs"),
                   "5.6 a check": checks.CheckResult("5.6 a check", "failed", "the output differs"),
                   "5.3 a check": checks.CheckResult("5.3 a check", "crashed", "the process died of SIGSEGV inside this check")}
        verdicts = checks.exercise_verdicts(chapter.exercises, results, {"5.4": ERROR})
        checks.explain_dependencies(verdicts, {"5.4": ERROR}, sources, chapter.functions_of())
    finally:
        checks.undefined_symbols = real_undefined  # type: ignore[assignment]
    expect(verdicts["5.5"].status == "not_run" and
           verdicts["5.5"].message == f"not run: 5.4 does not compile — {ERROR}",
           f"5.5 calls head_attention: it must be not_run naming 5.4, got {verdicts['5.5']}")
    expect(verdicts["5.6"].status == "failed", f"5.6 does not call 5.4: its own verdict stays, got {verdicts['5.6']}")
    expect(verdicts["5.3"].status == "crashed", f"5.3 comes before 5.4: its crash is its own, got {verdicts['5.3']}")
    expect(verdicts["5.4"].status == "compile_error" and verdicts["5.4"].message == ERROR,
           f"5.4's message is the compiler's first error alone, got {verdicts['5.4']}")

    # check and watch show report_chapter's lines; progress its next step.
    record = {e: {"status": v.status, "check": v.name, "message": v.message} for e, v in verdicts.items()}
    lines = screen.report_chapter(chapter, record, 20)
    expect(any(re.search(r"✗ 5\.4  does not compile — exercises/05-multi-head/ex4_head_attention\.cpp:12", l) for l in lines),
           f"check names 5.4's error: {lines}")
    expect(any(re.search(r"✗ 5\.5  not run: 5\.4 does not compile — exercises/05-multi-head/ex4_head_attention\.cpp:12", l)
               for l in lines), f"check says why 5.5 did not run: {lines}")
    for e in ("5.1", "5.2", "5.3"):
        record[e] = {"status": "passed", "check": "", "message": ""}
    real_load = screen.load_record
    screen.load_record = lambda c: record  # type: ignore[assignment]
    try:
        progress = screen.progress_lines([chapter])
    finally:
        screen.load_record = real_load  # type: ignore[assignment]
    expect(any(l.startswith(f"next: exercise 5.4 does not compile — {ERROR}") for l in progress),
           f"progress's next step names 5.4's error: {progress}")
    for line in lines + progress:
        clean(line, "check/progress")

    # Every template on every status.
    samples = {"compile_error": ERROR, "failed": "looks like a known mistake: halved?",
               "crashed": "the process died of SIGSEGV inside this check",
               "timed_out": "still running after 5 s: an endless loop?",
               "not_run": checks.DEPENDS_ON_BROKEN.format(exercise="5.4", error=ERROR)}
    for status, message in samples.items():
        clean(checks.verdict_text(status, message), f"verdict_text({status})")
        one = {e: {"status": "passed", "check": "", "message": ""} for e in chapter.exercises}
        one["5.2"] = {"status": status, "check": "5.2 a check", "message": message}
        for line in screen.report_chapter(chapter, one, 20):
            clean(line, f"report_chapter({status})")
        screen.load_record = lambda c: one  # type: ignore[assignment]
        try:
            for line in screen.progress_lines([chapter]):
                clean(line, f"progress_lines({status})")
        finally:
            screen.load_record = real_load  # type: ignore[assignment]
    clean(checks.DEPENDS_JOIN.join([checks.DEPENDS_ON_BROKEN.format(exercise=e, error=ERROR) for e in ("5.2", "5.4")]),
          "two broken exercises")
    # The detector itself: it must catch the phrase this test exists for, and pass a plain line.
    expect(doubled("next: exercise 5.4 — does not compile: does not compile: x.cpp:1") == "does not compile",
           "the doubled-phrase detector misses 'does not compile: does not compile'")
    expect(doubled("exercise 5.4 does not compile — x.cpp:12:5: error") is None, "the detector flags a clean line")

    # Every check's lead is specific; the detector catches the generic leads this test exists for.
    for lead in generic_leads(CHAPTERS):
        failures.append(f"a generic lead: {lead}: say what is wrong, on which input, and what to look at next")
    expect(generic_lead("the result is wrong: dot scores of the worked example", "3.1 dot scores of the worked example")
           is not None, "the generic-lead detector misses 'the result is wrong: ...'")
    expect(generic_lead("heads are concatenated in head order", "5.3 heads are concatenated in head order") is not None,
           "the generic-lead detector misses a lead that only repeats the check's name")
    expect(generic_lead("Output is incorrect", "") is not None, "the generic-lead detector misses 'Output is incorrect'")
    expect(generic_lead("concat_heads of three 2 x 2 heads must give [[0, 1, 100]]: head h fills the columns from "
                        "h * head_dim on", "5.3 heads are concatenated in head order") is None,
           "the generic-lead detector flags a specific lead")
    expect(literal('"a " "b" + x') == "a b" and literal("on << \"x\"") is None, "literal() misreads a message")

    # Named mistakes and the rules of every failure message.
    failures.extend(named_mistake_problems(ROOT))
    with tempfile.TemporaryDirectory(prefix="scalebook-messages-") as temp:
        course = Path(temp)
        for folder in COURSE_FOLDERS:
            shutil.copytree(FIXTURE_COURSE / folder, course / folder)
        (course / "lib").symlink_to(ROOT / "lib")
        checks_file = course / "chapters" / "01-fixture-sums" / "checks.cpp"
        checks_file.write_text(checks_file.read_text().replace('"the factor must be finite"', '"was the factor finite?"'))
        expect(any("a question in a message is a guess" in p for p in named_mistake_problems(course)),
               "the named-mistake rules (lint's) miss a question planted in the fixture course's checks")
    failures.extend(detector_problems())
    build = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    if build is not None:
        failures.extend(stub_problems(build))

    for failure in failures:
        print(f"FAIL: {failure}")
    print("message templates: " + ("every one is clean" if not failures else f"{len(failures)} problems"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
