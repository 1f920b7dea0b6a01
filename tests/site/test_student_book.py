"""The student edition of the website (``make student-book``) shows no solution.

Skipped when the student edition has not been built, unless
``POSENC_REQUIRE_STUDENT_BOOK=1`` (``make test`` builds it and sets it).
"""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path

import pytest
from _solutions import exercise_labels, solution_lines

from tools.chapters import chapter_notebooks

ROOT = Path(__file__).resolve().parents[2]
STUDENT_SITE = ROOT / "_build" / "student-book" / "_build" / "html"
FULL_SITE = ROOT / "_build" / "html"
CHAPTERS = chapter_notebooks()

if not (STUDENT_SITE / "index.html").exists():
    if os.environ.get("POSENC_REQUIRE_STUDENT_BOOK") == "1":
        raise RuntimeError(f"no student edition at {STUDENT_SITE}: run `make student-book`")
    pytest.skip("student edition not built (make student-book)", allow_module_level=True)


def page_text(path: Path) -> str:
    """The visible text of a page: tags removed, entities decoded, code tokens joined."""
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", text, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def code_solution_lines(nb: dict) -> set[str]:
    """Solution lines from code cells: they reach the page verbatim (prose is re-typeset)."""
    inside_code = set()
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            inside_code |= {line.strip() for line in "".join(cell["source"]).splitlines()}
    return {line for line in solution_lines(nb, min_length=12) if line in inside_code}


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_solution_reaches_the_student_site(path):
    page = STUDENT_SITE / "notebooks" / f"{path.stem}.html"
    if not page.exists():
        pytest.skip(f"{path.stem} is not in the table of contents")
    nb = json.loads(path.read_text())
    text = page_text(page)
    lines = code_solution_lines(nb)
    assert lines, "expected solution code to look for"
    leaked = sorted(line for line in lines if line in text)
    assert not leaked, leaked
    raw = page.read_text(encoding="utf-8")
    assert 'class="solution' not in raw and "Solution to" not in text
    for label in exercise_labels(nb):  # the exercises themselves are all there
        assert f'id="{label}"' in raw, label

    full_page = FULL_SITE / "notebooks" / f"{path.stem}.html"
    if full_page.exists():  # the same check finds the solutions on the full site
        assert any(line in page_text(full_page) for line in lines)


def test_no_sources_or_notebooks_are_downloadable():
    assert not (STUDENT_SITE / "_sources").exists()
    assert not list(STUDENT_SITE.rglob("*.ipynb"))
    for page in (STUDENT_SITE / "notebooks").glob("*.html"):
        raw = page.read_text(encoding="utf-8")
        assert "_sources/" not in raw and "dropdown-download-buttons" not in raw, page.name
        # launch buttons (with repository.url set) open the student branch, never the full notebooks
        for link in re.findall(r'href="(https://[^"]*(?:mybinder|colab|hub|kaggle)[^"]*)"', raw):
            assert "student" in link, (page.name, link)


def test_the_student_site_does_not_publish_the_instructor_guide():
    """How the course grades, and what the grading does and does not resist, is for instructors."""
    full = page_text(FULL_SITE / "book" / "instructor_guide.html") if FULL_SITE.exists() else ""
    text = " ".join(page_text(STUDENT_SITE / "book" / "instructor_guide.html").split())
    full = " ".join(full.split())
    assert "not part of the student edition" in text
    for words in ("sandbox", "Tampering suspected", "What the grading resists", "nbgrader autograde"):
        assert words not in text, words
        assert not full or words in full, words  # the full site keeps them
