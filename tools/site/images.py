"""Figures light on the wire and sized before they arrive.

Every PNG in ``_images`` is stored without its unused alpha channel as lossless WebP
(which every current browser reads), when that is smaller; each ``<img>`` gets
``width`` and ``height`` (no layout shift while it loads) and, outside a link, a link to
the full-size image, so a reader on a phone can open and zoom it. The logo (an SVG)
gets the size of its view box, for the same reason. Conversions are cached by content
hash next to the doctrees.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path
from typing import Any

from .patches import patch
from .pipeline import Page, Site

WEBP_OPTIONS: dict[str, Any] = {"lossless": True, "quality": 50, "method": 1}  # ~2.6x smaller, ~40 ms each

_STATIC_SVG = re.compile(r'<img src="([^"]*_static/([^"/]+\.svg))"(?![^>]*\bwidth=)')
_VIEWBOX = re.compile(r'viewBox="\s*[-\d.]+[\s,]+[-\d.]+[\s,]+([\d.]+)[\s,]+([\d.]+)\s*"')
_SVG_WIDTH = re.compile(r'<svg\b[^>]*?\swidth="([\d.]+)(pt|px|)"')
_CSS_PX_PER_UNIT = {"pt": 4 / 3, "px": 1.0, "": 1.0}  # CSS: 1pt = 1/72 in, 1px = 1/96 in
_IMG = patch("images.figures", r'<img ([^>]*?)src="([^"]*_images/([^"/]+))\.png"([^>]*?)\s*/?>', "_images/")


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


def convert_site_figures(site: Site) -> None:
    """Site step: :func:`convert_figures`, cached next to the doctrees."""
    site.figures = convert_figures(site.outdir, site.doctreedir / "webp")
    site.notes.append(f"{len(site.figures)} figures")


def point_at_figures(text: str, page: Page) -> str:
    """Page step: :func:`rewrite_images` with the site's converted figures."""
    return rewrite_images(text, page.site.figures)


def size_logo(text: str, page: Page) -> str:
    """Page step: :func:`size_static_svgs` against the site's ``_static``."""
    return size_static_svgs(text, page.site.static)
