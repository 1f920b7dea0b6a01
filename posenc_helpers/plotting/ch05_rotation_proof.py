"""Figures for chapter 05: each sine/cosine pair is a point on the unit circle.

Pair ``k`` of ``PE(t)`` is the point ``(sin(omega_k t), cos(omega_k t))``. Drawn
with the sine across and the cosine up, it starts at the top of the circle at
``t = 0`` and turns clockwise by ``omega_k`` radians per token, like the hand of
a clock. A shift by ``phi`` tokens turns it further by ``omega_k * phi``.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from .._validation import (
    as_positions,
    as_real_array,
    require_count,
    require_finite,
    require_positive_real,
    require_real,
)
from ._style import DIVERGING_CMAP, OKABE_ITO

__all__ = ["plot_pair_on_circle", "plot_rotation_frames", "plot_position_scores"]

#: Colours used for the point at ``t`` and the point at ``t + phi``.
START_COLOUR = OKABE_ITO[0]
SHIFTED_COLOUR = OKABE_ITO[3]
_LIMIT = 1.38


def _circle_point(angle: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Coordinates ``(sin(angle), cos(angle))`` of a pair at the given angle(s)."""
    angle = np.asarray(angle, dtype=np.float64)
    return np.sin(angle), np.cos(angle)


def arc_points(start: float, stop: float, *, radius: float = 1.0, samples: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Points of the arc from angle ``start`` to ``stop`` (clockwise from the top for increasing angle)."""
    angles = np.linspace(start, stop, samples)
    return radius * np.sin(angles), radius * np.cos(angles)


def prepare_circle_axes(ax: Axes, *, pair_index: int | None = None) -> None:
    """Draw the unit circle and the coordinate axes once, square and labelled."""
    x, y = arc_points(0.0, 2.0 * np.pi, samples=181)
    ax.plot(x, y, color="0.75", linewidth=1.0, zorder=0)
    ax.axhline(0.0, color="0.88", linewidth=0.8, zorder=0)
    ax.axvline(0.0, color="0.88", linewidth=0.8, zorder=0)
    ax.set_xlim(-_LIMIT, _LIMIT)
    ax.set_ylim(-_LIMIT, _LIMIT)
    ax.set_aspect("equal")
    ax.set_xticks([-1.0, 0.0, 1.0])
    ax.set_yticks([-1.0, 0.0, 1.0])
    if pair_index is None:
        k, even, odd = "k", "2k", "2k+1"
    else:
        k, even, odd = str(pair_index), str(2 * pair_index), str(2 * pair_index + 1)
    ax.set_xlabel(rf"PE$(t, {even})$ = $\sin(\omega_{{{k}}} t)$")
    ax.set_ylabel(rf"PE$(t, {odd})$ = $\cos(\omega_{{{k}}} t)$")


def plot_pair_on_circle(
    omega: float,
    positions: ArrayLike,
    *,
    offset: float | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    annotate: bool = True,
    pair_index: int | None = None,
) -> Axes:
    """Draw one frequency pair of ``PE(t)`` as points on the unit circle.

    Each position ``t`` becomes the point ``(sin(omega t), cos(omega t))``,
    optionally labelled with ``t``. With ``offset`` given, each point is also
    turned by ``omega * offset`` radians: the shifted point
    ``(sin(omega (t + phi)), cos(omega (t + phi)))`` is drawn hollow, joined to
    the original by an arc that shows the rotation.

    Parameters
    ----------
    omega : float
        Angular frequency of the pair, radians per token, ``> 0``.
    positions : array_like
        1-D array of at least one finite position (tokens; fractional and
        negative positions are allowed).
    offset : float, optional
        The shift ``phi`` in tokens. Default: no shift drawn.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new square figure is made if omitted.
    title : str, optional
        Axes title.
    annotate : bool, optional
        Label each point with its position. Default True.
    pair_index : int, optional
        The pair index ``k >= 0``, used in the axis labels (dimensions ``2k``
        and ``2k + 1``). Default: the symbol ``k``.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    TypeError, ValueError
        If ``omega`` is not a finite number ``> 0``, ``positions`` is not a
        non-empty 1-D array of finite reals, ``offset`` is not finite or
        ``pair_index`` is not an integer ``>= 0``.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017, section 3.5.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> ax = plot_pair_on_circle(1.0, [0, 1, 2], offset=0.5, title="pair 0")
    >>> ax.get_title(), [t.get_text() for t in ax.texts][:3]
    ('pair 0', ['0', '1', '2'])
    >>> plt.close("all")
    """
    omega = require_positive_real(omega, "omega")
    t = as_positions(positions)
    if t.size == 0:
        raise ValueError("positions must hold at least one position, got an empty array")
    if pair_index is not None:
        pair_index = require_count(pair_index, "pair_index")
    if ax is None:
        _, ax = plt.subplots(figsize=(3.4, 3.4), constrained_layout=True)
    prepare_circle_axes(ax, pair_index=pair_index)
    angles = omega * t
    x, y = _circle_point(angles)
    if offset is not None:
        phi = require_real(offset, "offset")
        for angle in angles:
            ax.plot(*arc_points(angle, angle + omega * phi, radius=0.82), color=SHIFTED_COLOUR, linewidth=1.6, zorder=1)
            end = _circle_point(angle + omega * phi)
            ax.plot(
                [0.0, float(end[0])],
                [0.0, float(end[1])],
                color=SHIFTED_COLOUR,
                linewidth=1.0,
                linestyle="--",
                zorder=1,
            )
            ax.plot(
                *end,
                marker="o",
                markersize=8,
                markerfacecolor="white",
                markeredgecolor=SHIFTED_COLOUR,
                markeredgewidth=2.0,
                linestyle="none",
                zorder=3,
            )
        for angle in angles:
            ax.plot([0.0, np.sin(angle)], [0.0, np.cos(angle)], color=START_COLOUR, linewidth=1.4, zorder=2)
    ax.plot(x, y, marker="o", markersize=6, color=START_COLOUR, linestyle="none", zorder=4)
    if annotate:
        for position, px, py in zip(t, x, y, strict=True):
            ax.text(1.18 * px, 1.18 * py, f"{position:g}", ha="center", va="center", fontsize=8, color=START_COLOUR)
    if title:
        ax.set_title(title)
    return ax


def plot_rotation_frames(
    omegas: ArrayLike,
    positions: ArrayLike,
    offset: float,
    *,
    row_labels: Sequence[str] | None = None,
    figsize: tuple[float, float] | None = None,
) -> tuple[Figure, np.ndarray]:
    """Small multiples: one pair per row, one position per column, each turned by ``offset``.

    Panel ``(r, c)`` shows pair ``r`` (frequency ``omegas[r]``) at position
    ``positions[c]`` (filled point) and at ``positions[c] + offset`` (hollow
    point), joined by the arc of the rotation. Along a row the arc keeps the
    same angle ``omegas[r] * offset`` wherever it starts: the shift does not
    depend on the position.

    Parameters
    ----------
    omegas : array_like
        1-D array of frequencies ``> 0`` (radians per token), one per row.
    positions : array_like
        1-D array of finite positions (tokens), one per column.
    offset : float
        The shift ``phi`` in tokens.
    row_labels : sequence of str, optional
        A label per row, written as the first panel's y label.
    figsize : tuple of float, optional
        Figure size; by default 1.9 inches per panel.

    Returns
    -------
    fig : matplotlib.figure.Figure
    axes : numpy.ndarray
        Shape ``(len(omegas), len(positions))`` of Axes.

    Raises
    ------
    TypeError, ValueError
        If ``omegas`` is not a non-empty 1-D array of finite numbers ``> 0``,
        ``positions`` is not a non-empty 1-D array of finite reals,
        ``offset`` is not finite, or ``row_labels`` has the wrong length.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017, section 3.5.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, axes = plot_rotation_frames([1.0, 0.1], [0, 2, 4], 3.0)
    >>> axes.shape
    (2, 3)
    >>> plt.close(fig)
    """
    omega = as_real_array(omegas, "omegas").astype(np.float64)
    if omega.ndim != 1 or omega.size == 0:
        raise ValueError(f"omegas must be a non-empty 1-D array, got shape {omega.shape}")
    require_finite(omega, "omegas")
    if np.any(omega <= 0):
        raise ValueError("omegas must all be > 0 (radians per token)")
    t = as_positions(positions)
    if t.size == 0:
        raise ValueError("positions must hold at least one position, got an empty array")
    phi = require_real(offset, "offset")
    if row_labels is not None and len(row_labels) != omega.size:
        raise ValueError(f"row_labels must have one label per frequency ({omega.size}), got {len(row_labels)}")
    rows, cols = omega.size, t.size
    if figsize is None:
        figsize = (1.9 * cols + 0.4, 1.9 * rows + 0.5)
    fig, axes = plt.subplots(rows, cols, figsize=figsize, constrained_layout=True, squeeze=False)
    for r, w in enumerate(omega):
        for c, position in enumerate(t):
            ax = axes[r, c]
            plot_pair_on_circle(float(w), [position], offset=phi, ax=ax, annotate=False)
            ax.text(
                0.02,
                0.02,
                f"turn {w * phi:.2f} rad",
                ha="left",
                va="bottom",
                fontsize=8,
                color=SHIFTED_COLOUR,
                transform=ax.transAxes,
            )
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_xlabel("")
            ax.set_ylabel("")
            ax.spines[:].set_visible(False)
            if r == 0:
                ax.set_title(f"t = {position:g}", fontsize=10)
        if row_labels is not None:
            axes[r, 0].set_ylabel(row_labels[r])
    return fig, axes


def plot_position_scores(
    scores: ArrayLike,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    limit: float | None = None,
) -> Axes:
    """Heatmap of attention scores ``S[m, n]`` between a query at ``m`` and a key at ``n``.

    If the scores depend on the offset ``m - n`` only, every diagonal has one
    colour (a Toeplitz matrix). The colormap is diverging and centred on 0.

    Parameters
    ----------
    scores : array_like
        Square 2-D array of finite scores; row ``m`` is the query position,
        column ``n`` the key position (tokens, starting at 0).
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title.
    limit : float, optional
        Colour scale from ``-limit`` to ``limit``; default the largest
        ``|score|``.

    Returns
    -------
    matplotlib.axes.Axes
        The heatmap is ``ax.images[-1]`` (for a colorbar).

    Raises
    ------
    TypeError, ValueError
        If ``scores`` is not a square 2-D array of finite reals or ``limit``
        is not a number ``> 0``.

    References
    ----------
    .. [1] J. Su et al., "RoFormer: Enhanced Transformer with Rotary Position
       Embedding", Neurocomputing 568, 2024 (arXiv:2104.09864).

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib.pyplot as plt
    >>> ax = plot_position_scores(np.eye(3), title="identity")
    >>> ax.images[-1].get_array().shape
    (3, 3)
    >>> plt.close("all")
    """
    table = as_real_array(scores, "scores").astype(np.float64)
    if table.ndim != 2 or table.shape[0] != table.shape[1]:
        raise ValueError(f"scores must be a square 2-D array, got shape {table.shape}")
    require_finite(table, "scores")
    limit = float(np.abs(table).max()) or 1.0 if limit is None else require_positive_real(limit, "limit")
    if ax is None:
        _, ax = plt.subplots(figsize=(3.6, 3.2), constrained_layout=True)
    ax.imshow(table, cmap=DIVERGING_CMAP, vmin=-limit, vmax=limit, interpolation="nearest")
    ax.set_xlabel("key position n (tokens)")
    ax.set_ylabel("query position m (tokens)")
    if title:
        ax.set_title(title)
    return ax
