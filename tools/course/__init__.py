"""The book as a course: nbgrader, otter-grader, the student copies and the exercise numbers.

===================================  ===============================================
module                               what it is for
===================================  ===============================================
:mod:`tools.course.record`           one record per exercise, parsed once per notebook
:mod:`tools.course.numbers`          the website's numbers (exercises, chapters,
                                     sections, figures, equations) for plain copies;
                                     ``:enumerator:`` options (``make sync-setup``)
:mod:`tools.course.markdown`         MyST as plain Markdown (Colab, classic Jupyter)
:mod:`tools.course.citations`        citations as "(Vaswani et al., 2017)"
:mod:`tools.course.nbgrader`         the nbgrader course (``make course``): generated
                                     metadata, model answers, hidden tests
:mod:`tools.course.otter`            otter-grader assignments (``make otter``)
:mod:`tools.course.student`          student copies, the student branch, the student
                                     website (``make student``, ``student-branch``,
                                     ``student-book``)
:mod:`tools.course.grade`            autograde a class, N at a time (``make grade``)
:mod:`tools.course.myst`             the MyST syntax the others read
:mod:`tools.course.common`           folders, chapter names, pins, scripts
===================================  ===============================================

``python -m tools.course`` is the command line (:mod:`tools.course.__main__`). The
names below are the ones the tests, the benchmarks and the instructor guide use.
"""

from __future__ import annotations

from tools.course.citations import citation_labels, plain_name
from tools.course.common import DEFAULT_OUT, MARKER, NOTEBOOKS, ROOT, assignment_name, chapter_of
from tools.course.markdown import plain_exercises, plain_markdown
from tools.course.nbgrader import (
    course_notebook,
    course_notebook_with_roles,
    hidden_tests,
    nbgrader_config,
    nbgrader_metadata,
    record_call,
    run_nbgrader,
    without_check_calls,
    write_course,
)
from tools.course.numbers import (
    book_targets,
    equation_numbers,
    exercise_numbers,
    page_numbers,
    statement_numbers,
    with_enumerators,
)
from tools.course.otter import otter_notebook, otter_requirements, otter_test, write_otter
from tools.course.record import Exercise, chapters_with_exercises, read_exercises, read_notebook, split_solutions
from tools.course.student import student_config, student_requirements, write_student_branch, write_student_copies

__all__ = [
    "DEFAULT_OUT",
    "MARKER",
    "NOTEBOOKS",
    "ROOT",
    "Exercise",
    "assignment_name",
    "book_targets",
    "chapter_of",
    "chapters_with_exercises",
    "citation_labels",
    "course_notebook",
    "course_notebook_with_roles",
    "equation_numbers",
    "exercise_numbers",
    "hidden_tests",
    "nbgrader_config",
    "nbgrader_metadata",
    "otter_notebook",
    "otter_requirements",
    "otter_test",
    "page_numbers",
    "plain_exercises",
    "plain_markdown",
    "plain_name",
    "read_exercises",
    "read_notebook",
    "record_call",
    "run_nbgrader",
    "split_solutions",
    "statement_numbers",
    "student_config",
    "student_requirements",
    "with_enumerators",
    "without_check_calls",
    "write_course",
    "write_otter",
    "write_student_branch",
    "write_student_copies",
]
