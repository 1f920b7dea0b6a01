"""Chapter 04 explorer: the sinusoidal table and its wavelengths as the width and base change."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.ticker import FixedLocator, MaxNLocator, NullLocator

from .._validation import require_count
from ..plotting._style import DIVERGING_CMAP, OKABE_ITO
from ..sinusoidal import sinusoidal_encoding, wavelengths
from ._explorer import FigureExplorer

__all__ = ["SinusoidalExplorer"]

#: Widths offered by the explorer (even, as the encoding requires).
WIDTHS = (8, 16, 32, 64, 128, 256, 512)
#: Bases offered by the explorer, 10 to one million in factors of 10.
BASES = (10.0, 100.0, 1e3, 1e4, 1e5, 1e6)


class SinusoidalExplorer(FigureExplorer):
    """Heatmap of ``PE(t)`` and the wavelength of every pair, for a chosen ``d`` and base.

    The left panel is the table for positions ``0 .. n_positions - 1`` (rows)
    and all ``d`` dimensions (columns); the right panel plots the wavelength
    ``lambda_k = 2*pi * base**(2k/d)`` of every pair ``k`` on a log scale,
    with the shortest possible wavelength ``2*pi``, the limit ``2*pi * base``
    and the number of positions shown as reference lines. The status line
    reports the range of wavelengths, their common ratio and how many pairs
    make a full turn within the positions shown.

    Parameters
    ----------
    n_positions : int, optional
        Number of positions (rows of the heatmap), 2 to 1000. Default 50.
    d_model : int, optional
        Starting width, one of ``8, 16, 32, 64, 128, 256, 512``. Default 128.
    base : float, optional
        Starting base, one of ``10, 100, ..., 1e6``. Default 10000.

    Raises
    ------
    TypeError, ValueError
        If ``n_positions`` is not an integer in ``[2, 1000]``, or ``d_model``
        or ``base`` is not one of the offered values.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017, section 3.5.

    Examples
    --------
    >>> explorer = SinusoidalExplorer()
    >>> explorer.set(d_model=16, base=100.0)
    >>> print(explorer.status.value)
    d = 16, base = 100: 8 pairs, wavelengths from 6.28 to 353 tokens, each 1.778 times the previous; 4 of 8 pairs make a full turn between t = 0 and t = 49
    """

    def __init__(self, n_positions: int = 50, d_model: int = 128, base: float = 10000.0) -> None:
        self.n_positions = require_count(n_positions, "n_positions", minimum=2)
        if self.n_positions > 1000:
            raise ValueError(f"n_positions must be an integer in [2, 1000], got {self.n_positions}")
        if d_model not in WIDTHS:
            raise ValueError(f"d_model must be one of {WIDTHS}, got {d_model!r}")
        if base not in BASES:
            raise ValueError(f"base must be one of {tuple(f'{b:g}' for b in BASES)}, got {base!r}")
        controls = {
            "d_model": widgets.SelectionSlider(
                options=[(str(w), w) for w in WIDTHS],
                value=d_model,
                description="width d",
                continuous_update=True,
            ),
            "base": widgets.SelectionSlider(
                options=[(f"{b:,.0f}", b) for b in BASES],
                value=float(base),
                description="base",
                continuous_update=True,
            ),
        }
        super().__init__(controls, figsize=(9.6, 3.4))

    @classmethod
    def demo(cls) -> tuple[SinusoidalExplorer, list[dict]]:
        """The chapter 04 defaults (50 positions, d = 128, base 10000) and every width and base."""
        explorer = cls()
        changes = [{"d_model": w} for w in WIDTHS] + [{"base": b} for b in BASES]
        changes.append({"d_model": 128, "base": 1e4})
        return explorer, changes

    def _setup(self) -> None:
        n = self.n_positions
        self.ax_table = self.figure.add_axes((0.065, 0.16, 0.39, 0.72))
        cax = self.figure.add_axes((0.465, 0.16, 0.011, 0.72))
        self.ax_waves = self.figure.add_axes((0.575, 0.16, 0.25, 0.72))
        self.heatmap = self.ax_table.imshow(
            np.zeros((n, 2)),
            cmap=DIVERGING_CMAP,
            vmin=-1.0,
            vmax=1.0,
            aspect="auto",
            interpolation="nearest",
        )
        # A static gradient instead of figure.colorbar: same look, a fraction of the drawing time.
        cax.imshow(
            np.linspace(1.0, -1.0, 64)[:, None],
            cmap=DIVERGING_CMAP,
            vmin=-1.0,
            vmax=1.0,
            aspect="auto",
            extent=(0.0, 1.0, -1.0, 1.0),
        )
        cax.set_xticks([])
        cax.yaxis.tick_right()
        cax.set_yticks([-1.0, 0.0, 1.0])
        cax.tick_params(labelsize=8)
        self.ax_table.set_xlabel("dimension i")
        self.ax_table.set_ylabel("position t (tokens)")
        # Fixed tick positions (set here and in _update) are much cheaper to draw than locators.
        self.ax_table.set_yticks(MaxNLocator(nbins=5, integer=True).tick_values(0, n - 1)[:-1])

        (self.wave_line,) = self.ax_waves.plot(
            [], [], marker="o", markersize=2.5, linewidth=1.2, color=OKABE_ITO[0], label="$\\lambda_k$"
        )
        self.ax_waves.axhline(2 * np.pi, color="0.35", linestyle="--", linewidth=0.9, label="$2\\pi$ (shortest)")
        self.limit_line = self.ax_waves.axhline(
            1.0, color="0.35", linestyle=":", linewidth=0.9, label="$2\\pi\\cdot$base"
        )
        self.ax_waves.axhline(n, color=OKABE_ITO[1], linestyle="-.", linewidth=0.9, label=f"{n} positions")
        self.ax_waves.set_yscale("log")
        self.ax_waves.set_ylim(1.0, 2 * np.pi * max(BASES) * 5)
        # Fixed decades, no minor ticks: the limits never change, so neither do the ticks.
        self.ax_waves.yaxis.set_major_locator(FixedLocator((10.0 ** np.arange(0, 8)).tolist()))
        self.ax_waves.yaxis.set_minor_locator(NullLocator())
        self.ax_waves.set_xlabel("pair index k")
        self.ax_waves.set_ylabel("wavelength (tokens)")
        self.ax_waves.set_title("wavelength of each pair")
        self.ax_waves.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8)

    def _dynamic_artists(self) -> list:
        # The base only moves these; the width also changes ticks and limits.
        return [self.heatmap, self.ax_table.title, self.wave_line, self.limit_line]

    def _background_key(self) -> int:
        return self.controls["d_model"].value

    def _update(self, d_model: int, base: float) -> str:
        n = self.n_positions
        table = sinusoidal_encoding(n, d_model, base=base)
        self.heatmap.set_data(table)
        self.heatmap.set_extent((-0.5, d_model - 0.5, n - 0.5, -0.5))
        self.ax_table.set_xticks(np.arange(0, d_model, d_model // 4))
        self.ax_table.set_xlim(-0.5, d_model - 0.5)
        self.ax_table.set_ylim(n - 0.5, -0.5)
        self.ax_table.set_title(f"PE(t), d = {d_model}, base = {base:,.0f}")

        lam = wavelengths(d_model, base=base)
        pairs = lam.size
        self.wave_line.set_data(np.arange(pairs), lam)
        self.limit_line.set_ydata([2 * np.pi * base] * 2)
        self.ax_waves.set_xticks(np.arange(0, pairs, max(pairs // 4, 1)))
        self.ax_waves.set_xlim(-0.5, pairs - 0.5)
        ratio = lam[1] / lam[0] if pairs > 1 else float("nan")
        turning = int(np.count_nonzero(lam <= n - 1))
        return (
            f"d = {d_model}, base = {base:,.0f}: {pairs} pairs, wavelengths from {lam[0]:.2f} to "
            f"{lam[-1]:,.0f} tokens, each {ratio:.3f} times the previous; "
            f"{turning} of {pairs} pairs make a full turn between t = 0 and t = {n - 1}"
        )
