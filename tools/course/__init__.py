"""The book as a course: nbgrader, otter-grader, the student copies and the exercise numbers.

===================================  ===============================================
module                               what it is for
===================================  ===============================================
:mod:`tools.course.record`           one record per exercise, parsed once per notebook
:mod:`tools.course.numbers`          the website's numbers (exercises, chapters,
                                     sections, figures, equations) for plain copies;
                                     ``:enumerator:`` options (``make sync-setup``)
:mod:`tools.course.markdown`         MyST as plain Markdown (Colab, classic Jupyter);
                                     citations by :mod:`tools.bibliography`
:mod:`tools.course.nbgrader`         the nbgrader course (``make course``): generated
                                     metadata, model answers, hidden tests
:mod:`tools.course.otter`            otter-grader assignments (``make otter``)
:mod:`tools.course.student`          student copies, the student branch, the student
                                     website (``make student``, ``student-branch``,
                                     ``student-book``)
:mod:`tools.course.collect`          collect from nbgrader's exchange, following no
                                     link (``make collect``)
:mod:`tools.course.grade`            autograde a class, N at a time (``make grade``)
:mod:`tools.course.myst`             the MyST syntax the others read
:mod:`tools.course.common`           folders, chapter names, pins, scripts
===================================  ===============================================

``python -m tools.course`` is the command line (:mod:`tools.course.__main__`). The
names below, the ones the tests and the benchmarks use, are imported from their
module when first used, so that ``python -m tools.course.numbers`` and ``python -m
tools.course.grade`` run their module once.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> the module of tools.course that defines it.
_HOME = {
    "DEFAULT_OUT": "common",
    "MARKER": "common",
    "NOTEBOOKS": "common",
    "ROOT": "common",
    "assignment_name": "common",
    "chapter_of": "common",
    "plain_exercises": "markdown",
    "plain_markdown": "markdown",
    "course_notebook": "nbgrader",
    "course_notebook_with_roles": "nbgrader",
    "hidden_tests": "nbgrader",
    "nbgrader_config": "nbgrader",
    "nbgrader_metadata": "nbgrader",
    "record_call": "nbgrader",
    "run_nbgrader": "nbgrader",
    "without_check_calls": "nbgrader",
    "write_course": "nbgrader",
    "book_targets": "numbers",
    "equation_numbers": "numbers",
    "exercise_numbers": "numbers",
    "page_numbers": "numbers",
    "statement_numbers": "numbers",
    "with_enumerators": "numbers",
    "otter_notebook": "otter",
    "otter_requirements": "otter",
    "otter_test": "otter",
    "write_otter": "otter",
    "Exercise": "record",
    "chapters_with_exercises": "record",
    "read_exercises": "record",
    "read_notebook": "record",
    "split_solutions": "record",
    "student_config": "student",
    "student_requirements": "student",
    "write_student_branch": "student",
    "write_student_copies": "student",
}
__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'tools.course' has no attribute {name!r}")
    return getattr(importlib.import_module(f"tools.course.{_HOME[name]}"), name)
