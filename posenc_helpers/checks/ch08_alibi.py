"""Checks for chapter 08: ALiBi slopes and the causal bias of one head."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import require_count, require_positive_real
from ..alibi import alibi_slopes
from ._compare import as_answer_array, compare_arrays
from ._core import CheckFailed, CheckResult, is_placeholder, not_attempted, passed

__all__ = ["check_alibi_slopes", "check_alibi_head_bias"]


def _direct_slopes(n: int, *, start: int = 1) -> np.ndarray:
    """The power-of-two rule applied to ``n`` heads numbered from ``start``, whatever ``n`` is (a wrong answer)."""
    head = np.arange(start, start + n, dtype=np.float64)
    return 2.0 ** (-8.0 * head / n)


def _slope_mistakes(n: int, expected: np.ndarray) -> list[tuple[np.ndarray, str]]:
    """Wrong slope lists that common mistakes produce, each with a hint (duplicates of the answer dropped)."""
    mistakes: list[tuple[np.ndarray, str]] = [
        (
            np.sort(expected)[::-1],
            "your slopes are sorted. The order of the list is the order of the heads: the slopes of "
            "the largest power of two p <= n come first, then the extra ones, which fall between "
            "them. Do not sort.",
        ),
        (
            np.sort(expected),
            "your slopes are sorted (ascending). Keep the order of the rule: the p slopes of the "
            "largest power of two p <= n first, then the extra ones. Do not sort.",
        ),
        (
            _direct_slopes(n),
            f"this is 2^(-8h/n) with n = {n}. That formula is the rule for a power of two only; for "
            "other head counts take the slopes of the largest power of two p < n, then every other "
            "slope of 2p heads.",
        ),
        (
            _direct_slopes(n, start=0),
            "off by one: the head number h runs from 1 to n, so the first slope is 2^(-8/n), never 1. "
            "(And for n not a power of two, 2^(-8h/n) is not the rule either.)",
        ),
    ]
    if n & (n - 1):
        lower = 1 << (n.bit_length() - 1)
        base = alibi_slopes(lower)  # lower and 2 * lower are powers of two
        double = alibi_slopes(2 * lower)
        extra = n - lower
        mistakes += [
            (
                np.concatenate([base, double[1::2][:extra]]),
                "the extra slopes repeat slopes already in the list: you took the 2nd, 4th, ... slopes "
                "of 2p heads ([1::2]), which are exactly the p-head slopes. Take the 1st, 3rd, 5th, ... "
                "([0::2]).",
            ),
            (
                np.concatenate([base, double[:extra]]),
                "the extra slopes must be every other slope of 2p heads ([0::2]); you took the first "
                "n - p of them without skipping, so some repeat slopes already in the list.",
            ),
            (
                double[:n],
                "you took the slopes of the next power of two (2p heads) and cut the list to n. The rule "
                "starts from the largest power of two p <= n.",
            ),
            (
                np.concatenate([double[0::2][:extra], base]),
                "right slopes, wrong order: the p slopes of the largest power of two come first and the "
                "extra ones are appended after them.",
            ),
            (
                np.concatenate([_direct_slopes(lower, start=0), _direct_slopes(2 * lower, start=0)[0::2][:extra]]),
                "off by one: the head number h runs from 1, so the first slope of p heads is 2^(-8/p), never 1.",
            ),
        ]
    return [(m, hint) for m, hint in mistakes if not np.allclose(m, expected, rtol=1e-12, atol=0.0)]


def _slopes(n: int) -> tuple[np.ndarray, list[tuple[np.ndarray, str]]]:
    expected = alibi_slopes(n)
    return expected, _slope_mistakes(n, expected)


def check_alibi_slopes(answer: Any, n_heads: int) -> CheckResult:
    """Check the list of ALiBi slopes ``m_h`` for ``n_heads`` heads, in head order.

    The answer holds one slope per head, head 1 first, as chapter 08 (and the
    reference implementation of Press et al.) defines them for any number of
    heads, a power of two or not.

    Parameters
    ----------
    answer : array_like or None
        The student's slopes, one per head (``None`` or ``...`` while not attempted).
    n_heads : int
        Number of heads, ``>= 1``.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the slopes are wrong. Sorting, using the power-of-two rule for a
        head count that is not a power of two, numbering the heads from 0,
        taking the wrong half (or no half) of the slopes of twice as many
        heads, the right slopes in the wrong order and similar mistakes get a
        specific hint; the message never shows the right slopes.
    TypeError, ValueError
        If ``n_heads`` is not an integer ``>= 1``.

    References
    ----------
    .. [1] O. Press, N. A. Smith, M. Lewis, "Train Short, Test Long: Attention
       with Linear Biases Enables Input Length Extrapolation", ICLR 2022,
       section 3 and the reference implementation's ``get_slopes``.

    Examples
    --------
    >>> check_alibi_slopes(None, n_heads=20)
    Not attempted yet.
    Replace the placeholder with your array of 20 slopes, then run the cell again.
    >>> check_alibi_slopes([0.5, 0.25], n_heads=3)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: slopes should be the 3 ALiBi slopes in head order (entry 0 is head
    h = 1), of shape (3,); yours has shape (2,).
    """
    n = require_count(n_heads, "n_heads", minimum=1)
    if is_placeholder(answer):
        return not_attempted(f"your array of {n} slopes")
    expected, mistakes = _slopes(n)
    compare_arrays(
        answer,
        expected,
        name="slopes",
        description=f"the {n} ALiBi slopes in head order (entry 0 is head h = 1)",
        axes=("entry",),
        atol=0.0,
        rtol=1e-9,
        known_mistakes=mistakes,
        plural=True,
    )
    return passed(f"the {n} slopes, in head order.", check="check_alibi_slopes")


def _entry(query: int, key: int) -> str:
    return f"the query at position {query} and the key at position {key}"


def _query_key_distance(seq_len: int, first_query: int) -> np.ndarray:
    """``i - j`` for queries ``i = first_query .. seq_len - 1`` (rows) and keys ``j = 0 .. seq_len - 1``."""
    query = np.arange(first_query, seq_len, dtype=np.float64)
    key = np.arange(seq_len, dtype=np.float64)
    return query[:, None] - key[None, :]


def check_alibi_head_bias(answer: Any, slope: float, seq_len: int, *, first_query: int = 0) -> CheckResult:
    """Check the causal ALiBi bias of one head, the future masked with ``-inf``.

    The answer is the bias of chapter 08 that ALiBi adds to the attention
    logits of one head with slope ``slope``, under a causal mask. Columns are
    the keys at positions ``0 .. seq_len - 1``. Rows are the queries at
    positions ``first_query .. seq_len - 1``: all positions by default (a
    square matrix), or only the last few, as when a model generates new
    tokens and reads the earlier keys from a cache.

    Parameters
    ----------
    answer : array_like or None
        The student's ``(seq_len - first_query, seq_len)`` matrix (``None`` or
        ``...`` while not attempted).
    slope : float
        The head's slope ``m``, ``> 0``.
    seq_len : int
        Number of tokens (keys), ``>= 1``.
    first_query : int, optional
        Position of the first query row, ``0 .. seq_len - 1``. Default 0.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the matrix is wrong: a missing or misplaced mask (or a large finite
        number in its place), rows numbered from 0 instead of
        ``first_query``, the bias of models that see both directions, the
        wrong sign, the transposed matrix, the ``m * j`` shortcut, a missing
        or doubled slope and an off-by-one distance each get a hint; otherwise
        the message names the first (query, key) entry that differs. It never
        shows the right values.
    TypeError, ValueError
        If ``slope`` is not a finite number ``> 0``, ``seq_len`` not an
        integer ``>= 1`` or ``first_query`` not an integer in ``0 .. seq_len - 1``.

    References
    ----------
    .. [1] O. Press, N. A. Smith, M. Lewis, "Train Short, Test Long: Attention
       with Linear Biases Enables Input Length Extrapolation", ICLR 2022, figure 3.

    Examples
    --------
    >>> check_alibi_head_bias(None, slope=0.5, seq_len=3, first_query=2)
    Not attempted yet.
    Replace the placeholder with your 1 x 3 bias matrix, then run the cell again.
    >>> check_alibi_head_bias([[0.0, 0.0], [0.0, 0.0]], slope=0.5, seq_len=2)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: bias has no masked entries. Hint: the causal mask is missing: every
    key after its query (j > i) must be -np.inf.
    """
    m = require_positive_real(slope, "slope")
    n = require_count(seq_len, "seq_len", minimum=1)
    first = require_count(first_query, "first_query")
    if first >= n:
        raise ValueError(f"first_query must be in 0 .. {n - 1} (0 .. seq_len - 1), got {first}")
    rows = n - first
    if is_placeholder(answer):
        return not_attempted(f"your {rows} x {n} bias matrix")
    distance = _query_key_distance(n, first)
    expected = -m * distance
    future = distance < 0
    array = as_answer_array(answer, "bias")
    if array.shape != (rows, n):
        hint = " It looks transposed." if array.shape == (n, rows) and rows != n else ""
        raise CheckFailed(
            f"bias should be a {rows} x {n} matrix (rows: the queries at positions {first} .. {n - 1}, "
            f"columns: the keys at 0 .. {n - 1}); yours has shape {array.shape}.{hint}"
        )
    bad = np.isnan(array) | np.isposinf(array)
    if bad.any():
        r, j = (int(x) for x in np.argwhere(bad)[0])
        raise CheckFailed(
            f"bias holds NaN or +inf at the entry of {_entry(first + r, j)}; masked entries must be -inf."
        )
    masked = np.isneginf(array)
    if not np.array_equal(masked, future):
        if not masked.any():
            above = array[future]
            if np.all(above <= -1e4):
                hint = (
                    "the keys after the query are pushed down with a large finite number; use "
                    "-np.inf, so that their weight is exactly 0."
                )
            elif np.allclose(above, -m * np.abs(distance[future])):
                hint = (
                    "your matrix is -m|i - j|, the symmetric variant for models that see both "
                    "directions. Here the future must be masked: keys j > i get -np.inf."
                )
            else:
                hint = "the causal mask is missing: every key after its query (j > i) must be -np.inf."
            raise CheckFailed(f"bias has no masked entries. Hint: {hint}")
        if first > 0:
            rows_from_zero = np.arange(rows)[:, None] < np.arange(n)[None, :]
            if np.array_equal(masked, rows_from_zero):
                raise CheckFailed(
                    f"bias masks the wrong keys: row r is the query at position {first} + r, not r. "
                    f"Number the rows from {first}, so the last row is position {n - 1}."
                )
        if rows == n and np.array_equal(masked, future.T):
            raise CheckFailed(
                "bias masks the keys before the query (below the diagonal) instead of those after "
                "it. Rows are queries i and columns keys j; mask j > i. If you built j - i where "
                "i - j was meant, the matrix is transposed."
            )
        wrong = masked != future
        r, j = (int(x) for x in np.argwhere(wrong)[0])
        should = (
            "be masked with -inf (the key comes after the query)"
            if future[r, j]
            else ("not be masked (the key is at or before the query)")
        )
        raise CheckFailed(
            f"bias masks the wrong entries: {int(wrong.sum())} of {array.size} differ. The first is "
            f"the entry of {_entry(first + r, j)}, which should {should}."
        )
    keep = ~future
    key = np.arange(n, dtype=np.float64)

    def visible(matrix: np.ndarray) -> np.ndarray:
        return np.where(keep, matrix, 0.0)

    mistakes = [
        (
            visible(-expected),
            "wrong sign: the bias is a penalty, -m (i - j), so it is 0 where the key is "
            "the query itself and more negative the further back the key is (i is the "
            "query, j the key).",
        ),
        (
            visible(m * np.broadcast_to(key, (rows, n))),
            "this is the m·j shortcut. It gives the same attention under the causal mask, but the bias "
            "asked for is -m (i - j): subtract m·i from the row of query i.",
        ),
        (visible(-distance), "the slope is missing: multiply the distance i - j by m."),
        (
            visible(-m * (distance + 1.0)),
            "off by one: a token attending to itself (j = i) is at distance 0, so its bias is 0.",
        ),
        (visible(-m * m * distance), "the slope appears twice: the bias is -m (i - j), linear in m."),
    ]
    compare_arrays(
        visible(array),
        visible(expected),
        name="bias",
        description=(
            f"the causal ALiBi bias (rows: queries at positions {first} .. {n - 1}, columns: keys at 0 .. {n - 1})"
        ),
        axes=("query row", "key"),
        atol=1e-9,
        rtol=1e-9,
        known_mistakes=mistakes,
        locate=lambda index: f"the entry of {_entry(first + index[0], index[1])}",
        given=answer,
    )
    return passed("the causal ALiBi bias of one head, with the future masked.")
