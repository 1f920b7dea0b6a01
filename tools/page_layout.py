"""Sphinx extension: the book on a phone and on paper.

- ``tools/static/layout.css``: wide formulas, code and outputs scroll inside the
  column at phone widths (WCAG 1.4.10, reflow), equation numbers do not draw over
  formulas, figures keep their aspect ratio, only one of the light and dark logos
  shows before the theme's script has run; in print, code wraps at the margin,
  short cells and boxes stay on one page and the navigation is left out.
- ``_static/print-light.css``, written after the build: every rule the theme's
  stylesheets give the light theme (``html[data-theme=light] ...``), restated for
  print whatever the theme. A page printed from dark mode is then printed in the
  light theme's colours: dark text on white paper, light syntax colours.
- An inline script after the sidebar scrolls the chapter list to the current page
  while the page is parsed, before the first paint. The theme does the same (with
  rule) once the page is ready, by which time the text has been painted: on chapters
  low in the list the whole sidebar then jumps, a layout shift of 0.023.
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.application import Sphinx

try:  # under Sphinx, tools/ itself is on sys.path (_config.yml, local_extensions)
    from lean_site import css_rules
except ImportError:  # imported as part of the package tools (tests)
    from tools.lean_site import css_rules

STATIC = Path(__file__).resolve().parent / "static"
PRINT_CSS = "print-light.css"

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
        "/* Written by tools/page_layout.py: the light theme's rules, for print in any theme. */\n"
        f"@media print {{\nhtml[data-theme] {{ color-scheme: light; }}\n{body}\n}}\n"
    )


# The theme's rule (pydata-sphinx-theme, scrollToActive): the position stored for this
# tab, else the current page a quarter of the sidebar's height from its top if it is
# in the lower half of the window. The position reached is stored where the theme
# looks first, so that when the theme runs it restores the same position and moves
# nothing (its own rule, run a second time, would scroll back up on the last chapters,
# where the list cannot scroll far enough).
SIDEBAR_SCRIPT = (
    "<script>/* tools/page_layout.py: the sidebar's scroll before the first paint */"
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


def _build_finished(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    sources = [
        path.read_text(encoding="utf-8", errors="replace")
        for path in sorted(static.rglob("*.css"))
        if path.name != PRINT_CSS and "vendor" not in path.parts
    ]
    (static / PRINT_CSS).write_text(print_light_css(sources), encoding="utf-8")
    for path in Path(app.outdir).rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        changed = scroll_sidebar_early(text)
        if changed != text:
            path.write_text(changed, encoding="utf-8")


def setup(app: Sphinx) -> dict[str, object]:
    if str(STATIC) not in app.config.html_static_path:
        app.config.html_static_path = [*app.config.html_static_path, str(STATIC)]
    app.add_css_file("layout.css")
    app.add_css_file(PRINT_CSS, media="print")
    app.connect("build-finished", _build_finished, priority=650)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
