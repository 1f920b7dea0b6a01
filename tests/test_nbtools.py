"""Notebook tooling: normalisation, audit, and the student export that never overwrites."""

import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import nbtools  # noqa: E402


def _notebook():
    cells = [
        new_markdown_cell("# 9. A chapter"),
        new_code_cell("x = 1", execution_count=1),
        new_markdown_cell("```{exercise-start}\n:label: ex\n```\nDo it."),
        new_code_cell("answer = None", execution_count=2),
        new_markdown_cell("```{exercise-end}\n```\n\n```{solution-start} ex\n:class: dropdown\n```\nWhy."),
        new_code_cell("answer = 42", execution_count=3, metadata={"tags": ["solution"]}),
        new_markdown_cell("```{solution-end}\n```"),
        new_markdown_cell("## Key takeaways"),
    ]
    return new_notebook(cells=cells, metadata={"kernelspec": dict(nbtools.CANONICAL_KERNELSPEC)})


def test_normalize_strips_widget_state_and_timing():
    nb = _notebook()
    nb.metadata["widgets"] = {"state": {}}
    nb.metadata["language_info"] = {"name": "python", "version": "3.11.7"}
    nb.cells[1].metadata["execution"] = {"iopub.execute_input": "2026-01-01T00:00:00"}
    nb.cells[1].outputs = [
        new_output("display_data", data={"application/vnd.jupyter.widget-view+json": {"model_id": "abc"}, "text/plain": "VBox()"}),
        new_output("stream", name="stdout", text="kept\n"),
    ]
    nbtools.normalize(nb)
    assert "widgets" not in nb.metadata
    assert "version" not in nb.metadata["language_info"]
    assert "execution" not in nb.cells[1].metadata
    assert [o.output_type for o in nb.cells[1].outputs] == ["stream"]
    assert nbtools.audit(nb) == []


@pytest.mark.parametrize(
    "break_it, problem",
    [
        (lambda nb: setattr(nb.cells[3], "execution_count", None), "unexecuted"),
        (lambda nb: setattr(nb.cells[3], "execution_count", 7), "top to bottom"),
        (lambda nb: nb.cells[1].outputs.append(new_output("error", ename="ValueError", evalue="", traceback=[])), "error output"),
        (lambda nb: nb.cells[1].outputs.append(new_output("stream", name="stderr", text="warn")), "stderr"),
        (lambda nb: nb.cells[1].outputs.append(new_output("stream", name="stdout", text="/home/alice/x.py")), "machine path"),
        (lambda nb: nb.cells[1].outputs.append(new_output("stream", name="stdout", text="<Foo object at 0x7f3a2b1c9d40>")), "memory address"),
        (lambda nb: nb.metadata.update(widgets={}), "widget state"),
    ],
)
def test_audit_catches(break_it, problem):
    nb = _notebook()
    break_it(nb)
    assert any(problem in p for p in nbtools.audit(nb)), nbtools.audit(nb)


def test_error_allowed_when_tagged():
    nb = _notebook()
    nb.cells[1].metadata["tags"] = ["raises-exception"]
    nb.cells[1].outputs.append(new_output("error", ename="ValueError", evalue="", traceback=[]))
    assert nbtools.audit(nb) == []


def test_student_version_drops_solutions_and_outputs():
    nb = _notebook()
    nb.cells[3].outputs = [new_output("stream", name="stdout", text="x")]
    student = nbtools.student_version(nb)
    sources = [c.source for c in student.cells]
    assert not any("solution" in s for s in sources)
    assert "answer = None" in sources and "answer = 42" not in sources
    assert "## Key takeaways" in sources
    assert all(c.outputs == [] and c.execution_count is None for c in student.cells if c.cell_type == "code")
    assert len(nb.cells) == 8  # the original is untouched


def test_student_version_drops_plain_solution_directives():
    nb = _notebook()
    nb.cells.append(new_markdown_cell(
        "```{exercise}\n:label: ex-explain\n\nExplain it.\n```\n\n"
        "```{solution} ex-explain\n:class: dropdown\n\nThe secret answer.\n```\n\n"
        "::::{solution} ex-explain\nAnother secret.\n::::\nAfter."
    ))
    student = nbtools.student_version(nb)
    text = student.cells[-1].source
    assert "Explain it." in text and "After." in text
    assert "secret" not in text.lower() and "{solution}" not in text


def test_student_export_never_overwrites_without_force(tmp_path):
    source = tmp_path / "01_x.ipynb"
    nbformat.write(_notebook(), source)
    out = tmp_path / "student"
    nbtools.write_student_versions([source], out, force=False)
    target = out / "01_x.ipynb"
    target.write_text("a student's own work")
    with pytest.raises(FileExistsError, match="--force"):
        nbtools.write_student_versions([source], out, force=False)
    assert target.read_text() == "a student's own work"
    assert nbtools.main(["student", str(source), "--out", str(out)]) == 2
    assert target.read_text() == "a student's own work"
    nbtools.write_student_versions([source], out, force=True)
    assert "answer = None" in target.read_text()


def test_unbalanced_solution_block_is_an_error():
    nb = _notebook()
    del nb.cells[6]
    with pytest.raises(ValueError, match="solution-end"):
        nbtools.student_version(nb)


@pytest.mark.parametrize(
    "path", sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.ipynb")),
    ids=lambda p: p.stem,
)
def test_student_copies_of_the_chapters_hold_no_solutions(path):
    student = nbtools.student_version(nbformat.read(path, as_version=4))
    assert not any("{solution" in cell.source for cell in student.cells)
    assert not any("solution" in cell.metadata.get("tags", []) for cell in student.cells)
    assert any("{exercise" in cell.source for cell in student.cells)
