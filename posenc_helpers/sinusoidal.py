"""The sinusoidal positional encoding of Vaswani et al. (2017) and its relatives.

Notation (see the book's notation page): ``t`` is a position, ``d`` the width
``d_model`` (even), ``k = 0 .. d/2 - 1`` the frequency-pair index and
``omega_k = base**(-2k/d)`` the angular frequency shared by dimensions ``2k`` and
``2k + 1``::

    PE(t, 2k)     = sin(omega_k * t)
    PE(t, 2k + 1) = cos(omega_k * t)
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from ._validation import (
    as_positions,
    require_choice,
    require_count,
    require_dtype_floating,
    require_even_width,
    require_positive_real,
    require_real,
)

__all__ = [
    "frequencies",
    "wavelengths",
    "sine_only_encoding",
    "sinusoidal_encoding",
    "shift_matrix",
]

SINUSOIDAL_LAYOUTS = ("interleaved", "concat")


def geometric_frequencies(width: int, base: float) -> np.ndarray:
    """``base**(-2k / width)`` for ``k = 0 .. width/2 - 1`` (no validation).

    The one formula behind :func:`frequencies` (over the model width) and
    :func:`~posenc_helpers.rope_frequencies` (over the head width).
    """
    pair_index = np.arange(width // 2, dtype=np.float64)
    return base ** (-2.0 * pair_index / width)


def halves_order(width: int) -> np.ndarray:
    """``[0, 2, 4, ..., 1, 3, 5, ...]``: the pair layouts' one permutation (no validation).

    Column ``j`` of the halves layout (all first members of the pairs, then all
    second members: the sinusoidal ``[sines | cosines]`` table, RoPE's half-split
    features) is column ``order[j]`` of the interleaved layout. The public
    :func:`~posenc_helpers.rope_layout_permutation` validates and returns it.
    """
    return np.concatenate([np.arange(0, width, 2), np.arange(1, width, 2)]).astype(np.int64)


def frequencies(d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """Angular frequencies ``omega_k = base**(-2k/d_model)`` of the sinusoidal encoding.

    One frequency per pair of dimensions: ``k = 0 .. d_model/2 - 1``. The first
    pair turns at one radian per token; each later pair is slower by the
    constant factor ``base**(-2/d_model)``.

    Parameters
    ----------
    d_model : int
        Width of the encoding; a positive even integer.
    base : float, optional
        Base of the geometric progression, ``> 0``. Default 10000.

    Returns
    -------
    numpy.ndarray
        Shape ``(d_model // 2,)``, dtype float64, in radians per token.

    Raises
    ------
    TypeError, ValueError
        If ``d_model`` is not a positive even integer or ``base`` is not a
        finite number ``> 0``.

    See Also
    --------
    wavelengths : the same progression expressed as ``2*pi / omega_k`` tokens.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017, section 3.5.

    Examples
    --------
    >>> frequencies(4)
    array([1.  , 0.01])
    >>> frequencies(8, base=16.0)
    array([1.   , 0.5  , 0.25 , 0.125])
    """
    d_model = require_even_width(d_model, "d_model")
    base = require_positive_real(base, "base")
    return geometric_frequencies(d_model, base)


def wavelengths(d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """Wavelengths ``lambda_k = 2*pi / omega_k`` of the sinusoidal pairs, in tokens.

    They form a geometric progression from ``2*pi`` (pair 0) up to
    ``2*pi * base**((d_model - 2) / d_model)`` (the last pair), just under
    ``2*pi * base``.

    Parameters
    ----------
    d_model : int
        Width of the encoding; a positive even integer.
    base : float, optional
        Base of the geometric progression, ``> 0``. Default 10000.

    Returns
    -------
    numpy.ndarray
        Shape ``(d_model // 2,)``, dtype float64, in tokens.

    Raises
    ------
    TypeError, ValueError
        As for :func:`frequencies`.

    See Also
    --------
    frequencies

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017, section 3.5
       ("the wavelengths form a geometric progression from 2*pi to 10000 * 2*pi").

    Examples
    --------
    >>> import numpy as np
    >>> lam = wavelengths(4)
    >>> bool(np.allclose(lam, [2 * np.pi, 200 * np.pi]))
    True
    """
    return 2.0 * np.pi / frequencies(d_model, base=base)


def sine_only_encoding(positions: int | ArrayLike, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """An encoding made of sines only: ``d_model`` sine columns at geometric frequencies.

    Column ``j`` holds ``sin(t * base**(-j / d_model))`` for ``j = 0 .. d_model-1``.
    That is, every column gets its own frequency, spread over the same range as
    :func:`sinusoidal_encoding`, from one radian per token down to
    ``base**(-(d_model - 1)/d_model)`` (about 1/1585 for ``d_model = 5``, not
    ``1/base``), but no column is paired with a cosine. This is the natural
    "sines only" strawman: it is bounded and smooth, yet no fixed matrix maps
    ``PE(t)`` to ``PE(t + phi)`` for all ``t``, and ``sin`` alone cannot tell a
    rising wave from a falling one.

    Because there are no pairs, ``d_model`` may be odd here (chapter 03 studies
    ``d_model = 5``).

    Parameters
    ----------
    positions : int or array_like
        Either a count ``n`` (positions ``0 .. n-1``) or a 1-D array-like of
        finite real positions.
    d_model : int
        Number of sine columns, ``>= 1``.
    base : float, optional
        Base of the geometric frequency progression, ``> 0``. Default 10000.

    Returns
    -------
    numpy.ndarray
        Shape ``(n, d_model)``, dtype float64, values in ``[-1, 1]``.

    Raises
    ------
    TypeError, ValueError
        If ``positions`` is not a count or a 1-D array of finite reals,
        ``d_model`` is not an integer ``>= 1`` or ``base`` is not ``> 0``.

    See Also
    --------
    sinusoidal_encoding : the sine/cosine version that does admit a shift matrix.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017, section 3.5
       (the geometric frequency progression reused here).

    Examples
    --------
    >>> import numpy as np
    >>> pe = sine_only_encoding(3, 2, base=100.0)
    >>> pe.shape
    (3, 2)
    >>> bool(np.allclose(pe[:, 0], np.sin([0, 1, 2])))
    True
    >>> bool(np.allclose(pe[:, 1], np.sin([0, 0.1, 0.2])))
    True
    """
    t = as_positions(positions)
    d_model = require_count(d_model, "d_model", minimum=1)
    base = require_positive_real(base, "base")
    column = np.arange(d_model, dtype=np.float64)
    omega = base ** (-column / d_model)
    return np.sin(t[:, None] * omega[None, :])


# Rows per block in sinusoidal_encoding: about 256 KiB of float32 angles.


def sinusoidal_encoding(
    positions: int | ArrayLike,
    d_model: int,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    dtype: DTypeLike = np.float64,
) -> np.ndarray:
    """The sinusoidal positional encoding ``PE(t)`` of Vaswani et al. (2017).

    For every position ``t`` and pair ``k = 0 .. d_model/2 - 1``::

        PE(t, 2k)     = sin(omega_k * t)
        PE(t, 2k + 1) = cos(omega_k * t),   omega_k = base**(-2k / d_model)

    with ``layout="interleaved"`` (the paper's order). ``layout="concat"``
    stores the same numbers as ``[all sines | all cosines]``, the order used by
    tensor2tensor and fairseq (which also space their frequencies slightly
    differently; this function always uses ``omega_k`` above).

    Parameters
    ----------
    positions : int or array_like
        Either a count ``n`` (positions ``0 .. n-1``) or a 1-D array-like of
        finite real positions (fractional and negative positions are allowed).
    d_model : int
        Width of the encoding; a positive even integer.
    base : float, optional
        Base of the geometric frequency progression, ``> 0``. Default 10000.
    layout : {"interleaved", "concat"}, optional
        Column order, see above. Default ``"interleaved"``.
    dtype : numpy floating dtype, optional
        Precision in which positions, frequencies and angles are computed and
        the table returned. Default float64. Use float32 to see how single
        precision loses the fast pairs at large positions.

    Returns
    -------
    numpy.ndarray
        Shape ``(n, d_model)`` with values in ``[-1, 1]``; every row has norm
        ``sqrt(d_model / 2)``.

    Raises
    ------
    TypeError, ValueError
        If ``positions`` is not a count or a 1-D array of finite reals,
        ``d_model`` is not a positive even integer, ``base <= 0``, ``layout``
        is unknown or ``dtype`` is not a floating dtype.

    See Also
    --------
    frequencies, shift_matrix, sine_only_encoding

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017, section 3.5.

    Examples
    --------
    The worked example ``d_model = 4``: ``omega = [1, 0.01]``.

    >>> import numpy as np
    >>> pe = sinusoidal_encoding(3, 4)
    >>> np.round(pe[2], 3)
    array([ 0.909, -0.416,  0.02 ,  1.   ])
    >>> bool(np.allclose(pe[2], [np.sin(2), np.cos(2), np.sin(0.02), np.cos(0.02)]))
    True
    >>> sinusoidal_encoding([0.5], 4, layout="concat").shape
    (1, 4)
    >>> sinusoidal_encoding(0, 6).shape
    (0, 6)
    """
    t = as_positions(positions)
    d_model = require_even_width(d_model, "d_model")
    base = require_positive_real(base, "base")
    layout = require_choice(layout, "layout", SINUSOIDAL_LAYOUTS)
    dtype = require_dtype_floating(dtype)

    omega = geometric_frequencies(d_model, base).astype(dtype)
    angles = np.outer(t.astype(dtype), omega)  # angles[t, k] = omega_k * t
    half = d_model // 2
    table = np.empty((t.shape[0], d_model), dtype=dtype)
    if layout == "interleaved":  # PE(t, 2k) = sin, PE(t, 2k + 1) = cos
        sines, cosines = table[:, 0::2], table[:, 1::2]
    else:  # [all sines | all cosines]
        sines, cosines = table[:, :half], table[:, half:]
    np.sin(angles, out=sines)
    np.cos(angles, out=cosines)
    return table


def shift_matrix(offset: float, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """The block-diagonal rotation ``M(phi)`` with ``M(phi) @ PE(t) == PE(t + phi)``.

    For pair ``k`` the 2x2 block is::

        [[ cos(omega_k * phi),  sin(omega_k * phi)],
         [-sin(omega_k * phi),  cos(omega_k * phi)]]

    acting on ``[sin(omega_k t), cos(omega_k t)]``. It depends on the offset
    ``phi`` only, never on ``t``: this is why the interleaved sine/cosine
    encoding lets a linear layer express "look ``phi`` tokens away".

    Parameters
    ----------
    offset : float
        The shift ``phi`` in tokens; any finite real number.
    d_model : int
        Width of the encoding; a positive even integer.
    base : float, optional
        Base of the frequency progression, ``> 0``. Default 10000.

    Returns
    -------
    numpy.ndarray
        Shape ``(d_model, d_model)``, orthogonal, with ``M(a) @ M(b) == M(a + b)``
        and ``M(-phi) == M(phi).T``.

    Raises
    ------
    TypeError, ValueError
        If ``offset`` is not a finite real number, ``d_model`` is not a positive
        even integer or ``base <= 0``.

    See Also
    --------
    sinusoidal_encoding : the interleaved encoding this matrix shifts.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017, section 3.5
       ("PE(pos+k) can be represented as a linear function of PE(pos)").

    Examples
    --------
    >>> import numpy as np
    >>> m = shift_matrix(3.0, 4)
    >>> pe = sinusoidal_encoding([2.0, 5.0], 4)
    >>> bool(np.allclose(m @ pe[0], pe[1]))
    True
    >>> bool(np.allclose(m @ m.T, np.eye(4)))
    True
    """
    phi = require_real(offset, "offset")
    d_model = require_even_width(d_model, "d_model")
    angle = frequencies(d_model, base=base) * phi
    cos, sin = np.cos(angle), np.sin(angle)
    even = np.arange(0, d_model, 2)
    matrix = np.zeros((d_model, d_model), dtype=np.float64)
    matrix[even, even] = cos
    matrix[even, even + 1] = sin
    matrix[even + 1, even] = -sin
    matrix[even + 1, even + 1] = cos
    return matrix
