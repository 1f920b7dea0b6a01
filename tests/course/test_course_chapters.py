"""Every chapter's course edition, run as a student and as the instructor.

``make course`` writes, per chapter with exercises, the nbgrader source (model
answers inside the answer cells, hidden tests after each check) and the release
that ``nbgrader generate_assignment`` makes from it. Here

* the release runs top to bottom in a fresh kernel without an error, every check
  saying "Not attempted yet", holds no line of any model answer, and no MyST
  syntax (it must read cleanly in Colab);
* the source runs top to bottom without an error: every hidden test passes on the
  model answers, so a correct submission earns every autograded point.

The student copies are nbgrader's release, executed once, here. Chapter 11 trains
its models in the release's run; the source's run reads them back
(``POSENC_LAB_CACHE``, :mod:`posenc_helpers.lab.cache`): the notebook tests train
every model, and training twice here would prove nothing more.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from _solutions import solution_lines

from posenc_helpers.lab.cache import CACHE_VARIABLE
from tools.chapters import chapter_notebooks
from tools.course import assignment_name, chapters_with_exercises, write_course

CHAPTERS = chapters_with_exercises()
# a role ({eq}`x`, {prf:ref}`y`), a directive fence (```{note}, :::{prf:proof}), a labelled equation
_MYST = re.compile(r"\{[\w:-]+\}`|^(?:`{3,}|:{3,})\{|^\$\$[ \t]*\(", re.MULTILINE)
_SOLUTION = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.DOTALL)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    folder = tmp_path_factory.mktemp("course")
    write_course(folder, CHAPTERS)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module", autouse=True)
def training_runs_stored_once(tmp_path_factory):
    """The kernels started here share one store of training runs (they inherit the variable):
    make test's, when it set one for all its notebook runs, else a fresh folder."""
    patch = pytest.MonkeyPatch()
    if not os.environ.get(CACHE_VARIABLE):
        patch.setenv(CACHE_VARIABLE, str(tmp_path_factory.mktemp("lab-runs")))
    yield
    patch.undo()


def _run(path: Path) -> nbformat.NotebookNode:
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb, kernel_name="python3", timeout=300, allow_errors=True, resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    return nb


def _errors(nb: nbformat.NotebookNode) -> list[str]:
    return [
        f"{cell.metadata.get('nbgrader', {}).get('grade_id', cell.source[:40])}: {out.ename}: {out.evalue[:200]}"
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.outputs
        if out.output_type == "error"
    ]


def _text(cell: nbformat.NotebookNode) -> str:
    return "".join(out.get("text", "") + str(out.get("data", {}).get("text/plain", "")) for out in cell.outputs)


def test_every_chapter_with_exercises_is_in_the_course():
    notebooks = chapter_notebooks(CHAPTERS[0].parent)
    assert len(notebooks) >= 12
    assert [assignment_name(path) for path in CHAPTERS] == [f"ch{path.name[:2]}" for path in notebooks]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_release_runs_untouched_and_holds_no_answer(course, chapter):
    name = assignment_name(chapter)
    release = course / "release" / name / chapter.name
    source_text = json.loads((course / "source" / name / chapter.name).read_text())
    model_lines = {
        line.strip()
        for cell in source_text["cells"]
        for block in _SOLUTION.findall("".join(cell["source"]))
        for line in block.splitlines()
        if len(line.strip()) > 12 and not line.strip().startswith("#")
    }
    # lines the chapter also has outside any model answer (its own code and text) are not answers
    model_lines -= {
        line.strip()
        for cell in source_text["cells"]
        for line in _SOLUTION.sub("", "".join(cell["source"])).splitlines()
    }
    release_cells = json.loads(release.read_text())["cells"]
    release_lines = {line.strip() for cell in release_cells for line in "".join(cell["source"]).splitlines()}
    leaked = sorted(model_lines & release_lines)
    assert not leaked, f"model answer lines in the release of {name}: {leaked[:5]}"
    # and, found independently of tools/course, no line of the book's own solutions
    book_leaked = sorted(solution_lines(json.loads(chapter.read_text())) & release_lines)
    assert not book_leaked, f"solution lines of the book in the release of {name}: {book_leaked[:5]}"
    myst = [
        f"{cell['id']}: {match.group(0)}"
        for cell in release_cells
        if cell["cell_type"] == "markdown"
        for match in _MYST.finditer("".join(cell["source"]))
    ]
    assert not myst, f"MyST that Colab shows as raw text in the release of {name}: {myst[:5]}"
    nb = _run(release)
    assert not _errors(nb)
    graded = [cell for cell in nb.cells if cell.metadata.get("nbgrader", {}).get("grade") and cell.cell_type == "code"]
    assert graded, "no autograded cell"
    for cell in graded:
        assert "Not attempted yet" in _text(cell), cell.metadata["nbgrader"]["grade_id"]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_model_answers_pass_every_hidden_test(course, chapter):
    """The source, run as a student would run it, earns every autograded point from the grader
    (which judges the recorded answers outside the kernel) and is never suspected of tampering.

    The data each exercise gives are read here from the same run's records (the grader reads
    them from its own run of the release, which gives the same data: tests/course/test_course_grading.py).
    """
    from posenc_helpers.grading.verdict import exercise_cells, grade, records_in

    name = assignment_name(chapter)
    nb = _run(course / "source" / name / chapter.name)
    assert not _errors(nb)
    released = [cell.source for cell in nbformat.read(course / "release" / name / chapter.name, as_version=4).cells]
    _, places = exercise_cells(nb.cells)
    reference = {label: records_in(nb.cells[index])[0] for label, index in places.items()}
    verdicts = grade(nb.cells, released, reference=reference)
    graded = {
        cell.metadata["nbgrader"]["grade_id"]
        for cell in nb.cells
        if cell.metadata.get("nbgrader", {}).get("grade") and cell.cell_type == "code"
    }
    assert set(verdicts) == graded
    for verdict in verdicts.values():
        assert verdict.earned and not verdict.tampering, verdict.line
