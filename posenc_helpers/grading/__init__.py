"""Grading the book's exercises when the student's code is hostile.

The course (``make course``, ``make otter``) grades each submission in four steps
(the reference run, the sandboxed run, the records, the verdict), with these modules:

=============================================  =============================================
module                                         what it does
=============================================  =============================================
:mod:`posenc_helpers.grading.sandbox`          runs a command in a bubblewrap sandbox, with
                                               limits; nothing of the grader is in reach
:mod:`posenc_helpers.grading.launch`           starts the sandbox's command within its
                                               limits and reads back its result and log
:mod:`posenc_helpers.grading.processes`        what a command left behind, found and
                                               killed (runs without a PID namespace)
:mod:`posenc_helpers.grading.confine`          the student's kernel inside it: a user of
                                               its own and a seccomp filter, so that it
                                               cannot reach the grader's runner
:mod:`posenc_helpers.grading.cgroups`          a budget per sandbox: a control group's
                                               memory, CPU and processes
:mod:`posenc_helpers.grading.runtime`          what a sandbox is made of: the runtime's
                                               folders, system files and environment
:mod:`posenc_helpers.grading.submission`       what a submission's folder may hold (no
                                               links, no special files)
:mod:`posenc_helpers.grading.execute`          sends a notebook's cells into the sandbox and
                                               reads back only their outputs
:mod:`posenc_helpers.grading.runner`           inside the sandbox: runs the cells in a
                                               kernel, each with its time limit
:mod:`posenc_helpers.grading.record`           what the hidden tests run in the kernel: they
                                               record the answers, never judge them
:mod:`posenc_helpers.grading.reference`        the grader's own run of the release: the data
                                               each exercise gives, and cell timings
:mod:`posenc_helpers.grading.verdict`          the grade, outside the sandbox, in a fresh
                                               ``python -I -S``, on the recorded answers
:mod:`posenc_helpers.grading.scan`             reading the student's cells: helpers that do
                                               the work, code that reaches into the kernel
:mod:`posenc_helpers.grading.values`           answers as JSON (never pickles), functions as
                                               the calls the check made to them
:mod:`posenc_helpers.grading.container`        whether the container the grader runs in is
                                               confined enough to be the sandbox itself
:mod:`posenc_helpers.grading.isolation`        which of the two a grade runs with here
                                               (bubblewrap first), or none when asked
:mod:`posenc_helpers.grading.one`              one submission graded anywhere (``python -m
                                               posenc_helpers.grading one``): a JSON result
:mod:`posenc_helpers.grading.pod`              a Kubernetes Job's pod around it: stage the
                                               submission, grade it, publish the result
``posenc_helpers.grading.nbgrader``            the nbgrader preprocessors that do the above
``posenc_helpers.grading.otter``               the otter-grader plugin that does the above
=============================================  =============================================

Importing this package imports none of them; nbgrader and otter are imported only by
their own modules. Grading lives in the package, not in ``tools/course``, because a
grading environment (Gradescope's included) installs only the package.
"""

__all__: list[str] = []
