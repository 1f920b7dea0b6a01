"""Checks for chapter 10: the keys of the offset head, and an encoder adapter for ALiBi."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import require_count, require_even_width, require_positive_real
from ..alibi import alibi_slopes
from ..sinusoidal import shift_matrix, sinusoidal_encoding
from ._compare import as_answer_array, call_student_function, compare_arrays
from ._core import CheckFailed, CheckResult, is_placeholder, not_attempted, passed

__all__ = ["check_offset_keys", "check_alibi_weight_factor"]


def _shift_hint(shift: int, offset: int) -> str:
    if shift == -offset:
        return (
            f"your keys are PE(j - {offset}): they point {offset} tokens the wrong way. Either you "
            f"used M(-φ) = M(φ)ᵀ, or you multiplied the rows by M(φ) untransposed: the rows of PE are "
            "row vectors, so applying M(φ) to every row is PE @ M(φ).T."
        )
    if shift == 0:
        return "your keys are PE(j) itself: apply M(φ) to every row."
    if abs(shift - offset) == 1:
        return (
            f"your keys are PE(j {'+' if shift >= 0 else '-'} {abs(shift)}): one token off. The key "
            f"of token j must be PE(j + φ) with φ = {offset}, so that query i meets it at j = i - φ."
        )
    return (
        f"your keys are PE(j {'+' if shift >= 0 else '-'} {abs(shift)}) = M({shift}) PE(j); the head "
        f"needs M(φ) with φ = {offset}."
    )


def _offset_keys(
    offset: int, d_model: int, seq_len: int, base: float
) -> tuple[np.ndarray, list[tuple[np.ndarray, str]]]:
    """The keys of the offset head, and the keys that named mistakes give."""
    positions = np.arange(seq_len, dtype=np.float64)
    expected = sinusoidal_encoding(positions, d_model, base=base) @ shift_matrix(float(offset), d_model, base=base).T
    mistakes = []
    for shift in sorted(range(-offset - 3, 2 * offset + 4), key=lambda s: (abs(s + offset), abs(s - offset))):
        if shift != offset:
            mistakes.append((sinusoidal_encoding(positions + shift, d_model, base=base), _shift_hint(shift, offset)))
    if d_model > 2:
        mistakes.append(
            (
                sinusoidal_encoding(positions + offset, d_model, base=base, layout="concat"),
                "your keys are in the concat layout [all sines | all cosines]; the head uses the "
                "interleaved PE(t) of the chapter, where pair k sits in columns 2k and 2k + 1.",
            )
        )
    return expected, mistakes


def check_offset_keys(answer: Any, offset: int, d_model: int, seq_len: int, *, base: float = 10000.0) -> CheckResult:
    """Check the keys of the head that attends ``offset`` tokens back.

    The head's queries are ``q_i = PE(i)`` and its keys ``k_j = M(phi) PE(j)``
    (interleaved sinusoidal encoding, ``phi = offset``), so the answer is the
    ``(seq_len, d_model)`` array whose row ``j`` is the key of position ``j``,
    for ``j = 0 .. seq_len - 1``. Named mistakes: keys shifted the other way
    (``M(phi)`` transposed or applied from the wrong side), one token off, not
    shifted, shifted by another amount, and the concat layout.

    Parameters
    ----------
    answer : array_like or None
        The keys, shape ``(seq_len, d_model)`` (``None`` or ``...`` while not
        attempted).
    offset : int
        ``phi``, how many tokens back the head looks, ``>= 0``.
    d_model : int
        Width, a positive even integer.
    seq_len : int
        Number of keys, ``>= 1``.
    base : float, optional
        Frequency base, ``> 0``. Default 10000.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the keys are wrong. When they are ``PE(j + s)`` for another shift
        ``s`` (the wrong sign or a transposed ``M(phi)``, one token off, no
        shift at all) the message says which, without giving the keys.
    TypeError, ValueError
        If ``offset``, ``d_model``, ``seq_len`` or ``base`` is not allowed.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017, section 3.5.

    Examples
    --------
    >>> from posenc_helpers import sinusoidal_encoding
    >>> check_offset_keys(None, offset=2, d_model=4, seq_len=6)
    Not attempted yet.
    Replace the placeholder with your 6 x 4 array of keys, one row per key position j, then run the cell again.
    >>> check_offset_keys(sinusoidal_encoding(6, 4), offset=2, d_model=4, seq_len=6)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: keys are not yet the 6 x 4 array with row j equal to M(2) PE(j).
    Hint: your keys are PE(j) itself: apply M(φ) to every row.
    """
    offset = require_count(offset, "offset", minimum=0)
    d_model = require_even_width(d_model, "d_model")
    seq_len = require_count(seq_len, "seq_len", minimum=1)
    base = require_positive_real(base, "base")
    if is_placeholder(answer):
        return not_attempted(f"your {seq_len} x {d_model} array of keys, one row per key position j")
    array = as_answer_array(answer, "keys")
    expected, mistakes = _offset_keys(offset, d_model, seq_len, base)
    compare_arrays(
        array,
        expected,
        name="keys",
        description=f"the {seq_len} x {d_model} array with row j equal to M({offset}) PE(j)",
        axes=("key position j", "dimension"),
        atol=1e-9,
        known_mistakes=mistakes,
        plural=True,
        given=answer,
    )
    return passed(f"k_j = M({offset}) PE(j) = PE(j + {offset}), so query i scores highest at key i - {offset}.")


# The second call: positions out of order and not starting at 0, fewer of them than seq_len.
_SPOT_POSITIONS = (5, 0, 12, 3, 30, 7)
_SPOT_SEQ_LEN = 31


def _factors(positions: np.ndarray, n_heads: int) -> np.ndarray:
    return np.exp(-positions.astype(np.float64)[:, None] * alibi_slopes(n_heads)[None, :])


def _factor_mistakes(positions: np.ndarray, n_heads: int) -> list[tuple[np.ndarray, str]]:
    slopes = alibi_slopes(n_heads)
    t = positions.astype(np.float64)[:, None]
    mistakes = [
        (
            np.exp(t * slopes[None, :]),
            "your factors grow with t: the bias is -m_h t, a penalty, so the factor shrinks as t grows.",
        ),
        (-t * slopes[None, :], "that is the bias -m_h t itself; the weight factor is what softmax makes of it."),
        (np.exp(-t / slopes[None, :]), "you divided by the slope; the bias is -m_h times t."),
    ]
    if n_heads > 1:
        mistakes.append(
            (
                np.exp(-t * slopes[::-1][None, :]),
                "the heads are in reverse order: column h must use alibi_slopes(n_heads)[h].",
            )
        )
    return mistakes


def check_alibi_weight_factor(encode: Any, n_heads: int) -> CheckResult:
    """Check an encoder adapter for ALiBi that returns each head's weight factor.

    Softmax turns ALiBi's bias into a factor that multiplies the weight of a
    key before the row is renormalised. The adapter must be a function
    ``encode(positions, seq_len)`` returning, for a query at each of the given
    positions and a key at position 0, that factor for every head (chapter
    10's exercise): shape ``(len(positions), n_heads)``, one column per head in
    the order of :func:`~posenc_helpers.alibi_slopes`. The check calls it twice:
    with the positions ``0 .. 39``, and with a few positions out of order, so
    an adapter must follow the ``positions`` it is given.

    Named mistakes: factors that grow, the bias without the exponential, the
    heads in reverse order, dividing by the slope, and an adapter that ignores
    ``positions`` (using ``seq_len`` or counting rows instead).

    Parameters
    ----------
    encode : callable or None
        The student's function (``None`` or ``...`` while not attempted).
    n_heads : int
        Number of heads, ``>= 1``.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If ``encode`` is not a function, fails when called, returns the wrong
        shape, or returns wrong factors (with hints for the mistakes above).
    TypeError, ValueError
        If ``n_heads`` is not an integer ``>= 1``.

    References
    ----------
    .. [1] O. Press, N. A. Smith, M. Lewis, "Train Short, Test Long: Attention
       with Linear Biases Enables Input Length Extrapolation", ICLR 2022, section 3.

    Examples
    --------
    >>> import numpy as np
    >>> check_alibi_weight_factor(None, n_heads=4)
    Not attempted yet.
    Replace the placeholder with your function encode(positions, seq_len), then run the cell again.
    >>> check_alibi_weight_factor(np.ones((40, 4)), n_heads=4)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: the answer should be a function encode(positions, seq_len); got ndarray.
    """
    n_heads = require_count(n_heads, "n_heads", minimum=1)
    if is_placeholder(encode):
        return not_attempted("your function encode(positions, seq_len)")
    if not callable(encode):
        raise CheckFailed(f"the answer should be a function encode(positions, seq_len); got {type(encode).__name__}.")
    seq_len = 40
    positions = np.arange(seq_len)
    result = call_student_function(encode, positions, seq_len, call=f"encode(np.arange({seq_len}), {seq_len})")
    compare_arrays(
        result,
        _factors(positions, n_heads),
        name="encode(positions, seq_len)",
        description=f"the ({seq_len}, {n_heads}) array of weight factors, one column per head",
        axes=("position t", "head"),
        atol=0.0,  # factors are positive: compared relatively only
        rtol=1e-9,
        known_mistakes=_factor_mistakes(positions, n_heads),
    )
    spot = np.array(_SPOT_POSITIONS)
    shown = f"np.array({list(_SPOT_POSITIONS)})"
    call = f"encode({shown}, {_SPOT_SEQ_LEN})"
    result = call_student_function(encode, spot, _SPOT_SEQ_LEN, call=call)
    ignored = [
        (
            _factors(np.arange(spot.size), n_heads),
            "its rows are those of positions 0, 1, 2, ...: your function counts rows instead of reading "
            "the positions it is given. Use positions (in any order), not the row number.",
        )
    ]
    counted = _factors(np.arange(_SPOT_SEQ_LEN), n_heads)
    if as_answer_array(result, call).shape == counted.shape:
        raise CheckFailed(
            f"{call} should return one row per position ({spot.size} rows); yours has {_SPOT_SEQ_LEN}, one per "
            "token of seq_len: your function ignores positions. Build the rows from the positions it is given."
        )
    compare_arrays(
        result,
        _factors(spot, n_heads),
        name=call,
        description=f"the ({spot.size}, {n_heads}) array of weight factors for these positions, in this order",
        axes=("row", "head"),
        atol=0.0,  # factors are positive: compared relatively only
        rtol=1e-9,
        known_mistakes=ignored + _factor_mistakes(spot, n_heads),
    )
    return passed("row t holds exp(-m_h t) for every head: the factor ALiBi puts on the weight of a key t tokens back.")
