"""make epub's builder (tools/epub.py) and checks (tools/epub_checks.py) on a small fake site.

Each check of the book's EPUB (tests/epub) is shown here to fail on a broken fixture.
EPUBCheck runs where it is installed (Debian's ``epubcheck``); without it those tests are
skipped with a message, or fail where ``POSENC_REQUIRE_EPUBCHECK=1`` (``.ci/run`` sets it).
"""

from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path

import pytest
from PIL import Image

from tools import epub_checks
from tools.epub import build_epub, reader_pages

ROOT = Path(__file__).resolve().parents[2]
TITLE = "A Small Book & Its Formulas"
AUTHOR = "The fixture's authors"

CONFIG = f'title: "{TITLE}"\nauthor: "{AUTHOR}"\n'
TOC = """\
format: jb-book
root: book/intro
parts:
  - caption: First part
    numbered: 2
    chapters:
      - file: notebooks/01_first
      - file: notebooks/02_second
  - caption: Back matter
    chapters:
      - file: book/instructor_guide
      - file: book/api/index
        sections:
          - file: book/api/core
"""
# What MathJax writes on the site (tools/site/math.py): CHTML beside a hidden MathML copy.
FORMULA = (
    '<span class="math notranslate nohighlight"><mjx-container class="MathJax" jax="CHTML">'
    '<mjx-math aria-hidden="true"><mjx-mi><mjx-c class="mjx-c1D465"></mjx-c></mjx-mi></mjx-math>'
    '<mjx-assistive-mml unselectable="on" display="inline"><math xmlns="http://www.w3.org/1998/Math/MathML">'
    '<mi data-mjx-texclass="ORD">x</mi><mo>=</mo><mn>1</mn></math></mjx-assistive-mml></mjx-container></span>'
)
HIDDEN_CELL = (
    '<details class="admonition hide above-input"><summary><p class="collapsed admonition-title">'
    'Show code cell source</p><p class="expanded admonition-title">Hide code cell source</p></summary>'
    "<pre>print(1)</pre></details>"
)
PLAYER = '<section class="posenc-player" aria-label="Explorer"><input type="range"/><script>1</script></section>'


def page(title: str, body: str, anchor: str = "top") -> str:
    """A page as the site build writes it: the theme's chrome around the article."""
    return (
        "<!DOCTYPE html><html><head><title>x</title><script>var theme = 1;</script></head><body>"
        '<nav class="bd-sidebar"><a href="index.html">Home</a></nav>'
        f'<article class="bd-article"><section id="{anchor}"><h1>{title}'
        f'<a class="headerlink" href="#{anchor}">#</a></h1>{body}'
        '<section id="a-section"><h2><span class="section-number">1.1. </span>A section</h2><p>Text.</p></section>'
        "</section></article></body></html>"
    )


def make_site(folder: Path, *, chapter_one: str | None = None, alt: str = "A red square.") -> Path:
    """A built site with three reader pages, the left-out pages and one WebP figure."""
    (folder / "notebooks").mkdir(parents=True)
    (folder / "book" / "api").mkdir(parents=True)
    (folder / "_images").mkdir()
    Image.new("RGB", (4, 3), (255, 0, 0)).save(folder / "_images" / "square.webp", lossless=True)
    (folder / "index.html").write_text('<meta http-equiv="refresh" content="0; url=book/intro.html">')
    intro = '<p>See <a class="reference internal" href="../notebooks/02_second.html#a-section">Section 2.1</a>.</p>'
    (folder / "book" / "intro.html").write_text(page("Intro", intro))
    one = chapter_one or (
        f"<p>Inline {FORMULA}, and the guide: <a href='instructor_guide.html'>guide</a>.</p>{HIDDEN_CELL}{PLAYER}"
        f'<figure id="fig-square"><a class="figure-enlarge" href="../_images/square.webp">'
        f'<img alt="{alt}" src="../_images/square.webp" width="4" height="3" loading="lazy"/></a>'
        "<figcaption><p>Figure 1.1: a square.</p></figcaption></figure>"
    )
    (folder / "notebooks" / "01_first.html").write_text(page('<span class="section-number">1. </span>First', one))
    (folder / "notebooks" / "02_second.html").write_text(page('<span class="section-number">2. </span>Second', ""))
    (folder / "book" / "instructor_guide.html").write_text(page("Instructor guide", "<p>Secret.</p>"))
    for name in ("index", "core"):
        (folder / "book" / "api" / f"{name}.html").write_text(page("API", "<p>API.</p>"))
    return folder


def build(tmp_path: Path, name: str = "book", toc: str = TOC, **site: str) -> Path:
    """The fixture site built into an EPUB; the config and toc written beside it."""
    folder = tmp_path / name
    make_site(folder / "html", **site)
    (folder / "_config.yml").write_text(CONFIG)
    (folder / "_toc.yml").write_text(toc)
    return build_epub(folder / "html", folder / "out.epub", config=folder / "_config.yml", toc=folder / "_toc.yml")


def replace_member(path: Path, member: str, edit: object, out: Path) -> Path:
    """A copy of the EPUB with one member's text changed by ``edit`` (a function of str)."""
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == member:
                data = edit(data.decode("utf-8")).encode("utf-8")  # type: ignore[operator]
            target.writestr(info, data)
    return out


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("epub"))


def require_epubcheck() -> None:
    if epub_checks.epubcheck_command() is None:
        message = "epubcheck (and java) not installed: apt-get install epubcheck"
        if os.environ.get("POSENC_REQUIRE_EPUBCHECK") == "1":
            pytest.fail(f"POSENC_REQUIRE_EPUBCHECK=1 but {message}")
        pytest.skip(message)


def test_reader_pages_leave_out_the_api_and_the_instructor_guide() -> None:
    import yaml

    pages = reader_pages(yaml.safe_load(TOC))
    assert pages == [("book/intro", ""), ("notebooks/01_first", "First part"), ("notebooks/02_second", "First part")]
    with pytest.raises(ValueError, match="root"):
        reader_pages({"parts": []})


def test_bad_arguments_are_refused(tmp_path: Path, book: Path) -> None:
    with pytest.raises(ValueError, match="run make book first"):
        build_epub(tmp_path, tmp_path / "x.epub")
    with pytest.raises(ValueError, match=r"\.epub file"):
        build_epub(book.parent / "html", tmp_path / "x.zip")
    with pytest.raises(ValueError, match="EPUB file"):
        epub_checks.metadata(tmp_path / "missing.epub")


@pytest.mark.slow  # EPUBCheck starts a JVM (10 s idle); that the book's EPUB passes is tests/epub's
def test_epubcheck_fails_on_a_broken_page(tmp_path: Path, book: Path) -> None:
    require_epubcheck()
    # The site's hidden-cell summary as it is (paragraphs in a <summary>) is not valid XHTML.
    broken = replace_member(
        book, "OEBPS/01_first.xhtml", lambda t: t.replace("<summary>", "<summary><p>Show</p>"), tmp_path / "b.epub"
    )
    errors = epub_checks.epubcheck(broken)
    assert errors and all("01_first.xhtml" in e for e in errors)


def test_formulas_are_mathml_and_raw_tex_is_found(tmp_path: Path, book: Path) -> None:
    assert epub_checks.raw_tex(book) == []
    text = dict(epub_checks.content_documents(book))["01_first.xhtml"]
    assert re.search(r'<math alttext="x = 1" xmlns="http://www.w3.org/1998/Math/MathML">', text)
    assert "<mi>x</mi><mo>=</mo><mn>1</mn>" in text  # MathJax's data attributes dropped
    assert "mjx-" not in text
    untypeset = '<p>Inline <span class="math notranslate nohighlight">\\(x = 1\\)</span> and $$y$$.</p>'
    broken = build(tmp_path, "raw", chapter_one=untypeset)
    assert [(page, delimiter) for page, delimiter, _ in epub_checks.raw_tex(broken)] == [
        ("01_first.xhtml", "\\("),
        ("01_first.xhtml", "\\)"),
        ("01_first.xhtml", "$$"),
        ("01_first.xhtml", "$$"),
    ]


def test_title_author_version_and_licence(tmp_path: Path, book: Path) -> None:
    init = (ROOT / "posenc_helpers" / "__init__.py").read_text()
    version = re.search(r'^__version__ = "([^"]+)"', init, re.M)
    assert version is not None
    meta = epub_checks.metadata(book)
    assert meta["title"] == [TITLE]
    assert meta["creator"] == [AUTHOR]
    assert meta["language"] == ["en"]
    assert meta["version"] == [version.group(1)]
    assert "CC BY 4.0" in meta["rights"][0] and "MIT" in meta["rights"][0]
    untitled = replace_member(
        book, "OEBPS/content.opf", lambda t: re.sub(r"<dc:title>.*?</dc:title>", "", t), tmp_path / "u.epub"
    )
    assert epub_checks.metadata(untitled)["title"] == []


def test_pages_in_book_order_with_their_numbers(tmp_path: Path, book: Path) -> None:
    assert epub_checks.spine_titles(book) == [TITLE, "Contents", "Intro", "1. First", "2. Second"]
    swapped = TOC.replace("01_first", "XX").replace("02_second", "01_first").replace("XX", "02_second")
    assert epub_checks.spine_titles(build(tmp_path, "swapped", toc=swapped))[3:] == ["2. Second", "1. First"]
    nav = dict(epub_checks.content_documents(book))["nav.xhtml"]
    assert '<a href="02_second.xhtml#a-section">1.1. A section</a>' in nav
    assert "instructor" not in nav.lower() and "API" not in nav


def test_links_figures_and_what_needs_scripts(book: Path) -> None:
    documents = dict(epub_checks.content_documents(book))
    assert '<a class="reference internal" href="02_second.xhtml#a-section">' in documents["intro.xhtml"]
    one = documents["01_first.xhtml"]
    assert "instructor_guide" not in one and "the guide: guide." in one  # the link is unwrapped
    assert "<summary>Code cell source</summary>" in one
    for gone in ("posenc-player", "<script", "<input", "headerlink", "loading="):
        assert gone not in one
    assert '<img alt="A red square." height="3" src="images/square.png" width="4"/>' in one
    with zipfile.ZipFile(book) as epub:
        assert epub.namelist()[0] == "mimetype"
        assert epub.getinfo("mimetype").compress_type == zipfile.ZIP_STORED
        assert epub.read("OEBPS/images/square.png")[:8] == b"\x89PNG\r\n\x1a\n"
        opf = epub.read("OEBPS/content.opf").decode()
    assert 'href="01_first.xhtml" media-type="application/xhtml+xml" properties="mathml"' in opf
    assert 'href="02_second.xhtml" media-type="application/xhtml+xml"/>' in opf


def test_images_without_alt_are_found(tmp_path: Path, book: Path) -> None:
    assert epub_checks.images_without_alt(book) == []
    blank = build(tmp_path, "blank", alt=" ")
    assert epub_checks.images_without_alt(blank) == [("01_first.xhtml", "images/square.png")]
