"""Chapter, section and figure numbers made by Sphinx, checked against the file names.

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
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

#: The sections every chapter closes with (AUTHORING.md's anatomy), shown without a number.
UNNUMBERED_SECTIONS = frozenset({"Exercises", "Key takeaways", "Suggested projects"})

_CHAPTER_PAGE = re.compile(r"(?:^|/)(?P<number>\d\d)_[^/]*$")


def chapter_number(docname: str) -> int | None:
    """The number ``NN`` of a chapter page ``notebooks/NN_title``; None for other pages."""
    match = _CHAPTER_PAGE.search(docname)
    return int(match.group("number")) if match else None


def _number_sections(app: Sphinx, env: Any) -> list[str]:
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


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("env-get-updated", _number_sections, priority=600)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
