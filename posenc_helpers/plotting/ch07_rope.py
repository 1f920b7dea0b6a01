"""Figures for chapter 07: RoPE's long-term decay bound and its rotation matrices.

Against the relative distance ``r = m - n``: the RoFormer paper's relative
upper bound (:func:`~posenc_helpers.rope_decay_bound`), and, in a separate
panel, the actual scores of particular queries and keys, each divided by its
value at ``r = 0``. They are kept apart on purpose: the bound multiplies a
factor that depends on ``q`` and ``k``, so the two are not on one scale.
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from numpy.typing import ArrayLike

from .._validation import as_positions, as_real_array, require_even_width, require_finite, require_positive_real
from ..rope_analysis import rope_decay_bound, rope_decay_scores
from ._style import DIVERGING_CMAP, OKABE_ITO

__all__ = ["plot_decay_bound", "plot_decay_scores", "plot_rotation_matrix"]

#: Colour of the bound; score curves take the next colours of the palette.
BOUND_COLOUR = OKABE_ITO[7]
SCORE_COLOURS = (OKABE_ITO[0], OKABE_ITO[3], OKABE_ITO[2], OKABE_ITO[4])
SCORE_STYLES = ("-", "--", "-.", ":")


def _require_distances(distances: ArrayLike) -> np.ndarray:
    r = as_positions(distances, "distances")
    if r.size == 0:
        raise ValueError("distances must hold at least one distance, got an empty array")
    return r


def plot_decay_bound(
    distances: ArrayLike,
    head_dim: int,
    *,
    base: float = 10000.0,
    ax: Axes | None = None,
    title: str | None = None,
    label: str | None = None,
    color: str = BOUND_COLOUR,
) -> Axes:
    """The RoFormer paper's relative upper bound against the relative distance.

    Draws :func:`~posenc_helpers.rope_decay_bound`,
    ``(1 / (d/2)) * sum_j |S_j|``, the factor of the bound on
    ``|score|`` that depends on the distance only. Call it several times on
    one ``ax`` to compare head widths or bases.

    Parameters
    ----------
    distances : array_like
        1-D array of relative distances (tokens), or a count ``n`` for ``0 .. n-1``.
    head_dim : int
        Width of one attention head; a positive even integer.
    base : float, optional
        Base of the RoPE frequencies, ``> 0``. Default 10000.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title.
    label : str, optional
        Legend label of the line. Default ``"head_dim = ..., base = ..."``.
    color : str, optional
        Line colour. Default black.

    Returns
    -------
    matplotlib.axes.Axes
        The curve is ``ax.lines[-1]``.

    Raises
    ------
    TypeError, ValueError
        If ``distances`` is not a non-empty 1-D array of finite reals (or a
        count), or ``head_dim`` or ``base`` is not allowed.

    References
    ----------
    .. [1] J. Su et al., "RoFormer: Enhanced Transformer with Rotary Position
       Embedding", Neurocomputing 568, 2024 (arXiv:2104.09864), section 3.4.3
       and figure 2.

    Examples
    --------
    At distance 0 the value is the mean of ``1 .. d/2``, 32.5 for ``d = 128``:

    >>> import matplotlib.pyplot as plt
    >>> ax = plot_decay_bound(256, 128, title="bound")
    >>> float(ax.lines[-1].get_ydata()[0]), ax.lines[-1].get_label()
    (32.5, 'head_dim = 128, base = 10000')
    >>> plt.close("all")
    """
    r = _require_distances(distances)
    head_dim = require_even_width(head_dim, "head_dim")
    base = require_positive_real(base, "base")
    bound = rope_decay_bound(r, head_dim, base=base)
    if ax is None:
        _, ax = plt.subplots(figsize=(5.0, 3.2), constrained_layout=True)
    ax.plot(
        r,
        bound,
        color=color,
        linewidth=1.6,
        label=label if label is not None else f"head_dim = {head_dim}, base = {base:g}",
    )
    ax.set_ylim(bottom=0.0)
    ax.set_xlabel("relative distance m − n (tokens)")
    ax.set_ylabel(r"$\frac{1}{d/2}\sum_j |S_j|$")
    if title:
        ax.set_title(title)
    return ax


def plot_decay_scores(
    distances: ArrayLike,
    head_dim: int,
    vectors: Mapping[str, ArrayLike],
    *,
    base: float = 10000.0,
    ax: Axes | None = None,
    title: str | None = None,
    legend: bool = True,
) -> Axes:
    """Scores of ``q = k = v`` against the relative distance, each divided by its value at 0.

    For each vector ``v`` (interleaved layout) the query ``q = v`` sits at
    position ``r`` and the key ``k = v`` at position 0; the score
    ``(R(r) v) . v`` is divided by ``|v|**2``, its value at ``r = 0``, so
    every curve starts at 1 and stays in ``[-1, 1]``. Whether it decays
    depends on ``v``: RoPE's decay bound does not force it to.

    Parameters
    ----------
    distances : array_like
        1-D array of relative distances (tokens), or a count ``n`` for ``0 .. n-1``.
    head_dim : int
        Width of one attention head; a positive even integer.
    vectors : mapping of str to array_like
        Label and vector (shape ``(head_dim,)``, finite, not all zero) of each curve.
    base : float, optional
        Base of the RoPE frequencies, ``> 0``. Default 10000.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title.
    legend : bool, optional
        Draw a legend. Default True.

    Returns
    -------
    matplotlib.axes.Axes
        The curves are ``ax.lines``, in the order of ``vectors``.

    Raises
    ------
    TypeError, ValueError
        If ``distances``, ``head_dim`` or ``base`` is not allowed, or a vector
        has the wrong shape, is not finite or is all zeros.

    References
    ----------
    .. [1] J. Su et al., "RoFormer: Enhanced Transformer with Rotary Position
       Embedding", Neurocomputing 568, 2024 (arXiv:2104.09864), section 3.4.3.

    Examples
    --------
    A vector in the slowest pair of ``head_dim = 64`` turns by about 1.3e-4
    radians per token, so its score hardly moves over 256 tokens:

    >>> import numpy as np
    >>> import matplotlib.pyplot as plt
    >>> ax = plot_decay_scores(256, 64, {"slowest pair": np.eye(64)[62]})
    >>> bool(ax.lines[0].get_ydata().min() > 0.99)
    True
    >>> plt.close("all")
    """
    r = _require_distances(distances)
    scores = rope_decay_scores(r, head_dim, vectors, base=base)  # checks head_dim, base and the vectors
    if ax is None:
        _, ax = plt.subplots(figsize=(5.0, 3.2), constrained_layout=True)
    for index, (name, values) in enumerate(scores.items()):
        ax.plot(
            r,
            values,
            color=SCORE_COLOURS[index % len(SCORE_COLOURS)],
            linestyle=SCORE_STYLES[index % len(SCORE_STYLES)],
            linewidth=1.3,
            label=name,
        )
    ax.axhline(0.0, color="0.8", linewidth=0.8, zorder=0)
    ax.set_ylim(-1.05, 1.1)
    ax.set_xlabel("relative distance m − n (tokens)")
    ax.set_ylabel("score / score at distance 0")
    if title:
        ax.set_title(title)
    if legend:
        ax.legend(loc="lower left", fontsize=8)
    return ax


def plot_rotation_matrix(matrix: ArrayLike, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Heatmap of a RoPE rotation matrix ``R(m)`` (or any square matrix with entries in [-1, 1]).

    Rows are output features, columns input features; the colour scale is
    diverging and fixed to ``[-1, 1]``, so zeros are white. In the interleaved
    layout the non-zero entries form ``2 x 2`` blocks on the diagonal; in the
    half-split layout they form three diagonals: the main one and the two at
    distance ``head_dim/2``.

    Parameters
    ----------
    matrix : array_like
        Square 2-D array of finite reals.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
        The heatmap is ``ax.images[-1]`` (for a colorbar).

    Raises
    ------
    TypeError, ValueError
        If ``matrix`` is not a square 2-D array of finite reals.

    References
    ----------
    .. [1] J. Su et al., "RoFormer: Enhanced Transformer with Rotary Position
       Embedding", Neurocomputing 568, 2024 (arXiv:2104.09864), equation (15).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from posenc_helpers import rope_rotation_matrix
    >>> ax = plot_rotation_matrix(rope_rotation_matrix(1.0, 8), title="R(1)")
    >>> ax.images[-1].get_clim()
    (-1.0, 1.0)
    >>> plt.close("all")
    """
    table = as_real_array(matrix, "matrix").astype(np.float64)
    if table.ndim != 2 or table.shape[0] != table.shape[1]:
        raise ValueError(f"matrix must be a square 2-D array, got shape {table.shape}")
    require_finite(table, "matrix")
    if ax is None:
        _, ax = plt.subplots(figsize=(3.4, 3.2), constrained_layout=True)
    ax.imshow(table, cmap=DIVERGING_CMAP, vmin=-1.0, vmax=1.0, interpolation="nearest")
    size = table.shape[0]
    ticks = np.arange(size) if size <= 16 else np.arange(0, size, max(1, size // 8))
    ax.set_xticks(ticks)
    ax.set_yticks(ticks)
    ax.set_xlabel("input feature")
    ax.set_ylabel("output feature")
    if title:
        ax.set_title(title)
    return ax
