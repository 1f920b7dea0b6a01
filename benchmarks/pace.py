"""The machine's pace: two fixed pieces of work, timed, so that times taken on different days compare.

The two-core machine is a virtual machine whose speed is not constant. ``make bench``'s
``helpers`` section, the same code on the same numpy, idle both times: on 2026-11-21 the
bare-numpy bounds took 129 ms (``sinusoidal_encoding``'s table) and 23 ms (``apply_rope``),
the per-element Python loops 10.6 s and 1.7 s; on 2026-11-29, 231 ms, 67 ms, 15.3 s and
4.9 s. A recipe's time compares only with the pace measured beside it, so
``tools/lane_times.py`` writes the pace into the lane table's paragraph and ``make bench``
prints it on its machine line.

The pace is the best of seven runs (as :mod:`timeit` reports) of each of:

- ``sum(range(10**6))``: the interpreter alone, as the tooling and the tests are;
- ``np.sin`` over 2**22 float64 values: numpy's vectorised arithmetic and memory bandwidth,
  as the chapters and the helpers are.

Run it alone: ``.venv/bin/python -m benchmarks.pace``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchmarks.common import best_time

__all__ = ["Pace", "measure", "milliseconds", "describe"]

REPEATS = 7


@dataclass(frozen=True)
class Pace:
    """Milliseconds for the fixed Python loop and the fixed numpy work (best of seven)."""

    python_ms: float
    numpy_ms: float


def measure(repeats: int = REPEATS) -> Pace:
    """Time both pieces of work on this machine, now."""
    values = np.linspace(0.0, 1.0, 2**22)
    return Pace(
        python_ms=1e3 * best_time(lambda: sum(range(10**6)), repeats),
        numpy_ms=1e3 * best_time(lambda: np.sin(values), repeats),
    )


def milliseconds(pace: Pace) -> str:
    """Both times, as ``make bench``'s machine line prints them."""
    return f"{pace.python_ms:.1f} ms (Python) and {pace.numpy_ms:.1f} ms (numpy)"


def describe(pace: Pace) -> str:
    """The pace in words, as the lane table prints it."""
    return f"pace {milliseconds(pace)}, `benchmarks/pace.py`"


if __name__ == "__main__":
    print(describe(measure()))
