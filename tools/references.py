"""References that read in JupyterLab as they read on the website.

The website is built by Sphinx, which numbers the chapters, their sections and figures,
and resolves every reference across pages. JupyterLab renders each notebook's MyST on
its own (jupyterlab-myst): it knows no section numbers (a ``{numref}`` reads "section
%s"), no other notebook (a reference to one shows its raw label and a warning icon), no
figure captions (they live in cell metadata that only the website reads) and no
bibliography (a citation shows its key). It also numbers every display equation, where
the website numbers only the labelled ones.

:func:`resolved_for_jupyterlab` writes a chapter as JupyterLab must show it, for the
working copies of ``make lab`` and ``make lab-student`` (:mod:`tools.working_copies`):

* headings numbered as the website numbers them (``# 4. Title``, ``## 4.1 Section``);
* ``{numref}`` and ``{ref}`` written out ("Section 4.6", "Figure 4.4", a title),
  through ``numfig_format`` of ``_config.yml``;
* after each captioned figure, a cell with its number and caption ("**Figure 4.1.** ...");
* ``{cite}`` as "(Vaswani et al., 2017)" and ``{cite:t}`` as "Vaswani et al. (2017)",
  read from ``book/references.bib`` by :mod:`tools.bibliography`, which writes the
  course's citations too;
* ``{eq}`` to an equation of another chapter as its number there, "(4)" (the text names
  the chapter; a test checks it); ``{eq}`` within the chapter is left to
  jupyterlab-myst, which links it, and the display equations without a label are
  marked unnumbered (``equation*``), so that its numbers are the website's;
* ``{doc}`` to another chapter as a link to its notebook, titled as on the website; to
  another page of the book, as that page's title.

The numbers come from :mod:`tools.course.numbers`, which numbers the notebooks as Sphinx
and the site's extension (:mod:`tools.site.numbering`) do, from the same sources: the
chapter's file name (the build stops unless ``_toc.yml`` gives the chapter that number),
the order of its ``##`` headings less the closing sections, and its captioned figures in
cell order; ``tests/site/test_course_numbers.py`` compares them with a built site. No
built site is needed.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.bibliography import BIBLIOGRAPHY, citation_labels, write_citations
from tools.chapters import chapter_notebooks
from tools.course.common import NOTEBOOKS, ROOT, chapter_of, is_chapter_name
from tools.course.markdown import numbered_reference, reference
from tools.course.myst import cell_source
from tools.course.numbers import Target, book_targets, equation_numbers, numfig_formats, page_numbers

EQ_ROLE = re.compile(r"\{eq\}`(?P<label>[^`]+)`")
_TITLED = r"`(?:(?P<text>[^`<]*?)\s*<(?P<target>[^`>]+)>|(?P<bare>[^`]+))`"
NUMREF_ROLE = re.compile(r"\{numref\}" + _TITLED)
REF_ROLE = re.compile(r"\{ref\}" + _TITLED)
DOC_ROLE = re.compile(r"\{doc\}" + _TITLED)
#: A fence line: code (its body is not Markdown), or a MyST directive's (``{prf:proof}``,
#: whose body is Markdown: ``directive`` is set), or a bare line that closes either.
_FENCE = re.compile(
    r"^[ \t]{0,3}(?P<fence>`{3,}(?!`)|~{3,}(?!~)|:{3,}(?!:))[ \t]*"
    r"(?P<directive>\{(?!code|literalinclude))?(?P<info>.*)$"
)
_MATH_OPEN = re.compile(r"^[ \t]*\$\$")
_MATH_CLOSE = re.compile(r"\$\$[ \t]*(?:\((?P<label>[\w-]+)\))?[ \t]*$")
_TITLE = re.compile(r"^#[ \t]+(?P<title>.+?)[ \t]*$", re.MULTILINE)


@dataclass(frozen=True)
class Book:
    """What references across pages need: every label's target, every equation's page
    and number, the bibliography, ``numfig_format`` and the pages' titles."""

    targets: Mapping[str, Target]
    equations: Mapping[str, tuple[str, int]]  # label -> (page, number on that page)
    citations: Mapping[str, str]  # key -> "Vaswani et al., 2017"
    formats: Mapping[str, str]
    titles: Mapping[str, str]  # page name ("04_sine_cosine_pairs", "references") -> title


def _cells(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".ipynb":
        return list(json.loads(path.read_text(encoding="utf-8"))["cells"])
    return [{"cell_type": "markdown", "source": path.read_text(encoding="utf-8")}]


def page_title(cells: list[dict[str, Any]]) -> str:
    """A page's title, its first ``#`` heading, without a typed chapter number."""
    for cell in cells:
        if cell.get("cell_type") == "markdown":
            match = _TITLE.search(cell_source(cell))
            if match:
                return re.sub(r"^\d+\.[ \t]+", "", match.group("title"))
    return ""


def read_book(
    notebooks: Path = NOTEBOOKS,
    pages: Path = ROOT / "book",
    bibliography: Path = BIBLIOGRAPHY,
    config: Path = ROOT / "_config.yml",
) -> Book:
    """The :class:`Book` of the chapters in ``notebooks`` and the pages in ``pages``, with
    the citations of ``bibliography`` and the ``numfig_format`` of ``config``."""
    equations: dict[str, tuple[str, int]] = {}
    titles: dict[str, str] = {}
    for path in chapter_notebooks(notebooks):
        cells = _cells(path)
        titles[path.stem] = page_title(cells)
        for label, number in equation_numbers(cells).items():
            equations.setdefault(label, (path.stem, number))
    for path in sorted(pages.rglob("*.md")) if pages.is_dir() else []:
        titles.setdefault(path.relative_to(pages).with_suffix("").as_posix(), page_title(_cells(path)))
    targets = book_targets(notebooks, pages)
    return Book(targets, equations, citation_labels(bibliography), numfig_formats(config), titles)


@functools.lru_cache(maxsize=1)
def _this_book(_stamp: tuple[tuple[str, int, int], ...]) -> Book:
    return read_book()


def this_book() -> Book:
    """The :class:`Book` of this repository (read again when a notebook or page changes)."""
    files = sorted([*chapter_notebooks(NOTEBOOKS), *(ROOT / "book").rglob("*.md")])
    stamp = tuple((str(path), path.stat().st_mtime_ns, path.stat().st_size) for path in files)
    return _this_book(stamp)


# --------------------------------------------------------------------------- roles


def _link(match: re.Match[str], page: str, book: Book) -> str:
    target = (match.group("target") or match.group("bare")).strip()
    name = Path(target).name
    text = (match.group("text") or "").strip()
    if is_chapter_name(name):  # another chapter: its working copy sits next to this one
        if name not in book.titles:
            raise ValueError(f"{{doc}}`{target}` in {page}: no chapter {name}")
        return f"[{text or book.titles[name]}]({name}.ipynb)"
    key = re.sub(r"^(?:\.\./|/)?book/", "", target)
    if key not in book.titles and not text:
        raise ValueError(f"{{doc}}`{target}` in {page}: no page of the book has this name")
    return text or book.titles[key]


def _equation(match: re.Match[str], page: str, book: Book) -> str:
    label = match.group("label").strip()
    if label not in book.equations:
        raise ValueError(f"{{eq}}`{label}` in {page}: no equation of the book has this label")
    where, number = book.equations[label]
    return match.group(0) if where == page else f"({number})"


def resolve_roles(text: str, page: str, targets: Mapping[str, Target], book: Book) -> str:
    """``text`` (Markdown of page ``page``) with its references and citations written out
    (see the module docstring); ``targets`` are the labels it may name."""
    text = NUMREF_ROLE.sub(lambda m: numbered_reference(m, targets, book.formats), text)
    text = REF_ROLE.sub(lambda m: reference(m, targets), text)
    text = write_citations(text, book.citations)
    text = EQ_ROLE.sub(lambda m: _equation(m, page, book), text)
    return DOC_ROLE.sub(lambda m: _link(m, page, book), text)


def unnumbered_display_math(text: str) -> str:
    """``text`` with each display equation that has no label wrapped in ``equation*``:
    jupyterlab-myst numbers every display equation, the website only labelled ones."""
    lines = text.split("\n")
    out: list[str] = []
    code: str | None = None  # the fence of the code block we are in
    directives: list[str] = []  # the fences of the directives we are in
    index = 0
    while index < len(lines):
        line = lines[index]
        fence = _FENCE.match(line)
        closes = fence is not None and not fence.group("info").strip() and not fence.group("directive")
        if code is not None:
            if (
                closes
                and fence is not None
                and fence.group("fence")[0] == code[0]
                and len(fence.group("fence")) >= len(code)
            ):
                code = None
            out.append(line)
            index += 1
            continue
        if fence is not None:
            mark = fence.group("fence")
            if closes and directives and mark[0] == directives[-1][0] and len(mark) >= len(directives[-1]):
                directives.pop()
            elif fence.group("directive"):
                directives.append(mark)
            elif mark[0] != ":":
                code = mark
            out.append(line)
            index += 1
            continue
        if not _MATH_OPEN.match(line):
            out.append(line)
            index += 1
            continue
        end = index
        rest = line.strip()[2:]
        while not _MATH_CLOSE.search(rest if end == index else lines[end]):
            end += 1
            if end == len(lines):
                raise ValueError(f"a display equation is not closed: {line!r}")
        block = lines[index : end + 1]
        close = _MATH_CLOSE.search(rest if end == index else lines[end])
        assert close is not None
        if close.group("label") is None:
            indent = line[: len(line) - len(line.lstrip())]
            body = re.sub(r"\n[ \t]*$", "", "\n".join(block).strip()[2:-2]).strip("\n")
            block = [f"{indent}$$", f"{indent}\\begin{{equation*}}", body, f"{indent}\\end{{equation*}}", f"{indent}$$"]
        out.extend(block)
        index = end + 1
    return "\n".join(out)


# --------------------------------------------------------------------------- a chapter


def _caption_cell(code: dict[str, Any], figure: Target, caption: str, formats: Mapping[str, str]) -> dict[str, Any]:
    """The Markdown cell that shows a figure's number and caption under it, as the website does."""
    number = formats["figure"].replace("%s", str(figure.number))
    cell: dict[str, Any] = {"cell_type": "markdown", "metadata": {"tags": ["figure-caption"]}}
    if code.get("id"):
        cell["id"] = f"{str(code['id'])[:56]}-caption"
    cell["source"] = f"**{number}.** {caption}"
    return cell


def resolved_for_jupyterlab(nb: dict[str, Any], page: str, book: Book | None = None) -> dict[str, Any]:
    """A copy of notebook ``nb`` (of page ``page``, e.g. ``04_sine_cosine_pairs``) whose
    references read in JupyterLab as on the website (see the module docstring).
    ``book`` defaults to this repository's (:func:`this_book`)."""
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise TypeError(f"nb must be a notebook (a dict with a list of cells), got {type(nb).__name__}")
    if not isinstance(page, str) or not page:
        raise ValueError(f"page must be the notebook's name without .ipynb, e.g. '04_sine_cosine_pairs', got {page!r}")
    book = this_book() if book is None else book
    chapter = chapter_of(Path(f"{page}.ipynb")) if is_chapter_name(page) else None
    out = copy.deepcopy(nb)
    numbers = page_numbers(out["cells"], chapter, page)
    targets = {**book.targets, **numbers.targets}
    cells: list[dict[str, Any]] = []
    for index, cell in enumerate(out["cells"]):
        if cell.get("cell_type") == "markdown":
            source = numbers.sources.get(index, cell_source(cell))
            cell["source"] = unnumbered_display_math(resolve_roles(source, page, targets, book))
        cells.append(cell)
        figure = numbers.figures.get(index)
        if figure is not None:
            caption = resolve_roles(figure.title, page, targets, book)
            cells.append(_caption_cell(cell, figure, caption, book.formats))
    out["cells"] = cells
    return out


def equation_pages(book: Book) -> dict[str, str]:
    """Label -> the page that defines that equation."""
    return {label: where for label, (where, _) in book.equations.items()}


__all__ = [
    "Book",
    "equation_pages",
    "page_title",
    "read_book",
    "resolve_roles",
    "resolved_for_jupyterlab",
    "this_book",
    "unnumbered_display_math",
]
