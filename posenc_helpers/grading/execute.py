"""Executing a submission in the sandbox, and reading back what it printed.

:func:`execute_notebook` sends a notebook's code cells (the sources the grader
trusts: nbgrader has restored the locked cells) into a sandbox
(:mod:`posenc_helpers.grading.sandbox`), where :mod:`posenc_helpers.grading.runner`
runs them one by one in a fresh IPython kernel, and merges the outputs that come
back into the grader's own copy of the notebook, cell by cell. Only outputs come
back, as JSON over a pipe of their own, checked against nbformat's schema: a
cell's source, metadata and order are the grader's.

A result counts only when the runner exited with status 0 and the result carries the
nonce this run sent it on its standard input (which the student's kernel, another
user, never sees). Only the notebook enters the sandbox, and the files the release
itself ships beside it (``release_files``), read from the release: nothing of the
submission's folder, which a student could fill with links to files they cannot read.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import shutil
import stat
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..answer_cells import cell_source
from . import runtime, sandbox
from .verdict import RECORD_CALL, source_digest

__all__ = ["Executed", "execute_notebook", "graded_cells", "release_files"]

INPUT_BYTES = 16 * 2**20  # the release's other files sent in with the notebook
#: A cell that holds this call is a hidden test: it runs without entering the kernel's history.
_HIDDEN_TEST = f"{RECORD_CALL}("


@dataclass
class Executed:
    """A notebook the sandbox ran: the grader's cells with the outputs that came back."""

    cells: list[dict[str, Any]]
    seconds: list[float]  # per code cell, in order
    problem: str | None  # why outputs are missing (the run was killed, its result unreadable), else None
    run: sandbox.SandboxRun


def release_files(folder: Path | None, notebook_name: str = "") -> dict[str, str]:
    """The files a release ships beside its notebooks (small regular files of ``folder``, the
    release's own folder: never the submission's), base64-encoded, to copy into the sandbox's
    working folder. A link or anything but a regular file is not read."""
    if folder is None or not folder.is_dir():
        return {}
    files: dict[str, str] = {}
    total = 0
    for path in sorted(folder.iterdir()):
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or path.suffix == ".ipynb" or path.name == notebook_name:
            continue
        if total + info.st_size > INPUT_BYTES:
            break
        total += info.st_size
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(descriptor, "rb") as handle:
            files[path.name] = base64.b64encode(handle.read(INPUT_BYTES)).decode("ascii")
    return files


def execute_notebook(
    cells: Sequence[Mapping[str, Any]],
    *,
    timeouts: Sequence[float],
    release: Path | None = None,
    notebook_name: str = "",
    limits: sandbox.Limits | None = None,
    lab_store: Path | None = None,
    fill_lab_store: bool = False,
    isolation: str = "bwrap",
) -> Executed:
    """Run the code cells of ``cells`` (nbformat dicts) in a sandbox; a copy of ``cells``
    with their outputs and execution counts.

    ``timeouts`` holds one limit in seconds per code cell; ``release`` the release's folder
    of this notebook, whose other files (:func:`release_files`) are copied into the
    sandbox's working folder. ``lab_store``
    is chapter 11's store of training runs (``posenc_helpers.lab.cache``): shown
    read-only (each stored run in a private folder the kernel may add to), or writable
    when ``fill_lab_store`` (only for the trusted run of the release). ``isolation`` is
    :func:`posenc_helpers.grading.sandbox.run`'s.
    """
    limits = limits or sandbox.Limits()
    code = [index for index, cell in enumerate(cells) if cell.get("cell_type") == "code"]
    if len(timeouts) != len(code):
        raise ValueError(f"timeouts must hold one limit per code cell ({len(code)}); got {len(timeouts)}")
    nonce = secrets.token_hex(16)
    job = {
        "cells": [
            {"source": cell_source(cells[i]), "timeout": float(t), "hidden": _HIDDEN_TEST in cell_source(cells[i])}
            for i, t in zip(code, timeouts, strict=True)
        ],
        "files": release_files(release, notebook_name),
        "nonce": nonce,
        "processes": int(limits.processes),
    }
    with tempfile.TemporaryDirectory(prefix="posenc-grading-") as scratch:
        run = _run(job, limits, lab_store, fill_lab_store, isolation, Path(scratch))
    merged = [dict(cell) for cell in cells]
    for index in code:
        merged[index]["outputs"], merged[index]["execution_count"] = [], None
    problem, seconds = None, [0.0] * len(code)
    try:
        result = _read_result(run, len(code), nonce)
    except ValueError as error:
        problem = str(error)
    else:
        seconds = [float(s) for s in result["seconds"]]
        for index, item in zip(code, result["cells"], strict=True):
            merged[index]["outputs"] = item["outputs"]
            merged[index]["execution_count"] = item["execution_count"]
    return Executed(merged, seconds, problem, run)


def graded_cells(
    submitted: list[dict[str, Any]], released: set[str], record_cells: dict[str, str]
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The cells the sandbox runs: the submission's, without otter's own released cells (its
    ``grader = otter.Notebook()`` and ``grader.check()``, which need otter's test files), then one
    recording cell per exercise; and the index of each exercise's recording cell."""
    cells = []
    for cell in submitted:
        text = cell_source(cell)
        otters = "import otter" in text or "grader." in text
        if cell.get("cell_type") == "code" and otters and source_digest(text) in released:
            continue
        cells.append({**cell, "outputs": [], "execution_count": None} if cell.get("cell_type") == "code" else cell)
    places = {}
    for label, source in record_cells.items():
        places[label] = len(cells)
        cells.append({"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None})
    return cells, places


def _run(
    job: dict[str, Any], limits: sandbox.Limits, lab_store: Path | None, fill: bool, isolation: str, scratch: Path
) -> sandbox.SandboxRun:
    argv = [sys.executable, "-I", "-m", "posenc_helpers.grading.runner"]
    fonts = _font_list()
    if isolation != "bwrap":
        return _run_on_host(job, argv, limits, lab_store, fill, isolation, scratch, fonts)
    job["workdir"] = "/tmp/work"
    readonly: list[Path | tuple[Path, str]] = []
    writable: list[tuple[Path, str]] = []
    tmpfs: list[str] = []
    store = None
    if lab_store is not None:
        store = "/lab-runs"
        if fill:
            lab_store.mkdir(parents=True, exist_ok=True)
            writable.append((lab_store, store))
        else:
            tmpfs.append(store)
            readonly += [(path, f"{store}/{path.name}") for path in sorted(lab_store.glob("*.pickle"))]
    if fonts is not None:
        readonly.append((fonts, f"/opt/grading/{fonts.name}"))
        job["font_list"] = f"/opt/grading/{fonts.name}"
    return sandbox.run(
        argv,
        stdin=json.dumps(job).encode(),
        env=runtime.sandbox_environment(lab_store=store),
        readonly=readonly,
        writable=writable,
        tmpfs=tmpfs,
        limits=limits,
        owner_of=[lab_store] if fill and lab_store is not None else [],
        supervisor=True,
    )


def _run_on_host(
    job: dict[str, Any],
    argv: list[str],
    limits: sandbox.Limits,
    lab_store: Path | None,
    fill: bool,
    isolation: str,
    scratch: Path,
    fonts: Path | None,
) -> sandbox.SandboxRun:
    """Without bubblewrap: a scratch folder on the host (root's, which the kernel's user may
    enter but not change) holding the kernel's working folder and home (made and given to
    that user by the runner) and the stored training runs, linked (root's files, which the
    kernel's user can read but not change)."""
    scratch.chmod(0o711)
    job["workdir"] = str(scratch / "work")
    job["font_list"] = ""
    if fonts is not None:  # copied: the command's user may not reach the grader's home
        shutil.copy(fonts, scratch / fonts.name)
        job["font_list"] = str(scratch / fonts.name)
    store = None
    owned: list[Path] = []
    if lab_store is not None:
        if fill:
            lab_store.mkdir(parents=True, exist_ok=True)
            store, owned = str(lab_store), [lab_store]
        else:
            linked = scratch / "lab-runs"
            linked.mkdir()
            for path in sorted(lab_store.glob("*.pickle")):
                (linked / path.name).symlink_to(path.resolve())
            store = str(linked)
    env = runtime.sandbox_environment(str(scratch / "home"), store)
    return sandbox.run(
        argv,
        stdin=json.dumps(job).encode(),
        env=env,
        limits=limits,
        isolation=isolation,
        owner_of=owned,
        supervisor=isolation != "none",
    )


def _font_list() -> Path | None:
    """matplotlib's font list, copied into the sandbox's home so that a kernel does not rebuild
    it (seconds) there."""
    try:
        import matplotlib
    except ImportError:
        return None
    found = sorted(Path(matplotlib.get_cachedir()).glob("fontlist-*.json"))
    return found[-1] if found else None


def _read_result(run: sandbox.SandboxRun, n_cells: int, nonce: str) -> dict[str, Any]:
    """The sandbox's result, checked: from a runner that exited with status 0, carrying this
    run's ``nonce``, and of the shape the runner writes (its outputs are still the student's)."""
    if run.timed_out:
        raise ValueError(f"the notebook ran past the grader's limit of {run.seconds:.0f} s and was stopped")
    if run.result_truncated:
        raise ValueError("the notebook's outputs were larger than the grader reads")
    if run.returncode != 0 or not run.result:
        why = f"; {run.oom_kills} of its processes ran out of the sandbox's memory" if run.oom_kills else ""
        raise ValueError(f"the notebook did not finish (the grader's runner ended with status {run.returncode}{why})")
    try:
        result = json.loads(run.result)
    except ValueError:
        raise ValueError("the notebook's outputs could not be read") from None
    if not isinstance(result, dict) or not secrets.compare_digest(str(result.get("nonce")), nonce):
        raise ValueError("the notebook's outputs did not come from the grader's runner")
    cells = result.get("cells")
    seconds = result.get("seconds")
    if not isinstance(cells, list) or len(cells) != n_cells or not isinstance(seconds, list) or len(seconds) != n_cells:
        raise ValueError("the notebook's outputs do not match its cells")
    outputs = []
    for item in cells:
        kept = item.get("outputs") if isinstance(item, dict) else None
        if not isinstance(kept, list):
            raise ValueError("the notebook's outputs are malformed")
        outputs += kept
        if not (item.get("execution_count") is None or type(item.get("execution_count")) is int):
            raise ValueError("the notebook's outputs are malformed")
    if len(outputs) > OUTPUTS_READ:
        raise ValueError(f"the notebook's outputs are more than the {OUTPUTS_READ} the grader reads")
    if not _valid_outputs(outputs):
        raise ValueError("the notebook's outputs are malformed")
    if not all(isinstance(s, int | float) and not isinstance(s, bool) for s in seconds):
        raise ValueError("the notebook's timings are malformed")
    return result


#: At most this many outputs are read back (the runner keeps fewer: NOTEBOOK_OUTPUTS, and a
#: few lines of its own per cell).
OUTPUTS_READ = 4000


def _valid_outputs(outputs: list[Any]) -> bool:
    """Every output as nbformat 4 defines it, validated by nbformat's own schema in one pass
    (one notebook holding them all), not one pass per output."""
    if not all(isinstance(output, dict) for output in outputs):
        return False
    try:
        from nbformat import validate
        from nbformat.v4 import new_code_cell, new_notebook

        validate(new_notebook(cells=[new_code_cell(outputs=outputs)]))
    except Exception:  # noqa: BLE001 - any schema error
        return False
    return True
