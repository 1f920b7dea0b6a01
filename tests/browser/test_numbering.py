"""The website shows the numbers the chapters used to type by hand.

Until issue 29, every chapter typed its numbers: ``# 4. Title``, ``## 4.1 Title`` and
``**Figure 4.1.**``. Sphinx now makes them (``_toc.yml``, ``tools/site/numbering.py``,
``numfig``). ``typed_numbers.json`` holds the typed numbers, read from the last commit
that had them (00f978b); these tests read the built site's HTML (no browser needed) and
check that every chapter, section and figure still shows the same number, in the same
order, on the same heading or caption.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

TYPED = json.loads((Path(__file__).with_name("typed_numbers.json")).read_text())

_TAG = re.compile(r"<[^>]+>")
_MATH = re.compile(r"<mjx-container.*?</mjx-container>|<span class=\"math[^\"]*\">.*?</span>", re.S)
_NUMBERED_HEADING = re.compile(
    r"<h(?P<level>[12])><span class=\"section-number\">(?P<number>[\d.]+?)\.? </span>(?P<title>.*?)</h(?P=level)>",
    re.S,
)
_CAPTION = re.compile(
    r"<span class=\"caption-number\">Figure (?P<number>[\d.]+) </span><span class=\"caption-text\">(?P<text>.*?)</p>",
    re.S,
)


def _words(fragment: str, count: int) -> list[str]:
    """The first ``count`` words of an HTML fragment or a MyST string, math and markup left out."""
    text = html.unescape(_TAG.sub(" ", _MATH.sub(" ", fragment)))
    text = re.sub(r"\$[^$]*\$|\{\w+\}`[^`]*`", " ", text)
    return re.findall(r"[A-Za-z]+", text)[:count]


@pytest.fixture(params=sorted(TYPED), ids=str)
def chapter(request, site_dir: Path):
    stem = request.param
    page = (site_dir / "notebooks" / f"{stem}.html").read_text(encoding="utf-8")
    return TYPED[stem], page


def test_chapter_and_section_numbers(chapter):
    typed, page = chapter
    shown = [(m["level"], m["number"], _words(m["title"], 3)) for m in _NUMBERED_HEADING.finditer(page)]
    number, title = typed["title"]
    expected = [("1", number, _words(title, 3))]
    expected += [("2", section, _words(heading, 3)) for section, heading in typed["sections"]]
    assert shown == expected


def test_figure_numbers(chapter):
    typed, page = chapter
    shown = [(m["number"], _words(m["text"], 4)) for m in _CAPTION.finditer(page)]
    assert shown == [(number, _words(caption, 4)) for number, caption in typed["figures"]]


def test_closing_sections_unnumbered(chapter):
    _, page = chapter
    for title in ("Exercises", "Key takeaways"):
        assert re.search(rf"<h2>{title}<a class=\"headerlink\"", page), f"{title} is shown without a number"
