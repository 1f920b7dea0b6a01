"""The whole-book PDF (make pdf) against the site it was printed from.

The book's PDF must be there and newer than the site (``make test-pdf`` prints it first);
without it, or without poppler's pdftotext/pdfinfo or a Chromium, these tests are skipped,
and fail instead with POSENC_REQUIRE_PDF=1, as ``make test-pdf`` sets it. Expected values
(titles, numbers, the pages of the book) come from ``_toc.yml`` and the site's HTML.
The last test prints a deliberately broken print page and shows that every check fails on it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml
from pdf_checks import (
    caption_numbers,
    check_captions,
    check_forbidden,
    check_links,
    check_outline,
    check_tagged,
    internal_links,
    openings,
    page_title,
    pdf_pages,
)
from pypdf import PdfReader

from tools.editions.pdf import BOOK_STEM, book_info, chromium_executable, print_pdfs
from tools.editions.print_page import assemble
from tools.release import package_version

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"
PDF = ROOT / "_build" / "pdf" / f"{BOOK_STEM}-{package_version()}.pdf"
REQUIRE = os.environ.get("POSENC_REQUIRE_PDF", "") not in ("", "0")
# The chapters whose figure and exercise numbers are checked one by one.
CAPTION_CHAPTERS = ("04", "11")


def _missing() -> str | None:
    for tool in ("pdftotext", "pdfinfo"):
        if shutil.which(tool) is None:
            return f"{tool} not found: apt-get install poppler-utils"
    if not (SITE / "index.html").is_file():
        return "no built site: make book"
    if not PDF.is_file():
        return f"no {PDF.name}: make pdf-only"
    return None


if (why := _missing()) is not None:
    if REQUIRE:
        raise RuntimeError(why)
    pytest.skip(why, allow_module_level=True)


def _book_pages() -> list[str]:
    """The printed book's pages, read from _toc.yml here: all but the API reference and instructor guide."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]
    for part in toc["parts"]:
        for chapter in part["chapters"]:
            files += [chapter["file"]] + [s["file"] for s in chapter.get("sections", [])]
    return [f for f in files if not f.startswith("book/api") and f != "book/instructor_guide"]


PAGES = _book_pages()
CHAPTERS = [p for p in PAGES if p.startswith("notebooks/")]
TITLES = [page_title(SITE, page) for page in PAGES]


@pytest.fixture(scope="module")
def text() -> list[str]:
    newest = max((SITE / f"{page}.html").stat().st_mtime for page in PAGES)
    assert PDF.stat().st_mtime >= newest, f"{PDF.name} is older than the site: make pdf-only"
    return pdf_pages(PDF)


@pytest.fixture(scope="module")
def reader() -> PdfReader:
    return PdfReader(PDF)


def test_the_book_has_fourteen_chapters_numbered_as_their_files():
    """The expected list itself: chapters 01-14, and each site title carries its file's number."""
    assert [Path(c).name[:2] for c in CHAPTERS] == [f"{n:02d}" for n in range(1, 15)]
    assert [TITLES[PAGES.index(c)].split(".")[0] for c in CHAPTERS] == [str(n) for n in range(1, 15)]


def test_every_chapter_opens_a_page_with_its_own_number_and_title_in_order(text):
    opened, problems = openings(text, TITLES, start=1)
    assert not problems, problems
    assert text[0].startswith(book_info().title.split(",")[0]), "the first page is not the title page"
    assert f"Version {package_version()}" in text[0] and "CC BY 4.0" in text[0]


@pytest.mark.parametrize("chapter", CAPTION_CHAPTERS)
def test_a_chapters_figures_and_exercises_keep_the_sites_numbers(text, chapter):
    opened, _ = openings(text, TITLES, start=1)
    docname = next(c for c in CHAPTERS if Path(c).name.startswith(chapter))
    labels = caption_numbers(SITE, docname)
    assert any(label.startswith("Figure") for label in labels)
    following = TITLES[PAGES.index(docname) + 1]
    assert not check_captions(text, opened[TITLES[PAGES.index(docname)]], opened[following], labels)


def test_no_raw_tex_unresolved_reference_or_placeholder_title(text):
    assert not check_forbidden(text)
    # The formulas are in the text layer, typeset: chapter 07's relative score, q^T R(n - m) k.
    assert any("R(n−m)k" in page.replace(" ", "") for page in text)


def test_the_outline_has_every_page_and_chapter_at_its_opening(text, reader):
    opened, _ = openings(text, TITLES, start=1)
    assert not check_outline(reader, opened, TITLES)


def test_pdfinfo_says_tagged():
    assert not check_tagged(PDF)


def test_links_and_citations_jump_inside_the_document(text, reader):
    opened, _ = openings(text, TITLES, start=1)
    chapter = CHAPTERS[4]  # chapter 05, which later chapters name
    assert not check_links(reader, f"/{chapter.replace('/', '-')}", opened[TITLES[PAGES.index(chapter)]])
    # A citation: a link into the bibliography, on a page after the References open.
    references = opened[TITLES[PAGES.index("book/references")]]
    targets = [name for _, name in internal_links(reader) if name.startswith("/book-references--")]
    assert targets, "no citation links to the bibliography"
    assert reader.get_destination_page_number(reader.named_destinations[targets[0]]) >= references


def test_every_check_fails_on_a_broken_print_page(tmp_path):
    """Chapters 01-02 and the references, printed with wrong numbers, raw TeX, a wrong link, untagged."""
    try:
        chromium_executable()
    except RuntimeError as error:
        if REQUIRE:
            raise
        pytest.skip(str(error))
    pages = [CHAPTERS[0], CHAPTERS[1], "book/references"]
    titles = [page_title(SITE, page) for page in pages]
    page = assemble(SITE, pages, tmp_path / "broken.html", book_info(), with_title_page=False, progress=lambda _: None)
    html = page.read_text(encoding="utf-8")
    first_figure = caption_numbers(SITE, CHAPTERS[0])[0]  # Figure 1.1
    chapter_two = f"#{CHAPTERS[1].replace('/', '-')}"
    for good, bad in [
        ('<span class="section-number">2. </span>', '<span class="section-number">3. </span>'),
        (f'caption-number">{first_figure} ', f'caption-number">{first_figure}7 '),
        (f'href="{chapter_two}"', f'href="#{CHAPTERS[0].replace("/", "-")}"'),
        ("</main>", "<p>\\(x^2\\) and $$y$$ in ?? </p></main>"),
    ]:
        assert good in html, f"the fixture expected {good!r} in the print page"
        html = html.replace(good, bad)
    page.write_text(html, encoding="utf-8")
    pdf = tmp_path / "broken.pdf"
    print_pdfs([(page, pdf)], progress=lambda _: None, tagged=False, outline=False)
    text, reader = pdf_pages(pdf), PdfReader(pdf)
    opened, problems = openings(text, titles)
    assert problems == [f"no page after page {opened[titles[0]] + 2} opens with {titles[1]!r}"]
    figures = caption_numbers(SITE, CHAPTERS[0])
    assert check_captions(text, 0, opened[titles[2]], figures)
    assert {problem.split(": ", 1)[1] for problem in check_forbidden(text)} == {"\\(", "\\)", "$$", "??"}
    assert check_outline(reader, opened, titles)
    assert check_tagged(pdf) == ["pdfinfo does not say 'Tagged: yes'"]
    assert check_links(reader, f"/{CHAPTERS[1].replace('/', '-')}", 0) == [
        f"no link to /{CHAPTERS[1].replace('/', '-')}"
    ]
