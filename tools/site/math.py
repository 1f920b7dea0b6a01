"""Formulas typeset while the book builds, so pages arrive with their math done.

Sphinx writes every formula as TeX, ``\\(...\\)`` in a span and ``\\[...\\]`` in a div
(sphinx.ext.mathjax's HTML visitors). This module registers those visitors as the math
renderer ``prerendered``, so that Sphinx adds no MathJax script to any page, and, after
the build, hands every formula to MathJax 3 running in Node.js
(``tools/node/render.cjs``, the pinned npm package ``mathjax``) and writes back its
CommonHTML output:

- the formula is plain HTML and CSS when the page loads: no script, no layout shift;
- each keeps a hidden MathML copy (MathJax's assistive-mml), which screen readers read;
- formulas are not focusable, so they are not Tab stops;
- one stylesheet for the whole site (``_static/mathjax-chtml.css``) and MathJax's web
  fonts (``_static/mathjax-fonts/``), nothing else of MathJax; the fonts of styles no
  formula uses (calligraphic, Fraktur, ...) are removed once the pages are written.

MathJax rather than KaTeX: the chapters use MathJax's TeX (``\\label``/``\\eqref``,
``aligned``, macros) unchanged, and MathJax writes the assistive MathML itself. An
unknown macro or a TeX error fails the build (``tools/node/render.cjs``).

Node.js and ``npm ci`` in ``tools/node`` (``make setup`` runs it) are required: without
them the build stops with a message saying what to install.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ExtensionError
from sphinx.ext.mathjax import html_visit_displaymath, html_visit_math

from .patches import patch
from .pipeline import Page, Site

TOOLS = Path(__file__).resolve().parents[1]
RENDERER = TOOLS / "node" / "render.cjs"
PACKAGE = TOOLS / "node" / "node_modules" / "mathjax"
FONTS = PACKAGE / "es5" / "output" / "chtml" / "fonts" / "woff-v2"
CSS_NAME = "mathjax-chtml.css"
FONT_DIR = "mathjax-fonts"
PRELOADED_FONTS = ("MathJax_Zero.woff", "MathJax_Main-Regular.woff", "MathJax_Math-Italic.woff")
RENDERER_NAME = "prerendered"
SEEN_FILE = "prerendered-math.json"

# What sphinx.ext.mathjax's visitors write: inline \( ... \) in a span, display \[ ... \]
# in a div (after an optional equation number).
_MATH = patch(
    "math.formulas", r'(<(span|div) class="math notranslate nohighlight"[^>]*>)(.*?)(</\2>)', 'class="math', re.S
)
_TEX = re.compile(r"\\\((.*?)\\\)|\\\[(.*?)\\\]", re.S)


def available() -> str | None:
    """Why math cannot be typeset here, or None if it can."""
    if shutil.which("node") is None:
        return "Node.js (node) is not installed"
    if not (PACKAGE / "package.json").exists():
        return "MathJax is not installed in tools/node (run: npm ci --prefix tools/node)"
    return None


def require_node(app: Sphinx, config: Config) -> None:
    """``config-inited``: stop the build unless Node.js and MathJax are installed."""
    reason = available()
    if reason:
        raise ExtensionError(
            f"the book's formulas are typeset at build time with MathJax in Node.js, and {reason}. "
            "Install Node.js (https://nodejs.org, or apt-get install nodejs npm), then run make setup."
        )
    config.html_math_renderer = RENDERER_NAME


def register_renderer(app: Sphinx) -> None:
    """Sphinx's MathJax visitors under a renderer of our own, which adds no script to a page."""
    app.add_html_math_renderer(RENDERER_NAME, (html_visit_math, None), (html_visit_displaymath, None))


def render(requests: list[dict[str, Any]], font_url: str) -> tuple[list[str], str]:
    """Render ``[{"tex": ..., "display": ...}]`` with MathJax in Node; return (html per request, css)."""
    result = subprocess.run(
        ["node", str(RENDERER), font_url],
        input=json.dumps(requests),
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode:
        raise ExtensionError(f"MathJax (node {RENDERER.name}) failed:\n{result.stderr[-2000:]}")
    data = json.loads(result.stdout)
    if data["errors"]:
        bad = "\n".join(f"  {requests[i]['tex']!r}: {message}" for i, message in data["errors"][:10])
        raise ExtensionError(f"{len(data['errors'])} formula(s) MathJax cannot typeset:\n{bad}")
    return data["html"], data["css"]


def formula_key(request: dict[str, Any]) -> str:
    """The key of a formula (its TeX and whether it is displayed) in :attr:`Site.formulas`."""
    return json.dumps(request, sort_keys=True)


def _requests(text: str) -> list[dict[str, Any]]:
    """The formulas of a page still in TeX, in order."""
    found: list[dict[str, Any]] = []
    for block in _MATH.finditer(text):
        for tex in _TEX.finditer(block.group(3)):
            inline, display = tex.group(1), tex.group(2)
            found.append({"tex": html.unescape(inline if inline is not None else display), "display": inline is None})
    return found


def typeset_formulas(site: Site) -> None:
    """Site step: render every formula of the site; write the stylesheet and the fonts.

    Pages an incremental build did not rewrite are already done. The stylesheet holds
    CSS for every glyph of every formula, so all formulas ever seen in this build folder
    (kept next to the doctrees) are rendered for it, not only the new ones.
    """
    requests = [request for text in site.pages.values() for request in _requests(text)]
    seen_file = site.doctreedir / SEEN_FILE
    seen = json.loads(seen_file.read_text()) if seen_file.exists() else []
    new = [r for r in requests if r not in seen]
    everything = seen + [r for i, r in enumerate(new) if r not in new[:i]]
    if not requests and (site.static / CSS_NAME).exists():
        return
    rendered, css = render(everything, FONT_DIR)  # the fonts are next to the stylesheet
    seen_file.parent.mkdir(parents=True, exist_ok=True)
    seen_file.write_text(json.dumps(everything), encoding="utf-8")
    (site.static / CSS_NAME).write_text(css, encoding="utf-8")
    shutil.copytree(FONTS, site.static / FONT_DIR, dirs_exist_ok=True)
    site.formulas = {formula_key(r): out for r, out in zip(everything, rendered, strict=True)}
    site.notes.append(f"{len(requests)} formulas typeset with MathJax 3")


def typeset_page(text: str, page: Page) -> str:
    """Page step: the page's TeX replaced by its rendering, and the stylesheet linked.

    With the stylesheet come preloads of the fonts nearly every formula uses: the first
    font of each formula's font list sets the height of its line, so a font arriving
    after the first paint would move the text (layout shift).
    """
    if not _MATH.pattern.search(text):
        return text
    formulas = page.site.formulas

    def replace_tex(match: re.Match[str]) -> str:
        inline, display = match.group(1), match.group(2)
        request = {"tex": html.unescape(inline if inline is not None else display), "display": inline is None}
        return formulas[formula_key(request)]

    def replace_block(match: re.Match[str]) -> str:
        return match.group(1) + _TEX.sub(replace_tex, match.group(3)) + match.group(4)

    text = _MATH.sub(replace_block, text)
    prefix = page.static_prefix
    link = f'<link rel="stylesheet" type="text/css" href="{prefix}/{CSS_NAME}" />'
    if link in text:
        return text
    preloads = "".join(
        f'    <link rel="preload" as="font" type="font/woff" crossorigin href="{prefix}/{FONT_DIR}/{font}" />\n'
        for font in PRELOADED_FONTS
    )
    return text.replace("</head>", f"    {link}\n{preloads}  </head>", 1)


# --------------------------------------------------------------------------- unused fonts

_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_FLAT_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_FAMILIES = re.compile(r"font-family:\s*([^;}]+)")
_FONT_FACE_FILE = re.compile(r'font-family:\s*([A-Z0-9-]+);\s*src:\s*url\("([^"]+)"\)')
_TEX_CLASS = re.compile(r"\bTEX-([A-Z0-9]+)\b")


def used_fonts(css: str, pages: list[str]) -> set[str]:
    """The MathJax font families some page can use.

    A family named only by its class rule (``.TEX-C`` for ``MJXTEX-C``) is used when a
    page has an element of that class; a family named by any other rule (the default
    text, stretchy delimiters) is always kept.
    """
    classes = {f"TEX-{name}" for page in pages for name in _TEX_CLASS.findall(page)}
    used: set[str] = set()
    for selector, body in _FLAT_RULE.findall(_CSS_COMMENT.sub("", css)):
        selector = selector.strip()
        if selector.startswith("@font-face"):
            continue
        families = {f.strip().strip('"') for match in _FAMILIES.findall(body) for f in match.split(",")}
        families = {re.sub(r"!\s*important", "", f).strip() for f in families}
        only_class = re.fullmatch(r"\.(TEX-[A-Z0-9]+)", selector)
        if only_class is None or only_class.group(1) in classes:
            used |= families
    return used


def prune_fonts(outdir: Path, pages: list[str]) -> list[str]:
    """Remove the MathJax fonts (files and ``@font-face`` rules) no page can use; return their names."""
    path = outdir / "_static" / CSS_NAME
    if not path.is_file():
        return []
    css = path.read_text(encoding="utf-8")
    used = used_fonts(css, pages)
    removed = []
    for family, url in _FONT_FACE_FILE.findall(css):
        if family not in used:
            removed.append(family)
            (path.parent / url).unlink(missing_ok=True)
    if removed:
        pattern = re.compile(
            r"@font-face(?:\s*/\*[^*]*\*/)?\s*\{\s*font-family:\s*("
            + "|".join(map(re.escape, removed))
            + r");[^}]*\}\s*"
        )
        css = pattern.sub("", css)
        path.write_text(css, encoding="utf-8")
    # Font files no @font-face rule names at all (MathJax ships a few) go too.
    named = {(path.parent / url).resolve() for _, url in _FONT_FACE_FILE.findall(css)}
    for folder in {(path.parent / url).parent for _, url in _FONT_FACE_FILE.findall(css)}:
        for font in folder.glob("*.woff"):
            if font.resolve() not in named:
                font.unlink()
                removed.append(font.name)
    return removed


def prune_unused_fonts(site: Site) -> None:
    """Final step: :func:`prune_fonts` on the written pages."""
    removed = prune_fonts(site.outdir, list(site.pages.values()))
    site.notes.append(f"{len(removed)} unused MathJax fonts removed")
