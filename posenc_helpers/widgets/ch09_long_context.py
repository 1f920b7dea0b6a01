"""Chapter 09 explorer: what PI, NTK-aware scaling and YaRN do to each RoPE pair."""

from __future__ import annotations

import math
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.artist import Artist
from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

from .._validation import require_count, require_even_width, require_positive_real
from ..long_context import scaled_rope_frequencies, unseen_angle_pairs
from ..plotting._style import OKABE_ITO
from ..rope import rope_frequencies
from ._explorer import FigureExplorer

__all__ = ["RopeScalingExplorer"]

#: Scale factors offered by the explorer.
FACTORS = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 64.0)
#: Methods by the label shown on the buttons.
METHODS = (("PI (linear)", "linear"), ("NTK-aware", "ntk"), ("YaRN", "yarn"))
_NAMES = {value: label for label, value in METHODS}


def _pairs(count: int) -> str:
    return f"{count} pair" if count == 1 else f"{count} pairs"


class RopeScalingExplorer(FigureExplorer):
    """Per-pair wavelengths and slow-down for a chosen rescaling method and scale ``s``.

    The left panel plots the wavelength ``2 pi / theta_i`` of every pair, trained
    (grey) and rescaled (blue), against the original context ``L`` and the new
    one ``s * L``. The right panel plots the slow-down ``theta_i / theta'_i``
    (1: kept, ``s``: interpolated). The status line counts the pairs kept,
    interpolated and in between, the pairs that reach angles never seen in
    training (:func:`~posenc_helpers.unseen_angle_pairs`) and YaRN's attention
    factor.

    Parameters
    ----------
    head_dim : int, optional
        Width of one head, a positive even integer from 4 to 512. Default 128.
    base : float, optional
        RoPE base, ``> 1``. Default 10000.
    original_max_len : int, optional
        Training context ``L``, an integer ``>= 2``. Default 4096.
    method : {"linear", "ntk", "yarn"}, optional
        Starting method. Default ``"linear"``.
    factor : float, optional
        Starting scale, one of ``1, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64``. Default 8.

    Raises
    ------
    TypeError, ValueError
        If an argument is not of the kind or in the range above.

    References
    ----------
    .. [1] S. Chen et al., "Extending Context Window of Large Language Models via
       Positional Interpolation", arXiv:2306.15595, 2023.
    .. [2] bloc97, "NTK-Aware Scaled RoPE", r/LocalLLaMA, 2023.
    .. [3] B. Peng et al., "YaRN: Efficient Context Window Extension of Large
       Language Models", arXiv:2309.00071, 2023.

    Examples
    --------
    >>> explorer = RopeScalingExplorer()
    >>> explorer.set(method="yarn")
    >>> print(explorer.status.value)
    YaRN, s = 8 (4,096 to 32,768 tokens): 21 pairs kept, 18 pairs interpolated by s, 25 pairs in between; 0 of 64 pairs reach angles unseen in training; attention factor 1.208 (logits x 1.459)
    """

    def __init__(
        self,
        head_dim: int = 128,
        base: float = 10000.0,
        original_max_len: int = 4096,
        method: str = "linear",
        factor: float = 8.0,
    ) -> None:
        self.head_dim = require_even_width(head_dim, "head_dim")
        if not 4 <= self.head_dim <= 512:
            raise ValueError(f"head_dim must be an even integer in [4, 512], got {self.head_dim}")
        self.base = require_positive_real(base, "base")
        if self.base <= 1:
            raise ValueError(f"base must be a finite number > 1, got {self.base!r}")
        self.original_max_len = require_count(original_max_len, "original_max_len", minimum=2)
        if method not in _NAMES:
            raise ValueError(f"method must be one of {tuple(_NAMES)}, got {method!r}")
        if factor not in FACTORS:
            raise ValueError(f"factor must be one of {FACTORS}, got {factor!r}")
        self.theta = rope_frequencies(self.head_dim, base=self.base)
        controls = {
            "method": widgets.ToggleButtons(options=list(METHODS), value=method, description="method"),
            "factor": widgets.SelectionSlider(
                options=[(f"{f:g}", f) for f in FACTORS],
                value=float(factor),
                description="scale s",
                continuous_update=True,
            ),
        }
        super().__init__(controls, figsize=(9.6, 3.5))

    @classmethod
    def demo(cls) -> tuple[RopeScalingExplorer, list[dict]]:
        """The chapter 09 defaults (d = 128, base 10000, L = 4096) and every method and scale."""
        explorer = cls()
        changes: list[dict[str, Any]] = [{"factor": f} for f in FACTORS]
        changes += [{"method": m} for _, m in METHODS]
        changes += [{"factor": f} for f in (2.0, 32.0)]
        changes.append({"method": "linear", "factor": 8.0})
        return explorer, changes

    def _setup(self) -> None:
        pairs = np.arange(self.theta.size)
        top = max(FACTORS)
        self.ax_waves = self.figure.add_axes((0.075, 0.15, 0.37, 0.72))
        self.ax_stretch = self.figure.add_axes((0.57, 0.15, 0.25, 0.72))

        wavelengths = 2 * np.pi / self.theta
        self.ax_waves.plot(pairs, wavelengths, color="0.55", linewidth=1.2, linestyle="--", label="trained")
        (self.wave_line,) = self.ax_waves.plot(
            pairs, wavelengths, color=OKABE_ITO[0], marker="o", markersize=2.2, linewidth=1.2, label="rescaled"
        )
        self.ax_waves.axhline(
            self.original_max_len, color=OKABE_ITO[1], linestyle="-.", linewidth=1.0, label="L (trained context)"
        )
        self.new_line = self.ax_waves.axhline(
            self.original_max_len, color=OKABE_ITO[3], linestyle=":", linewidth=1.2, label="s L (new context)"
        )
        self.ax_waves.set_yscale("log")
        low = 10.0 ** math.floor(math.log10(wavelengths[0]))
        high = 10.0 ** math.ceil(math.log10(wavelengths[-1] * top))
        self.ax_waves.set_ylim(low, high)
        # Fixed ticks with plain-text labels: locators and mathtext labels cost more than the curves.
        decades = np.arange(round(math.log10(low)), round(math.log10(high)) + 1)
        self.ax_waves.yaxis.set_major_locator(FixedLocator((10.0**decades).tolist()))
        self.ax_waves.yaxis.set_major_formatter(FixedFormatter([f"1e{int(e)}" for e in decades]))
        self.ax_waves.yaxis.set_minor_locator(NullLocator())
        x_ticks = np.arange(0, self.theta.size, max(self.theta.size // 4, 1))
        for ax in (self.ax_waves, self.ax_stretch):
            ax.xaxis.set_major_locator(FixedLocator(x_ticks.tolist()))
            ax.xaxis.set_major_formatter(FixedFormatter([str(int(x)) for x in x_ticks]))
        self.ax_waves.set_xlim(-0.5, self.theta.size - 0.5)
        self.ax_waves.set_xlabel("pair index i")
        self.ax_waves.set_ylabel("wavelength (tokens)")
        self.ax_waves.legend(loc="lower right", fontsize=8)

        (self.stretch_line,) = self.ax_stretch.plot(
            pairs, np.ones_like(self.theta), color=OKABE_ITO[0], marker="o", markersize=2.2, linewidth=1.2
        )
        self.ax_stretch.axhline(1.0, color="0.35", linestyle=":", linewidth=0.9, label="1 (kept)")
        self.factor_line = self.ax_stretch.axhline(
            1.0, color="0.35", linestyle="--", linewidth=0.9, label="s (interpolated)"
        )
        self.ax_stretch.set_yscale("log")
        self.ax_stretch.set_ylim(0.8, top * 1.4)
        self.ax_stretch.yaxis.set_major_locator(FixedLocator([1, 2, 4, 8, 16, 32, 64]))
        self.ax_stretch.yaxis.set_major_formatter(FixedFormatter(["1", "2", "4", "8", "16", "32", "64"]))
        self.ax_stretch.yaxis.set_minor_locator(NullLocator())
        self.ax_stretch.set_xlim(-0.5, self.theta.size - 0.5)
        self.ax_stretch.set_xlabel("pair index i")
        self.ax_stretch.set_ylabel("slow-down $\\theta_i / \\theta'_i$")
        self.ax_stretch.set_title("how much each pair is slowed")
        self.ax_stretch.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8)
        # Only these change with the controls; everything else is drawn once (blitting, see FigureExplorer).
        self._dynamic = (self.wave_line, self.new_line, self.stretch_line, self.factor_line, self.ax_waves.title)

    def _dynamic_artists(self) -> tuple[Artist, ...]:
        # Axes, ticks, labels and legends do not depend on the controls; these do.
        return self._dynamic

    def _update(self, method: str, factor: float) -> str:
        scaled, attention = scaled_rope_frequencies(
            self.head_dim,
            base=self.base,
            method=method,
            factor=factor,
            original_max_len=self.original_max_len,
        )
        new_len = int(round(factor * self.original_max_len))
        self.wave_line.set_ydata(2 * np.pi / scaled)
        self.new_line.set_ydata([new_len, new_len])
        stretch = self.theta / scaled
        self.stretch_line.set_ydata(stretch)
        self.factor_line.set_ydata([factor, factor])
        name = _NAMES[method]
        self.ax_waves.set_title(f"{name}, s = {factor:g}: wavelength of each pair")

        kept = np.isclose(stretch, 1.0, rtol=1e-9, atol=0.0)
        interpolated = np.isclose(stretch, factor, rtol=1e-9, atol=0.0) & ~kept
        between = self.theta.size - int(kept.sum()) - int(interpolated.sum())
        unseen = int(unseen_angle_pairs(self.theta, scaled, self.original_max_len, new_len).sum())
        return (
            f"{name}, s = {factor:g} ({self.original_max_len:,} to {new_len:,} tokens): "
            f"{_pairs(int(kept.sum()))} kept, {_pairs(int(interpolated.sum()))} interpolated by s, "
            f"{_pairs(between)} in between; "
            f"{unseen} of {self.theta.size} pairs reach angles unseen in training; "
            f"attention factor {attention:.3f} (logits x {attention**2:.3f})"
        )
