"""WCAG 2.1 A and AA on every page, checked by axe-core in Chromium; keyboard use.

Every page is checked twice: in light mode as it loads (folded content closed),
and in dark mode with every fold opened (solutions, hidden code cells, sidebar
sections), so content a reader can reveal is checked as well. axe-core comes from
the package registry (``tools/node/package.json``, installed by ``make setup``
when npm is present) and is injected into the page by the test, so the site
itself never loads it. Any violation fails the page, with axe's rule id, impact,
node count and the first nodes' selectors.

The keyboard test walks one chapter with Tab as a keyboard user would: every
control it reaches must show a focus indicator, no formula may be a Tab stop,
and the first solution must be reachable.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from _browser import REQUIRE_BROWSER, why_no_browser

if REQUIRE_BROWSER and why_no_browser():
    pytest.fail(why_no_browser(), pytrace=False)

sys.path.insert(0, str(Path(__file__).resolve().parent))

REPO = Path(__file__).resolve().parents[2]
AXE = REPO / "tools" / "node" / "node_modules" / "axe-core" / "axe.min.js"
WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]

_AXE_RUN_JS = """
async (tags) => {
  const result = await axe.run(document, { runOnly: { type: "tag", values: tags }, resultTypes: ["violations"] });
  return result.violations.map((v) => ({
    id: v.id, impact: v.impact, count: v.nodes.length,
    nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ") + ": "
      + (n.failureSummary || "").replace(/\\s+/g, " ").slice(0, 180)),
  }));
}
"""

# Open everything a reader can open: sphinx-togglebutton's folds (solutions,
# dropdowns) by their buttons, as a click would, and every <details> (hidden code
# cells, sidebar sections). Resolves once the page has laid itself out again.
_OPEN_ALL_JS = """
async () => {
  document.querySelectorAll("button.toggle-button[aria-expanded='false']").forEach((b) => b.click());
  document.querySelectorAll("details:not([open])").forEach((d) => { d.open = true; });
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  // sphinx-togglebutton fades opened content in (0.3 s): measure colours once it is opaque,
  // however slow the machine, not half-way through the fade.
  const finite = document.getAnimations()
    .filter((a) => !a.effect || a.effect.getComputedTiming().iterations !== Infinity);
  await Promise.all(finite.map((a) => a.finished.catch(() => null)));
  return {
    folded: document.querySelectorAll(".toggle-hidden, button.toggle-button[aria-expanded='false']").length,
    closed: document.querySelectorAll("details:not([open])").length,
  };
}
"""

# Elements of typeset math that the keyboard can reach, and names of fold buttons.
_FOCUSABLE_MATH_JS = """
() => {
  // A formula too wide for its column scrolls, and a region that scrolls must be a Tab
  // stop (WCAG 2.1.1; Chromium makes scrollers focusable by itself): that is allowed.
  const scrolls = (el) => el.scrollWidth > el.clientWidth + 1
    && ["auto", "scroll"].includes(getComputedStyle(el).overflowX);
  const stops = [];
  for (const el of document.querySelectorAll(".math, mjx-container, .MathJax")) {
    const stop = el.tabIndex >= 0 ? el : el.querySelector("[tabindex]:not([tabindex='-1'])");
    if (stop && !scrolls(stop)) {
      stops.push(el.textContent.replace(/\\s+/g, " ").trim().slice(0, 60)
        + ` [a ${stop.tagName.toLowerCase()}, ${stop.scrollWidth} px of content in ${stop.clientWidth}]`);
    }
  }
  return stops;
}
"""
_FOLD_BUTTON_NAMES_JS = """
() => [...document.querySelectorAll(".solution button.toggle-button, .exercise button.toggle-button")]
  .map((b) => b.getAttribute("aria-label") || b.textContent.trim())
"""

# The focused element: what it is, whether it or a child shows a focus indicator
# (an outline or a box shadow), and whether it sits inside a formula or a solution's title.
_FOCUSED_JS = """
() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  // The theme draws some rings on a child (the sidebar's chevron inside its <summary>).
  const ringed = (node) => {
    const style = getComputedStyle(node);
    return (style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0)
      || (!!style.boxShadow && style.boxShadow !== "none");
  };
  return {
    what: el.tagName.toLowerCase() + (el.className && typeof el.className === "string"
      ? "." + el.className.trim().split(/\\s+/).slice(0, 2).join(".") : "")
      + " " + (el.getAttribute("aria-label") || el.textContent || "").replace(/\\s+/g, " ").trim().slice(0, 40),
    indicated: ringed(el) || [...el.children].some(ringed),
    inMath: !!el.closest(".math, mjx-container"),
    solution: el.matches("button.toggle-button") && !!el.closest(".solution"),
  };
}
"""


# Every control the page shows, focused as the keyboard would (the page is in keyboard
# modality after one Tab, so :focus-visible applies to script focus too): each must
# draw a ring, on itself or on a child.
_EVERY_CONTROL_FOCUS_JS = """
() => {
  const ringed = (node) => {
    const style = getComputedStyle(node);
    return (style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0)
      || (!!style.boxShadow && style.boxShadow !== "none");
  };
  const name = (el) => el.tagName.toLowerCase() + " "
    + (el.getAttribute("aria-label") || el.innerText || el.getAttribute("href") || "")
        .replace(/\\s+/g, " ").trim().slice(0, 40);
  const controls = [...document.querySelectorAll(
    "a[href], button, summary, input, select, textarea, [tabindex]")]
    .filter((el) => el.tabIndex >= 0 && !el.disabled && el.getClientRects().length > 0
      && getComputedStyle(el).visibility !== "hidden");
  const missing = [];
  let focused = 0;
  for (const el of controls) {
    el.focus({preventScroll: true});
    if (document.activeElement !== el) continue;
    focused += 1;
    if (!(ringed(el) || [...el.children].some(ringed))) missing.push(name(el));
  }
  document.activeElement && document.activeElement.blur && document.activeElement.blur();
  return {focused, missing};
}
"""


@pytest.fixture(scope="session")
def axe_script() -> str:
    if not AXE.is_file():
        reason = f"axe-core is not installed ({AXE.relative_to(REPO)}): run 'npm ci --prefix tools/node'"
        if REQUIRE_BROWSER:
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    return AXE.read_text(encoding="utf-8")


def _violations(page, axe_script: str) -> list[str]:
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=axe_script)
    found = page.evaluate(_AXE_RUN_JS, WCAG_21_AA)
    return [f"{v['id']} ({v['impact']}, {v['count']} nodes): " + " | ".join(v["nodes"]) for v in found]


def _check_states(page_path, new_context, visitor, axe_script, stats) -> list[str]:
    """axe-core in light and in dark mode, each with the folds closed and then opened
    (one page load per mode); the tab-order, button-name and focus-ring probes once,
    light and closed."""
    problems = []
    for mode in ("light", "dark"):
        page, visit = visitor.open(new_context(mode), page_path, wait_for_images=False)
        try:
            theme = page.evaluate("() => document.documentElement.dataset.theme")
            if theme != mode:
                problems.append(f"{mode} mode: the page is in {theme} mode")
            problems += [f"{mode} mode, folds closed: {v}" for v in _violations(page, axe_script)]
            if mode == "light":
                # (after the page's scripts have measured the laid-out page once more)
                page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
                problems += [
                    f"{mode} mode: a formula that does not scroll is in the tab order: {m}"
                    for m in page.evaluate(_FOCUSABLE_MATH_JS)
                ]
                names = page.evaluate(_FOLD_BUTTON_NAMES_JS)
                repeated = sorted({n for n in names if names.count(n) > 1})
                problems += [f"{mode} mode: several fold buttons are named {n!r}" for n in repeated]
                page.keyboard.press("Tab")  # keyboard modality, as a reader who tabs
                focus = page.evaluate(_EVERY_CONTROL_FOCUS_JS)
                stats["focused_controls"] += focus["focused"]
                if not focus["focused"]:
                    problems.append(f"{mode} mode: no control could be focused")
                problems += [f"{mode} mode: no visible focus on {m}" for m in focus["missing"]]
            left = page.evaluate(_OPEN_ALL_JS)
            if left["folded"] or left["closed"]:
                problems.append(f"{mode} mode: {left} still folded after opening everything")
            problems += [f"{mode} mode, folds opened: {v}" for v in _violations(page, axe_script)]
            problems += [f"{mode} mode: {p}" for p in visit.problems]
        finally:
            page.close()
    return problems


def test_wcag_21_aa(page_path, new_context, visitor, axe_script, stats):
    """No axe-core violation of WCAG 2.1 A/AA in light and dark mode, folds closed and opened."""
    problems = _check_states(page_path, new_context, visitor, axe_script, stats)
    stats["axe_pages"] += 1
    assert not problems, f"{page_path}: {len(problems)} accessibility problems:\n  " + "\n  ".join(problems)


def test_wcag_21_aa_search_results(new_context, visitor, axe_script, stats):
    """The search page with results (its own page: the per-page tests leave it out)."""
    problems = _check_states("search.html?q=rotation", new_context, visitor, axe_script, stats)
    stats["axe_pages"] += 1
    assert not problems, "search results:\n  " + "\n  ".join(problems)


def test_keyboard_reaches_the_first_solution_with_visible_focus(new_context, visitor, stats):
    """Tab from the top of chapter 05: every stop shows focus, no formula is a stop,
    and the first solution's button is reached (331 presses before formulas left the
    tab order; now the page's links and controls only)."""
    page, visit = visitor.open(new_context("light"), "notebooks/05_rotation_proof.html", wait_for_images=False)
    problems, presses, reached = [], 0, False
    try:
        page.locator("body").focus()
        while presses < 400 and not reached:
            page.keyboard.press("Tab")
            presses += 1
            focused = page.evaluate(_FOCUSED_JS)
            if focused is None:
                continue
            if not focused["indicated"]:
                problems.append(f"Tab {presses}: no focus indicator on {focused['what']}")
            if focused["inMath"]:
                problems.append(f"Tab {presses}: a formula takes focus ({focused['what']})")
            reached = focused["solution"]
    finally:
        page.close()
    stats["tabs_to_solution"] = presses
    if not reached:
        problems.append(f"the first solution's button was not reached in {presses} presses of Tab")
    elif presses > 150:
        problems.append(f"the first solution's button takes {presses} presses of Tab (more than 150)")
    problems += visit.problems
    assert not problems, "\n  ".join(problems)
