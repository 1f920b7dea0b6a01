"""Sphinx extension: make the built site light on the wire, after the build.

The theme and extensions of Jupyter Book 1 ship more than the pages use; this
extension trims the output once every page is written (``build-finished``):

- **Font Awesome:** the theme loads ``all.min.js`` (1.5 MB, a synchronous script
  in every page's head that delays the first paint) and preloads three fonts for
  about fifteen icons. The script goes; the icons are drawn by Font Awesome's own
  CSS, cut down to the icons the site uses, with fonts subset to those glyphs
  (fontTools, WOFF). The licence header stays.
- **Figures:** every PNG in ``_images`` is stored without its unused alpha channel
  as lossless WebP (which every current browser reads), when that is smaller; each
  ``<img>`` gets ``width`` and ``height`` (no layout shift while it loads) and, outside
  a link, a link to the full-size image, so a reader on a phone can open and zoom it.
  The logo (an SVG) gets the size of its view box, for the same reason.
  Conversions are cached by content hash next to the doctrees.
- **Unused files:** source maps, TrueType fonts beside their web fonts, the
  original Font Awesome fonts, and the MathJax fonts of styles no formula uses
  (calligraphic, Fraktur, ...) are removed.
- **Head:** one ``<meta name="viewport">`` per page (the theme writes three);
  descriptions (``sphinxext-opengraph``) as plain text, without TeX, and no
  ``og:url`` while the site has no fixed address;
  the MathJax 2 stylesheet is dropped from pages whose math was typeset at build
  time; the root ``index.html`` redirect gets a title, a description and a link.

``tests/tooling/test_lean_site.py`` checks each step; the browser suite checks that
every icon and figure still shows, and measures page weight (``make bench``).
"""

from __future__ import annotations

import hashlib
import html
import re
import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

FA_DIR = Path("_static") / "vendor" / "fontawesome"
WEBP_OPTIONS = {"lossless": True, "quality": 50, "method": 1}  # ~2.6x smaller than the PNGs, ~40 ms each

_FA_SCRIPT = re.compile(r'[ \t]*<script src="[^"]*vendor/fontawesome/[^"]*/all\.min\.js[^"]*"></script>\n?')
_FA_PRELOAD = re.compile(
    r'[ \t]*<link rel="preload" as="font" type="font/woff2" crossorigin href="[^"]*fontawesome[^"]*"\s*/>\n?'
)
_VIEWPORT = re.compile(r'<meta name="viewport"[^>]*>')
_ICON_NAME = re.compile(r"\bfa-([a-z0-9]+(?:-[a-z0-9]+)*)")
_ICON_RULE = re.compile(r'^((?:\.fa-[a-z0-9-]+:(?:before|after),?)+)\{content:"(\\[0-9a-f]+)"\}$')
_CSS_CODEPOINT = re.compile(r'"\\([0-9a-fA-F]{4,5})"')
_FONT_SRC = re.compile(
    r'src:url\(\.\./webfonts/([a-z0-9-]+)\.woff2\) format\("woff2"\),url\(\.\./webfonts/\1\.ttf\) format\("truetype"\)'
)
_STATIC_SVG = re.compile(r'<img src="([^"]*_static/([^"/]+\.svg))"(?![^>]*\bwidth=)')
_VIEWBOX = re.compile(r'viewBox="\s*[-\d.]+[\s,]+[-\d.]+[\s,]+([\d.]+)[\s,]+([\d.]+)\s*"')
_SVG_WIDTH = re.compile(r'<svg\b[^>]*?\swidth="([\d.]+)(pt|px|)"')
_CSS_PX_PER_UNIT = {"pt": 4 / 3, "px": 1.0, "": 1.0}  # CSS: 1pt = 1/72 in, 1px = 1/96 in
_IMG = re.compile(r'<img ([^>]*?)src="([^"]*_images/([^"/]+))\.png"([^>]*?)\s*/?>')


# --------------------------------------------------------------------------- Font Awesome


def css_rules(css: str) -> list[str]:
    """The top-level rules of a minified stylesheet (``@``-blocks kept whole), comments apart."""
    rules, depth, start, i = [], 0, 0, 0
    while i < len(css):
        if css.startswith("/*", i):
            end = css.index("*/", i) + 2
            if depth == 0 and not css[start:i].strip():  # a comment between rules is one of them
                rules.append(css[i:end])
                start = end
            i = end
            continue
        char = css[i]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                rules.append(css[start : i + 1].strip())
                start = i + 1
        i += 1
    return [rule for rule in rules if rule]


def subset_icon_css(css: str, used: set[str]) -> tuple[str, set[int]]:
    """Font Awesome's stylesheet with only the icon rules for names in ``used``.

    Returns the stylesheet and the code points of the icons it keeps.
    """
    kept, codepoints = [], set()
    for rule in css_rules(css):
        match = _ICON_RULE.match(rule)
        if match is None:
            kept.append(rule)
            continue
        names = {selector.split(":")[0][len(".fa-") :] for selector in match.group(1).split(",") if selector}
        if names & used:
            kept.append(rule)
            codepoints.add(int(match.group(2)[1:], 16))
    return "\n".join(kept) + "\n", codepoints


def _subset_font(source: Path, target: Path, codepoints: set[int]) -> None:
    import logging as std_logging

    from fontTools import subset
    from fontTools.ttLib import TTFont

    # fontTools reports every step at INFO, which the build's log configuration would print
    std_logging.getLogger("fontTools").setLevel(std_logging.WARNING)
    options = subset.Options()
    options.flavor = "woff"
    options.layout_features = ["*"]
    font = TTFont(source)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(codepoints))
    subsetter.subset(font)
    font.flavor = "woff"
    font.save(target)


def _used_icon_names(outdir: Path) -> set[str]:
    """Every ``fa-*`` name in the pages and in the scripts that write icons into them."""
    names: set[str] = set()
    for path in [*outdir.rglob("*.html"), *(outdir / "_static").rglob("*.js")]:
        if FA_DIR.as_posix() in path.as_posix():
            continue
        names.update(_ICON_NAME.findall(path.read_text(encoding="utf-8", errors="replace")))
    return names


def _theme_codepoints(outdir: Path) -> set[int]:
    """Code points other stylesheets draw with the icon font (``content: "\\f078"``)."""
    points: set[int] = set()
    for path in (outdir / "_static").rglob("*.css"):
        if FA_DIR.as_posix() in path.as_posix():
            continue
        for hexdigits in _CSS_CODEPOINT.findall(path.read_text(encoding="utf-8", errors="replace")):
            value = int(hexdigits, 16)
            if 0xE000 <= value <= 0xF8FF:  # the private use area, where the icons live
                points.add(value)
    return points


def slim_font_awesome(outdir: Path) -> dict[str, int]:
    """Replace Font Awesome's script, stylesheet and fonts by a subset; return sizes in bytes."""
    fa_root = outdir / FA_DIR
    stylesheets = sorted(fa_root.glob("*/css/all.min.css"))
    if not stylesheets:
        return {}
    stylesheet = stylesheets[0]
    version_dir = stylesheet.parent.parent
    before = sum(p.stat().st_size for p in version_dir.rglob("*") if p.is_file())
    css, codepoints = subset_icon_css(stylesheet.read_text(encoding="utf-8"), _used_icon_names(outdir))
    codepoints |= _theme_codepoints(outdir)
    webfonts = version_dir / "webfonts"
    for ttf in sorted(webfonts.glob("*.ttf")):
        _subset_font(ttf, webfonts / f"{ttf.stem}.woff", codepoints)
    css = _FONT_SRC.sub(r'src:url(../webfonts/\1.woff) format("woff")', css)
    stylesheet.write_text(css, encoding="utf-8")
    for path in [*webfonts.glob("*.ttf"), *webfonts.glob("*.woff2")]:
        path.unlink()
    shutil.rmtree(version_dir / "js", ignore_errors=True)
    after = sum(p.stat().st_size for p in version_dir.rglob("*") if p.is_file())
    return {"before": before, "after": after, "icons": len(codepoints)}


# --------------------------------------------------------------------------- math fonts

MATH_CSS = Path("_static") / "mathjax-chtml.css"
_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_FLAT_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_FAMILIES = re.compile(r"font-family:\s*([^;}]+)")
_FONT_FACE_FILE = re.compile(r'font-family:\s*([A-Z0-9-]+);\s*src:\s*url\("([^"]+)"\)')
_TEX_CLASS = re.compile(r"\bTEX-([A-Z0-9]+)\b")


def used_math_fonts(css: str, pages: list[str]) -> set[str]:
    """The MathJax font families some page can use.

    A family named only by its class rule (``.TEX-C`` for ``MJXTEX-C``) is used when
    a page has an element of that class; a family named by any other rule (the
    default text, stretchy delimiters) is always kept.
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


def prune_math_fonts(outdir: Path, pages: list[str]) -> list[str]:
    """Remove the MathJax fonts (files and ``@font-face`` rules) no page can use; return their names."""
    path = outdir / MATH_CSS
    if not path.is_file():
        return []
    css = path.read_text(encoding="utf-8")
    used = used_math_fonts(css, pages)
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


# --------------------------------------------------------------------------- figures


def _to_webp(png: Path, cache: Path) -> tuple[Path, tuple[int, int]]:
    """The figure as lossless WebP without alpha (cached), or the PNG if that is smaller."""
    from PIL import Image

    data = png.read_bytes()
    key = hashlib.sha256(data).hexdigest()[:20]
    cached = cache / f"{key}.webp"
    with Image.open(png) as image:
        size = image.size
        if not cached.exists():
            rgb = image.convert("RGB") if image.mode in ("RGBA", "LA", "P") and _opaque(image) else image
            cache.mkdir(parents=True, exist_ok=True)
            rgb.save(cached, "WEBP", **WEBP_OPTIONS)
    if cached.stat().st_size >= len(data):
        return png, size
    target = png.with_suffix(".webp")
    shutil.copyfile(cached, target)
    png.unlink()
    return target, size


def _opaque(image) -> bool:
    """Whether every pixel of ``image`` is fully opaque (its alpha channel, if any, is unused)."""
    if "A" not in image.getbands() and image.mode != "P":
        return True
    alpha = image.convert("RGBA").getchannel("A")
    return alpha.getextrema() == (255, 255)


def convert_figures(outdir: Path, cache: Path) -> dict[str, tuple[str, int, int]]:
    """Convert ``_images/*.png``; return ``{stem: (suffix, width, height)}``."""
    figures = {}
    for png in sorted((outdir / "_images").glob("*.png")):
        target, (width, height) = _to_webp(png, cache)
        figures[png.stem] = (target.suffix, width, height)
    return figures


def rewrite_images(text: str, figures: dict[str, tuple[str, int, int]]) -> str:
    """Point ``<img>`` at the converted figure, with its size and a link to enlarge it."""
    out, last = [], 0
    for match in _IMG.finditer(text):
        stem = match.group(3)
        if stem not in figures:
            continue
        suffix, width, height = figures[stem]
        src = f"{match.group(2)}{suffix}"
        attrs = (match.group(1) + match.group(4)).strip()
        if "width=" not in attrs and "height=" not in attrs:
            attrs += f' width="{width}" height="{height}"'
        tag = f'<img {attrs} src="{src}" />'
        inside_link = text.rfind("<a ", 0, match.start()) > text.rfind("</a>", 0, match.start())
        if not inside_link:
            tag = f'<a class="figure-enlarge" href="{src}" title="Open the figure at full size">{tag}</a>'
        out += [text[last : match.start()], tag]
        last = match.end()
    out.append(text[last:])
    return "".join(out)


def size_static_svgs(text: str, static: Path) -> str:
    """Give ``<img>`` of an SVG in ``_static`` (the logo) its size before the file arrives.

    The attributes ``width`` and ``height`` carry the view box's aspect ratio, and an
    inline ``width`` the size the browser gives the file once loaded (the SVG's own
    ``width`` in CSS pixels): the theme's stylesheet sets ``width: auto`` on the logo,
    which overrides the attributes, so without it the logo has no size until the file
    arrives and the sidebar below it jumps down (on a slow network, 0.04 of chapter
    05's layout shift).
    """

    def sized(match: re.Match[str]) -> str:
        svg = static / match.group(2)
        head = svg.read_text(encoding="utf-8", errors="replace")[:2000] if svg.is_file() else ""
        box = _VIEWBOX.search(head)
        if box is None:
            return match.group(0)
        box_width, box_height = (float(v) for v in box.groups())
        attrs = f' width="{round(box_width)}" height="{round(box_height)}"'
        own = _SVG_WIDTH.search(head)
        if own is not None:
            css_px = float(own.group(1)) * _CSS_PX_PER_UNIT[own.group(2)]
            attrs += f' style="width: {css_px:g}px; height: auto"'
        return match.group(0) + attrs

    return _STATIC_SVG.sub(sized, text)


# --------------------------------------------------------------------------- pages


_DESCRIPTION = re.compile(r'(<meta (?:name="description"|property="og:description") content=")([^"]*)(" />)')
_RELATIVE_OG_URL = re.compile(r'<meta property="og:url" content="(?!https?://)[^"]*" />\n?')
_TEX_WRAPPER = re.compile(r"\\(?:mathrm|mathbf|mathit|text|operatorname)\{([^{}]*)\}")
_TEX_MACRO = re.compile(r"\\([A-Za-z]+)")
_TEX_SYMBOLS = {
    "varphi": "φ",
    "phi": "φ",
    "theta": "θ",
    "omega": "ω",
    "alpha": "α",
    "beta": "β",
    "lambda": "λ",
    "pi": "π",
    "cdot": "·",
    "times": "×",
    "top": "ᵀ",
    "le": "≤",
    "ge": "≥",
    "infty": "∞",
}


def plain_description(text: str) -> str:
    """A page description with its TeX (from a first paragraph with formulas) as plain text."""
    text = _TEX_WRAPPER.sub(r" \1", text)
    text = _TEX_MACRO.sub(lambda m: f" {_TEX_SYMBOLS.get(m.group(1), '')} ", text)
    text = re.sub(r"[{}^_]|\\(?![A-Za-z])", "", text)
    return re.sub(r"\s+", " ", text).replace(" .", ".").replace(" ,", ",").strip()


def describe_plainly(text: str) -> str:
    """The page with plain-text descriptions and without a relative ``og:url`` (no site address)."""
    text = _DESCRIPTION.sub(lambda m: m.group(1) + plain_description(m.group(2)) + m.group(3), text)
    return _RELATIVE_OG_URL.sub("", text)


def one_viewport(text: str) -> str:
    """Keep the first ``<meta name="viewport">`` of a page, drop the others."""
    seen = False

    def keep_first(match: re.Match[str]) -> str:
        nonlocal seen
        if seen:
            return ""
        seen = True
        return match.group(0)

    return _VIEWPORT.sub(keep_first, text)


def trim_head(text: str) -> str:
    """The page without Font Awesome's script and font preloads, with one viewport tag."""
    text = _FA_SCRIPT.sub("", text)
    # One preload stays: the subset of the solid icons, which the header draws at once
    # (a few kB; without it the icons' late arrival shifts the text around them).
    solid = re.search(r'href="([^"]*fontawesome/[^"]*/webfonts/)fa-solid-900\.woff2"', text)
    text = _FA_PRELOAD.sub("", text)
    if solid:
        preload = (
            f'<link rel="preload" as="font" type="font/woff" crossorigin href="{solid.group(1)}fa-solid-900.woff" />'
        )
        text = text.replace("</head>", f"  {preload}\n</head>", 1)
    if "mathjax-chtml.css" in text:  # typeset at build time: MathJax 2's stylesheet is unused
        text = re.sub(r'[ \t]*<link rel="stylesheet" type="text/css" href="[^"]*mathjax2\.css[^"]*" />\n?', "", text)
    return describe_plainly(one_viewport(text))


def redirect_page(target: str, title: str, description: str) -> str:
    """A titled redirect page (the site root sends readers to the first page)."""
    target, title, description = (html.escape(s, quote=True) for s in (target, title, description))
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8" />\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1" />\n'
        f"<title>{title}</title>\n"
        f'<meta name="description" content="{description}" />\n'
        f'<link rel="canonical" href="{target}" />\n'
        f'<meta http-equiv="refresh" content="0; url={target}" />\n'
        f'</head>\n<body>\n<p><a href="{target}">{title}</a></p>\n</body>\n</html>\n'
    )


_REFRESH = re.compile(r'<meta http-equiv="Refresh" content="0; url=([^"]+)" />', re.I)


def _build_finished(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    fonts = slim_font_awesome(outdir)
    pages = [path.read_text(encoding="utf-8") for path in outdir.rglob("*.html")]
    unused_math_fonts = prune_math_fonts(outdir, pages)
    figures = convert_figures(outdir, Path(app.doctreedir) / "webp")
    for path in outdir.rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        new = size_static_svgs(rewrite_images(trim_head(text), figures), outdir / "_static")
        if new != text:
            path.write_text(new, encoding="utf-8")
    for path in [*outdir.rglob("*.map"), *(outdir / "_static").rglob("*.ttf")]:
        path.unlink()
    index = outdir / "index.html"
    if index.exists():
        match = _REFRESH.search(index.read_text(encoding="utf-8"))
        if match and "<title>" not in index.read_text(encoding="utf-8"):
            title = str(app.config.html_title or app.config.project)
            index.write_text(redirect_page(match.group(1), title, str(app.config.posenc_description)))
    if fonts:
        logger.info(
            "lean_site: Font Awesome %d -> %d bytes (%d icons), %d figures, %d unused MathJax fonts removed",
            fonts["before"],
            fonts["after"],
            fonts["icons"],
            len(figures),
            len(unused_math_fonts),
        )


def setup(app: Sphinx) -> dict[str, object]:
    app.add_config_value("posenc_description", "", "html")
    # After the accessibility repairs (700) and build-time math, before nothing else.
    app.connect("build-finished", _build_finished, priority=800)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
