"""Chapter 06 explorer: T5's relative-position buckets for any number of buckets and max_distance."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.colors import to_hex
from matplotlib.ticker import FixedFormatter, FixedLocator, MaxNLocator, NullLocator

from .._validation import require_count
from ..plotting._style import OKABE_ITO
from ..plotting.ch06_learned_and_relative import REGION_ALPHA, REGION_COLOURS, t5_spans
from ..relative import t5_relative_bucket
from ._explorer import FigureExplorer

__all__ = ["T5BucketExplorer"]

_REGION_LABELS = {
    "exact": "exact",
    "log-spaced": "log-spaced",
    "last bucket": "≥ max_distance",
    "future": "after the query (causal)",
}


class T5BucketExplorer(FigureExplorer):
    """T5's bucket against the relative position, and how many distances share each bucket.

    Left: the bucket of every relative position ``key - query`` in
    ``[-span, span]``, with the exact, log-spaced and clipped regions (and,
    in causal mode, the keys after the query) shaded. Right: the width of
    each bucket of the "keys before the query" direction, i.e. how many
    distances share it, on a log scale; the last bucket, which holds every
    farther distance, is left out. The status line reports the numbers of
    buckets per direction and of exact ones, and the distance at which the
    last bucket starts.

    Parameters
    ----------
    span : int, optional
        The curve covers relative positions ``-span .. span``; default 300,
        ``>= 64``.

    Attributes
    ----------
    buckets : numpy.ndarray
        The buckets drawn, one per relative position ``-span .. span``.
    max_exact : int
        Number of exact buckets per direction for the current controls.
    last_bucket_start : int
        The smallest distance back (``query - key``) in the last bucket of the
        "keys before the query" direction.

    Raises
    ------
    TypeError, ValueError
        If ``span`` is not an integer ``>= 64``.

    References
    ----------
    .. [1] C. Raffel et al., "Exploring the Limits of Transfer Learning with a
       Unified Text-to-Text Transformer", JMLR 21(140), 2020, section 2.1.

    Examples
    --------
    >>> explorer = T5BucketExplorer()
    >>> explorer.max_exact, explorer.last_bucket_start
    (8, 91)
    >>> explorer.set(bidirectional=False)
    >>> explorer.max_exact, explorer.last_bucket_start
    (16, 113)
    """

    def __init__(self, *, span: int = 300) -> None:
        self.span = require_count(span, "span", minimum=64)
        self.relative = np.arange(-self.span, self.span + 1)
        self.buckets = np.zeros_like(self.relative)
        self.max_exact = 0
        self.last_bucket_start = 0
        controls = {
            "num_buckets": widgets.IntSlider(
                value=32,
                min=8,
                max=64,
                step=4,
                description="num_buckets",
                style={"description_width": "initial"},
                continuous_update=False,
            ),
            "max_distance": widgets.IntSlider(
                value=128,
                min=40,
                max=256,
                step=8,
                description="max_distance",
                style={"description_width": "initial"},
                continuous_update=False,
            ),
            "bidirectional": widgets.ToggleButtons(
                options=[("bidirectional (encoder)", True), ("causal (decoder)", False)],
                value=True,
            ),
        }
        super().__init__(controls, figsize=(8.4, 3.3))

    @classmethod
    def demo(cls) -> tuple[T5BucketExplorer, list[dict]]:
        """The chapter 06 defaults (32 buckets, max_distance 128) and a sweep of every control."""
        explorer = cls()
        changes = [{"num_buckets": n} for n in (8, 16, 24, 48, 64, 32)]
        changes += [{"max_distance": m} for m in (40, 64, 200, 256, 128)]
        changes += [
            {"bidirectional": False},
            {"num_buckets": 8},
            {"max_distance": 256},
            {"num_buckets": 64},
            {"bidirectional": True},
            {"num_buckets": 32},
            {"max_distance": 128},
        ]
        return explorer, changes

    def _setup(self) -> None:
        fig = self.figure
        ax = self.ax_curve = fig.add_axes((0.07, 0.15, 0.56, 0.74))
        self.spans = {
            name: [ax.axvspan(0.0, 1.0, color=colour, alpha=REGION_ALPHA, linewidth=0) for _ in range(2)]
            for name, colour in REGION_COLOURS.items()
        }
        (self.curve,) = ax.plot(self.relative, self.buckets, drawstyle="steps-mid", color=OKABE_ITO[0], linewidth=1.6)
        ax.set_xlim(-self.span - 0.5, self.span + 0.5)
        ax.set_xlabel("relative position j − i, key minus query (tokens)")
        ax.set_ylabel("bucket")
        # The colour key goes into the status line (HTML): a figure legend would cost ~8 ms a redraw.
        self.key = " ".join(
            f'<span style="background:{to_hex(REGION_COLOURS[name])}59; padding:0 4px">{label}</span>'
            for name, label in _REGION_LABELS.items()
        )

        widths = self.ax_widths = fig.add_axes((0.74, 0.15, 0.24, 0.74))
        (self.width_line,) = widths.plot([], [], marker="o", markersize=3.5, color=OKABE_ITO[3], linewidth=1.0)
        widths.set_yscale("log")
        widths.set_ylim(0.7, 400.0)
        widths.set_xlim(-1.0, 64.0)
        # Fixed ticks: recomputing log ticks and titles on every draw costs more than the drawing.
        widths.yaxis.set_major_locator(FixedLocator([1.0, 10.0, 100.0]))
        widths.yaxis.set_major_formatter(FixedFormatter(["1", "10", "100"]))  # no mathtext
        widths.yaxis.set_minor_locator(NullLocator())
        widths.xaxis.set_major_locator(MaxNLocator(nbins=4, integer=True))
        ax.xaxis.set_major_locator(FixedLocator(np.arange(-300, 301, 100).tolist()))
        widths.set_xlabel("bucket (keys before the query)")
        widths.set_ylabel("distances in the bucket (tokens)")
        fig.text(0.86, 0.94, "bucket widths", ha="center", va="center", fontsize=10)
        self.curve_title = fig.text(0.35, 0.94, "", ha="center", va="center", fontsize=10)

    def _update(self, num_buckets: int, max_distance: int, bidirectional: bool) -> str:
        per_direction = num_buckets // 2 if bidirectional else num_buckets
        self.max_exact = per_direction // 2
        self.buckets = t5_relative_bucket(
            self.relative, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
        )
        self.curve.set_ydata(self.buckets)
        self.ax_curve.set_ylim(-0.8, num_buckets - 0.2)
        lo, hi = -self.span - 0.5, self.span + 0.5
        intervals = t5_spans(bidirectional, num_buckets, max_distance, lo, hi)
        for name, patches in self.spans.items():
            for index, patch in enumerate(patches):
                found = intervals[name][index] if index < len(intervals[name]) else None
                patch.set_visible(found is not None)
                if found is not None:
                    patch.set_x(found[0])
                    patch.set_width(found[1] - found[0])
        mode = "bidirectional" if bidirectional else "causal"
        self.curve_title.set_text(f"T5 buckets, {mode}: {num_buckets} buckets, max_distance {max_distance}")

        back = np.arange(0, max_distance + 1)  # distances back from the query, 0 .. max_distance
        back_buckets = t5_relative_bucket(
            -back, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
        )
        last = per_direction - 1
        self.last_bucket_start = int(back[back_buckets == last].min())
        counts = np.bincount(back_buckets, minlength=per_direction)[:last]
        self.width_line.set_data(np.arange(last), counts)
        self.ax_widths.set_xlim(-0.7, last - 0.3)
        empty = int((counts == 0).sum())
        widest = int(counts.max())
        note = f" {empty} bucket(s) receive no distance at all." if empty else ""
        layout = (
            f"{per_direction} buckets per direction"
            if bidirectional
            else f"all {per_direction} buckets for keys at or before the query (later keys: bucket 0)"
        )
        return (
            f"Shading: {self.key}<br>"
            f"{mode}: {layout}, distances 0 to {self.max_exact - 1} exact, "
            f"then log-spaced; every key {self.last_bucket_start} or more tokens back shares bucket "
            f"{last} (max_distance is {max_distance}). The widest other bucket holds {widest} "
            f"distances.{note}"
        )
