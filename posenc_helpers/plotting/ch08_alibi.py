"""Figures for chapter 08: ALiBi slopes, per-head bias matrices, attention against distance."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import colors, ticker
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from .._validation import as_real_array, require_count, require_finite, require_positive_real
from ._style import OKABE_ITO, SEQUENTIAL_CMAP

__all__ = ["plot_alibi_slopes", "plot_bias_heatmaps", "plot_weights_by_distance"]

#: Colour of masked (``-inf``) entries in bias heatmaps: a light grey outside the colormap.
MASKED_COLOUR = "0.88"
#: Lines take colours from this lower part of the sequential map: its bright yellow end is
#: too faint for a thin line on a white background.
LINE_CMAP_TOP = 0.8


def _as_slopes(slopes: ArrayLike, name: str = "slopes") -> np.ndarray:
    """A non-empty 1-D float64 array of finite numbers ``> 0``."""
    array = as_real_array(slopes, name).astype(np.float64)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array (one slope per head), got shape {array.shape}")
    require_finite(array, name)
    if np.any(array <= 0):
        raise ValueError(f"{name} must all be > 0")
    return array


def _exponent_label(value: float) -> str:
    """``2^x`` for a slope, with ``x`` rounded to 2 decimals and trailing zeros dropped."""
    text = f"{float(np.log2(value)):.2f}".rstrip("0").rstrip(".")
    return f"2^{{{'0' if text == '-0' else text}}}"


def plot_alibi_slopes(
    slopes: ArrayLike,
    *,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """The slopes ``m_h`` in head order, as ``log2 m_h`` against the head number ``h``.

    A geometric sequence is a straight line on these axes. Heads beyond the
    largest power of two ``p <= n`` (the extra heads of the rule for other head
    counts) are drawn hollow, in a second colour, so a jump back up in the list
    is easy to see.

    Parameters
    ----------
    slopes : array_like
        1-D array of slopes ``> 0``, one per head, in head order.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    TypeError, ValueError
        If ``slopes`` is not a non-empty 1-D array of finite numbers ``> 0``.

    References
    ----------
    .. [1] O. Press, N. A. Smith, M. Lewis, "Train Short, Test Long: Attention
       with Linear Biases Enables Input Length Extrapolation", ICLR 2022, section 3.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from posenc_helpers import alibi_slopes
    >>> ax = plot_alibi_slopes(alibi_slopes(12), title="12 heads")
    >>> ax.get_title(), ax.get_xlabel()
    ('12 heads', 'head h (position in the list)')
    >>> plt.close("all")
    """
    m = _as_slopes(slopes)
    n = m.size
    lower = 1 << (n.bit_length() - 1)
    head = np.arange(1, n + 1)
    exponent = np.log2(m)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.0, 3.2), constrained_layout=True)
    ax.plot(head, exponent, color="0.6", linewidth=1.0, zorder=1, label="_order")
    ax.plot(
        head[:lower],
        exponent[:lower],
        marker="o",
        linestyle="none",
        color=OKABE_ITO[0],
        zorder=2,
        label=f"the {lower}-head slopes" if lower > 1 else "the 1-head slope",
    )
    if n > lower:
        ax.plot(
            head[lower:],
            exponent[lower:],
            marker="o",
            linestyle="none",
            markerfacecolor="white",
            markeredgecolor=OKABE_ITO[3],
            markeredgewidth=1.8,
            zorder=3,
            label=f"every other {2 * lower}-head slope",
        )
    ax.set_xlabel("head h (position in the list)")
    ax.set_ylabel(r"$\log_2 m_h$")
    ax.set_xticks(head if n <= 16 else np.unique(np.linspace(1, n, 9).round().astype(int)))
    if n == lower:
        # One falling line: the upper right corner is free.
        ax.legend(loc="upper right", fontsize=8)
    else:
        # Make room for the legend below the lowest slope.
        spread = max(float(exponent.max() - exponent.min()), 1.0)
        ax.set_ylim(float(exponent.min()) - 0.32 * spread, float(exponent.max()) + 0.08 * spread)
        ax.legend(loc="lower right", fontsize=8)
    if title:
        ax.set_title(title)
    return ax


def plot_bias_heatmaps(
    bias: ArrayLike,
    slopes: ArrayLike,
    *,
    ncols: int = 4,
    panel_size: float = 1.9,
    title: str | None = None,
) -> tuple[Figure, np.ndarray]:
    """Small multiples: the bias matrix of every head on one shared colour scale.

    Panel ``h`` shows ``bias[h]`` (rows: queries ``i``, columns: keys ``j``).
    Masked entries (``-inf``) are light grey. The colour scale runs from the
    most negative finite bias of all heads up to 0, so gentle heads look pale
    next to steep ones, as they should.

    Parameters
    ----------
    bias : array_like
        Shape ``(heads, n, n)``: finite values or ``-inf`` (masked), no NaN or ``+inf``.
    slopes : array_like
        The ``heads`` slopes ``> 0``, used in the panel titles.
    ncols : int, optional
        Panels per row, ``>= 1``. Default 4.
    panel_size : float, optional
        Width and height of a panel in inches, ``> 0``. Default 1.9.
    title : str, optional
        Figure title.

    Returns
    -------
    fig : matplotlib.figure.Figure
    axes : numpy.ndarray
        The panels in reading order, shape ``(rows, ncols)``; unused ones are hidden.

    Raises
    ------
    TypeError, ValueError
        If ``bias`` is not a ``(heads, n, n)`` array of finite values or
        ``-inf``, ``slopes`` does not hold one slope ``> 0`` per head,
        ``ncols`` is not an integer ``>= 1`` or ``panel_size`` not ``> 0``.

    References
    ----------
    .. [1] O. Press, N. A. Smith, M. Lewis, "Train Short, Test Long: Attention
       with Linear Biases Enables Input Length Extrapolation", ICLR 2022, figure 3.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from posenc_helpers import alibi_bias, alibi_slopes
    >>> fig, axes = plot_bias_heatmaps(alibi_bias(4, 6), alibi_slopes(4), ncols=2)
    >>> axes.shape, axes[0, 0].images[0].get_clim()
    ((2, 2), (-1.25, 0.0))
    >>> plt.close(fig)
    """
    array = as_real_array(bias, "bias").astype(np.float64)
    if array.ndim != 3 or array.shape[1] != array.shape[2] or array.shape[0] == 0:
        raise ValueError(f"bias must have shape (heads, n, n) with at least one head, got {array.shape}")
    if np.isnan(array).any() or np.isposinf(array).any():
        raise ValueError("bias must hold finite values or -inf (masked), not NaN or +inf")
    m = _as_slopes(slopes)
    if m.size != array.shape[0]:
        raise ValueError(f"slopes must hold one slope per head ({array.shape[0]}), got {m.size}")
    ncols = require_count(ncols, "ncols", minimum=1)
    panel_size = require_positive_real(panel_size, "panel_size")
    heads, n = array.shape[0], array.shape[1]
    ncols = min(ncols, heads)
    nrows = -(-heads // ncols)
    finite = array[np.isfinite(array)]
    low = float(finite.min()) if finite.size and finite.min() < 0 else -1.0
    cmap = plt.get_cmap(SEQUENTIAL_CMAP).with_extremes(bad=MASKED_COLOUR)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(panel_size * ncols + 1.0, panel_size * nrows + 0.6),
        constrained_layout=True,
        squeeze=False,
        sharex=True,
        sharey=True,
    )
    image = None
    for h, ax in enumerate(axes.flat):
        if h >= heads:
            ax.set_visible(False)
            continue
        shown = np.ma.masked_invalid(array[h])
        image = ax.imshow(shown, cmap=cmap, vmin=low, vmax=0.0, interpolation="nearest")
        ax.set_title(rf"head {h + 1}: $m = {_exponent_label(m[h])}$", fontsize=9)
        if h % ncols == 0:
            ax.set_ylabel("query i (tokens)")
        if h >= heads - ncols:
            ax.set_xlabel("key j (tokens)")
    ticks = np.unique(np.linspace(0, n - 1, 3).round().astype(int)) if n > 1 else np.array([0])
    axes[0, 0].set_xticks(ticks)
    axes[0, 0].set_yticks(ticks)
    assert image is not None  # heads >= 1, so at least one panel was drawn
    fig.colorbar(image, ax=axes, shrink=0.8, label="bias added to the logit")
    if title:
        fig.suptitle(title)
    return fig, axes


def plot_weights_by_distance(
    weights: ArrayLike,
    slopes: ArrayLike,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    log_scale: bool = True,
    colorbar: bool = True,
    exponent_range: tuple[float, float] | None = None,
    colorbar_space: Axes | Sequence[Axes] | np.ndarray | None = None,
) -> Axes:
    """Attention weight against the distance ``i - j`` back from the query, one line per head.

    Lines are coloured by ``log2`` of the head's slope (the darker 80% of a
    sequential, colour-blind-safe map, so every line stands out on white),
    and steep and gentle heads are told apart however the list is ordered.
    On a log scale an exponential decay is a straight line.

    Parameters
    ----------
    weights : array_like
        Shape ``(heads, n_distances)``: ``weights[h, d]`` is head ``h``'s weight
        on the key ``d`` tokens back (``d = 0`` is the query itself); finite,
        ``>= 0``.
    slopes : array_like
        One slope ``> 0`` per head.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title.
    log_scale : bool, optional
        Logarithmic weight axis. Default True.
    colorbar : bool, optional
        Draw a colorbar of ``log2 m_h``. Default True.
    exponent_range : tuple of float, optional
        ``(low, high)`` values of ``log2 m_h`` at the two ends of the colour
        scale, ``low < high``, to compare several panels; default the range of
        ``slopes``.
    colorbar_space : Axes or sequence of Axes, optional
        The axes the colorbar takes its space from (one colorbar spanning
        several panels that share ``exponent_range``); default ``ax``.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    TypeError, ValueError
        If ``weights`` is not a 2-D array of finite numbers ``>= 0``,
        ``slopes`` does not hold one slope ``> 0`` per row, or
        ``exponent_range`` is not two finite numbers ``low < high``.

    References
    ----------
    .. [1] O. Press, N. A. Smith, M. Lewis, "Train Short, Test Long: Attention
       with Linear Biases Enables Input Length Extrapolation", ICLR 2022.

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib.pyplot as plt
    >>> d = np.arange(5)
    >>> ax = plot_weights_by_distance(np.exp(-np.outer([0.5, 0.25], d)), [0.5, 0.25], title="t")
    >>> len(ax.lines), ax.get_yscale()
    (2, 'log')
    >>> plt.close("all")
    """
    array = as_real_array(weights, "weights").astype(np.float64)
    if array.ndim != 2 or array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError(f"weights must be a non-empty 2-D array (heads, distances), got shape {array.shape}")
    require_finite(array, "weights")
    if np.any(array < 0):
        raise ValueError("weights must be >= 0")
    m = _as_slopes(slopes)
    if m.size != array.shape[0]:
        raise ValueError(f"slopes must hold one slope per row of weights ({array.shape[0]}), got {m.size}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6.0, 3.4), constrained_layout=True)
    exponent = np.log2(m)
    if exponent_range is None:
        low, high = float(exponent.min()), float(exponent.max())
        if low == high:
            low, high = low - 0.5, high + 0.5
    else:
        bounds = as_real_array(exponent_range, "exponent_range").astype(np.float64)
        if bounds.shape != (2,) or not np.all(np.isfinite(bounds)) or bounds[0] >= bounds[1]:
            raise ValueError(
                f"exponent_range must be two finite numbers (low, high) with low < high, got {exponent_range!r}"
            )
        low, high = float(bounds[0]), float(bounds[1])
    norm = colors.Normalize(vmin=low, vmax=high)
    cmap = colors.ListedColormap(plt.get_cmap(SEQUENTIAL_CMAP)(np.linspace(0.0, LINE_CMAP_TOP, 256)))
    distance = np.arange(array.shape[1])
    for row, e in zip(array, exponent, strict=True):
        shown = np.where(row > 0, row, np.nan) if log_scale else row
        ax.plot(distance, shown, color=cmap(norm(e)), linewidth=1.4)
    if log_scale:
        ax.set_yscale("log")
        ax.yaxis.set_minor_locator(ticker.NullLocator())  # decades only: readable, and fast to draw
    ax.set_xlabel("distance back from the query, i - j (tokens)")
    ax.set_ylabel("attention weight")
    if colorbar:
        mappable = plt.cm.ScalarMappable(norm=norm, cmap=cmap)
        space = ax if colorbar_space is None else colorbar_space
        ax.figure.colorbar(mappable, ax=space, label=r"$\log_2 m_h$", shrink=1.0 if space is ax else 0.6)
    if title:
        ax.set_title(title)
    return ax
