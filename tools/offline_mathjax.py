"""Sphinx extension: serve MathJax from the built site instead of a CDN (the fallback).

Formulas are normally typeset at build time (tools/prerender_math.py), and then no
page loads MathJax and nothing of it is copied. Where Node.js is missing, the
browser typesets them with the MathJax 2 this extension serves.

The book must render its formulas when read offline (a downloaded copy of
``_build/html``, a classroom without internet). The pinned Python package
``jupyter-server-mathjax`` ships MathJax 2.7; this extension copies it into
``_static/mathjax`` of the HTML output, points Sphinx at it, and adds a small
stylesheet (``tools/static/mathjax2.css``) so inline math sits on the baseline.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config

MATHJAX_ENTRY = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
STATIC = Path(__file__).resolve().parent / "static"


def _mathjax_source() -> Path:
    import jupyter_server_mathjax

    return Path(jupyter_server_mathjax.__file__).parent / "static"


def _configure(app: Sphinx, config: Config) -> None:
    # Relative paths in mathjax_path are resolved against _static/.
    config.mathjax_path = MATHJAX_ENTRY
    config.mathjax3_config = None
    config.html_static_path = [*config.html_static_path, str(STATIC)]
    # Typeset only what Sphinx and MyST-NB mark as math (class "math") or
    # notebook output, never stray dollar signs in prose or code.
    config.mathjax2_config = {
        "tex2jax": {
            "inlineMath": [["\\(", "\\)"]],
            "displayMath": [["\\[", "\\]"]],
            "processEscapes": True,
            # bd-container wraps the theme's page content: everything in it is skipped
            # except the elements processClass names.
            "ignoreClass": "tex2jax_ignore|mathjax_ignore|bd-container",
            "processClass": "tex2jax_process|mathjax_process|math|output_area",
        },
        "TeX": {"equationNumbers": {"autoNumber": "none"}},
        # The package ships the STIX-Web fonts only (as Jupyter configures it).
        "HTML-CSS": {
            "availableFonts": [],
            "preferredFont": None,
            "webFont": "STIX-Web",
            "imageFont": None,
            # MathJax probes for fonts with a placeholder whose source is about:blank,
            # which the browser reports as a failed, cross-origin request. A local()
            # source gives the same "not installed" answer without a request.
            "styles": {"@font-face": {"font-family": "MathJax_Blank", "src": "local('MathJax_Blank')"}},
        },
        # The hidden MathML copy for assistive technology asks for the TeX fonts
        # (MathJax_AMS and others), which this package does not ship; point those
        # @font-face rules at local() sources so no request 404s.
        "NativeMML": {"styles": {f"@font-face /*{i}*/": {"src": "local('MathJax_Unavailable')"} for i in range(1, 7)}},
        "messageStyle": "none",
    }


def _copy(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    if getattr(app, "posenc_prerender", False):  # tools/prerender_math.py typesets at build time
        return
    target = Path(app.outdir) / "_static" / "mathjax"
    if not (target / "MathJax.js").exists():
        shutil.copytree(_mathjax_source(), target, dirs_exist_ok=True)


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("config-inited", _configure)
    app.add_css_file("mathjax2.css")
    app.connect("build-finished", _copy)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
