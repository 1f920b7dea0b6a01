"""RoPE taken apart: its rotation matrix, the map between its two layouts, its decay bound and scores.

:mod:`posenc_helpers.rope` applies the rotation; this module provides what
chapter 07 needs to look inside it:

* :func:`rope_rotation_matrix`, the ``head_dim x head_dim`` matrix ``R(m)``;
* :func:`rope_layout_permutation`, the feature order that maps the interleaved
  layout onto the half-split one;
* :func:`rope_decay_bound`, the "relative upper bound" of the RoFormer paper;
* :func:`rope_decay_scores`, the scores that bound holds above, for given vectors,
  and :func:`rope_slowest_pair_vector`, a vector whose score does not decay.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike

from ._validation import (
    as_positions,
    as_real_array,
    require_choice,
    require_even_width,
    require_finite,
    require_positive_real,
    require_real,
)
from .rope import ROPE_LAYOUTS, rope_frequencies
from .sinusoidal import geometric_frequencies, halves_order

__all__ = [
    "rope_rotation_matrix",
    "rope_layout_permutation",
    "rope_decay_bound",
    "rope_decay_scores",
    "rope_slowest_pair_vector",
]


def _pair_indices(head_dim: int, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """Feature indices ``(first, second)`` of each pair ``i`` in the given layout."""
    if layout == "interleaved":
        first = np.arange(0, head_dim, 2)
        return first, first + 1
    first = np.arange(head_dim // 2)
    return first, first + head_dim // 2


def rope_rotation_matrix(
    position: float,
    head_dim: int,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
) -> np.ndarray:
    """The ``head_dim x head_dim`` matrix ``R(m)`` that RoPE applies at position ``m``.

    Pair ``i`` (features ``(a, b)``, see :func:`~posenc_helpers.apply_rope`
    for where they sit in each layout) is turned counter-clockwise by the
    angle ``m * theta_i``::

        [a']   [cos(m theta_i)  -sin(m theta_i)] [a]
        [b'] = [sin(m theta_i)   cos(m theta_i)] [b]

    For ``layout="interleaved"`` the matrix is block-diagonal with these
    ``2 x 2`` blocks; for ``layout="half"`` the same entries sit in rows and
    columns ``i`` and ``i + head_dim/2``. In both cases
    ``R(m) @ x == apply_rope(x[None], [m], layout=layout)[0]``, ``R(m)`` is
    orthogonal and ``R(m).T @ R(n) == R(n - m)``.

    Parameters
    ----------
    position : float
        The position ``m`` in tokens, any finite real number.
    head_dim : int
        Width of one attention head; a positive even integer.
    base : float, optional
        Base of :func:`~posenc_helpers.rope_frequencies`, ``> 0``. Default 10000.
    layout : {"interleaved", "half"}, optional
        Which features form a pair. Default ``"interleaved"``.

    Returns
    -------
    numpy.ndarray
        Shape ``(head_dim, head_dim)``, dtype float64.

    Raises
    ------
    TypeError, ValueError
        If ``position`` is not a finite real number, ``head_dim`` is not a
        positive even integer, ``base <= 0`` or ``layout`` is unknown.

    See Also
    --------
    posenc_helpers.apply_rope, rope_layout_permutation

    References
    ----------
    .. [1] J. Su et al., "RoFormer: Enhanced Transformer with Rotary Position
       Embedding", Neurocomputing 568, 2024 (arXiv:2104.09864), equation (15).

    Examples
    --------
    At position 1 with ``theta_0 = 1`` the single pair turns by one radian:

    >>> import numpy as np
    >>> r = rope_rotation_matrix(1.0, 2)
    >>> bool(np.allclose(r, [[np.cos(1.0), -np.sin(1.0)], [np.sin(1.0), np.cos(1.0)]]))
    True

    For ``head_dim = 4`` and base 10000 the frequencies are 1 and 0.01, so at
    position ``pi / 2`` pair 0 makes a quarter turn:

    >>> np.round(rope_rotation_matrix(np.pi / 2, 4), 3)
    array([[ 0.   , -1.   ,  0.   ,  0.   ],
           [ 1.   ,  0.   ,  0.   ,  0.   ],
           [ 0.   ,  0.   ,  1.   , -0.016],
           [ 0.   ,  0.   ,  0.016,  1.   ]])
    """
    m = require_real(position, "position")
    head_dim = require_even_width(head_dim, "head_dim")
    base = require_positive_real(base, "base")
    layout = require_choice(layout, "layout", ROPE_LAYOUTS)
    angles = m * rope_frequencies(head_dim, base=base)
    cos, sin = np.cos(angles), np.sin(angles)
    first, second = _pair_indices(head_dim, layout)
    matrix = np.zeros((head_dim, head_dim))
    matrix[first, first] = cos
    matrix[first, second] = -sin
    matrix[second, first] = sin
    matrix[second, second] = cos
    return matrix


def rope_layout_permutation(head_dim: int) -> np.ndarray:
    """Feature order that turns the interleaved RoPE layout into the half-split one.

    In the interleaved layout pair ``i`` is features ``(2i, 2i + 1)``; in the
    half-split layout it is ``(i, i + head_dim/2)``. The returned index array
    ``perm = [0, 2, 4, ..., 1, 3, 5, ...]`` moves every pair to its half-split
    place, so for every ``x`` and positions ``t``::

        apply_rope(x[..., perm], t, layout="half") == apply_rope(x, t, layout="interleaved")[..., perm]

    ``np.argsort(perm)`` is the inverse (half-split back to interleaved). To
    convert a checkpoint, permute the output features of the query and key
    projections the same way: ``W_q[:, perm]`` when ``q = x @ W_q`` (for a
    PyTorch ``nn.Linear`` weight of shape ``(out, in)``, its rows ``W[perm]``).
    Values and everything else stay as they are, because
    ``(P a) . (P b) = a . b`` for any permutation ``P``.

    Parameters
    ----------
    head_dim : int
        Width of one attention head; a positive even integer.

    Returns
    -------
    numpy.ndarray
        Shape ``(head_dim,)``, dtype int64, a permutation of ``0 .. head_dim-1``.

    Raises
    ------
    TypeError, ValueError
        If ``head_dim`` is not a positive even integer.

    See Also
    --------
    posenc_helpers.apply_rope, rope_rotation_matrix

    References
    ----------
    .. [1] J. Su et al., "RoFormer: Enhanced Transformer with Rotary Position
       Embedding", Neurocomputing 568, 2024 (arXiv:2104.09864) (interleaved pairs).
    .. [2] S. Black et al., "GPT-NeoX-20B: An Open-Source Autoregressive Language
       Model", 2022 (half-split pairs).

    Examples
    --------
    >>> rope_layout_permutation(8)
    array([0, 2, 4, 6, 1, 3, 5, 7])

    It maps one layout onto the other:

    >>> import numpy as np
    >>> from posenc_helpers import apply_rope
    >>> x = np.arange(8.0)[None]
    >>> perm = rope_layout_permutation(8)
    >>> a = apply_rope(x[:, perm], [3.0], layout="half")
    >>> b = apply_rope(x, [3.0], layout="interleaved")[:, perm]
    >>> bool(np.allclose(a, b))
    True
    """
    head_dim = require_even_width(head_dim, "head_dim")
    return halves_order(head_dim)


def rope_decay_bound(distances: int | ArrayLike, head_dim: int, *, base: float = 10000.0) -> np.ndarray:
    """The RoFormer paper's long-term decay curve ``(1 / (d/2)) * sum_j |S_j|``.

    Write a query and a key as ``d/2 = head_dim/2`` complex numbers, one per
    pair, and ``h_i = q_i * conj(k_i)``. The score at relative distance
    ``r = m - n`` is ``Re sum_i h_i exp(i r theta_i)``. With the partial sums
    ``S_j = sum_{i < j} exp(i r theta_i)`` (``S_0 = 0``) and ``h_{d/2} = 0``,
    summation by parts (Abel's transformation) gives::

        |sum_i h_i exp(i r theta_i)| <= (max_i |h_{i+1} - h_i|) * sum_{j=1}^{d/2} |S_j|

    The first factor depends on ``q`` and ``k`` only, the second on ``r``
    only. This function returns the second, divided by ``d/2``: the "relative
    upper bound" the paper plots against the relative distance. It starts at
    ``(d/2 + 1) / 2`` for ``r = 0`` and decays, with oscillations, as ``|r|``
    grows.

    It bounds the score; it does not make the score decay. For particular
    ``q`` and ``k`` (for instance both lying in the slowest pair) the score
    stays near its largest value over long distances.

    Parameters
    ----------
    distances : int or array_like
        Relative distances ``m - n`` in tokens: a 1-D array-like of finite real
        numbers, or a count ``n`` meaning ``0 .. n-1``.
    head_dim : int
        Width of one attention head; a positive even integer.
    base : float, optional
        Base of :func:`~posenc_helpers.rope_frequencies`, ``> 0``. Default 10000.

    Returns
    -------
    numpy.ndarray
        Shape ``(len(distances),)``, dtype float64; symmetric in the sign of
        the distance.

    Raises
    ------
    TypeError, ValueError
        If ``distances`` is not a count or a 1-D array of finite reals,
        ``head_dim`` is not a positive even integer or ``base <= 0``.

    References
    ----------
    .. [1] J. Su et al., "RoFormer: Enhanced Transformer with Rotary Position
       Embedding", Neurocomputing 568, 2024 (arXiv:2104.09864), section 3.4.3,
       equations (35)-(37) and figure 2.

    Examples
    --------
    At distance 0 every ``|S_j| = j``, so the value is the mean of ``1 .. d/2``:

    >>> rope_decay_bound([0.0], 8)
    array([2.5])

    It decays with the distance:

    >>> bound = rope_decay_bound(1000, 128)
    >>> bool(bound[0] > bound[100] > bound[999])
    True
    """
    r = as_positions(distances, "distances")
    head_dim = require_even_width(head_dim, "head_dim")
    base = require_positive_real(base, "base")
    theta = rope_frequencies(head_dim, base=base)
    partial_sums = np.cumsum(np.exp(1j * r[:, None] * theta[None, :]), axis=1)  # S_1 .. S_{d/2}
    return np.abs(partial_sums).mean(axis=1)


def rope_decay_scores(
    distances: int | ArrayLike,
    head_dim: int,
    vectors: Mapping[str, ArrayLike],
    *,
    base: float = 10000.0,
) -> dict[str, np.ndarray]:
    """Scores of ``q = k = v`` against the relative distance, each divided by its value at 0.

    For each vector ``v`` (interleaved layout) the query ``q = v`` sits at
    position ``r`` and the key ``k = v`` at position 0. Written as ``d/2``
    complex numbers ``v_i``, one per pair, every ``h_i = |v_i|**2`` is real, so
    the score is ``sum_i |v_i|**2 cos(r theta_i)``; divided by
    ``|v|**2``, its value at ``r = 0``, every curve starts at 1 and stays in
    ``[-1, 1]``. Whether it decays depends on ``v``: :func:`rope_decay_bound`
    bounds it, it does not force it down.

    Parameters
    ----------
    distances : int or array_like
        Relative distances ``m - n`` in tokens: a 1-D array-like of finite real
        numbers, or a count ``n`` meaning ``0 .. n-1``.
    head_dim : int
        Width of one attention head; a positive even integer.
    vectors : mapping of str to array_like
        Label and vector (shape ``(head_dim,)``, finite, not all zero) of each curve.
    base : float, optional
        Base of :func:`~posenc_helpers.rope_frequencies`, ``> 0``. Default 10000.

    Returns
    -------
    dict of str to numpy.ndarray
        For each label of ``vectors``, in their order, the scores, shape
        ``(len(distances),)``, dtype float64.

    Raises
    ------
    TypeError, ValueError
        If ``distances`` is not a count or a 1-D array of finite reals,
        ``head_dim`` is not a positive even integer, ``base <= 0``, or a vector
        has the wrong shape, is not finite or is all zeros.

    References
    ----------
    .. [1] J. Su et al., "RoFormer: Enhanced Transformer with Rotary Position
       Embedding", Neurocomputing 568, 2024 (arXiv:2104.09864), section 3.4.3.

    Examples
    --------
    A vector in pair 0 (``theta_0 = 1``) scores ``cos(r)``:

    >>> import numpy as np
    >>> scores = rope_decay_scores([0.0, np.pi / 2, np.pi], 4, {"pair 0": [1.0, 0.0, 0.0, 0.0]})
    >>> scores["pair 0"].round(12).tolist()
    [1.0, 0.0, -1.0]
    """
    r = as_positions(distances, "distances")
    head_dim = require_even_width(head_dim, "head_dim")
    base = require_positive_real(base, "base")
    weights = {}
    for name, vector in vectors.items():
        v = as_real_array(vector, f"vectors[{name!r}]").astype(np.float64)
        if v.shape != (head_dim,):
            raise ValueError(f"vectors[{name!r}] must have shape ({head_dim},), got {v.shape}")
        require_finite(v, f"vectors[{name!r}]")
        if not np.any(v):
            raise ValueError(f"vectors[{name!r}] must not be all zeros (its score at distance 0 is 0)")
        weights[name] = v[0::2] ** 2 + v[1::2] ** 2  # |v_i|**2 per pair
    cos = np.cos(np.multiply.outer(r, geometric_frequencies(head_dim, base)))  # head_dim, base checked above
    return {name: cos @ w / w.sum() for name, w in weights.items()}


def rope_slowest_pair_vector(head_dim: int, *, layout: str = "interleaved") -> np.ndarray:
    """A unit vector lying in the slowest pair of a RoPE head: its score does not decay.

    The slowest pair is the last, ``i = head_dim/2 - 1``, with the smallest
    ``theta_i``: features ``head_dim - 2`` and ``head_dim - 1`` in the
    interleaved layout, ``head_dim/2 - 1`` and ``head_dim - 1`` in the
    half-split one. The vector is 1 in the first of the two, 0 elsewhere.

    Parameters
    ----------
    head_dim : int
        Width of one attention head; a positive even integer.
    layout : {"interleaved", "half"}, optional
        Where the pairs sit. Default ``"interleaved"``.

    Returns
    -------
    numpy.ndarray
        Shape ``(head_dim,)``, dtype float64.

    Raises
    ------
    TypeError, ValueError
        If ``head_dim`` is not a positive even integer or ``layout`` is not a
        RoPE layout.

    Examples
    --------
    >>> rope_slowest_pair_vector(6).tolist()
    [0.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    >>> rope_slowest_pair_vector(6, layout="half").tolist()
    [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    """
    head_dim = require_even_width(head_dim, "head_dim")
    layout = require_choice(layout, "layout", ROPE_LAYOUTS)
    vector = np.zeros(head_dim)
    first, _ = _pair_indices(head_dim, layout)
    vector[first[-1]] = 1.0
    return vector
