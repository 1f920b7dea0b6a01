"""tools/site: icons, figures, head, print and math fonts, each step on small inputs worked out by hand."""

from __future__ import annotations

import re

import pytest
from PIL import Image

from tools.site import css, head, icons, layout, math
from tools.site import images as site_images

FA_CSS = (
    "/*!\n * Font Awesome Free 6.5.2 by @fontawesome\n */"
    '.fa{font-family:var(--fa-style-family,"Font Awesome 6 Free")}'
    ".fa-lg{font-size:1.25em}"
    "@keyframes fa-beat{0%,90%{transform:scale(1)}45%{transform:scale(var(--fa-beat-scale,1.25))}}"
    '.fa-chevron-down:before{content:"\\f078"}'
    '.fa-magnifying-glass:before,.fa-search:before{content:"\\f002"}'
    '.fa-moon:before{content:"\\f186"}'
    "@font-face{font-display:block;font-family:Font Awesome\\ 6 Free;font-weight:900;"
    'src:url(../webfonts/fa-solid-900.woff2) format("woff2"),url(../webfonts/fa-solid-900.ttf) format("truetype")}'
)


def test_css_rules_keeps_blocks_whole():
    rules = css.css_rules(FA_CSS)
    assert rules[0].startswith("/*!") and "Font Awesome Free" in rules[0]  # the licence header
    assert rules[3].startswith("@keyframes fa-beat{") and rules[3].endswith("}}")
    assert len(rules) == 8


def test_icon_css_keeps_only_the_used_icons_and_everything_else():
    css, codepoints = icons.subset_icon_css(FA_CSS, {"search", "lg", "solid"})
    assert codepoints == {0xF002}  # "search" is an alias of magnifying-glass: the rule stays, whole
    assert ".fa-magnifying-glass:before,.fa-search:before" in css
    assert "fa-chevron-down" not in css and "fa-moon" not in css
    for kept in ("Font Awesome Free 6.5.2", ".fa-lg{", "@keyframes fa-beat", "@font-face"):
        assert kept in css


def test_font_source_points_at_the_subset_woff():
    css = icons._FONT_SRC.sub(r'src:url(../webfonts/\1.woff) format("woff")', FA_CSS)
    assert 'src:url(../webfonts/fa-solid-900.woff) format("woff")}' in css
    assert "woff2" not in css and ".ttf" not in css


def test_head_loses_the_script_the_font_preloads_and_extra_viewports():
    page_head = (
        '<meta name="viewport" content="width=device-width, initial-scale=1.0" />'
        '<meta name="viewport" content="width=device-width, initial-scale=1" />\n'
        '  <link rel="preload" as="font" type="font/woff2" crossorigin '
        'href="../_static/vendor/fontawesome/6.5.2/webfonts/fa-solid-900.woff2" />\n'
        '  <script src="../_static/vendor/fontawesome/6.5.2/js/all.min.js?digest=abc"></script>\n'
        '<link rel="stylesheet" type="text/css" href="../_static/mathjax-chtml.css" />\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1"/>\n</head>'
    )
    out = head.one_viewport(icons.drop_font_awesome_script(page_head))
    assert out.count('name="viewport"') == 1 and 'initial-scale=1.0" />' in out  # the first one stays
    assert "all.min.js" not in out and "woff2" not in out
    # one preload stays: the subset of the solid icons (WOFF), just before </head>
    assert out.endswith(
        '  <link rel="preload" as="font" type="font/woff" crossorigin '
        'href="../_static/vendor/fontawesome/6.5.2/webfonts/fa-solid-900.woff" />\n</head>'
    )
    assert out.count('rel="preload"') == 1 and "mathjax-chtml.css" in out


def test_opaque_png_becomes_lossless_webp_without_alpha(tmp_path):
    images = tmp_path / "_images"
    images.mkdir()
    # a figure with detail (a flat colour would be too small to convert usefully)
    image = Image.effect_noise((64, 48), 40).convert("RGBA")
    image.save(images / "fig.png")
    figures = site_images.convert_figures(tmp_path, tmp_path / "cache")
    assert figures == {"fig": (".webp", 64, 48)}
    assert not (images / "fig.png").exists()
    with Image.open(images / "fig.webp") as webp:
        assert webp.mode == "RGB"  # no alpha channel
        assert webp.tobytes() == image.convert("RGB").tobytes()  # lossless


def test_transparent_png_keeps_its_alpha(tmp_path):
    images = tmp_path / "_images"
    images.mkdir()
    image = Image.effect_noise((64, 48), 40).convert("RGBA")
    image.putalpha(128)
    image.save(images / "see-through.png")
    suffix, *_ = site_images.convert_figures(tmp_path, tmp_path / "cache")["see-through"]
    path = images / f"see-through{suffix}"
    with Image.open(path) as out:
        assert "A" in out.getbands()


def test_images_get_size_link_and_new_source():
    figures = {"abc": (".webp", 1200, 800)}
    page = '<p><img alt="fig" class="x" src="../_images/abc.png" /></p><a href="y"><img src="../_images/abc.png"/></a>'
    out = site_images.rewrite_images(page, figures)
    tags = re.findall(r"<img [^>]*>", out)
    assert all('src="../_images/abc.webp"' in t and 'width="1200" height="800"' in t for t in tags)
    # the first is wrapped in a link to the full-size figure; the second already is a link
    assert out.count("figure-enlarge") == 1
    assert '<a class="figure-enlarge" href="../_images/abc.webp"' in out
    assert site_images.rewrite_images(page, {}) == page


def test_redirect_page_has_a_title_and_a_link():
    page = head.redirect_page("book/intro.html", "Positional <Encoding>", "About it")
    assert "<title>Positional &lt;Encoding&gt;</title>" in page
    assert '<a href="book/intro.html">' in page and 'url=book/intro.html"' in page
    assert '<meta name="description" content="About it" />' in page


@pytest.mark.parametrize(
    ("css", "expected"),
    [
        ("html[data-theme=light]{--pst-color-text-base:#222832}", ["html[data-theme]{--pst-color-text-base:#222832}"]),
        (
            'html[data-theme="light"] .highlight .k{color:#a0f!important}',
            ["html[data-theme] .highlight .k{color:#a0f!important}"],
        ),
        # dark rules, rules for both themes and unthemed rules are not the light theme's
        ("html[data-theme=dark]{--x:1}html[data-theme=light] a,html[data-theme=dark] a{color:red}p{margin:0}", []),
    ],
)
def test_print_stylesheet_restates_only_light_rules(css, expected):
    assert layout.light_rules(css) == expected


def test_print_stylesheet_is_print_only():
    out = layout.print_light_css(["html[data-theme=light]{--a:1}", "html[data-theme=dark]{--a:2}"])
    assert out.count("@media print {") == 1
    assert "--a:1" in out and "--a:2" not in out


def test_static_svg_gets_the_size_of_its_view_box(tmp_path):
    (tmp_path / "logo.svg").write_text('<svg width="115.2pt" height="115.2pt" viewBox="0 0 115.2 57.6"></svg>')
    page = '<img src="../_static/logo.svg" class="logo__image" alt="Home"/><img src="../_static/x.svg" width="3"/>'
    out = site_images.size_static_svgs(page, tmp_path)
    # 115.2 pt = 115.2 * 96 / 72 = 153.6 CSS pixels wide, the view box's 2:1 ratio
    assert out.startswith(
        '<img src="../_static/logo.svg" width="115" height="58" style="width: 153.6px; height: auto" '
        'class="logo__image"'
    )
    assert out.endswith('<img src="../_static/x.svg" width="3"/>')  # sized already: left alone
    (tmp_path / "box.svg").write_text('<svg viewBox="0 0 10 20"></svg>')  # no width of its own: the ratio only
    assert (
        site_images.size_static_svgs('<img src="_static/box.svg"/>', tmp_path)
        == '<img src="_static/box.svg" width="10" height="20"/>'
    )


def test_descriptions_lose_their_tex_and_relative_urls():
    page = (
        '<meta property="og:url" content="notebooks/05.html" />\n'
        '<meta name="description" content="moves the encoding\\varphi tokens along, and\\mathrm{PE}(t)\\cdot\\..." />'
    )
    out = head.describe_plainly(page)
    assert "og:url" not in out
    assert 'content="moves the encoding φ tokens along, and PE(t) ·..."' in out
    absolute = '<meta property="og:url" content="https://example.org/a.html" />'
    assert head.describe_plainly(absolute) == absolute


MATH_CSS = """
mjx-stretchy-v > mjx-ext { font-family: MJXTEX-S4, MJXTEX ! important; }
.MJX-TEX { font-family: MJXZERO, MJXTEX; }
.TEX-I { font-family: MJXZERO, MJXTEX-I; }
.TEX-C { font-family: MJXZERO, MJXTEX-C; }
@font-face /* 0 */ {
  font-family: MJXZERO;
  src: url("mathjax-fonts/MathJax_Zero.woff") format("woff");
}
@font-face /* 1 */ {
  font-family: MJXTEX-C;
  src: url("mathjax-fonts/MathJax_Calligraphic-Regular.woff") format("woff");
}
@font-face /* 2 */ {
  font-family: MJXTEX-I;
  src: url("mathjax-fonts/MathJax_Math-Italic.woff") format("woff");
}
"""


def test_math_fonts_of_unused_styles_are_removed(tmp_path):
    pages = ['<mjx-c class="mjx-c1D465 TEX-I"></mjx-c>']
    # default text, stretchy delimiters and the italic class a page uses; not calligraphic
    assert math.used_fonts(MATH_CSS, pages) == {"MJXZERO", "MJXTEX", "MJXTEX-S4", "MJXTEX-I"}
    static = tmp_path / "_static"
    (static / "mathjax-fonts").mkdir(parents=True)
    (static / "mathjax-chtml.css").write_text(MATH_CSS)
    for name in ("MathJax_Zero.woff", "MathJax_Calligraphic-Regular.woff", "MathJax_Math-Italic.woff", "Other.woff"):
        (static / "mathjax-fonts" / name).write_bytes(b"font")
    assert math.prune_fonts(tmp_path, pages) == ["MJXTEX-C", "Other.woff"]  # (named by no rule)
    assert sorted(p.name for p in (static / "mathjax-fonts").iterdir()) == [
        "MathJax_Math-Italic.woff",
        "MathJax_Zero.woff",
    ]
    css = (static / "mathjax-chtml.css").read_text()
    assert "Calligraphic" not in css and "MathJax_Math-Italic.woff" in css and ".TEX-C" in css


def test_css_rules_keep_a_comment_inside_a_selector_with_its_rule():
    stylesheet = "@font-face /* 0 */ {font-family: A;}/* note */p{margin:0}"
    assert css.css_rules(stylesheet) == ["@font-face /* 0 */ {font-family: A;}", "/* note */", "p{margin:0}"]


def test_sidebar_scroll_script_sits_between_sidebar_and_main_once():
    page = '<div class="bd-sidebar-primary bd-sidebar">nav</div>\n<main id="main-content" class="bd-main">'
    out = layout.scroll_sidebar_early(page)
    assert out == page.replace("<main", layout.SIDEBAR_SCRIPT + "<main")
    assert layout.scroll_sidebar_early(out) == out  # a second build adds nothing
    no_sidebar = '<main id="main-content" class="bd-main">'  # e.g. the search page without the nav
    assert layout.scroll_sidebar_early(no_sidebar) == no_sidebar


def test_the_zero_size_font_is_registered_from_the_page_once(tmp_path):
    import base64

    from tools.site.pipeline import Page, Site

    site = Site(outdir=tmp_path, doctreedir=tmp_path / "doctrees", config=None, pages={})
    fonts = tmp_path / "_static" / math.FONT_DIR
    fonts.mkdir(parents=True)
    page = Page(tmp_path / "notebooks" / "ch.html", site)
    text = '<head><link rel="stylesheet" href="../_static/mathjax-chtml.css" /></head><body>x</body>'
    assert layout.zero_font_early(text, page) == text  # no font written: nothing to add
    font = bytes(range(256)) * 3
    (fonts / "MathJax_Zero.woff").write_bytes(font)
    out = layout.zero_font_early(text, page)
    head = out.split("</head>")[0]
    script = re.search(r"<script>(.*?)</script>", head).group(1)
    # the bytes in the script are the font's, added under the family the stylesheet names first
    assert base64.b64decode(re.search(r'atob\("([A-Za-z0-9+/=]+)"\)', script).group(1)) == font
    assert 'new FontFace("MJXZERO",a)' in script and "document.fonts.add(" in script
    assert layout.zero_font_early(out, page) == out  # a second build adds nothing
    no_math = "<head></head><body>x</body>"
    assert layout.zero_font_early(no_math, page) == no_math


def test_printed_prose_wraps_and_printed_tables_keep_their_lines():
    """Issue 46: chapter 14's "Where:" lines ran off the column at 1366 px (the output scrolled).
    A printed output of prose is marked to wrap; one that lines up columns is not."""
    import json
    from pathlib import Path

    from docutils import nodes
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document

    root = Path(__file__).resolve().parents[2]
    chapter = json.loads((root / "notebooks" / "14_positional_bugs_museum.ipynb").read_text())
    reports = [
        "".join(output["text"])
        for cell in chapter["cells"]
        for output in cell.get("outputs", [])
        if output.get("output_type") == "stream" and "\nWhere: " in "".join(output["text"])
    ]
    assert len(reports) >= 8 and all(layout.is_printed_prose(text) for text in reports)
    table = "sine/cosine pairs  offsets are a fixed map: True\nsines only         offsets are a fixed map: False\n"
    assert not layout.is_printed_prose(table)

    document = new_document("page", get_default_settings(Parser))
    prose, aligned, code = (
        nodes.literal_block(reports[0], reports[0], classes=["output", "stream"]),
        nodes.literal_block(table, table, classes=["output", "stream"]),
        nodes.literal_block(reports[0], reports[0], classes=["cell_input"]),
    )
    document += [prose, aligned, code]
    layout.WrapPrintedProse(document).apply()
    assert layout.PROSE_OUTPUT in prose["classes"]
    assert layout.PROSE_OUTPUT not in aligned["classes"] and layout.PROSE_OUTPUT not in code["classes"]

    stylesheet = (root / "tools" / "site" / "static" / "layout.css").read_text()
    # a top-level rule: at every width, not only inside one @media block
    (rule,) = [rule for rule in css.css_rules(stylesheet) if rule.startswith("div.output.stream.prose-output pre")]
    assert "white-space: pre-wrap" in rule
