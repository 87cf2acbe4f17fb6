#!/usr/bin/python3
"""What Doxygen's pages lack for screen readers, added to the built book: figures named by their
own <title>, and layout tables marked as layout.

    accessible_pages.py HTML_DIR

Doxygen embeds an SVG figure (\\image html NAME.svg "caption") as <object type="image/svg+xml">
and a class-hierarchy graph as <iframe src="inherit_graph_N.svg">. Neither exposes what the drawing
shows: an <object> is an unnamed embedded document to assistive technology, and an <iframe> without
a title is announced as "frame" (axe-core's frame-title). Each SVG names itself in its <title>:
gnuplot's figures say what they show (cmake/draw_figure.cmake sets it from the script's `set
title`), Graphviz's graphs say "Graphical Class Hierarchy", to which the class they start
from is added. So each
<object> becomes role="img" with aria-label set to its SVG's title, and each <iframe> gets that
title as its own, at build time: the name is in the page itself, with or without its scripts.

Doxygen lays out its pages with tables: the title area, a function's prototype, the summary of a
page's members, a function's parameters and exceptions, the file and class lists. None of them has
a header cell, so a screen reader announces each as a data table of rows and columns it cannot name.
Each table without a header cell of its own (<th>, outside the tables it holds) gets
role="presentation" and is read as the text it holds; a table with header cells (a Markdown table,
Doxygen's field tables) stays a data table.

Exits 1, naming the figure, when an embedded SVG has no title or gnuplot's "Gnuplot".
"""

import argparse
import html
import html.parser
import re
import sys
from pathlib import Path

OBJECT = re.compile(r'<object type="image/svg\+xml" data="([^"]+\.svg)"')
IFRAME = re.compile(r'<iframe (scrolling="no" frameborder="0") src="([^"]+\.svg)"')
TITLE = re.compile(r"<title>(.*?)</title>", re.S)
TEXT = re.compile(r"<text\b[^>]*>(.*?)</text>", re.S)


def as_text(markup: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", markup)).split())


def svg_title(path: Path, graph: bool = False) -> str:
    """The first <title> of the SVG (its document's name), as text; "" when it has none. A graph's
    title is the same on every graph of a page ("Graphical Class Hierarchy"): its first node's
    label (the class it starts from) is added."""
    text = path.read_text(encoding="utf-8", errors="replace")
    found = TITLE.search(text)
    title = as_text(found.group(1)) if found else ""
    first = TEXT.search(text)
    if graph and title and first and as_text(first.group(1)):
        title += f": {as_text(first.group(1))}"
    return title


def name_of(html_dir: Path, source: str, page: str, problems: list, graph: bool = False) -> str:
    title = svg_title(html_dir / source, graph) if (html_dir / source).is_file() else ""
    if not title or title.lower() == "gnuplot":
        problems.append(f"{page}: the figure {source} has no <title> saying what it shows ({title!r}); "
                        "give its gnuplot script a `set title \"...\"`")
    return title


class Tables(html.parser.HTMLParser):
    """The offsets (just past "<table") of the tables that hold no header cell of their own."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=False)
        self.starts = [0]
        for line in text.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))
        self.open = []      # [offset, has a <th>, has a role] of each table being read
        self.layout = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            line, column = self.getpos()
            self.open.append([self.starts[line - 1] + column + len("<table"), False,
                              any(name == "role" for name, _ in attrs)])
        elif tag == "th" and self.open:
            self.open[-1][1] = True

    def handle_endtag(self, tag):
        if tag == "table" and self.open:
            offset, headed, role = self.open.pop()
            if not headed and not role:
                self.layout.append(offset)


def mark_layout_tables(text: str) -> tuple[str, int]:
    offsets = sorted(Tables(text).layout, reverse=True)
    for offset in offsets:
        text = text[:offset] + ' role="presentation"' + text[offset:]
    return text, len(offsets)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html_dir", type=Path)
    args = parser.parse_args()
    problems = []
    named = tables = 0
    for path in sorted(args.html_dir.glob("*.html")):
        text = path.read_text(encoding="utf-8")

        def figure(match):
            title = name_of(args.html_dir, match.group(1), path.name, problems)
            # The figure's link (docs/scalebook.js) is its one Tab stop, not the <object> as well.
            return f'{match.group(0)} role="img" aria-label="{html.escape(title)}" tabindex="-1"'

        def graph(match):
            title = name_of(args.html_dir, match.group(2), path.name, problems, graph=True)
            return f'<iframe {match.group(1)} title="{html.escape(title)}" src="{match.group(2)}"'

        new, figures = OBJECT.subn(figure, text)
        new, graphs = IFRAME.subn(graph, new)
        new, marked = mark_layout_tables(new)
        tables += marked
        if new != text:
            path.write_text(new, encoding="utf-8")
        named += figures + graphs
    for problem in problems:
        print(f"accessible_pages: {problem}", file=sys.stderr)
    print(f"accessible_pages: {named} figures and graphs named from their SVG's title, "
          f"{tables} layout tables marked as layout")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
