"""Working copies for JupyterLab (tools/working_copies.py: make lab, make lab-student).

Where the solutions are is worked out independently, by tests/_solutions.py (which
the student website's and the course's tests share)."""

import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from tools import working_copies

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _solutions import exercise_labels, solution_lines, split_lines  # noqa: E402

from tools.chapters import chapter_notebooks

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = chapter_notebooks()


@pytest.fixture(params=NOTEBOOKS, ids=lambda p: p.stem)
def chapter(request):
    return nbformat.read(request.param, as_version=4)


def test_a_student_copy_holds_no_solution_and_every_exercise(chapter):
    copy = working_copies.working_copy(chapter, student=True)
    lines = {line.strip() for cell in copy.cells for line in cell.source.splitlines()}
    assert solution_lines(chapter), "the chapter has solutions to leave out"
    assert not solution_lines(chapter) & lines
    inside, _ = split_lines(copy)
    assert inside == []
    assert exercise_labels(copy) == exercise_labels(chapter)
    # Every code cell outside the solutions is there, in order, with its outputs.
    kept = [c for c in chapter.cells if c.cell_type == "code" and "solution" not in c.metadata.get("tags", [])]
    assert [c.source for c in copy.cells if c.cell_type == "code"] == [c.source for c in kept]
    assert [c.get("outputs") for c in copy.cells if c.cell_type == "code"] == [c.get("outputs") for c in kept]


def test_a_book_copy_is_the_chapter_unpaired_from_its_twin(chapter):
    copy = working_copies.working_copy(chapter, student=False)
    assert copy.cells == chapter.cells
    assert "jupytext" in chapter.metadata and "jupytext" not in copy.metadata
    # The version the kernel will report (this Python's), so that opening the copy changes nothing.
    assert "version" not in chapter.metadata["language_info"]
    assert copy.metadata["language_info"]["version"] == "{}.{}.{}".format(*sys.version_info[:3])


def test_gated_and_plain_solutions_are_cut_where_they_start_and_end():
    nb = new_notebook(
        cells=[
            new_markdown_cell("```{exercise-start}\n:label: ex-a\n```\nDo it."),
            new_code_cell("answer = None"),
            new_markdown_cell("```{exercise-end}\n```\n\n```{solution-start} ex-a\n:class: dropdown\n```\nBecause 42."),
            new_code_cell("answer = 42", metadata={"tags": ["solution"]}),
            new_markdown_cell(
                "```{solution-end}\n```\n\nBetween the exercises.\n\n```{exercise}\n:label: ex-b\nWhy?\n```"
            ),
            new_markdown_cell("```{solution} ex-b\n:class: dropdown\n\nSo.\n```"),
            new_markdown_cell("## Key takeaways"),
        ]
    )
    copy = working_copies.without_solutions(nb)
    assert [c.source for c in copy.cells] == [
        "```{exercise-start}\n:label: ex-a\n```\nDo it.",
        "answer = None",
        "```{exercise-end}\n```",
        "Between the exercises.\n\n```{exercise}\n:label: ex-b\nWhy?\n```",
        "## Key takeaways",
    ]
    with pytest.raises(ValueError, match="nb"):
        working_copies.without_solutions(new_notebook(cells=nb.cells[:4]))


def test_copies_keep_the_readers_work_unless_forced(tmp_path):
    source = NOTEBOOKS[0]
    written, kept = working_copies.write_copies([source], tmp_path, student=True)
    assert written == [tmp_path / source.name] and kept == []
    (tmp_path / source.name).write_text("the reader's work")
    written, kept = working_copies.write_copies([source], tmp_path, student=True)
    assert written == [] and (tmp_path / source.name).read_text() == "the reader's work"
    written, _ = working_copies.write_copies([source], tmp_path, student=True, force=True)
    assert written == [tmp_path / source.name]
    assert nbformat.read(tmp_path / source.name, as_version=4).cells


def test_bad_input_is_refused_by_name(tmp_path):
    with pytest.raises(TypeError, match="nb"):
        working_copies.working_copy({"cells": []}, student=True)
    with pytest.raises(ValueError, match="notebooks"):
        working_copies.write_copies([], tmp_path, student=False)


def test_the_command_line_says_what_it_did(tmp_path, capsys):
    assert working_copies.main(["--student", "--out", str(tmp_path), str(NOTEBOOKS[0])]) == 0
    assert "1 chapter(s) copied without solutions" in capsys.readouterr().out
    assert working_copies.main(["--out", str(tmp_path), str(NOTEBOOKS[0])]) == 0
    assert "kept as you left them" in capsys.readouterr().out


def test_the_kits_references_point_at_the_copies_beside(tmp_path):
    """Issue 46: chapter 14's stored reports said "Explained in the book: ... (notebooks/08_alibi.html#...)",
    a page that does not exist in JupyterLab. In the working copies they name the chapter, the section's
    number as that chapter's copy shows it in its heading, and the notebook beside; the folder carries
    the marker by which a kernel there writes them the same way."""
    from posenc_helpers.conformance import WORKING_COPIES_MARKER

    museum, alibi = ROOT / "notebooks" / "14_positional_bugs_museum.ipynb", ROOT / "notebooks" / "08_alibi.ipynb"
    working_copies.write_copies([museum, alibi], tmp_path, student=True)
    assert (tmp_path / WORKING_COPIES_MARKER).is_file()
    printed = "".join(
        "".join(output.get("text", ""))
        for cell in nbformat.read(tmp_path / museum.name, as_version=4).cells
        for output in cell.get("outputs", [])
    )
    assert "Explained in the book: chapter 08" in "".join(
        "".join(o.get("text", "")) for c in nbformat.read(museum, as_version=4).cells for o in c.get("outputs", [])
    )
    assert ".html#" not in printed
    slopes = [line for line in printed.splitlines() if line.startswith("Explained in the book: chapter 8,")]
    headings = [c.source for c in nbformat.read(tmp_path / alibi.name, as_version=4).cells if c.cell_type == "markdown"]
    (number,) = {m.group(1) for text in headings for m in re.finditer(r"^## (8\.\d+) The slopes$", text, re.M)}
    assert slopes and set(slopes) == {
        f'Explained in the book: chapter 8, section {number}, "The slopes" (08_alibi.ipynb, in this folder).'
    }
    assert working_copies.sections_for_jupyterlab("no reference here", {}) == "no reference here"
