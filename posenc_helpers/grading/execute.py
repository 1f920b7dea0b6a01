"""Executing a submission inside the sandbox, and reading back what it printed.

:func:`execute_notebook` is the grader's side: it sends the notebook's code cells
(the sources the grader trusts: nbgrader has restored the locked cells) into a
sandbox (:mod:`posenc_helpers.grading.sandbox`), where :func:`main` runs them one
by one in a fresh IPython kernel, and merges the outputs that come back into the
grader's own copy of the notebook, cell by cell. Only outputs come back: a cell's
source, metadata and order are the grader's.

Inside the sandbox, the runner drives the kernel with ``jupyter_client`` and

* gives each cell its own time limit; a cell that runs past it is interrupted,
  and a cell that does not stop when interrupted (a loop that catches
  ``KeyboardInterrupt``), or a kernel that dies (out of memory, ``os._exit``), is
  contained to its cell: the kernel is restarted, the cells before it run again
  without their outputs, and the notebook goes on with the next cell;
* keeps at most :data:`TEXT_BYTES` of text and :data:`DATA_BYTES` of other output
  per cell (the rest is counted and dropped, with one line saying so), while the
  grading records a hidden test displays (:data:`RECORD_MIME`) are kept whole up to
  :data:`RECORD_BYTES` each;
* writes the outputs as JSON to the result pipe, never to stdout, so nothing the
  student's code prints can change them.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import sandbox
from .values import RECORD_MIME
from .verdict import source_digest

__all__ = [
    "TEXT_BYTES",
    "DATA_BYTES",
    "RECORD_BYTES",
    "Executed",
    "execute_notebook",
    "graded_cells",
    "main",
]

TEXT_BYTES = 1 * 2**20  # text a cell's outputs keep (streams, tracebacks, text/plain)
DATA_BYTES = 8 * 2**20  # other output data a cell keeps (images, HTML)
RECORD_BYTES = 48 * 2**20  # one grading record (its values are at most 32 MiB before base64)
RECORDS_PER_CELL = 4
INTERRUPT_GRACE = 10.0  # seconds a cell has to stop after an interrupt
QUIET = 5.0  # seconds without a message of a cell, after its reply, before it counts as done
NOT_STARTED = 20.0  # seconds after which a cell the kernel has not begun counts as lost
KERNEL_START = 120.0  # seconds for a kernel to start
MAX_RESTARTS = 3
INPUT_BYTES = 16 * 2**20  # the submission folder's other files sent in with the notebook

# --------------------------------------------------------------------------- inside the sandbox


class _Cell:
    """The outputs of one cell as they arrive, within the cell's byte budgets."""

    def __init__(self) -> None:
        self.outputs: list[dict[str, Any]] = []
        self.text = 0
        self.data = 0
        self.records = 0
        self.dropped = 0
        self.clear_pending = False
        self.execution_count: int | None = None

    def add(self, output: dict[str, Any]) -> None:
        if self.clear_pending:
            self.outputs, self.clear_pending = [], False
        data = output.get("data") or {}
        if RECORD_MIME in data:
            size = len(json.dumps(data[RECORD_MIME]))
            if size <= RECORD_BYTES and self.records < RECORDS_PER_CELL:
                self.records += 1
                self.outputs.append(output)
            else:
                self.dropped += size
            return
        if output["output_type"] == "stream":
            self._stream(output)
            return
        text = sum(len(str(v)) for k, v in data.items() if k.startswith("text/")) + len(
            "".join(output.get("traceback", []))
        )
        other = sum(len(str(v)) for k, v in data.items() if not k.startswith("text/"))
        if self.text + text > TEXT_BYTES or self.data + other > DATA_BYTES:
            self.dropped += text + other
            return
        self.text += text
        self.data += other
        self.outputs.append(output)

    def _stream(self, output: dict[str, Any]) -> None:
        text = str(output.get("text", ""))
        room = max(0, TEXT_BYTES - self.text)
        kept = text[:room]
        self.dropped += len(text) - len(kept)
        if not kept:
            return
        self.text += len(kept)
        last = self.outputs[-1] if self.outputs else None
        if last is not None and last.get("output_type") == "stream" and last.get("name") == output.get("name"):
            last["text"] += kept
        else:
            self.outputs.append({**output, "text": kept})

    def note(self, text: str) -> None:
        """One line from the grader in the cell's outputs (stderr, where notes go)."""
        self.outputs.append({"output_type": "stream", "name": "stderr", "text": f"[grader] {text}\n"})

    def finish(self) -> dict[str, Any]:
        if self.dropped:
            self.note(f"output truncated: {self.dropped} more characters were printed than the grader keeps.")
        return {"outputs": self.outputs, "execution_count": self.execution_count}


class _Runner:
    """One kernel, the cells run so far (to run again after a restart), and their outputs."""

    def __init__(self, workdir: str) -> None:
        from jupyter_client import KernelManager

        self.workdir = workdir
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(cwd=workdir)
        self.kc = self._client()
        self.done: list[tuple[str, float]] = []  # the cells that ran to their end, with their limits
        self.restarts = 0

    def _client(self) -> Any:
        kc = self.km.client()
        kc.start_channels()
        kc.wait_for_ready(timeout=KERNEL_START)
        return kc

    def restart(self) -> bool:
        """A fresh kernel with the finished cells run again (outputs discarded); False if it failed."""
        if self.restarts >= MAX_RESTARTS:
            return False
        self.restarts += 1
        self.kc.stop_channels()
        self.km.restart_kernel(now=True)
        self.kc = self._client()
        for source, timeout in self.done:
            if self.execute(source, _Cell(), timeout=timeout, replay=True) in ("hung", "dead", "lost"):
                return self.restart()
        return True

    def execute(self, source: str, cell: _Cell, *, timeout: float | None, replay: bool = False) -> str:
        """Run ``source``; its status: "ok", "error", "timeout" (stopped when interrupted),
        "hung" (ran on after the interrupt), "dead" (the kernel died) or "lost" (the kernel
        never began it: ipykernel 7 can lose a request under load and then sit idle).

        The cell is done at the kernel's "idle" on IOPub, or, should that message be lost (a
        PUB socket drops messages for a reader that falls behind, as one can on a busy machine),
        once its reply has come on the shell channel and :data:`QUIET` seconds pass without
        another message of the cell.
        """
        from queue import Empty

        msg_id = self.kc.execute(source, store_history=not replay, allow_stdin=False, stop_on_error=False)
        sent = time.monotonic()
        deadline = None if timeout is None else sent + timeout
        status, interrupted, replied, started, last = "ok", None, False, False, sent
        while True:
            replied = replied or self._replied(msg_id)
            now = time.monotonic()
            if replied and now - last > QUIET:
                return status
            if not (started or replied) and now - sent > NOT_STARTED:
                return "lost"
            wait = 1.0 if deadline is None else max(0.0, min(1.0, deadline - now))
            try:
                msg = self.kc.get_iopub_msg(timeout=wait)
            except Empty:
                if not self.km.is_alive():
                    return "dead"
                if deadline is not None and time.monotonic() >= deadline and not replied:
                    if interrupted is None:
                        self.km.interrupt_kernel()
                        interrupted = time.monotonic()
                        deadline = interrupted + INTERRUPT_GRACE
                        status = "timeout"
                    else:
                        return "hung"
                continue
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            last = time.monotonic()
            started = True
            kind, content = msg["msg_type"], msg["content"]
            if kind == "status" and content.get("execution_state") == "idle":
                return status
            if kind == "execute_input":
                cell.execution_count = content.get("execution_count")
            elif kind == "clear_output":
                if content.get("wait"):
                    cell.clear_pending = True
                else:
                    cell.outputs = []
            elif kind in ("stream", "display_data", "execute_result", "error"):
                if kind == "error" and status == "ok":
                    status = "error"
                cell.add(_output(msg))

    def _replied(self, msg_id: str) -> bool:
        """Whether the shell channel holds the reply to ``msg_id`` (the other replies are dropped)."""
        from queue import Empty

        while True:
            try:
                msg = self.kc.get_shell_msg(timeout=0)
            except Empty:
                return False
            if msg.get("parent_header", {}).get("msg_id") == msg_id:
                return True

    def close(self) -> None:
        try:
            self.kc.stop_channels()
        finally:
            self.km.shutdown_kernel(now=True)


def _output(msg: dict[str, Any]) -> dict[str, Any]:
    kind, content = msg["msg_type"], msg["content"]
    if kind == "stream":
        return {"output_type": "stream", "name": content.get("name", "stdout"), "text": content.get("text", "")}
    if kind == "error":
        return {
            "output_type": "error",
            "ename": content.get("ename", ""),
            "evalue": content.get("evalue", ""),
            "traceback": list(content.get("traceback", [])),
        }
    output = {"output_type": kind, "data": content.get("data", {}), "metadata": content.get("metadata", {})}
    if kind == "execute_result":
        output["execution_count"] = content.get("execution_count")
    return output


def _prepare_workdir(job: Mapping[str, Any]) -> str:
    workdir = Path(job.get("workdir") or tempfile.mkdtemp(prefix="work-"))
    workdir.mkdir(parents=True, exist_ok=True)
    for name, data in dict(job.get("files", {})).items():
        target = workdir / Path(str(name)).name
        target.write_bytes(base64.b64decode(data))
    for variable in ("HOME", "MPLCONFIGDIR", "IPYTHONDIR", "JUPYTER_RUNTIME_DIR", "XDG_CACHE_HOME"):
        if os.environ.get(variable):
            Path(os.environ[variable]).mkdir(parents=True, exist_ok=True)
    fonts = Path(str(job.get("font_list", "")))
    if job.get("font_list") and fonts.is_file() and os.environ.get("MPLCONFIGDIR"):
        (Path(os.environ["MPLCONFIGDIR"]) / fonts.name).write_bytes(fonts.read_bytes())
    return str(workdir)


def run_job(job: Mapping[str, Any]) -> dict[str, Any]:
    """Run the job's code cells in one kernel (see the module docstring); the outputs per cell."""
    cells = list(job["cells"])
    runner = _Runner(_prepare_workdir(job))
    results: list[dict[str, Any]] = []
    seconds: list[float] = []
    stopped = False
    try:
        for item in cells:
            cell = _Cell()
            if stopped:
                cell.note("not run: the kernel could not be started again after an earlier cell.")
                results.append(cell.finish())
                seconds.append(0.0)
                continue
            start = time.monotonic()
            limit = float(item["timeout"])
            status = runner.execute(str(item["source"]), cell, timeout=limit)
            if status == "lost":  # the kernel never began it: a fresh one runs it again, once
                stopped = not runner.restart()
                cell = _Cell()
                status = "dead" if stopped else runner.execute(str(item["source"]), cell, timeout=limit)
                status = "hung" if status == "lost" else status
            seconds.append(time.monotonic() - start)
            if status in ("ok", "error"):
                runner.done.append((str(item["source"]), limit))
            elif status == "timeout":
                cell.note(f"this cell ran longer than its limit of {limit:g} s and was interrupted.")
            elif not stopped:
                cell.note(_contained(status, limit))
                stopped = not runner.restart()
            else:
                cell.note("not run: the kernel could not be started again after an earlier cell.")
            results.append(cell.finish())
    finally:
        runner.close()
    return {"cells": results, "seconds": seconds, "restarts": runner.restarts}


def _contained(status: str, limit: float) -> str:
    what = (
        f"this cell ran longer than its limit of {limit:g} s and did not stop when interrupted"
        if status == "hung"
        else "the kernel died while this cell ran (a process may use at most the grader's memory limit)"
    )
    return f"{what}; the kernel was restarted and the cells above it run again, and grading went on."


def main(argv: Sequence[str] | None = None) -> int:
    """Inside the sandbox: read a job (JSON) on stdin, write the outputs to ``--result-fd``."""
    parser = argparse.ArgumentParser(prog="python -m posenc_helpers.grading.execute")
    parser.add_argument("--result-fd", type=int, required=True)
    args = parser.parse_args(argv)
    result = os.fdopen(args.result_fd, "w", encoding="utf-8")
    job = json.loads(sys.stdin.read())
    out = run_job(job)
    json.dump(out, result)
    result.close()
    return 0


# --------------------------------------------------------------------------- the grader's side


@dataclass
class Executed:
    """A notebook the sandbox ran: the grader's cells with the outputs that came back."""

    cells: list[dict[str, Any]]
    seconds: list[float]  # per code cell, in order
    problem: str | None  # why outputs are missing (the run was killed, its result unreadable), else None
    run: sandbox.SandboxRun


def _files(folder: Path | None, notebook_name: str) -> dict[str, str]:
    """The other files of the submission folder (small ones), to copy into the sandbox's working folder."""
    if folder is None or not folder.is_dir():
        return {}
    files: dict[str, str] = {}
    total = 0
    for path in sorted(folder.iterdir()):
        if not path.is_file() or path.is_symlink() or path.name == notebook_name:
            continue
        size = path.stat().st_size
        if total + size > INPUT_BYTES:
            break
        total += size
        files[path.name] = base64.b64encode(path.read_bytes()).decode("ascii")
    return files


def execute_notebook(
    cells: Sequence[Mapping[str, Any]],
    *,
    timeouts: Sequence[float],
    folder: Path | None = None,
    notebook_name: str = "",
    limits: sandbox.Limits | None = None,
    lab_store: Path | None = None,
    fill_lab_store: bool = False,
    isolation: str = "bwrap",
) -> Executed:
    """Run the code cells of ``cells`` (nbformat dicts) in a sandbox; a copy of ``cells``
    with their outputs and execution counts.

    ``timeouts`` holds one limit in seconds per code cell; ``folder`` the submission's
    folder, whose other files are copied into the sandbox's working folder. ``lab_store``
    is chapter 11's store of training runs (:mod:`posenc_helpers.lab.cache`): shown
    read-only (each stored run in a private folder the kernel may add to), or writable
    when ``fill_lab_store`` (only for the trusted run of the release). ``isolation`` is
    :func:`posenc_helpers.grading.sandbox.run`'s.
    """
    limits = limits or sandbox.Limits()
    code = [index for index, cell in enumerate(cells) if cell.get("cell_type") == "code"]
    if len(timeouts) != len(code):
        raise ValueError(f"timeouts must hold one limit per code cell ({len(code)}); got {len(timeouts)}")
    job = {
        "cells": [{"source": _source(cells[i]), "timeout": float(t)} for i, t in zip(code, timeouts, strict=True)],
        "files": _files(folder, notebook_name),
    }
    with tempfile.TemporaryDirectory(prefix="posenc-grading-") as scratch:
        run = _run(job, limits, lab_store, fill_lab_store, isolation, Path(scratch))
    merged = [dict(cell) for cell in cells]
    for index in code:
        merged[index]["outputs"], merged[index]["execution_count"] = [], None
    problem, seconds = None, [0.0] * len(code)
    try:
        result = _read_result(run, len(code))
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
        text = _source(cell)
        otters = "import otter" in text or "grader." in text
        if cell.get("cell_type") == "code" and otters and source_digest(text) in released:
            continue
        cells.append({**cell, "outputs": [], "execution_count": None} if cell.get("cell_type") == "code" else cell)
    places = {}
    for label, source in record_cells.items():
        places[label] = len(cells)
        cells.append({"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None})
    return cells, places


def _source(cell: Mapping[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _run(
    job: dict[str, Any], limits: sandbox.Limits, lab_store: Path | None, fill: bool, isolation: str, scratch: Path
) -> sandbox.SandboxRun:
    argv = [sys.executable, "-I", "-m", "posenc_helpers.grading.execute"]
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
        env=sandbox.sandbox_environment(lab_store=store),
        readonly=readonly,
        writable=writable,
        tmpfs=tmpfs,
        limits=limits,
        owner_of=[lab_store] if fill and lab_store is not None else [],
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
    """Without bubblewrap: a scratch folder of the command's own on the host, the stored
    training runs linked into it (root's files, which the command's user can read but not
    change)."""
    job["workdir"] = str(scratch / "work")
    job["font_list"] = str(fonts) if fonts is not None else ""
    store = None
    owned = [scratch]
    if lab_store is not None:
        if fill:
            lab_store.mkdir(parents=True, exist_ok=True)
            store, owned = str(lab_store), [scratch, lab_store]
        else:
            linked = scratch / "lab-runs"
            linked.mkdir()
            for path in sorted(lab_store.glob("*.pickle")):
                (linked / path.name).symlink_to(path.resolve())
            store = str(linked)
    env = sandbox.sandbox_environment(str(scratch / "home"), store)
    return sandbox.run(
        argv, stdin=json.dumps(job).encode(), env=env, limits=limits, isolation=isolation, owner_of=owned
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


def _read_result(run: sandbox.SandboxRun, n_cells: int) -> dict[str, Any]:
    """The sandbox's result, checked for its shape (it is data from the student's side)."""
    if run.timed_out:
        raise ValueError(f"the notebook ran past the grader's limit of {run.seconds:.0f} s and was stopped")
    if run.result_truncated:
        raise ValueError("the notebook's outputs were larger than the grader reads")
    if not run.result:
        raise ValueError(f"the notebook did not finish (exit status {run.returncode})")
    try:
        result = json.loads(run.result)
    except ValueError:
        raise ValueError("the notebook's outputs could not be read") from None
    cells = result.get("cells") if isinstance(result, dict) else None
    seconds = result.get("seconds") if isinstance(result, dict) else None
    if not isinstance(cells, list) or len(cells) != n_cells or not isinstance(seconds, list) or len(seconds) != n_cells:
        raise ValueError("the notebook's outputs do not match its cells")
    for item in cells:
        outputs = item.get("outputs") if isinstance(item, dict) else None
        if not isinstance(outputs, list) or not all(_valid_output(o) for o in outputs):
            raise ValueError("the notebook's outputs are malformed")
        if not (item.get("execution_count") is None or type(item.get("execution_count")) is int):
            raise ValueError("the notebook's outputs are malformed")
    if not all(isinstance(s, int | float) and not isinstance(s, bool) for s in seconds):
        raise ValueError("the notebook's timings are malformed")
    return result


def _valid_output(output: Any) -> bool:
    """An output as nbformat 4 defines it (validated by nbformat's own schema)."""
    if not isinstance(output, dict):
        return False
    try:
        from nbformat import validate
        from nbformat.v4 import new_code_cell, new_notebook

        validate(new_notebook(cells=[new_code_cell(outputs=[output])]))
    except Exception:  # noqa: BLE001 - any schema error
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
