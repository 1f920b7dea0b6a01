"""Figures for chapter 13: positions in 2026 models."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from .._validation import as_real_array
from ._style import OKABE_ITO

__all__ = ["plot_rotating_pairs"]


def plot_rotating_pairs(values: np.ndarray, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Line plot of ``values`` against the position (a scaffold to replace).

    TODO(author): what the figure shows, and the paper or code it follows.

    Parameters
    ----------
    values : array_like
        1-D, one value per position.
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
        If ``values`` is not 1-D.

    Examples
    --------
    >>> ax = plot_rotating_pairs(np.arange(4.0))
    >>> ax.lines[0].get_ydata().tolist()
    [0.0, 1.0, 2.0, 3.0]
    >>> plt.close("all")
    """
    values = as_real_array(values, "values")
    if values.ndim != 1:
        raise ValueError(f"values must be 1-D, got shape {values.shape}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6.0, 3.0), constrained_layout=True)
    ax.plot(np.arange(values.size), values, color=OKABE_ITO[0], marker="o", markersize=3)
    ax.set_xlabel("position t (tokens)")
    ax.set_ylabel("value")
    if title:
        ax.set_title(title)
    return ax
