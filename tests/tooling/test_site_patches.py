"""The site's rewrites of upstream HTML fail loudly (issue 49, item 5).

Before issue 49, of the regex rewrites in ``tools/site`` only ``search.mark_whole_terms``
checked that it matched: after a theme upgrade the rest would pass ``make book`` doing
nothing. Each is now a named :class:`tools.site.patches.Patch`; the chain counts its
matches on the pages written in this build and stops, naming it, when its marker (the
upstream feature it patches) is on such a page but it matched nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import tools.site as site_extension
from tools.site import patches
from tools.site.pipeline import Site, run

ROOT = Path(__file__).resolve().parents[2]
THEME = f'<script src="_static/scripts/{patches.THEME_PAGE}?digest=1"></script>\n'

# Each patch's upstream markup, as the pinned versions write it (copied from a built page),
# and the same feature after an imagined upgrade that changed what the pattern looks for.
# The theme writes the first four on every page: a theme page holds all of them.
PIECES = {
    "accessibility.search_button": (
        '<button class="btn search-button-field search-button__button" title="Search" aria-label="Search">',
        '<button class="btn search-field search-button__button" title="Search" aria-label="Search">',
    ),
    "icons.font_awesome_script": (
        '<script src="_static/vendor/fontawesome/6.5.2/js/all.min.js?digest=1"></script>\n',
        '<script src="_static/vendor/fa/6.6/js/all.min.js"></script>\n',
    ),
    "icons.font_awesome_preload": (
        '<link rel="preload" as="font" type="font/woff2" crossorigin '
        'href="_static/vendor/fontawesome/6.5.2/webfonts/fa-brands-400.woff2" />\n',
        '<link rel="preload" as="font" crossorigin href="_static/vendor/fa/webfonts/fa-brands-400.woff2">\n',
    ),
    "head.viewport": (
        '<meta name="viewport" content="width=device-width, initial-scale=1" />\n',
        "<meta content='width=device-width' name='viewport'>\n",
    ),
    "accessibility.sidebar_toggle": (
        '<a class="reference internal" href="a.html">A</a><details><summary>'
        '<span class="toctree-toggle" role="presentation"></span></summary></details>',
        '<a class="reference internal" href="a.html">A</a><details open><div class="summary">'
        '<span class="toctree-toggle" role="presentation"></span></div></details>',
    ),
    "head.description": (
        '<meta name="description" content="Where \\(t\\) is." />\n',
        '<meta name="description" content="Where \\(t\\) is.">\n',
    ),
    "images.figures": (
        '<img alt="A figure" src="../_images/abc.png" class="x" />',
        '<img alt="A figure" src="../_images/abc.avif" class="x" />',
    ),
    "math.formulas": (
        '<span class="math notranslate nohighlight">\\(t\\)</span>',
        '<span class="math notranslate">\\(t\\)</span>',
    ),
}
CHROME = ("accessibility.search_button", "icons.font_awesome_script", "icons.font_awesome_preload", "head.viewport")


def _page(name: str, upgraded: bool) -> str:
    """A theme page holding every chrome piece and ``name``'s piece, that one as today or upgraded."""
    pieces = {chrome: PIECES[chrome][0] for chrome in CHROME}
    pieces[name] = PIECES[name][1 if upgraded else 0]
    return THEME + "".join(pieces.values())


def _site(tmp_path: Path, text: str, fresh: bool = True) -> Site:
    (tmp_path / "_static").mkdir(parents=True, exist_ok=True)
    page = tmp_path / "page.html"
    page.write_text(text, encoding="utf-8")
    site = Site(outdir=tmp_path, doctreedir=tmp_path, config=None, pages={page: text})
    site.fresh = {page} if fresh else set()
    site.formulas = {}
    return site


def test_every_patch_has_a_case_and_a_ledger_row():
    assert set(PIECES) == set(patches.PATCHES)
    ledger = (ROOT / "tools" / "site" / "README.md").read_text(encoding="utf-8").split("## Patch ledger")[1]
    assert [name for name in patches.PATCHES if f"`{name}`" not in ledger] == []


@pytest.mark.parametrize("name", sorted(PIECES))
def test_a_patch_that_stops_matching_stops_the_build_by_name(name, tmp_path, monkeypatch):
    before, after = _page(name, upgraded=False), _page(name, upgraded=True)
    marker = patches.PATCHES[name].marker
    assert marker in before and marker in after, "the case must hold the patch's marker"
    monkeypatch.setattr(site_extension.math, "formula_key", lambda request: "k")
    today = _site(tmp_path / "today", before)
    today.formulas = {"k": "<mjx-container>t</mjx-container>"}
    today.figures = {"abc": (".webp", 4, 3)}
    run(today, [], site_extension.PAGE_STEPS, [])  # today's markup: patched, no stop
    assert next(iter(today.pages.values())) != before
    upgraded = _site(tmp_path / "upgraded", after)
    with pytest.raises(patches.PatchMatchedNothing, match=rf"site patch {name} matched nothing"):  # it alone
        run(upgraded, [], site_extension.PAGE_STEPS, [])


def test_pages_an_earlier_build_wrote_are_not_checked(tmp_path):
    """An incremental build leaves the other pages as the last one patched them."""
    run(
        _site(tmp_path, _page("icons.font_awesome_script", upgraded=True), fresh=False),
        [],
        site_extension.PAGE_STEPS,
        [],
    )


def test_a_page_without_the_feature_asks_nothing(tmp_path):
    run(_site(tmp_path, "<html><body><p>A page of the root redirect's kind.</p></body></html>"),
        [], site_extension.PAGE_STEPS, [])  # fmt: skip


def test_patch_refuses_bad_names_and_markers():
    with pytest.raises(ValueError, match="name must read module.what"):
        patches.patch("Viewport", "x", "y")
    with pytest.raises(ValueError, match="marker must be a non-empty string"):
        patches.patch("head.other", "x", "")
    with pytest.raises(ValueError, match="is already a patch"):
        patches.patch("head.viewport", "x", "y")
