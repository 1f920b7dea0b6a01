"""Checks for chapter 06: Shaw et al.'s clipped distances and T5's relative-position buckets."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from .._validation import describe_value, require_count
from ..learned import clipped_relative_positions
from ..relative import t5_relative_bucket
from ._compare import compare_arrays
from ._core import CheckResult, is_placeholder, not_attempted, passed

__all__ = ["check_clipped_distances", "check_t5_buckets"]


def _clipped(query_len: int, key_len: int, k: int) -> tuple[np.ndarray, list[tuple[np.ndarray, str]]]:
    """The clipped distances, and the matrices that named mistakes give."""
    expected = clipped_relative_positions(query_len, key_len, k).astype(np.float64)
    raw = (np.arange(key_len)[None, :] - np.arange(query_len)[:, None]).astype(np.float64)
    return expected, [
        (
            -expected,
            "the signs are flipped: you computed i - j. The distance is key minus "
            "query, j - i, so a key to the right of the query is positive.",
        ),
        (
            raw,
            "the distances are not clipped: anything beyond k tokens either way must become exactly -k or k (np.clip).",
        ),
        (-raw, "you computed i - j and did not clip: use j - i (key minus query), then clip to [-k, k]."),
        (
            expected + k,
            "that is the row index into the table of 2k + 1 vectors (distance "
            "+ k, from 0 to 2k); the exercise asks for the signed distance.",
        ),
        (np.clip(raw, -(k - 1), k - 1), "you clipped at k - 1; the largest distance kept is k itself."),
        (np.clip(raw, -(k + 1), k + 1), "you clipped at k + 1; the largest distance kept is k."),
    ]


def check_clipped_distances(answer: Any, query_len: int, key_len: int, max_distance: int) -> CheckResult:
    """Check the matrix of clipped relative distances of Shaw et al.

    Entry ``(i, j)`` belongs to query ``i`` (row) and key ``j`` (column), both
    counted from position 0 of the same sequence, and holds their clipped
    relative distance as chapter 06 defines it, with the clipping distance
    ``k = max_distance``. Named mistakes: the sign flipped, no clipping (with
    either sign), the row index into the table of ``2k + 1`` vectors instead
    of the distance, and clipping at ``k - 1`` or ``k + 1``.

    Parameters
    ----------
    answer : array_like or None
        The student's ``(query_len, key_len)`` matrix (``None`` or ``...``
        while not attempted).
    query_len, key_len : int
        Numbers of queries and keys, each ``>= 1``.
    max_distance : int
        The clipping distance ``k``, ``>= 1``.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the matrix is wrong; the message says where and hints at the
        common mistakes (sign, clipping, table index), without the answer.
    TypeError, ValueError
        If a size is not an integer ``>= 1``.

    References
    ----------
    .. [1] P. Shaw, J. Uszkoreit, A. Vaswani, "Self-Attention with Relative
       Position Representations", NAACL 2018, section 3.2.

    Examples
    --------
    >>> check_clipped_distances(None, query_len=2, key_len=3, max_distance=1)
    Not attempted yet.
    Replace the placeholder with your (query_len, key_len) matrix of clipped distances, then run the cell again.
    >>> check_clipped_distances([[0, 0, 0]], query_len=2, key_len=3, max_distance=1)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: clipped should be the 2 x 3 matrix of clipped relative distances
    with k = 1, of shape (2, 3); yours has shape (1, 3).
    """
    query_len = require_count(query_len, "query_len", minimum=1)
    key_len = require_count(key_len, "key_len", minimum=1)
    k = require_count(max_distance, "max_distance", minimum=1)
    if is_placeholder(answer):
        return not_attempted("your (query_len, key_len) matrix of clipped distances")
    expected, mistakes = _clipped(query_len, key_len, k)
    compare_arrays(
        answer,
        expected,
        name="clipped",
        description=f"the {query_len} x {key_len} matrix of clipped relative distances with k = {k}",
        axes=("query i", "key j"),
        atol=1e-9,
        rtol=0.0,
        known_mistakes=mistakes,
    )
    return passed("entry (i, j) is clip(j - i, -k, k), the same along every diagonal.", check="check_clipped_distances")


def _as_key_positions(value: Any) -> np.ndarray:
    if isinstance(value, (str, bytes, numbers.Number)):
        raise TypeError(f"key_positions must be a 1-D sequence of integers, got {describe_value(value)}")
    array = np.asarray(value)
    if array.size == 0:
        raise ValueError(f"key_positions must be a non-empty 1-D sequence, got shape {array.shape}")
    if array.dtype == bool or not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"key_positions must hold integers (token positions), got dtype {array.dtype}")
    if array.ndim != 1:
        raise ValueError(f"key_positions must be a non-empty 1-D sequence, got shape {array.shape}")
    if (array < 0).any():
        raise ValueError(f"key_positions must be >= 0 (positions count from 0), got {int(array.min())}")
    return array.astype(np.int64)


def _bucket_variant(
    relative_position: np.ndarray,
    bidirectional: bool,
    num_buckets: int,
    max_distance: int,
    *,
    cap: bool = True,
    rounding: Any = np.floor,
) -> np.ndarray:
    """T5's bucket with one step done differently (no cap, or rounding to nearest): wrong answers."""
    n = -relative_position.astype(np.int64)
    if bidirectional:
        num_buckets //= 2
        result = np.where(n < 0, num_buckets, 0)
        n = np.abs(n)
    else:
        result = np.zeros_like(n)
        n = np.maximum(n, 0)
    max_exact = num_buckets // 2
    scaled = np.log(np.maximum(n, max_exact) / max_exact) / math.log(max_distance / max_exact)
    large = max_exact + rounding(scaled * (num_buckets - max_exact)).astype(np.int64)
    if cap:
        large = np.minimum(large, num_buckets - 1)
    return result + np.where(n < max_exact, n, large)


def check_t5_buckets(
    answer: Any,
    query_position: int,
    key_positions: Any,
    *,
    bidirectional: bool = False,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> CheckResult:
    """Check T5's bucket for one query and several keys.

    The answer holds, for every key in ``key_positions``, the bucket T5's
    relative-position scheme (chapter 06) puts it in for the query at
    ``query_position``, with the given mode, number of buckets and
    ``max_distance``. Named mistakes: the direction flipped, every distance
    one token off, the other mode, no cap on the last bucket, and rounding the
    logarithmic part to the nearest integer.

    Parameters
    ----------
    answer : array_like or None
        One bucket per key, in the order of ``key_positions`` (``None`` or
        ``...`` while not attempted).
    query_position : int
        Position of the query, ``>= 0``.
    key_positions : sequence of int
        Positions of the keys, each ``>= 0``.
    bidirectional : bool, optional
        Encoder-style (True) or causal decoder-style (False, default) buckets.
    num_buckets : int, optional
        Total number of buckets, default 32.
    max_distance : int, optional
        Distance from which every key shares the last bucket, default 128.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If a bucket is wrong; the message says which key and hints at the
        common mistakes (sign, off by one, mode, cap, rounding), without the
        right buckets.
    TypeError, ValueError
        If a position or setting is not allowed.

    References
    ----------
    .. [1] C. Raffel et al., "Exploring the Limits of Transfer Learning with a
       Unified Text-to-Text Transformer", JMLR 21(140), 2020, section 2.1.

    Examples
    --------
    >>> check_t5_buckets(None, query_position=10, key_positions=[7, 11])
    Not attempted yet.
    Replace the placeholder with one bucket per key, in the order of key_positions, then run the cell again.
    >>> check_t5_buckets([0], query_position=10, key_positions=[7, 11])
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: buckets should be the T5 bucket of each key (causal mode, 32
    buckets, max_distance 128), one per key, of shape (2,); yours has shape (1,).
    """
    query_position = require_count(query_position, "query_position")
    keys = _as_key_positions(key_positions)
    if not isinstance(bidirectional, (bool, np.bool_)):
        raise TypeError(f"bidirectional must be True or False, got {describe_value(bidirectional)}")
    relative = keys - query_position
    expected = t5_relative_bucket(
        relative, bidirectional=bool(bidirectional), num_buckets=num_buckets, max_distance=max_distance
    )
    if is_placeholder(answer):
        return not_attempted("one bucket per key, in the order of key_positions")
    num_buckets = int(num_buckets)
    max_distance = int(max_distance)
    mode = "bidirectional" if bidirectional else "causal"

    def bucket(rel: np.ndarray, bidi: bool = bool(bidirectional)) -> np.ndarray:
        return t5_relative_bucket(rel, bidirectional=bidi, num_buckets=num_buckets, max_distance=max_distance)

    mistakes = [
        (
            bucket(-relative),
            "the direction is flipped: T5's relative_position is key - query "
            "(memory position minus query position), negative for keys before the query.",
        ),
        (
            bucket(relative - 1),
            "every distance is one token too large: the key at the query's own "
            "position has distance 0, the one just before it distance 1.",
        ),
        (
            bucket(relative + 1),
            "every distance is one token too small: the key at the query's own "
            "position has distance 0, the one just before it distance 1.",
        ),
    ]
    try:
        other_mode_buckets = bucket(relative, not bool(bidirectional))
    except ValueError:  # the settings leave no exact bucket in the other mode
        other_mode_buckets = None
    if other_mode_buckets is not None:
        other_mode = "causal" if bidirectional else "bidirectional"
        mistakes.append(
            (
                other_mode_buckets,
                f"these are the {other_mode} buckets; this exercise uses {mode} mode. Bidirectional "
                "mode gives each direction half the buckets (and half as many exact ones); causal "
                "mode gives all of them to keys at or before the query and puts later keys in bucket 0.",
            )
        )
    mistakes += [
        (
            _bucket_variant(relative, bool(bidirectional), num_buckets, max_distance, cap=False).astype(np.float64),
            "far keys got buckets past the last one: the logarithmic bucket is capped at the last "
            "bucket of its direction, so every distance from max_distance on shares it.",
        ),
        (
            _bucket_variant(relative, bool(bidirectional), num_buckets, max_distance, rounding=np.round).astype(
                np.float64
            ),
            "the logarithmic part is rounded down (truncated to an integer), not rounded to the nearest.",
        ),
    ]
    compare_arrays(
        answer,
        expected.astype(np.float64),
        name="buckets",
        description=f"the T5 bucket of each key ({mode} mode, {num_buckets} buckets, "
        f"max_distance {max_distance}), one per key",
        atol=1e-9,
        rtol=0.0,
        known_mistakes=[(np.asarray(m, dtype=np.float64), hint) for m, hint in mistakes],
        plural=True,
        locate=lambda index: f"the key at position {keys[index[0]]} (entry {index[0]} of key_positions)",
    )
    return passed(
        f"every key is in its T5 bucket ({mode} mode, {num_buckets} buckets, max_distance {max_distance}).",
        check="check_t5_buckets",
    )
