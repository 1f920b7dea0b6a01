"""Exercises numbered by chapter ("Exercise 4.2") on the website, in JupyterLab and in
the course notebooks.

sphinx-exercise numbers the exercises of the whole book in one sequence (chapter
04's first exercise was "Exercise 11"), and jupyterlab-myst numbers those of each
notebook from 1. The book numbers them per chapter, ``NN.k`` for the k-th exercise
of chapter NN, in three places:

* as a Sphinx extension, after Sphinx has assigned its numbers, every exercise of a
  chapter page ``notebooks/NN_*`` gets ``(NN, k)``, which sphinx-exercise writes as
  "NN.k" in the exercise's title, in "Solution to Exercise NN.k" and in references;
* each exercise directive in the notebooks carries ``:enumerator: NN.k``, the
  option jupyterlab-myst uses for the number it shows (this extension teaches
  sphinx-exercise to accept and ignore it); ``python -m tools.exercise_numbers
  notebooks/*.ipynb`` writes them, and a test fails when one is missing or wrong;
* ``tools/course.py`` writes "Exercise NN.k" headings with :func:`exercise_numbers`.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

_CHAPTER_PAGE = re.compile(r"(?:^|/)(?P<number>\d\d)_[^/]*$")
#: The opening fence of a MyST directive, backticks or colons (``(?P=fence)`` closes it).
DIRECTIVE_FENCE = r"(?P<fence>`{3,}|:{3,})"
# An exercise directive's opening line and its options (the label among them).
_EXERCISE_HEAD = re.compile(
    r"^" + DIRECTIVE_FENCE + r"\{(?:exercise|exercise-start)\}[^\n]*\n(?P<options>(?:[ \t]*:[\w-]+:[^\n]*\n)*)",
    re.MULTILINE,
)
_LABEL = re.compile(r"^[ \t]*:label:[ \t]*(?P<label>\S+)", re.MULTILINE)
_ENUMERATOR = re.compile(r"^[ \t]*:enumerator:[^\n]*\n", re.MULTILINE)


def cell_source(cell: dict[str, Any]) -> str:
    """A notebook cell's source as one string (nbformat stores a string or a list of lines)."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def exercise_numbers(cells: list[dict[str, Any]], chapter: int) -> dict[str, str]:
    """Label -> "4.2": the exercises of chapter ``chapter`` numbered in the order they appear."""
    numbers: dict[str, str] = {}
    for cell in cells:
        if cell.get("cell_type") != "markdown":
            continue
        for head in _EXERCISE_HEAD.finditer(cell_source(cell)):
            label = _LABEL.search(head.group("options"))
            if label and label.group("label") not in numbers:
                numbers[label.group("label")] = f"{chapter}.{len(numbers) + 1}"
    return numbers


def with_enumerators(cells: list[dict[str, Any]], chapter: int) -> list[dict[str, Any]]:
    """``cells`` with ``:enumerator: NN.k`` on every exercise directive (others unchanged)."""
    numbers = exercise_numbers(cells, chapter)

    def number(head: re.Match[str]) -> str:
        options = _ENUMERATOR.sub("", head.group("options"))
        label = _LABEL.search(options)
        if label is None:
            return head.group(0)
        opening = head.group(0)[: head.start("options") - head.start()]
        return f"{opening}{options}:enumerator: {numbers[label.group('label')]}\n"

    out = []
    for cell in cells:
        if cell.get("cell_type") == "markdown":
            cell = {**cell, "source": _EXERCISE_HEAD.sub(number, cell_source(cell))}
        out.append(cell)
    return out


def chapter_numbers(numbers: dict[str, tuple[int, ...]], chapter: int) -> dict[str, tuple[int, ...]]:
    """The exercises ``numbers`` (node id -> Sphinx's number) renumbered ``(chapter, 1..n)`` in order."""
    ordered = sorted(numbers, key=lambda node_id: numbers[node_id])
    return {node_id: (chapter, place) for place, node_id in enumerate(ordered, start=1)}


# Sphinx's own exercise numbers, kept in the environment: Sphinx compares the numbers it
# assigns with those of the previous build and rewrites every page whose numbers changed,
# so the previous build's numbers are put back (before Sphinx numbers) as Sphinx made them.
_SPHINX_NUMBERS = "posenc_sphinx_exercise_numbers"


def _restore_sphinx_numbers(app: Sphinx, env: Any) -> list[str]:
    for docname, numbers in getattr(env, _SPHINX_NUMBERS, {}).items():
        if "exercise" in env.toc_fignumbers.get(docname, {}):
            env.toc_fignumbers[docname]["exercise"] = numbers
    return []


def _renumber(app: Sphinx, env: Any) -> list[str]:
    """Renumber each chapter's exercises; no page to rewrite beyond those whose numbers
    Sphinx found changed (the chapter numbers follow from Sphinx's)."""
    sphinx_numbers = {}
    for docname, kinds in env.toc_fignumbers.items():
        match = _CHAPTER_PAGE.search(docname)
        if match is None or not kinds.get("exercise"):
            continue
        sphinx_numbers[docname] = kinds["exercise"]
        kinds["exercise"] = chapter_numbers(kinds["exercise"], int(match.group("number")))
    setattr(env, _SPHINX_NUMBERS, sphinx_numbers)
    return []


def _accept_enumerator_option() -> None:
    """Let sphinx-exercise's directives accept (and ignore) jupyterlab-myst's ``enumerator``."""
    from docutils.parsers.rst import directives
    from sphinx_exercise.directive import ExerciseDirective, ExerciseStartDirective

    for directive in (ExerciseDirective, ExerciseStartDirective):
        if "enumerator" not in directive.option_spec:
            directive.option_spec = {**directive.option_spec, "enumerator": directives.unchanged}


def main(argv: list[str] | None = None) -> int:
    """Write ``:enumerator: NN.k`` into the exercise directives of the given chapter notebooks."""
    import nbformat

    for name in argv if argv is not None else sys.argv[1:]:
        path = Path(name)
        chapter = _CHAPTER_PAGE.search(path.stem)
        if chapter is None:
            print(f"{path}: not a chapter notebook (NN_title.ipynb)", file=sys.stderr)
            return 2
        nb = nbformat.read(path, as_version=4)
        cells = with_enumerators([dict(cell) for cell in nb.cells], int(chapter.group("number")))
        changed = False
        for cell, new in zip(nb.cells, cells, strict=True):
            if cell.cell_type == "markdown" and cell.source != new["source"]:
                cell.source, changed = new["source"], True
        if changed:
            nbformat.write(nb, path)
            print(f"{path}: exercise numbers written")
    return 0


def setup(app: Sphinx) -> dict[str, object]:
    _accept_enumerator_option()
    # Around Sphinx's own numbering (the toctree collector, priority 500).
    app.connect("env-get-updated", _restore_sphinx_numbers, priority=100)
    app.connect("env-get-updated", _renumber, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    sys.exit(main())
