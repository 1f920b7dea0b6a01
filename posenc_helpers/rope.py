"""Rotary position embedding (RoPE) of Su et al. (RoFormer).

RoPE does not add anything to the token embeddings. After the query and key
projections, in every attention layer, it rotates each pair of features of a
query or key at position ``m`` by the angle ``m * theta_i`` with
``theta_i = base**(-2i / head_dim)``. Because rotations compose, the score
``<R(m) q, R(n) k>`` depends on the offset ``m - n`` only.

Two pairings of the features exist in real code and both are supported:

``"interleaved"``
    pairs ``(2i, 2i + 1)``: the RoFormer paper, GPT-J, Meta's Llama reference code.
``"half"``
    pairs ``(i, i + head_dim/2)``: GPT-NeoX and the Hugging Face Llama code.

They are the same rotation up to a fixed permutation of the features, so a
checkpoint trained with one cannot be used with the other without permuting
the query and key projection weights.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._validation import (
    as_head_array,
    as_positions,
    as_real_array,
    require_choice,
    require_even_width,
    require_finite,
    require_positive_real,
)
from .sinusoidal import geometric_frequencies

__all__ = ["rope_frequencies", "apply_rope"]

ROPE_LAYOUTS = ("interleaved", "half")


def rope_frequencies(head_dim: int, *, base: float = 10000.0) -> np.ndarray:
    """RoPE rotation frequencies ``theta_i = base**(-2i / head_dim)``.

    Note that the exponent uses the width of one attention head, not the model
    width: a model with ``d_model = 4096`` and 32 heads rotates over
    ``head_dim = 128``.

    Parameters
    ----------
    head_dim : int
        Width of one attention head; a positive even integer.
    base : float, optional
        Base of the geometric progression, ``> 0``. Default 10000.

    Returns
    -------
    numpy.ndarray
        Shape ``(head_dim // 2,)``, dtype float64, radians per token.

    Raises
    ------
    TypeError, ValueError
        If ``head_dim`` is not a positive even integer or ``base`` is not a
        finite number ``> 0``.

    References
    ----------
    .. [1] J. Su, M. Ahmed, Y. Lu, S. Pan, W. Bo, Y. Liu, "RoFormer: Enhanced
       Transformer with Rotary Position Embedding", Neurocomputing 568, 2024
       (arXiv:2104.09864, 2021), equation (15).

    Examples
    --------
    >>> rope_frequencies(4)
    array([1.  , 0.01])
    >>> rope_frequencies(6, base=64.0)
    array([1.    , 0.25  , 0.0625])
    """
    head_dim = require_even_width(head_dim, "head_dim")
    base = require_positive_real(base, "base")
    return geometric_frequencies(head_dim, base)


def _require_inv_freq(inv_freq: Any, rotary_dim: int) -> np.ndarray:
    array = as_real_array(inv_freq, "inv_freq").astype(np.float64)
    if array.shape != (rotary_dim // 2,):
        raise ValueError(
            f"inv_freq must be 1-D with rotary_dim // 2 = {rotary_dim // 2} entries "
            f"(one per rotated feature pair; rotary_dim is head_dim unless given), got shape {array.shape}"
        )
    require_finite(array, "inv_freq")
    return array


def apply_rope(
    x: ArrayLike,
    positions: int | ArrayLike,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    inv_freq: ArrayLike | None = None,
    rotary_dim: int | None = None,
) -> np.ndarray:
    """Rotate the feature pairs of queries or keys by their positions.

    For position ``m`` (row ``m`` of the sequence axis) and pair ``i`` with
    features ``(a, b)``::

        a' = a * cos(m * theta_i) - b * sin(m * theta_i)
        b' = a * sin(m * theta_i) + b * cos(m * theta_i)

    where ``(a, b) = (x[2i], x[2i+1])`` for ``layout="interleaved"`` and
    ``(x[i], x[i + head_dim/2])`` for ``layout="half"``.

    With ``rotary_dim = r < head_dim`` (partial rotary: GPT-NeoX's
    ``rotary_pct``, Hugging Face's ``partial_rotary_factor``) only the first
    ``r`` features are rotated, with ``theta_i = base**(-2i / r)`` over
    ``r``, and pairs formed within them (``(x[i], x[i + r/2])`` for
    ``"half"``); features ``r .. head_dim-1`` pass through unchanged.

    Parameters
    ----------
    x : array_like
        Queries or keys, shape ``(..., seq, head_dim)`` with ``head_dim`` even.
        Leading axes (batch, heads) are broadcast over.
    positions : int or array_like
        The position of each row of the sequence axis: a 1-D array-like of
        ``seq`` finite real numbers, or a count ``seq`` meaning ``0 .. seq-1``.
    base : float, optional
        Base of :func:`rope_frequencies`, ``> 0``. Default 10000. Ignored when
        ``inv_freq`` is given.
    layout : {"interleaved", "half"}, optional
        Which features form a pair, see above. Default ``"interleaved"``.
    inv_freq : array_like, optional
        Frequencies to use instead of :func:`rope_frequencies`, shape
        ``(rotary_dim // 2,)``; for instance the output of
        :func:`~posenc_helpers.scaled_rope_frequencies`.
    rotary_dim : int, optional
        How many leading features to rotate: an even integer with
        ``0 < rotary_dim <= head_dim``. Default ``None``: all of them.

    Returns
    -------
    numpy.ndarray
        The rotated array, same shape as ``x``. Angles are computed in float64;
        the result keeps ``x``'s floating dtype (integers give float64).

    Raises
    ------
    TypeError, ValueError
        If ``x`` is not a real array of at least two dimensions with an even
        last axis, ``positions`` is not 1-D, finite and of length ``seq``,
        ``base <= 0``, ``layout`` is unknown, ``rotary_dim`` is not an even
        integer in ``1 .. head_dim`` or ``inv_freq`` has the wrong shape.

    See Also
    --------
    rope_frequencies, scaled_rope_frequencies

    References
    ----------
    .. [1] J. Su et al., "RoFormer: Enhanced Transformer with Rotary Position
       Embedding", Neurocomputing 568, 2024 (arXiv:2104.09864), equation (34).
    .. [2] S. Black et al., "GPT-NeoX-20B: An Open-Source Autoregressive Language
       Model", 2022 (the half-split pairing, and partial rotary: ``rotary_pct``).
    .. [3] Hugging Face, transformers, ``models/gpt_neox/modeling_gpt_neox.py``
       (``rotary_ndims``: rotate ``x[..., :rotary_ndims]``, pass the rest) and
       ``modeling_rope_utils.py`` (``dim = head_dim * partial_rotary_factor``).

    Examples
    --------
    A single pair at position 1 with ``theta_0 = 1`` is turned by one radian:

    >>> import numpy as np
    >>> out = apply_rope(np.array([[1.0, 0.0]]), [1.0])
    >>> bool(np.allclose(out, [[np.cos(1.0), np.sin(1.0)]]))
    True

    Scores depend on the offset only:

    >>> rng = np.random.default_rng(0)
    >>> q, k = rng.normal(size=(2, 8))
    >>> s1 = apply_rope(q[None], [5.0])[0] @ apply_rope(k[None], [2.0])[0]
    >>> s2 = apply_rope(q[None], [103.0])[0] @ apply_rope(k[None], [100.0])[0]
    >>> bool(np.isclose(s1, s2))
    True

    Partial rotary: the last features are left as they are.

    >>> out = apply_rope(np.ones((3, 8)), 3, rotary_dim=4)
    >>> out[:, 4:]
    array([[1., 1., 1., 1.],
           [1., 1., 1., 1.],
           [1., 1., 1., 1.]])
    """
    array = as_head_array(x)
    head_dim = array.shape[-1]
    seq = array.shape[-2]
    t = as_positions(positions)
    if t.shape[0] != seq:
        raise ValueError(
            f"positions must have one entry per row of x's sequence axis (x.shape[-2] = {seq}), got {t.shape[0]}"
        )
    base = require_positive_real(base, "base")
    layout = require_choice(layout, "layout", ROPE_LAYOUTS)
    if rotary_dim is None:
        rotary_dim = head_dim
    else:
        rotary_dim = require_even_width(rotary_dim, "rotary_dim")
        if rotary_dim > head_dim:
            raise ValueError(
                f"rotary_dim must be a positive even integer <= head_dim (x.shape[-1] = {head_dim}), got {rotary_dim}"
            )
    theta = geometric_frequencies(rotary_dim, base) if inv_freq is None else _require_inv_freq(inv_freq, rotary_dim)
    out_dtype = array.dtype if np.issubdtype(array.dtype, np.floating) else np.float64
    work = np.asarray(array, dtype=np.float64)
    require_finite(work, "x")

    angles = t[:, None] * theta[None, :]  # angles[m, i] = m * theta_i, float64
    cos, sin = np.cos(angles), np.sin(angles)
    half = rotary_dim // 2
    if layout == "interleaved":  # pair i is (x[2i], x[2i + 1])
        first_of_pair, second_of_pair = slice(0, rotary_dim, 2), slice(1, rotary_dim, 2)
    else:  # pair i is (x[i], x[i + rotary_dim/2])
        first_of_pair, second_of_pair = slice(0, half), slice(half, rotary_dim)
    a, b = work[..., first_of_pair], work[..., second_of_pair]
    out = np.empty(work.shape, dtype=np.float64)
    out[..., rotary_dim:] = work[..., rotary_dim:]  # features past rotary_dim pass through
    first, second = out[..., first_of_pair], out[..., second_of_pair]
    np.multiply(a, cos, out=first)
    first -= b * sin  # a' = a cos - b sin
    np.multiply(a, sin, out=second)
    second += b * cos  # b' = a sin + b cos
    return out.astype(out_dtype, copy=False)
