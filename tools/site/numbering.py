"""Chapters, sections, figures and exercises numbered by chapter: ``4``, ``4.2``, ``Exercise 4.2``.

**Chapters, sections and figures.**
The chapters carry no typed numbers: ``_toc.yml`` marks the parts that hold chapters
``numbered: 2``, Sphinx numbers each chapter page and its ``##`` sections, and
Jupyter Book's continuous numbering (``use_multitoc_numbering``, on by default) runs
the count on from one part to the next. Figures (code cells whose ``mystnb.figure``
metadata gives a caption and a name) are numbered ``NN.k`` from the chapter's number
(``numfig``), and ``{numref}`` writes those numbers wherever the text refers to them.

After Sphinx has numbered (its toctree collector listens to ``env-get-updated`` at the
default priority, 500), this step

* checks that every chapter page ``notebooks/NN_*`` got the number ``NN`` its file
  name and its exercises (``Exercise NN.k``) use, and stops the build otherwise (a
  chapter moved in ``_toc.yml`` without being renamed, or a page added to a numbered
  part before it);
* takes the numbers off the closing sections of the chapter anatomy
  (:data:`UNNUMBERED_SECTIONS`): they come last, so no other number moves.

**Exercises.** sphinx-exercise numbers the exercises of the whole book in one sequence
(chapter 04's first exercise was "Exercise 11"), and jupyterlab-myst numbers those of
each notebook from 1. The book numbers them per chapter, ``NN.k`` for the k-th exercise
of chapter NN, in three places:

* here, after Sphinx has assigned its numbers, every exercise of a chapter page
  ``notebooks/NN_*`` gets ``(NN, k)``, which sphinx-exercise writes as "NN.k" in the
  exercise's title, in "Solution to Exercise NN.k" and in references;
* each exercise directive in the notebooks carries ``:enumerator: NN.k``, the option
  jupyterlab-myst uses for the number it shows (sphinx-exercise is taught to accept and
  ignore it here); the course tools write them (``make sync-setup``) and a test fails
  when one is missing or wrong;
* the course notebooks' "Exercise NN.k" headings (the course tools).

The handlers listen to ``env-get-updated`` around Sphinx's own numbering (the toctree
collector, priority 500): :func:`restore_sphinx_numbers` at 100,
:func:`number_sections` at 600, :func:`renumber_exercises` at 900.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

from ..chapters import UNNUMBERED_SECTIONS, chapter_number  # what a chapter is: tools/chapters.py


def number_sections(app: Sphinx, env: Any) -> list[str]:
    """``env-get-updated``, after Sphinx numbers: check chapter numbers, unnumber the closing sections."""
    for docname, numbers in env.toc_secnumbers.items():
        expected = chapter_number(docname)
        assigned = numbers.get("")
        if expected is None and assigned:
            raise ExtensionError(
                f"{docname} is numbered by _toc.yml but is not a chapter page (notebooks/NN_title): "
                "move it to a part without 'numbered'"
            )
        if expected is not None and assigned != (expected,):
            raise ExtensionError(
                f"{docname} is numbered {'.'.join(map(str, assigned or ())) or 'nothing'} by its place in "
                f"_toc.yml, but its file name says {expected}: put the chapters in the order of their "
                "numbers, in parts marked 'numbered: 2', with no other numbered page before them"
            )
        for reference in env.tocs[docname].findall(nodes.reference):
            if reference.astext() in UNNUMBERED_SECTIONS and "secnumber" in reference:
                del reference["secnumber"]
                numbers[reference["anchorname"]] = ()  # Sphinx's own "no number" (not a missing key:
                # the HTML writer gives a heading missing from the table the page's number)
    return []


def chapter_numbers(numbers: dict[str, tuple[int, ...]], chapter: int) -> dict[str, tuple[int, ...]]:
    """The exercises ``numbers`` (node id -> Sphinx's number) renumbered ``(chapter, 1..n)`` in order."""
    ordered = sorted(numbers, key=lambda node_id: numbers[node_id])
    return {node_id: (chapter, place) for place, node_id in enumerate(ordered, start=1)}


# Sphinx's own exercise numbers, kept in the environment: Sphinx compares the numbers it
# assigns with those of the previous build and rewrites every page whose numbers changed,
# so the previous build's numbers are put back (before Sphinx numbers) as Sphinx made them.
_SPHINX_NUMBERS = "posenc_sphinx_exercise_numbers"


def restore_sphinx_numbers(app: Sphinx, env: Any) -> list[str]:
    """``env-get-updated``, before Sphinx numbers: the previous build's numbers, as Sphinx made them."""
    for docname, numbers in getattr(env, _SPHINX_NUMBERS, {}).items():
        if "exercise" in env.toc_fignumbers.get(docname, {}):
            env.toc_fignumbers[docname]["exercise"] = numbers
    return []


def renumber_exercises(app: Sphinx, env: Any) -> list[str]:
    """Renumber each chapter's exercises; no page to rewrite beyond those whose numbers
    Sphinx found changed (the chapter numbers follow from Sphinx's)."""
    sphinx_numbers = {}
    for docname, kinds in env.toc_fignumbers.items():
        chapter = chapter_number(docname)
        if chapter is None or not kinds.get("exercise"):
            continue
        sphinx_numbers[docname] = kinds["exercise"]
        kinds["exercise"] = chapter_numbers(kinds["exercise"], chapter)
    setattr(env, _SPHINX_NUMBERS, sphinx_numbers)
    return []


def accept_enumerator_option() -> None:
    """Let sphinx-exercise's directives accept (and ignore) jupyterlab-myst's ``enumerator``."""
    from docutils.parsers.rst import directives
    from sphinx_exercise.directive import ExerciseDirective, ExerciseStartDirective

    for directive in (ExerciseDirective, ExerciseStartDirective):
        if "enumerator" not in directive.option_spec:
            directive.option_spec = {**directive.option_spec, "enumerator": directives.unchanged}
