"""The numbers the website shows, worked out from the notebooks for the course's plain copies.

Sphinx numbers the book when it builds the website; the course notebooks are plain
Jupyter, so this module numbers them the same way:

* **exercises** by chapter, ``NN.k`` for the k-th exercise of chapter NN (the exercise
  records of :mod:`tools.course.record`). Each exercise directive in the notebooks also
  carries ``:enumerator: NN.k``, the option jupyterlab-myst shows: ``python -m
  tools.course.numbers notebooks/*.ipynb`` (``make sync-setup``) writes them, and a
  test fails while one is missing or wrong. (The website's side, which renumbers
  sphinx-exercise's book-wide count by chapter, is a Sphinx extension.)
* **chapters, sections and figures** (:func:`page_numbers`, :func:`book_targets`): a
  chapter's number ``NN`` comes from its file name ``notebooks/NN_*.ipynb``; its ``##``
  sections are ``NN.1``, ``NN.2`` ... in order, except the closing sections
  (:data:`UNNUMBERED_SECTIONS`); ``###`` headings have no number; a code cell whose
  ``mystnb.figure`` metadata has a caption is a figure, ``NN.1``, ``NN.2`` ... in
  cell order. A ``(label)=`` line names the heading after it, ``mystnb.figure.name``
  the figure.
* **equations** per page, (1), (2) ... (``math_numfig`` is off), and sphinx-proof
  statements per kind, Theorem 1, Theorem 2 ...

``{numref}`` writes a number through ``numfig_format`` of ``_config.yml``
(:func:`numfig_formats`).
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.chapters import UNNUMBERED_SECTIONS, chapter_notebooks
from tools.course.common import NOTEBOOKS, ROOT, chapter_of
from tools.course.myst import EQUATION_LABEL, EXERCISE_HEAD, PRF_DIRECTIVE, cell_source, label_option, options
from tools.course.record import read_exercises

#: Sphinx's own ``numfig_format``, which ``_config.yml`` may override per kind.
SPHINX_NUMFIG_FORMAT = {"section": "Section %s", "figure": "Fig. %s", "table": "Table %s", "code-block": "Listing %s"}

_ENUMERATOR = re.compile(r"^[ \t]*:enumerator:[^\n]*\n", re.MULTILINE)
_HEADING = re.compile(r"^(?P<hashes>#{1,6})[ \t]+(?P<text>.*?)(?:[ \t]+#+)?[ \t]*$")
_LABEL_LINE = re.compile(r"^\((?P<label>[^()\s]+)\)=[ \t]*$")
_FENCE_OPEN = re.compile(r"^[ \t]{0,3}(?P<fence>`{3,}|~{3,}|:{3,})")


# --------------------------------------------------------------------------- exercises


def exercise_numbers(cells: list[dict[str, Any]], chapter: int) -> dict[str, str]:
    """Label -> "4.2": the exercises of chapter ``chapter`` numbered in the order they appear."""
    return read_exercises(cells, chapter).numbers


def with_enumerators(cells: list[dict[str, Any]], chapter: int) -> list[dict[str, Any]]:
    """``cells`` with ``:enumerator: NN.k`` on every exercise directive (others unchanged)."""
    numbers = exercise_numbers(cells, chapter)

    def number(head: re.Match[str]) -> str:
        written = _ENUMERATOR.sub("", head.group("options"))
        label = label_option(written)
        if label is None:
            return head.group(0)
        opening = head.group(0)[: head.start("options") - head.start()]
        return f"{opening}{written}:enumerator: {numbers[label]}\n"

    out = []
    for cell in cells:
        if cell.get("cell_type") == "markdown":
            cell = {**cell, "source": EXERCISE_HEAD.sub(number, cell_source(cell))}
        out.append(cell)
    return out


# --------------------------------------------------------------------------- equations, statements


def equation_numbers(cells: list[dict[str, Any]]) -> dict[str, int]:
    """Label -> number of every labelled display equation, numbered (1), (2), ... in
    page order, as the website numbers them."""
    numbers: dict[str, int] = {}
    for cell in cells:
        if cell["cell_type"] == "markdown":
            for match in EQUATION_LABEL.finditer(cell_source(cell)):
                numbers.setdefault(match.group("label"), len(numbers) + 1)
    return numbers


def statement_numbers(cells: list[dict[str, Any]]) -> dict[str, str]:
    """Label -> "Theorem 1" of every sphinx-proof statement, each kind numbered in page order."""
    names: dict[str, str] = {}
    counts: dict[str, int] = {}
    for cell in cells:
        if cell["cell_type"] != "markdown":
            continue
        for match in PRF_DIRECTIVE.finditer(cell_source(cell)):
            kind = match.group("kind")
            label = options(match.group("body")).get("label")
            if kind == "proof" or not label:
                continue
            counts[kind] = counts.get(kind, 0) + 1
            names.setdefault(label, f"{kind.capitalize()} {counts[kind]}")
    return names


# --------------------------------------------------------------------------- chapters, sections, figures


@dataclass(frozen=True)
class Target:
    """Something a ``{ref}`` or ``{numref}`` can point at."""

    label: str
    kind: str  # "section" (a chapter's title included), "figure", or "target" (any other place)
    number: str | None  # "4.1", "4" for a chapter; None when the website shows none
    title: str  # a heading's text or a figure's caption
    page: str  # the notebook's or the page's name, e.g. "04_sine_cosine_pairs"


@dataclass(frozen=True)
class PageNumbers:
    """The numbers of one page, and its Markdown as plain Jupyter must show them."""

    targets: dict[str, Target]
    #: cell index -> the Markdown cell's source with numbered headings and no ``(label)=`` lines
    #: (only the cells that change).
    sources: dict[int, str]
    #: cell index -> the figure of a code cell with a caption.
    figures: dict[int, Target]


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]}


def page_numbers(cells: list[dict[str, Any]], chapter: int | None, page: str = "") -> PageNumbers:
    """The chapter, section and figure numbers of a page's ``cells`` (see the module
    docstring); ``chapter`` None for a page that is not a chapter (nothing is numbered)."""
    walk = _PageWalk(chapter, page)
    sources: dict[int, str] = {}
    figures: dict[int, Target] = {}
    for index, cell in enumerate(cells):
        if cell.get("cell_type") == "code":
            walk.settle()
            figure = walk.figure(cell)
            if figure is not None:
                figures[index] = figure
        elif cell.get("cell_type") == "markdown":
            source = walk.markdown(cell_source(cell))
            if source != cell_source(cell):
                sources[index] = source
    walk.settle()
    return PageNumbers(walk.targets, sources, figures)


class _PageWalk:
    """What :func:`page_numbers` has seen so far of one page, cell after cell."""

    def __init__(self, chapter: int | None, page: str) -> None:
        self.chapter, self.page = chapter, page
        self.targets: dict[str, Target] = {}
        self.sections = self.figures = 0
        self.titled = False
        self.pending: list[str] = []  # labels waiting for the heading after them

    def settle(self, kind: str = "target", number: str | None = None, title: str = "") -> None:
        """The waiting labels point at what comes now (a heading, or any other place)."""
        for label in self.pending:
            self.targets.setdefault(label, Target(label, kind, number, title, self.page))
        self.pending.clear()

    def figure(self, cell: dict[str, Any]) -> Target | None:
        """A code cell's figure, numbered if it has a caption (None for a cell without one)."""
        figure = cell.get("metadata", {}).get("mystnb", {}).get("figure")
        if not isinstance(figure, dict):
            return None
        caption, name = str(figure.get("caption") or ""), str(figure.get("name") or "")
        number = None
        if caption and self.chapter is not None:
            self.figures += 1
            number = f"{self.chapter}.{self.figures}"
        target = Target(name, "figure", number, caption, self.page)
        if name:
            self.targets.setdefault(name, target)
        return target if caption else None

    def markdown(self, source: str) -> str:
        """A Markdown cell as plain Jupyter shows it: numbered headings, no label lines."""
        out: list[str] = []
        fence: str | None = None
        for line in source.split("\n"):
            if fence is not None:
                fence = None if _closes(line, fence) else fence
                out.append(line)
                continue
            opening, label, heading = _FENCE_OPEN.match(line), _LABEL_LINE.match(line), _HEADING.match(line)
            if opening:
                self.settle()
                fence = opening.group("fence")
            elif label:
                self.pending.append(label.group("label"))
                continue  # plain Markdown has no labels
            elif heading:
                line = self._heading(len(heading.group("hashes")), heading.group("text"), line)
            elif line.strip():
                self.settle()
            out.append(line)
        return "\n".join(out)

    def _heading(self, level: int, text: str, line: str) -> str:
        number, title, line = _number_heading(level, text, line, self.chapter, self.sections, self.titled)
        self.titled = self.titled or level == 1
        if level == 2 and number is not None:
            self.sections += 1
        self.settle("section", number, title)
        return line


def _number_heading(
    level: int, text: str, line: str, chapter: int | None, sections: int, titled: bool
) -> tuple[str | None, str, str]:
    """(number, title, the line as plain Markdown shows it) of a heading."""
    if chapter is None or level > 2 or (level == 1 and titled):
        return None, text, line
    if level == 1:
        return str(chapter), text, f"# {chapter}. {text}"
    if text.strip() in UNNUMBERED_SECTIONS:
        return None, text, line
    number = f"{chapter}.{sections + 1}"
    return number, text, f"## {number} {text}"


@functools.lru_cache(maxsize=64)
def _file_targets(path: str, chapter: int | None, _stamp: tuple[int, int]) -> dict[str, Target]:
    file = Path(path)
    if file.suffix == ".ipynb":
        import json

        cells = json.loads(file.read_text(encoding="utf-8"))["cells"]
    else:
        cells = [{"cell_type": "markdown", "source": file.read_text(encoding="utf-8")}]
    return page_numbers(cells, chapter, file.stem).targets


def book_targets(
    notebooks: Path = NOTEBOOKS, pages: Path = ROOT / "book", *, exclude_chapter: int | None = None
) -> dict[str, Target]:
    """Every label of the book's chapters (numbered) and of its other pages (``book/``,
    unnumbered), for references across pages; ``exclude_chapter``'s notebook left out."""
    found: dict[str, Target] = {}
    files: list[tuple[Path, int | None]] = [(path, chapter_of(path)) for path in chapter_notebooks(notebooks)]
    files += [(path, None) for path in sorted(pages.rglob("*.md"))] if pages.is_dir() else []
    for path, chapter in files:
        if chapter is not None and chapter == exclude_chapter:
            continue
        stat = path.stat()
        for label, target in _file_targets(str(path), chapter, (stat.st_mtime_ns, stat.st_size)).items():
            found.setdefault(label, target)
    return found


def numfig_formats(config: Path = ROOT / "_config.yml") -> dict[str, str]:
    """How ``{numref}`` writes a number, per kind: ``numfig_format`` of the book's
    configuration over Sphinx's defaults."""
    import yaml

    settings = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
    written = ((settings.get("sphinx") or {}).get("config") or {}).get("numfig_format") or {}
    return {**SPHINX_NUMFIG_FORMAT, **{str(key): str(value) for key, value in written.items()}}


# --------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    """Write ``:enumerator: NN.k`` into the exercise directives of the given chapter notebooks."""
    import nbformat

    for name in argv if argv is not None else sys.argv[1:]:
        path = Path(name)
        try:
            chapter = chapter_of(path)
            nb = nbformat.read(path, as_version=4)
            cells = with_enumerators([dict(cell) for cell in nb.cells], chapter)
        except ValueError as error:
            print(f"{path}: {error}", file=sys.stderr)
            return 2
        changed = False
        for cell, new in zip(nb.cells, cells, strict=True):
            if cell.cell_type == "markdown" and cell.source != new["source"]:
                cell.source, changed = new["source"], True
        if changed:
            nbformat.write(nb, path)
            print(f"{path}: exercise numbers written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
