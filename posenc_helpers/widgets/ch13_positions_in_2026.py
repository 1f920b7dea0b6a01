"""Chapter 13 explorer: the rotary fraction of a head, ordinary partial rotary against proportional p-RoPE."""

from __future__ import annotations

import math

import ipywidgets as widgets
import numpy as np
from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

from .._validation import require_even_width, require_positive_real
from ..partial_rotary import partial_rotary_pairs
from ..plotting._style import OKABE_ITO
from ._explorer import FigureExplorer

__all__ = ["RotaryFractionExplorer"]

#: Rotary fractions offered (every one gives an even rotated width for head widths divisible by 16).
FRACTIONS = (0.125, 0.25, 0.5, 0.75, 1.0)
#: The two schemes.
STYLES = ("partial", "proportional")


class RotaryFractionExplorer(FigureExplorer):
    """Which pairs of a head turn, and how slowly, for a rotary fraction and a scheme.

    ``"partial"`` is ordinary partial rotary (GPT-NeoX, Qwen3-Next): the first
    ``p * head_dim`` features form a RoPE head of their own, frequencies over
    that width. ``"proportional"`` is p-RoPE (Gemma 4's global layers): the
    whole head keeps its pairing and its frequencies, and all but the fastest
    ``p`` of the pairs are set to zero. The status line counts the turning
    pairs and gives the slowest turning pair's wavelength.

    Parameters
    ----------
    head_dim : int, optional
        Width of one head, a multiple of 16 from 16 to 512. Default 128.
    base : float, optional
        RoPE base, ``> 0``. Default 10000.

    Raises
    ------
    TypeError, ValueError
        If ``head_dim`` is not a multiple of 16 in ``[16, 512]`` or ``base``
        is not ``> 0``.

    References
    ----------
    .. [1] F. Barbero et al., "Round and Round We Go! What makes Rotary
       Positional Encodings useful?", ICLR 2025 (arXiv:2410.06205).

    Examples
    --------
    >>> explorer = RotaryFractionExplorer()
    >>> explorer.set(fraction=0.25, style="proportional")
    >>> for part in explorer.status.value.split("; "):
    ...     print(part)
    proportional, p = 0.25: 16 of 64 pairs turn (features i and i + 64 paired)
    the slowest turning pair's wavelength is 54 tokens
    """

    def __init__(self, head_dim: int = 128, base: float = 10000.0) -> None:
        self.head_dim = require_even_width(head_dim, "head_dim")
        if self.head_dim % 16 or not 16 <= self.head_dim <= 512:
            raise ValueError(f"head_dim must be a multiple of 16 in [16, 512], got {self.head_dim}")
        self.base = require_positive_real(base, "base")
        controls = {
            "fraction": widgets.SelectionSlider(
                options=[(f"{p:g}", p) for p in FRACTIONS], value=0.25, description="fraction p"
            ),
            "style": widgets.ToggleButtons(options=list(STYLES), value="partial", description="scheme"),
        }
        super().__init__(controls, figsize=(7.2, 3.4))

    @classmethod
    def demo(cls) -> tuple[RotaryFractionExplorer, list[dict]]:
        """The chapter's head (d = 128, base 10000), every fraction under both schemes."""
        explorer = cls()
        changes = [{"fraction": p, "style": s} for s in STYLES for p in FRACTIONS]
        changes.append({"fraction": 0.25, "style": "partial"})
        return explorer, changes

    def _setup(self) -> None:
        pairs = np.arange(self.head_dim // 2)
        self.top = 10.0 ** math.ceil(math.log10(2 * math.pi * self.base) + 0.5)
        self.ax = self.figure.add_axes((0.11, 0.15, 0.62, 0.72))
        nothing = np.full(pairs.size, np.nan)
        (self.turning_line,) = self.ax.plot(
            pairs, nothing, color=OKABE_ITO[0], marker="o", markersize=2.2, linewidth=1.2, label="turns"
        )
        (self.frozen_line,) = self.ax.plot(
            pairs, nothing, color=OKABE_ITO[1], marker="x", markersize=3.5, linestyle="none", label="never turns"
        )
        self.ax.set_yscale("log")
        self.ax.set_ylim(1.0, self.top * 3.0)
        decades = np.arange(0, round(math.log10(self.top)) + 1, 2)
        self.ax.yaxis.set_major_locator(FixedLocator((10.0**decades).tolist()))
        self.ax.yaxis.set_major_formatter(FixedFormatter([f"1e{int(e)}" for e in decades]))
        self.ax.yaxis.set_minor_locator(NullLocator())
        self.ax.set_xlim(-0.5, pairs.size - 0.5)
        self.ax.set_xlabel("pair index i")
        self.ax.set_ylabel("wavelength (tokens)")
        self.ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8)
        self._dynamic = (self.turning_line, self.frozen_line, self.ax.title)

    def _dynamic_artists(self) -> tuple:
        return self._dynamic

    def _update(self, fraction: float, style: str) -> str:
        pairs, inv_freq = partial_rotary_pairs(self.head_dim, fraction, base=self.base, style=style)
        turning = inv_freq > 0
        wavelength = np.where(turning, 2 * np.pi / np.where(turning, inv_freq, 1.0), np.nan)
        self.turning_line.set_ydata(wavelength)
        self.frozen_line.set_ydata(np.where(turning, np.nan, self.top))
        count = int(turning.sum())
        self.ax.set_title(f"{style}, p = {fraction:g}: which pairs turn (d = {self.head_dim})")
        partner = int(pairs[0, 1])
        return (
            f"{style}, p = {fraction:g}: {count} of {inv_freq.size} pairs turn (features i and i + {partner} paired); "
            f"the slowest turning pair's wavelength is {np.nanmax(wavelength):,.0f} tokens"
        )
