"""The reader's book as an EPUB 3, assembled from the built website (``make epub``).

The site's pages already hold every formula typeset at build time (tools/site/math.py):
MathJax's CommonHTML beside a hidden MathML copy. This module takes each reader page of
the built site (the introduction, "Before you start", chapters 01-14, the glossary and
the references; not the API reference nor the instructor guide), keeps its article, and
writes it as an XHTML content document in which every formula is that MathML, which EPUB
3 reading systems display natively. So the EPUB has the website's numbering (the
chapter, section, figure and equation numbers are in the pages' text), the figures with
their alt text, and no raw TeX. What needs scripts is left out: the explorers' web
players (each has a static figure just after it), the launch and Thebe buttons.

Run ``python -m tools.epub`` after ``make book`` (``make epub`` does both); the checks
the tests make are in :mod:`tools.epub_checks`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import posixpath
import re
import shutil
import subprocess
import sys
import uuid
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import yaml
from bs4 import BeautifulSoup, Tag
from PIL import Image

from .release import package_version

ROOT = Path(__file__).resolve().parents[1]
# Pages of the site that are not the reader's book.
LEFT_OUT = ("book/api/", "book/instructor_guide")
# Elements that need scripts or belong to the website's chrome.
DROPPED = (
    "script",
    "style",
    "noscript",
    "button",
    "input",
    "label",
    "output",
    "iframe",
    "form",
    "select",
    "textarea",
    "section.posenc-player",
    "a.headerlink",
    ".thebe-launch-button",
)
XHTML = "http://www.w3.org/1999/xhtml"
LICENCE = (
    "Text and figures: Creative Commons Attribution 4.0 International (CC BY 4.0), "
    "https://creativecommons.org/licenses/by/4.0/. Code: MIT licence, https://opensource.org/license/mit."
)
MEDIA_TYPES = {
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".css": "text/css",
    ".xhtml": "application/xhtml+xml",
}
STYLE = """\
body { font-family: serif; line-height: 1.45; }
h1, h2, h3, h4 { font-family: sans-serif; line-height: 1.2; }
pre { white-space: pre-wrap; word-wrap: break-word; font-size: 0.85em; background: #f5f5f5; padding: 0.4em; }
code { font-size: 0.9em; }
figure { margin: 1em 0; text-align: center; }
figure img, img { max-width: 100%; height: auto; }
figcaption { font-size: 0.9em; text-align: left; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #999; padding: 0.2em 0.4em; }
.math { overflow-x: auto; }
div.math { text-align: center; margin: 0.6em 0; }
.eqno { float: right; }
.admonition, .proof, .exercise, .solution { border-left: 3px solid #888; padding-left: 0.6em; margin: 1em 0; }
.admonition-title { font-weight: bold; }
.titlepage { text-align: center; margin-top: 20%; }
"""


@dataclass
class Chapter:
    """One content document of the EPUB: its source page, its file name and its headings."""

    source: str  # path of the site page, relative to the site root
    name: str  # file name in the EPUB
    title: str = ""
    part: str = ""
    sections: list[tuple[str, str]] = field(default_factory=list)  # (id, text)
    has_math: bool = False


def reader_pages(toc: dict[str, Any]) -> list[tuple[str, str]]:
    """The reader's pages in book order, as ``(page path without suffix, part caption)``.

    Parameters
    ----------
    toc : dict
        ``_toc.yml`` as read by YAML (Jupyter Book's ``jb-book`` format).

    Returns
    -------
    list of tuple of str
        The root page first (no part), then every chapter and its sections except the
        API reference and the instructor guide.
    """
    if not isinstance(toc, dict) or "root" not in toc:
        raise ValueError("toc should be a jb-book table of contents with a 'root' entry")
    pages = [(str(toc["root"]), "")]

    def walk(entries: list[dict[str, Any]], part: str) -> None:
        for entry in entries:
            page = str(entry["file"])
            if not page.startswith(LEFT_OUT):
                pages.append((page, part))
            walk(entry.get("sections", []), part)

    for part in toc.get("parts", []):
        walk(part.get("chapters", []), str(part.get("caption", "")))
    return pages


def file_name(page: str) -> str:
    """The EPUB file name of a site page: ``notebooks/07_rope`` -> ``07_rope.xhtml``."""
    return posixpath.basename(page) + ".xhtml"


def _math_element(container: Tag) -> Tag | None:
    """The MathML of a MathJax container, without MathJax's data attributes."""
    math = container.find("math")
    if not isinstance(math, Tag):
        return None
    math = math.extract()
    for element in [math, *math.find_all(True)]:
        for name in [a for a in element.attrs if a.startswith("data-")]:
            del element[name]
    if container.get("display") == "true":
        math["display"] = "block"
    alttext = math.get_text(" ", strip=True)
    if alttext and "alttext" not in math.attrs:
        math["alttext"] = alttext
    return math


def _rewrite_link(href: str, source: str, names: dict[str, str]) -> str | None:
    """Where a link of page ``source`` points in the EPUB; None if outside the book."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", href):
        return href  # an absolute URL (https:, mailto:)
    path, _, fragment = href.partition("#")
    if not path:
        return href
    target = posixpath.normpath(posixpath.join(posixpath.dirname(source), path))
    target = re.sub(r"\.html$", "", target)
    if target not in names:
        return None
    return names[target] + (f"#{fragment}" if fragment else "")


def _strip(article: Tag, chapter: Chapter) -> None:
    """Remove what needs scripts or is the site's chrome; formulas to their MathML."""
    for selector in DROPPED:
        for element in article.select(selector):
            element.decompose()
    for summary in article.find_all("summary"):
        # The site's hidden cells: "Show/Hide code cell source" as two paragraphs, which a
        # summary may not hold (phrasing content only); one line of text instead.
        if summary.find("p") is not None:
            first = summary.find("p")
            text = first.get_text(" ", strip=True) if isinstance(first, Tag) else ""
            summary.clear()
            summary.append(re.sub(r"^(Show|Hide) ", "", text).capitalize() or "Details")
    for container in article.find_all("mjx-container"):
        math = _math_element(container)
        if math is None:
            container.decompose()
        else:
            container.replace_with(math)
            chapter.has_math = True
    for element in article.find_all(True):
        for name in ("loading", "decoding", "fetchpriority", "unselectable", "tabindex"):
            element.attrs.pop(name, None)


def _relink(article: Tag, chapter: Chapter, names: dict[str, str], images: dict[str, str]) -> None:
    """Images to their EPUB paths (noted in ``images``), links to the EPUB's pages or unwrapped."""
    for img in article.find_all("img"):
        src = str(img.get("src", ""))
        site_path = posixpath.normpath(posixpath.join(posixpath.dirname(chapter.source), src))
        # WebP (the site's lossless figures) is not an EPUB 3.2 core media type: stored as PNG.
        images.setdefault(site_path, "images/" + re.sub(r"\.webp$", ".png", posixpath.basename(site_path)))
        img["src"] = images[site_path]
        img["alt"] = str(img.get("alt", ""))
    for link in article.find_all("a"):
        href = link.get("href")
        if href is None:
            continue
        new = _rewrite_link(str(href), chapter.source, names)
        if new is None or new.startswith("images/") or "/_images/" in str(href):
            link.unwrap()
        else:
            link["href"] = new


def convert_page(text: str, chapter: Chapter, names: dict[str, str], images: dict[str, str]) -> str:
    """One site page as an EPUB XHTML content document.

    Parameters
    ----------
    text : str
        The page's HTML as the site build wrote it.
    chapter : Chapter
        The page's entry; its title and sections are filled in here.
    names : dict of str to str
        Every page of the EPUB (site path without suffix) to its file name.
    images : dict of str to str
        Filled in: every image used (path in the site) to its path in the EPUB.

    Returns
    -------
    str
        The XHTML document.
    """
    soup = BeautifulSoup(text, "html.parser")
    article = soup.find("article", class_="bd-article")
    if not isinstance(article, Tag):
        raise ValueError(f"{chapter.source}.html has no <article class='bd-article'>: is it a page of the built site?")
    _strip(article, chapter)
    _relink(article, chapter, names, images)
    heading = article.find("h1")
    chapter.title = heading.get_text(" ", strip=True) if isinstance(heading, Tag) else chapter.source
    chapter.title = re.sub(r"\s+", " ", chapter.title).replace(" .", ".")
    for h2 in article.find_all("h2"):
        section = h2.find_parent("section")
        if isinstance(section, Tag) and section.get("id"):
            chapter.sections.append((str(section["id"]), re.sub(r"\s+", " ", h2.get_text(" ", strip=True))))
    body = article.decode_contents()
    return xhtml_document(chapter.title, body)


def xhtml_document(title: str, body: str) -> str:
    """An EPUB 3 XHTML content document with this title and body markup."""
    escaped = escape(title)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE html>\n'
        f'<html xmlns="{XHTML}" xmlns:epub="http://www.idpf.org/2007/ops" lang="en" xml:lang="en">\n'
        f'<head>\n<meta charset="utf-8"/>\n<title>{escaped}</title>\n'
        '<link rel="stylesheet" type="text/css" href="style.css"/>\n</head>\n'
        f"<body>\n{body}\n</body>\n</html>\n"
    )


def title_page(title: str, author: str, version: str) -> str:
    """The EPUB's first page: title, author, version and licence."""
    body = (
        f'<section class="titlepage" epub:type="titlepage">\n<h1>{escape(title)}</h1>\n'
        f"<p>{escape(author)}</p>\n<p>Version {escape(version)}</p>\n"
        f"<p>{LICENCE.replace('. Code', '.<br/>Code')}</p>\n"
        "<p>Every claim in this book is computed and checked in the notebook that makes it; "
        "the notebooks, the website and the other editions are built from the same sources.</p>\n</section>"
    )
    return xhtml_document(title, body)


def nav_document(chapters: list[Chapter]) -> str:
    """The EPUB navigation document: parts, chapters (with their numbers) and sections."""
    lines = ['<nav epub:type="toc" id="toc">', "<h1>Contents</h1>", "<ol>"]
    part = None
    for chapter in chapters:
        if chapter.part != part:
            if part:
                lines.append("</ol></li>")
            part = chapter.part
            if part:
                lines.append(f"<li><span>{escape(part)}</span><ol>")
        entry = f'<li><a href="{chapter.name}">{escape(chapter.title)}</a>'
        if chapter.sections:
            entry += "<ol>" + "".join(
                f'<li><a href="{chapter.name}#{i}">{escape(t)}</a></li>' for i, t in chapter.sections
            )
            entry += "</ol>"
        lines.append(entry + "</li>")
    if part:
        lines.append("</ol></li>")
    lines += ["</ol>", "</nav>"]
    landmarks = (
        '<nav epub:type="landmarks" hidden="hidden"><ol>'
        '<li><a epub:type="titlepage" href="titlepage.xhtml">Title page</a></li>'
        f'<li><a epub:type="bodymatter" href="{chapters[1].name}">Start of the book</a></li>'
        "</ol></nav>"
    )
    return xhtml_document("Contents", "\n".join(lines) + "\n" + landmarks)


def package_document(meta: dict[str, str], chapters: list[Chapter], images: list[str], modified: dt.datetime) -> str:
    """The OPF package document: metadata, manifest and spine."""
    identifier = uuid.uuid5(uuid.NAMESPACE_URL, f"posenc-book:{meta['title']}:{meta['version']}")
    stamp = modified.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    features = ("MathML", "alternativeText", "tableOfContents", "structuralNavigation", "readingOrder")
    metadata = [
        f'<dc:identifier id="book-id">urn:uuid:{identifier}</dc:identifier>',
        f"<dc:title>{escape(meta['title'])}</dc:title>",
        f"<dc:creator>{escape(meta['author'])}</dc:creator>",
        "<dc:language>en</dc:language>",
        f"<dc:rights>{LICENCE}</dc:rights>",
        f"<dc:date>{stamp[:10]}</dc:date>",
        f'<meta property="dcterms:modified">{stamp}</meta>',
        f'<meta property="schema:version">{escape(meta["version"])}</meta>',
        '<meta property="schema:accessMode">textual</meta>',
        '<meta property="schema:accessMode">visual</meta>',
        '<meta property="schema:accessModeSufficient">textual</meta>',
        *(f'<meta property="schema:accessibilityFeature">{f}</meta>' for f in features),
        '<meta property="schema:accessibilityHazard">none</meta>',
        '<meta property="schema:accessibilitySummary">Formulas are MathML; every figure has a text '
        "description (alt text); headings and the table of contents follow the website's numbering.</meta>",
    ]
    manifest = [
        '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>',
        '<item id="style" href="style.css" media-type="text/css"/>',
        '<item id="titlepage" href="titlepage.xhtml" media-type="application/xhtml+xml"/>',
    ]
    spine = ['<itemref idref="titlepage"/>', '<itemref idref="nav"/>']
    for number, chapter in enumerate(chapters):
        properties = ' properties="mathml"' if chapter.has_math else ""
        manifest.append(
            f'<item id="page{number:02d}" href="{chapter.name}" media-type="application/xhtml+xml"{properties}/>'
        )
        spine.append(f'<itemref idref="page{number:02d}"/>')
    for number, image in enumerate(images):
        media = MEDIA_TYPES[Path(image).suffix.lower()]
        manifest.append(f'<item id="image{number:03d}" href="{image}" media-type="{media}"/>')
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="book-id" '
        'xml:lang="en" prefix="schema: http://schema.org/">\n'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">\n'
        + "\n".join(metadata)
        + "\n</metadata>\n<manifest>\n"
        + "\n".join(manifest)
        + "\n</manifest>\n<spine>\n"
        + "\n".join(spine)
        + "\n</spine>\n</package>\n"
    )


def png_bytes(path: Path) -> bytes:
    """An image file (the site's lossless WebP) as PNG, the same pixels."""
    buffer = io.BytesIO()
    with Image.open(path) as image:
        image.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


def build_time() -> dt.datetime:
    """The EPUB's modification date: the last commit's (reproducible), else now."""
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%cI"], cwd=ROOT, capture_output=True, text=True, check=True)
        return dt.datetime.fromisoformat(out.stdout.strip())
    except (OSError, subprocess.CalledProcessError, ValueError):
        return dt.datetime.now(dt.UTC)


def build_epub(site: Path, out: Path, *, config: Path = ROOT / "_config.yml", toc: Path = ROOT / "_toc.yml") -> Path:
    """Write the EPUB of the reader's book from the built site.

    Parameters
    ----------
    site : Path
        The built website (``_build/html``).
    out : Path
        The EPUB file to write (its folder is created).
    config, toc : Path
        The book's ``_config.yml`` (title, author) and ``_toc.yml`` (pages and order).

    Returns
    -------
    Path
        ``out``.
    """
    site, out = Path(site), Path(out)
    if not (site / "index.html").is_file():
        raise ValueError(f"site should be a built website (with index.html), not {site}: run make book first")
    if out.suffix != ".epub":
        raise ValueError(f"out should be a .epub file, not {out}")
    settings = yaml.safe_load(config.read_text(encoding="utf-8"))
    meta = {"title": str(settings["title"]), "author": str(settings["author"]), "version": package_version()}
    pages = reader_pages(yaml.safe_load(toc.read_text(encoding="utf-8")))
    names = {page: file_name(page) for page, _ in pages}
    chapters = [Chapter(page, names[page], part=part) for page, part in pages]
    images: dict[str, str] = {}
    documents: dict[str, str] = {}
    for index, chapter in enumerate(chapters, 1):
        print(f"[epub {index}/{len(chapters)}] {chapter.source}", flush=True)
        documents[chapter.name] = convert_page(
            (site / f"{chapter.source}.html").read_text(encoding="utf-8"), chapter, names, images
        )
    documents["titlepage.xhtml"] = title_page(meta["title"], meta["author"], meta["version"])
    documents["nav.xhtml"] = nav_document(chapters)
    opf = package_document(meta, chapters, sorted(set(images.values())), build_time())
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_suffix(".epub.partial")
    with zipfile.ZipFile(partial, "w") as epub:
        # The mimetype first and stored uncompressed (OCF 3, section 4.3).
        epub.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        epub.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">\n'
            '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles>\n</container>\n",
            compress_type=zipfile.ZIP_DEFLATED,
        )
        epub.writestr("OEBPS/content.opf", opf, compress_type=zipfile.ZIP_DEFLATED)
        epub.writestr("OEBPS/style.css", STYLE, compress_type=zipfile.ZIP_DEFLATED)
        for name, text in documents.items():
            epub.writestr(f"OEBPS/{name}", text, compress_type=zipfile.ZIP_DEFLATED)
        for source, target in sorted(images.items()):
            if source.endswith(".webp"):
                epub.writestr(f"OEBPS/{target}", png_bytes(site / source), compress_type=zipfile.ZIP_STORED)
            else:
                epub.write(site / source, f"OEBPS/{target}", compress_type=zipfile.ZIP_DEFLATED)
    shutil.move(partial, out)
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m tools.epub [--site DIR] [--out FILE]``: build the EPUB and say where it is."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    out = args.out or ROOT / "_build" / "epub" / f"posenc-book-{package_version()}.epub"
    try:
        build_epub(args.site, out)
    except ValueError as error:
        print(f"make epub: {error}", file=sys.stderr)
        return 1
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
