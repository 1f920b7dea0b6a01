"""Figures for chapter 02: the raw index and the index normalised to ``[0, 1]``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from .._validation import require_lengths
from ._style import OKABE_ITO

__all__ = ["plot_norm_ratio", "plot_normalized_strips", "plot_step_against_length"]


def plot_norm_ratio(
    positions: np.ndarray,
    ratios: Mapping[str, np.ndarray],
    *,
    thresholds: Sequence[float] = (1.0, 10.0, 100.0, 1000.0),
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Log-log plot of position-signal norm over a typical embedding norm.

    Each curve is a ratio ``|PE(t)| / |x|`` against the position ``t``. Dotted
    horizontal lines mark the ``thresholds``, and a marker shows the first
    position at which each curve reaches each threshold (if it does).

    Parameters
    ----------
    positions : numpy.ndarray
        1-D, positive and increasing: the positions ``t`` in tokens (a log axis
        cannot show position 0).
    ratios : mapping of str to numpy.ndarray
        Curve label to its ratios, each positive and shaped like ``positions``.
    thresholds : sequence of float, optional
        Positive ratios to mark. Default ``(1, 10, 100, 1000)``.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ValueError
        If ``positions`` is not 1-D, positive and increasing, ``ratios`` is
        empty or a curve is not positive or not shaped like ``positions``, or a
        threshold is not positive.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017,
       section 3.5 (position signals are added to the embeddings).

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib.pyplot as plt
    >>> t = np.arange(1.0, 101.0)
    >>> ax = plot_norm_ratio(t, {"index": t / 2}, thresholds=(1, 10), title="ratio")
    >>> ax.get_xscale(), ax.get_yscale(), ax.get_title()
    ('log', 'log', 'ratio')
    >>> plt.close("all")
    """
    positions = np.asarray(positions, dtype=float)
    if positions.ndim != 1 or positions.size < 2:
        raise ValueError(f"positions must be 1-D with at least 2 entries, got shape {positions.shape}")
    if not (np.all(np.isfinite(positions)) and np.all(positions > 0) and np.all(np.diff(positions) > 0)):
        raise ValueError("positions must be finite, positive (log axis) and increasing")
    if not isinstance(ratios, Mapping) or not ratios:
        raise ValueError("ratios must be a non-empty mapping {label: array of ratios}")
    curves = {}
    for label, values in ratios.items():
        values = np.asarray(values, dtype=float)
        if values.shape != positions.shape:
            raise ValueError(
                f"ratios[{label!r}] must have the shape of positions {positions.shape}, got {values.shape}"
            )
        if not (np.all(np.isfinite(values)) and np.all(values > 0)):
            raise ValueError(f"ratios[{label!r}] must be finite and positive (log axis)")
        curves[label] = values
    thresholds = [float(v) for v in thresholds]
    if any(not np.isfinite(v) or v <= 0 for v in thresholds):
        raise ValueError(f"thresholds must be positive finite numbers, got {thresholds}")
    if ax is None:
        _, ax = plt.subplots(figsize=(5.0, 3.4))
    for threshold in thresholds:
        ax.axhline(threshold, color="0.55", linestyle=":", linewidth=0.9)
    for index, (label, values) in enumerate(curves.items()):
        colour = OKABE_ITO[index % len(OKABE_ITO)]
        ax.plot(positions, values, color=colour, label=label, linewidth=1.8)
        reached = [np.flatnonzero(values >= threshold) for threshold in thresholds]
        firsts = np.array([hits[0] for hits in reached if hits.size], dtype=int)
        if firsts.size:
            ax.plot(positions[firsts], values[firsts], linestyle="none", marker="o", markersize=5, color=colour)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("position t (tokens)")
    ax.set_ylabel("|PE(t)| / typical |x|")
    ax.legend(loc="upper left", fontsize=8)
    if title:
        ax.set_title(title)
    return ax


def plot_normalized_strips(
    lengths: Sequence[int],
    *,
    ax: Axes | None = None,
    title: str | None = None,
    annotate_step: bool = True,
) -> Axes:
    """The normalised positions ``t / (n - 1)`` of sentences of several lengths.

    One row of dots per length, all on the same ``[0, 1]`` axis, so the step
    between neighbours can be compared by eye. With ``annotate_step`` a bracket
    under the first two dots of each row is labelled with the step.

    Parameters
    ----------
    lengths : sequence of int
        Sentence lengths ``n >= 2``, one row each (first at the top).
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title.
    annotate_step : bool, optional
        Mark and label one step in every row. Default True.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    TypeError
        If ``lengths`` is not a sequence of integers.
    ValueError
        If it is empty or a length is below 2.

    References
    ----------
    .. [1] A. Kazemnejad, "Transformer Architecture: The Positional Encoding",
       2019 (the length-dependent step of normalised positions).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> ax = plot_normalized_strips([5, 50], title="strips")
    >>> [label.get_text() for label in ax.get_yticklabels()]
    ['n = 5', 'n = 50']
    >>> plt.close("all")
    """
    lengths = require_lengths(lengths)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.0, 0.6 + 0.7 * len(lengths)))
    rows = np.arange(len(lengths))[::-1].astype(float)
    for index, (n, row) in enumerate(zip(lengths, rows, strict=True)):
        colour = OKABE_ITO[index % len(OKABE_ITO)]
        values = np.arange(n) / (n - 1)
        size = 30.0 if n <= 20 else 12.0
        ax.scatter(values, np.full(n, row), s=size, color=colour, zorder=3)
        if annotate_step:
            step = 1.0 / (n - 1)
            ax.plot([0.0, step], [row - 0.22, row - 0.22], color=colour, linewidth=1.5, marker="|", markersize=7)
            ax.text(
                step + 0.012,
                row - 0.22,
                f"one step = 1/{n - 1} = {step:.3g}",
                va="center",
                ha="left",
                fontsize=8,
                color="0.15",
            )
    ax.set_yticks(rows, [f"n = {n}" for n in lengths])
    ax.set_ylim(-0.6, len(lengths) - 0.5)
    ax.set_xlim(-0.03, 1.03)
    ax.set_xlabel("normalised position t/(n-1) (fraction of the sentence)")
    ax.spines["left"].set_visible(False)
    ax.tick_params(axis="y", length=0)
    if title:
        ax.set_title(title)
    return ax


def plot_step_against_length(
    lengths: Sequence[int],
    *,
    highlight: Sequence[int] = (),
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Log-log plot of the normalised step ``1 / (n - 1)`` against the length ``n``.

    Parameters
    ----------
    lengths : sequence of int
        The lengths ``n >= 2`` drawn as a curve, increasing.
    highlight : sequence of int, optional
        Lengths to mark with a labelled point (each ``>= 2``).
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    TypeError
        If ``lengths`` or ``highlight`` is not a sequence of integers.
    ValueError
        If ``lengths`` has fewer than two entries, is not increasing, or a
        length is below 2.

    References
    ----------
    .. [1] A. Kazemnejad, "Transformer Architecture: The Positional Encoding",
       2019 (the length-dependent step of normalised positions).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> ax = plot_step_against_length(range(2, 101), highlight=[5, 50])
    >>> len(ax.lines), ax.get_xscale()
    (2, 'log')
    >>> plt.close("all")
    """
    if isinstance(lengths, range):
        lengths = list(lengths)
    sizes = np.array(require_lengths(lengths))
    if sizes.size < 2 or np.any(np.diff(sizes) <= 0):
        raise ValueError("lengths must hold at least two increasing lengths to draw a curve")
    marked = require_lengths(highlight, "highlight") if len(highlight) else []
    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 3.4))
    ax.plot(sizes, 1.0 / (sizes - 1), color=OKABE_ITO[0], linewidth=1.8)
    if marked:
        marked_array = np.array(marked, dtype=float)
        ax.plot(marked_array, 1.0 / (marked_array - 1), linestyle="none", marker="o", color=OKABE_ITO[3], markersize=6)
        for n in marked:
            ax.annotate(
                f"n = {n}: 1/{n - 1}", (n, 1.0 / (n - 1)), textcoords="offset points", xytext=(6, 4), fontsize=8
            )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("sentence length n (tokens)")
    ax.set_ylabel("one step, 1/(n-1) (fraction of the sentence)")
    if title:
        ax.set_title(title)
    return ax
