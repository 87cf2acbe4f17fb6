#!/usr/bin/python3
"""Gives the book's code tooltips their math back.

    tooltip_math.py HTML_DIR

Doxygen writes, for every linked name in a code block, a hidden tooltip (div.ttc) holding the
target's declaration and brief description (div.ttdoc). It writes that brief as plain text, cut at
about 100 characters, and drops every formula: "a Dense layer, , followed by ReLU (  entry by
entry)". The full brief, formulas included (as MathJax's \\(...\\)), is in the summary table of the
page that documents the target (a tr.memdesc row). This replaces each tooltip's text with that
brief and marks the tooltip for MathJax to leave alone in the page (it is hidden there). Links in
the prose (a.el) carry the same brief in a title attribute, which a browser shows as plain text,
formulas dropped; their title becomes a data-scalebook-tip attribute holding the brief.
docs/scalebook.js shows both kinds of tooltip and typesets the math in the one on screen.

A tooltip whose target has no such row (a class, a typedef without a brief) keeps Doxygen's text.
Prints how many tooltips were given their brief; exits non-zero when HTML_DIR has no pages.
"""

import argparse
import html
import re
import sys
from pathlib import Path

# <tr class="memdesc:ANCHOR"><td class="mdescLeft">&#160;</td><td class="mdescRight">BRIEF
#   [<a href="PAGE#ANCHOR">More...</a>]<br /></td></tr>
MEMDESC = re.compile(r'<tr class="memdesc:(\w+)"><td class="mdescLeft">&#160;</td><td class="mdescRight">(.*?)'
                     r'\s*(?:<a href="([^"#]*)#\1">More\.\.\.</a>)?<br /></td></tr>', re.S)
# <div class="ttc" id="ID"><div class="ttname"><a href="TARGET">NAME</a></div>[<div class="ttdeci">...</div>]
# <div class="ttdoc">TEXT</div>
# A link in the prose: <a class="el" href="TARGET" title="BRIEF AS PLAIN TEXT">
LINK_TITLE = re.compile(r'(<a class="el" href="([^"]+)") title="[^"]*"')
TOOLTIP = re.compile(r'<div class="ttc"( id="[^"]*"><div class="ttname"><a href="([^"]+)">.*?</div>'
                     r'(?:<div class="ttdeci">.*?</div>)?<div class="ttdoc">)(.*?)</div>', re.S)


def briefs(pages):
    """{"page.html#anchor": brief HTML} from every summary table of the book."""
    found = {}
    for name, text in pages.items():
        for match in MEMDESC.finditer(text):
            anchor, brief, page = match.group(1), match.group(2).strip(), match.group(3) or name
            found.setdefault(f"{page}#{anchor}", brief)
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html_dir", type=Path)
    args = parser.parse_args()
    paths = sorted(args.html_dir.glob("*.html"))
    if not paths:
        print(f"tooltip_math: no pages in {args.html_dir}", file=sys.stderr)
        return 1
    pages = {path.name: path.read_text(encoding="utf-8") for path in paths}
    known = briefs(pages)
    given = kept = linked = 0
    for path in paths:
        def replace(match):
            nonlocal given, kept
            brief = known.get(match.group(2))
            if brief is None:
                kept += 1
                return '<div class="ttc tex2jax_ignore"' + match.group(1) + match.group(3) + "</div>"
            given += 1
            return '<div class="ttc tex2jax_ignore"' + match.group(1) + brief + "</div>"
        def retitle(match):
            nonlocal linked
            href = match.group(2)
            brief = known.get(path.name + href if href.startswith("#") else href)
            if brief is None:
                return match.group(0)
            linked += 1
            return match.group(1) + ' data-scalebook-tip="' + html.escape(brief, quote=True) + '"'
        text = TOOLTIP.sub(replace, pages[path.name])
        text = LINK_TITLE.sub(retitle, text)
        if text != pages[path.name]:
            path.write_text(text, encoding="utf-8")
    print(f"tooltip_math: {given} code tooltips given their target's brief, {kept} kept as Doxygen wrote them; "
          f"{linked} links' titles turned into tooltips with math")
    return 0


if __name__ == "__main__":
    sys.exit(main())
