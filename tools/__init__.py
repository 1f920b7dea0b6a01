"""The book's own tooling, as a package (``python -m tools.<module>`` from the repository root).

==============================  ==================================================
module                          what it is for
==============================  ==================================================
:mod:`tools.nbtools`            execute, normalise, audit and measure notebooks
:mod:`tools.course`             the course: exercise records, nbgrader, otter-grader, student
                                copies and website, grading, the course's numbers
:mod:`tools.logo`               draws the logo and favicon
:mod:`tools.site`               the website's Sphinx extension (``tools/site/README.md``)
:mod:`tools.release`            the version, and the check of a built release (``make release``)
==============================  ==================================================

Jupyter Book loads the one Sphinx extension, ``tools.site``, with the repository root
on ``sys.path`` (``sphinx.local_extensions`` in ``_config.yml``); inside the package,
modules import each other relatively.
"""
