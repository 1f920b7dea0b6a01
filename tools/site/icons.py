"""Font Awesome cut down to the icons the site draws.

The theme loads ``all.min.js`` (1.5 MB, a synchronous script in every page's head that
delays the first paint) and preloads three fonts for about fifteen icons. The script
goes; the icons are drawn by Font Awesome's own CSS, cut down to the icons the site
uses, with fonts subset to those glyphs (fontTools, WOFF). The licence header stays.
One font stays preloaded: the subset of the solid icons, which the header draws at
once (a few kB; without it the icons' late arrival shifts the text around them).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from .css import css_rules
from .patches import THEME_PAGE, patch
from .pipeline import Site

FA_DIR = Path("_static") / "vendor" / "fontawesome"

_FA_SCRIPT = patch(
    "icons.font_awesome_script",
    r'[ \t]*<script src="[^"]*vendor/fontawesome/[^"]*/all\.min\.js[^"]*"></script>\n?',
    THEME_PAGE,
)
_FA_PRELOAD = patch(
    "icons.font_awesome_preload",
    r'[ \t]*<link rel="preload" as="font" type="font/woff2" crossorigin href="[^"]*fontawesome[^"]*"\s*/>\n?',
    THEME_PAGE,
)
_ICON_NAME = re.compile(r"\bfa-([a-z0-9]+(?:-[a-z0-9]+)*)")
_ICON_RULE = re.compile(r'^((?:\.fa-[a-z0-9-]+:(?:before|after),?)+)\{content:"(\\[0-9a-f]+)"\}$')
_CSS_CODEPOINT = re.compile(r'"\\([0-9a-fA-F]{4,5})"')
_FONT_SRC = re.compile(
    r'src:url\(\.\./webfonts/([a-z0-9-]+)\.woff2\) format\("woff2"\),url\(\.\./webfonts/\1\.ttf\) format\("truetype"\)'
)


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


def slim_site_icons(site: Site) -> None:
    """Site step: :func:`slim_font_awesome` on the built site."""
    sizes = slim_font_awesome(site.outdir)
    if sizes:
        site.notes.append(f"Font Awesome {sizes['before']} -> {sizes['after']} bytes ({sizes['icons']} icons)")


def drop_font_awesome_script(text: str) -> str:
    """Page step: no Font Awesome script or font preloads, but the solid icons' subset preloaded."""
    text = _FA_SCRIPT.sub("", text)
    solid = re.search(r'href="([^"]*fontawesome/[^"]*/webfonts/)fa-solid-900\.woff2"', text)
    text = _FA_PRELOAD.sub("", text)
    if solid:
        preload = (
            f'<link rel="preload" as="font" type="font/woff" crossorigin href="{solid.group(1)}fa-solid-900.woff" />'
        )
        text = text.replace("</head>", f"  {preload}\n</head>", 1)
    return text
