"""The website's extension (``tools/site``) in a real Jupyter Book build of a small book.

``tests/books/numbering/`` (as sphinx-exercise's ``tests/books/``) is a book of an
unnumbered root page and two chapters, ``notebooks/01_basics.md`` (MyST Markdown) and
``notebooks/02_more.ipynb`` (a notebook with a stored figure, nothing executed), whose
``_config.yml`` loads ``tools.site`` as the real one does. It is built twice with
jupyter-book, as the book and as its student edition (the switches ``make student-book``
sets, read from :func:`tools.course.student.student_config`), and the HTML is checked
against numbers worked out by hand from the pages:

* chapter 1: title 1, sections 1.1 and 1.2 (the ``###`` below 1.1 unnumbered), the
  closing "Exercises" and "Key takeaways" unnumbered; Exercise 1.1, 1.2; equations (1), (2);
* chapter 2: title 2, section 2.1, closing "Exercises" and "Suggested projects"
  unnumbered; Figure 2.1; Exercise 2.1;
* every ``{numref}`` and ``{eq}``, within and across pages, reads the target's number;
* the formulas are typeset when the book is built (CommonHTML plus MathML, no math script);
* the student edition shows every exercise and no solution (plain or gated, with its code).

Built without ``tools.site`` (checked by hand), the closing sections are numbered (1.3, 1.4,
2.2, 2.3), no formula is typeset and the student edition does not build
(executablebooks/sphinx-exercise#89): each check here fails.
"""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tools.course.student import student_config

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "tests" / "books" / "numbering"
JUPYTER_BOOK = Path(sys.executable).with_name("jupyter-book")
SOLUTIONS = ("SOLUTION-ADD", "SOLUTION-SQUARE", "SOLUTION-SLOPE", "slope_of_the_line")

pytestmark = pytest.mark.slow  # two builds, about 6 s each on the two-core machine


def _student_switches() -> dict[str, object]:
    """What ``make student-book`` changes in the book's ``sphinx.config``."""
    real = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["sphinx"]["config"]
    student = student_config()["sphinx"]["config"]
    return {key: value for key, value in student.items() if real.get(key) != value}


def _student_book_config(out: Path) -> Path:
    """The test book's configuration with the student edition's switches, as tools/course/student.py writes it."""
    config = yaml.safe_load((BOOK / "_config.yml").read_text(encoding="utf-8"))
    config["title"] = f"{config['title']} (student edition)"
    config["sphinx"]["config"].update(_student_switches())
    config["sphinx"]["local_extensions"] = {
        name: str((BOOK / folder).resolve()) for name, folder in config["sphinx"]["local_extensions"].items()
    }
    path = out / "_config.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def sites(tmp_path_factory) -> dict[str, Path]:
    """Both editions built at once (two processes), warnings as errors as ``make book`` builds."""
    out = {edition: tmp_path_factory.mktemp(edition) for edition in ("book", "student")}
    commands = {edition: [str(JUPYTER_BOOK), "build", str(BOOK), "-W", "-n", "--keep-going"] for edition in out}
    commands["student"] += ["--config", str(_student_book_config(out["student"]))]
    running = {
        edition: subprocess.Popen(
            [*command, "--path-output", str(out[edition])], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        for edition, command in commands.items()
    }
    for edition, process in running.items():
        log, _ = process.communicate(timeout=300)
        assert process.returncode == 0, f"{edition}: " + log.decode(errors="replace")[-3000:]
    assert not list(BOOK.rglob("_build")), "the build wrote into the book's folder"
    return {edition: folder / "_build" / "html" for edition, folder in out.items()}


def _article_of(page: str) -> str:
    """The page's article: the theme's sidebars, which repeat the numbers, left out."""
    return page[page.index('<article class="bd-article"') : page.index("</article>")]


def _text(fragment: str) -> str:
    fragment = re.sub(
        r'<a class="headerlink".*?</a>|<mjx-assistive-mml.*?</mjx-assistive-mml>', "", fragment, flags=re.S
    )
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def numbers(site: Path, page: str) -> dict[str, list]:
    """What a page shows: headings (level, number, title), captions, equation numbers, and
    (href, text) of its ``{numref}`` and ``{eq}`` links."""
    article = _article_of((site / page).read_text(encoding="utf-8"))
    headings = []
    for level, inner in re.findall(r"<h([1-6])>(.*?)</h\1>", article, re.S):
        number = re.match(r'<span class="section-number">([\d.]+?)\.? </span>', inner)
        headings.append((int(level), number[1] if number else None, _text(inner[number.end() if number else 0 :])))
    links = re.findall(r'<a class="reference internal" href="([^"]*)"[^>]*>(.*?)</a>', article, re.S)
    return {
        "headings": headings,
        "captions": re.findall(r'<span class="caption-number">(\w+ [\d.]+) </span>', article),
        "equations": re.findall(r'<span class="eqno">\((\d+)\)', article),
        "references": [(href, _text(inner)) for href, inner in links if "std-numref" in inner or "#equation-" in href],
    }


EXPECTED = {
    "intro.html": {
        "headings": [(1, None, "Numbering test book"), (2, None, "About this book")],
        "captions": [],
        "equations": [],
        "references": [
            ("notebooks/01_basics.html#basics-first", "Section 1.1"),
            ("notebooks/02_more.html#fig-more-line", "Figure 2.1"),
        ],
    },
    "notebooks/01_basics.html": {
        "headings": [
            (1, "1", "Basics"),
            (2, "1.1", "First section"),
            (3, None, "A detail"),
            (2, "1.2", "Second section"),
            (2, None, "Exercises"),
            (2, None, "Key takeaways"),
        ],
        "captions": ["Exercise 1.1", "Exercise 1.2"],
        "equations": ["1", "2"],
        "references": [("#equation-eq-square", "(2)"), ("#equation-eq-sum", "(1)"), ("#basics-first", "Section 1.1")],
    },
    "notebooks/02_more.html": {
        "headings": [(1, "2", "More"), (2, "2.1", "A plot"), (2, None, "Exercises"), (2, None, "Suggested projects")],
        "captions": ["Figure 2.1", "Exercise 2.1"],
        "equations": [],
        "references": [
            ("01_basics.html#basics-first", "Section 1.1"),
            ("01_basics.html#equation-eq-sum", "(1)"),
            ("#fig-more-line", "Figure 2.1"),
            ("#fig-more-line", "Figure 2.1"),  # in the exercise
        ],
    },
}


@pytest.mark.parametrize("edition", ["book", "student"])
@pytest.mark.parametrize("page", sorted(EXPECTED))
def test_the_pages_show_the_numbers_worked_out_by_hand(sites, edition, page):
    assert numbers(sites[edition], page) == EXPECTED[page]


def test_the_formulas_are_typeset_when_the_book_is_built(sites):
    for edition, site in sites.items():
        basics = (site / "notebooks" / "01_basics.html").read_text(encoding="utf-8")
        more = (site / "notebooks" / "02_more.html").read_text(encoding="utf-8")
        # s = a + b, q = x^2, then x, 2, 3 and 4 inline; the caption's (0, 0) and (1, 1)
        assert (basics.count("<mjx-container"), more.count("<mjx-container")) == (6, 2), edition
        mathml = re.findall(r'<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">(.*?)</math>', basics)
        assert mathml == [
            "<mi>s</mi><mo>=</mo><mi>a</mi><mo>+</mo><mi>b</mi>",
            "<mi>q</mi><mo>=</mo><msup><mi>x</mi><mn>2</mn></msup>",
        ]
        for page in (basics, more):
            assert not re.search(r"<script[^>]*(?:mathjax|tex-|mml-)[^>]*>", page, re.I), edition
            assert not re.search(r"\$|\\\(|\\\[|\\begin", _text(_article_of(page))), edition


def test_the_student_edition_shows_every_exercise_and_no_solution(sites):
    assert _student_switches() == {"hide_solutions": True, "posenc_student_edition": True}
    for page, labels in {"01_basics": ["ex-basics-add", "ex-basics-square"], "02_more": ["ex-more-slope"]}.items():
        book = (sites["book"] / "notebooks" / f"{page}.html").read_text(encoding="utf-8")
        student = (sites["student"] / "notebooks" / f"{page}.html").read_text(encoding="utf-8")
        for label in labels:
            assert f'id="{label}"' in book and f'id="{label}"' in student
        shown = [word for word in SOLUTIONS if word in book]
        assert shown == (["SOLUTION-ADD", "SOLUTION-SQUARE"] if page == "01_basics" else list(SOLUTIONS[2:])), page
        assert not [word for word in SOLUTIONS if word in student], page
        assert "Solution to" in _text(book) and "Solution to" not in _text(student)
        assert 'class="solution' in book and 'class="solution' not in student
        assert "dropdown-download-buttons" in book and "dropdown-download-buttons" not in student
        assert "(student edition)" in student[: student.index("</title>")]
    assert (sites["book"] / "_sources").is_dir() and not (sites["student"] / "_sources").exists()
