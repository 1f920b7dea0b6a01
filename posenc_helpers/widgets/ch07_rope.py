"""Chapter 07 explorer: RoPE's long-term decay bound beside actual scores, by head width and base."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.artist import Artist

from .._validation import require_count, require_even_width, require_positive_real
from ..plotting.ch07_rope import BOUND_COLOUR, SCORE_COLOURS, SCORE_STYLES
from ..rope import rope_frequencies
from ..rope_analysis import rope_decay_bound, rope_decay_scores, rope_slowest_pair_vector
from ._explorer import FigureExplorer

__all__ = ["RopeDecayExplorer"]

HEAD_DIMS = (16, 32, 64, 128, 256)


def _nice_ticks(top: float) -> np.ndarray:
    """About four round tick values from 0 up to ``top``."""
    step = 10.0 ** np.floor(np.log10(top / 4.0))
    for factor in (1.0, 2.0, 5.0, 10.0):
        if top / (factor * step) <= 5.0:
            step *= factor
            break
    return np.arange(0.0, top + 1e-9, step)


class RopeDecayExplorer(FigureExplorer):
    """RoFormer's decay bound and two actual scores, as the head width and the base change.

    Left: the relative upper bound :func:`~posenc_helpers.rope_decay_bound`
    against the relative distance ``r = 0 .. max_distance`` (tokens). Right:
    the scores of two query/key choices, each divided by its value at
    ``r = 0``: a random ``q = k`` (seeded, redrawn for each head width) and
    ``q = k`` lying in the slowest pair. The bound decays; the slowest-pair
    score barely moves when its pair turns slowly, at
    ``theta_{d/2-1} = base**(-(d-2)/d)`` radians per token.

    Only the curves and the titles change with the controls, so a frame is
    drawn by blitting them onto a cached picture of everything else (axes,
    ticks, labels), one per head width because the left panel's scale
    depends on it; the result is the same picture as a full redraw, several
    times faster.

    Parameters
    ----------
    head_dim : int, optional
        Starting head width, one of 16, 32, 64, 128, 256. Default 128.
    base : float, optional
        Starting base, between 10 and 10**6. Default 10000.
    max_distance : int, optional
        Largest relative distance drawn, ``>= 1``. Default 1024.
    seed : int, optional
        Seed of the random ``q = k``. Default 0.

    Attributes
    ----------
    bound_ratio : float
        The bound at ``max_distance`` divided by its value at 0.
    slowest_min : float
        The smallest normalised slowest-pair score over the drawn distances.

    Raises
    ------
    TypeError, ValueError
        If an argument is not of the allowed kind or range.

    References
    ----------
    .. [1] J. Su et al., "RoFormer: Enhanced Transformer with Rotary Position
       Embedding", Neurocomputing 568, 2024 (arXiv:2104.09864), section 3.4.3.

    Examples
    --------
    >>> explorer = RopeDecayExplorer()
    >>> explorer.bound_ratio < 0.2, explorer.slowest_min > 0.99
    (True, True)
    >>> explorer.set(base=100.0)
    >>> explorer.slowest_min < 0.0
    True
    """

    def __init__(
        self,
        head_dim: int = 128,
        *,
        base: float = 10000.0,
        max_distance: int = 1024,
        seed: int = 0,
    ) -> None:
        head_dim = require_even_width(head_dim, "head_dim")
        if head_dim not in HEAD_DIMS:
            raise ValueError(f"head_dim must be one of {HEAD_DIMS}, got {head_dim}")
        base = require_positive_real(base, "base")
        if not 10.0 <= base <= 1e6:
            raise ValueError(f"base must be between 10 and 1e6, got {base!r}")
        self.max_distance = require_count(max_distance, "max_distance", minimum=1)
        self.seed = require_count(seed, "seed")
        self.distances = np.arange(self.max_distance + 1, dtype=np.float64)
        self.bound_ratio = 1.0
        self.slowest_min = 1.0
        self._backgrounds: dict[int, object] = {}
        controls = {
            "head_dim": widgets.Dropdown(
                options=list(HEAD_DIMS),
                value=head_dim,
                description="head_dim",
                style={"description_width": "initial"},
                layout=widgets.Layout(width="160px"),
            ),
            "base": widgets.FloatLogSlider(
                value=base,
                base=10,
                min=1,
                max=6,
                step=0.25,
                description="base",
                readout_format=",.0f",
                style={"description_width": "initial"},
            ),
        }
        super().__init__(controls, figsize=(8.8, 3.5))

    @classmethod
    def demo(cls) -> tuple[RopeDecayExplorer, list[dict]]:
        """The chapter 07 set-up (``head_dim = 128``, base 10000) and a sweep of both controls."""
        explorer = cls()
        changes: list[dict[str, Any]] = [{"head_dim": d} for d in (16, 32, 64, 256, 128)]
        changes += [{"base": float(b)} for b in (10.0, 100.0, 1000.0, 1e5, 1e6, 1e4)]
        return explorer, changes

    def _random_vector(self, head_dim: int) -> np.ndarray:
        return np.random.default_rng(seed=self.seed).normal(size=head_dim)

    def _setup(self) -> None:
        fig = self.figure
        r = self.distances
        self.ax_bound = fig.add_axes((0.08, 0.15, 0.36, 0.72))
        self.ax_scores = fig.add_axes((0.56, 0.15, 0.42, 0.72))
        ax = self.ax_bound
        (self.bound_line,) = ax.plot(r, np.ones_like(r), color=BOUND_COLOUR, linewidth=1.6)
        # Fixed ticks: working them out again on every draw is most of the cost of a frame.
        x_ticks = np.linspace(0.0, r[-1], 5)
        ax.set_xlim(0.0, r[-1])
        ax.set_xticks(x_ticks)
        ax.set_xlabel("relative distance m − n (tokens)")
        ax.set_ylabel("(1/(d/2)) Σ_j |S_j|")
        self.bound_title = fig.text(0.26, 0.95, "", ha="center", va="center", fontsize=10.5)
        ax = self.ax_scores
        (self.random_line,) = ax.plot(
            r, np.ones_like(r), color=SCORE_COLOURS[0], linestyle=SCORE_STYLES[0], linewidth=1.1, label="random q = k"
        )
        (self.slowest_line,) = ax.plot(
            r,
            np.ones_like(r),
            color=SCORE_COLOURS[1],
            linestyle=SCORE_STYLES[1],
            linewidth=1.6,
            label="q = k in the slowest pair",
        )
        ax.axhline(0.0, color="0.8", linewidth=0.8, zorder=0)
        ax.set_xlim(0.0, r[-1])
        ax.set_xticks(x_ticks)
        ax.set_ylim(-1.05, 1.1)
        ax.set_yticks([-1.0, -0.5, 0.0, 0.5, 1.0])
        ax.set_xlabel("relative distance m − n (tokens)")
        ax.set_ylabel("score / score at distance 0")
        ax.legend(loc="lower left", fontsize=8)
        self.scores_title = fig.text(0.77, 0.95, "", ha="center", va="center", fontsize=10.5)
        # What changes from frame to frame, in the order a full draw paints it (by zorder:
        # lines, then the spines and the legend above them, then the figure texts).
        self._dynamic: list[Artist] = [self.bound_line, self.random_line, self.slowest_line]
        for axes in (self.ax_bound, self.ax_scores):
            self._dynamic += [spine for spine in axes.spines.values() if spine.get_visible()]
        legend = self.ax_scores.get_legend()
        assert legend is not None  # drawn above
        self._dynamic += [legend, self.bound_title, self.scores_title]

    def _dynamic_artists(self) -> list[Artist]:
        return self._dynamic

    def _background_key(self) -> int:
        return self.controls["head_dim"].value  # axes and ticks depend on the width only

    def _update(self, head_dim: int, base: float) -> str:
        vectors = {"random": self._random_vector(head_dim), "slowest": rope_slowest_pair_vector(head_dim)}
        bound = rope_decay_bound(self.distances, head_dim, base=base)
        scores = rope_decay_scores(self.distances, head_dim, vectors, base=base)
        at_zero = (head_dim // 2 + 1) / 2.0  # the bound at distance 0: the mean of 1 .. d/2
        self.bound_line.set_ydata(bound)
        self.ax_bound.set_ylim(0.0, 1.05 * at_zero)
        self.ax_bound.set_yticks(_nice_ticks(at_zero))
        self.random_line.set_ydata(scores["random"])
        self.slowest_line.set_ydata(scores["slowest"])
        self.bound_ratio = float(bound[-1] / at_zero)
        self.slowest_min = float(scores["slowest"].min())
        theta_slowest = float(rope_frequencies(head_dim, base=base)[-1])
        wavelength = 2.0 * np.pi / theta_slowest
        self.bound_title.set_text(f"the bound decays (head_dim = {head_dim}, base = {base:,.0f})")
        self.scores_title.set_text(f"a score need not (slowest pair: {wavelength:,.0f} tokens per turn)")
        return (
            f"head_dim = {head_dim}, base = {base:,.0f}: at distance {self.max_distance} the bound is "
            f"{self.bound_ratio:.2f} times its value at 0; the lowest score of q = k in the slowest "
            f"pair (wavelength {wavelength:,.0f} tokens) over the plotted range is "
            f"{self.slowest_min:.2f} times its value at 0. The bound limits how large a score can be; "
            f"it does not make a score decay."
        )
