"""Tables, display formulas and figures at common widths (issue 38, item 7).

At 1366, 1024 and 390 CSS px every chapter's tables and display formulas either fit
their column or scroll inside it *visibly*: the scrolling region fades at the edge
that has more beyond it (``layout.css``, marked by ``accessibility.js``), a cue that
shows wherever the reader is in a long table, whose own scrollbar is at its foot.
Before, chapter 13's configuration table (775 px in a 757 px column at 1366 px) was
cut mid-word with its scrollbar 1,100 px further down, and half of chapter 13's
equation (1) lay out of view on a phone with nothing to say so.

On a phone a figure is drawn at a third of its size or less; each one shrunk by more
than a quarter must link to its full-size file and say so under it. That includes each
explorer's web player: its frame links to the frame shown, at full size (before, the
player's frames were left out of this check and had no such link).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _browser import REQUIRE_BROWSER, why_no_browser

from tools.chapters import chapter_pages

if REQUIRE_BROWSER and why_no_browser():
    pytest.fail(why_no_browser(), pytrace=False)

WIDTHS = {"desktop": 1366, "laptop": 1024, "phone": 390}

# Every table and display formula of the article: where it overflows, what scrolls it
# and whether that region shows its cue; every figure drawn smaller than its file.
_PROBE_JS = """
() => {
  const problems = [];
  const article = document.querySelector("article.bd-article") || document.querySelector("article");
  const column = article.getBoundingClientRect();
  const name = (el) => (el.id ? `#${el.id}` : "")
    || el.textContent.replace(/\\s+/g, " ").trim().slice(0, 50);
  const scroller = (el) => {
    for (let node = el; node && node !== article; node = node.parentElement) {
      const overflow = getComputedStyle(node).overflowX;
      if (overflow !== "visible") return node;
    }
    return null;
  };
  const masked = (el) => {
    const style = getComputedStyle(el);
    return [style.maskImage, style.webkitMaskImage].some((value) => value && value !== "none");
  };
  const blocks = [
    ...[...article.querySelectorAll("table")].map((el) => ["table", el]),
    ...[...article.querySelectorAll("div.math")].map((el) => ["formula", el]),
  ];
  for (const [kind, block] of blocks) {
    if (!block.getClientRects().length) continue;  // folded away
    const box = block.getBoundingClientRect();
    const inner = kind === "formula" ? (block.querySelector("mjx-container") || block) : block;
    const region = scroller(block);
    if (!region) {
      const wide = Math.max(box.right, inner.getBoundingClientRect().right) > column.right + 1;
      if (wide) problems.push(`${kind} ${name(block)} runs ${Math.round(box.right - column.right)} px past its column`);
      continue;
    }
    if (region.scrollWidth <= region.clientWidth + 1) continue;  // it fits
    const overflow = getComputedStyle(region).overflowX;
    if (overflow !== "auto" && overflow !== "scroll") {
      problems.push(`${kind} ${name(block)} is cut off (${region.scrollWidth} px in ${region.clientWidth})`);
    } else if (!masked(region)) {
      const size = `${region.scrollWidth} px in ${region.clientWidth}`;
      problems.push(`${kind} ${name(block)} scrolls (${size}) with no visible cue`);
    }
  }
  return problems;
}
"""

_FIGURES_JS = """
() => [...document.querySelectorAll("article img")]
  .filter((img) => img.naturalWidth > 0 && img.getClientRects().length)
  .filter((img) => img.getBoundingClientRect().width < 0.75 * img.naturalWidth)
  .filter((img) => {
    const link = img.closest("a[href]");
    if (!link || !/\\.(webp|png|jpe?g|svg)$/i.test(new URL(link.href).pathname)) return true;
    const after = getComputedStyle(link, "::after");
    return !(after.content && after.content !== "none" && after.content !== "normal" && after.display !== "none");
  })
  .map((img) => `${img.getAttribute("src")} drawn at ${Math.round(img.getBoundingClientRect().width)}`
    + ` of ${img.naturalWidth} px with no visible link to its full size`)
"""


def _chapters(site_dir: Path) -> list[str]:
    return sorted(p.relative_to(site_dir).as_posix() for p in chapter_pages(site_dir))


@pytest.mark.parametrize("width", WIDTHS.values(), ids=WIDTHS.keys())
def test_tables_and_formulas_fit_or_scroll_visibly(width, site_dir, new_context, visitor):
    problems = []
    context = new_context("light")
    for chapter in _chapters(site_dir):
        page, visit = visitor.open(context, chapter)
        try:
            page.set_viewport_size({"width": width, "height": 900})
            # accessibility.js marks the scrolling regions in the frame after a resize
            page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
            problems += [f"{chapter}: {p}" for p in page.evaluate(_PROBE_JS)]
            if width < 600:
                problems += [f"{chapter}: {p}" for p in page.evaluate(_FIGURES_JS)]
            problems += [f"{chapter}: {p}" for p in visit.problems]
        finally:
            page.close()
    assert not problems, f"at {width} px:\n  " + "\n  ".join(problems)
