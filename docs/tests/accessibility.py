"""axe-core in a real browser: one place that injects Deque's engine into a page open in Selenium's
Chromium, runs the WCAG 2.x A and AA rules and names each violation's page, rule and elements.

Used by docs/tests/check_accessibility.py (the book, light and dark) and by
tools/tests/grading/test_pages_browser.py (the pages grading writes). axe-core itself is the npm
package pinned in docs/tests/axe/package-lock.json, installed by ./workbook test (npm ci into
build/axe/, tools/scalebook/loop/packages.py); nothing is fetched while a test runs.
"""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Where ./workbook test installs the pinned axe-core (tools/scalebook/loop/packages.py, npm ci).
AXE_JS = ROOT / "build" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
AXE_VERSION = "4.14.1"
# WCAG 2.0, 2.1 and 2.2 at levels A and AA: what the ADA Title II rule (WCAG 2.1 AA) and the European
# Accessibility Act (EN 301 549, WCAG 2.1 AA) ask, and 2.2's AA additions (target size among them).
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
# At most this many elements are named per rule and page (the count is always given).
SHOWN_ELEMENTS = 5

RUN_JS = r"""
var tags = arguments[0], colourOnly = arguments[1], done = arguments[arguments.length - 1];
// Colour only: the rules of these tags that axe files under colour (cat.color: contrast, links told
// from text by colour), the only ones whose result a change of theme can change.
var only = colourOnly ? { type: "rule", values: axe.getRules(tags).filter(function (r) {
                            return r.tags.indexOf("cat.color") >= 0; }).map(function (r) { return r.ruleId; }) }
                      : { type: "tag", values: tags };
axe.run(document, { runOnly: only, resultTypes: ["violations"] })
  .then(function (results) {
    done({ version: axe.version, rules: results.passes.length + results.violations.length +
                                         results.incomplete.length + results.inapplicable.length,
           violations: results.violations.map(function (v) {
             return { id: v.id, impact: v.impact, help: v.help, tags: v.tags,
                      nodes: v.nodes.map(function (n) {
                        return { target: n.target.map(String).join(" "), html: n.html.slice(0, 160),
                                 summary: (n.failureSummary || "").replace(/\s+/g, " ").slice(0, 240) };
                      }) };
           }) });
  })
  .catch(function (error) { done({ error: String(error && error.message || error) }); });
"""


class AxeMissing(Exception):
    """axe-core is not installed where ./workbook test puts it."""


def axe_source(path: Path = AXE_JS) -> str:
    """axe-core's code, checked to be the pinned version."""
    if not path.is_file():
        raise AxeMissing(f"axe-core {AXE_VERSION} is not installed ({path} is missing): run ./workbook test, "
                         f"which installs it with npm ci from docs/tests/axe/package-lock.json")
    source = path.read_text(encoding="utf-8")
    if f"axe v{AXE_VERSION}" not in source[:400]:
        raise AxeMissing(f"{path} is not axe-core {AXE_VERSION} (its header: {source[:80]!r}); run ./workbook test")
    return source


def run_axe(driver, source: str, colour_only: bool = False) -> dict:
    """Runs axe on the page open in DRIVER (injecting it first): {version, rules, violations}, each
    violation {id, impact, help, nodes: [{target, html, summary}]}. COLOUR_ONLY: only the rules about
    colour (a second theme of a page already checked whole). Raises RuntimeError when axe itself
    fails. WebDriver's scripts run outside the page's Content-Security-Policy, so the grading pages
    (script-src 'none') are checked as they are served."""
    if not driver.execute_script("return typeof window.axe === 'object'"):
        driver.execute_script(source)
    result = driver.execute_async_script(RUN_JS, TAGS, colour_only)
    if result.get("error"):
        raise RuntimeError(f"axe-core failed on the page: {result['error']}")
    if result.get("version") != AXE_VERSION:
        raise RuntimeError(f"the page ran axe-core {result.get('version')}, not {AXE_VERSION}")
    return result


def describe(where: str, violations: list[dict]) -> list[str]:
    """One message per violated rule: the page, the rule, how many elements and which."""
    messages = []
    for violation in violations:
        nodes = violation["nodes"]
        shown = "; ".join(f"{n['target']} ({n['summary'] or n['html']})" for n in nodes[:SHOWN_ELEMENTS])
        more = f"; and {len(nodes) - SHOWN_ELEMENTS} more" if len(nodes) > SHOWN_ELEMENTS else ""
        messages.append(f"{where}: {violation['id']} ({violation['impact']}: {violation['help']}), "
                        f"{len(nodes)} element{'s' if len(nodes) != 1 else ''}: {shown}{more}")
    return messages
