"""What the benchmarks share: the repository's root, the budgets, a report row and the timers.

:mod:`benchmarks.bench` runs the sections and prints the report; :mod:`benchmarks.lab`
and :mod:`benchmarks.grading` measure the training lab and the course's grading.
"""

from __future__ import annotations

import statistics
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["ROOT", "BUDGETS", "SECTIONS", "DEFAULT_SKIP", "Row", "fmt", "median_time", "best_time", "peak_temporary"]

ROOT = Path(__file__).resolve().parents[1]

BUDGETS = {
    "chapter_seconds": 20.0,
    "chapter_mib": 500.0,
    "all_chapters_seconds": 90.0,  # chapters 01-10
    "lab_chapter_seconds": 150.0,  # chapter 11, the training lab
    "lab_chapter_mib": 1536.0,
    "lab_model_seconds": 20.0,  # one live model: 250 steps
    "helper_ratio": 1.3,
    # The readable formula is the bare-numpy bound, which is itself only 70-180 times
    # faster than a per-element loop, depending on the machine and the operation.
    "loop_speedup": 50.0,
    "temporary_memory": 2.0,
    "widget_median_ms": 50.0,
    "widget_worst_ms": 100.0,
}
SECTIONS = ("chapters", "book", "site", "helpers", "explorers", "lab", "lab-pattern", "grading")
DEFAULT_SKIP = {"lab-pattern"}  # minutes of training: run it with --only lab-pattern


@dataclass
class Row:
    section: str
    item: str
    measured: float
    unit: str
    budget: float | None  # None: reported, not budgeted
    higher_is_better: bool = False

    @property
    def ok(self) -> bool | None:
        if self.budget is None:
            return None
        return self.measured >= self.budget if self.higher_is_better else self.measured <= self.budget

    def line(self) -> str:
        mark = {True: "pass", False: "FAIL", None: ""}[self.ok]
        budget = "" if self.budget is None else ("≥ " if self.higher_is_better else "≤ ") + fmt(self.budget)
        return f"  {self.item:<58} {fmt(self.measured):>9} {self.unit:<4} {budget:>10}  {mark}"


def fmt(value: float) -> str:
    return f"{value:.2f}" if abs(value) < 10 else f"{value:.0f}" if abs(value) >= 100 else f"{value:.1f}"


def median_time(fn: Callable[[], object], repeats: int) -> float:
    """Median wall time in seconds of ``repeats`` calls after one warm-up call."""
    fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def best_time(work: Callable[[], object], repeats: int = 7, clock: Callable[[], float] = time.perf_counter) -> float:
    """The shortest of ``repeats`` timed calls of ``work``, in seconds, after one untimed call.

    The shortest, not the median: slower runs measure what else the machine was doing.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    work()
    best = float("inf")
    for _ in range(repeats):
        start = clock()
        work()
        best = min(best, clock() - start)
    return best


def peak_temporary(fn: Callable[[], np.ndarray]) -> float:
    """Peak memory allocated during ``fn()`` beyond its output, as a multiple of the output size."""
    tracemalloc.start()
    try:
        out = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return (peak - out.nbytes) / out.nbytes
