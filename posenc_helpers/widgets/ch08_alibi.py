"""Chapter 08 explorer: ALiBi slopes, one head's bias row and the attention it gives."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.ticker import MaxNLocator

from .._validation import require_count
from ..alibi import alibi_slopes
from ..attention import softmax
from ..plotting._style import OKABE_ITO
from ._explorer import FigureExplorer

__all__ = ["AlibiExplorer"]

#: Share of the attention weight that defines a head's span in the status line.
SPAN_SHARE = 0.9


class AlibiExplorer(FigureExplorer):
    """Pick the number of heads, one head and the sequence length; see the slope, bias and attention.

    Left: ``log2 m_h`` of every head in list order (heads beyond the largest
    power of two ``p <= n`` hollow), the chosen head ringed. Middle: the bias
    row of the last query ``i = n - 1``, both ALiBi's ``-m (i - j)`` and the
    ``m j`` shortcut, two parallel lines. Right: the attention weights of that
    query when all keys are identical (uniform content), so that only the
    bias decides; a dashed line marks where the most recent keys holding
    90% of the weight begin. The status line gives the slope, that span and
    the largest weight difference between the two biases (rounding level:
    softmax ignores a constant added to a row).

    Parameters
    ----------
    max_heads : int, optional
        Upper end of the heads slider, ``>= 1``. Default 32.
    max_len : int, optional
        Upper end of the length slider, ``>= 8``. Default 1024.
    n_heads : int, optional
        Starting number of heads, ``1 .. max_heads``. Default 12.
    seq_len : int, optional
        Starting sequence length, ``8 .. max_len``. Default 128.

    Attributes
    ----------
    slope : float
        Slope of the chosen head.
    weights : numpy.ndarray
        Attention weights of the last query over keys ``0 .. seq_len - 1``.
    span : int
        Number of most recent keys (distances ``0 .. span - 1``) that hold at
        least 90% of the weight.
    shortcut_difference : float
        ``max |weights(-m (i - j)) - weights(m j)|`` for the last query.

    Raises
    ------
    TypeError, ValueError
        If an argument is not an integer in its allowed range.

    References
    ----------
    .. [1] O. Press, N. A. Smith, M. Lewis, "Train Short, Test Long: Attention
       with Linear Biases Enables Input Length Extrapolation", ICLR 2022.

    Examples
    --------
    >>> explorer = AlibiExplorer()
    >>> explorer.set(head=9)
    >>> round(explorer.slope ** 2, 12), explorer.shortcut_difference < 1e-12
    (0.5, True)
    >>> explorer.set(n_heads=4)
    >>> explorer.values["head"]
    4
    """

    def __init__(
        self,
        max_heads: int = 32,
        max_len: int = 1024,
        *,
        n_heads: int = 12,
        seq_len: int = 128,
    ) -> None:
        self.max_heads = require_count(max_heads, "max_heads", minimum=1)
        self.max_len = require_count(max_len, "max_len", minimum=8)
        n_heads = require_count(n_heads, "n_heads", minimum=1)
        seq_len = require_count(seq_len, "seq_len", minimum=8)
        if n_heads > self.max_heads:
            raise ValueError(f"n_heads must be in 1 .. max_heads = {self.max_heads}, got {n_heads}")
        if seq_len > self.max_len:
            raise ValueError(f"seq_len must be in 8 .. max_len = {self.max_len}, got {seq_len}")
        self._syncing = False
        self.slope = 0.0
        self.weights = np.zeros(0)
        self.span = 0
        self.shortcut_difference = 0.0
        style = {"description_width": "initial"}
        controls = {
            "n_heads": widgets.IntSlider(value=n_heads, min=1, max=self.max_heads, description="heads n", style=style),
            "head": widgets.IntSlider(value=1, min=1, max=n_heads, description="head h", style=style),
            "seq_len": widgets.IntSlider(
                value=seq_len, min=8, max=self.max_len, step=8, description="length (tokens)", style=style
            ),
        }
        super().__init__(controls, figsize=(10.5, 3.4))

    @classmethod
    def demo(cls) -> tuple[AlibiExplorer, list[dict[str, Any]]]:
        """The chapter 08 set-up (12 heads, 128 tokens) and a sweep of every control."""
        explorer = cls()
        changes: list[dict[str, Any]] = [{"head": h} for h in (2, 5, 8, 9, 12, 1)]
        changes += [{"seq_len": n} for n in (8, 64, 256, 512, 1024, 128)]
        changes += [{"n_heads": n} for n in (8, 16, 5, 32, 1, 12)]
        changes += [{"head": h} for h in (3, 10)]
        return explorer, changes

    def _setup(self) -> None:
        fig = self.figure
        self.ax_slopes = fig.add_axes((0.075, 0.16, 0.235, 0.7))
        self.ax_bias = fig.add_axes((0.385, 0.16, 0.25, 0.7))
        self.ax_weights = fig.add_axes((0.72, 0.16, 0.265, 0.7))

        ax = self.ax_slopes
        (self.order_line,) = ax.plot([], [], color="0.6", linewidth=1.0, zorder=1)
        (self.base_points,) = ax.plot([], [], marker="o", linestyle="none", color=OKABE_ITO[0], markersize=5, zorder=2)
        (self.extra_points,) = ax.plot(
            [],
            [],
            marker="o",
            linestyle="none",
            markerfacecolor="white",
            markeredgecolor=OKABE_ITO[3],
            markeredgewidth=1.5,
            markersize=5,
            zorder=3,
        )
        (self.chosen_point,) = ax.plot(
            [],
            [],
            marker="o",
            linestyle="none",
            markerfacecolor="none",
            markeredgecolor=OKABE_ITO[7],
            markeredgewidth=1.6,
            markersize=12,
            zorder=4,
        )
        ax.set_ylim(-8.6, 0.3)
        ax.set_xlabel("head h (position in the list)")
        ax.set_ylabel(r"$\log_2 m_h$")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=6))
        self.slopes_title = fig.text(0.19, 0.94, "", ha="center", va="center", fontsize=10)

        ax = self.ax_bias
        (self.bias_line,) = ax.plot([], [], color=OKABE_ITO[0], linewidth=1.6, label=r"ALiBi: $-m(i-j)$")
        (self.shortcut_line,) = ax.plot(
            [], [], color=OKABE_ITO[1], linewidth=1.6, linestyle="--", label=r"shortcut: $m\,j$"
        )
        ax.axhline(0.0, color="0.85", linewidth=0.8, zorder=0)
        ax.set_xlabel("key position j (tokens)")
        ax.set_ylabel("bias added to the logit")
        ax.legend(loc="upper left", fontsize=8)
        self.bias_title = fig.text(0.51, 0.94, "", ha="center", va="center", fontsize=10)

        ax = self.ax_weights
        (self.weight_line,) = ax.plot([], [], color=OKABE_ITO[2], linewidth=1.6)
        self.span_marker = ax.axvline(0.0, color=OKABE_ITO[3], linewidth=1.2, linestyle="--")
        self.span_text = ax.text(
            0.03, 0.92, "", transform=ax.transAxes, fontsize=8, color=OKABE_ITO[3], ha="left", va="top"
        )
        ax.set_xlabel("key position j (tokens)")
        ax.set_ylabel("attention weight")
        self.weights_title = fig.text(0.85, 0.94, "", ha="center", va="center", fontsize=10)

        # Fixed tick counts and label positions: matplotlib then skips most of its per-draw layout work.
        self.ax_slopes.set_yticks([-8, -6, -4, -2, 0])
        for ax in (self.ax_bias, self.ax_weights):
            ax.xaxis.set_major_locator(MaxNLocator(nbins=4, integer=True))
            ax.yaxis.set_major_locator(MaxNLocator(nbins=4))
        for ax in (self.ax_slopes, self.ax_bias, self.ax_weights):
            ax.xaxis.set_label_coords(0.5, -0.13)
            ax.yaxis.set_label_coords(-0.19 if ax is not self.ax_slopes else -0.15, 0.5)
            ax.minorticks_off()

    def _on_change(self, change: Mapping[str, Any]) -> None:
        if self._syncing:
            return
        if change.get("owner") is self.controls["n_heads"]:
            # Keep the head slider within 1 .. n without a second redraw when it clamps its value.
            self._syncing = True
            try:
                self.controls["head"].max = int(change["new"])
            finally:
                self._syncing = False
        self.refresh()

    def _update(self, n_heads: int, head: int, seq_len: int) -> str:
        head = min(head, n_heads)
        slopes = alibi_slopes(n_heads)
        lower = 1 << (n_heads.bit_length() - 1)
        index = np.arange(1, n_heads + 1)
        exponent = np.log2(slopes)
        self.order_line.set_data(index, exponent)
        self.base_points.set_data(index[:lower], exponent[:lower])
        self.extra_points.set_data(index[lower:], exponent[lower:])
        self.chosen_point.set_data([head], [exponent[head - 1]])
        self.ax_slopes.set_xlim(0.4, n_heads + 0.6)
        self.slopes_title.set_text(f"slopes of {n_heads} head{'s' if n_heads > 1 else ''}, in list order")

        m = float(slopes[head - 1])
        self.slope = m
        query = seq_len - 1
        key = np.arange(seq_len, dtype=np.float64)
        alibi_row = -m * (query - key)
        shortcut_row = m * key
        self.bias_line.set_data(key, alibi_row)
        self.shortcut_line.set_data(key, shortcut_row)
        reach = max(m * query, 1e-12) * 1.1
        self.ax_bias.set_xlim(0, query)
        self.ax_bias.set_ylim(-reach, reach)
        self.bias_title.set_text(f"bias row of the last query, i = {query}")

        # Uniform content: every key is the same vector, so q . k is one constant and only the bias counts.
        weights = softmax(alibi_row)
        self.weights = weights
        self.shortcut_difference = float(np.abs(weights - softmax(shortcut_row)).max())
        by_distance = np.cumsum(weights[::-1])
        self.span = int(np.searchsorted(by_distance, SPAN_SHARE - 1e-12) + 1)
        start = seq_len - self.span
        self.weight_line.set_data(key, weights)
        self.span_marker.set_xdata([start, start])
        self.span_text.set_text(f"{SPAN_SHARE:.0%} of the weight\non the last {self.span} keys")
        self.ax_weights.set_xlim(0, query)
        self.ax_weights.set_ylim(0.0, float(weights.max()) * 1.1)
        self.weights_title.set_text("attention on uniform content")

        sorted_rank = int(np.sum(slopes > m)) + 1
        return (
            f"head {head} of {n_heads}: m = 2<sup>{np.log2(m):.3g}</sup> = {m:.4g} "
            f"(the {sorted_rank}{_suffix(sorted_rank)} steepest). Last query i = {query}: weight on itself "
            f"{weights[-1]:.3f}; {SPAN_SHARE:.0%} of the weight within the last {self.span} keys. "
            f"Largest weight difference between −m(i − j) and m·j: {self.shortcut_difference:.1e}"
        )


def _suffix(rank: int) -> str:
    """English ordinal suffix: 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st."""
    if 10 <= rank % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(rank % 10, "th")
