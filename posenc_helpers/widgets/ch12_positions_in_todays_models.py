"""Chapter 12 explorer: the RoPE base against the context length, pair by pair."""

from __future__ import annotations

import math

import ipywidgets as widgets
import numpy as np
from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

from .._validation import require_even_width
from ..plotting._style import OKABE_ITO
from ..rope import rope_frequencies
from ._explorer import FigureExplorer

__all__ = ["RopeBaseExplorer"]

#: RoPE bases offered (those of chapter 12's families and a few more).
BASES = (1e4, 5e4, 1.5e5, 5e5, 1e6, 5e6, 1e7)
#: Context lengths offered, tokens.
CONTEXTS = (2048, 4096, 8192, 32768, 131072, 1048576)


class RopeBaseExplorer(FigureExplorer):
    """Wavelength of every pair for a chosen RoPE base, against a chosen context length.

    A pair whose wavelength ``2 pi / theta_i`` lies below the context line turns
    at least once within the context; a pair above it never completes a turn.
    The status line counts both kinds and gives the slowest pair's wavelength
    ``2 pi base**((d-2)/d)``.

    Parameters
    ----------
    head_dim : int, optional
        Width of one head, an even integer from 4 to 512. Default 128.
    base : float, optional
        Starting base, one of ``1e4, 5e4, 1.5e5, 5e5, 1e6, 5e6, 1e7``. Default 5e5.
    context : int, optional
        Starting context, one of ``2048, 4096, 8192, 32768, 131072, 1048576``. Default 8192.

    Raises
    ------
    TypeError, ValueError
        If an argument is not of the kind or in the range above.

    References
    ----------
    .. [1] X. Men et al., "Base of RoPE Bounds Context Length", arXiv:2405.14591, 2024.

    Examples
    --------
    >>> explorer = RopeBaseExplorer()
    >>> explorer.set(base=10000.0, context=131072)
    >>> print(explorer.status.value)
    base 10,000, context 131,072 tokens: all 64 pairs turn at least once; the slowest pair's wavelength is 54,410 tokens
    """

    def __init__(self, head_dim: int = 128, base: float = 5e5, context: int = 8192) -> None:
        self.head_dim = require_even_width(head_dim, "head_dim")
        if not 4 <= self.head_dim <= 512:
            raise ValueError(f"head_dim must be an even integer in [4, 512], got {self.head_dim}")
        if base not in BASES:
            raise ValueError(f"base must be one of {BASES}, got {base!r}")
        if context not in CONTEXTS:
            raise ValueError(f"context must be one of {CONTEXTS}, got {context!r}")
        controls = {
            "base": widgets.SelectionSlider(
                options=[(f"{b:,.0f}", b) for b in BASES], value=float(base), description="base"
            ),
            "context": widgets.SelectionSlider(
                options=[(f"{c:,}", c) for c in CONTEXTS], value=int(context), description="context"
            ),
        }
        super().__init__(controls, figsize=(7.2, 3.4))

    @classmethod
    def demo(cls) -> tuple[RopeBaseExplorer, list[dict]]:
        """Chapter 12's defaults (d = 128) and every base and context."""
        explorer = cls()
        changes = [{"base": b} for b in BASES] + [{"context": c} for c in CONTEXTS]
        changes.append({"base": 5e5, "context": 8192})
        return explorer, changes

    def _setup(self) -> None:
        pairs = np.arange(self.head_dim // 2)
        self.ax = self.figure.add_axes((0.11, 0.15, 0.62, 0.72))
        (self.wave_line,) = self.ax.plot(
            pairs,
            np.ones(pairs.size),
            color=OKABE_ITO[0],
            marker="o",
            markersize=2.2,
            linewidth=1.2,
            label="wavelength of pair i",
        )
        self.context_line = self.ax.axhline(1.0, color=OKABE_ITO[3], linestyle=":", linewidth=1.4, label="context")
        self.ax.set_yscale("log")
        low = 1.0
        high = 10.0 ** math.ceil(math.log10(2 * math.pi * max(BASES)) + 0.5)
        self.ax.set_ylim(low, high)
        decades = np.arange(0, round(math.log10(high)) + 1, 2)
        self.ax.yaxis.set_major_locator(FixedLocator((10.0**decades).tolist()))
        self.ax.yaxis.set_major_formatter(FixedFormatter([f"1e{int(e)}" for e in decades]))
        self.ax.yaxis.set_minor_locator(NullLocator())
        ticks = np.arange(0, pairs.size, max(pairs.size // 4, 1))
        self.ax.xaxis.set_major_locator(FixedLocator(ticks.tolist()))
        self.ax.xaxis.set_major_formatter(FixedFormatter([str(int(t)) for t in ticks]))
        self.ax.set_xlim(-0.5, pairs.size - 0.5)
        self.ax.set_xlabel("pair index i")
        self.ax.set_ylabel("wavelength (tokens)")
        self.ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8)
        self._dynamic = (self.wave_line, self.context_line, self.ax.title)

    def _dynamic_artists(self) -> tuple:
        return self._dynamic

    def _update(self, base: float, context: int) -> str:
        wavelength = 2 * np.pi / rope_frequencies(self.head_dim, base=base)
        self.wave_line.set_ydata(wavelength)
        self.context_line.set_ydata([context, context])
        self.ax.set_title(f"base {base:,.0f}: which pairs turn within {context:,} tokens")
        turning = int((wavelength <= context).sum())
        pairs = wavelength.size
        share = f"all {pairs} pairs turn" if turning == pairs else f"{turning} of {pairs} pairs turn"
        return (
            f"base {base:,.0f}, context {context:,} tokens: {share} at least once; "
            f"the slowest pair's wavelength is {wavelength[-1]:,.0f} tokens"
        )
