"""Benchmarks you can rerun: `make bench`.

Measures (median and worst of repeated runs, wall clock on this machine):

* each explorer's update time per control change, at its default size (the
  book promises "well under 100 ms");
* the helpers at the sizes the chapters use;
* each notebook's execution time and kernel peak memory in a fresh kernel
  (the book promises a few seconds, and under 20 s and 500 MB).

Nothing here asserts; timings are reported so they can be compared over time.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _time(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    fn()  # warm-up
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e3, max(samples) * 1e3


def explorer_classes() -> list[type]:
    """Every explorer exported by posenc_helpers.widgets (each provides ``demo()``)."""
    import posenc_helpers.widgets as widgets

    return [
        obj for name in widgets.__all__
        if isinstance(obj := getattr(widgets, name), type)
        and issubclass(obj, widgets.FigureExplorer) and obj is not widgets.FigureExplorer
    ]


def bench_explorers() -> None:
    print("Explorer update per control change (ms)")
    for cls in explorer_classes():
        explorer, changes = cls.demo()
        samples = []
        for _ in range(3):
            for change in changes:
                start = time.perf_counter()
                explorer.set(**change)
                samples.append(time.perf_counter() - start)
        print(f"  {cls.__name__:<32} median {statistics.median(samples) * 1e3:6.1f}   worst {max(samples) * 1e3:6.1f}")


def bench_helpers() -> None:
    import posenc_helpers as ph

    print("Helpers (ms)")
    table = ph.sinusoidal_encoding(10_000, 128)
    x = np.random.default_rng(0).normal(size=(8, 1024, 128))
    cases = [
        ("sinusoidal_encoding(10 000, 128)", lambda: ph.sinusoidal_encoding(10_000, 128), 20),
        ("min_pairwise_distance(10 000 x 128)", lambda: ph.min_pairwise_distance(table), 3),
        ("apply_rope(8 x 1024 x 128)", lambda: ph.apply_rope(x, 1024), 10),
        ("alibi_bias(12, 1024)", lambda: ph.alibi_bias(12, 1024), 10),
        ("t5_relative_bucket(1024 x 1024)", lambda: ph.t5_relative_bucket(np.subtract.outer(np.arange(1024), np.arange(1024))), 10),
        ("score_encoding(sinusoidal, d=64)", lambda: ph.score_encoding(lambda p, n: ph.sinusoidal_encoding(p, 64)), 3),
    ]
    for name, fn, repeats in cases:
        median, worst = _time(fn, repeats)
        print(f"  {name:<40} median {median:8.1f}   worst {worst:8.1f}")


def bench_notebooks() -> None:
    notebooks = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    print("Notebooks, fresh kernel each (nothing written)")
    result = subprocess.run(
        [sys.executable, "tools/nbtools.py", "measure", *(str(p.relative_to(ROOT)) for p in notebooks)],
        check=True, capture_output=True, text=True, cwd=ROOT,
    )
    for line in result.stdout.splitlines():
        print("  " + line)


if __name__ == "__main__":
    import matplotlib

    matplotlib.use("Agg")
    bench_explorers()
    bench_helpers()
    bench_notebooks()
