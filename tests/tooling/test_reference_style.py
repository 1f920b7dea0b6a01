"""How the book's prose refers across chapters and to its sources (issue 38, items 4 and 9).

* Equations are numbered per page, (1), (2) ..., with no chapter in the number (figures
  and sections carry it: Figure 12.4, section 12.3). So an ``{eq}`` role that resolves
  to an equation of another chapter must name that chapter next to it ("chapter 12's
  {eq}`label`", "{eq}`label` of chapter 12"): otherwise "(4)" reads as this page's (4).
  Each label's page is where its ``$$ ... $$ (label)`` is written.
* A citation that follows its own authors' names repeats them ("Barbero et al.
  [Barbero et al., 2025]"): write ``{cite:t}`key``` (sphinxcontrib-bibtex's textual
  citation, "Barbero et al. [2025]") instead of the names and ``{cite}``.

Both scan every chapter notebook and every page of ``book/``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tools.bibliography import citation_labels
from tools.chapters import chapter_notebooks

REPO = Path(__file__).resolve().parents[2]
CHAPTERS = chapter_notebooks()
PAGES = sorted((REPO / "book").rglob("*.md"))

_EQUATION = re.compile(r"\$\$[ \t]*\((?P<label>[\w-]+)\)[ \t]*$", re.MULTILINE)
_EQ_ROLE = re.compile(r"\{eq\}`(?P<label>[^`]+)`")
_CITE = re.compile(r"\{cite(?::p)?\}`(?P<keys>[^`]+)`")
_NAME = r"[^\W\d_][\w'’-]*"


def _markdown(path: Path) -> list[tuple[str, str]]:
    """(where, text) of each Markdown cell of a notebook, or of a whole page."""
    if path.suffix != ".ipynb":
        return [(path.relative_to(REPO).as_posix(), path.read_text(encoding="utf-8"))]
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [
        (f"{path.name} cell {index}", "".join(cell["source"]))
        for index, cell in enumerate(cells)
        if cell["cell_type"] == "markdown"
    ]


def _page(path: Path) -> str:
    return path.stem


def equation_pages(files: list[Path]) -> dict[str, str]:
    """Label -> the page (file stem) whose Markdown defines that equation."""
    pages: dict[str, str] = {}
    for path in files:
        for _, text in _markdown(path):
            for match in _EQUATION.finditer(text):
                pages.setdefault(match.group("label"), _page(path))
    return pages


def names_its_chapter(text: str, start: int, end: int, chapter: int) -> bool:
    """Whether the role at ``text[start:end]`` names chapter ``chapter`` beside it:
    "chapter 12's" (or "chapter 12") just before it, or "of/in chapter 12" just after."""
    number = rf"0?{chapter}\b"
    before = re.search(rf"\bchapter\s+{number}(?:['’]s)?\s*(?:\S+\s+){{0,2}}$", text[max(0, start - 60) : start], re.I)
    after = re.match(rf"\s+(?:of|in|from)\s+chapter\s+{number}", text[end : end + 40], re.I)
    return bool(before or after)


def unnamed_cross_chapter_equations(files: list[Path]) -> list[str]:
    pages = equation_pages(files)
    found = []
    for path in files:
        for where, text in _markdown(path):
            for match in _EQ_ROLE.finditer(text):
                label = match.group("label").strip()
                home = pages.get(label)
                if home is None:
                    found.append(f"{where}: {{eq}}`{label}` names no equation of the book")
                elif home != _page(path):
                    chapter = int(home[:2]) if home[:2].isdigit() else None
                    if chapter is None or not names_its_chapter(text, match.start(), match.end(), chapter):
                        context = text[max(0, match.start() - 60) : match.end()].replace("\n", " ")
                        found.append(f"{where}: ...{context!r} is an equation of {home}, and does not say so")
    return found


def first_authors(labels: dict[str, str]) -> dict[str, tuple[str, bool]]:
    """Key -> (its first author's surname, whether the work has more authors), from the
    bibliography's author-year labels ("Vaswani et al., 2017", "Press and Smith, 2022")."""
    out = {}
    for key, label in labels.items():
        who = label.rpartition(", ")[0]
        first = re.split(r" et al\.| and ", who)[0]
        out[key] = (first, first != who)
    return out


def names_then_own_citation(text: str, start: int, first: str, several: bool) -> bool:
    """Whether the names just before ``start`` (a ``{cite}``) are the cited work's authors:
    "Dai et al.", "Shaw, Uszkoreit and Vaswani", "Press and Smith", or a sole author's
    surname (emphasis and spaces between them and the role are ignored)."""
    before = re.sub(r"[\s*_]+$", "", text[max(0, start - 120) : start])
    name = re.escape(first)
    if several:
        pattern = rf"(?<![\w'’-]){name}(?:\s+et\s+al\.|(?:,\s*{_NAME})*,?\s+and\s+{_NAME}(?:\s+{_NAME})?)$"
    else:
        pattern = rf"(?<![\w'’-]){name}$"
    return re.search(pattern, before) is not None


def repeated_authors(files: list[Path], labels: dict[str, str]) -> list[str]:
    authors = first_authors(labels)
    found = []
    for path in files:
        for where, text in _markdown(path):
            for match in _CITE.finditer(text):
                keys = [key.strip() for key in match.group("keys").split(",")]
                if keys[0] not in authors:
                    continue
                first, several = authors[keys[0]]
                if names_then_own_citation(text, match.start(), first, several):
                    context = text[max(0, match.start() - 50) : match.end()].replace("\n", " ")
                    found.append(f"{where}: ...{context!r}: write {{cite:t}}`{keys[0]}` instead of the names")
    return found


# --------------------------------------------------------------------------- the rules, on examples


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("as chapter 12's {eq}`e` showed", True),
        ("as Chapter 12 proved in {eq}`e`", True),
        ("as {eq}`e` of chapter 12 showed", True),
        ("as {eq}`e` in chapter 12", True),
        ("as {eq}`e` showed", False),
        ("as chapter 11's {eq}`e` showed", False),  # the wrong chapter
        ("chapter 12 met this long ago, and much later {eq}`e` showed", False),  # too far
    ],
)
def test_a_cross_chapter_equation_reference_must_name_its_chapter(text, named):
    match = _EQ_ROLE.search(text)
    assert match is not None
    assert names_its_chapter(text, match.start(), match.end(), 12) is named


def test_the_first_authors_come_from_the_labels():
    labels = {"a": "Dai et al., 2019", "b": "Press and Smith, 2022", "c": "emozilla, 2023"}
    assert first_authors(labels) == {"a": ("Dai", True), "b": ("Press", True), "c": ("emozilla", False)}


@pytest.mark.parametrize(
    ("text", "first", "several", "repeated"),
    [
        ("Dai et al. {cite}`k`", "Dai", True, True),
        ("**Peng et al.** {cite}`k`", "Peng", True, True),
        ("Shaw, Uszkoreit and Vaswani {cite}`k`", "Shaw", True, True),
        ("**Press, Smith and Lewis** {cite}`k`", "Press", True, True),
        ("posted by emozilla {cite}`k`", "emozilla", False, True),
        ("Dai et al. turned this into a rule {cite}`k`", "Dai", True, False),
        ("Kazemnejad's {cite}`k`", "Kazemnejad", False, False),
        ("Chen et al. {cite}`k`", "Dai", True, False),  # another work's authors
        ("Daimler et al. {cite}`k`", "Dai", True, False),
    ],
)
def test_names_before_their_own_citation_are_found(text, first, several, repeated):
    match = _CITE.search(text)
    assert match is not None
    assert names_then_own_citation(text, match.start(), first, several) is repeated


# --------------------------------------------------------------------------- the book


def test_every_equation_reference_to_another_chapter_names_it():
    found = unnamed_cross_chapter_equations(CHAPTERS + PAGES)
    assert not found, "\n".join(found)


def test_no_citation_repeats_the_authors_named_just_before_it():
    found = repeated_authors(CHAPTERS + PAGES, citation_labels())
    assert not found, "\n".join(found)
