"""Build-time math (tools/prerender_math.py): TeX in, MathJax CommonHTML with MathML out, no script."""

from __future__ import annotations

import os

import pytest
from sphinx.errors import ExtensionError

from tools import prerender_math

REASON = prerender_math.available()
pytestmark = pytest.mark.skipif(
    REASON is not None and os.environ.get("POSENC_PRERENDER_MATH") != "1",
    reason=f"math cannot be prerendered here: {REASON}",
)

PAGE = """<html><head>
<script type="text/x-mathjax-config">MathJax.Hub.Config({});</script>
<script async="async" src="../_static/mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"></script>
</head><body>
<p>Let <span class="math notranslate nohighlight">\\(a &lt; b\\)</span> hold.</p>
<div class="math notranslate nohighlight" id="equation-x">
<span class="eqno">(1)</span>\\[
\\sin(a + b) = \\sin a \\cos b + \\cos a \\sin b
\\]</div>
</body></html>"""


FORMULA_CSS = '\n    <link rel="stylesheet" type="text/css" href="_static/mathjax2.css?v=0568f1a6" />'


def _site(tmp_path, body=PAGE):
    (tmp_path / "_static").mkdir()
    (tmp_path / "notebooks").mkdir()
    page = tmp_path / "notebooks" / "page.html"
    page.write_text(body.replace("</head>", FORMULA_CSS.replace("_static", "../_static") + "</head>"))
    head = PAGE.split("<head>")[1].split("</head>")[0] + FORMULA_CSS  # the MathJax scripts, and no math
    (tmp_path / "plain.html").write_text(f"<html><head>{head}</head></html>")
    return page


def test_formulas_become_html_with_mathml_and_scripts_go(tmp_path):
    page = _site(tmp_path)
    assert prerender_math.prerender_site(tmp_path, tmp_path / "seen.json") == 2
    text = page.read_text()
    assert "MathJax.js" not in text and "x-mathjax-config" not in text
    assert "\\(" not in text and "\\[" not in text
    assert text.count("<mjx-container") == 2 and text.count("<mjx-assistive-mml") == 2
    assert "<mo>&lt;</mo>" in text  # the escaped TeX was unescaped before rendering
    assert 'display="true"' in text and '<span class="eqno">(1)</span>' in text
    assert 'href="../_static/mathjax-chtml.css"' in text
    plain = (tmp_path / "plain.html").read_text()
    assert "MathJax.js" not in plain and "mathjax2.css" not in plain  # pages without math: nothing of it
    assert "mathjax2.css" in text  # inline formulas keep their layout rules
    assert (tmp_path / "_static" / "mathjax-chtml.css").stat().st_size > 1000
    assert any((tmp_path / "_static" / "mathjax-fonts").glob("*.woff"))


def test_a_second_run_changes_nothing(tmp_path):
    page = _site(tmp_path)
    prerender_math.prerender_site(tmp_path, tmp_path / "seen.json")
    first = page.read_text()
    css = (tmp_path / "_static" / "mathjax-chtml.css").read_text()
    assert prerender_math.prerender_site(tmp_path, tmp_path / "seen.json") == 0
    assert page.read_text() == first and (tmp_path / "_static" / "mathjax-chtml.css").read_text() == css


def test_an_incremental_build_of_a_page_without_math_drops_the_formula_stylesheet(tmp_path):
    _site(tmp_path)
    prerender_math.prerender_site(tmp_path, tmp_path / "seen.json")
    (tmp_path / "notebooks" / "page.html").write_text("<html><body>no formula</body></html>")
    (tmp_path / "plain.html").write_text(f"<html><head>{FORMULA_CSS}</head></html>")  # rebuilt by Sphinx
    assert prerender_math.prerender_site(tmp_path, tmp_path / "seen.json") == 0
    assert "mathjax2.css" not in (tmp_path / "plain.html").read_text()


def test_tex_that_mathjax_cannot_typeset_fails_the_build(tmp_path):
    _site(tmp_path, PAGE.replace("a &lt; b", "\\notamacro b"))
    with pytest.raises(ExtensionError, match="notamacro"):
        prerender_math.prerender_site(tmp_path, tmp_path / "seen.json")
