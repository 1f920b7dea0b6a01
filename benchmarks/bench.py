"""Benchmarks you can rerun: ``make bench`` (or ``python -m benchmarks.bench`` from the repository root).

Students run the notebooks on Binder-class machines (one or two cores, about
2 GB), reviewers build the book on every change. This script measures what
that costs and prints every figure beside its budget with a pass/fail mark:

* each chapter: wall time to run top to bottom in a fresh kernel (kernel start
  included) and the kernel's peak resident memory;
* the book: a clean build and a no-change rebuild, both ``-W -n``, into a
  scratch directory (the working tree's ``_build/html`` is not touched);
* the website (``_build/html``, built first if absent): every page in Chromium
  on a cold cache (``tests/browser/page_metrics.py``): transfer (gzip), requests, first
  paint, load, math done relative to load, layout shift; chapters also at 4x
  CPU slowdown;
* ``sinusoidal_encoding(65536, 1024, dtype=float32)`` and ``apply_rope`` on
  (8 heads, 4096 positions, 128 dims): time against the bare-numpy bound
  measured in the same run, as a ratio, and against a per-element Python loop
  (timed on a small size and scaled by the element count), as a speed-up;
  their peak temporary memory (``tracemalloc``) relative to the output size;
* each explorer's update latency (control change plus redraw), median and
  worst of 20 changes at its default size;
* the training lab (chapter 11): seconds to train one live model of each method,
  training steps per second, and the model's FLOP rate as a fraction of a large
  float32 matrix product timed in the same run; the time ``make record-lab``
  took, as its record says;
* the lab's verdicts at a training length, seed and budget the chapter does not
  use (``--only lab-pattern``, about fifteen minutes);
* grading the course (``--only grading``, :mod:`benchmarks.grading`): ``nbgrader
  autograde`` on one honest submission per chapter, ``make grade``'s speed-up on
  this machine's cores, and what 200 students cost.

The table is printed and written to ``_build/bench.json``. The exit status is
1 when a budget is missed. Timings are wall clock on whatever machine runs
this; ``benchmarks/README.md`` keeps each budget with its latest value, date and machine.

Usage::

    python -m benchmarks.bench [--skip chapters,book,...] [--only lab-pattern]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from benchmarks import pace
from benchmarks.common import BUDGETS, DEFAULT_SKIP, ROOT, SECTIONS, Row, median_time, peak_temporary
from benchmarks.lab import bench_lab, bench_lab_pattern
from tools.chapters import chapter_notebooks


# ----------------------------------------------------------------------------- chapters
def bench_chapters() -> list[Row]:
    from tools.nbtools import measure

    notebooks = chapter_notebooks()
    rows, total, classic = [], 0.0, 0
    for path, seconds, mib in measure(notebooks):
        lab = "posenc_helpers.lab" in path.read_text(encoding="utf-8")
        seconds_budget = BUDGETS["lab_chapter_seconds" if lab else "chapter_seconds"]
        mib_budget = BUDGETS["lab_chapter_mib" if lab else "chapter_mib"]
        rows.append(Row("chapters", f"{path.stem}: run time", seconds, "s", seconds_budget))
        rows.append(Row("chapters", f"{path.stem}: kernel peak memory", mib, "MiB", mib_budget))
        if not lab:
            total += seconds
            classic += 1
    rows.append(
        Row(
            "chapters",
            f"the {classic} chapters without training: run time",
            total,
            "s",
            BUDGETS["all_chapters_seconds"],
        )
    )
    return rows


# ----------------------------------------------------------------------------- book
def bench_book() -> list[Row]:
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    rows = []
    with tempfile.TemporaryDirectory(prefix="posenc-bench-") as scratch:
        command = [str(jupyter_book), "build", str(ROOT), "--path-output", scratch, "-W", "-n", "--keep-going"]
        for label in ("clean build", "no-change rebuild"):
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True, cwd=ROOT)
            rows.append(Row("book", f"book: {label} (-W -n)", time.perf_counter() - start, "s", None))
    return rows


# ----------------------------------------------------------------------------- site
def bench_site() -> list[Row]:
    """Every page of the built site in Chromium, cold cache, at full speed and at 4x CPU slowdown."""
    site = ROOT / "_build" / "html"
    if not (site / "index.html").is_file():
        jupyter_book = Path(sys.executable).with_name("jupyter-book")
        subprocess.run([str(jupyter_book), "build", str(ROOT), "-W", "-n", "--keep-going"], check=True, cwd=ROOT)
    sys.path.insert(0, str(ROOT / "tests" / "browser"))  # the browser suite's helpers, page_metrics among them
    from _browser import system_chromium
    from _server import SiteServer
    from page_metrics import BUDGETS as SITE_BUDGETS
    from page_metrics import measure, site_pages
    from playwright.sync_api import sync_playwright

    rows = []
    with SiteServer(site) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=system_chromium())
        for name in site_pages(site):
            chapter = name.startswith("notebooks/")
            for slowdown in (1.0, 4.0) if chapter else (1.0,):
                m = measure(browser, server.url(name), name, cpu_slowdown=slowdown)
                tag = f"{name.removeprefix('notebooks/').removesuffix('.html')}" + (" (4x CPU)" if slowdown > 1 else "")
                if slowdown == 1.0:
                    budget = SITE_BUDGETS["chapter_kb_gzip"] if chapter else None
                    rows.append(Row("site", f"{tag}: transfer, gzip", m.kb_gzip, "KB", budget))
                    rows.append(Row("site", f"{tag}: requests", m.requests, "", None))
                rows.append(Row("site", f"{tag}: first paint", m.first_paint_ms, "ms", None))
                rows.append(Row("site", f"{tag}: load event", m.load_ms, "ms", None))
                if m.math_done_ms is not None:
                    rows.append(
                        Row(
                            "site",
                            f"{tag}: math done after load",
                            m.math_after_load_ms,
                            "ms",
                            SITE_BUDGETS["math_after_load_ms"],
                        )
                    )
                rows.append(Row("site", f"{tag}: layout shift (CLS)", m.cls, "", SITE_BUDGETS["cls"]))
        browser.close()
    return rows


# ----------------------------------------------------------------------------- helpers
def bare_sinusoidal(n: int, d: int, dtype: type = np.float32) -> np.ndarray:
    """The bound: one outer product, one sin and one cos written into a preallocated table."""
    t = np.arange(n, dtype=dtype)
    omega = (10000.0 ** (-np.arange(0, d, 2) / d)).astype(dtype)
    angles = np.outer(t, omega)
    table = np.empty((n, d), dtype=dtype)
    np.sin(angles, out=table[:, 0::2])
    np.cos(angles, out=table[:, 1::2])
    return table


def loop_sinusoidal(n: int, d: int, dtype: type = np.float32) -> np.ndarray:
    """The same table one element at a time, as a first attempt in plain Python would."""
    table = np.empty((n, d), dtype=dtype)
    for t in range(n):
        for k in range(d // 2):
            angle = t * 10000.0 ** (-2 * k / d)
            table[t, 2 * k] = math.sin(angle)
            table[t, 2 * k + 1] = math.cos(angle)
    return table


def bare_rope(x: np.ndarray) -> np.ndarray:
    """The bound: cos/sin tables, then two products and a sum per half, written into the output."""
    seq, d = x.shape[-2:]
    theta = 10000.0 ** (-np.arange(0, d, 2) / d)
    angles = np.outer(np.arange(seq, dtype=np.float64), theta)
    cos, sin = np.cos(angles), np.sin(angles)
    out = np.empty_like(x)
    first, second = x[..., 0::2], x[..., 1::2]
    np.multiply(first, cos, out=out[..., 0::2])
    out[..., 0::2] -= second * sin
    np.multiply(first, sin, out=out[..., 1::2])
    out[..., 1::2] += second * cos
    return out


def loop_rope(x: np.ndarray) -> np.ndarray:
    """Interleaved RoPE one element pair at a time."""
    heads, seq, d = x.shape
    out = np.empty_like(x)
    for h in range(heads):
        for m in range(seq):
            for i in range(d // 2):
                angle = m * 10000.0 ** (-2 * i / d)
                c, s = math.cos(angle), math.sin(angle)
                a, b = x[h, m, 2 * i], x[h, m, 2 * i + 1]
                out[h, m, 2 * i] = a * c - b * s
                out[h, m, 2 * i + 1] = a * s + b * c
    return out


def bench_helpers() -> list[Row]:
    import posenc_helpers as ph

    rows = []
    n, d = 65536, 1024
    x = np.random.default_rng(0).standard_normal((8, 4096, 128))
    x_small = x[:1, :256]
    cases = [
        (
            f"sinusoidal_encoding({n}, {d}, float32)",
            lambda: ph.sinusoidal_encoding(n, d, dtype=np.float32),
            lambda: bare_sinusoidal(n, d),
            lambda: loop_sinusoidal(256, 256),
            (n * d) / (256 * 256),
        ),
        (
            "apply_rope(8 x 4096 x 128, float64)",
            lambda: ph.apply_rope(x, 4096),
            lambda: bare_rope(x),
            lambda: loop_rope(x_small),
            x.size / x_small.size,
        ),
    ]
    for name, helper, bare, loop, scale in cases:
        np.testing.assert_allclose(helper(), bare(), atol=1e-5)  # the bound computes the same thing
        helper_s = median_time(helper, 7)
        bare_s = median_time(bare, 7)
        loop_s = median_time(loop, 2) * scale
        rows += [
            Row("helpers", f"{name}: time", helper_s * 1e3, "ms", None),
            Row(
                "helpers",
                f"{name}: ÷ bare-numpy bound ({bare_s * 1e3:.0f} ms)",
                helper_s / bare_s,
                "×",
                BUDGETS["helper_ratio"],
            ),
            Row(
                "helpers",
                f"{name}: speed-up over Python loop ({loop_s:.1f} s)",
                loop_s / helper_s,
                "×",
                BUDGETS["loop_speedup"],
                higher_is_better=True,
            ),
            Row(
                "helpers",
                f"{name}: peak temporary ÷ output size",
                peak_temporary(helper),
                "×",
                BUDGETS["temporary_memory"],
            ),
        ]
    return rows


# ----------------------------------------------------------------------------- explorers
def explorer_classes() -> list[type]:
    """Every explorer exported by posenc_helpers.widgets (each provides ``demo()``)."""
    import posenc_helpers.widgets as widgets

    return [
        obj
        for name in widgets.__all__
        if isinstance(obj := getattr(widgets, name), type)
        and issubclass(obj, widgets.FigureExplorer)
        and obj is not widgets.FigureExplorer
    ]


def explorer_latencies(cls: type, changes_wanted: int = 20) -> list[float]:
    """Seconds per control change (callback and redraw) over ``changes_wanted`` changes."""
    explorer, changes = cls.demo()
    samples = []
    while len(samples) < changes_wanted:
        for change in changes[: changes_wanted - len(samples)]:
            start = time.perf_counter()
            explorer.set(**change)
            samples.append(time.perf_counter() - start)
    return samples


def bench_explorers() -> list[Row]:
    rows = []
    for cls in explorer_classes():
        samples = explorer_latencies(cls)
        rows.append(
            Row(
                "explorers",
                f"{cls.__name__}: median update",
                statistics.median(samples) * 1e3,
                "ms",
                BUDGETS["widget_median_ms"],
            )
        )
        rows.append(
            Row(
                "explorers",
                f"{cls.__name__}: worst of {len(samples)}",
                max(samples) * 1e3,
                "ms",
                BUDGETS["widget_worst_ms"],
            )
        )
    return rows


# ----------------------------------------------------------------------------- report
def machine() -> dict[str, object]:
    memory = ""
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        kib = int(meminfo.read_text().split("MemTotal:")[1].split()[0])
        memory = f"{kib / 2**20:.1f} GiB"
    cpu = platform.processor()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        names = [
            line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines() if line.startswith("model name")
        ]
        cpu = names[0] if names else cpu
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": memory,
        "system": f"{platform.system()} {platform.machine()}",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pace": pace_now(),
    }


def pace_now() -> str:
    """The machine's pace (:mod:`benchmarks.pace`), beside which every time below is read."""
    return pace.milliseconds(pace.measure())


def bench_grading() -> list[Row]:
    """The course's autograding cost (:mod:`benchmarks.grading`)."""
    from benchmarks.grading import bench_grading as grading

    return [Row("grading", *measurement) for measurement in grading()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--skip",
        default=None,
        help=f"comma-separated sections to skip, from {', '.join(SECTIONS)} "
        f"(default: {', '.join(sorted(DEFAULT_SKIP))})",
    )
    parser.add_argument("--only", default="", help="comma-separated sections to run, nothing else")
    parser.add_argument("--json", type=Path, default=ROOT / "_build" / "bench.json", help="where to write the table")
    args = parser.parse_args(argv)
    skip = DEFAULT_SKIP if args.skip is None else {s for s in args.skip.split(",") if s}
    only = {s for s in args.only.split(",") if s}
    if (skip | only) - set(SECTIONS):
        parser.error(f"sections are {', '.join(SECTIONS)}, got {', '.join(sorted((skip | only) - set(SECTIONS)))}")
    if only:
        skip = set(SECTIONS) - only

    import matplotlib

    matplotlib.use("Agg")
    runners = {
        "chapters": bench_chapters,
        "book": bench_book,
        "site": bench_site,
        "helpers": bench_helpers,
        "explorers": bench_explorers,
        "lab": bench_lab,
        "lab-pattern": bench_lab_pattern,
        "grading": bench_grading,
    }
    info = machine()
    print("Machine: " + ", ".join(f"{k} {v}" for k, v in info.items()))
    rows: list[Row] = []
    for section in SECTIONS:
        if section in skip:
            continue
        print(f"\n{section}")
        section_rows = runners[section]()
        for row in section_rows:
            print(row.line())
        rows += section_rows

    failed = [row for row in rows if row.ok is False]
    print(f"\n{len(rows)} figures, {sum(r.ok is not None for r in rows)} with a budget, {len(failed)} over budget")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps(
            {
                "machine": info,
                "budgets": BUDGETS,
                "rows": [asdict(r) | {"ok": r.ok} for r in rows],
                "all_within_budget": not failed,
            },
            indent=2,
            ensure_ascii=False,
        )
        + "\n"
    )
    print(f"written to {args.json.relative_to(ROOT) if args.json.is_relative_to(ROOT) else args.json}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
