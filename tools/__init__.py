"""The book's own tooling, as a package (``python -m tools.<module>`` from the repository root).

==============================  ==================================================
module                          what it is for
==============================  ==================================================
:mod:`tools.nbtools`            execute, normalise, audit and measure notebooks
:mod:`tools.course`             the course: exercise records, nbgrader, otter-grader, student
                                copies and website, grading, the course's numbers
:mod:`tools.logo`               draws the logo and favicon
:mod:`tools.notebook_guard`     Sphinx extension: refuse to build from unclean notebooks
:mod:`tools.offline_mathjax`    Sphinx extension: MathJax served from the site
:mod:`tools.launch_buttons`     Sphinx extension: launch buttons from ``repository.url``
:mod:`tools.student_edition`    Sphinx extension: the student edition's switches
:mod:`tools.unique_scripts`     Sphinx extension: no inline script twice on a page
:mod:`tools.exercise_numbers`   Sphinx extension: exercises numbered by chapter
==============================  ==================================================

The Sphinx extensions are loaded by Jupyter Book from this folder
(``sphinx.local_extensions`` in ``_config.yml``), which puts the folder itself on
``sys.path``; that is why they import their siblings as top-level modules.
"""
