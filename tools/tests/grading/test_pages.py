#!/usr/bin/python3
"""tools/scalebook/grading/pages.py without a browser: the feedback and class pages of a hostile class
(tools/tests/hostile_reports.py), read back with html.parser.

  - no script but the class page's own, no event handler, no element or attribute a report's text
    could have added (img, svg, style, base, meta refresh, javascript: links);
  - the pages are valid UTF-8 with no control, bidi or invisible character: each is shown as a
    visible escape (\\x1b, \\u202e, \\xff for a byte that was not UTF-8), in its own place;
  - a 100 kB line and 5,000 lines are cut, saying how much; the pages stay small;
  - the class table has one row per submission and the same cells in each, whatever the names;
  - scores per chapter and exercise, failed checks with their messages, hints with
    `./workbook hint N.K` and the instructor's hint text, the compile error with the student's line,
    the date and the commit; per exercise how many of the class passed it;
  - what collect recorded: the commit graded, when, the later commits not graded; on the class page
    late students, extensions, flagged repositories, the roster's students without a submission;
  - bad arguments raise PagesError naming the function.

Exit status 77 (CTest's skip) when python3-jinja2 is missing.
"""
from __future__ import annotations

import html.parser
import json
import re
import sys
import tempfile
from pathlib import Path

from tests.harness import expect, finish

from scalebook.course import all_chapters, hints_of
from scalebook.grading import pages
from tests.grading import hostile_reports as hostile

SKIP = 77


class Page(html.parser.HTMLParser):
    """Elements (tag, attributes, the text inside them) and the scripts of a page."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[dict] = []
        self.open: list[dict] = []
        self.scripts: list[str] = []
        self.feed(text)
        self.close()

    VOID = {"meta", "br", "img", "input", "link", "hr", "base", "wbr", "source", "col"}

    def handle_starttag(self, tag, attrs):
        element = {"tag": tag, "attrs": dict(attrs), "text": ""}
        self.elements.append(element)
        if tag not in self.VOID:
            self.open.append(element)

    def handle_endtag(self, tag):
        for index in range(len(self.open) - 1, -1, -1):
            if self.open[index]["tag"] == tag:
                del self.open[index:]
                break

    def handle_data(self, data):
        for element in self.open:
            element["text"] += data
        if self.open and self.open[-1]["tag"] == "script":
            self.scripts.append(data)

    def find(self, tag: str, **attrs) -> list[dict]:
        return [e for e in self.elements if e["tag"] == tag
                and all(e["attrs"].get(k) == v for k, v in attrs.items())]


def check_visible() -> None:
    shown = str(pages.visible("a\x1bb\u202ec\udcffd\x00e<f>\n\tg"))
    expect(shown == 'a<span class="esc">\\x1b</span>b<span class="esc">\\u202e</span>c'
                    '<span class="esc">\\xff</span>d<span class="esc">\\x00</span>e&lt;f&gt;\n\tg',
           "visible(): ESC, U+202E, a non-UTF-8 byte and NUL become marked escapes; markup is escaped")
    expect(str(pages.visible(b"caf\xc3\xa9 \xff")) == 'café <span class="esc">\\xff</span>',
           "visible(): bytes are read as UTF-8 and a stray byte is shown as \\xff")
    cut = str(pages.visible("x" * 5000, chars=100))
    expect(cut.startswith("x" * 100 + '<span class="cut">[4,900 more characters not shown]'),
           "visible(): a long text is cut and says how much")
    expect(pages.visible_plain("t\x1b[1mx") == "t\\x1b[1mx", "visible_plain(): escapes as text, no markup")


def forbidden(page: Page, allowed_scripts: int) -> list[str]:
    found = []
    for element in page.elements:
        tag, attrs = element["tag"], element["attrs"]
        if tag in ("img", "svg", "iframe", "object", "embed", "base", "link", "form", "input"):
            found.append(f"<{tag}>")
        if tag == "meta" and "refresh" in (attrs.get("http-equiv") or "").lower():
            found.append("<meta refresh>")
        for name, value in attrs.items():
            if name.startswith("on"):
                found.append(f"{name}= on <{tag}>")
            if name in ("href", "src") and value and re.match(r"\s*(javascript|data|https?):", value, re.I):
                found.append(f"{name}={value[:40]} on <{tag}>")
    if len(page.find("style")) != 1:
        found.append(f"{len(page.find('style'))} style elements")
    if len(page.find("script")) != allowed_scripts:
        found.append(f"{len(page.find('script'))} script elements")
    if page.find("h1", id="forged") or [e for e in page.elements if "forged" in e["attrs"].values()]:
        found.append("the forged heading")
    return found


def unsafe_characters(raw: bytes) -> list[str]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return [f"not UTF-8: {error}"]
    return sorted({f"U+{ord(c):04X}" for c in text
                   if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F
                   or c in "\u202e\u2066\u200b\ufeff"})


def check_feedback(folder: Path, context: dict) -> None:
    report = hostile.hostile_report()
    path = folder / "hostile" / "feedback.html"
    pages.write_feedback(report, path, context)
    raw = path.read_bytes()
    page = Page(raw.decode("utf-8", errors="replace"))
    text = raw.decode("utf-8", errors="replace")
    expect(not forbidden(page, 0), f"feedback: nothing a report wrote became markup ({forbidden(page, 0)})")
    expect(not unsafe_characters(raw), f"feedback: valid UTF-8, no control or invisible character "
                                       f"({unsafe_characters(raw)})")
    expect(len(raw) < 80_000, f"feedback: a 100 kB line and 5,000 lines are cut ({len(raw):,} bytes)")
    expect(not list(path.parent.glob("*.part")), "feedback: written whole (no .part left)")
    messages = [e["text"] for e in page.find("pre", **{"class": "message"})]
    body = "\n".join(messages)
    expect(hostile.SCRIPT in body and "</td></tr><tr><td>forged row" in body,
           "feedback: the markup of a message is shown as text in its message box")
    expect("\\x1b[31mred\\x1b[0m" in body and "\\x07" in body and "passed\\x0dFAILED" in body,
           "feedback: terminal escapes and a carriage return are shown as \\x1b, \\x07, \\x0d")
    expect("\\u202e\\u2066txt.exe" in body and "\\u200bzero" in body and "\\ufeffbom" in body,
           "feedback: bidi and invisible characters are shown as \\u escapes")
    expect("caf\\xe9 \\xff\\xfe" in body, "feedback: bytes that are not UTF-8 are shown as \\xe9 \\xff \\xfe")
    expect(bool(re.search(r"A{4000}\[96,000 more characters not shown\]", body)),
           "feedback: the 100 kB line is cut at 4,000 characters, saying how much is left")
    # 5,000 lines of "line\n" (25,000 characters): 60 lines kept, 299 characters without the last newline.
    expect("[24,701 more characters in 4,940 more lines not shown]" in body,
           "feedback: 5,000 lines are cut at 60, saying how many are left")
    headings = [e["text"] for e in page.find("h4")]
    expect(sum("failed" in h or "crashed" in h or "timed_out" in h for h in headings) == 4,
           f"feedback: each of the 4 failed checks has its heading with its status ({headings})")
    expect(any(hostile.SCRIPT in h for h in headings), "feedback: a check name's markup is text too")
    status_spans = [e for e in page.find("span") if "status" in (e["attrs"].get("class") or "")]
    expect(all(set(e["attrs"]["class"].split()) <= {"status", "passed", "failed", "crashed", "timed_out",
                                                    "compile_error", "not_run", "other"} for e in status_spans),
           "feedback: a forged status cannot add a class name")
    expect(any("Does not compile: exercises/01-feature-scaling/ex2_apply\\x1b[8m_scaling.cpp:12" in h for h in headings),
           "feedback: the compile error names the file (escaped) and line")
    sources = [e["text"] for e in page.find("pre", **{"class": "source"})]
    expect(sources == ["  return x" + hostile.SCRIPT + "</pre>"], f"feedback: the student's line, as text ({sources})")
    chapter_1 = next(c for c in all_chapters() if c.folder == hostile.CHAPTER_1)
    tier_1 = hints_of(chapter_1, "1.1").tiers[0]
    hints = [e["text"] for e in page.find("div", **{"class": "hint"})]
    expect(any("./workbook hint 1.1" in h and tier_1.replace("`", "").replace("*", "") in h for h in hints),
           "feedback: 1.1's failure points to ./workbook hint 1.1 and shows its first hint from hints.md")
    expect(any("divide the sum of squared deviations by n, not n − 1" in h for h in hints),
           "feedback: a message naming a known mistake ([ddof_one]) brings that mistake's hint, by its id")
    expect(not any("hint 3.1" in h for h in hints), "feedback: a passed exercise gets no hint")
    rows = {e["text"].split("\n")[0]: e["text"] for e in page.find("tr")}
    summary = [r for r in rows.values() if r.startswith("Chapter 1")]
    expect(bool(summary) and "1 / 7" in summary[0] and "0 / 5" in summary[0],
           f"feedback: chapter 1 scores 1 of 7 points, 0 of 5 exercises passed ({summary})")
    expect(any(r.startswith("1.2") and "0 / 2" in r and "compile_error" in r for r in rows.values()),
           "feedback: exercise 1.2 shows compile_error and 0 / 2 points")
    footer = " ".join(e["text"] for e in page.find("footer"))
    expect(hostile.DATE in footer and hostile.COMMIT in footer, "feedback: the date and the commit are shown")
    title = page.find("title")[0]["text"]
    expect(title == 'Feedback: <b>bold</b></td><td>extra — scalebook', f"feedback: the title is text ({title!r})")
    refused = [e["text"] for e in page.find("li")]
    expect(any("raw\\xff\\xfe bytes" in r for r in refused), "feedback: refused file names are listed, escaped")


def check_class_page(folder: Path, context: dict) -> None:
    reports = hostile.the_class()
    path = folder / "index.html"
    pages.write_class_page(reports, path, context)
    raw = path.read_bytes()
    page = Page(raw.decode("utf-8", errors="replace"))
    sort_js = (Path(pages.__file__).parent / "templates" / "sort.js").read_text()
    expect(not forbidden(page, 1) and page.scripts == [sort_js],
           f"class page: its only script is its own sorting ({forbidden(page, 1)})")
    expect(not unsafe_characters(raw), f"class page: valid UTF-8, no control character ({unsafe_characters(raw)})")
    section = raw.decode().split('id="students">')[1].split("</table>")[0]
    table = Page(section)
    rows = table.find("tr")[1:]
    # Cells are counted in the markup itself: a name's "</td><td>" would add one to its row.
    cells_per_row = [len(re.findall(r"<t[dh][ >]", row)) for row in section.split("<tr>")[2:]]
    expect(len(rows) == len(reports), f"class page: one row per submission ({len(rows)} rows)")
    expect(cells_per_row == [1 + 2 + 3] * len(reports),
           f"class page: every row has the name, 2 chapters, total, % and note ({cells_per_row})")
    names = [e["text"] for e in table.find("a")]
    expect(names == ["<b>bold</b></td><td>extra", "alice", "esc\\x1b[31mred", "o'brien\"&co", "refused-one",
                     "student2", "Student3", "student10"],
           f"class page: each name, as text, in its own row, in natural name order ({names})")
    hrefs = [e["attrs"]["href"] for e in table.find("a")]
    expect("students/o%27brien%22%26co/feedback.html" in hrefs and "students/esc%1B%5B31mred/feedback.html" in hrefs
           and all(re.fullmatch(r"students/[A-Za-z0-9%._~-]+/feedback\.html", h) for h in hrefs),
           f"class page: each name links to its feedback page, percent-encoded ({hrefs})")
    totals = {e["text"].split("\n")[0]: e["text"] for e in table.find("tr")[1:]}
    expected_totals = {r["submission"]: f"{r['score']} / {r['max_score']}" for r in reports}
    found = {name: next((t for t in totals.values() if t.startswith(name.replace("\x1b", "\\x1b"))), "")
             for name in expected_totals}
    expect(all(total in found[name] for name, total in expected_totals.items()),
           "class page: each row shows that submission's total")
    exercise_rows = [e["text"] for e in page.find("tr") if re.match(r"\s*\d+\.\d+\b", e["text"])]
    counts = {row.split()[0]: int(re.search(rf"(\d+) of {len(reports)}", row).group(1)) for row in exercise_rows}
    expect(counts == hostile.PASSED_BY, f"class page: how many passed each exercise ({counts})")
    low = [e["text"].split()[0] for e in page.find("td") if "low" in (e["attrs"].get("class") or "")]
    expect(len(low) == sum(1 for n in hostile.PASSED_BY.values() if 2 * n < len(reports)),
           "class page: exercises fewer than half passed stand out")
    note = " ".join(e["text"] for e in table.find("td"))
    expect("not a folder " + hostile.SCRIPT in note, "class page: the refusal is noted, as text")


def check_collection(folder: Path, context: dict) -> None:
    """What collect recorded, on the student's page and the class page: the commit graded, when it was
    collected, the deadline (an extension's), the later commits not graded (20 listed, the rest
    counted), and on the class page the late students, extensions, flagged repositories and the
    roster's students without a submission; every commit subject and reason shown as text."""
    late = [{"commit": f"{index:02d}" + "c" * 38, "date": f"2025-03-03T{index % 24:02d}:00:00+00:00",
             "subject": (hostile.SCRIPT if index == 0 else hostile.TERMINAL if index == 1 else f"fix {index}")}
            for index in range(20)]
    collected = {"commit": "8b474438c4" + "0" * 30, "commit_date": "2025-03-01T20:00:00+00:00",
                 "deadline": "2025-03-05T00:00:00+01:00", "extension": True, "collected_at": "2025-03-06T09:00:00+00:00",
                 "later_count": 23, "later_commits": late, "now": False,
                 "flags": ["one repository for several roster lines: /srv/git/ada.git is also line 3 (" + hostile.SCRIPT + ")'s"]}
    eli = hostile.honest_report("eli", {"1.1"})
    eli["collected"] = collected
    plain = hostile.honest_report("fay", {"1.1"})
    plain["collected"] = dict(collected, later_count=0, later_commits=[], extension=False, flags=[])
    path = folder / "collected" / "feedback.html"
    pages.write_feedback(eli, path, context)
    raw = path.read_bytes()
    page = Page(raw.decode())
    text = " ".join(e["text"] for e in page.find("main"))
    expect(not forbidden(page, 0) and not unsafe_characters(raw),
           f"feedback (collected): commit subjects are text ({forbidden(page, 0)} {unsafe_characters(raw)})")
    expect(any("What was graded" in e["text"] for e in page.find("h2")) and "8b474438c400" in text
           and "collected 2025-03-06T09:00:00+00:00" in text and "2025-03-05T00:00:00+01:00 (your extension)" in text,
           "feedback (collected): the commit graded, when it was collected and the extension's deadline")
    listed = [e["text"] for e in page.find("ul", **{"class": "commits"})]
    expect("23 later commit(s) were not graded" in text and listed and listed[0].count("2025-03-03T") == 20
           and "and 3 more" in listed[0] and hostile.SCRIPT in listed[0] and "\\x1b[31mred" in listed[0],
           "feedback (collected): the later commits not graded, 20 listed and the rest counted, subjects as text")
    expect("one repository for several" not in text, "feedback (collected): collect's flags are not shown there")
    (folder / "class" / "ctest").mkdir(parents=True)
    (folder / "class" / "ctest" / "class.json").write_text(json.dumps({"absent": [
        {"id": "gus", "status": "missing", "why": "no repository at this path"},
        {"id": "hal", "status": "empty", "why": hostile.SCRIPT}]}))
    pages.write_class_page([eli, plain], folder / "class" / "index.html", context)
    raw = (folder / "class" / "index.html").read_bytes()
    page = Page(raw.decode())
    sections = {e["text"]: e for e in page.find("h3")}
    items = [e["text"] for e in page.find("li")]
    expect(not forbidden(page, 1), f"class page (collected): reasons and flags are text ({forbidden(page, 1)})")
    expect(any("Submissions" in e["text"] for e in page.find("h2"))
           and {"Later commits not graded", "Extensions", "Repositories flagged by collect",
                "Roster students without a submission"} <= set(sections),
           f"class page (collected): a section on late commits, extensions, flags, students without a submission "
           f"({sorted(sections)})")
    expect(any(i.startswith("eli: 23 later commit(s), the latest dated 2025-03-03T00:00:00+00:00 (00cccccccc, "
                            "01cccccccc, ") and i.endswith(", …); collected 2025-03-06T09:00:00+00:00") for i in items)
           and "eli: deadline 2025-03-05T00:00:00+01:00" in items and not any(i.startswith("fay") for i in items)
           and "gus: missing (no repository at this path)" in items and f"hal: empty ({hostile.SCRIPT})" in items
           and any(i.startswith("eli: one repository for several roster lines") for i in items),
           f"class page (collected): who is late, extended, flagged, without a submission ({items})")
    cells = [e["text"] for e in page.find("td")]
    expect("8b474438c4 (23 later)" in cells and "8b474438c4" in cells,
           f"class page (collected): each student's row names the commit graded and the later ones not graded")


def check_errors(folder: Path, context: dict) -> None:
    for call, argument, what in ((pages.write_feedback, "a string", "a report that is not a dict"),
                                 (pages.write_feedback, {"tests": []}, "a report without a submission"),
                                 (pages.write_feedback, {"submission": "x", "tests": "nope"}, "tests that are not a list"),
                                 (pages.write_class_page, {"submission": "x"}, "a class that is not a list"),
                                 (pages.write_class_page, [{"submission": "x"}, 3], "a class with a non-report")):
        name = call.__name__
        try:
            call(argument, folder / "bad.html", context)
        except pages.PagesError as error:
            expect(str(error).startswith(f"{name}: "), f"{name} refuses {what}: {error}")
        else:
            expect(False, f"{name} refuses {what}")
    forged = {"submission": "forged", "score": float("nan"), "max_score": "9e999", "tests": [
        {"name": "1.1 x", "chapter": hostile.CHAPTER_1, "exercise": "1.1", "status": "passed",
         "points": "1<script>", "max_points": True}]}
    pages.write_feedback(forged, folder / "forged.html", context)
    text = (folder / "forged.html").read_text()
    expect("Score: 0 / 0" in text and "<script>" not in text, "forged numbers count as 0 and are not shown")


def main() -> int:
    if pages.jinja2 is None:
        print("skipped: the pages need python3-jinja2 (apt-get install -y python3-jinja2)")
        return SKIP
    check_visible()
    context = pages.make_context(date=hostile.DATE, commit="ignored-when-the-report-has-one")
    with tempfile.TemporaryDirectory(prefix="scalebook-pages-") as temporary:
        folder = Path(temporary)
        check_feedback(folder, context)
        check_class_page(folder, context)
        check_collection(folder, context)
        check_errors(folder, context)
    return finish("pages: every expectation holds")


if __name__ == "__main__":
    sys.exit(main())
