"""Raw position indices: the naive encodings of chapter 02."""

from __future__ import annotations

import numpy as np

from ._validation import require_count

__all__ = ["integer_positions", "normalized_positions"]


def integer_positions(n: int) -> np.ndarray:
    """Positions ``0, 1, ..., n-1`` as floats.

    The most naive positional signal: the index of the token itself. It is
    unique and needs no length in advance, but it is unbounded, so for long
    sequences it dwarfs token embeddings whose entries are of order one.

    Parameters
    ----------
    n : int
        Number of positions, ``n >= 0``.

    Returns
    -------
    numpy.ndarray
        Shape ``(n,)``, dtype float64.

    Raises
    ------
    TypeError
        If ``n`` is not an integer.
    ValueError
        If ``n`` is negative.

    See Also
    --------
    normalized_positions : the same positions squeezed into ``[0, 1]``.

    Examples
    --------
    >>> integer_positions(4)
    array([0., 1., 2., 3.])
    >>> integer_positions(0).shape
    (0,)
    """
    n = require_count(n, "n")
    return np.arange(n, dtype=np.float64)


def normalized_positions(n: int) -> np.ndarray:
    """Positions ``0 .. n-1`` scaled linearly onto ``[0, 1]``.

    Position ``t`` becomes ``t / (n - 1)``, so the first token is 0 and the last
    is 1 whatever the length. The price is that one step between neighbours is
    ``1 / (n - 1)``: its meaning depends on the length of the sequence, and the
    length must be known before any position can be encoded.

    Parameters
    ----------
    n : int
        Number of positions, ``n >= 0``. A single position (``n = 1``) is
        mapped to ``[0.0]``; ``n = 0`` gives an empty array.

    Returns
    -------
    numpy.ndarray
        Shape ``(n,)``, dtype float64, values in ``[0, 1]``.

    Raises
    ------
    TypeError
        If ``n`` is not an integer.
    ValueError
        If ``n`` is negative.

    See Also
    --------
    integer_positions : the unscaled indices.

    References
    ----------
    .. [1] A. Kazemnejad, "Transformer Architecture: The Positional Encoding",
       2019 (the length-dependent step of normalised positions).

    Examples
    --------
    >>> normalized_positions(5)
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    >>> normalized_positions(1)
    array([0.])
    """
    n = require_count(n, "n")
    if n <= 1:
        return np.zeros(n, dtype=np.float64)
    return np.arange(n, dtype=np.float64) / (n - 1)
