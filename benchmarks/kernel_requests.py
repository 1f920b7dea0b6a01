"""Whether the kernel begins every cell the grader sends it, on a busy machine.

The grader's runner (:mod:`posenc_helpers.grading.runner`) sends a submission's cells one
by one to an IPython kernel. ipykernel 7.0 to 7.3 could leave an ``execute_request`` unread
on the kernel's shell socket while it sent a reply on the same socket (the socket's
edge-triggered read event was consumed by the send): the kernel sat idle and the cell never
began (ipython/ipykernel#1529, fixed in 7.4.0). The runner calls such a cell "lost",
restarts the kernel and runs the cells above it again, at most ``MAX_RESTARTS`` times; a
submission that loses more than that many cells loses its later answers too: the likely way
an honest notebook scored 2 of 7 in CI on 2026-11-29 (ipykernel 7.3.0; reproduced under load,
CI's own notes not kept).

This script sends ``--cells`` one-line cells (``x = i; print(x)``) to one kernel driven by
the runner's own code, outside the sandbox, while ``--busy`` processes spin on the CPU
(four, on two cores, is about what ``make test``'s other lanes put beside the course lane),
and prints how many cells ended in each status and how long they took. A lost cell is
counted, the kernel restarted, and the run goes on.

Measured on the two-core machine on 2026-11-29 with ``--busy 4``: ipykernel 7.3.0 lost 9
of 600 cells (231 s, each loss costing the 20 s wait before a cell counts as lost);
ipykernel 7.4.0 lost none of 3,000 (100 s).

Run it: ``.venv/bin/python -m benchmarks.kernel_requests --cells 600 --busy 4``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence

__all__ = ["send_cells", "main"]

SPIN = "while True:\n    pass\n"


def send_cells(cells: int, timeout: float = 30.0) -> tuple[Counter[str], float]:
    """Send ``cells`` one-line cells to one kernel; the count of each status and the seconds."""
    from posenc_helpers.grading import runner

    statuses: Counter[str] = Counter()
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kernel-requests-") as workdir:
        driver = runner._Runner(workdir)
        try:
            for index in range(cells):
                status = driver.execute(f"x = {index}\nprint(x)", runner._Cell(), timeout=timeout)
                statuses[status] += 1
                if status in ("lost", "hung", "dead"):
                    driver.restart()
                    driver.restarts = 0  # every loss is counted here, none ends the run
        finally:
            driver.close()
    return statuses, time.monotonic() - start


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.kernel_requests", description=__doc__.split("\n")[0])
    parser.add_argument("--cells", type=int, default=600, help="one-line cells to send (default 600)")
    parser.add_argument("--busy", type=int, default=4, help="processes spinning on the CPU meanwhile (default 4)")
    args = parser.parse_args(argv)
    if args.cells < 1:
        parser.error(f"--cells must be at least 1; got {args.cells}")
    if args.busy < 0:
        parser.error(f"--busy must be 0 or more; got {args.busy}")
    import ipykernel

    spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(args.busy)]
    try:
        statuses, seconds = send_cells(args.cells)
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    counts = ", ".join(f"{status} {count}" for status, count in sorted(statuses.items()))
    load = f"ipykernel {ipykernel.__version__}, {args.busy} busy processes"
    print(f"{load}: {counts} of {args.cells} cells in {seconds:.0f} s")
    return 0 if statuses["lost"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
