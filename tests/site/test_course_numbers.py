"""The course notebooks show the numbers the website shows.

Sphinx numbers the website (chapters, sections, figures, exercises, equations, and
``{numref}`` references); the course's plain notebooks get theirs from
``tools/course`` (``make course``). Here the two are compared chapter by chapter:
the built site's HTML against the course notebook made from the same book notebook.

The site is ``POSENC_SITE`` if set, else the student edition (``make student-book``,
which ``make test`` builds before it runs this folder), else ``_build/html``
(``make book``); without one the module is skipped, unless
``POSENC_REQUIRE_STUDENT_BOOK=1``. References inside solutions are compared only
against a site that shows solutions.
"""

from __future__ import annotations

import html
import json
import os
import re
from collections import Counter
from pathlib import Path

import pytest
from _solutions import split_lines

from tools.chapters import chapter_notebooks
from tools.course import course_notebook
from tools.course.markdown import numbered_reference
from tools.course.numbers import book_targets, numfig_formats

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = chapter_notebooks()
_CANDIDATES = [ROOT / "_build" / "student-book" / "_build" / "html", ROOT / "_build" / "html"]
SITE = Path(os.environ["POSENC_SITE"]) if os.environ.get("POSENC_SITE") else None
SITE = SITE or next((site for site in _CANDIDATES if (site / "index.html").exists()), None)

if SITE is None or not (SITE / "index.html").exists():
    if os.environ.get("POSENC_REQUIRE_STUDENT_BOOK") == "1":
        raise RuntimeError("no built site to compare the course with: run `make student-book`")
    pytest.skip("no built site (make student-book or make book; or set POSENC_SITE)", allow_module_level=True)

_NUMREF = re.compile(r"\{numref\}`(?:(?P<text>[^`<]*?)\s*<(?P<target>[^`>]+)>|(?P<bare>[^`]+))`")


def _text(fragment: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", fragment))).strip()


def site_numbers(page: str) -> dict[str, list[str]]:
    """The numbers a built chapter page shows, in page order."""
    article = page[page.find('<article class="bd-article"') :] if '<article class="bd-article"' in page else page
    headings = []
    for _level, inner in re.findall(r"<h([12])\b[^>]*>(.*?)</h\1>", article, re.S):
        number = re.match(r"(\d+(?:\.\d+)?)\.?\s", _text(inner) + " ")
        if number:
            headings.append(number.group(1))
    figures = re.findall(r'class="caption-number">\s*(?:Figure|Fig\.)\s*(\d+\.\d+)', article)
    figures += re.findall(r"<strong>Figure (\d+\.\d+)\.</strong>", article)  # captions typed by hand
    return {
        "headings": headings,
        "figures": figures,
        "exercises": re.findall(r'class="caption-number">\s*Exercise (\d+\.\d+)', article),
        "equations": re.findall(r'class="eqno">\((\d+)\)', article),
        "references": sorted(_text(m) for m in re.findall(r'class="std std-numref">(.*?)</span>', article, re.S)),
    }


def course_numbers(nb: dict) -> dict[str, list[str]]:
    """The same numbers, as the course notebook of the chapter shows them."""
    text = "\n".join("".join(cell["source"]) for cell in nb["cells"] if cell["cell_type"] == "markdown")
    return {
        "headings": re.findall(r"^#{1,2} (\d+(?:\.\d+)?)\.? ", text, re.M),
        "figures": re.findall(r"^\*\*Figure (\d+\.\d+)\.\*\*", text, re.M),
        "exercises": re.findall(r"^### Exercise (\d+\.\d+)$", text, re.M),
        "equations": re.findall(r"\\tag\{(\d+)\}", text),
    }


def references(book: dict, chapter: int, with_solutions: bool) -> list[str]:
    """Every ``{numref}`` of the book notebook as the course writes it (its prose, outside the
    solutions unless ``with_solutions``, and its figure captions)."""
    inside, outside = split_lines(book)
    lines = outside + (inside if with_solutions else [])
    captions = [
        cell["metadata"].get("mystnb", {}).get("figure", {}).get("caption", "")
        for cell in book["cells"]
        if cell["cell_type"] == "code" and (with_solutions or "solution" not in cell["metadata"].get("tags", []))
    ]
    from tools.course.numbers import page_numbers

    targets = {**book_targets(exclude_chapter=chapter), **page_numbers(book["cells"], chapter).targets}
    formats = numfig_formats()
    found = _NUMREF.finditer("\n".join(lines + captions))
    return sorted(numbered_reference(match, targets, formats) for match in found)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_the_course_shows_the_numbers_of_the_website(path):
    page = SITE / "notebooks" / f"{path.stem}.html"
    if not page.exists():
        pytest.skip(f"{path.stem} is not in the built site")
    raw = page.read_text(encoding="utf-8")
    book = json.loads(path.read_text(encoding="utf-8"))
    chapter = int(path.name[:2])
    shown = site_numbers(raw)
    course = course_numbers(course_notebook(book, chapter))
    for kind, numbers in course.items():
        assert numbers == shown[kind], f"{kind}: course {numbers}, website {shown[kind]}"
    assert course["headings"][0] == str(chapter) and course["exercises"]
    student_edition = "(student edition)" in raw[: raw.find("</title>")]
    assert Counter(references(book, chapter, not student_edition)) == Counter(shown["references"])
