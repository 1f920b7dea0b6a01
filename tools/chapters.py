"""What a chapter is, said once: its notebook's name, its number, where its pages are, and
the closing sections that carry no number.

A chapter is a notebook ``notebooks/NN_title.ipynb`` whose two digits ``NN`` are its
number (``_toc.yml`` lists them in that order; ``make chapter`` writes new ones). Its
page on the website is ``notebooks/NN_title.html``. It closes with the sections of
AUTHORING.md's anatomy that carry no number (:data:`UNNUMBERED_SECTIONS`). The site
(``tools/site``), the course (``tools/course``), the benchmarks and the tests read these
facts from here; the Makefile, which cannot import Python, spells the same pattern as
``notebooks/[0-9][0-9]_*.ipynb``.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = [
    "NOTEBOOKS",
    "CHAPTER_GLOB",
    "UNNUMBERED_SECTIONS",
    "chapter_notebooks",
    "chapter_number",
    "chapter_pages",
]

ROOT = Path(__file__).resolve().parents[1]
#: The folder of the chapter notebooks.
NOTEBOOKS = ROOT / "notebooks"
#: A chapter notebook's name, as a glob.
CHAPTER_GLOB = "[0-9][0-9]_*.ipynb"
#: The sections every chapter closes with (AUTHORING.md's anatomy), shown without a number.
UNNUMBERED_SECTIONS = frozenset({"Exercises", "Key takeaways", "Suggested projects"})

_CHAPTER_NAME = re.compile(r"(?:^|/)(?P<number>\d\d)_[^/]*$")


def chapter_notebooks(folder: Path | str = NOTEBOOKS) -> list[Path]:
    """The chapter notebooks in ``folder``, in chapter order.

    >>> [path.name for path in chapter_notebooks()][:2]
    ['01_why_order_matters.ipynb', '02_naive_positions.ipynb']
    """
    return sorted(Path(folder).glob(CHAPTER_GLOB))


def chapter_number(name: str | Path) -> int | None:
    """The number ``NN`` of a chapter named ``NN_title`` (a path, a file name or a Sphinx
    docname such as ``notebooks/04_sine_cosine_pairs``); None for anything else.

    >>> chapter_number("notebooks/04_sine_cosine_pairs"), chapter_number("notebooks/04_sine.ipynb")
    (4, 4)
    >>> chapter_number("book/intro") is None
    True
    """
    match = _CHAPTER_NAME.search(Path(name).as_posix())
    return int(match.group("number")) if match else None


def chapter_pages(site: Path | str) -> list[Path]:
    """The chapters' pages of a built site, in chapter order."""
    return sorted((Path(site) / "notebooks").glob(CHAPTER_GLOB.replace(".ipynb", ".html")))
