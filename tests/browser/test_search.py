"""The site's search (issue 38, item 8): terms matched whole, ranked by headings, an icon that covers nothing.

Before (Sphinx's defaults): "p-RoPE" was cut into "p" and "rope" and every letter p of
the summaries was highlighted (253 marks); "YaRN attention factor" listed chapter 11
first and chapter 09, whose headings hold all three words, fourth; the magnifier sat
over the query's first letter (the text began 12 px into the field, the icon ended 23 px in).
"""

from __future__ import annotations

import urllib.parse

import pytest
from _browser import REQUIRE_BROWSER, why_no_browser

if REQUIRE_BROWSER and why_no_browser():
    pytest.fail(why_no_browser(), pytrace=False)

# Each mark with the letters, digits and underscores that touch it on either side: the
# word it was found in ("p[rope]rties" gives "properties"; a whole-word mark gives itself).
_MARKED_WORDS_JS = """
(root) => [...document.querySelectorAll(`${root} .highlighted`)].map((mark) => {
  const text = (node) => (node && node.nodeType === Node.TEXT_NODE ? node.nodeValue : "");
  const head = text(mark.previousSibling).match(/[\\p{L}\\p{N}_]*$/u)[0];
  const tail = text(mark.nextSibling).match(/^[\\p{L}\\p{N}_]*/u)[0];
  return head + mark.textContent + tail;
})
"""

_RESULTS_JS = (
    """
() => ({
  marks: [...document.querySelectorAll("#search-results .highlighted")].map((el) => el.textContent),
  words: ("""
    + _MARKED_WORDS_JS
    + """)("#search-results"),
  links: [...document.querySelectorAll("#search-results ul.search > li > a")].map((a) => a.getAttribute("href")),
})
"""
)


def _search(context, server, query: str) -> dict:
    page = context.new_page()
    try:
        page.goto(server.url("search.html?q=" + urllib.parse.quote(query)), wait_until="load")
        page.wait_for_function("() => document.querySelector('#search-results p.search-summary')")
        # the results are shown one by one; the summary's count is written first
        count = page.evaluate("() => Search._performSearch(...Search._parseQuery(" + repr(query) + ")).length")
        page.wait_for_function(f"() => document.querySelectorAll('#search-results ul.search > li').length >= {count}")
        page.wait_for_timeout(500)  # the summaries (with their marks) are fetched per result
        return page.evaluate(_RESULTS_JS)
    finally:
        page.close()


def test_a_hyphenated_term_is_found_and_marked_whole(light_context, server):
    found = _search(light_context, server, "p-RoPE")
    assert found["links"], "no result for p-RoPE"
    assert any("13_positions_in_2026" in link for link in found["links"][:3]), found["links"][:5]
    assert found["marks"] and {mark.lower() for mark in found["marks"]} == {"p-rope"}, sorted(set(found["marks"]))
    assert {word.lower() for word in found["words"]} == {"p-rope"}, sorted(set(found["words"]))


def test_the_results_mark_a_query_word_only_as_a_whole_word(light_context, server):
    found = _search(light_context, server, "rope")
    assert found["marks"], "no marks for rope"
    assert {word.lower() for word in found["words"]} == {"rope"}, sorted(set(found["words"]))


def test_the_page_opened_from_a_result_marks_whole_words_only(light_context, server):
    """Chapter 05 says "properties" and chapter 12 "LongRoPE": neither holds the word "rope".

    Before, Sphinx's highlighter marked every substring: "p[rope]rties" on chapter 05
    and "Long[RoPE]" on chapter 12 (the page opened from a result carries the query in
    ``?highlight=``).
    """
    words = {}
    for chapter in ("05_rotation_proof", "12_positions_in_todays_models"):
        page = light_context.new_page()
        try:
            page.goto(server.url(f"notebooks/{chapter}.html?highlight=rope"), wait_until="load")
            page.wait_for_function("() => document.querySelector('.highlighted')")
            words[chapter] = {word.lower() for word in page.evaluate(_MARKED_WORDS_JS, "article")}
        finally:
            page.close()
    assert words == {"05_rotation_proof": {"rope"}, "12_positions_in_todays_models": {"rope"}}, words


def test_the_chapter_that_explains_a_phrase_ranks_first(light_context, server):
    links = _search(light_context, server, "YaRN attention factor")["links"]
    chapters = [link for link in links if link.startswith("notebooks/")]
    assert chapters and chapters[0].startswith("notebooks/09_long_context"), links[:5]


def test_the_magnifier_covers_none_of_the_query(light_context, server):
    page = light_context.new_page()
    try:
        page.goto(server.url("search.html?q=p-RoPE"), wait_until="load")
        boxes = page.evaluate(
            """() => [...document.querySelectorAll("form.bd-search")].filter((form) => form.getClientRects().length)
              .map((form) => {
                const input = form.querySelector("input"), icon = form.querySelector(".fa-magnifying-glass");
                const text = input.getBoundingClientRect().left + parseFloat(getComputedStyle(input).paddingLeft);
                return [icon.getBoundingClientRect().right, text];
              })"""
        )
    finally:
        page.close()
    assert boxes, "no visible search field"
    for icon_right, text_left in boxes:
        assert icon_right <= text_left, f"the magnifier ends at {icon_right:.0f} px, the text starts at {text_left:.0f}"


_FIRST_ANCHORED_JS = """
() => {
  const link = document.querySelector("#search-results ul.search > li > a");
  return link && link.getAttribute("href").includes("#") ? link.getAttribute("href") : null;
}
"""

_LANDING_JS = """
() => {
  const target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
  if (!target) return null;
  return {
    top: target.getBoundingClientRect().top,
    scrolled: window.scrollY,
    screen: window.innerHeight,
    page: document.documentElement.scrollHeight,
    text: target.textContent.toLowerCase(),
    heading: (target.querySelector("h1, h2, h3, h4, h5, h6") || {}).textContent || "",
    pageSection: !target.parentElement.closest("section"),
  };
}
"""


def test_a_result_opens_the_section_that_holds_the_query(light_context, server):
    """Issue 46, item 8: a result opened the top of its page (chapter 09 is tens of thousands
    of pixels long) with every query word marked all the way down. Now the result's link
    carries the anchor of the page's section that holds the query (the one whose heading
    holds most of it on a tie), and following it scrolls that section to the top of the screen.
    """
    page = light_context.new_page()
    try:
        page.goto(server.url("search.html?q=" + urllib.parse.quote("YaRN attention factor")), wait_until="load")
        page.wait_for_function(_FIRST_ANCHORED_JS, timeout=15_000)
        href = page.evaluate(_FIRST_ANCHORED_JS)
        page.click("#search-results ul.search > li > a")
        page.wait_for_load_state("load")
        page.wait_for_timeout(500)  # the theme and the highlighter settle
        landing = page.evaluate(_LANDING_JS)
        url = page.url
    finally:
        page.close()
    assert href.startswith("notebooks/09_long_context.html#"), href
    assert url.endswith(href.split("/")[-1]), (url, href)
    assert landing is not None, f"no element with the id of {href}"
    assert not landing["pageSection"], f"{href} is the page's own section, its top"
    assert all(word in landing["text"] for word in ("yarn", "attention", "factor")), landing["heading"]
    assert "yarn" in landing["heading"].lower(), landing["heading"]
    assert landing["page"] > 3 * landing["screen"] and landing["scrolled"] > landing["screen"], landing
    assert -5 <= landing["top"] <= landing["screen"] / 3, f"the section starts {landing['top']:.0f} px down the screen"
