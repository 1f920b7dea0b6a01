"""Repairs of what the theme and extensions write that fails WCAG 2.1 AA.

The browser suite runs axe-core (WCAG 2.1 A and AA) on every page
(``tests/browser/test_accessibility.py``), in light and in dark mode, each as loaded and
again with every fold open; the test injects axe-core, the site never loads it.
axe-core no longer reports an ``id`` used twice (WCAG 2.2 retired 4.1.1), so
``tests/browser/test_site.py`` fails any page that repeats one. Every visible control,
focused in turn as after a Tab, must draw a focus ring (WCAG 2.4.7), and a Tab walk of
chapter 05 checks the order. What the suite found in the HTML that Jupyter Book 1 writes
is fixed here, once, after the build (the page step :func:`repair`):

- a ``<summary>`` whose ``aria-label`` ("Toggle hidden content") hides its visible
  text ("Show code cell source") loses the label, so its name is what it says;
- the search button's ``aria-label`` ("Search") does not contain its visible text
  ("Search Ctrl+K"): the visible text becomes its name;
- the sidebar's expand buttons (an icon only) get a name: "Sections of <page>";
- an ``id`` a page repeats (sphinx-exercise and sphinx-proof give every exercise,
  solution, theorem and proof body the same one: ``exercise-content``, ``proof``,
  ...; the search page has two ``search-input`` fields) keeps its first use and
  numbers the rest, and sphinx-proof's stylesheet selects proofs by class instead
  of by ``id``;
- the bibliography marks its entries with the deprecated role ``doc-biblioentry``
  inside a ``role="list"``: they become list items.

What only exists once the page runs (sphinx-togglebutton's buttons, scrollable code
blocks) is repaired by ``tools/site/static/accessibility.js``, and colours and focus
rings by ``tools/site/static/accessibility.css``, which :func:`add_static_files` adds to
every page.
"""

from __future__ import annotations

import hashlib
import html
import re
from pathlib import Path

from sphinx.application import Sphinx

from .patches import THEME_PAGE, patch
from .pipeline import Site

STATIC = Path(__file__).resolve().parent / "static"

_TOGGLE_SUMMARY = '<summary aria-label="Toggle hidden content">'
_SEARCH_BUTTON = patch(
    "accessibility.search_button",
    r'(<button class="btn search-button-field[^"]*"[^>]*?) aria-label="Search"',
    THEME_PAGE,
)
_SIDEBAR_TOGGLE = patch(
    "accessibility.sidebar_toggle",
    r'(<a class="[^"]*\breference internal[^"]*" href="[^"]*">((?:(?!</a>).)*)</a>)(<details[^>]*>)<summary>',
    'class="toctree-toggle"',
    re.S,
)
_TAGS = re.compile(r"<[^>]+>")
_ID = re.compile(r'(<[a-zA-Z][^<>]*?\sid=")([^"]+)(")')
_PROOF_BY_ID = "div#proof{"  # sphinx-proof's proof.css


def _unique_ids(text: str) -> str:
    seen: dict[str, int] = {}

    def renumber_repeats(match: re.Match[str]) -> str:
        name = match.group(2)
        seen[name] = seen.get(name, 0) + 1
        if seen[name] == 1:
            return match.group(0)
        return f"{match.group(1)}{name}-{seen[name]}{match.group(3)}"

    return _ID.sub(renumber_repeats, text)


def _sidebar_toggle(match: re.Match[str]) -> str:
    title = html.unescape(_TAGS.sub("", match.group(2))).strip()
    label = html.escape(f"Sections of {title}", quote=True)
    return f'{match.group(1)}{match.group(3)}<summary aria-label="{label}">'


def repair(text: str) -> str:
    """The page's HTML with the repairs listed in the module docstring."""
    text = text.replace(_TOGGLE_SUMMARY, "<summary>")
    text = _SEARCH_BUTTON.sub(r"\1", text)
    text = _SIDEBAR_TOGGLE.sub(_sidebar_toggle, text)
    text = _unique_ids(text)
    return text.replace('role="doc-biblioentry"', 'role="listitem"')


def select_proofs_by_class(site: Site) -> None:
    """Site step: sphinx-proof's stylesheet selects proofs by class (they lose ``id="proof"``)."""
    proof_css = site.static / "proof.css"
    if proof_css.is_file():
        css = proof_css.read_text(encoding="utf-8")
        proof_css.write_text(css.replace(_PROOF_BY_ID, "div.proof.admonition{"), encoding="utf-8")


def _static_digest() -> str:
    """A digest of tools/site/static."""
    digest = hashlib.sha256()
    for path in sorted(STATIC.rglob("*")):
        if path.is_file():
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def add_static_files(app: Sphinx) -> None:
    """The stylesheets and scripts of ``tools/site/static`` on every page.

    A config value changes with them (a digest of the folder): editing them marks every
    page out of date, so an incremental build copies the new files (Sphinx copies static
    files only when some page is rebuilt).
    """
    app.add_config_value("accessible_html_static_digest", _static_digest(), "html")
    if str(STATIC) not in app.config.html_static_path:
        app.config.html_static_path = [*app.config.html_static_path, str(STATIC)]
    app.add_css_file("accessibility.css")
    app.add_js_file("accessibility.js", loading_method="defer")
