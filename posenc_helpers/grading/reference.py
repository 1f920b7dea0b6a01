"""The grader's own run of the release: the data each exercise gives, and how long each cell takes.

A check is given the student's answer *and* the data the exercise hands out
(``w_interleaved``, ``curves``, a configuration). Those data must not come from the
student's kernel, where an alias (``w = w_interleaved; w *= 0``) or a patch can
change them; so the grader runs the released notebook itself, untouched, once per
assignment, in the same sandbox (:func:`run_reference`). Its hidden tests record the
arguments of every check, answers still ``None``; :func:`~posenc_helpers.grading.verdict.grade`
takes from that record everything but the answers.

The same run times every cell, and :func:`cell_timeouts` gives each released cell of
a submission a limit in proportion (a cell the release runs in a second does not get
five minutes), and each cell the student wrote ``STUDENT_CELL_TIMEOUT``.

A reference is kept as JSON beside the course (:func:`load_or_run`), keyed on the
notebook's sources, the package's sources and the versions of Python and numpy, so
that it is made again whenever any of them changes.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import platform
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from ..answer_cells import cell_source
from . import sandbox
from .execute import execute_notebook
from .verdict import records_in, released_spec, source_digest

__all__ = [
    "CELL_TIMEOUT",
    "STUDENT_CELL_TIMEOUT",
    "Reference",
    "code_digests",
    "reference_key",
    "run_reference",
    "load_or_run",
    "cell_timeouts",
    "wall_limit",
]

CELL_TIMEOUT = 300.0  # a released cell when the release has not been timed
STUDENT_CELL_TIMEOUT = 60.0  # a cell the student wrote: the exercises ask for a few lines of numpy
RELEASED_MINIMUM = 60.0  # a released cell, however fast the reference ran it
RELEASED_FACTOR = 5.0  # ... and at least this many times the reference's time
VERSION = 1


@dataclass
class Reference:
    """The release's run: the recorded arguments per exercise and the seconds per cell source."""

    key: str
    records: dict[str, dict[str, Any]]
    seconds: dict[str, float]
    total: float
    version: int = VERSION


def code_digests(cells: Sequence[Mapping[str, Any]]) -> list[str]:
    """The :func:`~posenc_helpers.grading.verdict.source_digest` of each code cell, in order."""
    return [source_digest(cell_source(cell)) for cell in cells if cell.get("cell_type") == "code"]


def reference_key(digests: Sequence[str]) -> str:
    """SHA-256 of what the data an exercise gives depend on: the code cells' sources (their
    :func:`code_digests`), the package's sources, and the versions of Python and numpy."""
    import posenc_helpers

    digest = hashlib.sha256(f"reference {VERSION} {platform.python_version()} {metadata.version('numpy')}".encode())
    for item in digests:
        digest.update(item.encode())
    package = Path(posenc_helpers.__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def run_reference(
    cells: Sequence[Mapping[str, Any]],
    *,
    lab_store: Path | None = None,
    isolation: str = "bwrap",
    limits: sandbox.Limits | None = None,
) -> Reference:
    """Run the released notebook ``cells`` (test cells with their hidden tests) in the sandbox.

    ``lab_store``, if given, is filled with chapter 11's training runs, which every
    submission then reads back (read-only).

    Raises
    ------
    RuntimeError
        If the release does not run, or a test cell records nothing.
    """
    code = [cell for cell in cells if cell.get("cell_type") == "code"]
    limits = limits or sandbox.Limits(wall_seconds=3600.0, cpu_seconds=7200)
    run = execute_notebook(
        cells,
        timeouts=[3600.0] * len(code),
        limits=limits,
        lab_store=lab_store,
        fill_lab_store=True,
        isolation=isolation,
    )
    if run.problem is not None:
        raise RuntimeError(f"the release did not run in the sandbox: {run.problem}\n{run.run.log[-3000:]}")
    records: dict[str, dict[str, Any]] = {}
    for cell in run.cells:
        spec = released_spec(cell_source(cell)) if cell.get("cell_type") == "code" else None
        if spec is None:
            continue
        found = [r for r in records_in(cell) if isinstance(r, dict) and r.get("label") == spec.label]
        if len(found) != 1 or "args" not in found[0]:
            errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
            raise RuntimeError(f"the release's test cell of {spec.label} recorded nothing: {errors[:1]}")
        records[spec.label] = {"args": found[0]["args"], "kwargs": found[0]["kwargs"]}
    seconds: dict[str, float] = {}
    for released, spent in zip(code, run.seconds, strict=True):
        key = source_digest(cell_source(released))
        seconds[key] = max(seconds.get(key, 0.0), float(spent))
    return Reference(reference_key(code_digests(cells)), records, seconds, float(sum(run.seconds)))


def load_or_run(
    path: Path,
    cells: Sequence[Mapping[str, Any]],
    *,
    lab_store: Path | None = None,
    isolation: str = "bwrap",
) -> Reference:
    """The reference stored at ``path`` if its key matches ``cells``; otherwise run it and store it.

    Two graders that need it at once run it once (a lock file beside it).
    """
    key = reference_key(code_digests(cells))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.with_suffix(".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with contextlib.suppress(FileNotFoundError, ValueError, TypeError, KeyError):
            stored = json.loads(path.read_text(encoding="utf-8"))
            if stored.get("key") == key and stored.get("version") == VERSION:
                return Reference(**stored)
        reference = run_reference(cells, lab_store=lab_store, isolation=isolation)
        partial = path.with_suffix(".part")
        partial.write_text(json.dumps(asdict(reference)), encoding="utf-8")
        partial.replace(path)
        return reference


def cell_timeouts(
    cells: Sequence[Mapping[str, Any]],
    released: Iterable[str],
    reference: Reference,
    *,
    student: float = STUDENT_CELL_TIMEOUT,
) -> list[float]:
    """A time limit for each code cell of a submission (see the module docstring); ``student``
    for each cell the student wrote."""
    known = set(released)
    limits = []
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        key = source_digest(cell_source(cell))
        if key in reference.seconds:
            limits.append(max(RELEASED_MINIMUM, RELEASED_FACTOR * reference.seconds[key]))
        elif key in known:
            limits.append(CELL_TIMEOUT)
        else:
            limits.append(student)
    return limits


def wall_limit(reference: Reference) -> float:
    """The wall-clock limit of a whole submission: three times the release's run, and ten minutes more."""
    return 3.0 * reference.total + 600.0
