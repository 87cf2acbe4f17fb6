#!/usr/bin/python3
"""Every page of the built book against WCAG 2.1 AA, in headless Chromium: axe-core's rules in the
light and the dark theme, and what axe cannot see, by keyboard and by reading the page.

    check_accessibility.py HTML_DIR [--edition NAME] [--axe PATH] [--timeout S] [--sample]
                           [--keyboard sample|all] [--chromium PATH] [--chromedriver PATH]
                           [--only PAGE ...]

One browser opens every page of HTML_DIR in turn (file://, as a reader opens the book), at a
desktop's 1280 x 900 px, once MathJax has typeset it and the sidebar has stopped moving, then:

  1. axe     axe-core 4.14.1 (docs/tests/accessibility.py) with the rules tagged wcag2a, wcag2aa,
             wcag21a, wcag21aa and wcag22aa, in the light theme, then axe's colour rules again with
             the browser set to prefer dark (the book's dark theme, as a reader whose system is dark
             gets it; the page must have taken it): 0 violations. The book's own pages (the main
             page, chapters, hints) are checked at a phone's 390 px as well, where the sidebar gives
             way to the "Chapters" menu.
  2. keyboard  on the book's own pages and the shortest reference page of each kind Doxygen writes
             (REFERENCE_KINDS; --keyboard all: every page): Tab from the top of the page through
             every stop: each one shows a focus outline (or shadow), and is not hidden under
             anything on the page (2.4.7, 2.4.11); the first stop skips to the text, and the next
             Tab lands on the text's first stop (or, on a page whose text has none, the first stop
             after it); the sidebar's tree is reached, and Enter on one of its arrows opens it
             (aria-expanded turns true, its list shows); on a hints page the first hint's button is
             reached, Enter opens it and the next Tab reaches the second tier's button.
  3. figures every SVG figure (<object>) has role="img" and is named by its SVG's <title> (what
             it shows), every <img> has an alt, every <iframe> a title: each is read from the SVG file.
  4. math    every formula has MathJax's assistive MathML (a <math> element) and its drawing is
             hidden from screen readers; no formula is a Tab stop.
  5. tables  every table is a data table whose first row holds header cells (<th>), or is marked as
             layout (role="presentation").

--sample checks the main page, the first chapter and its hints and the shortest reference page of
each kind only (the regular suite's test; every page is the long test's). Each failure names the
page, the theme or width, and the rule with its elements. Exit status 1 on any failure, 2 when the
book, the browser or axe-core cannot be used. Standard library + selenium.
"""

import argparse
import os
import re
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import accessibility  # noqa: E402
from accessible_pages import svg_title  # noqa: E402

try:
    from selenium import webdriver
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service
except ImportError as error:
    print(f"check_accessibility: needs python3-selenium ({error}); run it with Debian's /usr/bin/python3 "
          "after apt-get install -y python3-selenium chromium chromium-driver", file=sys.stderr)
    sys.exit(2)

DESKTOP = (1280, 900, False)
PHONE = (390, 844, True)
BOOK_PAGE = re.compile(r"^(index|ch\d+(_hints)?)\.html$")
HINTS_PAGE = re.compile(r"^ch\d+_hints\.html$")
CHAPTER_PAGE = re.compile(r"^ch\d+\.html$")
# The kinds of page Doxygen writes for the reference, by its own file names: pages of one kind share
# one template (their sidebar, headings, tables and links differ in number, not in kind).
REFERENCE_KINDS = (
    ("alphabetical index", re.compile(r"^classes\.html$")),
    ("list", re.compile(r"^(annotated|files|hierarchy|namespaces|pages|modules|examples)\.html$")),
    ("index of members", re.compile(r"^(functions|namespacemembers|globals)(_\w+)?\.html$")),
    ("member list", re.compile(r"^(class|struct|union).*-members\.html$")),
    ("class", re.compile(r"^(class|struct|union).*\.html$")),
    ("namespace", re.compile(r"^namespace.*\.html$")),
    ("folder", re.compile(r"^dir_.*\.html$")),
    ("file", re.compile(r"^.*_8\w+\.html$")),
)
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
                 "--disable-background-networking", "--disable-component-update", "--disable-dev-shm-usage"]
# Tab stops followed on one page at the most (the longest page has about 400).
MAX_STOPS = 1500

READY_JS = r"""
// The page is ready once MathJax has typeset it, navtree.js has filled in the sidebar and scrolled
// it to the page's entry, and no jQuery animation (the tree's scrolling, a list sliding open) is
// still moving what the keyboard is about to reach.
var deadline = Date.now() + arguments[0], done = arguments[arguments.length - 1];
function treeReady() {
  var tree = document.getElementById("nav-tree-contents");
  return !tree || tree.querySelector(".item");
}
function still() { return !window.jQuery || jQuery(":animated").length === 0; }
function finish() {
  if (Date.now() > deadline) { done(false); return; }
  if (treeReady() && still()) setTimeout(function () { if (still()) done(true); else finish(); }, 50);
  else setTimeout(finish, 20);
}
if (window.MathJax && MathJax.Hub && MathJax.Hub.Register) {
  MathJax.Hub.Register.StartupHook("End", function () { MathJax.Hub.Queue(finish); });
} else finish();
"""

READ_PAGE_JS = r"""
// Figures, formulas and tables, as assistive technology is given them.
var out = { figures: [], frames: [], images: [], formulas: 0, noMathML: [], drawnShown: [], mathStops: 0, tables: [] };
document.querySelectorAll("object").forEach(function (o) {
  out.figures.push({ data: o.getAttribute("data") || "", role: o.getAttribute("role") || "",
                     label: o.getAttribute("aria-label") || "" });
});
document.querySelectorAll("iframe").forEach(function (f) {
  out.frames.push({ src: f.getAttribute("src") || "", title: f.getAttribute("title") || "" });
});
document.querySelectorAll("img").forEach(function (i) {
  if (!i.hasAttribute("alt")) out.images.push(i.getAttribute("src") || "");
});
document.querySelectorAll('script[type^="math/tex"]').forEach(function (s) {
  var frame = document.getElementById(s.id + "-Frame");
  if (!frame) return;  // not typeset: a hidden tooltip's, typeset when it opens
  out.formulas++;
  var tex = (s.textContent || "").trim().slice(0, 60);
  var mml = frame.querySelector(".MJX_Assistive_MathML math");
  if (!mml) out.noMathML.push(tex);
  var drawn = frame.querySelector("nobr, .math");
  if (!drawn || !drawn.closest('[aria-hidden="true"]')) out.drawnShown.push(tex);
  if (frame.tabIndex >= 0) out.mathStops++;
});
document.querySelectorAll("table").forEach(function (t, i) {
  var role = t.getAttribute("role") || "";
  var first = t.rows.length ? t.rows[0] : null;
  var headed = !!first && first.querySelector("th") !== null;
  out.tables.push({ index: i, cls: t.className || "", role: role, headed: headed, th: t.querySelectorAll("th").length });
});
return out;
"""

FOCUSED_JS = r"""
// The element that has the focus now: where it is, whether its focus shows, whether it is seen.
var e = document.activeElement;
if (!e || e === document.body || e === document.documentElement) return null;
var s = getComputedStyle(e);
var rects = e.getClientRects();
var r = rects.length ? rects[0] : e.getBoundingClientRect();
var outline = s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0;
var shadow = s.boxShadow && s.boxShadow !== "none";
// A checkbox hidden behind its label shows its focus on the label.
var label = e.id ? document.querySelector('label[for="' + e.id + '"]') : null;
if (label && (r.width <= 1 || r.height <= 1)) {
  var ls = getComputedStyle(label);
  outline = ls.outlineStyle !== "none" && parseFloat(ls.outlineWidth) > 0;
  r = label.getBoundingClientRect();
}
var hidden = r.width <= 1 || r.height <= 1;
var cx = Math.min(Math.max(r.left + r.width / 2, 0), window.innerWidth - 1);
var cy = Math.min(Math.max(r.top + r.height / 2, 0), window.innerHeight - 1);
var hit = document.elementFromPoint(cx, cy);
// A tooltip (jQuery PowerTip, opened by the focus and closed by Escape) may still be fading out
// over the next stop: it is the reader's own, not the page's.
if (hit && hit.closest("#powerTip")) hit = e;
var seen = !!hit && (hit === e || e.contains(hit) || hit.contains(e) || (label && (hit === label || label.contains(hit))));
var inView = r.bottom > 0 && r.top < window.innerHeight && r.right > 0 && r.left < window.innerWidth;
var where = e.closest("#nav-tree") ? "tree" : e.closest("#doc-content") ? "text" : e.closest("#top") ? "top" : "page";
var name = e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className && typeof e.className === "string" ? "." + e.className.trim().split(/\s+/).join(".") : "");
return { name: name, label: e.getAttribute("aria-label") || "", text: (e.getAttribute("aria-label") || e.textContent || "").trim().replace(/\s+/g, " ").slice(0, 50),
         where: where, shows: outline || shadow, hidden: hidden, seen: seen && inView,
         covered: hit && !seen ? hit.tagName.toLowerCase() + (hit.id ? "#" + hit.id : "") : "",
         toggle: !!e.closest("#nav-tree") && e.matches(".item > a:first-child"),
         expanded: e.getAttribute("aria-expanded"), summary: e.tagName === "SUMMARY",
         hintTier: e.closest("details.scalebook-hint") ? Array.prototype.indexOf.call(
           e.closest("div.scalebook-hints").querySelectorAll("details.scalebook-hint"), e.closest("details.scalebook-hint")) : -1,
         open: e.closest("details") ? e.closest("details").open : null,
         skip: e.id === "scalebook-skip" };
"""

TOGGLE_OPENED_JS = r"""
// After Enter on a tree arrow (navtree.js loads the entries below it, then shows them): it says it
// is open, and the list below its item shows, within two seconds.
var name = arguments[0], done = arguments[arguments.length - 1], deadline = Date.now() + 2000;
(function poll() {
  var toggle = Array.prototype.find.call(document.querySelectorAll("#nav-tree .item > a:first-child"),
                                         function (a) { return a.getAttribute("aria-label") === name; });
  var li = toggle && toggle.closest("li");
  var list = li ? li.querySelector(":scope > ul") : null;
  var state = { expanded: toggle ? toggle.getAttribute("aria-expanded") : null,
                listShown: !!list && list.getClientRects().length > 0 && getComputedStyle(list).display !== "none" };
  var still = !window.jQuery || jQuery(":animated").length === 0;  // the list has slid open
  if ((state.expanded === "true" && state.listShown && still) || Date.now() > deadline) done(state);
  else setTimeout(poll, 20);
})();
"""


def press(driver, key, code, key_code, shift=False):
    """One real key press, through the DevTools protocol (a page's script cannot move the focus)."""
    event = {"key": key, "code": code, "windowsVirtualKeyCode": key_code, "modifiers": 8 if shift else 0}
    if key == "Enter":
        event["text"] = "\r"
    driver.execute_cdp_cmd("Input.dispatchKeyEvent", {"type": "keyDown", **event})
    driver.execute_cdp_cmd("Input.dispatchKeyEvent", {"type": "keyUp", **event})


def tab(driver):
    press(driver, "Tab", "Tab", 9)
    return driver.execute_script(FOCUSED_JS)


def start_browser(args, profile):
    options = webdriver.ChromeOptions()
    options.binary_location = args.chromium
    for argument in CHROMIUM_ARGS:
        options.add_argument(argument)
    options.add_argument(f"--user-data-dir={profile}")
    driver = webdriver.Chrome(service=Service(executable_path=args.chromedriver, log_path=os.devnull),
                              options=options)
    driver.set_script_timeout(args.timeout + 60)
    return driver


THEME_JS = r"""
// The page has taken the theme the browser now prefers: doxygen-awesome's toggle (which marks <html>
// light-mode or dark-mode, and the colours follow the mark) hears of the change a moment after it.
var dark = arguments[0], done = arguments[arguments.length - 1], deadline = Date.now() + 5000;
(function poll() {
  var root = document.documentElement;
  var marked = !document.querySelector("doxygen-awesome-dark-mode-toggle") ||
               root.classList.contains(dark ? "dark-mode" : "light-mode");
  if ((matchMedia("(prefers-color-scheme: dark)").matches === dark && marked) || Date.now() > deadline)
    requestAnimationFrame(function () { done(marked); });
  else setTimeout(poll, 10);
})();
"""


def set_view(driver, view, scheme="light"):
    """The window's size and the theme the browser prefers; False when the page did not follow the
    theme within 5 s."""
    width, height, mobile = view
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                           {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
    return driver.execute_async_script(THEME_JS, scheme == "dark")


def open_page(driver, path, view, args):
    set_view(driver, view)
    driver.get(path.as_uri())
    return driver.execute_async_script(READY_JS, int(args.timeout * 1000))


def axe(driver, source, where, colour_only=False):
    result = accessibility.run_axe(driver, source, colour_only)
    return accessibility.describe(where, result["violations"]), result["rules"]


def check_reading(driver, html_dir, name):
    """Figures, formulas and tables (3, 4, 5)."""
    failures = []
    page = driver.execute_script(READ_PAGE_JS)
    for figure in page["figures"]:
        source = urllib.parse.unquote(figure["data"])
        expected = svg_title(html_dir / source) if source.endswith(".svg") and (html_dir / source).is_file() else ""
        if figure["role"] != "img" or not figure["label"].strip():
            failures.append(f"figure {source}: not exposed as an image with a name (role {figure['role']!r}, "
                            f"aria-label {figure['label']!r})")
        elif expected and figure["label"] != expected:
            failures.append(f"figure {source}: named {figure['label']!r}, not by what its SVG says it shows "
                            f"({expected!r})")
    for frame in page["frames"]:
        source = urllib.parse.unquote(frame["src"])
        title = svg_title(html_dir / source, graph=True) if (html_dir / source).is_file() else ""
        if not frame["title"].strip() or (title and frame["title"] != title):
            failures.append(f"frame {source}: titled {frame['title']!r}, not by its SVG ({title!r})")
    for source in page["images"]:
        failures.append(f"image {source}: no alt attribute")
    if page["noMathML"]:
        failures.append(f"{len(page['noMathML'])} of {page['formulas']} formulas without assistive MathML "
                        f"(a screen reader cannot read them), first: {page['noMathML'][0]!r}")
    if page["drawnShown"]:
        failures.append(f"{len(page['drawnShown'])} formulas whose drawing is not hidden from screen readers, "
                        f"first: {page['drawnShown'][0]!r}")
    if page["mathStops"]:
        failures.append(f"{page['mathStops']} formulas are Tab stops of their own")
    for table in page["tables"]:
        layout = table["role"] in ("presentation", "none")
        if layout and table["th"]:
            failures.append(f"table {table['index']} (.{table['cls']}) is marked as layout but has {table['th']} "
                            "header cells")
        elif not layout and not table["headed"]:
            failures.append(f"table {table['index']} (.{table['cls']}) has no header cells in its first row and is "
                            "not marked as layout (role=\"presentation\")")
    return failures, page


def stop_key(stop):
    return stop["name"], stop["text"], stop["where"]


def check_keyboard(driver, name):
    """Tab through the page (2): returns failures and what was reached."""
    failures = []
    stops = []
    first = tab(driver)
    if not first or not first["skip"]:
        failures.append(f"the first Tab stop is {first and first['name']!r}, not the link that skips to the text")
    elif not first["seen"]:
        failures.append("the skip link does not show when it has the focus")
    toggled = None
    hint_opened = None
    seen_keys = set()
    current = first
    while current and len(stops) < MAX_STOPS:
        key = stop_key(current)
        if stops and key == stop_key(stops[0]):
            break  # around once: back at the first stop
        stops.append(current)
        label = f"Tab stop {len(stops)} ({current['where']}: {current['name']} {current['text']!r})"
        if not current["shows"] and key not in seen_keys:
            failures.append(f"{label}: no visible focus (no outline, no shadow)")
        if current["hidden"]:
            failures.append(f"{label}: the focused element has no size on screen")
        elif not current["seen"]:
            failures.append(f"{label}: the focused element is hidden"
                            + (f" under {current['covered']}" if current["covered"] else " out of view"))
        seen_keys.add(key)
        if toggled is None and current["toggle"] and current["expanded"] == "false":
            press(driver, "Enter", "Enter", 13)
            toggled = driver.execute_async_script(TOGGLE_OPENED_JS, current["label"])
            toggled["text"] = current["text"]
        if hint_opened is None and current["summary"] and current["hintTier"] == 0 and not current["open"]:
            press(driver, "Enter", "Enter", 13)
            after = tab(driver)
            hint_opened = {"opened": driver.execute_script(
                "return document.querySelector('details.scalebook-hint').open"),
                "next": after}
            current = after
            continue
        current = tab(driver)
    if first and first["skip"]:
        # Where the skip link leads: the text's first stop, or (a page whose text has no link) the
        # first stop after the text, past the top bar and the sidebar in any case.
        in_text = [s for s in stops if s["where"] == "text"]
        before = [i for i, s in enumerate(stops) if s["where"] in ("top", "tree")]
        after = stops[max(before) + 1:] if before else stops[1:]
        expected = in_text[0] if in_text else (after[0] if after else None)
        driver.execute_script("document.getElementById('scalebook-skip').focus()")
        press(driver, "Enter", "Enter", 13)
        landed = tab(driver)
        if expected and (not landed or stop_key(landed) != stop_key(expected)):
            failures.append(f"after the skip link, Tab goes to {landed and landed['name']!r} "
                            f"{landed and landed['text']!r} ({landed and landed['where']}), not to "
                            + (f"the text's first stop {expected['name']!r} {expected['text']!r}" if in_text else
                               f"the first stop after the text (which has none), {expected['name']!r}"))
    if len(stops) >= MAX_STOPS:
        failures.append(f"Tab never came back to the first stop within {MAX_STOPS} stops")
    tree = [s for s in stops if s["where"] == "tree"]
    if not tree:
        failures.append("Tab never reaches the sidebar's tree")
    if toggled is None:
        failures.append("Tab reaches no closed arrow of the sidebar's tree")
    elif toggled["expanded"] != "true" or not toggled["listShown"]:
        failures.append(f"Enter on the tree's arrow {toggled['text']!r} does not open it (aria-expanded "
                        f"{toggled['expanded']!r}, its list shown: {toggled['listShown']})")
    if HINTS_PAGE.match(name):
        if hint_opened is None:
            failures.append("Tab never reaches the first hint's button")
        else:
            nxt = hint_opened["next"] or {}
            if not hint_opened["opened"]:
                failures.append("Enter on the first hint's button does not open it")
            elif not (nxt.get("summary") and nxt.get("hintTier") == 1):
                failures.append(f"with the first hint open, the next Tab goes to {nxt.get('name')!r} "
                                f"{nxt.get('text')!r}, not to the second tier's button")
    return failures, stops


def kind_of(name):
    """The page's kind: a book page is its own; a reference page is of one of REFERENCE_KINDS, or
    its own when Doxygen wrote a page of another kind."""
    if BOOK_PAGE.match(name):
        return name
    return next((kind for kind, pattern in REFERENCE_KINDS if pattern.match(name)), name)


def one_of_each_kind(pages, html_dir):
    """The shortest page of each kind (the same template, the fewest stops to walk)."""
    kinds = {}
    for name in sorted(pages, key=lambda p: ((html_dir / p).stat().st_size, p)):
        kinds.setdefault(kind_of(name), name)
    return set(kinds.values())


def sample(pages, html_dir):
    """The main page, the first chapter and its hints, and the shortest reference page of each kind."""
    chapters = [p for p in pages if CHAPTER_PAGE.match(p)]
    book = {"index.html"} | ({chapters[0], chapters[0].replace(".html", "_hints.html")} if chapters else set())
    return [p for p in pages if p in book or (not BOOK_PAGE.match(p) and p in one_of_each_kind(pages, html_dir))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html_dir", type=Path)
    parser.add_argument("--edition", default="reference", help="which book this is, for the messages")
    parser.add_argument("--axe", type=Path, default=accessibility.AXE_JS, help="axe-core's axe.min.js")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds a page may take to be ready")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    parser.add_argument("--only", nargs="+", metavar="PAGE", help="check only these pages of HTML_DIR")
    parser.add_argument("--sample", action="store_true",
                        help="check only the main page, the first chapter and its hints, and the shortest "
                             "reference page of each kind")
    parser.add_argument("--keyboard", choices=("sample", "all"), default="sample",
                        help="walk the keyboard through the book's own pages and the shortest reference "
                             "page of each kind (sample), or through every page (all)")
    args = parser.parse_args()
    began = time.monotonic()
    html_dir = args.html_dir.resolve()
    if not (html_dir / "index.html").is_file():
        print(f"check_accessibility: {html_dir}/index.html does not exist; build the book first", file=sys.stderr)
        return 2
    try:
        source = accessibility.axe_source(args.axe)
    except accessibility.AxeMissing as error:
        print(f"check_accessibility: {error}", file=sys.stderr)
        return 2
    for tool in (args.chromium, args.chromedriver):
        if not os.access(tool, os.X_OK):
            print(f"check_accessibility: {tool} is missing; apt-get install -y chromium chromium-driver",
                  file=sys.stderr)
            return 2
    pages = sorted(p.name for p in html_dir.glob("*.html"))
    pages.sort(key=lambda p: (not BOOK_PAGE.match(p), p))
    if args.only:
        unknown = [p for p in args.only if p not in pages]
        if unknown:
            print(f"check_accessibility: no page {', '.join(unknown)} in {html_dir}", file=sys.stderr)
            return 2
        pages = [p for p in pages if p in args.only]
    if args.sample:
        pages = sample(pages, html_dir)
    walked = set(pages) if args.keyboard == "all" else \
        {p for p in pages if BOOK_PAGE.match(p)} | one_of_each_kind(pages, html_dir)

    failures = []
    counts = {"axe runs": 0, "tab stops": 0, "formulas": 0, "figures": 0, "tables": 0}
    with tempfile.TemporaryDirectory(prefix="scalebook-a11y-") as profile:
        try:
            driver = start_browser(args, profile)
        except WebDriverException as error:
            print(f"check_accessibility: could not start {args.chromium}: {str(error).strip()}", file=sys.stderr)
            return 2
        try:
            for name in pages:
                started = time.monotonic()
                path = html_dir / name
                page_failures = []
                if not open_page(driver, path, DESKTOP, args):
                    page_failures.append(f"the page was not ready (MathJax, the sidebar) within {args.timeout:g} s")
                rules = 0
                for scheme in ("light", "dark"):
                    if not set_view(driver, DESKTOP, scheme):
                        page_failures.append(f"{scheme}: the page did not take the {scheme} theme within 5 s")
                    # The dark theme changes colours only: its run is of axe's colour rules.
                    found, checked = axe(driver, source, scheme, colour_only=scheme == "dark")
                    rules = rules or checked
                    page_failures += found
                    counts["axe runs"] += 1
                set_view(driver, DESKTOP, "light")
                reading, page = check_reading(driver, html_dir, name)
                page_failures += reading
                stops = []
                if name in walked:
                    keyboard, stops = check_keyboard(driver, name)
                    page_failures += keyboard
                if BOOK_PAGE.match(name):
                    open_page(driver, path, PHONE, args)
                    found, _ = axe(driver, source, "light at 390 px")
                    page_failures += found
                    counts["axe runs"] += 1
                counts["tab stops"] += len(stops)
                counts["formulas"] += page["formulas"]
                counts["figures"] += len(page["figures"]) + len(page["frames"])
                counts["tables"] += len(page["tables"])
                print(f"{'FAIL' if page_failures else 'ok  '} {name}: axe ({rules} rules) light, its colour "
                      "rules dark"
                      f"{', and at 390 px' if BOOK_PAGE.match(name) else ''}; "
                      f"{f'{len(stops)} Tab stops' if name in walked else 'keyboard as on ' + kind_of(name) + ' pages'}; "
                      f"{page['formulas']} formulas, {len(page['figures']) + len(page['frames'])} figures, "
                      f"{len(page['tables'])} tables; {time.monotonic() - started:.1f} s", flush=True)
                for failure in page_failures:
                    print(f"       {failure}")
                failures += [(name, f) for f in page_failures]
        except (WebDriverException, RuntimeError) as error:
            message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            failures.append(("browser", f"stopped: {message}"))
        finally:
            driver.quit()
    elapsed = time.monotonic() - began
    summary = ", ".join(f"{n} {k}" for k, n in counts.items())
    if failures:
        print(f"\n{len(failures)} accessibility problem(s) in the {args.edition} book ({elapsed:.1f} s):",
              file=sys.stderr)
        for page, failure in failures:
            print(f"  {page}: {failure}", file=sys.stderr)
        return 1
    print(f"all {len(pages)} pages of the {args.edition} book: 0 violations of WCAG 2.x A and AA (axe-core "
          f"{accessibility.AXE_VERSION}) in light and dark, keyboard, figures, math and tables as required "
          f"({summary}; {elapsed:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
