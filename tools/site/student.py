"""The student edition of the website: ``make student-book`` (``tools/course/student.py``).

The student-book target builds from a generated copy of ``_config.yml`` with
``hide_solutions: true`` (sphinx-exercise's switch) and
``posenc_student_edition: true`` under ``sphinx.config``. Then

* every solution is left out of the site, gated ``solution-start`` /
  ``solution-end`` blocks (with their code cells) as well as plain
  ``{solution}`` directives;
* the instructor guide (``book/instructor_guide``) is read as a short page that says
  it is for instructors: how the course grades, and what it does and does not
  resist, is not for the class to read (the page keeps its name, so the links to it
  still resolve);
* no page source is copied into the site, and the download button is dropped,
  since a downloaded page would carry its solutions. The launch buttons stay:
  ``tools/course/student.py`` points them at the repository's student branch
  (``make student-branch``), whose notebooks are the course's release.

sphinx-exercise 1.2.1 implements ``hide_solutions`` for plain solutions only:
with gated solutions the build crashes ("unknown node type:
solution_end_node", executablebooks/sphinx-exercise#89). So this module
takes the switch over: it turns sphinx-exercise's own handling off and removes
the merged solution nodes itself, right after sphinx-exercise has assembled
them. In the normal build (both settings false) it does nothing.
"""

from __future__ import annotations

from typing import Any

from sphinx.transforms import SphinxTransform
from sphinx_exercise.nodes import solution_node


class RemoveSolutions(SphinxTransform):
    """Drop every solution from the doctree when the student edition hides them."""

    default_priority = 11  # after sphinx-exercise's MergeGatedSolutions (10)

    def apply(self, **kwargs: Any) -> None:
        if not self.config.posenc_hide_solutions:
            return
        for node in list(self.document.findall(solution_node)):
            node.parent.remove(node)


#: The instructor guide's page, and what the student edition shows in its place.
INSTRUCTOR_GUIDE = "book/instructor_guide"
INSTRUCTOR_GUIDE_STUB = """# Instructor guide

This page is for the instructors who assign the book: it is not part of the student
edition. The chapters, {doc}`how_to_use` and the {doc}`glossary` are all here.
"""


def replace_instructor_guide(app: Any, docname: str, source: list[str]) -> None:
    """``source-read``: in the student edition, the instructor guide's text is the stub."""
    if app.config.posenc_student_edition and docname == INSTRUCTOR_GUIDE:
        source[0] = INSTRUCTOR_GUIDE_STUB


def configure_student_edition(app: Any, config: Any) -> None:
    """``config-inited``: sphinx-exercise's ``hide_solutions`` taken over; no page sources."""
    config.posenc_hide_solutions = bool(config.hide_solutions)
    config.hide_solutions = False  # see the module docstring: we remove them ourselves
    if not config.posenc_student_edition:
        return
    config.html_copy_source = False
    options = config.html_theme_options
    options["use_download_button"] = False
    # The launch buttons stay: tools/course/student.py points them at the student
    # branch, whose notebooks are the course's release (no solutions).
