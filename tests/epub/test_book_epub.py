"""The book's EPUB (make epub, _build/epub): valid, typeset, titled, complete and in order.

Run by make test's book lane after the site and the EPUB are built (make epub-only); the
checks themselves are shown to fail on broken fixtures in tests/tooling/test_epub.py.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import yaml

from tools import epub_checks

ROOT = Path(__file__).resolve().parents[2]
BUILT = sorted((ROOT / "_build" / "epub").glob("posenc-book-*.epub"))


@pytest.fixture(scope="module")
def book() -> Path:
    if len(BUILT) != 1:
        pytest.fail(f"expected one EPUB in _build/epub, found {[p.name for p in BUILT]}: run make epub first")
    return BUILT[0]


def chapter_titles() -> list[str]:
    """Each chapter's number and title as its notebook states them ('7. Rotary ...')."""
    titles = []
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        first = "".join(next(c for c in cells if c["cell_type"] == "markdown")["source"])
        heading = re.search(r"^# (.+)$", first, re.M)
        assert heading is not None, path
        titles.append(f"{int(path.name[:2])}. {heading.group(1).strip()}")
    return titles


def test_epubcheck_passes(book: Path) -> None:
    if epub_checks.epubcheck_command() is None:
        message = "epubcheck (and java) not installed: apt-get install epubcheck"
        if os.environ.get("POSENC_REQUIRE_EPUBCHECK") == "1":
            pytest.fail(f"POSENC_REQUIRE_EPUBCHECK=1 but {message}")
        pytest.skip(message)
    assert epub_checks.epubcheck(book) == []


def test_no_raw_tex(book: Path) -> None:
    assert epub_checks.raw_tex(book) == []


def test_formulas_are_mathml(book: Path) -> None:
    documents = dict(epub_checks.content_documents(book))
    assert documents["07_rope.xhtml"].count('xmlns="http://www.w3.org/1998/Math/MathML"') > 100


def test_title_author_version_licence(book: Path) -> None:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    meta = epub_checks.metadata(book)
    assert meta["title"] == [config["title"]] and "not set" not in config["title"].lower()
    assert meta["creator"] == [config["author"]]
    assert meta["version"] == [book.stem.removeprefix("posenc-book-")]
    assert "CC BY 4.0" in meta["rights"][0]


def test_every_chapter_in_order_with_its_number(book: Path) -> None:
    # Sphinx's smart quotes turn the notebooks' ' into ’.
    titles = [t.replace("\u2019", "'") for t in epub_checks.spine_titles(book)]
    expected = chapter_titles()
    assert len(expected) == 14
    assert [t for t in titles if re.match(r"\d+\. ", t)] == expected
    assert titles[:5] == [titles[0], "Contents", titles[0], "How to use this book", "Notation"]
    assert titles[-2:] == ["Glossary", "References"]
    assert not any("instructor" in t.lower() or "api" in t.lower().split() for t in titles)


def test_every_image_has_alt_text(book: Path) -> None:
    assert epub_checks.images_without_alt(book) == []
