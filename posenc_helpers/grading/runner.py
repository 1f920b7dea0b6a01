"""Inside the sandbox: the program that runs a submission's cells in a kernel.

The grader (:func:`posenc_helpers.grading.execute.execute_notebook`) starts
``python -I -m posenc_helpers.grading.runner --result-fd N`` in the sandbox and
sends it a job (JSON, on stdin): the code cells, each with its time limit. This
program drives one IPython kernel with ``jupyter_client`` and

* gives each cell its own time limit; a cell that runs past it is interrupted,
  and a cell that does not stop when interrupted (a loop that catches
  ``KeyboardInterrupt``), or a kernel that dies (out of memory, ``os._exit``), is
  contained to its cell: the kernel is restarted, the cells before it run again
  without their outputs, and the notebook goes on with the next cell; a cell the
  kernel never began is run again (ipykernel 7.0 to 7.3 could leave a request unread
  on its shell socket under load, ipython/ipykernel#1529, fixed in the 7.4.0 pinned
  here);
* keeps at most ``TEXT_BYTES`` of text and ``DATA_BYTES`` of other output
  per cell (the rest is counted and dropped, with one line saying so), while the
  grading records a hidden test displays
  (:data:`~posenc_helpers.grading.values.RECORD_MIME`) are kept whole up to
  ``RECORD_BYTES`` each;
* keeps at most ``OUTPUTS_PER_CELL`` outputs per cell and, over the whole notebook,
  ``NOTEBOOK_OUTPUTS`` outputs, ``NOTEBOOK_TEXT_BYTES`` of text and
  ``NOTEBOOK_DATA_BYTES`` of other data, so that the grader's work on what comes back
  (checking each output against nbformat's schema, writing the autograded notebook)
  is bounded too; each cut is one line in the cell's outputs;
* runs the hidden tests (the job's cells marked ``"hidden"``) without storing them in
  the kernel's history (``In``, ``_ih``, IPython's history database);
* writes the outputs as JSON to the result pipe, never to stdout, with the job's
  ``nonce``, so nothing the student's code prints can change them.

The runner is the grader's code, run as root in the sandbox with a few capabilities
(:mod:`posenc_helpers.grading.sandbox`, ``supervisor=True``). It makes itself
non-dumpable and starts each kernel as another user, confined
(:mod:`posenc_helpers.grading.confine`): the kernel cannot signal or trace it, read
its memory (the nonce) or take its result pipe. What the kernel sends back over
Jupyter's channels is still the student's, and is read as data.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .values import RECORD_MIME

__all__ = [
    "TEXT_BYTES", "DATA_BYTES", "RECORD_BYTES", "OUTPUTS_PER_CELL", "NOTEBOOK_OUTPUTS", "NOTEBOOK_TEXT_BYTES",
    "NOTEBOOK_DATA_BYTES", "run_job", "main",
]  # fmt: skip

TEXT_BYTES = 1 * 2**20  # text a cell's outputs keep (streams, tracebacks, text/plain)
DATA_BYTES = 8 * 2**20  # other output data a cell keeps (images, HTML)
RECORD_BYTES = 48 * 2**20  # one grading record (its values are at most 32 MiB before base64)
RECORDS_PER_CELL = 4
OUTPUTS_PER_CELL = 200  # outputs a cell keeps (20,000 display() calls keep 200)
NOTEBOOK_OUTPUTS = 2000  # outputs the whole notebook keeps
NOTEBOOK_TEXT_BYTES = 8 * 2**20  # text the whole notebook keeps
NOTEBOOK_DATA_BYTES = 32 * 2**20  # other output data the whole notebook keeps (images, HTML)
INTERRUPT_GRACE = 10.0  # seconds a cell has to stop after an interrupt
QUIET = 5.0  # seconds without a message of a cell, after its reply, before it counts as done
NOT_STARTED = 20.0  # seconds after which a cell the kernel has not begun counts as lost
KERNEL_START = 120.0  # seconds for a kernel to start
MAX_RESTARTS = 3


class _Notebook:
    """What the whole notebook has kept so far (outputs, text, other data)."""

    def __init__(self) -> None:
        self.outputs = 0
        self.text = 0
        self.data = 0


class _Cell:
    """The outputs of one cell as they arrive, within the cell's and the notebook's budgets."""

    def __init__(self, notebook: _Notebook | None = None) -> None:
        self.notebook = notebook or _Notebook()
        self.outputs: list[dict[str, Any]] = []
        self.text = 0
        self.data = 0
        self.records = 0
        self.dropped = 0
        self.dropped_outputs = 0
        self.clear_pending = False
        self.execution_count: int | None = None

    def _clear(self) -> None:
        """The kernel cleared the cell's outputs: they no longer count against the budgets."""
        book = self.notebook
        book.outputs -= sum(1 for o in self.outputs if RECORD_MIME not in (o.get("data") or {}))
        book.text -= self.text
        book.data -= self.data
        self.outputs, self.text, self.data, self.records = [], 0, 0, 0

    def add(self, output: dict[str, Any]) -> None:
        if self.clear_pending:
            self._clear()
            self.clear_pending = False
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
        book = self.notebook
        if len(self.outputs) >= OUTPUTS_PER_CELL or book.outputs >= NOTEBOOK_OUTPUTS:
            self.dropped_outputs += 1
            return
        if (
            self.text + text > TEXT_BYTES
            or self.data + other > DATA_BYTES
            or book.text + text > NOTEBOOK_TEXT_BYTES
            or book.data + other > NOTEBOOK_DATA_BYTES
        ):
            self.dropped += text + other
            return
        self.text += text
        self.data += other
        book.text += text
        book.data += other
        book.outputs += 1
        self.outputs.append(output)

    def _stream(self, output: dict[str, Any]) -> None:
        text = str(output.get("text", ""))
        book = self.notebook
        room = max(0, min(TEXT_BYTES - self.text, NOTEBOOK_TEXT_BYTES - book.text))
        kept = text[:room]
        self.dropped += len(text) - len(kept)
        if not kept:
            return
        last = self.outputs[-1] if self.outputs else None
        if last is not None and last.get("output_type") == "stream" and last.get("name") == output.get("name"):
            last["text"] += kept
        elif len(self.outputs) >= OUTPUTS_PER_CELL or book.outputs >= NOTEBOOK_OUTPUTS:
            self.dropped += len(kept)
            return
        else:
            self.outputs.append({**output, "text": kept})
            book.outputs += 1
        self.text += len(kept)
        book.text += len(kept)

    def note(self, text: str) -> None:
        """One line from the grader in the cell's outputs (stderr, where notes go)."""
        self.outputs.append({"output_type": "stream", "name": "stderr", "text": f"[grader] {text}\n"})

    def finish(self) -> dict[str, Any]:
        if self.dropped:
            self.note(f"output truncated: {self.dropped} more characters were printed than the grader keeps.")
        if self.dropped_outputs:
            self.note(
                f"{self.dropped_outputs} more outputs were displayed than the grader keeps (at most "
                f"{OUTPUTS_PER_CELL} per cell and {NOTEBOOK_OUTPUTS} per notebook); they were left out."
            )
        return {"outputs": self.outputs, "execution_count": self.execution_count}


class _Runner:
    """One kernel, the cells run so far (to run again after a restart), and their outputs."""

    def __init__(self, workdir: str, kernel: Mapping[str, Any] | None = None) -> None:
        self.workdir = workdir
        self.km = _kernel_manager(kernel)
        self.km.start_kernel(cwd=workdir)
        self.kc = self._client()
        self.done: list[tuple[str, float, bool]] = []  # the cells that ran to their end: limit, hidden
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
        for source, timeout, hidden in self.done:
            if self.execute(source, _Cell(), timeout=timeout, replay=True, hidden=hidden) in ("hung", "dead", "lost"):
                return self.restart()
        return True

    def execute(
        self, source: str, cell: _Cell, *, timeout: float | None, replay: bool = False, hidden: bool = False
    ) -> str:
        """Run ``source``; its status: "ok", "error", "timeout" (stopped when interrupted),
        "hung" (ran on after the interrupt), "dead" (the kernel died) or "lost" (the kernel
        never began it: ipykernel 7.0 to 7.3 could lose a request under load and then sit idle).

        The cell is done at the kernel's "idle" on IOPub, or, should that message be lost (a
        PUB socket drops messages for a reader that falls behind, as one can on a busy machine),
        once its reply has come on the shell channel and :data:`QUIET` seconds pass without
        another message of the cell.
        """
        from queue import Empty

        store = not (replay or hidden)  # a hidden test stays out of In, _ih and the history database
        msg_id = self.kc.execute(source, store_history=store, allow_stdin=False, stop_on_error=False)
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
                # The reply may have come while this waited: a finished cell is never interrupted
                # (a SIGINT sent after it ends can land in the next cell, a check among them).
                replied = replied or self._replied(msg_id)
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


def _kernel_manager(kernel: Mapping[str, Any] | None) -> Any:
    """A ``KernelManager`` for an ordinary kernel (``kernel`` None), or one that starts its
    kernel through :func:`~posenc_helpers.grading.confine.kernel_command` (the seccomp
    filter, then the confined user ``kernel["uid"]``), with its connection file in a folder
    of the runner's that the kernel can read but not change."""
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpec

    from .confine import kernel_command

    if not kernel:
        return KernelManager(kernel_name="python3")

    class ConfinedKernelManager(KernelManager):
        def write_connection_file(self, **kwargs: Any) -> None:
            super().write_connection_file(**kwargs)
            Path(self.connection_file).chmod(0o644)  # jupyter writes it 0600: the kernel's user reads it

    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    private = Path(tempfile.mkdtemp(prefix="runner-"))
    private.chmod(0o711)
    km = ConfinedKernelManager(kernel_name="python3", connection_file=str(private / "kernel.json"))
    km._kernel_spec = KernelSpec(
        argv=kernel_command(argv, kernel.get("uid"), processes=kernel.get("processes")),
        display_name="Python 3 (confined)",
        language="python",
    )
    return km


def _prepare_workdir(job: Mapping[str, Any], uid: int | None = None) -> str:
    """The kernel's working folder with the job's files, and its home's folders, made (and,
    where the kernel runs as a user of its own, given to that user)."""
    workdir = Path(job.get("workdir") or tempfile.mkdtemp(prefix="work-"))
    workdir.mkdir(parents=True, exist_ok=True)
    for name, data in dict(job.get("files", {})).items():
        target = workdir / Path(str(name)).name
        target.write_bytes(base64.b64decode(data))
    for variable in ("HOME", "MPLCONFIGDIR", "IPYTHONDIR", "JUPYTER_RUNTIME_DIR", "XDG_CACHE_HOME"):
        if os.environ.get(variable):
            Path(os.environ[variable]).mkdir(parents=True, exist_ok=True)
    fonts = Path(str(job.get("font_list", "")))
    if job.get("font_list") and os.environ.get("MPLCONFIGDIR"):
        with contextlib.suppress(OSError):  # without it, matplotlib builds its own (seconds)
            (Path(os.environ["MPLCONFIGDIR"]) / fonts.name).write_bytes(fonts.read_bytes())
    if uid is not None:  # made by the runner (root), all of it the kernel's to write in
        for top in (str(workdir), os.environ.get("HOME")):
            for root, dirs, files in os.walk(top) if top else ():
                for path in (root, *(os.path.join(root, name) for name in dirs + files)):
                    os.chown(path, uid, uid, follow_symlinks=False)
    return str(workdir)


def run_job(job: Mapping[str, Any], kernel: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Run the job's code cells in one kernel (see the module docstring); the outputs per cell.

    ``kernel`` says how to confine the kernel (``{"uid": ..., "processes": ...}``; None: an
    ordinary kernel, as the caller)."""
    cells = list(job["cells"])
    uid = (kernel or {}).get("uid")
    runner = _Runner(_prepare_workdir(job, uid), kernel)
    notebook = _Notebook()
    results: list[dict[str, Any]] = []
    seconds: list[float] = []
    stopped = False
    try:
        for item in cells:
            cell = _Cell(notebook)
            if stopped:
                cell.note("not run: the kernel could not be started again after an earlier cell.")
                results.append(cell.finish())
                seconds.append(0.0)
                continue
            start = time.monotonic()
            limit, hidden, source = float(item["timeout"]), bool(item.get("hidden")), str(item["source"])
            status = runner.execute(source, cell, timeout=limit, hidden=hidden)
            if status == "lost":  # the kernel never began it: a fresh one runs it again, once
                stopped = not runner.restart()
                cell = _Cell(notebook)
                status = "dead" if stopped else runner.execute(source, cell, timeout=limit, hidden=hidden)
                status = "hung" if status == "lost" else status
            seconds.append(time.monotonic() - start)
            if status in ("ok", "error"):
                runner.done.append((source, limit, hidden))
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
    """Inside the sandbox: read a job (JSON) on stdin, write the outputs, with the job's
    nonce, to ``--result-fd``."""
    parser = argparse.ArgumentParser(prog="python -m posenc_helpers.grading.runner")
    parser.add_argument("--result-fd", type=int, required=True)
    parser.add_argument("--kernel-uid", type=int, default=None, help="the user the kernel runs as (root only)")
    parser.add_argument("--confine", action="store_true", help="the kernel under the seccomp filter, as this user")
    args = parser.parse_args(argv)
    from .confine import make_non_dumpable

    make_non_dumpable()  # before the job (and its nonce) is read
    result = os.fdopen(args.result_fd, "w", encoding="utf-8")
    job = json.loads(sys.stdin.read())
    kernel = None
    if args.kernel_uid is not None or args.confine:
        kernel = {"uid": args.kernel_uid, "processes": job.get("processes") if args.kernel_uid is not None else None}
    out = run_job(job, kernel)
    out["nonce"] = job.get("nonce")
    json.dump(out, result)
    result.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
