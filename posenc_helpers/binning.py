"""Averages over position bins that widen on a log scale (chapter 11's per-position losses).

A loss measured at every position of a long window is noisy far out and changes
fastest at the first positions. :func:`log_binned` averages it over bins of equal
width on a log axis: single positions first, wider bins later.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_real_array, require_count, require_finite

__all__ = ["log_binned"]


def log_binned(values: ArrayLike, bins_per_octave: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Means of ``values[1:]`` over position bins of equal width on a log scale.

    Bin edges are the distinct integers ``round(2**(k / bins_per_octave))``, so the
    first bins are single positions and later ones grow with the position, which
    averages away the noise of long windows without blurring the first tokens.
    Position 0 (no context at all) is left out: it has no place on a log axis.

    Parameters
    ----------
    values : array_like
        One finite real number per position ``0 .. n-1``, ``n >= 2``.
    bins_per_octave : int, optional
        Bins per doubling of the position, ``>= 1``. Default 4.

    Returns
    -------
    centres : numpy.ndarray
        The geometric middle ``sqrt(first * last)`` of each bin's positions.
    means : numpy.ndarray
        The mean of ``values`` over each bin.

    Raises
    ------
    TypeError
        If ``values`` does not hold real numbers or ``bins_per_octave`` is not an
        integer.
    ValueError
        If ``values`` is not 1-D with at least 2 finite entries, or
        ``bins_per_octave < 1``.

    Examples
    --------
    With one bin per octave the bins are positions 1, 2-3, 4-7 and 8:

    >>> centres, means = log_binned(np.arange(9.0), bins_per_octave=1)
    >>> centres.round(2).tolist(), means.tolist()
    ([1.0, 2.45, 5.29, 8.0], [1.0, 2.5, 5.5, 8.0])
    """
    values = as_real_array(values, "values").astype(np.float64)
    if values.ndim != 1 or values.size < 2:
        raise ValueError(f"values must be a 1-D array of at least 2 numbers, got shape {values.shape}")
    require_finite(values, "values")
    bins_per_octave = require_count(bins_per_octave, "bins_per_octave", minimum=1)
    count = int(np.ceil(np.log2(values.size) * bins_per_octave))
    edges = np.unique(np.round(2.0 ** (np.arange(count + 1) / bins_per_octave)).astype(int))
    edges = np.append(edges[edges < values.size], values.size)
    starts, stops = edges[:-1], edges[1:]
    centres = np.sqrt(starts * (stops - 1.0))
    means = np.array([values[a:b].mean() for a, b in zip(starts, stops, strict=True)])
    return centres, means
