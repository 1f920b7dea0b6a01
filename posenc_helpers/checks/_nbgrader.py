"""nbgrader preprocessors that grade the course from outside the student's kernel.

``make course`` writes them into the course's ``nbgrader_config.py``, around
nbgrader's own ``Execute`` in ``Autograde.autograde_preprocessors``:

* :class:`BeforeExecution` reads the released notebook and fingerprints the
  grading environment's ``posenc_helpers`` before any student code runs;
* :class:`GradeFromRecords`, after ``Execute``, grades each autograded test cell
  with :func:`posenc_helpers.checks._verdict.grade` and rewrites the cell's
  outputs so that nbgrader's own scoring (an error output earns nothing, no error
  every point) gives exactly the verdict: the student's outputs stay, the record
  goes, and a cell that did not earn its points ends with one error line that says
  why (the check's message, or "Tampering suspected: ...").

Importing this module imports nbgrader; the rest of the package does not need it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from nbgrader.preprocessors import NbGraderPreprocessor  # type: ignore[import-untyped]
from traitlets import Unicode

from ._record import MIME
from ._verdict import TAMPERING, grade, package_digest

__all__ = ["BeforeExecution", "GradeFromRecords"]

_KEY = "posenc_grading"


def _notebook_cells(path: Path) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in nb["cells"]]


class BeforeExecution(NbGraderPreprocessor):
    """Before the submission runs: the released cells and a digest of the package, kept aside."""

    course_root = Unicode("", help="the course folder (default: the working directory)").tag(config=True)

    def preprocess(self, nb: Any, resources: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        root = Path(self.course_root or os.getcwd())
        info = resources.get("nbgrader", {})
        name = f"{info.get('notebook')}.ipynb"
        candidates = [root / "release" / str(info.get("assignment")) / name]
        candidates.append(root / "source" / str(info.get("assignment")) / name)
        found = next((path for path in candidates if path.is_file()), None)
        if found is None:
            raise FileNotFoundError(f"no released notebook to grade against: {candidates[0]}")
        resources[_KEY] = {"released": _notebook_cells(found), "package": package_digest()}
        return nb, resources


def _error(line: str) -> dict[str, Any]:
    ename, _, evalue = line.partition(": ")
    return {"output_type": "error", "ename": ename.split(" (")[0], "evalue": evalue, "traceback": [line]}


class GradeFromRecords(NbGraderPreprocessor):
    """After the submission ran: the verdict on each exercise, written where nbgrader scores it."""

    def preprocess(self, nb: Any, resources: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        before = resources.get(_KEY)
        if not before:
            raise RuntimeError("GradeFromRecords needs BeforeExecution before Execute in autograde_preprocessors")
        verdicts = grade(nb.cells, before["released"], package_changed=package_digest() != before["package"])
        for cell in nb.cells:
            label = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if cell.cell_type != "code":
                continue
            if label not in verdicts:  # records are for the grader, wherever they are
                cell.outputs = [o for o in cell.outputs if MIME not in o.get("data", {})]
                continue
            verdict = verdicts[label]
            kept = []
            for output in cell.outputs:
                if MIME in output.get("data", {}):
                    continue
                if verdict.earned and (
                    output.output_type == "error" or (output.output_type == "stream" and output.name == "stderr")
                ):
                    continue
                if output.output_type == "execute_result":  # nbgrader would read it as a partial score
                    output = {"output_type": "display_data", "data": output.data, "metadata": output.metadata}
                kept.append(output)
            if not verdict.earned:
                if verdict.tampering:
                    kept.append(_error(verdict.line))
                    self.log.warning("%s: %s", resources.get("nbgrader", {}).get("student"), verdict.line)
                elif not any(o.get("output_type") == "error" for o in kept):
                    kept.append(_error(f"NoPoints: {verdict.line}"))
            cell.outputs = [_as_node(o) for o in kept]
        return nb, resources


def _as_node(output: Any) -> Any:
    from nbformat import from_dict

    return from_dict(dict(output))


# The word the feedback shows, in one place for the tests and the guide.
TAMPERING_LINE = TAMPERING
