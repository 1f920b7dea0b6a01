"""Every chapter on a phone, on paper, and on the wire.

- **Weight and speed** (``page_metrics.py``, cold cache): each chapter's
  transfer (gzip) within 700 KB, its formulas typeset no later than the load event,
  its cumulative layout shift at most 0.05, and nothing in its text moving once
  painted.
- **Phones** (390 x 844 CSS px): no page is wider than the screen; a display
  formula either fits its column or scrolls inside it (and then is a Tab stop), and
  its equation number does not overlap it.
- **Paper** (print media, from dark mode): dark text on white, code wrapped within
  the page, no navigation.

With screenshots on (``make test-browser``), every chapter is also saved at 390 px
(``<chapter>-phone.png``) and chapter 05 printed to ``05_rotation_proof.pdf``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _browser import REQUIRE_BROWSER, why_no_browser
from page_metrics import BUDGETS, measure

from tools.chapters import chapter_pages

if REQUIRE_BROWSER and why_no_browser():
    pytest.fail(why_no_browser(), pytrace=False)

PHONE = {"width": 390, "height": 844}
PRINTED_CHAPTER = "notebooks/05_rotation_proof.html"

_PHONE_PROBE_JS = """
() => {
  const problems = [];
  const width = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > width + 1) {
    problems.push(`the page is ${document.documentElement.scrollWidth} px wide on a ${width} px screen`);
  }
  for (const block of document.querySelectorAll("div.math")) {
    const formula = block.querySelector("mjx-container");
    const label = (block.id || block.textContent.replace(/\\s+/g, " ").trim().slice(0, 40));
    if (!formula) continue;
    const overflowing = block.scrollWidth > block.clientWidth + 1;
    const scrolls = ["auto", "scroll"].includes(getComputedStyle(block).overflowX);
    if (overflowing && !scrolls) problems.push(`formula ${label} is cut off`);
    if (overflowing && scrolls && block.tabIndex < 0) problems.push(`formula ${label} scrolls but has no Tab stop`);
    const number = block.querySelector(".eqno");
    if (number) {
      const a = number.getBoundingClientRect();
      const b = formula.getBoundingClientRect();
      const overlap = Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1
        && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
      if (overlap) problems.push(`the number of formula ${label} overlaps it`);
    }
  }
  return problems;
}
"""

_PRINT_PROBE_JS = """
() => {
  const rgb = (c) => (c.match(/[\\d.]+/g) || [255, 255, 255]).slice(0, 3).map(Number);
  const luminance = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const text = luminance(rgb(getComputedStyle(document.querySelector("main p, article p") || document.body).color));
  const bg = getComputedStyle(document.body).backgroundColor;
  const paper = /rgba\\(0, 0, 0, 0\\)|transparent/.test(bg) ? 1 : luminance(rgb(bg));
  const contrast = (Math.max(text, paper) + 0.05) / (Math.min(text, paper) + 0.05);
  const cut = [...document.querySelectorAll("pre")].filter((pre) => pre.scrollWidth > pre.clientWidth + 1).length;
  const nav = [...document.querySelectorAll(".bd-sidebar-primary, .bd-header")]
    .filter((el) => getComputedStyle(el).display !== "none").length;
  return { contrast, paper, cut, pres: document.querySelectorAll("pre").length, nav };
}
"""


def _chapters(site_dir: Path) -> list[str]:
    return sorted(p.relative_to(site_dir).as_posix() for p in chapter_pages(site_dir))


def test_chapter_weight_and_speed(site_dir, browser, server, stats):
    """Each chapter within the budgets, measured on a first visit (cold cache, no storage).

    Nothing in a chapter's text may move once painted (``article_shifts``), whatever the
    shift's score. Until issue 29 the suite asserted only CLS <= 0.05, read 300 ms after
    the formulas were done, and passed while chapter 12 reflowed: the theme chose light
    or dark at DOMContentLoaded (one to two seconds into a long chapter), and until then
    inline code had no border; gaining 2 px, it pushed a paragraph's last word onto a new
    line and everything below it down by a line. What the old measurement missed:

    - viewport and fonts: whether a 2 px wider word breaks a line depends on the
      window's width and the fonts installed; at the suite's 1280 x 900 with this
      machine's fonts the paragraphs that moved were below the first screen or only
      nudged sideways, which CLS scores near 0 (7e-5 on chapter 12), while the window
      issue 29 measured in broke the opening paragraph (CLS 0.176, four loads of four);
    - timing: not what hid this shift (it comes at DOMContentLoaded, inside the old
      window), but the window closed 300 ms after the math was done, and a later shift
      (a font, a script on a slow machine) went uncounted; the page is now watched until
      nothing has moved for a second after the load event;
    - cache: a returning reader's browser has the theme's choice stored and never saw
      the shift; every measurement here is a first visit.
    """
    problems = []
    heaviest = None
    for chapter in _chapters(site_dir):
        metrics = measure(browser, server.url(chapter), chapter)
        if heaviest is None or metrics.kb_gzip > heaviest.kb_gzip:
            heaviest = metrics
        stats["worst_cls"] = max(stats.get("worst_cls", 0.0), metrics.cls)
        if metrics.kb_gzip > BUDGETS["chapter_kb_gzip"]:
            problems.append(f"{chapter}: {metrics.kb_gzip:.0f} KB gzip (budget {BUDGETS['chapter_kb_gzip']:.0f})")
        if metrics.math_after_load_ms > BUDGETS["math_after_load_ms"]:
            problems.append(f"{chapter}: math done {metrics.math_after_load_ms:.0f} ms after the load event")
        if metrics.cls > BUDGETS["cls"]:
            problems.append(f"{chapter}: layout shift {metrics.cls:.3f} (budget {BUDGETS['cls']})")
        if len(metrics.article_shifts) > BUDGETS["article_shifts"]:
            moved = "; ".join(metrics.article_shifts)
            problems.append(f"{chapter}: its text moved after the first paint ({metrics.cls:.6f}): {moved}")
    assert heaviest is not None, "no chapter pages in the site"
    stats["heaviest"] = f"{heaviest.page} {heaviest.kb_gzip:.0f} KB gzip"
    assert not problems, "\n  ".join(problems)


@pytest.mark.parametrize(
    "chapter", ["notebooks/05_rotation_proof.html", "notebooks/12_positions_in_todays_models.html"]
)
def test_nothing_moves_when_files_arrive_late(site_dir, browser, server, chapter):
    """On a slow network (300 ms per request) the text is painted before the logo and
    the theme's script arrive: the sidebar must already be where they will leave it.

    Chapter 05 is low in the chapter list (the sidebar scrolls to it); chapter 12 is the
    last chapter (the list cannot scroll as far as the theme's rule asks). Without the
    fixes in tools/site/layout.py and tools/site/images.py: 0.066 and 0.024.
    """
    if not (site_dir / chapter).is_file():
        pytest.skip(f"{chapter} is not in this build")
    metrics = measure(browser, server.url(chapter), chapter, latency_ms=300)
    assert metrics.cls <= 0.01, f"{chapter}: layout shift {metrics.cls:.3f} on a slow network (at most 0.01)"


def test_chapters_fit_a_phone(site_dir, new_context, visitor, screenshot_dir):
    """At 390 px nothing is wider than the screen and every formula fits or scrolls."""
    problems = []
    context = new_context("light")  # one context for all the chapters below
    for chapter in _chapters(site_dir):
        page, visit = visitor.open(context, chapter)
        try:
            page.set_viewport_size(PHONE)
            page.wait_for_timeout(100)  # the scripts re-measure on resize
            problems += [f"{chapter}: {p}" for p in page.evaluate(_PHONE_PROBE_JS)]
            problems += [f"{chapter}: {p}" for p in visit.problems]
            if screenshot_dir is not None:
                page.screenshot(path=str(screenshot_dir / f"{Path(chapter).stem}-phone.png"), full_page=False)
        finally:
            page.close()
    assert not problems, "\n  ".join(problems)


def test_chapter_prints_light_with_code_inside_the_page(new_context, visitor, screenshot_dir):
    """Printed from dark mode: dark text on white, code wrapped, no navigation."""
    page, visit = visitor.open(new_context("dark"), PRINTED_CHAPTER)
    try:
        assert page.evaluate("() => document.documentElement.dataset.theme") == "dark"
        page.emulate_media(media="print")
        printed = page.evaluate(_PRINT_PROBE_JS)
        if screenshot_dir is not None:
            page.pdf(path=str(screenshot_dir / f"{Path(PRINTED_CHAPTER).stem}.pdf"), format="A4", print_background=True)
    finally:
        page.close()
    assert printed["contrast"] >= 7, f"printed text contrast {printed['contrast']:.2f}:1 (want 7:1 or more)"
    assert printed["paper"] > 0.9, "the printed page is not white"
    assert printed["pres"] > 0 and printed["cut"] == 0, f"{printed['cut']} of {printed['pres']} code blocks cut off"
    assert printed["nav"] == 0, "the navigation is printed"
    assert not visit.problems, visit.problems


QUESTION_CHAPTER = "notebooks/11_train_short_test_long.html"
QUESTION_FIGURES = ("fig-lab-question-content", "fig-lab-question-marker", "fig-lab-question-order")

_FIGURE_SIZE_JS = """
(id) => {
  const img = document.querySelector(`#${id} img`);
  if (!img) return null;
  return {drawn: img.getBoundingClientRect().width, natural: img.naturalWidth, tall: img.naturalHeight};
}
"""


def test_chapter_11_question_figures_read_on_a_phone(site_dir, new_context, visitor):
    """Issue 46, item 7: figure 11.5 put six panels, three to a row, in a phone's 342 px column
    (each panel about 110 px wide, its text about 3 px high). Now each question task has a
    figure of its own with one panel per row (taller than wide): at 390 px each is drawn at
    least 300 CSS px wide, at 0.6 of its size or more (its 10-point text at 8 px or more)."""
    if not (site_dir / QUESTION_CHAPTER).is_file():
        pytest.skip(f"{QUESTION_CHAPTER} is not in this build")
    page, visit = visitor.open(new_context("light"), QUESTION_CHAPTER)
    sizes = {}
    try:
        page.set_viewport_size(PHONE)
        for name in QUESTION_FIGURES:
            image = page.locator(f"#{name} img").first
            image.scroll_into_view_if_needed()
            page.wait_for_function(f"() => document.querySelector('#{name} img').complete")
            sizes[name] = page.evaluate(_FIGURE_SIZE_JS, name)
    finally:
        page.close()
    assert not visit.problems, visit.problems
    for name, size in sizes.items():
        assert size is not None, f"no figure {name} on {QUESTION_CHAPTER}"
        assert size["tall"] > size["natural"], f"{name}: not one panel per row ({size})"
        assert size["drawn"] >= 300, f"{name} drawn {size['drawn']:.0f} CSS px wide on a phone"
        assert size["drawn"] >= 0.6 * size["natural"], f"{name} shrunk to {size['drawn'] / size['natural']:.2f}"
