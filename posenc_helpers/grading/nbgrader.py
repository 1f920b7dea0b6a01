"""nbgrader preprocessors that run each submission in a sandbox and grade it from outside.

``make course`` writes them into the course's ``nbgrader_config.py``, in place of
nbgrader's own ``Execute`` in ``Autograde.autograde_preprocessors``:

* :class:`BeforeExecution` reads the released notebook, fetches (or makes) the
  grader's run of the release (:mod:`posenc_helpers.grading.reference`) and takes a
  fingerprint of the grading environment, before any student code runs;
* :class:`SandboxedExecute` runs the submission in a bubblewrap sandbox
  (:mod:`posenc_helpers.grading.execute`, :mod:`posenc_helpers.grading.runner`), each cell with its own time limit, and
  keeps only the outputs that come back. It refuses to run without a sandbox unless
  told (``unsafe``, or ``POSENC_GRADING_UNSAFE=1``, which ``make grade UNSAFE=1`` sets);
* :class:`GradeFromRecords` grades each autograded test cell with
  :func:`posenc_helpers.grading.verdict.grade` and rewrites the cell's outputs so
  that nbgrader's own scoring (an error output earns nothing, no error every point)
  gives exactly the verdict: the student's outputs stay, the record goes, and a cell
  that did not earn its points ends with one error line that says why (the check's
  message, or "Tampering suspected: ...").

Importing this module imports nbgrader; the rest of the package does not need it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from nbgrader.preprocessors import NbGraderPreprocessor  # type: ignore[import-untyped]
from traitlets import Float, Int, Unicode

from ..answer_cells import cell_source
from . import runtime, sandbox
from .execute import execute_notebook
from .reference import STUDENT_CELL_TIMEOUT, cell_timeouts, load_or_run, wall_limit
from .submission import refused_entries
from .values import RECORD_MIME
from .verdict import TAMPERING, exercise_cells, grade, source_digest

__all__ = [
    "BeforeExecution", "SandboxedExecute", "GradeFromRecords", "ForgetUnknownCells", "UNSAFE_VARIABLE",
    "TAMPERING_LINE", "SANDBOX_METADATA",
]  # fmt: skip

_KEY = "posenc_grading"
#: The environment variable that lets the course grade without a sandbox (``make grade UNSAFE=1``).
UNSAFE_VARIABLE = "POSENC_GRADING_UNSAFE"
#: The word the feedback shows, in one place for the tests and the guide.
TAMPERING_LINE = TAMPERING


def _cells(path: Path) -> list[dict[str, Any]]:
    return list(json.loads(path.read_text(encoding="utf-8"))["cells"])


def _grade_id(cell: Any) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def released_with_tests(release: list[dict[str, Any]], source: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The release as nbgrader grades it: every locked cell with its source version (the test
    cells with their hidden tests), the answer cells as handed out."""
    locked = {_grade_id(cell): cell for cell in source if cell.get("metadata", {}).get("nbgrader", {}).get("locked")}
    out = []
    for cell in release:
        match = locked.get(_grade_id(cell)) if _grade_id(cell) else None
        out.append({**cell, "source": cell_source(match)} if match is not None else dict(cell))
    return out


class ForgetUnknownCells(NbGraderPreprocessor):
    """In nbgrader's sanitizing steps, after ``OverwriteCells``: a cell whose ``grade_id`` the
    gradebook does not know (a student edited it) has lost that id there but kept its grade,
    solution and lock flags, and nbgrader's ``CheckCellMetadata`` would then fail the whole
    submission. Such a cell becomes an ordinary cell; the exercise it claimed to be is put back
    by :class:`GradeFromRecords`, scored 0 with a line that says why."""

    def preprocess(self, nb: Any, resources: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        for cell in nb.cells:
            meta = cell.get("metadata", {}).get("nbgrader")
            if meta is not None and not meta.get("grade_id"):
                del cell.metadata["nbgrader"]
                self.log.warning("%s: a cell whose grade_id the gradebook does not know is graded as an ordinary cell",
                                 resources.get("nbgrader", {}).get("student"))  # fmt: skip
        return nb, resources


class BeforeExecution(NbGraderPreprocessor):
    """Before the submission runs: the released cells, the reference run and a fingerprint of
    the grading environment, kept aside."""

    course_root = Unicode("", help="the course folder (default: the working directory)").tag(config=True)

    def preprocess(self, nb: Any, resources: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        root = Path(self.course_root or os.getcwd())
        info = resources.get("nbgrader", {})
        assignment, name = str(info.get("assignment")), f"{info.get('notebook')}.ipynb"
        submitted = root / "submitted" / str(info.get("student")) / assignment
        if info.get("student") and submitted.is_dir() and (entries := refused_entries(submitted)):
            raise ValueError(
                f"{info.get('student')}'s submission of {assignment} holds what a grader must not follow "
                f"({'; '.join(entries)}): not graded. make grade lists such submissions without reading them."
            )
        release, source = root / "release" / assignment / name, root / "source" / assignment / name
        for path in (release, source):
            if not path.is_file():
                raise FileNotFoundError(f"no released notebook to grade against: {path}")
        cells = released_with_tests(_cells(release), _cells(source))
        isolation = _isolation()
        reference = load_or_run(
            root / ".grading" / assignment / f"{info.get('notebook')}.json",
            cells,
            lab_store=root / ".grading" / "lab-runs",
            isolation=isolation,
        )
        resources[_KEY] = {
            "released": [cell_source(cell) for cell in cells],
            "reference": reference,
            "environment": runtime.environment_digest(),
            "lab_store": root / ".grading" / "lab-runs",
            "isolation": isolation,
            "release_folder": release.parent,
            "test_cells": {label: cells[index] for label, index in exercise_cells(cells)[1].items()},
        }
        return nb, resources


def _isolation() -> str:
    """ "bwrap"; "container" where bubblewrap cannot make a sandbox but the container is
    confined (:func:`posenc_helpers.grading.isolation.choose_isolation`, which says so on
    standard error); or "none" when the person grading set POSENC_GRADING_UNSAFE=1. Else it
    refuses, with what is missing and what to do."""
    if os.environ.get(UNSAFE_VARIABLE, "") not in ("", "0"):
        return "none"
    from .isolation import NoConfinedSandbox, choose_isolation

    try:
        chosen = choose_isolation()
    except NoConfinedSandbox as error:
        raise sandbox.SandboxUnavailable(
            f"{error} The course grades every submission in a sandbox; to grade without one on "
            f"a machine you trust (the students' code can then reach the grader and every other "
            f"submission), set {UNSAFE_VARIABLE}=1 (make grade UNSAFE=1)."
        ) from None
    for note in chosen.notes:
        print(f"posenc_helpers.grading: {note}", file=sys.stderr, flush=True)
    return chosen.kind


#: The autograded notebook's metadata key under which :class:`SandboxedExecute` says how its
#: sandbox ran: ``budget`` ("cgroup v1", "cgroup v2" or "none"), ``peak_memory_bytes``,
#: ``oom_kills``, ``throttled_seconds`` (how long its CPU quota held it back), ``cpu_periods``
#: (the quota's periods it ran in: above zero when the quota was in force), ``seconds`` and
#: ``problem`` (why the notebook did not finish, or None).
SANDBOX_METADATA = "posenc_grading_sandbox"


class SandboxedExecute(NbGraderPreprocessor):
    """Runs the submission in the sandbox, each cell with its limit; only outputs come back."""

    memory_gib = Float(6.0, help="address space of each process of the sandbox, in GiB").tag(config=True)
    group_memory_gib = Float(4.0, help="resident memory of the whole sandbox (its control group), in GiB").tag(
        config=True
    )
    cpus = Float(1.0, help="cores' worth of CPU time the whole sandbox may use (its control group)").tag(config=True)
    processes = Int(256, help="processes and threads of the student's kernel (the group allows twice as many)").tag(
        config=True
    )
    student_cell_timeout = Float(
        STUDENT_CELL_TIMEOUT, help="seconds for a cell the student wrote (released cells: from the reference run)"
    ).tag(config=True)

    def preprocess(self, nb: Any, resources: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        before = resources.get(_KEY)
        if not before:
            raise RuntimeError("SandboxedExecute needs BeforeExecution before it in autograde_preprocessors")
        reference = before["reference"]
        released = {source_digest(source) for source in before["released"]}
        limits = sandbox.Limits(
            wall_seconds=wall_limit(reference),
            memory_bytes=int(self.memory_gib * 2**30),
            group_memory_bytes=int(self.group_memory_gib * 2**30),
            cpus=float(self.cpus),
            processes=int(self.processes),
        )
        info = resources.get("nbgrader", {})
        executed = execute_notebook(
            nb.cells,
            timeouts=cell_timeouts(nb.cells, released, reference, student=self.student_cell_timeout),
            release=before["release_folder"],
            notebook_name=f"{info.get('notebook')}.ipynb",
            limits=limits,
            lab_store=before["lab_store"],
            isolation=before["isolation"],
        )
        from nbformat import from_dict

        for cell, done in zip(nb.cells, executed.cells, strict=True):
            if cell.cell_type == "code":
                cell.outputs = [from_dict(output) for output in done["outputs"]]
                cell.execution_count = done["execution_count"]
                if executed.problem is not None and not cell.outputs:
                    note = {"output_type": "stream", "name": "stderr", "text": f"[grader] {executed.problem}\n"}
                    cell.outputs = [from_dict(note)]
        if executed.problem is not None:
            self.log.warning("%s: %s", info.get("student"), executed.problem)
        run = executed.run
        nb.metadata[SANDBOX_METADATA] = {  # for make grade's report; feedback does not show metadata
            "budget": run.budget,
            "peak_memory_bytes": run.peak_memory,
            "oom_kills": run.oom_kills,
            "throttled_seconds": round(run.throttled_seconds, 1),
            "cpu_periods": run.cpu_periods,
            "seconds": round(run.seconds, 1),
            "problem": executed.problem,
        }
        before["seconds"] = run.seconds
        return nb, resources


def _error(line: str) -> dict[str, Any]:
    ename, _, evalue = line.partition(": ")
    return {"output_type": "error", "ename": ename.split(" (")[0], "evalue": evalue, "traceback": [line]}


class GradeFromRecords(NbGraderPreprocessor):
    """After the submission ran: the verdict on each exercise, written where nbgrader scores it."""

    def preprocess(self, nb: Any, resources: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        before = resources.get(_KEY)
        if not before:
            raise RuntimeError("GradeFromRecords needs BeforeExecution and SandboxedExecute before it")
        changed = runtime.environment_digest() != before["environment"]
        if changed:
            self.log.error("the grading environment changed while %s ran", resources.get("nbgrader", {}))
        verdicts = grade(
            nb.cells, before["released"], reference=before["reference"].records, environment_changed=changed
        )
        _put_back_missing_test_cells(nb, before.get("test_cells", {}), verdicts, self.log, resources)
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            label = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if label not in verdicts:  # records are for the grader, wherever they are
                cell.outputs = [o for o in cell.outputs if RECORD_MIME not in o.get("data", {})]
                continue
            cell.outputs = [_as_node(o) for o in _graded_outputs(cell.outputs, verdicts[label], self.log, resources)]
        return nb, resources


def _put_back_missing_test_cells(
    nb: Any, released: dict[str, Any], verdicts: dict[str, Any], log: Any, resources: dict[str, Any]
) -> None:
    """An exercise whose test cell the submission lacks (deleted, or its metadata edited) gets
    the released cell back at the end of the notebook, with one error line saying so: nbgrader
    then scores it 0 instead of leaving the exercise without a score row."""
    from nbformat import from_dict

    present = {cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") for cell in nb.cells}
    for label, cell in released.items():
        if label in verdicts or label in present:
            continue
        line = (
            f"NoPoints: {label}: the test cell of this exercise is missing from the submitted notebook "
            "(deleted, or its cell metadata changed), so it could not run; no points."
        )
        restored = {**cell, "outputs": [_error(line)], "execution_count": None}
        restored["source"] = _visible_part(cell_source(cell))
        nb.cells.append(from_dict(restored))
        log.warning("%s: %s", resources.get("nbgrader", {}).get("student"), line)


def _visible_part(source: str) -> str:
    """A test cell's source without its hidden tests (nbgrader's BEGIN/END HIDDEN TESTS block)."""
    kept, hidden = [], False
    for line in source.splitlines():
        if "BEGIN HIDDEN TESTS" in line:
            hidden = True
        elif "END HIDDEN TESTS" in line:
            hidden = False
        elif not hidden:
            kept.append(line)
    return "\n".join(kept)


def _graded_outputs(outputs: list[Any], verdict: Any, log: Any, resources: dict[str, Any]) -> list[Any]:
    """A test cell's outputs as nbgrader scores them and the feedback shows them: the record
    gone, an error shown as its one line (IPython's traceback would quote the hidden tests),
    and, without the points, one error line that says why."""
    kept = []
    for output in outputs:
        kind = output.get("output_type")
        if RECORD_MIME in output.get("data", {}):
            continue
        if verdict.earned and (kind == "error" or (kind == "stream" and output.get("name") == "stderr")):
            continue
        if kind == "error":
            output = {**output, "traceback": [f"{output.get('ename', '')}: {output.get('evalue', '')}"]}
        elif kind == "execute_result":  # nbgrader would read it as a partial score
            output = {"output_type": "display_data", "data": output.get("data"), "metadata": output.get("metadata")}
        kept.append(output)
    if not verdict.earned:
        if verdict.tampering:
            kept.append(_error(verdict.line))
            log.warning("%s: %s", resources.get("nbgrader", {}).get("student"), verdict.line)
        elif not any(o.get("output_type") == "error" for o in kept):
            kept.append(_error(f"NoPoints: {verdict.line}"))
    return kept


def _as_node(output: Any) -> Any:
    from nbformat import from_dict

    return from_dict(dict(output))
