"""Rotary angles in low-precision number formats (chapter 09).

A floating-point format with a ``p``-bit significand holds every integer up to
``2**p`` exactly; above that, neighbouring integers round to the same number.
Position ``t`` and the angle ``t * theta_i`` of RoPE inherit this:

=========  ================  ==========================  ================
format     significand bits  every integer exact up to   largest finite
=========  ================  ==========================  ================
float16    11                2048                        65504
bfloat16   8                 256                         about 3.4e38
float32    24                16 777 216                  about 3.4e38
float64    53                about 9.0e15                about 1.8e308
=========  ================  ==========================  ================

numpy has no bfloat16 type, so :func:`round_to_bfloat16` emulates it: it
rounds a float32 to the nearest number whose lower 16 bits are zero (ties to
even), which is exactly the set of bfloat16 values, and returns it as float32.
Real kernels compute the same correctly rounded results for single operations,
but may differ in details (fused operations, flushing subnormals to zero).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_positions, as_real_array, require_positive_frequencies

__all__ = [
    "round_to_bfloat16",
    "round_to_precision",
    "rope_angles",
    "angle_errors",
    "colliding_positions",
]

#: The formats the functions of this module accept, by name.
PRECISIONS = ("float16", "bfloat16", "float32", "float64")

_NUMPY_FORMATS = {"float16": np.float16, "float32": np.float32, "float64": np.float64}


def _require_precision(dtype: Any, name: str = "dtype") -> str:
    """Return the format name for ``dtype`` (a name from PRECISIONS or a numpy float dtype)."""
    allowed = ", ".join(repr(p) for p in PRECISIONS)
    if isinstance(dtype, str):
        if dtype in PRECISIONS:
            return dtype
        raise ValueError(f"{name} must be one of {allowed} (or np.float16/np.float32/np.float64), got {dtype!r}")
    if dtype is None or isinstance(dtype, (bool, np.bool_, numbers.Number)):
        raise TypeError(f"{name} must be one of {allowed} or a numpy float dtype, got {type(dtype).__name__} {dtype!r}")
    try:
        resolved = np.dtype(dtype)
    except TypeError:
        raise TypeError(
            f"{name} must be one of {allowed} or a numpy float dtype, got {type(dtype).__name__} {dtype!r}"
        ) from None
    if resolved.name not in _NUMPY_FORMATS:
        raise ValueError(f"{name} must be one of {allowed} (or np.float16/np.float32/np.float64), got {resolved}")
    return resolved.name


def round_to_bfloat16(x: ArrayLike) -> np.ndarray:
    """Round to the nearest bfloat16 value (ties to even), returned as float32.

    bfloat16 keeps float32's sign bit and 8 exponent bits but only the top 7 of
    its 23 stored significand bits (8 significant bits with the implicit one).
    The emulation converts ``x`` to float32, adds a rounding bias to its bit
    pattern (``.view(np.uint32)``) and clears the low 16 bits: round to nearest,
    ties to the even neighbour, exactly as a correctly rounded conversion does.

    Parameters
    ----------
    x : array_like
        Real numbers (integer or floating dtype), any shape. Other dtypes are
        first converted to float32, which is exact for float16, float32 and
        integers up to ``2**24``; float64 input is rounded twice (to float32,
        then to bfloat16), which can differ from a direct rounding only when
        the float32 result lands exactly halfway between two bfloat16 values.

    Returns
    -------
    numpy.ndarray
        float32 array of ``x``'s shape whose every entry is a bfloat16 value.
        Infinities are kept. NaN stays NaN (a quiet NaN, sign kept). Finite
        values at or beyond the midpoint between the largest bfloat16,
        ``(2 - 2**-7) * 2**127``, and the next power of two round to
        infinity, as round-to-nearest requires. Subnormal float32 values are
        rounded like the others (some hardware flushes them to zero instead).

    Raises
    ------
    TypeError
        If ``x`` does not hold real numbers (strings, booleans, complex).

    References
    ----------
    .. [1] D. Kalamkar et al., "A Study of BFLOAT16 for Deep Learning Training",
       arXiv:1905.12322, 2019 (the format).
    .. [2] IEEE Standard for Floating-Point Arithmetic, IEEE Std 754-2019
       (round to nearest, ties to even).

    Examples
    --------
    Between 256 and 512 bfloat16 values are 2 apart; 257 and 259 are ties and
    go to the neighbour with an even last bit:

    >>> round_to_bfloat16([256, 257, 258, 259, 260])
    array([256., 256., 258., 260., 260.], dtype=float32)
    >>> round_to_bfloat16([1 + 2**-8, 1 + 3 * 2**-8])
    array([1.      , 1.015625], dtype=float32)
    >>> round_to_bfloat16([np.inf, np.nan, 3.4e38])
    array([inf, nan, inf], dtype=float32)
    """
    array = as_real_array(x, "x")
    with np.errstate(over="ignore"):  # float64 beyond float32's range becomes inf, as it should
        single = np.array(array, dtype=np.float32)  # a C-contiguous copy
    bits = single.reshape(-1).view(np.uint32)  # 1-D, so arithmetic keeps arrays (not numpy scalars)
    nan = np.isnan(single.reshape(-1))
    lowest_kept = (bits >> np.uint32(16)) & np.uint32(1)
    rounded = (bits + np.uint32(0x7FFF) + lowest_kept) & np.uint32(0xFFFF0000)
    # A NaN keeps its sign and gets the quiet bit, so clearing the low bits cannot make it infinite.
    rounded[nan] = (bits[nan] | np.uint32(0x00400000)) & np.uint32(0xFFFF0000)
    return rounded.view(np.float32).reshape(single.shape)


def round_to_precision(x: ArrayLike, dtype: Any) -> np.ndarray:
    """Round real numbers to a floating-point format and return them as float64.

    Parameters
    ----------
    x : array_like
        Real numbers (integer or floating dtype), any shape.
    dtype : {"float16", "bfloat16", "float32", "float64"} or numpy float dtype
        The format; ``"bfloat16"`` is emulated by :func:`round_to_bfloat16`.

    Returns
    -------
    numpy.ndarray
        float64 array of ``x``'s shape; every entry is a value of the format.
        Values too large for the format become ``inf`` (for float16 from
        65520 on, the midpoint above its largest value 65504); NaN stays NaN.

    Raises
    ------
    TypeError, ValueError
        If ``x`` does not hold real numbers, or ``dtype`` is not one of the
        four formats.

    References
    ----------
    .. [1] IEEE Standard for Floating-Point Arithmetic, IEEE Std 754-2019.

    Examples
    --------
    >>> round_to_precision([2048, 2049, 2050, 65519, 65520], "float16")
    array([ 2048.,  2048.,  2050., 65504.,    inf])
    >>> round_to_precision([257, 16777217], np.float32).tolist()
    [257.0, 16777216.0]
    """
    array = as_real_array(x, "x")
    precision = _require_precision(dtype)
    if precision == "bfloat16":
        return round_to_bfloat16(array).astype(np.float64)
    with np.errstate(over="ignore"):
        return array.astype(_NUMPY_FORMATS[precision]).astype(np.float64)


def rope_angles(positions: int | ArrayLike, inv_freq: ArrayLike, dtype: Any) -> np.ndarray:
    """RoPE angles ``t * theta_i`` computed in a given floating-point format.

    The positions and the frequencies are first rounded to the format, then
    each product is rounded to it: what a kernel does that casts both inputs
    to that format before multiplying. (For bfloat16 the product of two
    bfloat16 values is exact in float32, so rounding it once more gives the
    correctly rounded bfloat16 product.)

    Parameters
    ----------
    positions : int or array_like
        A count ``n`` meaning ``0 .. n-1``, or a 1-D array-like of finite
        real positions.
    inv_freq : array_like
        The frequencies ``theta_i`` (radians per token), a non-empty 1-D array
        of finite numbers ``> 0``, e.g. from
        :func:`~posenc_helpers.rope_frequencies`.
    dtype : {"float16", "bfloat16", "float32", "float64"} or numpy float dtype
        The format the angles are computed in.

    Returns
    -------
    numpy.ndarray
        Shape ``(n_positions, n_pairs)``, float64 holding the values of the
        format; ``inf`` where the format overflows (float16 positions from
        65520 on).

    Raises
    ------
    TypeError, ValueError
        If ``positions`` is not a count or finite 1-D array, ``inv_freq`` is
        not a non-empty 1-D array of finite numbers ``> 0``, or ``dtype`` is
        not one of the four formats.

    References
    ----------
    .. [1] J. Su et al., "RoFormer: Enhanced Transformer with Rotary Position
       Embedding", Neurocomputing 568, 2024 (the angles ``m * theta_i``).
    .. [2] IEEE Standard for Floating-Point Arithmetic, IEEE Std 754-2019.

    Examples
    --------
    In bfloat16 position 257 is stored as 256, so its angle is that of 256:

    >>> rope_angles([256, 257, 258], [1.0], "bfloat16").ravel()
    array([256., 256., 258.])
    >>> rope_angles([3], [0.1], "float64")
    array([[0.3]])
    """
    t = as_positions(positions)
    theta = require_positive_frequencies(inv_freq, "inv_freq")
    precision = _require_precision(dtype)
    t_rounded = round_to_precision(t, precision)
    theta_rounded = round_to_precision(theta, precision)
    if precision == "float64":
        return t_rounded[:, None] * theta_rounded[None, :]
    # Products of two values with at most 24 significant bits are exact in float64
    # (and overflow to inf stays inf), so one rounding of the float64 product is
    # the correctly rounded product in the format.
    with np.errstate(over="ignore", invalid="ignore"):
        product = t_rounded[:, None] * theta_rounded[None, :]
    return round_to_precision(product, precision)


def angle_errors(positions: int | ArrayLike, inv_freq: ArrayLike, dtype: Any) -> np.ndarray:
    """Absolute error of RoPE angles computed in ``dtype``, against float64.

    The reference is ``t * theta_i`` computed in float64 from the float64
    positions and frequencies, so the errors of ``dtype="float64"`` are zero by
    construction (its own rounding, at most about ``2**-53 * |t * theta_i|``,
    is below what this function can see).

    Parameters
    ----------
    positions : int or array_like
        A count ``n`` meaning ``0 .. n-1``, or a 1-D array-like of finite
        real positions.
    inv_freq : array_like
        The frequencies ``theta_i``, a non-empty 1-D array of finite numbers ``> 0``.
    dtype : {"float16", "bfloat16", "float32", "float64"} or numpy float dtype
        The format of :func:`rope_angles`.

    Returns
    -------
    numpy.ndarray
        ``|rope_angles(positions, inv_freq, dtype) - t * theta|`` in radians,
        shape ``(n_positions, n_pairs)``; ``inf`` where the format overflowed.

    Raises
    ------
    TypeError, ValueError
        As :func:`rope_angles`.

    References
    ----------
    .. [1] N. J. Higham, *Accuracy and Stability of Numerical Algorithms*,
       2nd ed., SIAM, 2002, chapter 2 (rounding errors of products).

    Examples
    --------
    Position 2049 is stored as 2048 in float16, one radian off for ``theta = 1``:

    >>> angle_errors([2048, 2049], [1.0], "float16").ravel()
    array([0., 1.])
    >>> float(angle_errors([2049], [1.0], "float32")[0, 0])
    0.0
    """
    t = as_positions(positions)
    theta = require_positive_frequencies(inv_freq, "inv_freq")
    computed = rope_angles(t, theta, dtype)
    exact = t[:, None] * theta[None, :]
    return np.abs(computed - exact)


def colliding_positions(positions: int | ArrayLike, dtype: Any) -> np.ndarray:
    """The positions that a format cannot tell apart from another given position.

    Each distinct position is rounded to the format; a position *collides*
    when its rounded value equals that of another, different position in the
    input. Positions that overflow to infinity (float16 from 65520 on) all
    collide with each other.

    Parameters
    ----------
    positions : int or array_like
        A count ``n`` meaning ``0 .. n-1``, or a 1-D array-like of finite
        real positions (repeats count once).
    dtype : {"float16", "bfloat16", "float32", "float64"} or numpy float dtype
        The format the positions are stored in.

    Returns
    -------
    numpy.ndarray
        The colliding positions, sorted ascending, float64 (empty if none).

    Raises
    ------
    TypeError, ValueError
        If ``positions`` is not a count or finite 1-D array, or ``dtype`` is
        not one of the four formats.

    References
    ----------
    .. [1] IEEE Standard for Floating-Point Arithmetic, IEEE Std 754-2019.
    .. [2] D. Kalamkar et al., "A Study of BFLOAT16 for Deep Learning Training",
       arXiv:1905.12322, 2019.

    Examples
    --------
    >>> colliding_positions(np.arange(250, 262), "bfloat16")
    array([256., 257., 259., 260., 261.])
    >>> colliding_positions(3000, "float16")[:4]
    array([2048., 2049., 2051., 2052.])
    >>> colliding_positions(100000, "float32").size
    0
    """
    t = np.unique(as_positions(positions))
    rounded = round_to_precision(t, dtype)
    # Rounding is monotonic, so equal rounded values are neighbours in the sorted order.
    same = rounded[1:] == rounded[:-1]
    collides = np.zeros(t.size, dtype=bool)
    collides[1:] |= same
    collides[:-1] |= same
    return t[collides]
