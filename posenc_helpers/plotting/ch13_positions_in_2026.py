"""Figures for chapter 13: which pairs of a partially rotary head turn, ordinary partial rotary against p-RoPE."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from ..partial_rotary import partial_rotary_pairs
from ._style import OKABE_ITO

__all__ = ["plot_rotating_pairs"]


def plot_rotating_pairs(
    head_dim: int,
    partial_rotary_factor: float,
    *,
    style: str,
    base: float = 10000.0,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Wavelength of every pair of a partially rotary head; the pairs that never turn marked along the top.

    Ordinary partial rotary (``style="partial"``) computes its frequencies over
    the rotated width, so its turning pairs span the whole range from
    ``2 pi`` to nearly ``2 pi base`` tokens; proportional p-RoPE
    (``style="proportional"``, Gemma 4's global layers) keeps the full head's
    frequencies for the fast pairs and sets the rest to zero, so its slowest
    turning pair is far faster. The pairs are those of
    :func:`~posenc_helpers.partial_rotary_pairs`.

    Parameters
    ----------
    head_dim : int
        Width of one head, a positive even integer.
    partial_rotary_factor : float
        The rotated share, in ``(0, 1]``.
    style : {"partial", "proportional"}
        Which scheme.
    base : float, optional
        RoPE base, ``> 0``. Default 10000.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title; default names the style and the share.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax.lines[0]`` holds the wavelengths of the turning pairs (NaN where a
        pair does not turn), ``ax.lines[1]`` marks the pairs that do not turn.

    Raises
    ------
    TypeError, ValueError
        As :func:`~posenc_helpers.partial_rotary_pairs` for the head's
        parameters.

    References
    ----------
    .. [1] F. Barbero et al., "Round and Round We Go! What makes Rotary
       Positional Encodings useful?", ICLR 2025 (arXiv:2410.06205).
    .. [2] Hugging Face, transformers v5, ``src/transformers/modeling_rope_utils.py``
       (``_compute_proportional_rope_parameters``, ``partial_rotary_factor``).

    Examples
    --------
    >>> ax = plot_rotating_pairs(8, 0.5, style="proportional")
    >>> [round(float(w), 2) for w in ax.lines[0].get_ydata()[:2]]
    [6.28, 62.83]
    >>> int(np.isfinite(ax.lines[1].get_ydata()).sum())
    2
    >>> plt.close("all")
    """
    _, inv_freq = partial_rotary_pairs(head_dim, partial_rotary_factor, base=base, style=style)
    turning = inv_freq > 0
    pairs = np.arange(inv_freq.size)
    wavelength = np.full(inv_freq.size, np.nan)
    wavelength[turning] = 2.0 * np.pi / inv_freq[turning]
    top = 10.0 ** np.ceil(np.log10(2.0 * np.pi * base) + 0.5)
    frozen = np.where(turning, np.nan, top)
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 3.4), constrained_layout=True)
    ax.plot(pairs, wavelength, color=OKABE_ITO[0], marker="o", markersize=2.5, linewidth=1.2, label="turns")
    ax.plot(pairs, frozen, color=OKABE_ITO[1], marker="x", markersize=4.0, linestyle="none", label="never turns")
    ax.set_yscale("log")
    ax.set_ylim(1.0, top * 3.0)
    ax.set_xlabel("pair index i")
    ax.set_ylabel("wavelength (tokens)")
    ax.set_title(title if title is not None else f"{style}, {int(turning.sum())} of {inv_freq.size} pairs turn")
    ax.legend(loc="center right", fontsize=8)
    return ax
