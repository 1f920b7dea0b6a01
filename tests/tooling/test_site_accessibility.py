"""tools/site/accessibility.py: each repair on the HTML shapes Jupyter Book 1 writes.

The inputs below are cut from pages the pinned theme and extensions wrote (the browser
suite runs axe-core on the whole site; these tests pin each repair on its own).
"""

from __future__ import annotations

import re

from tools.site.accessibility import repair

FOLDED_CELL = (
    '<details class="hide above-input"><summary aria-label="Toggle hidden content">'
    '<span class="collapsed">Show code cell source</span></summary></details>'
)
SEARCH_BUTTON = (
    '<button class="btn search-button-field search-button__button" title="Search" aria-label="Search" '
    'data-bs-placement="bottom" data-bs-toggle="tooltip"><i class="fa-solid fa-magnifying-glass"></i>'
    '<span class="search-button__default-text">Search</span>'
    '<span class="search-button__kbd-shortcut"><kbd>Ctrl</kbd>+<kbd>K</kbd></span></button>'
)
SIDEBAR = (
    '<li class="toctree-l1"><a class="reference internal" href="../intro.html">Introduction</a></li>'
    '<li class="toctree-l1 has-children"><a class="reference internal" href="index.html">API &amp; '
    '<code class="docutils literal notranslate"><span class="pre">reference</span></code></a>'
    '<details><summary><span class="toctree-toggle" role="presentation">'
    '<i class="fa-solid fa-chevron-down"></i></span></summary><ul></ul></details></li>'
    '<li class="toctree-l1 current active has-children"><a class="current reference internal" href="#">'
    'Practice</a><details open="open"><summary><span class="toctree-toggle" role="presentation">'
    "</span></summary><ul></ul></details></li>"
)


def test_folded_cell_is_named_by_what_it_says():
    out = repair(FOLDED_CELL)
    assert "aria-label" not in out
    assert '<summary><span class="collapsed">Show code cell source</span></summary>' in out


def test_search_button_name_is_its_visible_text():
    out = repair(SEARCH_BUTTON)
    assert 'aria-label="Search"' not in out
    assert 'title="Search"' in out  # the tooltip stays
    assert "search-button__default-text" in out


def test_each_sidebar_toggle_is_named_after_its_own_section():
    out = repair(SIDEBAR)
    labels = re.findall(r'<summary aria-label="([^"]*)">', out)
    # Entity and markup inside the link are read as the text a reader sees; the
    # open (current) section is named too, and the first link, which has no
    # toggle, does not lend its title to the next one.
    assert labels == ["Sections of API &amp; reference", "Sections of Practice"]
    assert '<details open="open"><summary aria-label="Sections of Practice">' in out


def test_shared_ids_become_unique_and_other_ids_stay():
    page = (
        '<div id="exercise-content"></div><div id="solution-content"></div>'
        '<div id="exercise-content"></div><div id="proof-content"></div><div id="equation-x"></div>'
    )
    out = repair(page)
    ids = re.findall(r'id="([^"]*)"', out)
    assert ids == ["exercise-content", "solution-content", "exercise-content-2", "proof-content", "equation-x"]


def test_any_repeated_id_keeps_its_first_use_and_numbers_the_rest():
    page = (
        '<div class="proof admonition" id="proof"></div><input id="search-input"/>'
        '<div class="proof admonition" id="proof"></div><p>id="proof" in text</p>'
        '<input type="search" id="search-input"/><div id="proof"></div><span id="once"></span>'
    )
    out = repair(page)
    ids = re.findall(r'\sid="([^"]*)"', out)
    assert ids == ["proof", "search-input", "proof-2", "search-input-2", "proof-3", "once"]
    assert '<p>id="proof" in text</p>' in out  # text that only looks like an attribute stays


def test_bibliography_entries_become_list_items():
    page = '<div role="list"><div role="doc-biblioentry" id="a">A.</div><div role="doc-biblioentry">B.</div></div>'
    assert repair(page).count('role="listitem"') == 2
    assert "doc-biblioentry" not in repair(page)


def test_repair_is_idempotent():
    page = FOLDED_CELL + SEARCH_BUTTON + SIDEBAR + '<div id="exercise-content"></div>'
    once = repair(page)
    assert repair(once) == once
