#!/usr/bin/python3
"""Open the built book in headless Chromium and check that every page really renders.

    check_docs_in_browser.py HTML_DIR [--screenshots DIR] [--all-pages] [--timeout S]
                             [--chromium PATH] [--chromedriver PATH]

The pages: index.html and every page linked from its chapter list (the list after the
#main_chapters heading: each chapter and its hints page); with --all-pages, every other page of
HTML_DIR too (file and folder pages). Each is opened as a file:// URL, as a student opens the book
the workbook points to, 1280 px wide, and checked for:

  1. math     MathJax finished (its startup "End" hook, then an empty queue) within --timeout
              seconds; every script[type^="math/tex"] has its rendered MathJax frame beside it, with
              a non-zero size; MathJax signalled no error (Math Processing Error, TeX parse error,
              file load error, font trouble) and its message log shows no failure; no "Math
              Processing Error", .merror or .MathJax_Error in the page; no raw TeX (\\f$ \\f[ \\( \\[
              $$ ...) left in the visible prose (code blocks are source and are not searched); and
              MathJax's "Loading ..." status box has gone.
  2. figures  every <img> loaded (complete, naturalWidth > 0) and every <object> holds a loaded
              document, an <svg> for SVG figures (read through the DevTools protocol: file:// pages
              cannot read each other's DOM); each is displayed with a non-zero size; every chapter
              page (chNN.html) shows at least one SVG figure.
  3. links    statically, in every .html page of HTML_DIR (html.parser): every local href, src and
              data names a file inside HTML_DIR, and every #anchor of an .html link exists in its
              target; the same for the page links in the sidebar's and menu's scripts (navtree*.js,
              menudata.js, ...).
  4. console  the browser console (goog:loggingPrefs browser ALL) has no SEVERE entry; WARNING
              entries are printed, never dropped.
  5. sidebar  the navigation tree on the left lists every chapter and hints page.
  6. screenshot  a full-page PNG per page into --screenshots (default HTML_DIR/../screenshots).

Code or output blocks that scroll sideways at 1280 px are reported as notes, not failures.
One line per page says what was checked; the failures are listed again at the end, exit status 1.
Exit status 2: the book or the browser could not be used at all. Standard library + selenium only.
"""

import argparse
import base64
import html.parser
import os
import re
import shutil
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

try:
    from selenium import webdriver
    from selenium.common.exceptions import TimeoutException, WebDriverException
    from selenium.webdriver.chrome.service import Service
except ImportError as error:
    print(f"check_docs_in_browser: needs python3-selenium ({error}); run it with Debian's /usr/bin/python3 "
          "after apt-get install -y python3-selenium chromium chromium-driver", file=sys.stderr)
    sys.exit(2)

WIDTH = 1280
START_HEIGHT = 900
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", f"--window-size={WIDTH},{START_HEIGHT}",
]
EXTERNAL_SCHEMES = {"http", "https", "mailto", "ftp", "javascript", "data", "tel"}
CHAPTER_PAGE = re.compile(r"^ch\d+\.html$")
BOOK_PAGE = re.compile(r"^ch\d+(_hints)?\.html$")
# Raw TeX that MathJax should have consumed. \f$ and \f[ would be Doxygen's own markup left over.
RAW_TEX = ["\\f$", "\\f[", "\\f]", "\\(", "\\)", "\\[", "\\]", "$$"]

# --- instrumentation, installed before any page script runs ------------------------------------
# MathJax 2 reads window.MathJax as its author configuration and calls AuthorInit once MathJax.Hub
# exists, before it processes any configuration: the place to listen to every Hub signal (errors
# included) from the very first one.
INSTRUMENT_JS = r"""
window.__scalebook = { mathjaxEnd: false, signals: [], errors: [] };
window.MathJax = {
  AuthorInit: function () {
    var sb = window.__scalebook;
    MathJax.Hub.signal.Interest(function (message) {
      var name = String(message && message[0] !== undefined ? message[0] : message);
      sb.signals.push(name);
      var text = name;
      if (name === "Math Processing Error" && message[2]) {
        text += ": " + (message[2].message || message[2]);
      } else if (name === "TeX Jax - parse error" && message[1]) {
        text += ": " + message[1] + (message[2] ? " in " + message[2] : "");
      } else if (name === "file load error" && message[1]) {
        text += ": " + message[1];
      }
      if (/error|fail|no valid font|image fonts|not available/i.test(name)) sb.errors.push(text);
    });
    MathJax.Hub.Register.StartupHook("End", function () { sb.mathjaxEnd = true; });
  }
};
"""

WAIT_FOR_MATHJAX_JS = r"""
var timeoutMs = arguments[0], done = arguments[arguments.length - 1];
var deadline = Date.now() + timeoutMs;
function state() {
  var sb = window.__scalebook || {};
  var hub = window.MathJax && window.MathJax.Hub;
  return { loaded: !!hub, end: !!sb.mathjaxEnd,
           pending: hub && hub.queue ? hub.queue.pending : null,
           running: hub && hub.queue ? hub.queue.running : null };
}
(function poll() {
  var s = state();
  if (s.loaded && s.end) {
    // Queue a callback behind whatever MathJax still has to do, then require an empty queue.
    MathJax.Hub.Queue(function () {
      (function drained() {
        var t = state();
        if (t.pending === 0 || Date.now() > deadline) { t.ok = t.pending === 0; done(t); }
        else setTimeout(drained, 20);
      })();
    });
    return;
  }
  if (Date.now() > deadline) { s.ok = false; done(s); return; }
  setTimeout(poll, 20);
})();
"""

WAIT_FOR_MATHJAX_STATUS_JS = r"""
var timeoutMs = arguments[0], done = arguments[arguments.length - 1];
var deadline = Date.now() + timeoutMs;
(function poll() {
  var box = document.getElementById("MathJax_Message");
  var showing = box && box.style.display !== "none" && (box.innerText || "").trim();
  if (!showing) { done(""); return; }
  if (Date.now() > deadline) { done(showing); return; }
  setTimeout(poll, 20);
})();
"""

INSPECT_PAGE_JS = r"""
var rawTex = arguments[0];
var result = { math: 0, mathUnrendered: [], mathErrors: [], rawTex: [], images: [], objects: [],
               signals: [], mathjaxErrors: [], mathjaxLog: [], sidebar: [], wideBlocks: [] };
function visible(el) {
  if (!el) return false;
  var r = el.getBoundingClientRect();
  return r.width > 0 && r.height > 0;
}
function describe(el) {
  var r = el.getBoundingClientRect();
  return { w: Math.round(r.width), h: Math.round(r.height) };
}
// 1. math
var scripts = document.querySelectorAll('script[type^="math/tex"]');
result.math = scripts.length;
scripts.forEach(function (s) {
  var frame = document.getElementById(s.id + "-Frame");
  var prev = s.previousElementSibling;
  var sibling = prev && (prev.classList.contains("MathJax") || prev.classList.contains("MathJax_Display"));
  var tex = (s.textContent || "").trim().slice(0, 80);
  if (!s.id || !frame || !sibling || !visible(frame)) result.mathUnrendered.push(tex);
  else if (frame.querySelector(".merror, .MathJax_Error, [class*='merror']")) result.mathErrors.push(tex);
});
document.querySelectorAll(".MathJax_Error, .merror").forEach(function (e) {
  result.mathErrors.push((e.textContent || "").trim().slice(0, 80));
});
if ((document.body.innerText || "").indexOf("Math Processing Error") >= 0)
  result.mathErrors.push("the text 'Math Processing Error' is on the page");
var sb = window.__scalebook || { signals: [], errors: [] };
result.signals = sb.signals;
result.mathjaxErrors = sb.errors;
if (window.MathJax && MathJax.Message && MathJax.Message.Log) {
  result.mathjaxLog = String(MathJax.Message.Log()).split("\n").filter(function (l) {
    return /fail|error/i.test(l);
  });
}
// Raw TeX in visible prose: text nodes outside scripts, styles and code blocks.
var skip = "script, style, noscript, textarea, pre, code, div.fragment, .MathJax, .MathJax_Display";
var walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (var node = walker.nextNode(); node; node = walker.nextNode()) {
  var parent = node.parentElement;
  if (!parent || parent.closest(skip) || !parent.getClientRects().length) continue;
  var text = node.nodeValue;
  for (var i = 0; i < rawTex.length; i++) {
    var at = text.indexOf(rawTex[i]);
    if (at >= 0) {
      result.rawTex.push(rawTex[i] + " in \"" + text.slice(Math.max(0, at - 40), at + 40).replace(/\s+/g, " ") + "\"");
      break;
    }
  }
}
// 2. figures
Array.prototype.forEach.call(document.images, function (img) {
  var d = describe(img);
  result.images.push({ src: img.getAttribute("src"), complete: img.complete,
                       naturalWidth: img.naturalWidth, naturalHeight: img.naturalHeight,
                       w: d.w, h: d.h, footer: !!img.closest("#nav-path, .footer") });
});
document.querySelectorAll("object").forEach(function (o, index) {
  var d = describe(o);
  result.objects.push({ index: index, data: o.getAttribute("data"), type: o.getAttribute("type"), w: d.w, h: d.h });
});
// Code and output blocks that scroll sideways (reported, not a failure).
document.querySelectorAll("div.fragment, pre.fragment").forEach(function (f) {
  if (f.scrollWidth > f.clientWidth + 1 && f.getClientRects().length) {
    var first = (f.innerText || "").split("\n").filter(function (l) { return l.trim(); })[0] || "";
    result.wideBlocks.push({ hidden: f.scrollWidth - f.clientWidth, first: first.trim().slice(0, 60) });
  }
});
// 5. the sidebar's links
document.querySelectorAll("#nav-tree a[href]").forEach(function (a) {
  result.sidebar.push(a.getAttribute("href"));
});
return result;
"""

FULL_HEIGHT_JS = r"""
// Doxygen's tree view scrolls the page inside #doc-content; the full page is the header plus all
// of that content plus the footer.
var doc = document.getElementById("doc-content");
var top = document.getElementById("top");
var foot = document.getElementById("nav-path");
var h = document.documentElement.scrollHeight;
if (doc) {
  var r = doc.getBoundingClientRect();
  h = Math.max(h, Math.ceil(r.top + doc.scrollHeight + (foot ? foot.offsetHeight : 0)));
}
return h;
"""


# --- static checks -----------------------------------------------------------------------------
class PageParser(html.parser.HTMLParser):
    """Collects a page's ids, its local references and (on index.html) the chapter list."""

    LINK_ATTRS = {("a", "href"), ("area", "href"), ("link", "href"), ("img", "src"),
                  ("script", "src"), ("object", "data"), ("iframe", "src"), ("embed", "src"),
                  ("source", "src")}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids = set()
        self.refs = []  # (tag, attribute, value, line)
        self.chapter_links = []
        self._after_chapters_anchor = False
        self._chapter_ul_depth = 0  # >0 while inside the chapter list
        self.found_chapter_list = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name" if tag == "a" else None):
            if key and attrs.get(key):
                self.ids.add(attrs[key])
        for (t, attr) in self.LINK_ATTRS:
            if t == tag and attrs.get(attr) is not None:
                self.refs.append((tag, attr, attrs[attr], self.getpos()[0]))
        if attrs.get("id") == "main_chapters":
            self._after_chapters_anchor = True
        if tag == "ul":
            if self._chapter_ul_depth:
                self._chapter_ul_depth += 1
            elif self._after_chapters_anchor and not self.found_chapter_list:
                self._chapter_ul_depth = 1
                self.found_chapter_list = True
        if tag == "a" and self._chapter_ul_depth and attrs.get("href"):
            self.chapter_links.append(attrs["href"])

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag == "ul" and self._chapter_ul_depth:
            self._chapter_ul_depth -= 1

    def handle_endtag(self, tag):
        if tag == "ul" and self._chapter_ul_depth:
            self._chapter_ul_depth -= 1


def parse_pages(html_dir):
    pages = {}
    for path in sorted(html_dir.glob("*.html")):
        parser = PageParser()
        parser.feed(path.read_text(encoding="utf-8", errors="replace"))
        parser.close()
        pages[path.name] = parser
    return pages


def check_reference(html_dir, pages, source, value, where, failures):
    """One local reference from page/script `source`; returns True when it is local and fine."""
    parts = urllib.parse.urlsplit(value)
    if parts.scheme.lower() in EXTERNAL_SCHEMES or value.startswith("//"):
        return False
    if parts.scheme:
        failures.append(f"{where}: '{value}' uses the {parts.scheme}: scheme; the book must stay "
                        "relative so the folder can be moved")
        return True
    path = urllib.parse.unquote(parts.path)
    target = (html_dir / source).parent / path if path else html_dir / source
    target = Path(os.path.normpath(target))
    try:
        relative = target.relative_to(html_dir)
    except ValueError:
        failures.append(f"{where}: '{value}' points outside the book folder")
        return True
    if not target.exists():
        failures.append(f"{where}: '{value}' -> {relative} does not exist")
        return True
    fragment = urllib.parse.unquote(parts.fragment)
    if fragment and target.suffix == ".html":
        page = pages.get(str(relative))
        if page is None:
            failures.append(f"{where}: '{value}' -> {relative} was not parsed")
        elif fragment not in page.ids:
            failures.append(f"{where}: '{value}': {relative} has no anchor #{fragment}")
    return True


def check_links(html_dir, pages, failures):
    """Checks every local reference of every page and of the navigation scripts; returns counts."""
    counts = {}
    for name, page in pages.items():
        n = 0
        for tag, attr, value, line in page.refs:
            if check_reference(html_dir, pages, name, value, f"{name}:{line} <{tag} {attr}>", failures):
                n += 1
        counts[name] = n
    # The sidebar (navtreedata.js, navtreeindex*.js, per-page tree fragments) and the menu
    # (menudata.js) name pages inside JavaScript string literals.
    script_links = 0
    literal = re.compile(r"""["']([\w.-]+\.html(?:#[\w.:-]*)?)["']""")
    for script in sorted(html_dir.glob("*.js")):
        text = script.read_text(encoding="utf-8", errors="replace")
        for match in literal.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            check_reference(html_dir, pages, script.name, match.group(1), f"{script.name}:{line}", failures)
            script_links += 1
    return counts, script_links


def book_pages(html_dir, pages, failures):
    """index.html and the pages of its chapter list, in order."""
    index = pages.get("index.html")
    if index is None:
        raise SystemExit(f"check_docs_in_browser: {html_dir}/index.html does not exist; build the docs first")
    if not index.found_chapter_list:
        failures.append("index.html: no chapter list (a <ul> after the #main_chapters heading)")
    listed = []
    for href in index.chapter_links:
        parts = urllib.parse.urlsplit(href)
        if parts.scheme or not parts.path.endswith(".html"):
            continue
        name = os.path.normpath(urllib.parse.unquote(parts.path))
        if name not in listed:
            listed.append(name)
    if index.found_chapter_list and not any(CHAPTER_PAGE.match(p) for p in listed):
        failures.append("index.html: the chapter list links no chapter page (chNN.html)")
    for name in listed:
        if CHAPTER_PAGE.match(name) and name.replace(".html", "_hints.html") not in listed:
            failures.append(f"index.html: the chapter list links {name} but not its hints page")
    for name in sorted(pages):
        if BOOK_PAGE.match(name) and name not in listed:
            failures.append(f"{name} exists but index.html's chapter list does not link it")
    return ["index.html"] + [p for p in listed if p in pages]


# --- the browser -------------------------------------------------------------------------------
def start_browser(args, profile_dir):
    options = webdriver.ChromeOptions()
    options.binary_location = args.chromium
    for arg in CHROMIUM_ARGS:
        options.add_argument(arg)
    options.add_argument(f"--user-data-dir={profile_dir}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=args.chromedriver, log_path=os.devnull)
    driver = webdriver.Chrome(service=service, options=options)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": INSTRUMENT_JS})
    driver.set_script_timeout(args.timeout + 10)  # the scripts keep to --timeout themselves
    return driver


def set_viewport(driver, height):
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": WIDTH, "height": int(height), "deviceScaleFactor": 1, "mobile": False})


def object_documents(driver):
    """For each <object>, in document order: (root element name, its child count) of the document
    it holds, or None when it holds none. Read through the DevTools protocol, which sees into
    documents that file:// pages may not read from each other."""
    root = driver.execute_cdp_cmd("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
    found = []
    for node_id in driver.execute_cdp_cmd("DOM.querySelectorAll",
                                          {"nodeId": root, "selector": "object"})["nodeIds"]:
        node = driver.execute_cdp_cmd("DOM.describeNode", {"nodeId": node_id, "depth": 2, "pierce": True})["node"]
        content = node.get("contentDocument")
        elements = [c for c in (content or {}).get("children", []) if c.get("nodeType") == 1]
        if not elements:
            found.append(None)
            continue
        found.append((elements[0].get("localName") or elements[0].get("nodeName", "").lower(),
                      elements[0].get("childNodeCount", len(elements[0].get("children", [])))))
    return found


def check_page(driver, args, html_dir, name, chapter_pages, shots_dir, static_links, in_book):
    failures, notes = [], []
    url = (html_dir / name).as_uri()
    set_viewport(driver, START_HEIGHT)
    driver.get_log("browser")  # start this page's console afresh
    started = time.monotonic()
    driver.get(url)

    # 1. wait for MathJax
    try:
        state = driver.execute_async_script(WAIT_FOR_MATHJAX_JS, int(args.timeout * 1000))
    except TimeoutException:
        state = {"ok": False, "loaded": "?", "end": "?", "pending": "?"}
    if not state.get("ok"):
        failures.append(f"MathJax did not finish within {args.timeout:g} s (loaded: {state.get('loaded')}, "
                        f"startup done: {state.get('end')}, queue pending: {state.get('pending')})")

    # 5. Doxygen's navtree.js fills the sidebar in asynchronously: look again until it lists every
    # book page, or until what it lists has not changed for a moment (or the deadline passes).
    deadline = started + args.timeout
    listed, steady_since = None, time.monotonic()
    while True:
        info = driver.execute_script(INSPECT_PAGE_JS, RAW_TEX)
        sidebar = {urllib.parse.urlsplit(h).path for h in info["sidebar"]}
        missing_in_sidebar = [p for p in chapter_pages if p not in sidebar]
        if sidebar != listed:
            listed, steady_since = sidebar, time.monotonic()
        now = time.monotonic()
        if not missing_in_sidebar or now > deadline or (listed and now - steady_since > 0.5):
            break
        time.sleep(0.05)

    if info["mathUnrendered"]:
        failures.append(f"{len(info['mathUnrendered'])} of {info['math']} formulas not rendered by MathJax, "
                        f"first: {info['mathUnrendered'][0]!r}")
    for error in info["mathErrors"][:5]:
        failures.append(f"MathJax error in the page: {error!r}")
    for error in info["mathjaxErrors"]:
        failures.append(f"MathJax signalled: {error}")
    for line in info["mathjaxLog"]:
        failures.append(f"MathJax message log: {line}")
    for raw in info["rawTex"][:5]:
        failures.append(f"raw TeX in the visible text: {raw}")
    if len(info["rawTex"]) > 5:
        failures.append(f"... and {len(info['rawTex']) - 5} more places with raw TeX")

    # 2. figures
    svg_figures = 0
    figure_sizes = []
    for img in info["images"]:
        if not img["complete"] or not img["naturalWidth"]:
            failures.append(f"image '{img['src']}' did not load")
            continue
        if not img["w"] or not img["h"]:
            failures.append(f"image '{img['src']}' loaded but is not displayed ({img['w']}x{img['h']} px)")
        if img["src"].lower().endswith(".svg") and not img["footer"]:
            svg_figures += 1
            figure_sizes.append(f"{img['w']}x{img['h']}")
    documents = object_documents(driver)
    if len(documents) != len(info["objects"]):
        failures.append(f"found {len(info['objects'])} <object> elements but {len(documents)} in the DevTools DOM")
    for obj, root in zip(info["objects"], documents):
        label = f"<object data='{obj['data']}'>"
        if root is None:
            failures.append(f"{label} did not load a document")
            continue
        kind, children = root
        expects_svg = (obj["type"] or "").startswith("image/svg") or (obj["data"] or "").lower().endswith(".svg")
        if expects_svg and (kind != "svg" or children == 0):
            failures.append(f"{label} loaded <{kind}> with {children} children, not an SVG drawing")
            continue
        if not obj["w"] or not obj["h"]:
            failures.append(f"{label} loaded but is not displayed ({obj['w']}x{obj['h']} px)")
        if expects_svg:
            svg_figures += 1
            figure_sizes.append(f"{obj['w']}x{obj['h']}")
    if CHAPTER_PAGE.match(name) and svg_figures == 0:
        failures.append("a chapter page without a single SVG figure")

    for block in info["wideBlocks"]:
        notes.append(f"a code/output block scrolls sideways at {WIDTH} px ({block['hidden']} px hidden): "
                     f"{block['first']!r}")

    # 5. sidebar (pages outside the book's navigation, opened with --all-pages, only get a note)
    if missing_in_sidebar:
        message = f"the sidebar does not list {', '.join(missing_in_sidebar)}"
        (failures if in_book else notes).append(message)

    # MathJax's status box ("Loading ...", "Typesetting math: 100%", bottom left) stays a moment
    # after the math is done; a settled page has none, and one that stays means MathJax is stuck.
    status = driver.execute_async_script(WAIT_FOR_MATHJAX_STATUS_JS, max(0, int((deadline - time.monotonic()) * 1000)))
    if status:
        failures.append(f"MathJax's status box still says {status!r} after {args.timeout:g} s")

    # 6. screenshot: grow the viewport to the whole page, let Doxygen's resize.js lay it out again.
    height = driver.execute_script(FULL_HEIGHT_JS)
    for _ in range(3):
        set_viewport(driver, height)
        driver.execute_script("window.dispatchEvent(new Event('resize'));")
        again = driver.execute_script(FULL_HEIGHT_JS)
        if again <= height:
            break
        height = again
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": False,
                                                             "optimizeForSpeed": True})
    shot_path = shots_dir / (Path(name).stem + ".png")
    shot_path.write_bytes(base64.b64decode(shot["data"]))

    # 4. console (read last: it includes everything the page logged while we looked at it)
    console = driver.get_log("browser")
    levels = {"SEVERE": 0, "WARNING": 0}
    for entry in console:
        level, message = entry.get("level"), entry.get("message", "")
        if level == "SEVERE":
            failures.append(f"console error: {message}")
        elif level == "WARNING":
            notes.append(f"console warning: {message}")
        levels[level] = levels.get(level, 0) + 1
    other = len(console) - levels["SEVERE"] - levels["WARNING"]

    figures = f"{svg_figures} SVG figure{'s' if svg_figures != 1 else ''}"
    if figure_sizes:
        figures += f" shown at {', '.join(figure_sizes)} px"
    summary = (f"{info['math']} formulas typeset, {figures}, {len(info['images'])} images loaded, "
               f"{static_links} local links ok, console: {levels['SEVERE']} errors "
               f"{levels['WARNING']} warnings {other} other, sidebar lists "
               f"{len(chapter_pages) - len(missing_in_sidebar)}/{len(chapter_pages)} book pages, "
               f"screenshot {shot_path.name} ({WIDTH}x{height}), {time.monotonic() - started:.1f} s")
    return failures, notes, summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html_dir", type=Path)
    parser.add_argument("--screenshots", type=Path, help="where the PNGs go (default HTML_DIR/../screenshots)")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds a page may take to typeset")
    parser.add_argument("--all-pages", action="store_true",
                        help="also open every other page of HTML_DIR (file and folder pages, lists)")
    args = parser.parse_args()

    began = time.monotonic()
    html_dir = args.html_dir.resolve()
    if not (html_dir / "index.html").is_file():
        print(f"check_docs_in_browser: {html_dir}/index.html does not exist; build the docs first", file=sys.stderr)
        return 2
    for tool in (args.chromium, args.chromedriver):
        if not os.access(tool, os.X_OK):
            print(f"check_docs_in_browser: {tool} is missing; apt-get install -y chromium chromium-driver",
                  file=sys.stderr)
            return 2
    shots_dir = (args.screenshots or html_dir.parent / "screenshots").resolve()
    if shots_dir.exists():
        for old in shots_dir.glob("*.png"):
            old.unlink()
    shots_dir.mkdir(parents=True, exist_ok=True)

    failures = []  # (page, message)
    pages = parse_pages(html_dir)
    static_failures = []
    link_counts, script_links = check_links(html_dir, pages, static_failures)
    listed_failures = []
    to_open = book_pages(html_dir, pages, listed_failures)
    failures += [("links", f) for f in static_failures] + [("chapter list", f) for f in listed_failures]
    print(f"{'FAIL' if static_failures else 'ok  '} links: {sum(link_counts.values())} local references "
          f"in {len(pages)} pages and {script_links} page links in the navigation scripts checked "
          f"(files exist, anchors exist)")
    for failure in static_failures + listed_failures:
        print(f"       {failure}")
    chapter_pages = [p for p in to_open if BOOK_PAGE.match(p)]
    book = set(to_open)
    if args.all_pages:
        to_open += [p for p in pages if p not in to_open]

    profile_dir = tempfile.mkdtemp(prefix="scalebook-chromium-")
    driver = None
    try:
        try:
            driver = start_browser(args, profile_dir)
        except WebDriverException as error:
            print(f"check_docs_in_browser: could not start {args.chromium} through {args.chromedriver}: "
                  f"{str(error).strip()}", file=sys.stderr)
            return 2
        for name in to_open:
            try:
                page_failures, notes, summary = check_page(driver, args, html_dir, name, chapter_pages,
                                                           shots_dir, link_counts.get(name, 0),
                                                           name in book)
            except WebDriverException as error:
                message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
                page_failures, notes, summary = [f"the browser failed on this page: {message}"], [], "not checked"
            print(f"{'FAIL' if page_failures else 'ok  '} {name}: {summary}")
            for note in notes:
                print(f"       note: {note}")
            for failure in page_failures:
                print(f"       {failure}")
            failures += [(name, f) for f in page_failures]
    finally:
        if driver is not None:
            driver.quit()
        shutil.rmtree(profile_dir, ignore_errors=True)

    elapsed = time.monotonic() - began
    if failures:
        print(f"\n{len(failures)} problem(s) in the book as a browser shows it ({elapsed:.1f} s):", file=sys.stderr)
        for page, failure in failures:
            print(f"  {page}: {failure}", file=sys.stderr)
        print(f"screenshots: {shots_dir}", file=sys.stderr)
        return 1
    print(f"all {len(to_open)} pages render in Chromium: math typeset, figures loaded, links resolve, "
          f"console clean ({elapsed:.1f} s); screenshots in {shots_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
