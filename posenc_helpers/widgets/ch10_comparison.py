"""Chapter 10 explorer: the hand-built head that attends ``phi`` tokens back."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

from .._validation import require_count
from ..offset_head import offset_head_closed_form, offset_head_weights, offset_score
from ..plotting._style import OKABE_ITO, SEQUENTIAL_CMAP
from ._explorer import FigureExplorer

__all__ = ["OffsetHeadExplorer"]

#: Widths offered by the explorer.
WIDTHS = (8, 16, 32, 64, 128)
#: Temperatures offered, powers of two from 1/32 to 2.
TEMPERATURES = tuple(2.0**k for k in range(-5, 2))
#: Largest offset on the slider.
MAX_OFFSET = 12


class OffsetHeadExplorer(FigureExplorer):
    """The head ``q_i = PE(i)``, ``k_j = M(phi) PE(j)`` at its design length and far beyond.

    Left: its causal attention weights over the first ``design_length``
    tokens. Right: for every query ``i`` up to ``long_length``, the weight on
    the key exactly ``phi`` back and the largest weight on any other key,
    against ``i`` on a log scale. The status line gives the smallest weight on
    the target at both lengths and the score margin ``f(0) - max f(delta != 0)``
    that sets how sharp the peak can be.

    Parameters
    ----------
    design_length : int, optional
        Tokens in the left panel, 8 to 256. Default 64.
    long_length : int, optional
        Queries in the right panel, ``> design_length``, at most 100 000.
        Default 10 000.

    Raises
    ------
    TypeError, ValueError
        If a length is not an integer in its range.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017, section 3.5.

    Examples
    --------
    >>> explorer = OffsetHeadExplorer()
    >>> explorer.set(offset=5, d_model=32, temperature=0.125)
    >>> bool(explorer.min_weight_long > 0.9), bool(explorer.argmax_on_target)
    (True, True)
    """

    def __init__(self, design_length: int = 64, long_length: int = 10_000) -> None:
        self.design_length = require_count(design_length, "design_length", minimum=8)
        if self.design_length > 256:
            raise ValueError(f"design_length must be an integer in [8, 256], got {self.design_length}")
        self.long_length = require_count(long_length, "long_length", minimum=self.design_length + 1)
        if self.long_length > 100_000:
            raise ValueError(f"long_length must be at most 100000, got {self.long_length}")
        self._scores: dict[int, np.ndarray] = {}
        self.min_weight_design = float("nan")
        self.min_weight_long = float("nan")
        self.margin = float("nan")
        self.argmax_on_target = False
        controls = {
            "offset": widgets.IntSlider(
                value=3, min=0, max=MAX_OFFSET, description="offset φ", style={"description_width": "initial"}
            ),
            "d_model": widgets.SelectionSlider(options=[(str(w), w) for w in WIDTHS], value=64, description="width d"),
            "temperature": widgets.SelectionSlider(
                options=[(f"{t:g}", t) for t in TEMPERATURES],
                value=0.25,
                description="temperature τ",
                style={"description_width": "initial"},
            ),
        }
        super().__init__(controls, figsize=(9.0, 3.6))

    @classmethod
    def demo(cls) -> tuple[OffsetHeadExplorer, list[dict]]:
        """The chapter 10 set-up (64 and 10 000 tokens) and a sweep of every control."""
        explorer = cls()
        changes: list[dict[str, Any]] = [{"offset": p} for p in (0, 1, 6, 12, 3)]
        changes += [{"d_model": w} for w in WIDTHS] + [{"d_model": 64}]
        changes += [{"temperature": t} for t in TEMPERATURES] + [{"temperature": 0.25}]
        return explorer, changes

    def _score_table(self, d_model: int) -> np.ndarray:
        """``f(delta)`` for ``delta = -MAX_OFFSET .. long_length - 1``, cached per width."""
        if d_model not in self._scores:
            delta = np.arange(-MAX_OFFSET, self.long_length, dtype=np.float64)
            self._scores[d_model] = offset_score(delta, d_model)
        return self._scores[d_model]

    def _setup(self) -> None:
        n = self.design_length
        fig = self.figure
        self.ax_map = fig.add_axes((0.07, 0.15, 0.34, 0.72))
        cax = fig.add_axes((0.42, 0.15, 0.012, 0.72))
        self.ax_far = fig.add_axes((0.55, 0.15, 0.41, 0.72))
        self.weight_map = self.ax_map.imshow(
            np.zeros((n, n)), cmap=SEQUENTIAL_CMAP, vmin=0.0, vmax=1.0, interpolation="nearest"
        )
        cax.imshow(
            np.linspace(1.0, 0.0, 64)[:, None],
            cmap=SEQUENTIAL_CMAP,
            vmin=0.0,
            vmax=1.0,
            aspect="auto",
            extent=(0.0, 1.0, 0.0, 1.0),
        )
        cax.set_xticks([])
        cax.yaxis.tick_right()
        cax.set_yticks([0.0, 0.5, 1.0])
        cax.tick_params(labelsize=8)
        ticks = np.arange(0, n, max(n // 4, 1))
        self.ax_map.set_xticks(ticks)
        self.ax_map.set_yticks(ticks)
        self.ax_map.set_xlabel("key position j (tokens)")
        self.ax_map.set_ylabel("query position i (tokens)")
        self.map_title = fig.text(0.24, 0.94, "", ha="center", va="center", fontsize=11)

        far = self.ax_far
        (self.target_line,) = far.plot([], [], color=OKABE_ITO[0], linewidth=1.8, label="weight on key i − φ")
        (self.runner_line,) = far.plot(
            [], [], color=OKABE_ITO[3], linewidth=1.4, linestyle="--", label="largest weight on any other key"
        )
        far.axvline(n, color="0.4", linestyle=":", linewidth=1.0)
        far.text(n * 1.08, 0.52, f"design\nlength {n}", fontsize=8, color="0.3", va="center")
        far.set_xscale("log")
        far.set_xlim(1.0, self.long_length)
        far.set_ylim(-0.03, 1.05)
        decades = 10.0 ** np.arange(0, int(np.log10(self.long_length)) + 1)
        far.xaxis.set_major_locator(FixedLocator(decades.tolist()))
        # plain labels: log-scale's default 10^k labels go through mathtext, slow to draw
        far.xaxis.set_major_formatter(FixedFormatter([f"{int(x):,}" for x in decades]))
        far.xaxis.set_minor_locator(NullLocator())
        far.yaxis.set_major_locator(FixedLocator([0.0, 0.2, 0.4, 0.6, 0.8, 1.0]))
        far.set_xlabel("query position i (tokens, log scale)")
        far.set_ylabel("attention weight")
        far.legend(loc="lower left", fontsize=8)
        self.far_title = fig.text(0.765, 0.94, "", ha="center", va="center", fontsize=11)
        # Queries drawn on the right: every one up to 100, then geometrically spaced.
        self.plot_rows = np.unique(
            np.concatenate([np.arange(0, 100), np.geomspace(100, self.long_length - 1, 300).astype(np.int64)])
        )

    def _dynamic_artists(self) -> tuple:
        # The weight map, both curves and the titles change; axes, colour bar and legend stay.
        return (self.weight_map, self.map_title, self.target_line, self.runner_line, self.far_title)

    def _update(self, offset: int, d_model: int, temperature: float) -> str:
        n = self.design_length
        weights = offset_head_weights(n, offset, d_model, temperature=temperature)
        self.weight_map.set_data(weights)
        self.map_title.set_text(f"first {n} tokens: φ = {offset}, d = {d_model}, τ = {temperature:g}")

        start = MAX_OFFSET - offset
        scores = self._score_table(d_model)[start : start + self.long_length]  # scores[m] = f(m - offset)
        target, runner = offset_head_closed_form(scores, offset, temperature)
        queries = np.arange(offset, self.long_length)
        rows = self.plot_rows[self.plot_rows >= max(offset, 1)]
        self.target_line.set_data(rows, target[rows - offset])
        self.runner_line.set_data(rows, runner[rows - offset])
        self.far_title.set_text(f"every query up to {self.long_length:,} tokens")

        design_rows = queries < n
        self.min_weight_design = float(target[design_rows].min())
        self.min_weight_long = float(target.min())
        peak = scores[offset]
        others = np.delete(scores, offset)
        self.margin = float(peak - others.max())
        self.argmax_on_target = bool(np.all(target > runner))
        verdict = "yes" if self.argmax_on_target else "no"
        return (
            f"smallest weight on key i − φ: {self.min_weight_design:.3f} over the first {n} tokens, "
            f"{self.min_weight_long:.3f} over {self.long_length:,} tokens; score margin f(0) − "
            f"max f(δ ≠ 0) = {self.margin:.3f}; most weight on key i − φ for every query: {verdict}"
        )
