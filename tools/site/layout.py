"""The book on a phone, on paper, and without moving while it loads.

- ``tools/site/static/layout.css``: wide formulas, code and outputs scroll inside the
  column at phone widths (WCAG 1.4.10, reflow), equation numbers do not draw over
  formulas, figures keep their aspect ratio, only one of the light and dark logos
  shows before the theme's script has run; in print, code wraps at the margin,
  short cells and boxes stay on one page and the navigation is left out.
- ``_static/print-light.css``, written after the build: every rule the theme's
  stylesheets give the light theme (``html[data-theme=light] ...``), restated for
  print whatever the theme. A page printed from dark mode is then printed in the
  light theme's colours: dark text on white paper, light syntax colours.
- Printed prose wraps at the column (:class:`WrapPrintedProse`): a cell's printed
  output none of whose lines lines up columns (no run of two spaces inside a line)
  is marked ``prose-output``, and ``layout.css`` wraps it instead of letting it run
  off the column, where a reader at 1366 px saw the conformance kit's "Where:" lines
  of chapter 14 cut off at the fade. Printed tables keep their lines and scroll.
- An inline script after the sidebar scrolls the chapter list to the current page
  while the page is parsed, before the first paint. The theme does the same (with
  rule) once the page is ready, by which time the text has been painted: on chapters
  low in the list the whole sidebar then jumps, a layout shift of 0.023.
- An inline script in the head resolves the theme's ``auto`` mode to ``light`` or
  ``dark`` before the first paint (:data:`EARLY_THEME_SCRIPT`). The theme does it at
  DOMContentLoaded, one to two seconds into a long chapter; until then every colour
  variable of the theme is undefined, so inline code (``code.literal``, bordered in
  ``var(--pst-color-border)``) had no border, and gained 2 px when the theme ran: a
  paragraph whose last word then no longer fitted its line grew by a line and moved
  everything below it (chapter 12's opening paragraph, in issue 29: CLS 0.176).
- An inline script in the head of every page with formulas registers MathJax's
  zero-size font (``MJXZERO``, 1.4 kB) from bytes written into the page
  (:func:`zero_font_early`). Every typeset character names it first: its ascent and
  descent (0.1 em each) place the character on the baseline. The stylesheet's copy
  is preloaded, but on a loaded machine it can arrive after the first paint; until
  it has, the browser places each character with a fallback font's ascent and
  descent, and when it arrives subscripts, fractions and the lines that hold them
  move by about 6 px (chapter 01, in issue 38: 724 ms after the first paint). A font
  made from bytes (``new FontFace(family, bytes)``) is ready before the body is laid out.
  A late font shows only on a loaded machine: to check this, keep the other core busy
  (``python -c "while True: pass" &``) while the browser suite's layout tests run.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform

from .css import css_rules
from .math import CSS_NAME, FONT_DIR
from .pipeline import Page, Site

STATIC = Path(__file__).resolve().parent / "static"
PRINT_CSS = "print-light.css"

#: The class of a printed output that wraps (``layout.css``).
PROSE_OUTPUT = "prose-output"
_ALIGNED = re.compile(r"\S {2,}\S")  # a run of spaces inside a line: columns lined up


def is_printed_prose(text: str) -> bool:
    """Whether printed ``text`` may wrap: no line lines up columns with runs of spaces.

    Examples
    --------
    >>> is_printed_prose("Where: positions 0 .. 131073: each column gets its own frequency")
    True
    >>> is_printed_prose("sines only      offsets are a fixed map: False")
    False
    """
    return not any(_ALIGNED.search(line) for line in text.splitlines())


class WrapPrintedProse(SphinxTransform):
    """Mark each printed output (a stream) of prose, so that ``layout.css`` wraps it."""

    default_priority = 900

    def apply(self, **kwargs: object) -> None:
        for node in self.document.findall(nodes.literal_block):
            classes = node.get("classes", [])
            printed = "output" in classes and "stream" in classes
            if printed and PROSE_OUTPUT not in classes and is_printed_prose(node.astext()):
                node["classes"].append(PROSE_OUTPUT)


_LIGHT = re.compile(r'html\[data-theme=(?:"light"|light)\]')


def light_rules(css: str) -> list[str]:
    """The top-level rules of ``css`` whose every selector starts with the light theme's."""
    kept = []
    for rule in css_rules(css):
        if rule.startswith(("@", "/*")) or "{" not in rule:
            continue
        selectors = rule.split("{", 1)[0].split(",")
        if all(_LIGHT.match(selector.strip()) for selector in selectors):
            kept.append(_LIGHT.sub("html[data-theme]", rule))
    return kept


def print_light_css(stylesheets: list[str]) -> str:
    """A print-only stylesheet restating the light theme's rules for any theme."""
    rules = [rule for css in stylesheets for rule in light_rules(css)]
    body = "\n".join(rules)
    return (
        "/* Written by tools/site/layout.py: the light theme's rules, for print in any theme. */\n"
        f"@media print {{\nhtml[data-theme] {{ color-scheme: light; }}\n{body}\n}}\n"
    )


# The theme's rule (pydata-sphinx-theme, scrollToActive): the position stored for this
# tab, else the current page a quarter of the sidebar's height from its top if it is
# in the lower half of the window. The position reached is stored where the theme
# looks first, so that when the theme runs it restores the same position and moves
# nothing (its own rule, run a second time, would scroll back up on the last chapters,
# where the list cannot scroll far enough).
SIDEBAR_SCRIPT = (
    "<script>/* tools/site/layout.py: the sidebar's scroll before the first paint */"
    "(function(){var s=document.querySelector('div.bd-sidebar'),n=document.querySelector('.bd-docs-nav'),"
    "k='sidebar-scroll-top';if(!s||!n)return;var t=NaN;try{t=parseInt(sessionStorage.getItem(k),10)}catch(e){}"
    "if(!isNaN(t)){s.scrollTop=t;return}var a=n.querySelectorAll('.active');if(!a.length)return;"
    "var r=a[a.length-1].getBoundingClientRect();if(r.y<=0.5*window.innerHeight)return;"
    "s.scrollTop=r.y-s.getBoundingClientRect().y-0.25*s.clientHeight;"
    "try{sessionStorage.setItem(k,s.scrollTop)}catch(e){}})();"
    "</script>\n"
)
_MAIN = '<main id="main-content"'


def scroll_sidebar_early(text: str) -> str:
    """``text`` with :data:`SIDEBAR_SCRIPT` between the sidebar and the main column."""
    if SIDEBAR_SCRIPT in text or _MAIN not in text or "bd-sidebar-primary" not in text:
        return text
    return text.replace(_MAIN, SIDEBAR_SCRIPT + _MAIN, 1)


def write_print_stylesheet(site: Site) -> None:
    """Site step: ``_static/print-light.css`` from every stylesheet of the site."""
    sources = [
        path.read_text(encoding="utf-8", errors="replace")
        for path in sorted(site.static.rglob("*.css"))
        if path.name != PRINT_CSS and "vendor" not in path.parts
    ]
    (site.static / PRINT_CSS).write_text(print_light_css(sources), encoding="utf-8")


# The theme's own rule (pydata-sphinx-theme's setTheme): "auto" follows the system's
# colour scheme. The mode stays "auto", so the theme, when it runs, sets the same theme.
EARLY_THEME_SCRIPT = (
    "/* tools/site/layout.py: the theme's colours before the first paint */"
    "(function(){var d=document.documentElement;"
    'if(d.dataset.theme!=="light"&&d.dataset.theme!=="dark"){'
    'd.dataset.theme=window.matchMedia&&window.matchMedia("(prefers-color-scheme: dark)").matches?"dark":"light"}'
    "})();"
)


def add_static_files(app: Sphinx) -> None:
    """``layout.css``, the print stylesheet and :data:`EARLY_THEME_SCRIPT` on every page."""
    if str(STATIC) not in app.config.html_static_path:
        app.config.html_static_path = [*app.config.html_static_path, str(STATIC)]
    app.add_css_file("layout.css")
    app.add_css_file(PRINT_CSS, media="print")
    # First of the page's scripts, in the head: before the body is parsed and painted.
    app.add_js_file(None, body=EARLY_THEME_SCRIPT, priority=100)


ZERO_FONT = "MathJax_Zero.woff"
_ZERO_FAMILY = "MJXZERO"  # the family mathjax-chtml.css names first for every character


def zero_font_script(font: bytes) -> str:
    """An inline script that adds ``font`` to the page's fonts as MathJax's zero-size font.

    (A ``FontFace`` made from bytes is parsed at once; one with a URL, even a ``data:``
    URL, loads when layout first needs it, after the first layout.)
    """
    data = base64.b64encode(font).decode("ascii")
    return (
        "<script>/* tools/site/layout.py: MathJax's zero-size font before the first layout */"
        f'(function(){{try{{var b=atob("{data}"),a=new Uint8Array(b.length);'
        "for(var i=0;i<b.length;i++)a[i]=b.charCodeAt(i);"
        f'document.fonts.add(new FontFace("{_ZERO_FAMILY}",a))}}catch(e){{}}}})();'
        "</script>\n"
    )


def zero_font_early(text: str, page: Page) -> str:
    """Page step: :func:`zero_font_script` in the head of a page that links the formulas' stylesheet."""
    font = page.site.static / FONT_DIR / ZERO_FONT
    if f"/{CSS_NAME}" not in text or "</head>" not in text or not font.is_file():
        return text
    script = zero_font_script(font.read_bytes())
    if script in text:
        return text
    return text.replace("</head>", script + "</head>", 1)
