#!/usr/bin/python3
"""The grading pages in headless Chromium, as an instructor and a student open them (file://):
the class page of a hostile class (tools/tests/hostile_reports.py) and the feedback page of its
most hostile submission; for accessibility also a regrade's compare page and the similarity page,
written from that class.

    test_pages_browser.py [--screenshots DIR] [--chromium PATH] [--chromedriver PATH]

  - no script from a submission runs: no payload sets window.__pwned or calls alert(), nothing is
    fetched, the console stays clean (a control page with the same payloads unescaped proves the
    browser would have run them);
  - layout at a phone (375 px) and a desktop (1280 px) width: the page is never wider than the
    window; every table sits in its own box, which scrolls sideways when the table is wider; no
    message box is wider than the window; the page's style applies (its CSP hash is right);
  - the class page sorts: by total up and down, by name, and the exercises by how many passed,
    each row keeping its own cells;
  - WCAG 2.1 AA: axe-core (docs/tests/accessibility.py, the rules tagged wcag2a, wcag2aa, wcag21a,
    wcag21aa, wcag22aa) finds 0 violations on the class page, the hostile feedback page, a regrade's
    compare page and the similarity page, at both widths, in the light and the dark scheme (the
    pages follow the reader's prefers-color-scheme).

Exit status 77 (CTest's skip) with a message naming the packages when Chromium, chromedriver,
Selenium or Jinja2 is missing.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from tests.harness import ROOT, expect, finish

from scalebook.grading import pages
from scalebook.grading.analysis_pages import write_similarity_page
from scalebook.grading.compare_page import write_compare_page
from tests.grading import hostile_reports as hostile

sys.path.insert(0, str(ROOT / "docs" / "tests"))
import accessibility  # noqa: E402  (docs/tests/accessibility.py: axe-core, one place for the book and these pages)

SKIP = 77
WIDTHS = [("phone", 375, 812, True), ("desktop", 1280, 900, False)]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
                 "--disable-background-networking", "--disable-component-update", "--disable-dev-shm-usage"]
# Installed before any script of the page: records alert() and confirm() calls instead of blocking.
INSTRUMENT_JS = """
window.__dialogs = [];
window.alert = function (m) { window.__dialogs.push(String(m)); };
window.confirm = window.alert; window.prompt = window.alert;
"""
LAYOUT_JS = """
var width = window.innerWidth, problems = [];
var page = document.documentElement.scrollWidth;
if (page > width) problems.push('the page is ' + page + ' px wide in a ' + width + ' px window');
document.querySelectorAll('table').forEach(function (table, i) {
  var box = table.parentElement;
  if (!box.classList.contains('scroll')) { problems.push('table ' + i + ' is not in a scroll box'); return; }
  var rect = box.getBoundingClientRect();
  if (rect.left < 0 || rect.right > width + 0.5) problems.push('table box ' + i + ' leaves the window');
  if (table.scrollWidth > box.clientWidth + 1 && getComputedStyle(box).overflowX !== 'auto')
    problems.push('table ' + i + ' is wider than its box, which does not scroll');
});
document.querySelectorAll('pre').forEach(function (pre, i) {
  var rect = pre.getBoundingClientRect();
  if (rect.right > width + 0.5) problems.push('message box ' + i + ' is ' + Math.round(rect.right) + ' px wide');
});
var esc = document.querySelector('.esc');
if (esc && getComputedStyle(esc).backgroundColor === 'rgba(0, 0, 0, 0)')
  problems.push('the page style did not apply (escapes are not marked)');
var cell = document.querySelector('td');
if (cell && parseFloat(getComputedStyle(cell).fontSize) < 12) problems.push('table text under 12 px');
var wide = [];
document.querySelectorAll('.scroll').forEach(function (box) { wide.push(box.scrollWidth > box.clientWidth); });
return {problems: problems, scrolls: wide};
"""
SAFETY_JS = """
return {pwned: window.__pwned === undefined ? null : String(window.__pwned),
        dialogs: window.__dialogs || [],
        fetched: performance.getEntriesByType('resource').map(function (e) { return e.name; }),
        forged: !!document.getElementById('forged'),
        images: document.images.length,
        scripts: document.scripts.length};
"""


STARTED = time.monotonic()


def missing(args) -> list[str]:
    found = []
    if not Path(args.chromium).exists():
        found.append("chromium")
    if not Path(args.chromedriver).exists():
        found.append("chromium-driver")
    try:
        import selenium  # noqa: F401
    except ImportError:
        found.append("python3-selenium")
    if pages.jinja2 is None:
        found.append("python3-jinja2")
    return found


def start(args, profile: Path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = args.chromium
    for argument in CHROMIUM_ARGS:
        options.add_argument(argument)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=args.chromedriver, log_path=os.devnull),
                              options=options)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": INSTRUMENT_JS})
    return driver


def open_page(driver, path: Path, width: int, height: int, mobile: bool) -> None:
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})
    driver.get_log("browser")  # this page's console afresh
    driver.get(path.as_uri())


def check_page(driver, path: Path, label: str, shots: Path | None) -> None:
    for width_name, width, height, mobile in WIDTHS:
        open_page(driver, path, width, height, mobile)
        where = f"{label} at {width} px"
        safety = driver.execute_script(SAFETY_JS)
        expect(safety["pwned"] is None and not safety["dialogs"] and not safety["forged"]
               and safety["images"] == 0,
               f"{where}: no payload ran or added an element ({safety['pwned']}, {safety['dialogs']})")
        expect(not safety["fetched"], f"{where}: nothing fetched ({safety['fetched'][:3]})")
        layout = driver.execute_script(LAYOUT_JS)
        expect(not layout["problems"], f"{where}: layout holds ({'; '.join(layout['problems']) or 'fits'})")
        console = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        expect(not console, f"{where}: a clean console ({console[:2]})")
        if label == "class page" and width_name == "phone":
            expect(layout["scrolls"][0], "class page at 375 px: the students table scrolls in its own box")
        if shots:
            shots.mkdir(parents=True, exist_ok=True)
            total = driver.execute_script("return Math.min(document.documentElement.scrollHeight, 8000)")
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                   {"width": width, "height": total, "deviceScaleFactor": 1, "mobile": mobile})
            name = f"{path.parent.name if path.name == 'feedback.html' else 'index'}-{width_name}.png"
            driver.save_screenshot(str(shots / name))
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                   {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})


def column(driver, table: str, index: int) -> list[str]:
    return driver.execute_script(
        "var index = arguments[1];"
        "return Array.prototype.map.call(document.getElementById(arguments[0]).tBodies[0].rows,"
        " function (row) { return row.cells[index].textContent.trim(); });", table, index)


def click(driver, table: str, label: str) -> None:
    from selenium.webdriver.common.by import By
    for button in driver.find_elements(By.CSS_SELECTOR, f"#{table} thead button.sort"):
        if button.text.strip() == label:
            button.click()
            return
    raise AssertionError(f"no sort button {label!r} in #{table}")


def check_sorting(driver, reports: list[dict]) -> None:
    """On the open class page: each click must give the order a stable sort of the rows before it
    gives (ties keep their order), computed here from the reports."""
    def as_shown(name: str) -> str:
        return name.replace("\x1b", "\\x1b")
    score = {as_shown(r["submission"]): r["score"] for r in reports}
    totals = {as_shown(r["submission"]): f"{r['score']} / {r['max_score']}" for r in reports}
    first = column(driver, "students", 0)
    expect(sorted(first) == sorted(score), "class page: one row per submission in the browser too")
    click(driver, "students", "Total")
    names = column(driver, "students", 0)
    expect(names == sorted(first, key=score.get), f"class page: 'Total' sorts by score, lowest first ({names})")
    total_column = 1 + 2  # name, two chapters
    expect(column(driver, "students", total_column) == [totals[n] for n in names],
           "class page: each row keeps its own cells when sorted")
    click(driver, "students", "Total")
    expect(column(driver, "students", 0) == sorted(names, key=score.get, reverse=True),
           "class page: 'Total' again sorts highest first")
    click(driver, "students", "Submission")
    up = column(driver, "students", 0)
    click(driver, "students", "Submission")
    down = column(driver, "students", 0)
    expect(up == first and down == first[::-1],
           f"class page: 'Submission' sorts the names up, in the page's own (natural) order, then down ({up})")
    click(driver, "exercises", "Passed")
    counts = [int(text.split()[0]) for text in column(driver, "exercises", 2)]
    ids = column(driver, "exercises", 0)
    expect(counts == sorted(hostile.PASSED_BY.values()) and sorted(ids) == sorted(hostile.PASSED_BY),
           f"class page: 'Passed' puts the exercises fewest passed first ({list(zip(ids, counts))})")
    expect(all(hostile.PASSED_BY[i] == n for i, n in zip(ids, counts)), "class page: each exercise keeps its count")


def check_control(driver, folder: Path) -> None:
    """The same payloads in a page without escaping or CSP: the checks above must see them run."""
    control = folder / "control.html"
    payloads = re.sub(r"<meta[^>]*>", "", hostile.SCRIPT + hostile.BREAKOUTS)  # stay on the page
    control.write_text("<!DOCTYPE html><html><body><pre>" + payloads + "</pre></body></html>")
    open_page(driver, control, 1280, 900, False)
    safety = driver.execute_script(SAFETY_JS)
    expect(safety["pwned"] is not None and bool(safety["dialogs"]) and safety["forged"],
           f"control: unescaped, the payloads do run here (pwned={safety['pwned']}, alerts={safety['dialogs']})")


def a_regrade(reports: list[dict]) -> dict:
    """A regrade's preview (grading/regrade.py's comparison) in which the hostile names lost and
    gained points, with the hostile messages."""
    hostile_name = hostile.NAMES["markup"]
    change = {"kind": "lost", "chapter": hostile.CHAPTER_1, "check": "1.1 population sd " + hostile.SCRIPT,
              "hidden": False, "message": "the output matches known mistake [ddof_one]: " + hostile.BREAKOUTS,
              "old_status": "passed", "new_status": "failed", "delta": -1, "old_max": 1, "new_max": 1}
    students = [{"submission": r["submission"], "old_score": r["score"], "new_score": r["score"] - 1,
                 "old_max": r["max_score"], "new_max": r["max_score"], "changes": [change], "note": ""}
                for r in reports]
    return {"date": hostile.DATE, "students": students, "changed": [hostile_name, hostile.NAMES["quotes"]],
            "old": {"dir": "grades-" + hostile.SCRIPT, "commit": hostile.COMMIT},
            "new": {"dir": "regrade", "commit": hostile.COMMIT},
            "work": {"reused": 3, "checks_run": 4, "compiled": 2, "linked": 2}}


def an_analysis(reports: list[dict]) -> dict:
    """The class analysis's similarity findings (grading/analysis.py) for two hostile names: a pair
    with its shared run of code, and a group of identical files."""
    a, b = hostile.NAMES["markup"], hostile.NAMES["quotes"]
    code = "double peak = x.maxCoeff(); // " + hostile.SCRIPT
    pair = {"a": a, "b": b, "a_same": [], "b_same": [hostile.NAMES["plain"]], "percent": 90, "a_percent": 92,
            "b_percent": 88, "shared_kgrams": 140, "reference": False,
            "runs": [{"a_lines": [3, 9], "b_lines": [4, 10], "kgrams": 140, "a_text": code, "b_text": code}]}
    return {"date": hostile.DATE,
            "similarity": {"exercises": [{"exercise": "4.2", "file": "04-causal-masking/ex2_masked_softmax.cpp",
                                          "compared": len(reports), "references": 0, "pairs_above": 1,
                                          "pairs": [pair], "identical": [{"files": [a, hostile.NAMES["plain"]],
                                                                          "kgrams": 140}]}],
                           "threshold_percent": 78, "min_kgrams": 40, "kgram": 20, "references": []}}


def check_accessible(driver, path: Path, label: str, source: str) -> None:
    """axe-core's WCAG 2.x A and AA rules on PATH at both widths, light and dark: 0 violations."""
    for _, width, height, mobile in WIDTHS:
        for scheme in ("light", "dark"):
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                   {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
            open_page(driver, path, width, height, mobile)
            result = accessibility.run_axe(driver, source)
            found = accessibility.describe(f"{label} at {width} px, {scheme}", result["violations"])
            expect(not found, f"{label} at {width} px, {scheme}: 0 violations of WCAG 2.x A and AA in "
                              f"{result['rules']} axe-core rules" + ("".join("\n    " + f for f in found)))
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                           {"features": [{"name": "prefers-color-scheme", "value": "light"}]})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--screenshots", type=Path, help="save a screenshot of each page and width here")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    args = parser.parse_args()
    absent = missing(args)
    if absent:
        print(f"skipped: the pages' browser test needs {', '.join(absent)} "
              f"(apt-get install -y {' '.join(absent)})")
        return SKIP
    try:
        axe = accessibility.axe_source()
    except accessibility.AxeMissing as error:
        expect(False, str(error))
        return finish("")
    reports = hostile.the_class()
    context = pages.make_context(date=hostile.DATE)
    with tempfile.TemporaryDirectory(prefix="scalebook-pages-browser-") as temporary:
        folder = Path(temporary) / "grades"
        pages.write_class_page(reports, folder / "index.html", context)
        written = {}
        for number, report in enumerate(reports):
            written[report["submission"]] = folder / f"student-{number}" / "feedback.html"
            pages.write_feedback(report, written[report["submission"]], context)
        write_compare_page(a_regrade(reports), folder / "compare.html", context)
        write_similarity_page(an_analysis(reports), folder, hostile.COMMIT)
        driver = start(args, Path(temporary) / "profile")
        print(f"     Chromium started after {time.monotonic() - STARTED:.1f} s", flush=True)
        try:
            check_control(driver, Path(temporary))
            check_page(driver, folder / "index.html", "class page", args.screenshots)
            check_sorting(driver, reports)  # on the class page as check_page left it (desktop width)
            check_page(driver, written[hostile.NAMES["markup"]], "the hostile feedback page", args.screenshots)
            for path, label in ((folder / "index.html", "class page"),
                                (written[hostile.NAMES["markup"]], "the hostile feedback page"),
                                (folder / "compare.html", "the compare page"),
                                (folder / "similarity.html", "the similarity page")):
                check_accessible(driver, path, label, axe)
        finally:
            driver.quit()
    print(f"     {time.monotonic() - STARTED:.1f} s in all")
    return finish("pages in the browser: every expectation holds")


if __name__ == "__main__":
    sys.exit(main())
