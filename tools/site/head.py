"""Each page's head: one viewport tag, plain-text descriptions, a titled root redirect.

The theme writes three ``<meta name="viewport">`` per page: the first stays.
``sphinxext-opengraph`` writes each page's description from its first paragraph, TeX
included, and a relative ``og:url`` while the site has no fixed address: the TeX
becomes plain text and the relative ``og:url`` goes. The root ``index.html``, a bare
redirect to the first page, gets a title, a description and a link.
"""

from __future__ import annotations

import html
import re

from .patches import THEME_PAGE, patch
from .pipeline import Page

_VIEWPORT = patch("head.viewport", r'<meta name="viewport"[^>]*>', THEME_PAGE)
_DESCRIPTION = patch(
    "head.description",
    r'(<meta (?:name="description"|property="og:description") content=")([^"]*)(" />)',
    'description" content="',
)
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


def title_root_redirect(text: str, page: Page) -> str:
    """Page step: the root ``index.html``, a bare redirect, becomes :func:`redirect_page`."""
    if not page.is_root_index or "<title>" in text:
        return text
    match = _REFRESH.search(text)
    if match is None:
        return text
    config = page.site.config
    title = str(config.html_title or config.project)
    return redirect_page(match.group(1), title, str(config.posenc_description))
