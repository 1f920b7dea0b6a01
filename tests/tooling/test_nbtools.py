"""Notebook tooling: normalisation and audit (the student export is tested in test_student.py)."""

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from tools import nbtools, release
from tools.chapters import chapter_notebooks


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
        new_output(
            "display_data",
            data={"application/vnd.jupyter.widget-view+json": {"model_id": "abc"}, "text/plain": "VBox()"},
        ),
        new_output("stream", name="stdout", text="kept\n"),
    ]
    nbtools.normalize(nb)
    assert "widgets" not in nb.metadata
    assert "version" not in nb.metadata["language_info"]
    assert "execution" not in nb.cells[1].metadata
    assert [o.output_type for o in nb.cells[1].outputs] == ["stream"]
    assert nbtools.audit(nb) == []


def test_solution_cells_fold_in_jupyterlab_and_no_other_cell_does():
    nb = _notebook()
    nb.cells[1].metadata["jupyter"] = {"source_hidden": True}  # a stray fold on a cell the reader needs
    assert nbtools.fold_solutions(nb)
    folded = {i: c.metadata["jupyter"] for i, c in enumerate(nb.cells) if "jupyter" in c.metadata}
    # JupyterLab's own keys for a collapsed input and collapsed outputs, on the one solution cell (5).
    assert folded == {5: {"source_hidden": True, "outputs_hidden": True}}
    assert not nbtools.fold_solutions(nb), "a second pass changes nothing"
    nb.cells[5].metadata.pop("jupyter")
    nbtools.normalize(nb)
    assert nb.cells[5].metadata["jupyter"] == {"source_hidden": True, "outputs_hidden": True}


def _widget_view():
    return new_output(
        "display_data",
        data={"application/vnd.jupyter.widget-view+json": {"model_id": "abc"}, "text/plain": "HBox()"},
    )


def test_a_widget_view_left_outside_the_explorer_is_reported():
    nb = _notebook()
    nb.cells[1].outputs = [_widget_view()]  # a progress bar, closed but not cleared
    nb.cells.insert(2, new_code_cell("from posenc_helpers.widgets import AnExplorer\nAnExplorer()", execution_count=9))
    nb.cells[2].outputs = [_widget_view()]  # the explorer's own view is what the cell is for
    assert nbtools.stray_widget_views(nb) == ["cell 1: a widget view left in the output after the run"]
    nb.cells[1].outputs = []  # clear_output() once the bar is done
    assert nbtools.stray_widget_views(nb) == []


def test_the_restart_note_sits_just_before_the_explorer_once():
    nb = _notebook()
    explorer = new_code_cell("from posenc_helpers.widgets import AnExplorer\nAnExplorer()")
    nb.cells.insert(3, explorer)
    assert nbtools.sync_restart_note(nb)
    note = nb.cells[3]
    assert note.cell_type == "markdown" and nb.cells[4] is explorer
    text = note.source.replace("*", "")
    assert "Error displaying widget: model not found" in text  # after a reload or reopening
    # after a kernel restart the view stays, but nothing redraws (issue 38, item 5); in JupyterLab its
    # controls are switched off, with a note (issue 46, item 8: posenc_helpers/widgets/_explorer.py)
    assert "kernel restarts" in text and "nothing redraws" in text and "switch its controls off" in text
    assert note.metadata["tags"] == ["remove-cell"]  # the website shows a static companion instead
    assert note.id == "explorer-restart-note"
    assert not nbtools.sync_restart_note(nb), "a second pass changes nothing"
    note.source = nbtools.RESTART_MARKER + ": an older wording"
    assert nbtools.sync_restart_note(nb) and note.source == nbtools.RESTART_NOTE
    assert sum(cell.source == nbtools.RESTART_NOTE for cell in nb.cells) == 1
    assert not nbtools.sync_restart_note(_notebook()), "a chapter without an explorer gets no note"


def test_normalize_merges_a_stream_split_by_timing():
    nb = _notebook()
    nb.cells[1].outputs = [
        new_output("stream", name="stdout", text="first line\nsecond "),
        new_output("stream", name="stdout", text="line\n"),
        new_output("stream", name="stderr", text="a warning\n"),
        new_output("stream", name="stdout", text="after\n"),
    ]
    nbtools.normalize(nb)
    assert [(o.name, o.text) for o in nb.cells[1].outputs] == [
        ("stdout", "first line\nsecond line\n"),
        ("stderr", "a warning\n"),
        ("stdout", "after\n"),
    ]


@pytest.mark.parametrize(
    "break_it, problem",
    [
        (lambda nb: setattr(nb.cells[3], "execution_count", None), "unexecuted"),
        (lambda nb: setattr(nb.cells[3], "execution_count", 7), "top to bottom"),
        (
            lambda nb: nb.cells[1].outputs.append(new_output("error", ename="ValueError", evalue="", traceback=[])),
            "error output",
        ),
        (lambda nb: nb.cells[1].outputs.append(new_output("stream", name="stderr", text="warn")), "stderr"),
        (
            lambda nb: nb.cells[1].outputs.append(new_output("stream", name="stdout", text="/home/alice/x.py")),
            "machine path",
        ),
        (
            lambda nb: nb.cells[1].outputs.append(
                new_output("stream", name="stdout", text="<Foo object at 0x7f3a2b1c9d40>")
            ),
            "memory address",
        ),
        (lambda nb: nb.metadata.update(widgets={}), "widget state"),
        (lambda nb: setattr(nb.cells[0], "source", "the angle $\x0barphi$"), "control character"),
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


# --------------------------------------------------------------------------- rounding-level figures
@pytest.mark.parametrize(
    "text, figures",
    [
        ("largest error 2.3e-13", ["2.3e-13"]),  # the noise itself
        ("| 1 | 9999 | 62.093684 | 3.8e-12 |", ["3.8e-12"]),  # in a Markdown table
        ("residual 9e-16 and 1.1E-15", ["9e-16", "1.1E-15"]),
        ("residual 1e-15", ["1e-15"]),  # a power of ten, but not called a bound
        ("drift 0.00000000000123", ["0.00000000000123"]),
        ("residual below 1e-12", []),  # the asserted bound
        ("differ by less than 1e-10, within 1e-12, error < 1e-12, ≤ 1e-9", []),
        ("largest error 0.0e+00", []),  # exactly zero is exact everywhere
        ("the closest pair differs by 1.3e-07", []),  # a real value, far above rounding
        ("median weight 2e-09, scale 3.2e+38, ptp 1.5", []),
        ("run_1e-15_label", []),  # part of a word
    ],
)
def test_rounding_level_figures(text, figures):
    assert nbtools.rounding_level_figures(text) == figures


def test_audit_names_the_cell_and_the_figure():
    nb = _notebook()
    nb.cells[3].outputs = [
        new_output(
            "execute_result", execution_count=2, data={"text/markdown": "| φ | spread |\n|---|---|\n| 1 | 4.4e-12 |"}
        )
    ]
    problems = nbtools.audit(nb)
    assert len(problems) == 1 and "cell 3" in problems[0] and "4.4e-12" in problems[0], problems
    nb.cells[3].outputs = [new_output("stream", name="stdout", text="spread below 1e-9\n")]
    assert nbtools.audit(nb) == []


def test_audit_finds_no_rounding_level_figure_in_any_chapter():
    chapters = chapter_notebooks()
    found = {
        f"{path.name} cell {index}": figures
        for path in chapters
        for index, cell in enumerate(nbformat.read(path, as_version=4).cells)
        if cell.cell_type == "code"
        for figures in [[f for text in nbtools.output_texts(cell) for f in nbtools.rounding_level_figures(text)]]
        if figures
    }
    assert not found, found


# --------------------------------------------------------------------------- the text twins
CHAPTERS = chapter_notebooks()


def test_every_chapter_has_a_text_twin_with_the_same_cells():
    import jupytext

    for path in CHAPTERS:
        twin = nbtools.text_path(path)
        assert twin.exists(), f"{twin} missing: run `make text`"
        notebook = nbformat.read(path, as_version=4)
        from_text = jupytext.read(twin)
        assert [(c.cell_type, c.source) for c in from_text.cells] == [
            (c.cell_type, c.source) for c in notebook.cells
        ], f"{twin.name} and {path.name} differ: run `make text` (or jupytext --sync)"
        assert [c.metadata.get("tags", []) for c in from_text.cells] == [
            c.metadata.get("tags", []) for c in notebook.cells
        ]


def test_audit_reports_a_stale_text_twin(tmp_path):
    nb = _notebook()
    path = tmp_path / "09_chapter.ipynb"
    nbformat.write(nb, path)
    assert any("text twin" in p for p in nbtools.audit_paths([path])[path])
    nbtools.write_text(path)
    assert not any("text twin" in p for p in nbtools.audit_paths([path]).get(path, []))
    nbtools.text_path(path).write_text(nbtools.text_path(path).read_text().replace("Do it.", "Do it now."))
    assert any("out of date" in p for p in nbtools.audit_paths([path])[path])


def test_setup_cell_installs_the_release_tag_never_a_branch():
    version = release.package_version()
    source = nbtools.setup_cell_source("https://example.org/book", "main")
    assert f"git+https://example.org/book@v{version}" in source
    assert "@main" not in source


def test_setup_cell_without_a_repository_says_what_to_do(monkeypatch):
    import importlib.util

    source = nbtools.setup_cell_source("", "main")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)  # as on a fresh Colab
    with pytest.raises(SystemExit) as stopped:
        exec(compile(source, "setup-cell", "exec"), {})
    message = str(stopped.value)
    assert "pip install -e ." in message and f"@v{release.package_version()}" in message
