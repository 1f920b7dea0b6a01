"""Direct labels for horizontal reference lines that cannot overlap one another.

A label is drawn at the right edge of its axes, level with its line. Two lines close
together (guessing at 1/32 and a bag of tokens at 0.05, say) would put their labels on
top of each other, and how close is too close depends on the axes' final height, which
a constrained layout decides only when the figure is drawn. So the vertical place of
each label is worked out at draw time, from the data and the renderer: labels are
sorted by their line's height and pushed apart, as little as possible and symmetrically
about their lines, until each is at least one text line from the next.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.axes import Axes
from matplotlib.text import Annotation
from matplotlib.transforms import Affine2D, Transform
from numpy.typing import ArrayLike

__all__ = ["edge_labels", "spread_apart"]


def spread_apart(positions: ArrayLike, gap: float) -> np.ndarray:
    """Move points on a line as little as possible so that any two are at least ``gap`` apart.

    Points closer than ``gap`` are gathered into runs spaced exactly ``gap`` apart and
    centred on the mean of their original places; runs that then meet are merged, until
    none do. The order of the points is kept.

    Parameters
    ----------
    positions : array_like
        The wanted places (any order).
    gap : float
        The smallest distance allowed between two points, ``>= 0``.

    Returns
    -------
    numpy.ndarray
        The places, in the order of ``positions``.

    Raises
    ------
    ValueError
        If ``gap`` is negative or a position is not finite.

    Examples
    --------
    >>> spread_apart([0.0, 1.0, 10.0], 3.0).tolist()
    [-1.0, 2.0, 10.0]
    >>> spread_apart([5.0, 0.0], 1.0).tolist()
    [5.0, 0.0]
    """
    wanted = np.asarray(positions, dtype=float)
    if gap < 0:
        raise ValueError(f"gap must be >= 0, got {gap}")
    if wanted.ndim != 1 or not np.isfinite(wanted).all():
        raise ValueError("positions must be a 1-D sequence of finite numbers")
    order = np.argsort(wanted, kind="stable")
    runs: list[list[int]] = []  # each run: indices into order, consecutive
    for rank in range(order.size):
        runs.append([rank])
        while len(runs) > 1 and _start(runs[-1], wanted[order], gap) < _end(runs[-2], wanted[order], gap) + gap:
            last = runs.pop()
            runs[-1] += last
    placed = np.empty_like(wanted)
    for run in runs:
        start = _start(run, wanted[order], gap)
        for offset, rank in enumerate(run):
            placed[order[rank]] = start + offset * gap
    return placed


def _start(run: list[int], values: np.ndarray, gap: float) -> float:
    return float(np.mean(values[run])) - (len(run) - 1) * gap / 2


def _end(run: list[int], values: np.ndarray, gap: float) -> float:
    return _start(run, values, gap) + (len(run) - 1) * gap


def edge_labels(
    ax: Axes,
    labels: Mapping[str, float],
    *,
    fontsize: float = 8.0,
    color: str = "0.35",
    pad_points: float = 3.0,
) -> list[Annotation]:
    """Label horizontal lines at ``y = value`` just right of ``ax``, never two on top of each other.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes whose lines are labelled.
    labels : mapping of str to float
        Label to the height of its line, in data units.
    fontsize : float, optional
        Size of the labels in points, default 8.
    color : str, optional
        Their colour, default ``"0.35"``.
    pad_points : float, optional
        Space between the axes' right edge and the labels, in points, default 3.

    Returns
    -------
    list of matplotlib.text.Annotation
        The labels, in the order of ``labels``.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> texts = edge_labels(ax, {"guessing": 0.03, "bag of tokens": 0.04})
    >>> fig.canvas.draw()
    >>> low, high = (t.get_window_extent() for t in texts)
    >>> bool(high.y0 >= low.y1 - 1e-6)
    True
    >>> plt.close(fig)
    """
    names = list(labels)
    values = [float(labels[name]) for name in names]
    gap_points = fontsize * 1.3

    def placed(index: int):
        def transform(renderer) -> Transform:
            heights = ax.transData.transform([(0.0, v) for v in values])[:, 1]
            spread = spread_apart(heights, renderer.points_to_pixels(gap_points))
            x = ax.bbox.x1 + renderer.points_to_pixels(pad_points)
            return Affine2D().translate(x, spread[index])

        return transform

    return [
        ax.annotate(
            name,
            (1.0, value),
            xycoords=("axes fraction", "data"),
            xytext=(0, 0),
            textcoords=placed(index),
            va="center",
            ha="left",
            fontsize=fontsize,
            color=color,
            annotation_clip=False,
        )
        for index, (name, value) in enumerate(zip(names, values, strict=True))
    ]
