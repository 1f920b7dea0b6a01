"""Figures for chapter 14: a museum of positional bugs."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from .._validation import as_real_array
from ._style import OKABE_ITO

__all__ = ["plot_score_errors"]

_STYLES = ("-", "--", ":", "-.")
_MARKERS = ("o", "s", "^", "D")


def plot_score_errors(
    x: np.ndarray,
    errors: Mapping[str, np.ndarray],
    *,
    xlabel: str,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """How far a bugged implementation's attention scores are from the right ones.

    One line per bug: the absolute difference between the score a bugged code
    gives and the score the reference gives, against what the symptom depends
    on (the key offset ``m - n``, or the query position). A line that sits on
    zero at offset 0 and leaves it beyond is the signature of a RoPE bug that
    queries and keys share; a line that grows with the position is that of
    low-precision angles (chapter 14 of the book).

    Parameters
    ----------
    x : array_like
        1-D, the horizontal values (offsets or positions, tokens).
    errors : mapping of str to array_like
        Label -> absolute score errors, each 1-D and as long as ``x``; one to
        four lines, told apart by colour, line style and marker.
    xlabel : str
        The horizontal axis label, with its unit.
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
        If ``errors`` is not a mapping or ``xlabel`` not a string.
    ValueError
        If ``x`` is not 1-D, ``errors`` is empty or holds more than four lines,
        or a line is not as long as ``x`` or holds a negative value.

    Examples
    --------
    >>> ax = plot_score_errors(np.arange(3), {"layout": [0.0, 0.5, 0.2]}, xlabel="offset m - n (tokens)")
    >>> ax.lines[0].get_ydata().tolist()
    [0.0, 0.5, 0.2]
    >>> plt.close("all")
    """
    x = as_real_array(x, "x")
    if x.ndim != 1:
        raise ValueError(f"x must be 1-D, got shape {x.shape}")
    if not isinstance(errors, Mapping):
        raise TypeError(f"errors must be a mapping of label -> 1-D array, got {type(errors).__name__}")
    if not 1 <= len(errors) <= len(_STYLES):
        raise ValueError(f"errors must hold 1 to {len(_STYLES)} lines, got {len(errors)}")
    if not isinstance(xlabel, str):
        raise TypeError(f"xlabel must be a string, got {type(xlabel).__name__}")
    lines = {}
    for label, values in errors.items():
        values = as_real_array(values, f"errors[{label!r}]")
        if values.shape != x.shape:
            raise ValueError(f"errors[{label!r}] must have the shape of x, {x.shape}; got {values.shape}")
        if np.any(values < 0):
            raise ValueError(f"errors[{label!r}] must hold absolute errors (>= 0)")
        lines[str(label)] = values
    if ax is None:
        _, ax = plt.subplots(figsize=(6.0, 3.0), constrained_layout=True)
    for i, (label, values) in enumerate(lines.items()):
        ax.plot(
            x,
            values,
            color=OKABE_ITO[i],
            linestyle=_STYLES[i],
            marker=_MARKERS[i],
            markersize=3,
            linewidth=1.4,
            label=label,
        )
    ax.set_xlabel(xlabel)
    ax.set_ylabel("|score error|")
    ax.set_ylim(bottom=0.0)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    return ax
