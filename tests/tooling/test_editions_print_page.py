"""The PDF's print page (tools/editions/print_page.py) on small hand-written pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from tools.editions.print_page import BookInfo, article_body, assemble, page_prefix, reader_pages

TOC = {
    "root": "book/intro",
    "parts": [
        {"chapters": [{"file": "book/how_to_use"}]},
        {"chapters": [{"file": "notebooks/01_a"}, {"file": "notebooks/02_b"}]},
        {
            "chapters": [
                {"file": "book/instructor_guide"},
                {"file": "book/api/index", "sections": [{"file": "book/api/core"}]},
                {"file": "book/references"},
            ]
        },
    ],
}

PAGE = """<html><head><link rel="stylesheet" href="../_static/site.css" media="print">
<script src="../_static/x.js"></script></head><body><nav><a href="02_b.html">nav</a></nav>
<article class="bd-article"><section id="a-title"><h1>1. A<a class="headerlink" href="#a-title">#</a></h1>
<p>See <a href="02_b.html#part">section 2.1</a>, <a href="#a-title">above</a>, <a href="../book/api/core.html#f">f</a>,
<a href="../book/references.html#id3">[Su 2024]</a> and <a href="https://arxiv.org/abs/2104.09864">the paper</a>.</p>
<label for="slider">s</label><input id="slider">
<figure><img src="../_images/fig.webp" loading="lazy"></figure>
<section class="posenc-player"><img src="../_static/explorers/frame.webp"></section>
<details class="hide above-input"><summary>Show code</summary><pre>hidden()</pre></details>
<script>alert(1)</script></section></article></body></html>"""


def test_reader_pages_keep_the_order_and_leave_out_the_api_and_the_instructor_guide():
    assert reader_pages(TOC) == [
        "book/intro",
        "book/how_to_use",
        "notebooks/01_a",
        "notebooks/02_b",
        "book/references",
    ]


def test_reader_pages_refuses_a_toc_without_root():
    with pytest.raises(ValueError, match="toc"):
        reader_pages({"parts": []})


def test_page_prefix():
    assert page_prefix("notebooks/07_rope") == "notebooks-07_rope"
    for bad in ("", "/abs", "../up"):
        with pytest.raises(ValueError, match="docname"):
            page_prefix(bad)


def test_article_body_prefixes_ids_and_rewrites_links():
    included = {"notebooks/01_a", "notebooks/02_b", "book/references"}
    body = BeautifulSoup(article_body(PAGE, "notebooks/01_a", included, "../html"), "html.parser")
    links = {a.get_text(): a["href"] for a in body.find_all("a")}
    assert links == {
        "section 2.1": "#notebooks-02_b--part",
        "above": "#notebooks-01_a--a-title",
        "[Su 2024]": "#book-references--id3",
        "the paper": "https://arxiv.org/abs/2104.09864",
    }
    # The API reference is not in the document: its link keeps its text, unlinked.
    assert "f" in body.get_text() and not body.find("a", string="f")
    assert body.find(id="notebooks-01_a--a-title").name == "section"
    assert body.find("label")["for"] == "notebooks-01_a--slider"
    assert body.find(id="notebooks-01_a--slider") is not None
    assert body.div["id"] == "notebooks-01_a"
    image = body.find("img")
    assert image["src"] == "../html/_images/fig.webp" and image["loading"] == "eager"
    # Screen-only parts are gone: scripts, explorer controls, hidden code, permalinks, the nav.
    assert not body.find_all(["script", "details", "nav"]) and "hidden()" not in body.get_text()
    assert not body.select(".posenc-player, a.headerlink")


def test_article_body_refuses_a_page_without_article():
    with pytest.raises(ValueError, match="page_html"):
        article_body("<html><body><p>no article</p></body></html>", "book/x", set(), "..")
    with pytest.raises(TypeError, match="page_html"):
        article_body(b"<html></html>", "book/x", set(), "..")  # type: ignore[arg-type]


def test_assemble_writes_one_page_with_the_title_page_and_the_site_stylesheet(tmp_path: Path):
    site = tmp_path / "html"
    (site / "notebooks").mkdir(parents=True)
    (site / "notebooks" / "01_a.html").write_text(PAGE, encoding="utf-8")
    info = BookInfo(title="T & co", version="9.8.7", authors="Us", licence="CC BY 4.0")
    out = assemble(site, ["notebooks/01_a"], tmp_path / "pdf" / "print" / "book.html", info, progress=lambda _: None)
    soup = BeautifulSoup(out.read_text(encoding="utf-8"), "html.parser")
    assert soup.title.get_text() == "T & co, version 9.8.7"
    assert soup.select_one(".print-title").get_text() == "T & co"
    assert soup.select_one(".print-version").get_text() == "Version 9.8.7"
    sheet = soup.find("link", rel="stylesheet")
    assert sheet["href"] == "../../html/_static/site.css" and not sheet.get("media")
    assert [div["id"] for div in soup.select("div.print-page")] == ["notebooks-01_a"]
    with pytest.raises(ValueError, match="pages"):
        assemble(site, [], tmp_path / "x.html", info)
    with pytest.raises(ValueError, match="make book"):
        assemble(site, ["notebooks/02_b"], tmp_path / "x.html", info, progress=lambda _: None)


def test_a_chapter_keeps_only_the_references_it_cites(tmp_path: Path):
    site = tmp_path / "html"
    (site / "notebooks").mkdir(parents=True)
    (site / "book").mkdir()
    (site / "notebooks" / "01_a.html").write_text(PAGE, encoding="utf-8")
    entries = "".join(f'<div class="citation" id="id{n}">Entry {n}</div>' for n in (2, 3, 4))
    (site / "book" / "references.html").write_text(
        f'<html><head></head><body><article class="bd-article"><h1>References</h1>{entries}</article></body></html>',
        encoding="utf-8",
    )
    info = BookInfo(title="T", version="1", authors="Us", licence="L")
    out = assemble(
        site,
        ["notebooks/01_a", "book/references"],
        tmp_path / "chapter.html",
        info,
        with_title_page=False,
        cited_only="book/references",
        progress=lambda _: None,
    )
    soup = BeautifulSoup(out.read_text(encoding="utf-8"), "html.parser")
    # PAGE cites id3 alone.
    assert [div.get_text() for div in soup.select("div.citation")] == ["Entry 3"]
    with pytest.raises(ValueError, match="cited_only"):
        assemble(site, ["notebooks/01_a"], tmp_path / "x.html", info, cited_only="book/references")
