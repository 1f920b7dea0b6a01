"""Every chapter's student copy, executed once, top to bottom, in a fresh kernel.

This is the only place the test suite executes notebooks besides nbval (``make
test-notebooks``): ``make test-student-copies`` runs it, and ``make test-unit``
leaves this folder out. The transformation itself is tested, without running
anything, in ``tests/tooling/test_student.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from tools.student import student_notebook

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_student_copy_runs_up_to_its_stubs(path):
    """Top to bottom in a fresh kernel: the only errors allowed are the stubs' NotImplementedError."""
    from nbclient import NotebookClient

    student = nbformat.from_dict(student_notebook(json.loads(path.read_text())))
    client = NotebookClient(
        student,
        kernel_name="python3",
        timeout=120,
        allow_errors=True,
        resources={"metadata": {"path": str(ROOT / "notebooks")}},
    )
    client.execute()
    errors = [o for c in student.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert all(e.ename == "NotImplementedError" for e in errors), [(e.ename, e.evalue) for e in errors]
    stubs = sum("raise NotImplementedError" in c.source for c in student.cells if c.cell_type == "code")
    assert len(errors) == stubs
    texts = "".join(
        o.get("text", "") + str(o.get("data", {}).get("text/plain", ""))
        for c in student.cells
        if c.cell_type == "code"
        for o in c.outputs
    )
    assert "Not attempted yet" in texts
    assert "Correct:" not in texts
