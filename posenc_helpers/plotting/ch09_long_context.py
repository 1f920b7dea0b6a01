"""Figures for chapter 09: RoPE frequency rescaling per pair, and angle errors by number format."""

from __future__ import annotations

import math
from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from ._style import OKABE_ITO

__all__ = ["plot_stretch_factors", "plot_angle_errors"]


def _curve(values: object, label: str, what: str) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"curves[{label!r}] must be an array of real numbers ({what})") from None
    return array


def plot_stretch_factors(
    original: np.ndarray,
    scaled: Mapping[str, np.ndarray],
    *,
    ax: Axes | None = None,
    title: str | None = None,
    factor: float | None = None,
    legend_loc: str = "lower right",
) -> Axes:
    """How much each pair is slowed down: ``theta_i / theta'_i`` against the pair index.

    A value of 1 means the pair keeps its trained frequency; the scale ``s``
    means it is interpolated like position interpolation. Drawn on a log scale.

    Parameters
    ----------
    original : array_like
        The trained frequencies ``theta_i``, a non-empty 1-D array of positive
        finite numbers.
    scaled : mapping of str to array_like
        Legend label to rescaled frequencies ``theta'_i``, each of
        ``original``'s shape, positive and finite.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title.
    factor : float, optional
        The scale ``s``; if given, a reference line is drawn at ``s`` (and one
        at 1 always).
    legend_loc : str, optional
        Where to put the legend (any matplotlib ``loc``). Default
        ``"lower right"``, which is empty for slow-downs that grow with the pair.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    TypeError
        If an array does not hold real numbers.
    ValueError
        If ``scaled`` is empty, an array is not 1-D, positive and finite, the
        shapes differ, or ``factor`` is not a finite number ``> 0``.

    References
    ----------
    .. [1] B. Peng, J. Quesnelle, H. Fan, E. Shippole, "YaRN: Efficient Context
       Window Extension of Large Language Models", ICLR 2024 (arXiv:2309.00071).

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib.pyplot as plt
    >>> theta = np.array([1.0, 0.1, 0.01])
    >>> ax = plot_stretch_factors(theta, {"PI": theta / 4}, factor=4.0)
    >>> ax.lines[0].get_ydata().tolist(), ax.get_yscale()
    ([4.0, 4.0, 4.0], 'log')
    >>> plt.close("all")
    """
    theta = _curve(original, "original", "frequencies")
    if theta.ndim != 1 or theta.size == 0 or not np.all(np.isfinite(theta)) or np.any(theta <= 0):
        raise ValueError("original must be a non-empty 1-D array of positive finite frequencies")
    if not scaled:
        raise ValueError("scaled must hold at least one curve (label -> rescaled frequencies)")
    curves = {}
    for label, values in scaled.items():
        array = _curve(values, label, "frequencies")
        if array.shape != theta.shape or not np.all(np.isfinite(array)) or np.any(array <= 0):
            raise ValueError(
                f"scaled[{label!r}] must be positive finite frequencies of the shape of original {theta.shape}"
            )
        curves[label] = array
    if factor is not None:
        if isinstance(factor, bool) or not isinstance(factor, (int, float, np.integer, np.floating)):
            raise TypeError(f"factor must be a number, got {type(factor).__name__}")
        if not np.isfinite(factor) or factor <= 0:
            raise ValueError(f"factor must be a finite number > 0, got {factor!r}")
    if ax is None:
        _, ax = plt.subplots(figsize=(5.0, 3.2), constrained_layout=True)
    pairs = np.arange(theta.size)
    markers = ("o", "s", "^", "D", "v")
    for index, (label, array) in enumerate(curves.items()):
        ax.plot(
            pairs,
            theta / array,
            marker=markers[index % len(markers)],
            markersize=2.5,
            linewidth=1.2,
            color=OKABE_ITO[index % len(OKABE_ITO)],
            label=label,
        )
    ax.axhline(1.0, color="0.35", linewidth=0.9, linestyle=":", label="1 (kept)")
    if factor is not None:
        ax.axhline(float(factor), color="0.35", linewidth=0.9, linestyle="--", label=f"s = {factor:g}")
    ax.set_yscale("log")
    # Powers of two with plain labels (1, 2, 4, 8, ...) read better than 10^x for factors of 1 to 64.
    ratios = np.concatenate([theta / array for array in curves.values()] + [[1.0, float(factor or 1.0)]])
    lowest, highest = math.floor(math.log2(ratios.min()) + 1e-9), math.ceil(math.log2(ratios.max()) - 1e-9)
    ax.yaxis.set_major_locator(FixedLocator((2.0 ** np.arange(lowest, highest + 1)).tolist()))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("pair index i")
    ax.set_ylabel("slow-down $\\theta_i / \\theta'_i$")
    ax.legend(loc=legend_loc, fontsize=8)
    if title:
        ax.set_title(title)
    return ax


def plot_angle_errors(
    positions: np.ndarray,
    errors: Mapping[str, np.ndarray],
    *,
    ax: Axes | None = None,
    title: str | None = None,
    references: Mapping[str, float] | None = None,
) -> Axes:
    """Angle error against position on log-log axes, one curve per number format.

    Zero errors cannot be drawn on a log scale and infinite ones (overflow)
    are not numbers, so both are left out of a curve (a gap or an early end).

    Parameters
    ----------
    positions : array_like
        1-D array of positive finite positions (tokens).
    errors : mapping of str to array_like
        Legend label to the error (radians) at each position, same shape as
        ``positions``, each ``>= 0`` or ``inf``.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title.
    references : mapping of str to float, optional
        Horizontal reference lines, label to value in radians (``> 0``).

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    TypeError
        If an array or reference does not hold real numbers.
    ValueError
        If ``errors`` is empty, ``positions`` is not 1-D, positive and finite,
        an error curve has another shape, is negative or NaN, or a reference
        is not ``> 0``.

    References
    ----------
    .. [1] IEEE Standard for Floating-Point Arithmetic, IEEE Std 754-2019.

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib.pyplot as plt
    >>> t = np.array([1.0, 10.0, 100.0])
    >>> ax = plot_angle_errors(t, {"float16": [0.0, 1e-3, np.inf]}, references={"pi": np.pi})
    >>> ax.lines[0].get_xdata().tolist()
    [10.0]
    >>> plt.close("all")
    """
    t = _curve(positions, "positions", "tokens")
    if t.ndim != 1 or t.size == 0 or not np.all(np.isfinite(t)) or np.any(t <= 0):
        raise ValueError("positions must be a non-empty 1-D array of positive finite positions")
    if not errors:
        raise ValueError("errors must hold at least one curve (label -> errors)")
    curves = {}
    for label, values in errors.items():
        array = _curve(values, label, "radians")
        if array.shape != t.shape or np.any(np.isnan(array)) or np.any(array < 0):
            raise ValueError(f"errors[{label!r}] must hold one error >= 0 (or inf) per position, shape {t.shape}")
        curves[label] = array
    references = dict(references or {})
    for label, value in references.items():
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"references[{label!r}] must be a number (radians), got {type(value).__name__}")
        if not np.isfinite(value) or value <= 0:
            raise ValueError(f"references[{label!r}] must be a positive finite number, got {value!r}")
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 3.4), constrained_layout=True)
    for index, (label, array) in enumerate(curves.items()):
        drawable = np.isfinite(array) & (array > 0)
        ax.plot(t[drawable], array[drawable], linewidth=1.3, color=OKABE_ITO[index % len(OKABE_ITO)], label=label)
    styles = ("--", ":", "-.")
    for index, (label, value) in enumerate(references.items()):
        ax.axhline(value, color="0.35", linewidth=0.9, linestyle=styles[index % len(styles)], label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("position t (tokens)")
    ax.set_ylabel("angle error (radians)")
    ax.legend(loc="upper left", fontsize=8)
    if title:
        ax.set_title(title)
    return ax
