"""Learned positions: absolute tables (BERT, GPT-2) and Shaw et al.'s clipped relative vectors.

A learned *absolute* encoding is a parameter matrix with one row per position,
looked up by index; it has no row for a position at or beyond its length
``max_len``. A learned *relative* encoding (Shaw et al. 2018) instead learns
one vector per clipped distance ``clip(j - i, -k, k)`` between a query ``i``
and a key ``j``, so ``2k + 1`` vectors serve sequences of any length.

Everything here is pure numpy. Random tables stand in for trained ones:
training changes the values, not the shapes or the limits studied here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_integer_array, as_real_array, require_count, require_finite, require_positive_real

__all__ = [
    "learned_position_table",
    "learned_encoding",
    "clipped_relative_positions",
    "shaw_relative_index",
    "shaw_attention_logits",
]


def learned_position_table(max_len: int, d_model: int, *, seed: int = 0, scale: float = 0.02) -> np.ndarray:
    """A learned absolute position table at initialisation: ``max_len`` rows of ``d_model`` values.

    Models with learned absolute positions (BERT, GPT-2) keep a parameter
    matrix ``P`` of shape ``(max_len, d_model)`` and add row ``P[t]`` to the
    token embedding at position ``t``. Before training the rows are drawn
    i.i.d. from a normal distribution with a small standard deviation (BERT
    uses 0.02, truncated at two standard deviations; OpenAI's GPT-2 code
    0.01). This function returns such an initial table, drawn from
    ``N(0, scale**2)`` with ``numpy.random.default_rng(seed)``. Training
    changes the values, but not the shape: a trained table still has exactly
    ``max_len`` rows, so it still cannot encode position ``max_len`` or
    beyond.

    Parameters
    ----------
    max_len : int
        Number of positions the table can encode, ``>= 1`` (BERT: 512,
        GPT-2: 1024).
    d_model : int
        Width of each row, ``>= 1``.
    seed : int, optional
        Seed of the random generator, ``>= 0``. Default 0. The same seed
        always gives the same table.
    scale : float, optional
        Standard deviation of the entries, ``> 0``. Default 0.02.

    Returns
    -------
    numpy.ndarray
        Shape ``(max_len, d_model)``, dtype float64.

    Raises
    ------
    TypeError
        If ``max_len``, ``d_model`` or ``seed`` is not an integer, or
        ``scale`` is not a real number.
    ValueError
        If ``max_len`` or ``d_model`` is below 1, ``seed`` is negative, or
        ``scale`` is not a finite number ``> 0``.

    See Also
    --------
    learned_encoding : look positions up in the table.

    References
    ----------
    .. [1] J. Devlin et al., "BERT: Pre-training of Deep Bidirectional
       Transformers for Language Understanding", NAACL 2019 (learned position
       embeddings, ``max_position_embeddings = 512``, ``initializer_range = 0.02``).
    .. [2] A. Radford et al., "Language Models are Unsupervised Multitask
       Learners", OpenAI 2019 (GPT-2: learned positions, context of 1024 tokens).

    Examples
    --------
    >>> import numpy as np
    >>> table = learned_position_table(512, 64)
    >>> table.shape, table.dtype
    ((512, 64), dtype('float64'))
    >>> bool(np.array_equal(table, learned_position_table(512, 64)))
    True
    >>> bool(abs(table.std() - 0.02) < 0.001)
    True
    """
    max_len = require_count(max_len, "max_len", minimum=1)
    d_model = require_count(d_model, "d_model", minimum=1)
    seed = require_count(seed, "seed", minimum=0)
    scale = require_positive_real(scale, "scale")
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, scale, size=(max_len, d_model))


def learned_encoding(positions: int | ArrayLike, table: ArrayLike) -> np.ndarray:
    """Look positions up in a learned absolute table: row ``table[t]`` for each position ``t``.

    Unlike plain numpy indexing, positions outside ``0 .. max_len - 1`` are
    errors: numpy raises for ``t >= max_len`` but silently wraps a negative
    ``t`` to a row from the end, which would hand the last position's vector
    to position ``-1``.

    Parameters
    ----------
    positions : int or array_like of int
        Position(s) to look up, any shape; floats are accepted when they are
        whole numbers (as from :func:`integer_positions`).
    table : array_like
        The table, shape ``(max_len, d_model)`` with ``max_len >= 1``, finite
        real values (for example from :func:`learned_position_table`).

    Returns
    -------
    numpy.ndarray
        Shape ``positions.shape + (d_model,)``, dtype float64 (a copy).

    Raises
    ------
    IndexError
        If a position is negative or ``>= max_len``: the table has no row for
        it. The message names ``positions``, the offending value and ``max_len``.
    TypeError
        If ``positions`` does not hold integers (or whole-number floats), or
        ``table`` does not hold real numbers.
    ValueError
        If a position is not a whole number or not finite, or ``table`` is not
        a finite 2-D array with at least one row.

    References
    ----------
    .. [1] J. Devlin et al., "BERT: Pre-training of Deep Bidirectional
       Transformers for Language Understanding", NAACL 2019.
    .. [2] A. Radford et al., "Language Models are Unsupervised Multitask
       Learners", OpenAI 2019.

    Examples
    --------
    >>> import numpy as np
    >>> table = np.arange(12.0).reshape(4, 3)   # max_len = 4, d_model = 3
    >>> learned_encoding([0, 3], table)
    array([[ 0.,  1.,  2.],
           [ 9., 10., 11.]])
    >>> learned_encoding(4, table)
    Traceback (most recent call last):
    ...
    IndexError: position 4 has no row: positions must lie in [0, max_len) with max_len = 4
    """
    index = as_integer_array(positions, "positions")
    array = as_real_array(table, "table")
    if array.ndim != 2:
        raise ValueError(f"table must be 2-D (max_len x d_model), got shape {array.shape}")
    max_len = array.shape[0]
    if max_len < 1:
        raise ValueError("table must have at least one row (max_len >= 1)")
    require_finite(array, "table")
    outside = (index < 0) | (index >= max_len)
    if outside.any():
        bad = int(index.ravel()[int(np.flatnonzero(outside.ravel())[0])])
        note = " (no negative positions)" if bad < 0 else ""
        raise IndexError(
            f"position {bad} has no row: positions must lie in [0, max_len) with max_len = {max_len}{note}"
        )
    return array.astype(np.float64)[index]


def clipped_relative_positions(query_len: int, key_len: int, max_distance: int) -> np.ndarray:
    """Shaw et al.'s clipped relative distances ``clip(j - i, -k, k)`` for every query ``i`` and key ``j``.

    Query ``i`` and key ``j`` are positions ``0 .. query_len - 1`` and
    ``0 .. key_len - 1`` of the same sequence. Entry ``(i, j)`` says how far
    the key lies after the query (negative: before it), clipped to at most
    ``k = max_distance`` either way. The matrix is constant along every
    diagonal (Toeplitz): it depends on ``j - i`` only, never on where the pair
    sits in the sequence.

    Parameters
    ----------
    query_len : int
        Number of queries, ``>= 0``.
    key_len : int
        Number of keys, ``>= 0``.
    max_distance : int
        The clipping distance ``k``, ``>= 1``.

    Returns
    -------
    numpy.ndarray
        Shape ``(query_len, key_len)``, dtype int64, values in ``[-k, k]``.

    Raises
    ------
    TypeError
        If an argument is not an integer.
    ValueError
        If a length is negative or ``max_distance < 1``.

    See Also
    --------
    shaw_relative_index : the same distances shifted to ``0 .. 2k`` to index
        a table of ``2k + 1`` learned vectors.

    References
    ----------
    .. [1] P. Shaw, J. Uszkoreit, A. Vaswani, "Self-Attention with Relative
       Position Representations", NAACL 2018, section 3.2.

    Examples
    --------
    >>> clipped_relative_positions(3, 5, 2)
    array([[ 0,  1,  2,  2,  2],
           [-1,  0,  1,  2,  2],
           [-2, -1,  0,  1,  2]])
    """
    query_len = require_count(query_len, "query_len")
    key_len = require_count(key_len, "key_len")
    k = require_count(max_distance, "max_distance", minimum=1)
    distance = np.arange(key_len, dtype=np.int64)[None, :] - np.arange(query_len, dtype=np.int64)[:, None]
    return np.clip(distance, -k, k)


def shaw_relative_index(query_len: int, key_len: int, max_distance: int) -> np.ndarray:
    """Row of Shaw et al.'s relative table used by each (query, key) pair: ``clip(j - i, -k, k) + k``.

    Shaw et al. learn ``2k + 1`` vectors ``w_{-k}, ..., w_k``. Stored as the
    rows ``0 .. 2k`` of one array, the vector for the pair ``(i, j)`` is row
    ``clip(j - i, -k, k) + k``: row ``k`` is distance 0, row 0 every key ``k``
    or more tokens before the query, row ``2k`` every key ``k`` or more
    tokens after it.

    Parameters
    ----------
    query_len : int
        Number of queries, ``>= 0``.
    key_len : int
        Number of keys, ``>= 0``.
    max_distance : int
        The clipping distance ``k``, ``>= 1``.

    Returns
    -------
    numpy.ndarray
        Shape ``(query_len, key_len)``, dtype int64, values in ``[0, 2k]``.

    Raises
    ------
    TypeError
        If an argument is not an integer.
    ValueError
        If a length is negative or ``max_distance < 1``.

    See Also
    --------
    clipped_relative_positions : the signed distances themselves.

    References
    ----------
    .. [1] P. Shaw, J. Uszkoreit, A. Vaswani, "Self-Attention with Relative
       Position Representations", NAACL 2018, section 3.2.

    Examples
    --------
    >>> shaw_relative_index(3, 5, 2)
    array([[2, 3, 4, 4, 4],
           [1, 2, 3, 4, 4],
           [0, 1, 2, 3, 4]])
    """
    k = require_count(max_distance, "max_distance", minimum=1)
    return clipped_relative_positions(query_len, key_len, k) + k


def _as_matrix(value: Any, name: str) -> np.ndarray:
    array = as_real_array(value, name)
    if array.ndim != 2:
        raise ValueError(f"{name} must be 2-D (rows x features), got shape {array.shape}")
    array = array.astype(np.float64)
    require_finite(array, name)
    return array


def shaw_attention_logits(queries: ArrayLike, keys: ArrayLike, relative_keys: ArrayLike) -> np.ndarray:
    """Attention logits with Shaw et al.'s relative key vectors, ``q_i . (k_j + a_ij) / sqrt(d)``.

    With ``a_ij = relative_keys[clip(j - i, -k, k) + k]`` (one learned vector
    per clipped distance, shared by every pair at that distance), the logit
    of query ``i`` for key ``j`` is

    ``e_ij = q_i . (k_j + a_ij) / sqrt(d)``,

    where ``q_i = x_i W_Q`` and ``k_j = x_j W_K`` are the projected rows and
    ``d`` their width. Computed without the ``(n_q, n_k, d)`` array of
    ``a_ij``: the products ``q_i . w_r`` for the ``2k + 1`` table rows are
    formed once and gathered.

    Parameters
    ----------
    queries : array_like
        Shape ``(n_q, d)``: query ``i`` at position ``i``.
    keys : array_like
        Shape ``(n_k, d)``: key ``j`` at position ``j``.
    relative_keys : array_like
        Shape ``(2k + 1, d)`` with ``k >= 1``: row ``r`` is the vector for
        the clipped distance ``r - k``.

    Returns
    -------
    numpy.ndarray
        Shape ``(n_q, n_k)``, the logits before the softmax.

    Raises
    ------
    TypeError
        If an argument does not hold real numbers.
    ValueError
        If an argument is not a finite 2-D array, the widths differ,
        ``relative_keys`` has an even number of rows or fewer than 3, or
        ``d == 0``.

    References
    ----------
    .. [1] P. Shaw, J. Uszkoreit, A. Vaswani, "Self-Attention with Relative
       Position Representations", NAACL 2018, equations (4) and (5).

    Examples
    --------
    With zero relative vectors the logits are ordinary scaled dot products:

    >>> import numpy as np
    >>> q = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]])
    >>> shaw_attention_logits(q, q, np.zeros((3, 4)))
    array([[0.5, 0. ],
           [0. , 2. ]])

    A vector for distance +1 only (row ``k + 1 = 2``) changes the logit of
    query 0 for key 1 only:

    >>> table = np.zeros((3, 4)); table[2, 0] = 4.0
    >>> shaw_attention_logits(q, q, table)
    array([[0.5, 2. ],
           [0. , 2. ]])
    """
    q = _as_matrix(queries, "queries")
    k_mat = _as_matrix(keys, "keys")
    table = _as_matrix(relative_keys, "relative_keys")
    d = q.shape[1]
    if d == 0:
        raise ValueError("queries must have at least one feature (d >= 1)")
    if k_mat.shape[1] != d or table.shape[1] != d:
        raise ValueError(
            f"queries, keys and relative_keys must have the same width d; got {d}, "
            f"{k_mat.shape[1]} and {table.shape[1]}"
        )
    rows = table.shape[0]
    if rows < 3 or rows % 2 == 0:
        raise ValueError(f"relative_keys must have 2k + 1 rows with k >= 1 (an odd number, at least 3), got {rows}")
    index = shaw_relative_index(q.shape[0], k_mat.shape[0], (rows - 1) // 2)
    content = q @ k_mat.T
    relative = np.take_along_axis(q @ table.T, index, axis=1) if index.size else np.zeros(index.shape)
    return (content + relative) / np.sqrt(d)
