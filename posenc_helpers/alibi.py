"""Attention with Linear Biases (ALiBi) of Press, Smith and Lewis (2022).

ALiBi adds nothing to the token embeddings. Each head ``h`` adds the bias
``-m_h * (i - j)`` to the logit of query ``i`` attending to key ``j``: the
further back a key is, the larger the penalty, with a head-specific slope.
"""

from __future__ import annotations

import numpy as np

from ._validation import require_count

__all__ = ["alibi_slopes", "alibi_bias"]


def _power_of_two_slopes(n: int) -> np.ndarray:
    """Slopes ``2**(-8h/n)`` for ``h = 1 .. n`` (``n`` a power of two)."""
    head = np.arange(1, n + 1, dtype=np.float64)
    return 2.0 ** (-8.0 * head / n)


def alibi_slopes(n_heads: int) -> np.ndarray:
    """ALiBi head slopes ``m_h``, in the order of the paper's reference code.

    For ``n`` a power of two the slopes are the geometric sequence
    ``2**(-8h/n)``, ``h = 1 .. n``: for 8 heads ``1/2, 1/4, ..., 1/256``. For
    other ``n`` the reference code takes the ``p`` slopes of the largest power
    of two ``p < n`` and appends every other slope of ``2p`` heads (the 1st,
    3rd, 5th, ...) until there are ``n``. Those extra slopes interleave with
    the first ``p``, so the list is then not sorted.

    Parameters
    ----------
    n_heads : int
        Number of attention heads, ``>= 1``.

    Returns
    -------
    numpy.ndarray
        Shape ``(n_heads,)``, dtype float64, all in ``(0, 1)``.

    Raises
    ------
    TypeError, ValueError
        If ``n_heads`` is not an integer ``>= 1``.

    References
    ----------
    .. [1] O. Press, N. A. Smith, M. Lewis, "Train Short, Test Long: Attention
       with Linear Biases Enables Input Length Extrapolation", ICLR 2022,
       section 3 and the reference implementation's ``get_slopes``.

    Examples
    --------
    >>> alibi_slopes(8) * 256
    array([128.,  64.,  32.,  16.,   8.,   4.,   2.,   1.])
    >>> import numpy as np
    >>> bool(np.allclose(alibi_slopes(12)[8:], 2.0 ** -np.array([0.5, 1.5, 2.5, 3.5])))
    True
    """
    n_heads = require_count(n_heads, "n_heads", minimum=1)
    if n_heads & (n_heads - 1) == 0:
        return _power_of_two_slopes(n_heads)
    lower = 1 << (n_heads.bit_length() - 1)
    extra = _power_of_two_slopes(2 * lower)[0::2][: n_heads - lower]
    return np.concatenate([_power_of_two_slopes(lower), extra])


def alibi_bias(n_heads: int, seq_len: int, *, causal: bool = True) -> np.ndarray:
    """The ALiBi bias added to the attention logits of every head.

    ``bias[h, i, j] = -m_h * (i - j)`` for a query at position ``i`` and a key
    at position ``j <= i``. With ``causal=True`` the future (``j > i``) is
    masked with ``-inf``; with ``causal=False`` the bias is the symmetric
    ``-m_h * |i - j|``.

    Parameters
    ----------
    n_heads : int
        Number of heads, ``>= 1``; slopes from :func:`alibi_slopes`.
    seq_len : int
        Sequence length, ``>= 0``. Any length works: ALiBi has no table.
    causal : bool, optional
        Mask future keys with ``-inf``. Default True.

    Returns
    -------
    numpy.ndarray
        Shape ``(n_heads, seq_len, seq_len)``, dtype float64.

    Raises
    ------
    TypeError, ValueError
        If ``n_heads`` is not an integer ``>= 1``, ``seq_len`` not an integer
        ``>= 0`` or ``causal`` not a bool.

    References
    ----------
    .. [1] O. Press, N. A. Smith, M. Lewis, "Train Short, Test Long: Attention
       with Linear Biases Enables Input Length Extrapolation", ICLR 2022, figure 3.

    Examples
    --------
    With four heads the first slope is 1/4:

    >>> alibi_bias(4, 3)[0]
    array([[ 0.  ,  -inf,  -inf],
           [-0.25,  0.  ,  -inf],
           [-0.5 , -0.25,  0.  ]])
    >>> alibi_bias(4, 3, causal=False)[0]
    array([[ 0.  , -0.25, -0.5 ],
           [-0.25,  0.  , -0.25],
           [-0.5 , -0.25,  0.  ]])
    """
    slopes = alibi_slopes(n_heads)
    seq_len = require_count(seq_len, "seq_len")
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"causal must be True or False, got {type(causal).__name__} {causal!r}")
    position = np.arange(seq_len, dtype=np.float64)
    # j - i rather than -(i - j): no negative zeros on the diagonal.
    key_minus_query = position[None, :] - position[:, None]
    if causal:
        bias = slopes[:, None, None] * key_minus_query[None, :, :]
        bias[:, key_minus_query > 0] = -np.inf
        return bias
    return slopes[:, None, None] * (0.0 - np.abs(key_minus_query))[None, :, :]


def alibi_bias_shifted(n_heads: int, seq_len: int, *, causal: bool = True) -> np.ndarray:
    """The common implementation of ALiBi: the bias ``m_h * j``, the same for every query.

    Many implementations, including the paper's reference code, add
    ``m_h * j`` (one row, broadcast over all queries) instead of
    ``-m_h * (i - j)``. The two differ by ``-m_h * i``, a constant on each
    row, and softmax ignores a constant added to a row, so with the causal
    mask they give identical attention. Without the mask they do not describe
    the same model: ``m_h * j`` then equals the unmasked ``-m_h * (i - j)`` up
    to that row constant, a bias that *rewards* keys after the query, and it is
    not the symmetric ``-m_h * |i - j|`` of :func:`alibi_bias` with
    ``causal=False``.

    Parameters
    ----------
    n_heads : int
        Number of heads, ``>= 1``; slopes from :func:`alibi_slopes`.
    seq_len : int
        Sequence length, ``>= 0``.
    causal : bool, optional
        Mask future keys (``j > i``) with ``-inf``. Default True.

    Returns
    -------
    numpy.ndarray
        Shape ``(n_heads, seq_len, seq_len)``, dtype float64, with
        ``bias[h, i, j] = m_h * j`` (or ``-inf`` where masked).

    Raises
    ------
    TypeError, ValueError
        If ``n_heads`` is not an integer ``>= 1``, ``seq_len`` not an integer
        ``>= 0`` or ``causal`` not a bool.

    References
    ----------
    .. [1] O. Press, N. A. Smith, M. Lewis, "Train Short, Test Long: Attention
       with Linear Biases Enables Input Length Extrapolation", ICLR 2022; the
       reference implementation builds ``slopes * arange(max_positions)`` and
       adds it to the causal mask.

    Examples
    --------
    With four heads the first slope is 1/4; each row is ``[0, 1/4, 2/4]``, masked:

    >>> alibi_bias_shifted(4, 3)[0]
    array([[0.  , -inf, -inf],
           [0.  , 0.25, -inf],
           [0.  , 0.25, 0.5 ]])
    >>> alibi_bias_shifted(4, 3, causal=False)[0]
    array([[0.  , 0.25, 0.5 ],
           [0.  , 0.25, 0.5 ],
           [0.  , 0.25, 0.5 ]])
    """
    slopes = alibi_slopes(n_heads)
    seq_len = require_count(seq_len, "seq_len")
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"causal must be True or False, got {type(causal).__name__} {causal!r}")
    key = np.arange(seq_len, dtype=np.float64)
    bias = np.broadcast_to(slopes[:, None, None] * key[None, None, :], (slopes.size, seq_len, seq_len)).copy()
    if causal:
        bias[:, key[None, :] > key[:, None]] = -np.inf
    return bias


__all__ += ["alibi_bias_shifted"]
