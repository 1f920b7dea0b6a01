"""One print page (HTML) from the built site's article bodies, for Chromium to print.

The site (``_build/html``) already carries everything the printed book must show as the
website shows it: chapter, section, figure, equation and exercise numbers, typeset
formulas (MathJax's CHTML, made at build time), the bibliography. This module takes the
``<article>`` of each reader page, in the order of ``_toc.yml``, and puts them in one
document:

- every ``id`` gets its page's prefix (``notebooks-07_rope--where-rope-sits``), so that
  ids stay unique; a link between two pages of the document becomes an in-document
  anchor (a page's own anchor is its prefix alone), so links and citations jump;
- a link to a page that is not in the document (the API reference, the instructor
  guide, a page's source) keeps its text and loses its link;
- what only works on screen goes: scripts, an explorer's controls (its static
  companion figure stays), hidden code cells, the heading permalinks, the buttons;
- the site's stylesheets are kept, with a print stylesheet after them (A4, a page
  break before each chapter, code that wraps, figures that fit the page).
"""

from __future__ import annotations

import html
import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from bs4 import BeautifulSoup, Tag

# Pages of _toc.yml that are not for the printed book: the API reference (generated from
# docstrings, for programmers at a screen) and the instructor guide (for teachers).
LEFT_OUT = ("book/instructor_guide", "book/api/")

# Attributes that name an id of the same document.
_ID_REFERENCES = ("for", "aria-labelledby", "aria-describedby", "aria-controls", "headers")

PRINT_CSS = """
@page { size: A4; margin: 16mm 15mm 18mm 15mm; }
html, body { background: #fff !important; }
body { margin: 0; font-size: 10.5pt; }
.print-book { max-width: none; margin: 0; padding: 0; }
.print-book article.bd-article { padding: 0; max-width: none; }
.print-page { break-before: page; }
.print-title-page { break-after: page; display: flex; flex-direction: column;
  justify-content: center; min-height: 240mm; text-align: center; }
.print-title-page .print-title { font-size: 26pt; font-weight: 700; line-height: 1.25;
  margin: 0 0 12mm 0; }
.print-title-page .print-version { font-size: 14pt; margin: 0 0 18mm 0; }
.print-title-page .print-authors { font-size: 13pt; margin: 0 0 30mm 0; }
.print-title-page .print-licence { font-size: 10pt; }
pre, .highlight pre, .cell_output pre { white-space: pre-wrap !important;
  overflow-wrap: anywhere; word-break: break-word; overflow: visible !important;
  max-height: none !important; }
img { max-width: 100% !important; height: auto !important; }
figure img { max-height: 200mm; object-fit: contain; }
figure, .cell_output, div.math, table, .admonition, .proof { break-inside: avoid; }
div.math, .cell_output, .output_area, .pst-scrollable-table-container,
mjx-container[display="true"] { overflow: visible !important; }
h1, h2, h3, h4 { break-after: avoid; }
/* Sizes at which every heading of the book holds on one line: Chromium's outline joins the
   lines of a wrapped heading without the space between them. */
.print-book h1 { font-size: 19pt; } .print-book h2 { font-size: 14.5pt; }
.print-book h3 { font-size: 12pt; } .print-book h4 { font-size: 11pt; }
a { text-decoration: none; }
a.headerlink, .copybtn, .toggle-button, button, .posenc-player, details.hide,
.print-hidden { display: none !important; }
"""


@dataclass(frozen=True)
class BookInfo:
    """What the title page says.

    Attributes
    ----------
    title, version, authors : str
        The book's title, its version (``posenc_helpers.__version__``) and authors.
    licence : str
        The licences, in one sentence.
    """

    title: str
    version: str
    authors: str
    licence: str


def reader_pages(toc: dict[str, Any]) -> list[str]:
    """The docnames of the printed book, in the order of the table of contents.

    Parameters
    ----------
    toc : dict
        ``_toc.yml`` as read by ``yaml.safe_load``: a ``root`` and ``parts`` whose
        ``chapters`` name files (with optional ``sections``).

    Returns
    -------
    list of str
        The root, then every file of every part, less those under :data:`LEFT_OUT`.
    """
    if not isinstance(toc, dict) or "root" not in toc:
        raise ValueError("toc must be _toc.yml read as a mapping with a 'root' entry")
    names = [str(toc["root"])]

    def walk(entries: Iterable[dict[str, Any]]) -> None:
        for entry in entries:
            if "file" in entry:
                names.append(str(entry["file"]))
            walk(entry.get("sections", []))

    for part in toc.get("parts", []):
        walk(part.get("chapters", []))
    return [n for n in names if not any(n == o or n.startswith(o) for o in LEFT_OUT)]


def read_toc(path: Path) -> list[str]:
    """:func:`reader_pages` of the ``_toc.yml`` at ``path``."""
    return reader_pages(yaml.safe_load(Path(path).read_text(encoding="utf-8")))


def page_prefix(docname: str) -> str:
    """The id prefix of a page: ``notebooks/07_rope`` -> ``notebooks-07_rope``."""
    if not docname or docname.startswith("/") or ".." in docname.split("/"):
        raise ValueError(f"docname must be a relative page name like 'notebooks/07_rope', got {docname!r}")
    return re.sub(r"[^A-Za-z0-9_-]", "-", docname)


def _link_target(href: str, docname: str, included: set[str]) -> str | None:
    """The in-document anchor a link of page ``docname`` points to; None if it leaves the book.

    ``href`` is returned unchanged (a str) for links to the web and mail; None means the
    link points into the site but not into this document (it is then unlinked).
    """
    if re.match(r"^[a-z][a-z0-9+.-]*:", href, flags=re.I):
        return href if href.lower().startswith(("http:", "https:", "mailto:")) else None
    path, _, fragment = href.partition("#")
    if not path:
        target = docname
    else:
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(docname), path))
        if not resolved.endswith(".html"):
            return None
        target = resolved[: -len(".html")]
    if target not in included:
        return None
    prefix = page_prefix(target)
    return f"#{prefix}--{fragment}" if fragment else f"#{prefix}"


def _site_url(url: str, docname: str, site_rel: str) -> str:
    """A resource URL of page ``docname`` (``../_images/x.webp``) seen from the print page."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", url, flags=re.I) or url.startswith(("#", "/")):
        return url
    return posixpath.normpath(posixpath.join(site_rel, posixpath.dirname(docname), url))


def _parsed(page_html: str | BeautifulSoup) -> BeautifulSoup:
    if isinstance(page_html, BeautifulSoup):
        return page_html
    if not isinstance(page_html, str):
        raise TypeError(f"page_html must be the page's HTML (str) or its BeautifulSoup, got {type(page_html).__name__}")
    return BeautifulSoup(page_html, "html.parser")


def _unwrap_link(anchor: Tag) -> None:
    anchor.name = "span"
    for attribute in ("href", "title", "target", "rel"):
        anchor.attrs.pop(attribute, None)


def article_body(page_html: str | BeautifulSoup, docname: str, included: set[str], site_rel: str) -> str:
    """The printable article of one built page, its ids prefixed and its links rewritten.

    Parameters
    ----------
    page_html : str or BeautifulSoup
        The page as the site build wrote it (or parsed already; it is then changed).
    docname : str
        Its page name (``notebooks/07_rope``): the prefix of its ids, the base of its links.
    included : set of str
        The docnames of the document: links to them become in-document anchors.
    site_rel : str
        The site's folder seen from the print page (``../html``).

    Returns
    -------
    str
        ``<div class="print-page" id=PREFIX>`` holding the page's ``<article>``.
    """
    soup = _parsed(page_html)
    article = soup.find("article", class_="bd-article")
    if not isinstance(article, Tag):
        raise ValueError(
            f"page_html of {docname!r} has no <article class='bd-article'>: is it a page of the built site?"
        )
    for selector in ("script", "noscript", ".posenc-player", "details.hide", "a.headerlink", "button"):
        for node in article.select(selector):
            node.decompose()
    prefix = page_prefix(docname)
    for node in article.find_all(True):
        if node.get("id"):
            node["id"] = f"{prefix}--{node['id']}"
        for attribute in _ID_REFERENCES:
            value = node.get(attribute)
            if value:
                words = value if isinstance(value, list) else str(value).split()
                node[attribute] = " ".join(f"{prefix}--{w}" for w in words)
        if node.name in ("img", "source") and node.get("src"):
            node["src"] = _site_url(str(node["src"]), docname, site_rel)
            node["loading"] = "eager"
            node.attrs.pop("srcset", None)
        if node.name == "a" and node.get("href") is not None:
            target = _link_target(str(node["href"]), docname, included)
            if target is None:
                _unwrap_link(node)
            else:
                node["href"] = target
    return f'<div class="print-page" id="{prefix}">\n{article.decode_contents()}\n</div>'


def _cited_entries(bibliography: str, citing: list[str], prefix: str) -> str:
    """The bibliography's body less the entries (``div.citation``) that no page of ``citing`` links to."""
    cited = {
        f"{prefix}--{name}" for body in citing for name in re.findall(rf'href="#{re.escape(prefix)}--([^"]+)"', body)
    }
    soup = BeautifulSoup(bibliography, "html.parser")
    for entry in soup.select("div.citation"):
        if entry.get("id") not in cited:
            entry.decompose()
    return str(soup)


def stylesheets(page_html: str | BeautifulSoup, docname: str, site_rel: str) -> list[str]:
    """The site's stylesheets of a built page (``<link>`` and ``<style>``), for the print page's head."""
    soup = _parsed(page_html)
    head = soup.head
    if head is None:
        raise ValueError(f"page_html of {docname!r} has no <head>")
    sheets = []
    for node in head.find_all(["link", "style"]):
        if node.name == "link":
            rel: Any = node.get("rel") or []
            if "stylesheet" not in rel or not node.get("href"):
                continue
            node["href"] = _site_url(str(node["href"]), docname, site_rel)
            node.attrs.pop("media", None)  # the print rules too: the page is printed
        sheets.append(str(node))
    return sheets


def title_page(info: BookInfo) -> str:
    """The title page: title, version, authors and licences (no heading: not in the outline)."""
    e = html.escape
    return (
        '<section class="print-title-page" aria-label="Title page">\n'
        f'<p class="print-title">{e(info.title)}</p>\n'
        f'<p class="print-version">Version {e(info.version)}</p>\n'
        f'<p class="print-authors">{e(info.authors)}</p>\n'
        f'<p class="print-licence">{e(info.licence)}</p>\n'
        "</section>"
    )


def assemble(
    site_dir: Path,
    pages: Sequence[str],
    out_file: Path,
    info: BookInfo,
    *,
    with_title_page: bool = True,
    cited_only: str | None = None,
    progress: Any = print,
) -> Path:
    """Write the print page of ``pages`` (docnames of ``site_dir``) to ``out_file``.

    Parameters
    ----------
    site_dir : Path
        The built site (``_build/html``).
    pages : sequence of str
        The docnames to print, in order; links to any other page are unlinked.
    out_file : Path
        The print page to write; its folder is created.
    info : BookInfo
        The title page's content and the document's title.
    with_title_page : bool
        Whether the document opens with the title page.
    cited_only : str, optional
        The docname of a bibliography among ``pages`` to keep only the entries that the
        other pages cite (a chapter's PDF ends with its own references).
    progress : callable
        Called with one line per page read.

    Returns
    -------
    Path
        ``out_file``.
    """
    if not pages:
        raise ValueError("pages must name at least one page of the site")
    site_dir, out_file = Path(site_dir), Path(out_file)
    out_file.parent.mkdir(parents=True, exist_ok=True)
    site_rel = posixpath.relpath(site_dir.resolve().as_posix(), out_file.parent.resolve().as_posix())
    included = set(pages)
    sheets: list[str] = []
    bodies = [title_page(info)] if with_title_page else []
    for number, docname in enumerate(pages, 1):
        source = site_dir / f"{docname}.html"
        if not source.is_file():
            raise ValueError(f"pages names {docname!r}, but {source} does not exist: build the site first (make book)")
        progress(f"  [{number}/{len(pages)}] {docname}")
        soup = BeautifulSoup(source.read_text(encoding="utf-8"), "html.parser")
        sheets += [s for s in stylesheets(soup, docname, site_rel) if s not in sheets]
        bodies.append(article_body(soup, docname, included, site_rel))
    if cited_only is not None:
        if cited_only not in included:
            raise ValueError(f"cited_only must be one of pages, got {cited_only!r}")
        at = list(pages).index(cited_only) + len(bodies) - len(pages)
        bodies[at] = _cited_entries(bodies[at], [b for i, b in enumerate(bodies) if i != at], page_prefix(cited_only))
    document = "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en" data-theme="light" data-mode="light">',
            "<head>",
            '<meta charset="utf-8">',
            f"<title>{html.escape(info.title)}, version {html.escape(info.version)}</title>",
            f'<meta name="author" content="{html.escape(info.authors)}">',
            *sheets,
            f"<style>{PRINT_CSS}</style>",
            "</head>",
            '<body><main class="print-book">',
            *bodies,
            "</main></body>",
            "</html>",
        ]
    )
    out_file.write_text(document, encoding="utf-8")
    return out_file
