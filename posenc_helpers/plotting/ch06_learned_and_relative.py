"""Figures for chapter 06: a learned table and its limit, relative-distance matrices, T5 buckets."""

from __future__ import annotations

import numbers
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.ticker import MaxNLocator

from ..relative import t5_relative_bucket
from ._style import DIVERGING_CMAP, OKABE_ITO, SEQUENTIAL_CMAP

__all__ = ["plot_learned_table", "plot_relative_matrix", "plot_t5_buckets"]

#: Shading of the three T5 regions (and of the keys a causal query never sees).
REGION_COLOURS = {
    "exact": OKABE_ITO[2],
    "log-spaced": OKABE_ITO[5],
    "last bucket": OKABE_ITO[1],
    "future": "0.6",
}
REGION_ALPHA = 0.2


def _finite_matrix(value: Any, name: str) -> np.ndarray:
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be a 2-D array of real numbers, got str")
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a 2-D array of real numbers, got {type(value).__name__}") from None
    if array.ndim != 2 or 0 in array.shape:
        raise ValueError(f"{name} must be a non-empty 2-D array, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must hold finite values only (no NaN or inf)")
    return array


def plot_learned_table(
    table: Any,
    *,
    show_until: int | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    limit: float | None = None,
    colorbar: bool = True,
) -> Axes:
    """Heatmap of a learned position table, with the positions it has no row for marked.

    Rows (positions) run down, dimensions across, as in
    :func:`plot_encoding_heatmap`. If ``show_until`` exceeds the number of
    rows ``max_len``, the axes extend to position ``show_until - 1`` and the
    rows ``max_len .. show_until - 1`` are hatched and labelled: a learned
    table simply ends there.

    Parameters
    ----------
    table : array_like
        Shape ``(max_len, d_model)``, finite real values.
    show_until : int, optional
        Draw positions ``0 .. show_until - 1``; default ``max_len``. Must be
        ``>= max_len``.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title.
    limit : float, optional
        Half-width of the (diverging, symmetric) colour range, ``> 0``;
        default three times the standard deviation of the table.
    colorbar : bool, optional
        Add a colour bar. Default True.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on; its first image is the table.

    Raises
    ------
    TypeError
        If ``table`` does not hold real numbers or ``show_until`` is not an integer.
    ValueError
        If ``table`` is not a finite non-empty 2-D array, ``show_until`` is
        below ``max_len`` or ``limit`` is not ``> 0``.

    References
    ----------
    .. [1] J. Devlin et al., "BERT: Pre-training of Deep Bidirectional
       Transformers for Language Understanding", NAACL 2019.

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib.pyplot as plt
    >>> ax = plot_learned_table(np.ones((4, 3)), show_until=6, colorbar=False, title="t")
    >>> ax.images[0].get_array().shape, tuple(float(y) for y in ax.get_ylim())
    ((4, 3), (5.5, -0.5))
    >>> plt.close("all")
    """
    array = _finite_matrix(table, "table")
    max_len, width = array.shape
    if show_until is None:
        show_until = max_len
    if isinstance(show_until, (bool, np.bool_)) or not isinstance(show_until, numbers.Integral):
        raise TypeError(f"show_until must be an integer >= max_len = {max_len}, got {type(show_until).__name__}")
    if show_until < max_len:
        raise ValueError(f"show_until must be >= max_len = {max_len}, got {show_until}")
    if limit is None:
        spread = float(array.std())
        limit = 3.0 * spread if spread > 0 else 1.0
    limit = float(limit)
    if not np.isfinite(limit) or limit <= 0:
        raise ValueError(f"limit must be a finite number > 0, got {limit!r}")
    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 4.0), constrained_layout=True)
    image = ax.imshow(
        array,
        cmap=DIVERGING_CMAP,
        vmin=-limit,
        vmax=limit,
        aspect="auto",
        interpolation="nearest",
        extent=(-0.5, width - 0.5, max_len - 0.5, -0.5),
    )
    show_until = int(show_until)
    if show_until > max_len:
        ax.axhspan(max_len - 0.5, show_until - 0.5, facecolor="0.92", edgecolor="0.45", hatch="//", linewidth=0.0)
        ax.axhline(max_len - 0.5, color="black", linewidth=1.2)
        ax.text(
            (width - 1) / 2,
            (max_len + show_until - 1) / 2,
            f"no row for t ≥ {max_len}\n(IndexError)",
            ha="center",
            va="center",
            fontsize=9,
            bbox={"facecolor": "white", "edgecolor": "0.45", "boxstyle": "round"},
        )
    ax.set_xlim(-0.5, width - 0.5)
    ax.set_ylim(show_until - 0.5, -0.5)
    ax.set_xlabel("dimension")
    ax.set_ylabel("position t (tokens)")
    if title:
        ax.set_title(title)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, label="value")
    return ax


def plot_relative_matrix(
    matrix: Any,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    diverging: bool = True,
    annotate: bool | None = None,
    colorbar_label: str = "clipped distance j − i (tokens)",
    xlabel: str = "key position j (tokens)",
    ylabel: str = "query position i (tokens)",
) -> Axes:
    """Heatmap of a query-by-key matrix such as clipped distances or T5 buckets.

    Rows are queries ``i`` (top row ``i = 0``), columns keys ``j``. Signed
    matrices (distances) use the book's diverging colormap, centred on 0;
    otherwise (bucket indices) the sequential one.

    Parameters
    ----------
    matrix : array_like
        Shape ``(n_queries, n_keys)``, finite real values.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title.
    diverging : bool, optional
        Diverging colormap symmetric about 0 (True, default) or sequential
        from the minimum to the maximum (False).
    annotate : bool, optional
        Write each value in its cell; default: only when both sides are at
        most 16.
    colorbar_label, xlabel, ylabel : str, optional
        Labels of the colour bar and the axes.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on; its first image is the matrix.

    Raises
    ------
    TypeError
        If ``matrix`` does not hold real numbers.
    ValueError
        If ``matrix`` is not a finite non-empty 2-D array.

    References
    ----------
    .. [1] P. Shaw, J. Uszkoreit, A. Vaswani, "Self-Attention with Relative
       Position Representations", NAACL 2018.

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib.pyplot as plt
    >>> d = np.subtract.outer(np.arange(3), np.arange(3)).T
    >>> ax = plot_relative_matrix(d, title="j - i")
    >>> ax.images[0].get_clim(), len(ax.texts)
    ((-2.0, 2.0), 9)
    >>> plt.close("all")
    """
    array = _finite_matrix(matrix, "matrix")
    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 3.8), constrained_layout=True)
    if diverging:
        reach = max(float(np.abs(array).max()), 1.0)
        cmap, vmin, vmax = DIVERGING_CMAP, -reach, reach
    else:
        cmap, vmin, vmax = SEQUENTIAL_CMAP, float(array.min()), float(array.max())
        if vmax == vmin:
            vmax = vmin + 1.0
    image = ax.imshow(array, cmap=cmap, vmin=vmin, vmax=vmax, interpolation="nearest", aspect="equal")
    if annotate is None:
        annotate = max(array.shape) <= 16
    if annotate:
        middle = (vmin + vmax) / 2
        for (i, j), value in np.ndenumerate(array):
            strong = abs(value - middle) > 0.3 * (vmax - vmin) if diverging else value < middle
            ax.text(j, i, f"{value:g}", ha="center", va="center", fontsize=8, color="white" if strong else "black")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.figure.colorbar(image, ax=ax, label=colorbar_label, shrink=0.85)
    return ax


def t5_spans(
    bidirectional: bool, num_buckets: int, max_distance: int, lo: float, hi: float
) -> dict[str, list[tuple[float, float]]]:
    """x-intervals (relative position key - query) of each T5 region, clipped to ``[lo, hi]``."""
    per_direction = num_buckets // 2 if bidirectional else num_buckets
    exact = per_direction // 2
    spans: dict[str, list[tuple[float, float]]] = {name: [] for name in REGION_COLOURS}
    right_edge = exact - 0.5 if bidirectional else 0.5
    spans["exact"].append((-(exact - 0.5), right_edge))
    spans["log-spaced"].append((-(max_distance - 0.5), -(exact - 0.5)))
    spans["last bucket"].append((lo, -(max_distance - 0.5)))
    if bidirectional:
        spans["log-spaced"].append((exact - 0.5, max_distance - 0.5))
        spans["last bucket"].append((max_distance - 0.5, hi))
    else:
        spans["future"].append((0.5, hi))
    return {
        name: [(max(a, lo), min(b, hi)) for a, b in intervals if min(b, hi) > max(a, lo)]
        for name, intervals in spans.items()
    }


def plot_t5_buckets(
    relative_positions: Any,
    *,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
    ax: Axes | None = None,
    title: str | None = None,
    shade: bool = True,
    legend: bool = True,
) -> Axes:
    """T5's bucket index against the relative position ``key - query``, regions shaded.

    The curve is :func:`posenc_helpers.t5_relative_bucket` drawn as steps.
    Shaded: the exact region (one bucket per distance), the log-spaced region
    up to ``max_distance``, the region from ``max_distance`` on (all in the
    last bucket of its direction) and, in causal mode, the keys after the
    query (all in bucket 0).

    Parameters
    ----------
    relative_positions : array_like of int
        1-D, increasing: the relative positions to draw (tokens).
    bidirectional, num_buckets, max_distance
        As in :func:`posenc_helpers.t5_relative_bucket`.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title.
    shade : bool, optional
        Shade the regions. Default True.
    legend : bool, optional
        Add a legend of the regions. Default True.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on; its first line is the bucket curve.

    Raises
    ------
    TypeError, ValueError
        If ``relative_positions`` is not a 1-D increasing array of integers
        with at least two entries, or a T5 setting is not allowed.

    References
    ----------
    .. [1] C. Raffel et al., "Exploring the Limits of Transfer Learning with a
       Unified Text-to-Text Transformer", JMLR 21(140), 2020, section 2.1.

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib.pyplot as plt
    >>> ax = plot_t5_buckets(np.arange(-200, 201), title="bidirectional")
    >>> int(ax.lines[0].get_ydata().max())
    31
    >>> plt.close("all")
    """
    if isinstance(relative_positions, (str, bytes)):
        raise TypeError("relative_positions must be a 1-D array of integers, got str")
    rel = np.asarray(relative_positions)
    if rel.dtype == bool or not np.issubdtype(rel.dtype, np.integer):
        raise TypeError(f"relative_positions must hold integers (tokens), got dtype {rel.dtype}")
    if rel.ndim != 1 or rel.size < 2:
        raise ValueError(f"relative_positions must be 1-D with at least 2 entries, got shape {rel.shape}")
    if np.any(np.diff(rel) <= 0):
        raise ValueError("relative_positions must be increasing")
    buckets = t5_relative_bucket(rel, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.0, 3.2), constrained_layout=True)
    ax.plot(rel, buckets, drawstyle="steps-mid", color=OKABE_ITO[0], linewidth=1.6, label="bucket")
    lo, hi = float(rel[0]) - 0.5, float(rel[-1]) + 0.5
    if shade:
        labels = {
            "exact": "exact (one distance each)",
            "log-spaced": "log-spaced",
            "last bucket": "≥ max_distance (last bucket)",
            "future": "keys after the query (bucket 0)",
        }
        for name, intervals in t5_spans(bool(bidirectional), int(num_buckets), int(max_distance), lo, hi).items():
            for index, (a, b) in enumerate(intervals):
                ax.axvspan(
                    a,
                    b,
                    color=REGION_COLOURS[name],
                    alpha=REGION_ALPHA,
                    linewidth=0,
                    label=labels[name] if index == 0 else None,
                )
    ax.set_xlim(lo, hi)
    ax.set_ylim(-0.8, int(num_buckets) - 0.2)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("relative position j − i, key minus query (tokens)")
    ax.set_ylabel("bucket")
    if title:
        ax.set_title(title)
    if legend:
        # The free corner: bidirectional curves stay low on the left, causal ones on the right.
        ax.legend(loc="upper left" if bidirectional else "upper right", fontsize=7.5, frameon=True, framealpha=0.9)
    return ax
