"""Student copies: no line of a solution survives, exercises and checks do, nothing is overwritten."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from _solutions import exercise_labels, solution_lines, strings_in
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from tools.student import main, student_notebook, write_student_copies

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _notebook() -> dict:
    cells = [
        new_markdown_cell("# 9. A chapter"),
        new_code_cell("x = 1", execution_count=1, outputs=[new_output("stream", name="stdout", text="1")]),
        new_markdown_cell("```{exercise-start}\n:label: ex-09-it\n```\nDo it."),
        new_code_cell("answer = None\ncheck_it(answer)", execution_count=2),
        new_markdown_cell(
            "```{exercise-end}\n```\n\n```{solution-start} ex-09-it\n:class: dropdown\n```\nWhy it works."
        ),
        new_code_cell(
            "answer = 42  # the secret\ncheck_it(answer)",
            execution_count=3,
            metadata={"tags": ["solution"], "execution": {"iopub.status.idle": "2026-01-01"}},
            outputs=[new_output("stream", name="stdout", text="Correct: 42")],
        ),
        new_markdown_cell("```{solution-end}\n```"),
        new_markdown_cell("## Key takeaways"),
    ]
    nb = new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "widgets": {"state": {"secret": 42}},
        },
    )
    return json.loads(nbformat.writes(nb))


def _write(path: Path, nb: dict) -> Path:
    path.write_text(json.dumps(nb, indent=1))
    return path


# --------------------------------------------------------------------------- the transformation
def test_solutions_outputs_and_execution_metadata_are_dropped():
    nb = _notebook()
    student = student_notebook(nb)
    sources = [c["source"] for c in student["cells"]]
    assert sources == [
        "# 9. A chapter",
        "x = 1",
        "```{exercise-start}\n:label: ex-09-it\n```\nDo it.",
        "answer = None\ncheck_it(answer)",
        "```{exercise-end}\n```",
        "## Key takeaways",
    ]
    assert all(
        c["outputs"] == [] and c["execution_count"] is None for c in student["cells"] if c["cell_type"] == "code"
    )
    assert "widgets" not in student["metadata"] and student["metadata"]["kernelspec"]["name"] == "python3"
    assert "secret" not in json.dumps(student) and "Correct" not in json.dumps(student)
    assert len(nb["cells"]) == 8 and nb["cells"][5]["outputs"]  # the input is untouched
    nbformat.validate(nbformat.from_dict(student))


def test_a_solved_exercise_cell_becomes_a_stub():
    nb = _notebook()
    nb["cells"][3]["source"] = "answer = 42  # solved in place\ncheck_it(answer)"
    nb["cells"][3]["metadata"]["tags"] = ["solution"]
    student = student_notebook(nb)
    stub = student["cells"][3]
    assert "42" not in stub["source"] and "NotImplementedError" in stub["source"]
    assert "ex-09-it" in stub["source"] and "solution" not in stub["metadata"].get("tags", [])
    with pytest.raises(NotImplementedError, match="ex-09-it"):
        exec(stub["source"], {})


def test_plain_solution_directives_are_cut_from_markdown():
    nb = _notebook()
    nb["cells"].append(
        new_markdown_cell(
            "```{exercise}\n:label: ex-explain\n\nExplain it.\n```\n\n"
            "```{solution} ex-explain\n:class: dropdown\n\nThe secret answer.\n```\n\n"
            "::::{solution} ex-explain\nAnother secret.\n::::\nAfter."
        )
    )
    text = student_notebook(nb)["cells"][-1]["source"]
    assert "Explain it." in text and "After." in text
    assert "secret" not in text.lower() and "{solution}" not in text


def test_attachments_of_dropped_cells_go_too():
    nb = _notebook()
    nb["cells"][4]["attachments"] = {"answer.png": {"image/png": "c2VjcmV0"}}
    assert "c2VjcmV0" not in json.dumps(student_notebook(nb))


@pytest.mark.parametrize(
    "break_it, match",
    [
        (lambda nb: nb["cells"].pop(6), "solution-end"),
        (lambda nb: nb["cells"].insert(1, new_markdown_cell("```{solution-end}\n```")), "solution-start"),
        (lambda nb: nb["cells"].__setitem__(4, new_markdown_cell("```{solution-start} ex-09-it\n```")), "exercise-end"),
        (lambda nb: nb.__setitem__("nbformat", 3), "nbformat 4"),
    ],
)
def test_malformed_notebooks_are_rejected(break_it, match):
    nb = _notebook()
    break_it(nb)
    with pytest.raises(ValueError, match=match):
        student_notebook(nb)


def test_a_non_dict_notebook_is_a_type_error():
    with pytest.raises(TypeError, match="notebook must be a dict"):
        student_notebook("notebook.ipynb")


# --------------------------------------------------------------------------- files and the command line
def test_never_overwrites_without_force_and_force_touches_only_its_own_files(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    _write(src / "01_a.ipynb", _notebook())
    _write(src / "02_b.ipynb", _notebook())
    out = tmp_path / "out"
    written = write_student_copies(src, out)
    assert [p.name for p in written] == ["01_a.ipynb", "02_b.ipynb"]
    first = {p.name: p.read_bytes() for p in out.iterdir()}

    (out / "01_a.ipynb").write_text("a student's own work")
    (out / "notes.txt").write_text("mine")
    assert main([str(src), str(out)]) == 2
    assert (out / "01_a.ipynb").read_text() == "a student's own work"

    assert main([str(src), str(out), "--force"]) == 0
    assert (out / "01_a.ipynb").read_bytes() == first["01_a.ipynb"]
    assert (out / "notes.txt").read_text() == "mine"


def test_running_twice_without_force_leaves_the_first_output_byte_for_byte(tmp_path):
    out = tmp_path / "out"
    assert main([str(ROOT / "notebooks"), str(out)]) == 0
    before = {p.name: p.read_bytes() for p in sorted(out.iterdir())}
    assert main([str(ROOT / "notebooks"), str(out)]) == 2
    assert {p.name: p.read_bytes() for p in sorted(out.iterdir())} == before
    assert sorted(before) == [p.name for p in CHAPTERS]


@pytest.mark.parametrize(
    "make_args, message",
    [
        (lambda tmp: [tmp / "missing", tmp / "out"], "does not exist"),
        (lambda tmp: [tmp / "empty", tmp / "out"], "holds no .ipynb"),
        (lambda tmp: [tmp / "bad.ipynb", tmp / "out"], "cannot read notebook"),
        (lambda tmp: [tmp / "notes.txt", tmp / "out"], "is not a notebook"),
        (lambda tmp: [tmp / "src", tmp / "notes.txt"], "is a file"),
    ],
)
def test_clear_errors_from_the_command_line(tmp_path, make_args, message):
    (tmp_path / "empty").mkdir()
    (tmp_path / "src").mkdir()
    _write(tmp_path / "src" / "a.ipynb", _notebook())
    (tmp_path / "bad.ipynb").write_text("{not json")
    (tmp_path / "notes.txt").write_text("mine")
    result = subprocess.run(
        [sys.executable, "-m", "tools.student", *map(str, make_args(tmp_path))],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr
    assert (tmp_path / "notes.txt").read_text() == "mine"


# --------------------------------------------------------------------------- every chapter
@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_student_copy_has_no_solution_line_and_every_exercise(path):
    nb = json.loads(path.read_text())
    student = student_notebook(nb)
    nbformat.validate(nbformat.from_dict(student))

    lines = solution_lines(nb)
    assert lines, "a chapter without solutions?"
    strings = strings_in(student)
    student_lines = {line.strip() for s in strings for line in s.splitlines()}
    # A solution line may not appear as a line anywhere in the copy, nor (when it is long
    # enough to be distinctive) inside any string of it: outputs, metadata, attachments.
    leaked = sorted(
        line for line in lines if line in student_lines or (len(line) >= 30 and any(line in s for s in strings))
    )
    assert not leaked, leaked

    labels = exercise_labels(nb)
    assert 2 <= len(labels) <= 4, labels
    student_text = "\n".join(c["source"] for c in student["cells"])
    assert all(f":label: {label}" in student_text for label in labels)
    assert all(c["outputs"] == [] for c in student["cells"] if c["cell_type"] == "code")
    checks = [
        c
        for c in student["cells"]
        if c["cell_type"] == "code"
        and "posenc_helpers.checks" not in c["source"]
        and re.search(r"\bcheck_\w+\(", c["source"])
    ]
    assert checks, "the automatic-check cells must stay"
