"""Sphinx extension: exercises numbered by chapter ("Exercise 4.2"), as in the notebooks.

sphinx-exercise numbers the exercises of the whole book in one sequence (chapter
04's first exercise was "Exercise 11"), while the course notebooks and the student
copies (``tools/course.py``) number them per chapter. After Sphinx has assigned its
numbers, every exercise of a chapter page ``notebooks/NN_*`` gets ``(NN, k)``, its
chapter and its place in the chapter, which sphinx-exercise writes as "NN.k" in the
exercise's title, in "Solution to Exercise NN.k" and in references to it.
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


def _renumber(app: Sphinx, env: Any) -> list[str]:
    changed = []
    for docname, kinds in env.toc_fignumbers.items():
        match = _CHAPTER_PAGE.search(docname)
        if match is None or not kinds.get("exercise"):
            continue
        renumbered = chapter_numbers(kinds["exercise"], int(match.group("number")))
        if renumbered != kinds["exercise"]:
            kinds["exercise"] = renumbered
            changed.append(docname)
    return changed


def setup(app: Sphinx) -> dict[str, object]:
    # After Sphinx's own numbering (the toctree collector, priority 500).
    app.connect("env-get-updated", _renumber, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
