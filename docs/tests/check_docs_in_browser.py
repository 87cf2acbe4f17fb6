#!/usr/bin/python3
"""Open the built book in headless Chromium and check that every page really renders.

    check_docs_in_browser.py HTML_DIR [--screenshots DIR] [--book-pages-only] [--timeout S]
                             [--edition reference|student|instructor] [--widths phone,tablet,desktop]
                             [--in-place] [--browsers N] [--chromium PATH] [--chromedriver PATH]

The pages: every page of HTML_DIR (index.html and its chapter list first: each chapter and its
hints page; then file and folder pages); with --book-pages-only, only the former. The book is first
copied to a temporary folder (moved, as a zipped book is) and opened there as file:// URLs in one
Chromium whose fontconfig hides the system's MathJax fonts and which blocks every request outside
the copy: the math must typeset with the fonts the book ships. Each page is opened at a phone
(390 px), a tablet (768 px) and a desktop (1280 px) width, and checked for:

  1. math     MathJax finished (its startup "End" hook, then an empty queue) within --timeout
              seconds; every script[type^="math/tex"] has its rendered MathJax frame beside it, with
              a non-zero size; MathJax signalled no error (Math Processing Error, TeX parse error,
              file load error, font trouble) and its message log shows no failure; no "Math
              Processing Error", .merror or .MathJax_Error in the page; no raw TeX (\\f$ \\f[ \\( \\[
              $$ ...) left in the visible prose (code blocks are source and are not searched); and
              no MathJax status box on screen (the book turns it off).
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
  6. screenshot  PNGs per page, width and mode into --screenshots (default HTML_DIR/../screenshots):
              the full page in light mode (cut at 16000 px), its first two screens in dark mode,
              e.g. ch03-phone-light.png, ch03-phone-dark.png.
  7. layout   the page is no wider than the window (in light and dark mode); a display equation or
              code/output block wider than its box scrolls inside it; figures link to themselves,
              have an accessible name (not "Gnuplot") and, on a phone, text of at least 10 px; the
              table of contents is shown and, where it scrolls away, a "Contents" button leads
              back; on a phone the Chapters menu lists every book page; book pages end with
              previous/next links; chapter pages label their lesson output "Output" and set it
              apart from code, and show each exercise file (solution, in the instructor edition)
              once under a caption naming it, with no file header: a stub from its instructions
              ("// What to write:") through the fence line to its code, a solution from its
              namespace on; hints
              pages offer one collapsed tier at a time (tier 2 only once tier 1 is open); no raw
              TeX (d_k, \sqrt, $) in titles, captions, the sidebar or the window title; MathJax
              uses the TeX web fonts, never image fonts; the instructor edition says on every page
              that it holds the solutions and shows each chapter's reference solution section; the
              others do neither.

  8. rotation  the chapter page with the most display formulas, typeset at 1280 px and then
              narrowed to 390 px (a phone turned), has no more formulas wider than their box than
              when opened at 390 px: the book breaks them again at the new width.
  9. tooltips statically, every code tooltip (div.ttc) and every prose link (a.el) with a tooltip
              whose target's brief holds a formula carries that brief with its formula (docs/tooltip_math.py),
              never Doxygen's plain text without it; in the browser, on each page that has such
              tooltips, the first of each kind opens on hover with its math typeset and no raw TeX.
              And the "Contents" button, wherever it shows, lies outside the text area
              (#doc-content): a button floating over the text hides a line of it at every scroll
              position.

Code or output blocks that scroll sideways at 1280 px are reported as notes, not failures.
One line per page says what was checked; the failures are listed again at the end, exit status 1.
Exit status 2: the book or the browser could not be used at all. Standard library + selenium only.
"""

import argparse
import base64
import html
import html.parser
import os
import re
import shutil
import sys
import tempfile
import threading
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
# The widths a reader brings: a phone (390 x 844, as a phone reports itself), a tablet, a desktop.
VIEWPORTS = [("phone", 390, 844, True), ("tablet", 768, 1024, False), ("desktop", 1280, 900, False)]
# The smallest figure text, in CSS pixels on the screen, that a phone reader can still read.
# (the figure's body text; subscripts, drawn at 0.8 of it, may be smaller down to MIN_SUBSCRIPT_PX).
MIN_FIGURE_TEXT_PX = 10.0
MIN_SUBSCRIPT_PX = 8.0
# Full-page screenshots are cut at this height (Chromium's limit for one capture is 16384 px).
MAX_SHOT_HEIGHT = 16000
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

MATHJAX_STATUS_JS = r"""
// MathJax's status box ("Loading ...", bottom left): the book's configuration turns it off
// (messageStyle "none"), so a box on screen is a configuration that did not take.
var box = document.getElementById("MathJax_Message");
var showing = box && box.style.display !== "none" && (box.innerText || "").trim();
return showing || "";
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
  // (the sidebar is hidden on a phone, its titles' math with it)
  if (!visible(s.parentElement) && s.closest("#side-nav") && window.innerWidth < 768) return;
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
                       w: d.w, h: d.h, footer: !!img.closest("#nav-path, .footer"),
                       sidebar: !!img.closest("#side-nav") && window.innerWidth < 768 });
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

LAYOUT_JS = r"""
// The page at the current width: what sticks out, what is cut, what a reader cannot reach.
var out = { viewport: window.innerWidth, pageWidth: 0, wide: [], clippedMath: [], clippedCode: [],
            figures: [], toc: null, tocButton: false, phoneMenu: [], pager: 0, outputs: [],
            hints: [], edition: "", rawTitles: [], fontsInUse: null, imageFonts: null, webFonts: null,
            files: [], headers: [] };
var doc = document.getElementById("doc-content");
out.pageWidth = Math.max(document.documentElement.scrollWidth, document.body.scrollWidth);
var docOverflow = doc ? doc.scrollWidth - doc.clientWidth : 0;
out.docOverflow = docOverflow;
function scrolls(el) {
  var o = getComputedStyle(el).overflowX;
  return o === "auto" || o === "scroll";
}
function clips(el) {
  var o = getComputedStyle(el).overflowX;
  return o !== "visible";
}
function name(el) {
  return el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
         (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : "");
}
// Elements reaching past the right edge of the window, outside any box that scrolls or clips them.
var limit = window.innerWidth + 1;
var all = document.querySelectorAll("#doc-content *, #top *, #nav-path *, body > *");
for (var i = 0; i < all.length && out.wide.length < 5; i++) {
  var el = all[i];
  var r = el.getBoundingClientRect();
  if (r.right <= limit || !r.width || !r.height) continue;
  if (el.closest("#side-nav") && window.innerWidth < 768) continue;
  var contained = false;
  for (var p = el.parentElement; p && p !== document.body; p = p.parentElement) {
    if (p.id === "doc-content" || p.id === "nav-tree") break;
    if (clips(p)) { contained = true; break; }
  }
  if (contained) continue;
  var parentRight = el.parentElement ? el.parentElement.getBoundingClientRect().right : 0;
  if (parentRight > limit && el.parentElement !== document.body && !el.parentElement.matches("#doc-content")) continue;
  out.wide.push(name(el) + " reaches " + Math.round(r.right) + " px: " + (el.innerText || "").trim().slice(0, 50).replace(/\s+/g, " "));
}
// Display equations and code/output blocks: wider than their box only if that box scrolls.
document.querySelectorAll(".MathJax_Display").forEach(function (d) {
  if (d.scrollWidth > d.clientWidth + 1 && !scrolls(d)) out.clippedMath.push((d.textContent || "").slice(0, 60));
});
document.querySelectorAll("div.fragment, pre.fragment").forEach(function (f) {
  if (f.scrollWidth > f.clientWidth + 1 && !scrolls(f)) out.clippedCode.push((f.innerText || "").trim().slice(0, 60));
});
// Figures: their size on screen, link and name.
document.querySelectorAll("div.contents div.image object, div.contents div.image img").forEach(function (f) {
  var r = f.getBoundingClientRect();
  var link = f.closest("a[href]");
  out.figures.push({ data: f.getAttribute("data") || f.getAttribute("src"), w: r.width,
                     link: link ? link.getAttribute("href") : null,
                     label: f.getAttribute("aria-label") || f.getAttribute("alt") || "",
                     role: f.getAttribute("role") || "" });
});
// The table of contents: shown, and reachable from further down the page.
var toc = document.querySelector("div.contents div.toc");
if (toc) {
  var tr = toc.getBoundingClientRect();
  out.toc = { w: tr.width, h: tr.height, position: getComputedStyle(toc).position };
  var button = document.querySelector("a.scalebook-toc-button");
  out.tocButton = !!button && getComputedStyle(button).display !== "none" && button.getAttribute("href") === "#" + toc.id;
  var reading = document.getElementById("doc-content");
  if (out.tocButton && reading) {
    var b = button.getBoundingClientRect(), t = reading.getBoundingClientRect();
    var overlapX = Math.min(b.right, t.right) - Math.max(b.left, t.left);
    var overlapY = Math.min(b.bottom, t.bottom) - Math.max(b.top, t.top);
    if (overlapX > 0.5 && overlapY > 0.5)
      out.tocButtonCovers = "button " + Math.round(b.left) + ".." + Math.round(b.right) + " x " + Math.round(b.top) + ".." +
                            Math.round(b.bottom) + " px over the text area " + Math.round(t.left) + ".." + Math.round(t.right) +
                            " x " + Math.round(t.top) + ".." + Math.round(t.bottom) + " px";
  }
}
var menu = document.querySelector("details.scalebook-phone-menu");
if (menu && getComputedStyle(menu).display !== "none") {
  menu.querySelectorAll("a[href]").forEach(function (a) { out.phoneMenu.push(a.getAttribute("href")); });
}
out.pager = document.querySelectorAll(".scalebook-pager a[href]").length;
document.querySelectorAll(".scalebook-output").forEach(function (o) {
  out.outputs.push({ label: getComputedStyle(o, "::before").content, fragment: !!o.querySelector("div.fragment"),
                     background: getComputedStyle(o.querySelector("div.fragment") || o).backgroundColor });
});
var codeBlock = Array.prototype.find.call(document.querySelectorAll("div.fragment"), function (f) { return !f.closest(".scalebook-output"); });
out.codeBackground = codeBlock ? getComputedStyle(codeBlock).backgroundColor : null;
document.querySelectorAll("div.scalebook-hints").forEach(function (box) {
  var tiers = box.querySelectorAll("details.scalebook-hint");
  out.hints.push({ tiers: tiers.length,
                   open: Array.prototype.filter.call(tiers, function (t) { return t.open; }).length,
                   shown: Array.prototype.filter.call(tiers, function (t) { return t.getClientRects().length > 0; }).length });
});
// Exercise files and solutions (.scalebook-file): the caption naming the file, the code under it;
// and any file header (its first lines "// Exercise 3.1 — ..." or "// Reference for exercise 3.1
// ...", then "// Chapter 3: ...") shown on the page.
document.querySelectorAll(".scalebook-file").forEach(function (b) {
  var caption = b.querySelector(".scalebook-file-name");
  var code = b.querySelector("div.fragment");
  out.files.push({ name: caption ? caption.innerText.trim() : "",
                   shown: !!caption && caption.getClientRects().length > 0,
                   code: code ? code.innerText : "" });
});
document.querySelectorAll("div.fragment").forEach(function (f) {
  var header = (f.innerText || "").match(/^\/\/ (Exercise|Reference for exercise) [0-9]+\.[0-9]+.*\n\/\/ Chapter [0-9]+:/m);
  if (header) out.headers.push(header[0].slice(0, 60));
});
var edition = document.getElementById("scalebook-edition");
out.edition = edition && edition.getClientRects().length ? edition.innerText.trim() : "";
out.solution = !!document.querySelector("div.contents [id$='_solution']");
// Raw TeX (d_k, \sqrt, $) in titles, headings, captions, the sidebar and the window title.
var places = document.querySelectorAll(".title, .caption, div.contents h1, div.contents h2, div.contents h3, div.toc a, #nav-tree .label, .scalebook-pager a, div.contents a.el, details.scalebook-phone-menu a");
var rawTex = /(^|[^A-Za-z0-9_])[A-Za-z]_[A-Za-z0-9{]|\\[a-z]+|\$/;
places.forEach(function (el) {
  var copy = el.cloneNode(true);
  copy.querySelectorAll(".MathJax, .MathJax_Preview, script, code").forEach(function (m) { m.remove(); });
  var text = copy.textContent || "";
  if (rawTex.test(text)) out.rawTitles.push(name(el) + ": " + text.trim().slice(0, 70));
});
if (rawTex.test(document.title)) out.rawTitles.push("window title: " + document.title);
var html = window.MathJax && MathJax.OutputJax && MathJax.OutputJax["HTML-CSS"];
if (html) { out.fontsInUse = html.fontInUse || null; out.imageFonts = !!html.imgFonts; out.webFonts = !!html.webFonts; }
return out;
"""

WIDE_FORMULAS_JS = r"""
// Display formulas wider than their box (they scroll inside it), and how wide the page is.
var wide = Array.prototype.filter.call(document.querySelectorAll(".MathJax_Display"), function (d) {
  return d.scrollWidth > d.clientWidth + 1;
}).length;
return { wide: wide, pageWidth: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth) };
"""

TOOLTIP_JS = r"""
// Opens the first tooltip holding a formula, of a code link (a.code, its div.ttc) or of a prose
// link (a.el[data-scalebook-tip]), as a hover does, and reports what it shows once MathJax is done.
var kind = arguments[0], done = arguments[arguments.length - 1];
var links = kind === "code" ? document.querySelectorAll("a.code, a.codeRef") : document.querySelectorAll("a.el[data-scalebook-tip]");
var link = Array.prototype.find.call(links, function (a) {
  if (kind !== "code") return a.getAttribute("data-scalebook-tip").indexOf("\\(") >= 0;
  var tip = document.getElementById("a" + (a.getAttribute("href") || "").replace(/.*\//, "").replace(/[^a-z_A-Z0-9]/g, "_"));
  return tip && tip.querySelector(".ttdoc") && tip.querySelector(".ttdoc").textContent.indexOf("\\(") >= 0;
});
if (!link) { done(null); return; }
link.scrollIntoView({ block: "center" });
if (!window.jQuery || !jQuery(link).data("displayController")) {
  done({ name: link.textContent, opened: false, text: "", math: 0, raw: false }); return;
}
jQuery.powerTip.show(link);
var deadline = Date.now() + 5000;
(function poll() {
  var tip = document.getElementById("powerTip");
  var shown = tip && getComputedStyle(tip).display !== "none" && tip.getClientRects().length > 0;
  var math = shown ? Array.prototype.filter.call(tip.querySelectorAll(".MathJax"), function (m) {
    var r = m.getBoundingClientRect(); return r.width > 0 && r.height > 0;
  }).length : 0;
  var pending = window.MathJax && MathJax.Hub && MathJax.Hub.queue ? MathJax.Hub.queue.pending : 0;
  if ((shown && math && !pending) || Date.now() > deadline) {
    var copy = tip ? tip.cloneNode(true) : null;
    if (copy) copy.querySelectorAll(".MathJax, .MathJax_Preview, script").forEach(function (m) { m.remove(); });
    var text = copy ? copy.textContent : "";
    jQuery.powerTip.hide(link, true);
    done({ name: link.textContent, opened: !!shown, text: text.trim().slice(0, 100), math: math,
           raw: /\\\(|\\\)|\\f\$|\$/.test(text) });
    return;
  }
  setTimeout(poll, 50);
})();
"""

OPEN_FIRST_HINT_JS = r"""
// Opening tier 1 of the first exercise must show tier 2's button, and only it.
var box = document.querySelector("div.scalebook-hints");
if (!box) return null;
var tiers = box.querySelectorAll("details.scalebook-hint");
tiers[0].open = true;
var shown = Array.prototype.filter.call(tiers, function (t) { return t.getClientRects().length > 0; }).length;
tiers[0].open = false;
return { tiers: tiers.length, shownAfterOpeningOne: shown };
"""

SET_DARK_JS = r"""
var dark = arguments[0];
document.documentElement.classList.toggle("dark-mode", dark);
document.documentElement.classList.toggle("light-mode", !dark);
return getComputedStyle(document.body).backgroundColor;
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


MEMDESC = re.compile(r'<tr class="memdesc:(\w+)"><td class="mdescLeft">&#160;</td><td class="mdescRight">(.*?)'
                     r'\s*(?:<a href="([^"#]*)#\1">More\.\.\.</a>)?<br /></td></tr>', re.S)
CODE_TIP = re.compile(r'<div class="ttc[^"]*" id="[^"]*"><div class="ttname"><a href="([^"]+)">([^<]*)</a></div>'
                      r'(?:<div class="ttdeci">.*?</div>)?<div class="ttdoc">(.*?)</div>', re.S)
PROSE_LINK = re.compile(r'<a class="el" href="([^"]+)"([^>]*)>')


def check_tooltips(html_dir, failures):
    """Every tooltip and prose link whose target's brief holds a formula carries the formula."""
    texts = {path.name: path.read_text(encoding="utf-8", errors="replace") for path in sorted(html_dir.glob("*.html"))}
    with_math = {}
    for name, text in texts.items():
        for match in MEMDESC.finditer(text):
            if "\\(" in match.group(2):
                with_math[f"{match.group(3) or name}#{match.group(1)}"] = match.group(2)
    checked = 0
    for name, text in texts.items():
        for match in CODE_TIP.finditer(text):
            if match.group(1) in with_math:
                checked += 1
                if "\\(" not in match.group(3):
                    failures.append(f"{name}: the code tooltip of {match.group(2)} lost its formulas: "
                                    f"{html.unescape(re.sub('<[^>]+>', '', match.group(3)))[:80]!r}")
        for match in PROSE_LINK.finditer(text):
            href = match.group(1)
            attributes = match.group(2)
            shows_tip = "title=" in attributes or "data-scalebook-tip=" in attributes
            if shows_tip and (name + href if href.startswith("#") else href) in with_math:
                checked += 1
                if "\\(" not in html.unescape(attributes):
                    failures.append(f"{name}: the link to {href} shows its brief without its formulas "
                                    f"(a plain title instead of data-scalebook-tip)")
    return checked


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


def read_svgs(html_dir, failures):
    """Each SVG figure of the book: its drawn width and its smallest text (px), and its name."""
    svgs = {}
    for path in sorted(html_dir.glob("*.svg")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "<text" not in text:
            continue  # an icon of the theme, not a figure
        width = re.search(r'<svg[^>]*\bwidth="([\d.]+)', text)
        view = re.search(r'viewBox="[\d.-]+ [\d.-]+ ([\d.]+) [\d.]+"', text)
        sizes = [float(x) for x in re.findall(r'font-size="([\d.]+)"', text)]
        sizes += [float(x) for x in re.findall(r'font-size:\s*([\d.]+)', text)]
        title = re.search(r"<title>(.*?)</title>", text, re.S)
        title = title.group(1).strip() if title else ""
        if not title or title.lower() == "gnuplot":
            failures.append(f"{path.name}: the figure's accessible name (its <title>) is {title!r}, not what it shows")
        drawn = float(view.group(1)) if view else float(width.group(1)) if width else 0.0
        body = max(set(sizes), key=sizes.count) if sizes else 0.0
        svgs[path.name] = {"drawn": drawn, "min_font": min(sizes) if sizes else 0.0, "body_font": body,
                           "title": title}
    return svgs


def check_layout(layout, name, width, chapter_pages, svgs, args):
    """The failures of one page at one width, from LAYOUT_JS's answer."""
    failures = []
    if layout["pageWidth"] > width + 1 or layout["docOverflow"] > 1:
        failures.append(f"the page is wider than the {width} px window (page {layout['pageWidth']} px, "
                        f"content overflows by {layout['docOverflow']} px); it pans sideways"
                        + (": " + "; ".join(layout["wide"][:3]) if layout["wide"] else ""))
    for math in layout["clippedMath"][:3]:
        failures.append(f"a display equation is cut at {width} px (wider than its box, which does not scroll): {math!r}")
    for code in layout["clippedCode"][:3]:
        failures.append(f"a code/output block is cut at {width} px (wider than its box, which does not scroll): {code!r}")
    for figure in layout["figures"]:
        source = figure["data"] or ""
        if not figure["link"] or os.path.basename(urllib.parse.urlsplit(figure["link"]).path) != os.path.basename(source):
            failures.append(f"figure {source}: not a link to itself full size (found {figure['link']!r})")
        if not figure["label"] or figure["label"].strip().lower() == "gnuplot":
            failures.append(f"figure {source}: no accessible name (aria-label/alt: {figure['label']!r})")
        svg = svgs.get(os.path.basename(source))
        if svg and svg["drawn"] and svg["min_font"] and width < 768:
            scale = figure["w"] / svg["drawn"]
            if svg["body_font"] * scale < MIN_FIGURE_TEXT_PX or svg["min_font"] * scale < MIN_SUBSCRIPT_PX:
                failures.append(f"figure {source}: its text is {svg['body_font'] * scale:.1f} px (smallest "
                                f"{svg['min_font'] * scale:.1f} px) on a {width} px screen (at least "
                                f"{MIN_FIGURE_TEXT_PX} px, {MIN_SUBSCRIPT_PX} px for subscripts)")
    if layout["toc"] is not None:
        if not layout["toc"]["w"] or not layout["toc"]["h"]:
            failures.append(f"the table of contents is hidden at {width} px")
        elif layout["toc"]["position"] != "sticky" and not layout["tocButton"]:
            failures.append(f"at {width} px the table of contents scrolls away and no 'Contents' button leads back")
        if layout.get("tocButtonCovers"):
            failures.append(f"at {width} px the 'Contents' button covers the page's text: {layout['tocButtonCovers']}")
    if width < 768:
        missing = [p for p in chapter_pages if p not in layout["phoneMenu"]]
        if missing:
            failures.append(f"the phone menu does not list {', '.join(missing)}")
    if (BOOK_PAGE.match(name) or name == "index.html") and layout["pager"] < 1:
        failures.append("no previous/next links (.scalebook-pager) at the end of the page")
    if CHAPTER_PAGE.match(name):
        if not layout["outputs"]:
            failures.append("a chapter page without a labelled lesson output block (.scalebook-output)")
        for block in layout["outputs"]:
            if "Output" not in (block["label"] or "") or not block["fragment"]:
                failures.append(f"an output block is not labelled 'Output' (label {block['label']!r})")
                break
            if layout["codeBackground"] and block["background"] == layout["codeBackground"]:
                failures.append("lesson output looks exactly like code (same background)")
                break
    if CHAPTER_PAGE.match(name):
        failures += check_exercise_files(layout, args)
    if name.endswith("_hints.html"):
        if not layout["hints"]:
            failures.append("a hints page without collapsed hint tiers (div.scalebook-hints)")
        for box in layout["hints"]:
            if box["open"] or box["shown"] != 1:
                failures.append(f"hint tiers not revealed one at a time: {box['open']} open and {box['shown']} "
                                f"of {box['tiers']} offered on arrival (expected 0 open, 1 offered)")
                break
    if args.edition == "instructor" and "solutions" not in layout["edition"]:
        failures.append("the instructor edition does not say on this page that it contains the solutions")
    if args.edition != "instructor" and layout["edition"]:
        failures.append(f"a {args.edition} edition page says {layout['edition']!r}")
    if CHAPTER_PAGE.match(name) and layout["solution"] != (args.edition == "instructor"):
        failures.append(f"the {args.edition} edition {'lacks' if args.edition == 'instructor' else 'shows'} "
                        "the chapter's reference solution section")
    for raw in layout["rawTitles"][:3]:
        failures.append(f"raw TeX in a title, caption or the sidebar: {raw}")
    if layout["fontsInUse"] is not None and (layout["imageFonts"] or layout["fontsInUse"] != "TeX"):
        failures.append(f"MathJax set the math in {layout['fontsInUse']!r} (image fonts: {layout['imageFonts']}), "
                        "not in the TeX web fonts shipped with the book")
    return failures


# How a stub is shown (docs/prepare_page.cmake): from the line heading its instructions, through the
# line below which the student's code goes (tools/scalebook/loop/errata.py's INSTRUCTIONS and FENCE).
STUB_INSTRUCTIONS = "// What to write:"
STUB_FENCE = "// ---- Your code goes below this line"


def check_exercise_files(layout, args):
    """A chapter page shows each exercise file (and, in the instructor edition, each solution) once,
    captioned with its path: a stub from its instructions on (the instructions, the fence line, then
    its code from the includes), a solution from its namespace on; no file header, neither in those
    blocks nor anywhere else on the page."""
    failures = []
    names = [block["name"] for block in layout["files"]]
    if not any(n.startswith("exercises/") for n in names):
        failures.append("a chapter page without its exercise files (.scalebook-file captioned exercises/...)")
    for n in sorted({n for n in names if names.count(n) > 1}):
        failures.append(f"{n} is shown {names.count(n)} times")
    solutions = [n for n in names if n.startswith("solutions/")]
    if args.edition == "instructor" and not solutions:
        failures.append("the instructor edition's chapter page shows no solution file")
    if args.edition != "instructor" and solutions:
        failures.append(f"a {args.edition} edition page shows the solution {solutions[0]}")
    for block in layout["files"]:
        if not block["shown"] or not re.fullmatch(r"(exercises|solutions)/[^/]+/[^/]+\.cpp", block["name"]):
            failures.append(f"an exercise file's caption is missing or hidden (caption {block['name']!r})")
        code = block["code"].lstrip()
        if block["name"].startswith("exercises/"):
            if (not code.startswith(STUB_INSTRUCTIONS) or STUB_FENCE not in code
                    or "namespace scalebook" not in code.split(STUB_FENCE, 1)[-1]):
                failures.append(f"{block['name']}: the stub is not shown from its instructions through the fence "
                                f"to its code (a file header, or nothing, is shown): {code[:80]!r}")
        elif not code.startswith("namespace scalebook") or "#include" in code:
            failures.append(f"{block['name']}: its code does not start at its namespace (a file header, or "
                            f"nothing, is shown): {code[:80]!r}")
    if len(layout["headers"]) > 0:
        failures.append(f"{len(layout['headers'])} exercise file header(s) on the page, first: "
                        f"{layout['headers'][0].splitlines()[0]!r}")
    return failures


FONTCONFIG = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<!-- The machine's fonts without MathJax's: a reader's machine has none of them. -->
<fontconfig>
  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>
  <cachedir>{cache}</cachedir>
  <selectfont><rejectfont><glob>*/mathjax/*</glob><glob>*MathJax*</glob></rejectfont></selectfont>
</fontconfig>
"""

SYSTEM_MATHJAX_FONT_JS = r"""
// Is a MathJax font installed where this browser can see it? (Compared with a fallback face.)
var c = document.createElement("canvas").getContext("2d");
var sample = "ABCDxyz(){}+=0123456789";
c.font = "40px monospace"; var mono = c.measureText(sample).width;
c.font = "40px MathJax_Main, monospace"; var main = c.measureText(sample).width;
c.font = "40px MathJax_Math, monospace"; var math = c.measureText(sample).width;
return main !== mono || math !== mono;
"""


# --- the browser -------------------------------------------------------------------------------
def start_browser(args, profile_dir):
    options = webdriver.ChromeOptions()
    options.binary_location = args.chromium
    for arg in CHROMIUM_ARGS:
        options.add_argument(arg)
    options.add_argument(f"--user-data-dir={profile_dir}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    env = dict(os.environ)
    if args.fontconfig:
        env["FONTCONFIG_FILE"] = str(args.fontconfig)
    service = Service(executable_path=args.chromedriver, log_path=os.devnull, env=env)
    driver = webdriver.Chrome(service=service, options=options)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": INSTRUMENT_JS})
    if args.blocked:
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": args.blocked})
    driver.set_script_timeout(args.timeout + 10)  # the scripts keep to --timeout themselves
    return driver


def set_viewport(driver, height, width=WIDTH, mobile=False):
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": int(width), "height": int(height), "deviceScaleFactor": 1, "mobile": mobile})


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


def check_page(driver, args, html_dir, name, chapter_pages, shots_dir, static_links, in_book,
               viewport=("desktop", WIDTH, START_HEIGHT, False), svgs=None):
    vp_label, width, start_height, mobile = viewport
    failures, notes = [], []
    url = (html_dir / name).as_uri()
    set_viewport(driver, start_height, width, mobile)
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
        if (not img["w"] or not img["h"]) and not img.get("sidebar"):
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
        notes.append(f"a code/output block scrolls sideways at {width} px ({block['hidden']} px hidden): "
                     f"{block['first']!r}")

    # 5. sidebar (pages outside the book's navigation, opened with --all-pages, only get a note)
    if missing_in_sidebar and width >= 768:
        message = f"the sidebar does not list {', '.join(missing_in_sidebar)}"
        (failures if in_book else notes).append(message)

    # 7. layout at this width
    layout = driver.execute_script(LAYOUT_JS)
    failures += check_layout(layout, name, width, chapter_pages, svgs or {}, args)
    if layout["hints"]:
        opened = driver.execute_script(OPEN_FIRST_HINT_JS)
        if opened and opened["tiers"] > 1 and opened["shownAfterOpeningOne"] != 2:
            failures.append(f"hints: with tier 1 open, {opened['shownAfterOpeningOne']} of {opened['tiers']} "
                            "tiers are offered (expected tiers 1 and 2)")

    # 9. tooltips open with their math typeset (at the desktop width, where a mouse hovers)
    tips_opened = []
    if width >= 1024:
        for kind in ("code", "prose"):
            tip = driver.execute_async_script(TOOLTIP_JS, kind)
            if tip is None:
                continue
            tips_opened.append(f"{kind} link {tip['name']} ({tip['math']} formulas)")
            what = f"the tooltip of the {kind} link {tip['name']!r}"
            if not tip["opened"]:
                failures.append(f"{what} does not open")
            elif not tip["math"]:
                failures.append(f"{what} shows no typeset math: {tip['text']!r}")
            elif tip["raw"]:
                failures.append(f"{what} shows raw TeX: {tip['text']!r}")

    status = driver.execute_script(MATHJAX_STATUS_JS)
    if status:
        failures.append(f"MathJax's status box is on screen ({status!r}): the book's mathjax-config.js "
                        "turns it off")

    # 6. screenshots, light and dark: grow the viewport to the whole page, let Doxygen's resize.js
    # lay it out again.
    # Doxygen's reference pages (structs, files) are checked for layout in both modes, but only the
    # book's own pages are photographed: captures are most of the test's time.
    height = driver.execute_script(FULL_HEIGHT_JS)
    for _ in range(3 if in_book else 0):
        set_viewport(driver, min(height, MAX_SHOT_HEIGHT), width, mobile)
        driver.execute_script("window.dispatchEvent(new Event('resize'));")
        again = driver.execute_script(FULL_HEIGHT_JS)
        if again <= height or height >= MAX_SHOT_HEIGHT:
            break
        height = again
    height = min(height, MAX_SHOT_HEIGHT)
    shot_names = []
    for mode in ("light", "dark"):
        background = driver.execute_script(SET_DARK_JS, mode == "dark")
        if mode == "dark":
            dark_layout = driver.execute_script(LAYOUT_JS)
            if dark_layout["pageWidth"] > width + 1 or dark_layout["docOverflow"] > 1:
                failures.append(f"dark mode: the page is wider than the window ({dark_layout['pageWidth']} px)")
            if background in ("rgb(255, 255, 255)", "rgba(0, 0, 0, 0)"):
                failures.append(f"dark mode: the page background stays {background}")
        if not in_book:
            continue
        capture = {"format": "png", "captureBeyondViewport": False, "optimizeForSpeed": True}
        if mode == "dark":  # the first two screens: enough to see the colours, and quick
            capture["clip"] = {"x": 0, "y": 0, "width": width, "height": min(height, 2 * start_height), "scale": 1}
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", capture)
        shot_path = shots_dir / f"{Path(name).stem}-{vp_label}-{mode}.png"
        shot_path.write_bytes(base64.b64decode(shot["data"]))
        shot_names.append(shot_path.name)
    driver.execute_script(SET_DARK_JS, False)

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
               + (f"tooltips opened: {', '.join(tips_opened)}, " if tips_opened else "") +
               f"screenshots {', '.join(shot_names)} ({width}x{height}), {time.monotonic() - started:.1f} s")
    return failures, notes, summary


def check_rotation(driver, args, open_dir, name):
    """A phone turned from landscape: the page typeset at 1280 px, then narrowed to 390 px, must
    break its formulas as a page opened at 390 px does (docs/scalebook.js typesets them again)."""
    def typeset_at(width, mobile):
        set_viewport(driver, 844, width, mobile)
        return driver.execute_async_script(WAIT_FOR_MATHJAX_JS, int(args.timeout * 1000)).get("ok")

    driver.get((open_dir / name).as_uri())
    if not typeset_at(390, True):
        return [f"{name}: MathJax did not finish at 390 px"]
    fresh = driver.execute_script(WIDE_FORMULAS_JS)
    driver.get((open_dir / name).as_uri())
    if not typeset_at(1280, False):
        return [f"{name}: MathJax did not finish at 1280 px"]
    set_viewport(driver, 844, 390, True)
    driver.execute_script("window.dispatchEvent(new Event('resize'));")
    time.sleep(0.6)  # the page waits for the resizing to settle (250 ms) before it typesets again
    driver.execute_async_script(WAIT_FOR_MATHJAX_JS, int(args.timeout * 1000))
    turned = driver.execute_script(WIDE_FORMULAS_JS)
    failures = []
    if turned["wide"] > fresh["wide"]:
        failures.append(f"{name} turned from 1280 to 390 px: {turned['wide']} display formulas wider than "
                        f"their box, {fresh['wide']} when opened at 390 px (formulas not broken again)")
    if turned["pageWidth"] > 391:
        failures.append(f"{name} turned from 1280 to 390 px is {turned['pageWidth']} px wide")
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html_dir", type=Path)
    parser.add_argument("--screenshots", type=Path, help="where the PNGs go (default HTML_DIR/../screenshots)")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds a page may take to typeset")
    parser.add_argument("--book-pages-only", action="store_true",
                        help="open only index.html and its chapter list's pages (default: every page)")
    parser.add_argument("--all-pages", action="store_true", help=argparse.SUPPRESS)  # now the default
    parser.add_argument("--edition", choices=["reference", "student", "instructor"], default="reference",
                        help="which edition HTML_DIR is: the instructor edition must say so on every page")
    parser.add_argument("--widths", default="phone,tablet,desktop",
                        help="comma-separated subset of " + ",".join(v[0] for v in VIEWPORTS))
    parser.add_argument("--browsers", type=int, default=2,
                        help="how many Chromiums check pages side by side (default 2)")
    parser.add_argument("--in-place", action="store_true",
                        help="open the book where it is, with the machine's fonts (default: a copy of the "
                             "folder, with the system's MathJax fonts hidden and nothing outside it reachable)")
    args = parser.parse_args()
    args.fontconfig = None
    args.blocked = []
    viewports = [v for v in VIEWPORTS if v[0] in args.widths.split(",")]

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
    tooltip_failures = []
    tooltips = check_tooltips(html_dir, tooltip_failures)
    failures += [("tooltips", f) for f in tooltip_failures]
    print(f"{'FAIL' if tooltip_failures else 'ok  '} tooltips: {tooltips} tooltips and links whose target's "
          "brief holds a formula carry it")
    for failure in tooltip_failures:
        print(f"       {failure}")
    chapter_pages = [p for p in to_open if BOOK_PAGE.match(p)]
    book = set(to_open)
    if not args.book_pages_only:
        # Every page but Doxygen's "-members" lists: each repeats its struct page's layout, and
        # their links were checked above with all the others.
        to_open += [p for p in pages if p not in to_open and not p.endswith("-members.html")]
    svg_failures = []
    svgs = read_svgs(html_dir, svg_failures)
    failures += [("figures", f) for f in svg_failures]
    for failure in svg_failures:
        print(f"FAIL {failure}")

    jobs = [(name, viewport) for name in to_open
            # The book's own pages at every width; Doxygen's reference pages (structs, files) at the
            # narrowest only, where an overflow shows first: the suite's time stays bounded as
            # chapters add such pages.
            for viewport in (viewports if name in book else viewports[:1])]
    work_dir = Path(tempfile.mkdtemp(prefix="scalebook-moved-book-"))
    drivers = []
    try:
        # The book as a reader gets it: the folder copied elsewhere (zipped and moved), opened on a
        # machine without MathJax's fonts, nothing outside the folder within reach.
        open_dir = html_dir
        if not args.in_place:
            open_dir = work_dir / "book"
            shutil.copytree(html_dir, open_dir, symlinks=False)
            cache = work_dir / "fontconfig-cache"
            cache.mkdir()
            args.fontconfig = work_dir / "fonts.conf"
            args.fontconfig.write_text(FONTCONFIG.format(cache=cache), encoding="utf-8")
            args.blocked = ["http://*", "https://*", "file:///usr/*", html_dir.as_uri() + "/*"]
        # Several browsers side by side (one renderer each is mostly one core's work), each with
        # its own profile; the pages are dealt out in turn and reported in order.
        for index in range(max(1, min(args.browsers, len(jobs)))):
            try:
                drivers.append(start_browser(args, work_dir / f"profile-{index}"))
            except WebDriverException as error:
                print(f"check_docs_in_browser: could not start {args.chromium} through {args.chromedriver}: "
                      f"{str(error).strip()}", file=sys.stderr)
                return 2
        if not args.in_place:
            for driver in drivers:
                driver.get("data:text/html,<p>fonts</p>")
                if driver.execute_script(SYSTEM_MATHJAX_FONT_JS):
                    failures.append(("browser", "the system's MathJax fonts are still visible to the browser; "
                                                "the test cannot show that the book brings its own"))
            print(f"ok   the book copied to {open_dir}; the system's MathJax fonts hidden, "
                  f"requests outside the copy blocked; {len(drivers)} browsers")

        results = [None] * len(jobs)
        printed = 0
        lock = threading.Condition()

        def check(driver, index):
            name, viewport = jobs[index]
            try:
                outcome = check_page(driver, args, open_dir, name, chapter_pages, shots_dir,
                                     link_counts.get(name, 0), name in book, viewport, svgs)
            except WebDriverException as error:
                message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
                outcome = [f"the browser failed on this page: {message}"], [], "not checked"
            with lock:
                results[index] = outcome
                lock.notify_all()

        def work(number):
            for index in range(number, len(jobs), len(drivers)):
                check(drivers[number], index)

        threads = [threading.Thread(target=work, args=(n,), daemon=True) for n in range(len(drivers))]
        for thread in threads:
            thread.start()
        while printed < len(jobs):
            with lock:
                while results[printed] is None and any(t.is_alive() for t in threads):
                    lock.wait(1.0)
                if results[printed] is None:  # a worker thread died without a result
                    results[printed] = (["no result: the browser's thread ended"], [], "not checked")
            name, viewport = jobs[printed]
            page_failures, notes, summary = results[printed]
            where = f"{name} at {viewport[1]} px ({viewport[0]})"
            print(f"{'FAIL' if page_failures else 'ok  '} {where}: {summary}", flush=True)
            for note in notes:
                print(f"       note: {note}")
            for failure in page_failures:
                print(f"       {failure}")
            failures += [(where, f) for f in page_failures]
            printed += 1
        # A phone turned: the chapter page with the most display formulas, at both widths.
        if {"phone", "desktop"} <= {v[0] for v in viewports} and chapter_pages:
            counts = {p: (open_dir / p).read_text(encoding="utf-8", errors="replace").count("\\[")
                      for p in chapter_pages if CHAPTER_PAGE.match(p)}
            page = max(counts, key=counts.get) if counts else None
            if page:
                turned = check_rotation(drivers[0], args, open_dir, page)
                print(f"{'FAIL' if turned else 'ok  '} {page} turned from 1280 to 390 px breaks its "
                      f"{counts[page]} display formulas again as when opened at 390 px")
                for failure in turned:
                    print(f"       {failure}")
                failures += [("rotation", f) for f in turned]
    finally:
        for driver in drivers:
            driver.quit()
        shutil.rmtree(work_dir, ignore_errors=True)

    elapsed = time.monotonic() - began
    if failures:
        print(f"\n{len(failures)} problem(s) in the book as a browser shows it ({elapsed:.1f} s):", file=sys.stderr)
        for page, failure in failures:
            print(f"  {page}: {failure}", file=sys.stderr)
        print(f"screenshots: {shots_dir}", file=sys.stderr)
        return 1
    print(f"all {len(to_open)} pages render in Chromium at {', '.join(str(v[1]) for v in viewports)} px, light "
          f"and dark: math typeset with the book's own fonts, figures loaded and legible, links resolve, "
          f"nothing wider than the window, console clean ({elapsed:.1f} s); screenshots in {shots_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
