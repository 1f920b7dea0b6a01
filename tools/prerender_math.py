"""Sphinx extension: typeset every formula at build time, so pages arrive with their math done.

Without it, MathJax 2 typesets a chapter in the reader's browser, one to two seconds
after the page has loaded, moving the text around while it works (tools/offline_mathjax.py
serves it). With it, the build hands every ``\\(...\\)`` and ``\\[...\\]`` that Sphinx wrote
into the HTML to MathJax 3 running in Node.js (``tools/node/render.cjs``, the pinned
npm package ``mathjax``), and writes back its CommonHTML output:

- the formula is plain HTML and CSS when the page loads: no script, no layout shift;
- each keeps a hidden MathML copy (MathJax's assistive-mml), which screen readers read;
- formulas are not focusable, so they are not Tab stops;
- one stylesheet for the whole site (``_static/mathjax-chtml.css``) and MathJax's
  web fonts (``_static/mathjax-fonts/``), nothing else of MathJax.

Node.js and ``npm ci`` in ``tools/node`` (``make setup`` runs it when npm is there)
make it possible. When they are missing the book falls back to MathJax 2 in the
browser, with a note; ``POSENC_PRERENDER_MATH=1`` (set by CI) turns the fallback into
an error.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ExtensionError
from sphinx.util import logging

LOGGER = logging.getLogger(__name__)
HERE = Path(__file__).resolve().parent
RENDERER = HERE / "node" / "render.cjs"
PACKAGE = HERE / "node" / "node_modules" / "mathjax"
FONTS = PACKAGE / "es5" / "output" / "chtml" / "fonts" / "woff-v2"
CSS_NAME = "mathjax-chtml.css"
PRELOADED_FONTS = ("MathJax_Zero.woff", "MathJax_Main-Regular.woff", "MathJax_Math-Italic.woff")
FONT_DIR = "mathjax-fonts"

# What sphinx.ext.mathjax writes: inline \( ... \) in a span, display \[ ... \] in a div
# (after an optional equation number).
_MATH = re.compile(r'(<(span|div) class="math notranslate nohighlight"[^>]*>)(.*?)(</\2>)', re.S)
_TEX = re.compile(r"\\\((.*?)\\\)|\\\[(.*?)\\\]", re.S)
_MATHJAX_SCRIPTS = re.compile(
    r'\s*<script type="text/x-mathjax-config">.*?</script>|\s*<script[^>]*src="[^"]*MathJax\.js[^"]*"[^>]*></script>',
    re.S,
)


# tools/offline_mathjax.py's stylesheet for inline formulas, linked from every page
_MATHJAX2_CSS = re.compile(r'\n?[ \t]*<link rel="stylesheet" type="text/css" href="[^"]*_static/mathjax2\.css[^"]*" />')


def available() -> str | None:
    """Why math cannot be prerendered here, or None if it can."""
    if shutil.which("node") is None:
        return "Node.js (node) is not installed"
    if not (PACKAGE / "package.json").exists():
        return "MathJax is not installed in tools/node (run: npm ci --prefix tools/node)"
    return None


def _required() -> bool:
    return os.environ.get("POSENC_PRERENDER_MATH") == "1"


def _configure(app: Sphinx, config: Config) -> None:
    reason = available()
    if reason and _required():
        raise ExtensionError(f"POSENC_PRERENDER_MATH=1 but math cannot be prerendered: {reason}")
    app.posenc_prerender = reason is None  # type: ignore[attr-defined]
    if reason:
        LOGGER.info("math will be typeset in the browser by MathJax 2: %s", reason)


def render(requests: list[dict[str, object]], font_url: str) -> tuple[list[str], str]:
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


def prerender_site(outdir: Path, seen_file: Path) -> int:
    """Replace the TeX in every HTML page under ``outdir``; return the number of formulas.

    Pages an incremental build did not rewrite are already done. The stylesheet holds
    CSS for every glyph of every formula, so all formulas ever seen in this build
    folder (kept in ``seen_file``) are rendered for it, not only the new ones.
    """
    pages = {path: path.read_text(encoding="utf-8") for path in sorted(outdir.rglob("*.html"))}
    for path, text in pages.items():  # a page without a formula needs no stylesheet for formulas
        if _MATHJAX2_CSS.search(text) and not _MATH.search(text) and "<mjx-container" not in text:
            pages[path] = _MATHJAX2_CSS.sub("", text)
            path.write_text(pages[path], encoding="utf-8")
    requests: list[dict[str, object]] = []
    for text in pages.values():
        for block in _MATH.finditer(text):
            for tex in _TEX.finditer(block.group(3)):
                inline, display = tex.group(1), tex.group(2)
                requests.append(
                    {"tex": html.unescape(inline if inline is not None else display), "display": inline is None}
                )
    seen = json.loads(seen_file.read_text()) if seen_file.exists() else []
    new = [r for r in requests if r not in seen]
    everything = seen + [r for i, r in enumerate(new) if r not in new[:i]]
    static = outdir / "_static"
    if not requests and (static / CSS_NAME).exists():
        return 0
    rendered_all, css = render(everything, FONT_DIR)  # fonts are next to the stylesheet
    seen_file.parent.mkdir(parents=True, exist_ok=True)
    seen_file.write_text(json.dumps(everything), encoding="utf-8")
    (static / CSS_NAME).write_text(css, encoding="utf-8")
    shutil.copytree(FONTS, static / FONT_DIR, dirs_exist_ok=True)
    by_request = {json.dumps(r, sort_keys=True): out for r, out in zip(everything, rendered_all, strict=True)}
    produced = iter(by_request[json.dumps(r, sort_keys=True)] for r in requests)

    def replace_tex(match: re.Match[str]) -> str:
        return next(produced)

    def replace_block(match: re.Match[str]) -> str:
        return match.group(1) + _TEX.sub(replace_tex, match.group(3)) + match.group(4)

    for path, original in pages.items():
        text = _MATHJAX_SCRIPTS.sub("", original)  # no page loads MathJax
        if _MATH.search(text):
            text = _MATH.sub(replace_block, text)
            prefix = os.path.relpath(static, path.parent).replace(os.sep, "/")
            link = f'<link rel="stylesheet" type="text/css" href="{prefix}/{CSS_NAME}" />'
            if link not in text:
                # The fonts nearly every formula uses, fetched with the stylesheet: the first
                # font of each formula's font list sets the height of its line, so a font
                # arriving after the first paint would move the text (layout shift).
                preloads = "".join(
                    f'    <link rel="preload" as="font" type="font/woff" crossorigin '
                    f'href="{prefix}/{FONT_DIR}/{font}" />\n'
                    for font in PRELOADED_FONTS
                )
                text = text.replace("</head>", f"    {link}\n{preloads}  </head>", 1)
        if text != original:
            path.write_text(text, encoding="utf-8")
    return len(requests)


def _build_finished(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html" or not getattr(app, "posenc_prerender", False):
        return
    count = prerender_site(Path(app.outdir), Path(app.doctreedir) / "prerendered-math.json")
    LOGGER.info("prerendered %d formulas with MathJax 3", count)


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("config-inited", _configure)
    # After offline_mathjax's own build-finished handler (priority 500), which then
    # knows not to copy MathJax 2 into the site.
    app.connect("build-finished", _build_finished, priority=600)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
