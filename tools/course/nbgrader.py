"""The book's chapters as an nbgrader course: ``make course``.

Every chapter with exercises becomes an nbgrader assignment ``chNN``, written as
``OUT/source/chNN/<notebook>.ipynb`` from the book's notebook and its exercise
records (:mod:`tools.course.record`):

* nbgrader's cell metadata is generated from the records (:func:`nbgrader_metadata`):
  each code exercise is a locked set-up cell, an answer cell and a locked test cell
  with points, each written answer a manually graded answer cell;
* the book shows each solution in a folded block after its exercise; nbgrader wants
  it inside the answer cell, between ``### BEGIN SOLUTION`` and ``### END SOLUTION``.
  The solution's code (without its calls to the check) moves into the answer cell,
  its words into the written answer cell as the model answer, and the folded blocks go;
* before each visible check, hidden tests (``### BEGIN HIDDEN TESTS``) record the
  values the check is given (:mod:`posenc_helpers.grading.record`) and judge
  nothing: the course's ``nbgrader_config.py`` replaces nbgrader's ``Execute`` with
  preprocessors that run the submission in a bubblewrap sandbox, judge the records
  outside it, in a fresh ``python -I -S`` process, on the data the grader's own run
  of the release gives, read the notebook for a helper that does the exercise's work
  and for code that tampers with the kernel, and set the points
  (:mod:`posenc_helpers.grading`);
* what only MyST renders becomes plain Markdown (:mod:`tools.course.markdown`), and
  the numbers Sphinx gives the website are written in (:mod:`tools.course.numbers`):
  ``# 4. Title`` and ``## 4.1 Section`` headings, a ``**Figure 4.1.** caption`` cell
  after each figure, "Exercise 4.2" headings, equation numbers and references.

Then ``nbgrader generate_assignment`` itself writes the student version
(``OUT/release``: solutions, hidden tests and outputs cleared, cells locked,
checksums recorded) and the gradebook. ``OUT/nbgrader_config.py`` sets the stubs
and the grading preprocessors; ``nbgrader autograde chNN`` and ``nbgrader
generate_feedback chNN`` run in ``OUT`` (feedback without the hidden tests).
"""

from __future__ import annotations

import ast
import copy
import json
import re
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from posenc_helpers.grading.verdict import RECORD_CALL, RECORD_IMPORT
from tools.bibliography import citation_labels
from tools.course.common import assignment_name, chapter_of, prepare, run_script
from tools.course.markdown import plain_exercises, plain_markdown
from tools.course.myst import cell_source
from tools.course.numbers import (
    Target,
    book_targets,
    equation_numbers,
    numfig_formats,
    page_numbers,
    statement_numbers,
)
from tools.course.record import ChapterExercises, Exercise, read_exercises

CODE_STUB = "# (your code)"
TEXT_STUB = "*Write your answer here.*"
ANSWER_PROMPT = "*Your answer (a few sentences):*"  # what a written answer cell holds in the book
SCHEMA_VERSION = 3  # nbgrader's cell metadata schema

#: One course cell's exercise and part (None for a cell outside the exercises).
Role = tuple[Exercise, str] | None


# --------------------------------------------------------------------------- nbgrader's metadata


def _block(
    grade_id: str, *, grade: bool = False, locked: bool = False, solution: bool = False, points: int = 0
) -> dict[str, Any]:
    block: dict[str, Any] = {"grade": grade, "grade_id": grade_id, "locked": locked}
    if grade:
        block["points"] = points
    block.update(schema_version=SCHEMA_VERSION, solution=solution, task=False)
    return block


def nbgrader_metadata(exercises: Iterable[Exercise]) -> dict[int, dict[str, Any]]:
    """Cell index -> nbgrader's metadata for every cell of the ``exercises``.

    A set-up cell is locked (``<label>-setup``, then ``-setup-2`` ...), an answer cell is
    a solution (``<label>-answer``), the check cell is graded and locked (``<label>``,
    with the check's points), a written answer is graded and a solution (``<label>``
    for a prose exercise, ``<label>-words`` for a code exercise's written part).
    """
    blocks: dict[int, dict[str, Any]] = {}
    for exercise in exercises:
        label = exercise.label
        for place, index in enumerate(exercise.setup, start=1):
            blocks[index] = _block(f"{label}-setup" + (f"-{place}" if place > 1 else ""), locked=True)
        if exercise.answer is not None:
            blocks[exercise.answer] = _block(f"{label}-answer", solution=True)
        if exercise.check is not None:
            blocks[exercise.check] = _block(label, grade=True, locked=True, points=exercise.points)
        if exercise.words is not None:
            grade_id = label if exercise.kind == "prose" else f"{label}-words"
            blocks[exercise.words] = _block(grade_id, grade=True, solution=True, points=exercise.words_points)
    return blocks


def nbgrader_of(cell: dict[str, Any]) -> dict[str, Any]:
    """A course cell's nbgrader metadata ({} for none)."""
    return dict(cell.get("metadata", {}).get("nbgrader", {}))


# --------------------------------------------------------------------------- hidden tests


def without_check_calls(source: str) -> str:
    """``source`` without its top-level calls to a ``check_*`` function (the grader calls them)."""
    tree = ast.parse(source)
    lines = source.split("\n")
    drop: set[int] = set()
    for node in tree.body:
        call = node.value if isinstance(node, ast.Expr) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id.startswith("check_"):
            drop.update(range(node.lineno - 1, (node.end_lineno or node.lineno)))
    kept = [line for i, line in enumerate(lines) if i not in drop]
    return "\n".join(kept).strip("\n")


def check_call(check_source: str, label: str) -> ast.Call:
    """The check call that ends a test cell (``check_x(a, n=3)``)."""
    tree = ast.parse(check_source)
    call = tree.body[-1].value if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id.startswith("check_")):
        raise ValueError(f"{label}: the test cell must end with a call to its check")
    return call


def grading_spec(check_source: str, label: str, exercise: Mapping[str, Any]) -> dict[str, Any]:
    """What the grader needs to know about exercise ``label``: its check, answer names and the
    helpers its answer must not (``forbid``) or must (``require``) call (``exercise``: the
    options, as :meth:`Exercise.options` gives them)."""
    call = check_call(check_source, label)
    answers = exercise.get("answer", [])
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        raise ValueError(f"{label}: the exercise metadata's answer must be a list of names; got {answers!r}")
    return {
        "label": label,
        "check": call.func.id,  # type: ignore[attr-defined]
        "answers": list(answers),
        "forbid": list(exercise.get("forbid", [])),
        "require": list(exercise.get("require", [])),
    }


def record_call(check_source: str, label: str, exercise: Mapping[str, Any]) -> str:
    """The visible check call rewritten to record its arguments for the grader:
    ``check_x(a, n=3)`` -> ``_record.record({...spec...}, a, n=3)`` (the verdict's
    :data:`~posenc_helpers.grading.verdict.RECORD_CALL`)."""
    call = check_call(check_source, label)
    written = ast.get_source_segment(check_source, call) or ast.unparse(call)
    arguments = written[written.index("(") + 1 :]
    spec = repr(grading_spec(check_source, label, exercise))
    return f"{RECORD_CALL}({spec}, {arguments}" if arguments.strip() != ")" else f"{RECORD_CALL}({spec})"


def hidden_tests(check_source: str, label: str, exercise: Mapping[str, Any]) -> str:
    """The hidden tests that come before the visible check ``check_source`` of exercise ``label``.

    They record the values the check is given and judge nothing: the grader judges them
    outside the student's kernel (:mod:`posenc_helpers.grading.verdict`). They run first,
    so that a failing visible check cannot stop the record.
    """
    lines = [
        "### BEGIN HIDDEN TESTS",
        RECORD_IMPORT,
        "",
        record_call(check_source, label, exercise),
        "### END HIDDEN TESTS",
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------- the course notebook


def _caption_cell(code: dict[str, Any], figure: Target, text: str) -> dict[str, Any]:
    """The Markdown cell that shows a figure's number and caption after its code cell."""
    cell: dict[str, Any] = {"cell_type": "markdown"}
    if code.get("id"):
        cell["id"] = f"{str(code['id'])[:56]}-caption"
    cell.update(metadata={}, source=f"**Figure {figure.number}.** {text}")
    return cell


def course_notebook_with_roles(
    nb: dict[str, Any],
    chapter: int,
    *,
    targets: Mapping[str, Target] | None = None,
    citations: Mapping[str, str] | None = None,
    formats: Mapping[str, str] | None = None,
) -> tuple[dict[str, Any], list[Role], ChapterExercises]:
    """The nbgrader source version of a chapter notebook (see the module docstring), the
    exercise and part of each of its cells, and the chapter's exercise records.

    ``targets`` are the labels of the other pages that ``{numref}`` and ``{ref}`` may name
    (default: every label of the book's other chapters and pages); ``citations`` and
    ``formats`` (``numfig_format``) default to the book's.
    """
    nb = copy.deepcopy(nb)
    page = page_numbers(nb["cells"], chapter)
    # The same cells with numbered headings and no label lines, as plain Markdown shows them.
    book_cells = [
        {**cell, "source": page.sources[index]} if index in page.sources else cell
        for index, cell in enumerate(nb["cells"])
    ]
    sheet = read_exercises(book_cells, chapter)
    targets = {**(book_targets(exclude_chapter=chapter) if targets is None else targets), **page.targets}
    citations = citation_labels() if citations is None else citations
    formats = numfig_formats() if formats is None else formats
    numbers = sheet.numbers
    equations, statements = equation_numbers(book_cells), statement_numbers(book_cells)

    def plain(text: str) -> str:
        return plain_markdown(text, equations, citations, statements, targets, formats)

    blocks = nbgrader_metadata(sheet.exercises)
    cells: list[dict[str, Any]] = []
    roles: list[Role] = []
    for index, cell in sheet.kept:
        text = cell_source(cell)
        role = sheet.part(index)
        if cell["cell_type"] == "markdown":
            text = plain(text)
            cell["source"] = text if role is not None else plain_exercises(text, numbers)
        if role is not None:
            exercise, part = role
            metadata = {key: value for key, value in cell.get("metadata", {}).items() if key != "exercise"}
            cell["metadata"] = dict(sorted({**metadata, "nbgrader": blocks[index]}.items()))
            if part == "answer":
                code = [without_check_calls(source) for source in exercise.solution_code]
                if not code:
                    raise ValueError(f"{exercise.label}: an answer cell with no solution in the book")
                cell["source"] = f"{text.rstrip()}\n### BEGIN SOLUTION\n" + "\n\n".join(code) + "\n### END SOLUTION"
            elif part == "check":
                cell["source"] = hidden_tests(text, exercise.label, exercise.options()) + "\n" + text.rstrip()
            elif part == "words":  # a question in words: the model answer, hidden from students
                words = [plain(words) for words in exercise.solution_words]
                if not words:
                    raise ValueError(f"{exercise.label}: a written answer cell with no model answer in the book")
                question = "" if exercise.kind == "prose" else text.replace(ANSWER_PROMPT, "").strip()
                model = "\n\n".join(words)
                cell["source"] = (
                    question + "\n\n" if question else ""
                ) + f"### BEGIN SOLUTION\n{model}\n### END SOLUTION"
                cell["metadata"]["tags"] = [tag for tag in cell["metadata"].get("tags", []) if tag != "remove-cell"]
        cells.append(cell)
        roles.append(role)
        figure = page.figures.get(index)
        if figure is not None:  # the caption the website shows under the figure
            mystnb = {key: value for key, value in cell["metadata"]["mystnb"].items() if key != "figure"}
            cell["metadata"] = {
                key: mystnb if key == "mystnb" else value
                for key, value in cell["metadata"].items()
                if key != "mystnb" or mystnb
            }
            cells.append(_caption_cell(cell, figure, plain(figure.title)))
            roles.append(None)
    for cell in cells:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
        elif not nbgrader_of(cell):
            cell["source"] = _tidy(cell_source(cell))
    kept = [
        i
        for i, cell in enumerate(cells)
        if cell["cell_type"] == "code" or cell_source(cell).strip() or nbgrader_of(cell)
    ]
    nb["cells"] = [cells[i] for i in kept]
    return nb, [roles[i] for i in kept], sheet


def _tidy(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n") + "\n"


def course_notebook(nb: dict[str, Any], chapter: int, **options: Any) -> dict[str, Any]:
    """The nbgrader source version of a chapter notebook (see the module docstring and
    :func:`course_notebook_with_roles` for ``options``)."""
    return course_notebook_with_roles(nb, chapter, **options)[0]


# --------------------------------------------------------------------------- the course folder


def nbgrader_config() -> str:
    """The course's ``nbgrader_config.py``."""
    return (
        "# Written by tools/course (make course).\n"
        "c = get_config()  # noqa: F821\n"
        'c.CourseDirectory.course_id = "positional-encoding"\n'
        f"c.ClearSolutions.code_stub = {{'python': {CODE_STUB!r}}}\n"
        f"c.ClearSolutions.text_stub = {TEXT_STUB!r}\n"
        "\n"
        "# Grading a hostile class (posenc_helpers.grading): each submission runs in a bubblewrap\n"
        "# sandbox instead of nbgrader's Execute, each cell with a time limit derived from the grader's\n"
        "# own run of the release (kept in .grading/); the hidden tests only record each answer, and\n"
        "# GradeFromRecords judges the records outside the sandbox, in a fresh process, and sets the\n"
        "# points. Without bubblewrap it refuses to grade unless POSENC_GRADING_UNSAFE=1.\n"
        "from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor  # noqa: E402\n"
        "from nbgrader.preprocessors import (  # noqa: E402\n"
        "    AssignLatePenalties, CheckCellMetadata, ClearHiddenTests, GetGrades, IgnorePattern, LimitOutput,\n"
        "    SaveAutoGrades,\n"
        ")\n"
        "from posenc_helpers.grading.nbgrader import (  # noqa: E402\n"
        "    BeforeExecution, ForgetUnknownCells, GradeFromRecords, SandboxedExecute,\n"
        ")\n"
        "from nbgrader.preprocessors import (  # noqa: E402\n"
        "    ClearOutput, DeduplicateIds, OverwriteCells, OverwriteKernelspec,\n"
        ")\n"
        "\n"
        "# A cell whose grade_id a student changed becomes an ordinary cell (nbgrader would fail the\n"
        "# whole submission); the exercise it was scores 0, with a line saying why.\n"
        "c.Autograde.sanitize_preprocessors = [\n"
        "    ClearOutput, DeduplicateIds, OverwriteKernelspec, OverwriteCells, ForgetUnknownCells, CheckCellMetadata,\n"
        "]\n"
        "c.Autograde.autograde_preprocessors = [\n"
        "    BeforeExecution, SandboxedExecute, GradeFromRecords, IgnorePattern, ClearMetadataPreprocessor,\n"
        "    LimitOutput, SaveAutoGrades, AssignLatePenalties, CheckCellMetadata,\n"
        "]\n"
        "# Feedback shows each check's message, never the hidden tests (which name the refused helpers).\n"
        "c.GenerateFeedback.preprocessors = [GetGrades, ClearHiddenTests, CSSHTMLHeaderPreprocessor]\n"
        "c.SandboxedExecute.memory_gib = 6.0  # address space of each process of a submission\n"
    )


def run_nbgrader(arguments: list[str], course: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run ``nbgrader ARGUMENTS`` in the course folder ``course``."""
    return run_script("nbgrader", [*arguments, "--log-level=WARN"], course, **kwargs)


def write_course(out: Path, chapters: list[Path], *, force: bool = False) -> list[str]:
    """Write the course into ``out`` and run ``nbgrader generate_assignment``; the assignment names."""
    prepare(out, force)
    (out / "nbgrader_config.py").write_text(nbgrader_config(), encoding="utf-8")
    names = []
    for path in chapters:
        name = assignment_name(path)
        source_dir = out / "source" / name
        if source_dir.exists():
            shutil.rmtree(source_dir)
        source_dir.mkdir(parents=True)
        nb = json.loads(path.read_text(encoding="utf-8"))
        (source_dir / path.name).write_text(
            json.dumps(course_notebook(nb, chapter_of(path)), indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        names.append(name)
    for name in names:
        run_nbgrader(["generate_assignment", name, "--force"], out)
    return names
