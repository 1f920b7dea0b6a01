"""Chapter 02 explorer: sentence length and embedding scale for the naive encodings."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.ticker import FixedLocator, LogFormatterMathtext, NullLocator

from .._validation import require_count
from ..plotting._style import OKABE_ITO
from ._explorer import FigureExplorer

__all__ = ["NaivePositionsExplorer"]

_SCALE_EXPONENTS = (-2.0, 1.0)  # embedding scale slider: 10**-2 .. 10**1


class NaivePositionsExplorer(FigureExplorer):
    """Normalised positions of a sentence of length ``n`` beside the raw index's size.

    Left panel: the normalised positions ``t / (n - 1)`` of the chosen sentence
    next to those of a short reference sentence, with one step marked in each.
    Right panel: the ratio ``|t * 1_d| / (scale * m)`` of the raw-index position
    vector (the index in every feature) to a typical embedding, where ``m`` is
    the median row norm of ``embeddings``; the positions of the sentence are
    drawn bold, the continuation faint. The controls are the sentence length
    and the embedding scale.

    Parameters
    ----------
    embeddings : numpy.ndarray
        Token embeddings at scale 1, shape ``(vocabulary, d)``, finite, not all
        zero; the slider multiplies them by the scale.
    max_length : int, optional
        Longest sentence on the length slider, ``>= 3``. Default 500.
    reference_length : int, optional
        Length of the reference sentence, ``>= 2``. Default 5.
    length : int, optional
        Starting length, ``2 <= length <= max_length``. Default 50.

    Raises
    ------
    TypeError
        If a length is not an integer.
    ValueError
        If ``embeddings`` is not a finite 2-D array with a non-zero row, or a
        length is out of range.

    References
    ----------
    .. [1] A. Kazemnejad, "Transformer Architecture: The Positional Encoding",
       2019 (the length-dependent step of normalised positions).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.full((3, 4), 0.5)  # every row has norm 1; sqrt(d) = 2
    >>> explorer = NaivePositionsExplorer(x, max_length=20, length=10)
    >>> explorer.first_dominant_position()
    1
    >>> explorer.set(scale=10.0)
    >>> explorer.first_dominant_position()
    5
    >>> explorer.status.value.split(";")[0]
    'n = 10: one step = 1/9 = 0.111 of the sentence (0.444 x the step at n = 5)'
    """

    def __init__(
        self,
        embeddings: np.ndarray,
        *,
        max_length: int = 500,
        reference_length: int = 5,
        length: int = 50,
    ) -> None:
        table = np.asarray(embeddings, dtype=float)
        if table.ndim != 2 or table.shape[0] < 1 or table.shape[1] < 1:
            raise ValueError(f"embeddings must be a 2-D array (vocabulary, d), got shape {table.shape}")
        if not np.all(np.isfinite(table)):
            raise ValueError("embeddings must be finite")
        self.typical_norm = float(np.median(np.linalg.norm(table, axis=1)))
        if self.typical_norm <= 0:
            raise ValueError("embeddings must have a typical (median) row norm above 0")
        self.d = table.shape[1]
        self.max_length = require_count(max_length, "max_length", minimum=3)
        self.reference_length = require_count(reference_length, "reference_length", minimum=2)
        length = require_count(length, "length", minimum=2)
        if length > self.max_length:
            raise ValueError(f"length must be at most max_length = {self.max_length}, got {length}")
        controls = {
            "length": widgets.IntSlider(
                value=length,
                min=2,
                max=self.max_length,
                description="sentence length n",
                style={"description_width": "initial"},
            ),
            "scale": widgets.FloatLogSlider(
                value=1.0,
                base=10,
                min=_SCALE_EXPONENTS[0],
                max=_SCALE_EXPONENTS[1],
                step=0.1,
                description="embedding scale",
                readout_format=".2g",
                style={"description_width": "initial"},
            ),
        }
        super().__init__(controls, figsize=(9.0, 3.3))

    @classmethod
    def demo(cls) -> tuple[NaivePositionsExplorer, list[dict]]:
        """The chapter 02 set-up (1000 tokens, width 64, scale 1) and a sweep of both controls."""
        embeddings = np.random.default_rng(0).normal(size=(1000, 64))
        explorer = cls(embeddings)
        changes: list[dict[str, Any]] = [{"length": n} for n in (2, 5, 10, 20, 50, 100, 200, 500, 50)]
        changes += [{"scale": s} for s in (0.01, 0.1, 1.0, 10.0, 1.0)]
        return explorer, changes

    def first_dominant_position(self) -> int:
        """First position whose index vector is at least as long as a typical embedding."""
        typical = self.controls["scale"].value * self.typical_norm
        return int(np.ceil(typical / np.sqrt(self.d)))

    def _ratio(self, positions: Any, scale: float) -> Any:  # a float for a float, an array for an array
        return positions * np.sqrt(self.d) / (scale * self.typical_norm)

    def _setup(self) -> None:
        self.ax_strip = self.figure.add_axes((0.09, 0.2, 0.36, 0.66))
        self.ax_ratio = self.figure.add_axes((0.58, 0.2, 0.39, 0.66))
        ref = self.reference_length
        ref_step = 1.0 / (ref - 1)
        ax = self.ax_strip
        ax.scatter(np.arange(ref) / (ref - 1), np.ones(ref), s=30, color=OKABE_ITO[0], zorder=3)
        ax.plot([0.0, ref_step], [0.72, 0.72], color=OKABE_ITO[0], marker="|", markersize=7)
        ax.text(ref_step + 0.015, 0.72, f"step 1/{ref - 1} = {ref_step:.3g}", va="center", fontsize=8)
        self.dots = ax.scatter(np.zeros(2), np.zeros(2), s=12, color=OKABE_ITO[1], zorder=3)
        (self.bracket,) = ax.plot([0.0, 1.0], [-0.28, -0.28], color=OKABE_ITO[1], marker="|", markersize=7)
        self.step_text = ax.text(0.0, -0.28, "", va="center", fontsize=8)
        ax.yaxis.set_major_locator(NullLocator())
        ax.text(-0.04, 1.0, f"n = {ref}", ha="right", va="center", transform=ax.get_yaxis_transform())
        self.length_label = ax.text(-0.04, 0.0, "", ha="right", va="center", transform=ax.get_yaxis_transform())
        ax.set_ylim(-0.6, 1.4)
        ax.set_xlim(-0.03, 1.03)
        ax.set_xlabel("normalised position t/(n-1)")
        ax.set_title("normalised positions and one step")
        ax.spines["left"].set_visible(False)
        ax.tick_params(axis="y", length=0)

        ax = self.ax_ratio
        self.all_positions = np.arange(1.0, self.max_length)
        (self.faint,) = ax.plot(
            self.all_positions,
            self.all_positions,
            color=OKABE_ITO[3],
            alpha=0.35,
            linewidth=1.2,
            label="longer sentences",
        )
        (self.bold,) = ax.plot(
            self.all_positions[:1], self.all_positions[:1], color=OKABE_ITO[3], linewidth=2.2, label="this sentence"
        )
        (self.last,) = ax.plot([1.0], [1.0], linestyle="none", marker="o", color=OKABE_ITO[3])
        ax.axhline(1.0, color="0.4", linestyle=":", linewidth=1.0)
        ax.set_xscale("log")
        ax.set_yscale("log")
        low, high = 10.0 ** np.array(_SCALE_EXPONENTS)
        ax.set_xlim(0.8, self.max_length * 1.25)
        ax.set_ylim(0.5 * self._ratio(1.0, float(high)), 2.0 * self._ratio(self.max_length - 1.0, float(low)))
        # Fixed decade ticks and no minor ticks: log axes otherwise spend most of a redraw on ticks.
        for axis, top in ((ax.xaxis, self.max_length * 1.25), (ax.yaxis, ax.get_ylim()[1])):
            axis.set_major_locator(FixedLocator((10.0 ** np.arange(-3, np.ceil(np.log10(top)) + 1)).tolist()))
            axis.set_major_formatter(LogFormatterMathtext())
            axis.set_minor_locator(NullLocator())
        ax.set_xlabel("position t (tokens)")
        ax.set_ylabel("|t 1_d| / typical |x|")
        ax.set_title("raw index against an embedding")
        ax.legend(loc="upper left", fontsize=8)

    def _dynamic_artists(self) -> tuple:
        # Only these change with the controls (the axes limits are fixed): blitting, see FigureExplorer.
        return (self.dots, self.bracket, self.step_text, self.length_label, self.faint, self.bold, self.last)

    def _update(self, length: int, scale: float) -> str:
        n = int(length)
        step = 1.0 / (n - 1)
        values = np.arange(n) / (n - 1)
        self.dots.set_offsets(np.column_stack([values, np.zeros(n)]))
        self.dots.set_sizes([30.0 if n <= 20 else 12.0])
        self.bracket.set_xdata([0.0, step])
        self.step_text.set_position((step + 0.015, -0.28))
        self.step_text.set_text(f"step 1/{n - 1} = {step:.3g}")
        self.length_label.set_text(f"n = {n}")

        ratios = self._ratio(self.all_positions, scale)
        self.faint.set_ydata(ratios)
        self.bold.set_data(self.all_positions[: n - 1], ratios[: n - 1])
        last = n - 1
        ratio_last = float(self._ratio(float(last), scale))
        self.last.set_data([float(last)], [ratio_last])

        first = self.first_dominant_position()
        reference_step = 1.0 / (self.reference_length - 1)
        if first <= last:
            crossing = f"the raw index outgrows a typical embedding from position {first}"
        else:
            crossing = "the raw index stays below a typical embedding in this sentence"
        return (
            f"n = {n}: one step = 1/{n - 1} = {step:.3g} of the sentence "
            f"({step / reference_step:.3g} x the step at n = {self.reference_length}); "
            f"embedding scale {scale:.2g} (typical norm {scale * self.typical_norm:.3g}): "
            f"{crossing}; at the last position, t = {last}, it is {ratio_last:.3g} x as long"
        )
