"""Chapter 10's hand-built attention head that looks exactly ``phi`` tokens back.

Queries ``PE(i)``, keys ``M(phi) PE(j)`` (or, for RoPE, ``R(i) u`` and
``R(j) R(phi) u``), so that ``q_i . k_j = sum_p w_p cos(omega_p (i - j - phi))``
peaks at ``j = i - phi``. Because the score depends on ``delta = i - j - phi``
only, every query's softmax is a prefix of one sequence of scores
(:func:`offset_head_closed_form`); :func:`offset_head_profile` computes the same
weights from the queries and keys themselves, block by block, for sequences too
long for a full matrix.
"""

from __future__ import annotations

import numbers
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._validation import (
    as_real_array,
    describe_value,
    require_choice,
    require_count,
    require_even_width,
    require_finite,
    require_positive_real,
)
from .rope import apply_rope, rope_frequencies
from .sinusoidal import frequencies, shift_matrix, sinusoidal_encoding

__all__ = ["OffsetHeadProfile", "offset_score", "offset_head_closed_form", "offset_head_weights", "offset_head_profile"]

HEAD_KINDS = ("sinusoidal", "rope")
_MAX_FULL = 4096  # offset_head_weights builds a full (n, n) matrix: 4096**2 float64 = 134 MB
_MAX_PAIRS = 2_000_000_000  # offset_head_profile: about a minute of scoring


def _require_probe(probe: Any, d_model: int, kind: str) -> np.ndarray:
    if probe is None:
        unit = np.zeros(d_model)
        unit[0::2] = 1.0
        return unit
    if kind != "rope":
        raise ValueError("probe is only used by kind='rope'; leave it None for kind='sinusoidal'")
    array = as_real_array(probe, "probe").astype(np.float64)
    if array.shape != (d_model,):
        raise ValueError(f"probe must be 1-D with d_model = {d_model} entries, got shape {array.shape}")
    require_finite(array, "probe")
    if not np.any(array):
        raise ValueError("probe must not be all zeros (a zero query attends uniformly)")
    return array


def _head_args(
    offset: Any, d_model: Any, temperature: Any, kind: Any, base: Any, probe: Any
) -> tuple[int, int, float, str, float, np.ndarray]:
    offset = require_count(offset, "offset", minimum=0)
    d_model = require_even_width(d_model, "d_model")
    temperature = require_positive_real(temperature, "temperature")
    kind = require_choice(kind, "kind", HEAD_KINDS)
    base = require_positive_real(base, "base")
    probe = _require_probe(probe, d_model, kind)
    return offset, d_model, temperature, kind, base, probe


class _Head:
    """Queries and keys of the offset head for any positions, computed on demand."""

    def __init__(self, offset: int, d_model: int, kind: str, base: float, probe: np.ndarray) -> None:
        self.kind, self.base, self.d_model = kind, base, d_model
        if kind == "sinusoidal":
            self.shift = shift_matrix(float(offset), d_model, base=base)  # M(phi)
        else:
            self.probe = probe
            # R(phi) u: the probe turned forward by phi positions.
            self.shifted_probe = apply_rope(probe[None, :], [float(offset)], base=base)[0]

    def _rope(self, vector: np.ndarray, positions: np.ndarray) -> np.ndarray:
        return apply_rope(np.broadcast_to(vector, (positions.size, self.d_model)), positions, base=self.base)

    def queries(self, positions: np.ndarray) -> np.ndarray:
        if self.kind == "sinusoidal":
            return sinusoidal_encoding(positions, self.d_model, base=self.base)  # PE(i)
        return self._rope(self.probe, positions)  # R(i) u

    def keys(self, positions: np.ndarray) -> np.ndarray:
        if self.kind == "sinusoidal":
            # k_j = M(phi) PE(j); rows are row vectors, so PE @ M(phi).T
            return sinusoidal_encoding(positions, self.d_model, base=self.base) @ self.shift.T
        return self._rope(self.shifted_probe, positions)  # R(j) R(phi) u


def offset_score(
    delta: ArrayLike,
    d_model: int,
    *,
    kind: str = "sinusoidal",
    base: float = 10000.0,
    probe: ArrayLike | None = None,
) -> np.ndarray:
    """The offset head's score ``q_i . k_j`` as a function of ``delta = i - j - phi``.

    With ``q_i = PE(i)`` and ``k_j = M(phi) PE(j) = PE(j + phi)``::

        q_i . k_j = sum_k cos(omega_k * delta)

    and for RoPE, ``q_i = R(i) u`` and ``k_j = R(j) R(phi) u``::

        q_i . k_j = sum_p |u_p|^2 cos(theta_p * delta)

    where ``|u_p|^2`` is the squared length of pair ``p`` of the probe. Both
    are largest, ``sum_p w_p``, at ``delta = 0``, and for whole-number
    ``delta`` only there (``cos(delta) = 1`` needs ``delta`` to be a multiple
    of ``2 pi``, which no other integer is), provided pair 0 has weight.

    Parameters
    ----------
    delta : array_like
        Real offsets ``i - j - phi``, any shape.
    d_model : int
        Width of queries and keys, a positive even integer.
    kind : {"sinusoidal", "rope"}, optional
        Which head. Default ``"sinusoidal"``.
    base : float, optional
        Frequency base, ``> 0``. Default 10000.
    probe : array_like, optional
        RoPE only: the probe ``u``, shape ``(d_model,)``, not all zero.
        Default: ``(1, 0)`` in every pair, which gives the sinusoidal score.

    Returns
    -------
    numpy.ndarray
        Same shape as ``delta``, float64.

    Raises
    ------
    TypeError, ValueError
        If an argument is not allowed (non-finite ``delta``, odd ``d_model``,
        unknown ``kind``, a probe of the wrong shape, or a probe with
        ``kind="sinusoidal"``).

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017, section 3.5.
    .. [2] J. Su et al., "RoFormer: Enhanced Transformer with Rotary Position
       Embedding", Neurocomputing 568, 2024, section 3.4.

    Examples
    --------
    >>> import numpy as np
    >>> offset_score([0, 1], 2)   # one pair, omega = 1
    array([1.        , 0.54030231])
    >>> bool(np.allclose(offset_score([3.0], 8, kind="rope"), offset_score([3.0], 8)))
    True
    """
    d_model = require_even_width(d_model, "d_model")
    kind = require_choice(kind, "kind", HEAD_KINDS)
    base = require_positive_real(base, "base")
    u = _require_probe(probe, d_model, kind)
    values = as_real_array(delta, "delta").astype(np.float64)
    require_finite(values, "delta")
    if kind == "sinusoidal":
        omega, weight = frequencies(d_model, base=base), np.ones(d_model // 2)
    else:
        omega, weight = rope_frequencies(d_model, base=base), u[0::2] ** 2 + u[1::2] ** 2
    flat = values.reshape(-1)
    return (np.cos(flat[:, None] * omega[None, :]) @ weight).reshape(values.shape)


def offset_head_closed_form(
    scores_by_delta: ArrayLike, offset: int, temperature: float
) -> tuple[np.ndarray, np.ndarray]:
    """Weight on the key ``offset`` back, and the runner-up weight, for every query, in closed form.

    When the score depends only on ``delta = i - j - phi`` (as the offset head's
    does), query ``i`` sees the scores ``f(-phi), ..., f(i - phi)``, so its softmax
    denominator is a prefix sum of one sequence::

        a_i = exp(f(0) / tau) / sum_{m <= i} exp(f(m - phi) / tau)

    which costs ``O(n)`` for all ``n`` queries instead of ``O(n^2)``.
    :func:`offset_head_profile` computes the same numbers from the queries and
    keys themselves.

    Parameters
    ----------
    scores_by_delta : array_like
        ``f(delta)`` for ``delta = -offset, ..., n - 1 - offset``, a 1-D array of
        finite numbers with more than ``offset`` entries (for instance
        :func:`offset_score` of ``np.arange(-offset, n - offset)``).
    offset : int
        The look-back distance ``phi >= 0``.
    temperature : float
        The softmax temperature ``tau > 0``.

    Returns
    -------
    target_weight, runner_up_weight : numpy.ndarray
        Each of shape ``(n - offset,)``: for queries ``i = offset .. n - 1``, the
        weight on key ``i - offset`` and the largest weight on any other key.

    Raises
    ------
    TypeError, ValueError
        If ``scores_by_delta`` is not a 1-D array of finite numbers longer than
        ``offset``, ``offset`` is not an integer ``>= 0`` or ``temperature`` is not ``> 0``.

    Examples
    --------
    Three keys with scores 0, 1 (the target) and 0, temperature 1:

    >>> target, runner_up = offset_head_closed_form([0.0, 1.0, 0.0], 1, 1.0)
    >>> np.round(target, 4).tolist(), np.round(runner_up, 4).tolist()
    ([0.7311, 0.5761], [0.2689, 0.2119])
    """
    offset = require_count(offset, "offset")
    temperature = require_positive_real(temperature, "temperature")
    scores = as_real_array(scores_by_delta, "scores_by_delta").astype(np.float64)
    if scores.ndim != 1 or scores.size <= offset:
        raise ValueError(
            f"scores_by_delta must be 1-D with more than offset = {offset} entries, got shape {scores.shape}"
        )
    require_finite(scores, "scores_by_delta")
    factor = np.exp((scores - scores[offset]) / temperature)  # relative to the target's score
    denominator = np.cumsum(factor)[offset:]  # queries offset .. n - 1
    before = factor[:offset].max() if offset else 0.0
    after = np.concatenate([[0.0], np.maximum.accumulate(factor[offset + 1 :])])
    runner_up = np.maximum(before, after[: denominator.size])
    return 1.0 / denominator, runner_up / denominator


def offset_head_weights(
    seq_len: int,
    offset: int,
    d_model: int,
    *,
    temperature: float = 1.0,
    kind: str = "sinusoidal",
    base: float = 10000.0,
    probe: ArrayLike | None = None,
) -> np.ndarray:
    """Causal attention weights of the hand-built head that looks ``offset`` tokens back.

    Queries ``q_i = PE(i)`` and keys ``k_j = M(phi) PE(j)`` (``kind="sinusoidal"``)
    or ``q_i = R(i) u`` and ``k_j = R(j) R(phi) u`` (``kind="rope"``); logits
    ``q_i . k_j / temperature`` with keys after the query masked; a softmax
    over each row. Row ``i >= phi`` peaks at key ``j = i - phi``.

    Parameters
    ----------
    seq_len : int
        Number of tokens, ``1 <= seq_len <= 4096`` (the full matrix is
        returned; use :func:`offset_head_profile` for longer sequences).
    offset : int
        ``phi``, how many tokens back to look, ``>= 0``.
    d_model : int
        Width of queries and keys, a positive even integer.
    temperature : float, optional
        Divides the logits, ``> 0``; smaller is sharper. Default 1.
    kind : {"sinusoidal", "rope"}, optional
        Which construction. Default ``"sinusoidal"``.
    base : float, optional
        Frequency base, ``> 0``. Default 10000.
    probe : array_like, optional
        RoPE only, see :func:`offset_score`.

    Returns
    -------
    numpy.ndarray
        Shape ``(seq_len, seq_len)``; row ``i`` is query ``i``, zero above the
        diagonal, each row summing to 1.

    Raises
    ------
    TypeError, ValueError
        If an argument is not allowed.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017,
       section 3.5 ("the model [can] easily learn to attend by relative positions").

    Examples
    --------
    >>> import numpy as np
    >>> w = offset_head_weights(16, 2, 16, temperature=0.125)
    >>> int(w[10].argmax()), bool(w[10, 8] > 0.9)
    (8, True)
    """
    seq_len = require_count(seq_len, "seq_len", minimum=1)
    if seq_len > _MAX_FULL:
        raise ValueError(
            f"seq_len must be <= {_MAX_FULL} for the full weight matrix, got {seq_len}; "
            "use offset_head_profile for longer sequences"
        )
    offset, d_model, temperature, kind, base, probe = _head_args(offset, d_model, temperature, kind, base, probe)
    head = _Head(offset, d_model, kind, base, probe)
    positions = np.arange(seq_len, dtype=np.float64)
    logits = head.queries(positions) @ head.keys(positions).T / temperature
    logits[np.triu_indices(seq_len, k=1)] = -np.inf
    logits -= logits.max(axis=1, keepdims=True)
    weights = np.exp(logits)
    return weights / weights.sum(axis=1, keepdims=True)


class OffsetHeadProfile(NamedTuple):
    """Per-query summary of the offset head, from :func:`offset_head_profile`.

    Attributes
    ----------
    queries : numpy.ndarray
        The query positions ``i`` (int64).
    argmax : numpy.ndarray
        The key each query weights most (int64; the first on a tie).
    target_weight : numpy.ndarray
        The weight on key ``i - phi``; NaN where ``i < phi`` (no such key).
    runner_up_weight : numpy.ndarray
        The second-largest weight of the row (0 for a row with one key).

    Examples
    --------
    >>> p = offset_head_profile(8, 1, 8, temperature=0.25)
    >>> p._fields
    ('queries', 'argmax', 'target_weight', 'runner_up_weight')
    """

    queries: np.ndarray
    argmax: np.ndarray
    target_weight: np.ndarray
    runner_up_weight: np.ndarray


def _query_positions(queries: Any, seq_len: int) -> np.ndarray:
    if queries is None:
        return np.arange(seq_len, dtype=np.int64)
    if isinstance(queries, (str, bytes, numbers.Number)):
        raise TypeError(f"queries must be a 1-D array-like of query positions or None, got {describe_value(queries)}")
    array = as_real_array(queries, "queries")
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"queries must be a non-empty 1-D array of positions, got shape {array.shape}")
    require_finite(array, "queries")
    if np.any(array != np.round(array)):
        raise ValueError("queries must be whole-number positions")
    index = array.astype(np.int64)
    if index.min() < 0 or index.max() >= seq_len:
        raise ValueError(f"queries must lie in [0, seq_len - 1] = [0, {seq_len - 1}]")
    if np.any(np.diff(index) <= 0):
        raise ValueError("queries must be strictly increasing")
    return index


def offset_head_profile(
    seq_len: int,
    offset: int,
    d_model: int,
    *,
    temperature: float = 1.0,
    kind: str = "sinusoidal",
    base: float = 10000.0,
    probe: ArrayLike | None = None,
    queries: ArrayLike | None = None,
    block_size: int = 1024,
) -> OffsetHeadProfile:
    """Run the offset head on a long sequence and summarise every query's row.

    Computes the same logits as :func:`offset_head_weights` (real queries
    ``q_i`` and keys ``k_j``, their dot products, the causal mask) but never
    holds the ``seq_len x seq_len`` matrix: keys are made and scored in blocks,
    and each row's softmax is accumulated block by block (running maximum and
    running sum, as in streaming softmax). Memory is ``O(block_size**2 +
    len(queries))``.

    Parameters
    ----------
    seq_len : int
        Number of tokens, ``>= 1``.
    offset : int
        ``phi``, ``>= 0``.
    d_model : int
        Width, a positive even integer.
    temperature : float, optional
        Divides the logits, ``> 0``. Default 1.
    kind : {"sinusoidal", "rope"}, optional
        Which construction. Default ``"sinusoidal"``.
    base : float, optional
        Frequency base, ``> 0``. Default 10000.
    probe : array_like, optional
        RoPE only, see :func:`offset_score`.
    queries : array_like of int, optional
        Strictly increasing query positions in ``[0, seq_len)`` to summarise
        (default: all). Each still attends to every key ``j <= i``; at most
        two billion (query, key) pairs in all.
    block_size : int, optional
        Rows and keys per block, ``>= 2``. Default 1024.

    Returns
    -------
    OffsetHeadProfile
        ``(queries, argmax, target_weight, runner_up_weight)``.

    Raises
    ------
    TypeError, ValueError
        If an argument is not allowed.

    References
    ----------
    .. [1] M. Milakov, N. Gimelshein, "Online normalizer calculation for
       softmax", arXiv:1805.02867, 2018 (the running maximum and sum).

    Examples
    --------
    >>> import numpy as np
    >>> p = offset_head_profile(3000, 5, 32, temperature=0.125, block_size=256)
    >>> bool(np.all(p.argmax[5:] == p.queries[5:] - 5)), bool(np.nanmin(p.target_weight) > 0.95)
    (True, True)
    """
    seq_len = require_count(seq_len, "seq_len", minimum=1)
    offset, d_model, temperature, kind, base, probe = _head_args(offset, d_model, temperature, kind, base, probe)
    block = require_count(block_size, "block_size", minimum=2)
    q_pos = _query_positions(queries, seq_len)
    pairs = int(np.sum(q_pos + 1))  # (query, key) pairs scored under the causal mask
    if pairs > _MAX_PAIRS:
        raise ValueError(
            f"queries would score {pairs:,} (query, key) pairs, more than {_MAX_PAIRS:,}; "
            "pass a subset of query positions with queries=[...]"
        )
    head = _Head(offset, d_model, kind, base, probe)

    n = q_pos.size
    run_max = np.full(n, -np.inf)
    run_sum = np.zeros(n)
    top1 = np.full(n, -np.inf)
    top1_index = np.zeros(n, dtype=np.int64)
    top2 = np.full(n, -np.inf)
    target_logit = np.full(n, np.nan)
    target = q_pos - offset

    for q_start in range(0, n, block):
        rows = slice(q_start, min(q_start + block, n))
        qp = q_pos[rows]
        qv = head.queries(qp.astype(np.float64))
        last_key = int(qp[-1])
        for k_start in range(0, last_key + 1, block):
            kp = np.arange(k_start, min(k_start + block, last_key + 1), dtype=np.int64)
            logits = qv @ head.keys(kp.astype(np.float64)).T
            logits /= temperature
            if kp[-1] > qp[0]:  # the block crosses the diagonal: mask keys after the query
                logits[kp[None, :] > qp[:, None]] = -np.inf
            local_rows = np.arange(qp.size)
            block_arg = logits.argmax(axis=1)
            block_max = logits[local_rows, block_arg]
            # The logit of the target key, if it lies in this block.
            tgt = target[rows]
            inside = (tgt >= k_start) & (tgt < k_start + kp.size)
            if inside.any():
                local = np.flatnonzero(inside)
                target_logit[q_start + local] = logits[local, tgt[local] - k_start]
            # Running top two: the block's second largest is its maximum once the top is removed.
            logits[local_rows, block_arg] = -np.inf
            block_second = logits.max(axis=1)
            logits[local_rows, block_arg] = block_max
            old1, old2 = top1[rows], top2[rows]
            better = block_max > old1
            top2[rows] = np.where(better, np.maximum(old1, block_second), np.maximum(old2, block_max))
            top1[rows] = np.where(better, block_max, old1)
            top1_index[rows] = np.where(better, kp[block_arg], top1_index[rows])
            # Running softmax normaliser: rescale the old sum to the new maximum.
            new_max = np.maximum(run_max[rows], block_max)
            logits -= new_max[:, None]
            np.exp(logits, out=logits)
            run_sum[rows] = run_sum[rows] * np.exp(run_max[rows] - new_max) + logits.sum(axis=1)
            run_max[rows] = new_max

    target_weight = np.exp(target_logit - run_max) / run_sum
    with np.errstate(invalid="ignore"):
        runner_up = np.where(np.isfinite(top2), np.exp(top2 - run_max) / run_sum, 0.0)
    return OffsetHeadProfile(q_pos, top1_index, target_weight, runner_up)
