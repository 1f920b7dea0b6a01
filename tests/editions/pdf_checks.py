"""Checks of a printed PDF against the built site it was printed from.

Each check returns a list of problems (empty: it passes). The expected values are read
from the site's HTML (headings, caption numbers), never typed here; the PDF is read with
poppler's ``pdftotext`` (its text layer, page by page: pypdf does not read the Type 3
fonts Chromium makes of MathJax's glyphs) and ``pdfinfo``, and with pypdf (outline,
link annotations, named destinations). test_pdf.py runs them on the book's PDF and on a
deliberately broken print page, where each must report a problem.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from bs4 import BeautifulSoup, Tag
from pypdf import PdfReader

# What must never reach the text layer: TeX left untypeset, a reference Sphinx could not
# resolve, Jupyter Book's placeholder title.
FORBIDDEN = ("\\(", "\\)", "\\[", "$$", "??", "Project name not set")


def normalise(text: str) -> str:
    """Runs of whitespace as one space; soft hyphens and zero-width spaces dropped."""
    return re.sub(r"\s+", " ", text.replace("\u00ad", "").replace("\u200b", "")).strip()


def _soup(site: Path, docname: str) -> BeautifulSoup:
    return BeautifulSoup((site / f"{docname}.html").read_text(encoding="utf-8"), "html.parser")


def page_title(site: Path, docname: str) -> str:
    """The page's heading as the site shows it (``7. Rotary position embedding (RoPE)``)."""
    article = _soup(site, docname).find("article")
    heading = article.find("h1") if isinstance(article, Tag) else None
    if not isinstance(heading, Tag):
        raise AssertionError(f"{docname}: no <h1> in the site's article")
    for node in heading.select("a.headerlink, mjx-container"):
        node.decompose()
    return normalise(heading.get_text())


def caption_numbers(site: Path, docname: str) -> list[str]:
    """The site's numbered captions of a page, in order: ``Figure 4.1``, ``Exercise 4.1``, ..."""
    return [normalise(span.get_text()) for span in _soup(site, docname).select("article span.caption-number")]


def pdf_pages(pdf: Path) -> list[str]:
    """The text layer of each page (``pdftotext``), whitespace normalised."""
    text = subprocess.run(["pdftotext", str(pdf), "-"], check=True, capture_output=True, text=True).stdout
    pages = text.split("\f")
    if pages and not pages[-1].strip():
        pages.pop()
    return [normalise(page) for page in pages]


def openings(pages: list[str], titles: list[str], start: int = 0) -> tuple[dict[str, int], list[str]]:
    """The page (0-based) each title opens, searched in order from page ``start``; and the problems.

    A title opens a page when the page's text starts with it (every chapter starts on a
    page of its own), after the page where the title before it opened.
    """
    found: dict[str, int] = {}
    problems = []
    for title in titles:
        index = next((i for i in range(start, len(pages)) if pages[i].startswith(title)), None)
        if index is None:
            problems.append(f"no page after page {start + 1} opens with {title!r}")
            continue
        found[title] = index
        start = index + 1
    return found, problems


def check_captions(pages: list[str], first: int, end: int, labels: list[str]) -> list[str]:
    """The labels appear in pages ``first``..``end - 1`` in order, and no other of their kind and chapter."""
    text = " ".join(pages[first:end])
    problems, position = [], 0
    for label in labels:
        hit = re.compile(re.escape(label) + r"(?!\d)").search(text, position)
        if hit is None:
            problems.append(f"{label} is missing from pages {first + 1}-{end} (or out of order)")
        else:
            position = hit.end()
    for kind, chapter in {tuple(label.split(" ")[0:2]) for label in labels}:
        prefix = chapter.split(".")[0]
        seen = set(re.findall(rf"\b{kind} {prefix}\.\d+\b", text))
        extra = seen - set(labels)
        if extra:
            problems.append(f"pages {first + 1}-{end} name {sorted(extra)}, which the site's chapter does not have")
    return problems


def check_forbidden(pages: list[str]) -> list[str]:
    """No raw TeX, unresolved reference or placeholder title in the text layer."""
    return [f"page {n}: {bad}" for n, page in enumerate(pages, 1) for bad in FORBIDDEN if bad in page]


def outline(reader: PdfReader) -> list[tuple[str, int]]:
    """The outline's top-level entries: (title, 0-based page)."""
    return [
        (normalise(entry.title or ""), reader.get_destination_page_number(entry))
        for entry in reader.outline
        if not isinstance(entry, list)
    ]


def check_outline(reader: PdfReader, opened: dict[str, int], titles: list[str]) -> list[str]:
    """One top-level bookmark per page title, in order, each on the page the title opens."""
    entries = outline(reader)
    problems = []
    if [title for title, _ in entries] != titles:
        problems.append(f"the outline's top level is {[t for t, _ in entries]}, not {titles}")
    for title, page in entries:
        if title in opened and opened[title] != page:
            problems.append(
                f"the bookmark {title!r} points to page {page + 1}, the title opens page {opened[title] + 1}"
            )
    return problems


def check_tagged(pdf: Path) -> list[str]:
    """``pdfinfo`` says the PDF is tagged."""
    info = subprocess.run(["pdfinfo", str(pdf)], check=True, capture_output=True, text=True).stdout
    return [] if re.search(r"^Tagged:\s+yes$", info, flags=re.M) else ["pdfinfo does not say 'Tagged: yes'"]


def internal_links(reader: PdfReader) -> list[tuple[int, str]]:
    """Every link annotation to a named destination: (0-based page of the link, name)."""
    links = []
    for number, page in enumerate(reader.pages):
        for annotation in page.get("/Annots") or []:
            annotation = annotation.get_object()
            if annotation.get("/Subtype") != "/Link":
                continue
            dest = annotation.get("/Dest")
            if dest is None and annotation.get("/A", {}).get("/S") == "/GoTo":
                dest = annotation["/A"].get("/D")
            if isinstance(dest, str):
                links.append((number, dest))
    return links


def check_links(reader: PdfReader, anchor: str, page: int) -> list[str]:
    """Every internal link resolves; at least one links to ``anchor``, which lies on ``page``."""
    destinations = reader.named_destinations
    links = internal_links(reader)
    problems = [
        f"page {n + 1}: link to {name}, which is not a destination" for n, name in links if name not in destinations
    ]
    if not any(name == anchor for _, name in links):
        problems.append(f"no link to {anchor}")
    elif anchor in destinations and reader.get_destination_page_number(destinations[anchor]) != page:
        found = reader.get_destination_page_number(destinations[anchor])
        problems.append(f"{anchor} lies on page {found + 1}, not on page {page + 1}")
    return problems
