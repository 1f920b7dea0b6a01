"""Build-time math (tools/site/math.py): TeX in, MathJax CommonHTML with MathML out, no script."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from sphinx.errors import ExtensionError

from tools.site import math, pipeline


def setup_module():
    """Node.js is required (the book typesets its formulas at build time): no skip."""
    reason = math.available()
    assert reason is None, f"math cannot be typeset here: {reason} (install Node.js and npm)"


PAGE = """<html><head>
</head><body>
<p>Let <span class="math notranslate nohighlight">\\(a &lt; b\\)</span> hold.</p>
<div class="math notranslate nohighlight" id="equation-x">
<span class="eqno">(1)</span>\\[
\\sin(a + b) = \\sin a \\cos b + \\cos a \\sin b
\\]</div>
</body></html>"""


def _site(tmp_path, body=PAGE):
    (tmp_path / "_static").mkdir()
    (tmp_path / "notebooks").mkdir()
    page = tmp_path / "notebooks" / "page.html"
    page.write_text(body)
    (tmp_path / "plain.html").write_text("<html><head></head><body>no formula</body></html>")
    return page


def _typeset(tmp_path) -> pipeline.Site:
    site = pipeline.read_site(tmp_path, tmp_path / "doctrees", SimpleNamespace())
    pipeline.run(site, [math.typeset_formulas], [math.typeset_page], [])
    return site


def test_formulas_become_html_with_mathml(tmp_path):
    page = _site(tmp_path)
    site = _typeset(tmp_path)
    assert site.notes == ["2 formulas typeset with MathJax 3"]
    text = page.read_text()
    assert "\\(" not in text and "\\[" not in text
    assert text.count("<mjx-container") == 2 and text.count("<mjx-assistive-mml") == 2
    assert "<mo>&lt;</mo>" in text  # the escaped TeX was unescaped before rendering
    assert 'display="true"' in text and '<span class="eqno">(1)</span>' in text
    # the stylesheet, relative to the page, and the three fonts nearly every formula uses
    assert '    <link rel="stylesheet" type="text/css" href="../_static/mathjax-chtml.css" />\n' in text
    assert text.count('<link rel="preload" as="font" type="font/woff" crossorigin href="../_static/mathjax-fonts/') == 3
    assert (tmp_path / "plain.html").read_text() == "<html><head></head><body>no formula</body></html>"
    assert (tmp_path / "_static" / "mathjax-chtml.css").stat().st_size > 1000
    assert any((tmp_path / "_static" / "mathjax-fonts").glob("*.woff"))


def test_a_second_run_changes_nothing(tmp_path):
    page = _site(tmp_path)
    _typeset(tmp_path)
    first = page.read_text()
    css = (tmp_path / "_static" / "mathjax-chtml.css").read_text()
    site = _typeset(tmp_path)
    assert site.notes == []  # nothing left in TeX: MathJax is not run
    assert page.read_text() == first and (tmp_path / "_static" / "mathjax-chtml.css").read_text() == css


def test_an_incremental_build_renders_old_and_new_formulas_into_the_stylesheet(tmp_path):
    page = _site(tmp_path)
    _typeset(tmp_path)
    page.write_text(PAGE.replace("a &lt; b", "\\Gamma"))  # rebuilt by Sphinx with a new formula
    _typeset(tmp_path)
    assert "\\(" not in page.read_text() and '<mi mathvariant="normal">Γ</mi>' in page.read_text()
    css = (tmp_path / "_static" / "mathjax-chtml.css").read_text()
    assert "mjx-c393" in css and "mjx-c3C" in css  # Γ (U+0393) and the earlier < (U+003C) both


def test_tex_that_mathjax_cannot_typeset_fails_the_build(tmp_path):
    _site(tmp_path, PAGE.replace("a &lt; b", "\\notamacro b"))
    with pytest.raises(ExtensionError, match="notamacro"):
        _typeset(tmp_path)


def test_without_node_the_build_stops_with_what_to_install(monkeypatch):
    monkeypatch.setattr(math.shutil, "which", lambda name: None)
    config = SimpleNamespace(html_math_renderer=None)
    with pytest.raises(ExtensionError, match=r"Node.js \(node\) is not installed.*make setup"):
        math.require_node(None, config)  # type: ignore[arg-type]
    assert config.html_math_renderer is None
    monkeypatch.undo()
    math.require_node(None, config)  # type: ignore[arg-type]
    assert config.html_math_renderer == "prerendered"  # Sphinx's visitors, no MathJax script
