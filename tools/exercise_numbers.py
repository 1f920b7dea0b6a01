"""Exercises numbered by chapter ("Exercise 4.2") on the website.

sphinx-exercise numbers the exercises of the whole book in one sequence (chapter
04's first exercise was "Exercise 11"). After Sphinx has assigned its numbers,
every exercise of a chapter page ``notebooks/NN_*`` gets ``(NN, k)``, which
sphinx-exercise writes as "NN.k" in the exercise's title, in "Solution to Exercise
NN.k" and in references. The exercise directives in the notebooks carry
``:enumerator: NN.k`` for JupyterLab (jupyterlab-myst), which this extension teaches
sphinx-exercise to accept and ignore; the course tools write those options and the
"Exercise NN.k" headings of the course notebooks (:mod:`tools.course.numbers`).
"""

from __future__ import annotations

import re
from typing import Any

from sphinx.application import Sphinx

_CHAPTER_PAGE = re.compile(r"(?:^|/)(?P<number>\d\d)_[^/]*$")


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


def setup(app: Sphinx) -> dict[str, object]:
    _accept_enumerator_option()
    # Around Sphinx's own numbering (the toctree collector, priority 500).
    app.connect("env-get-updated", _restore_sphinx_numbers, priority=100)
    app.connect("env-get-updated", _renumber, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
