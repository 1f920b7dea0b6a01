"""Checks for chapter 10: the keys of the offset head, and an encoder adapter for ALiBi."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import check_count, check_even_width, check_positive_real
from ..alibi import alibi_slopes
from ..sinusoidal import shift_matrix, sinusoidal_encoding
from ._core import CheckFailed, CheckResult, as_answer_array, compare_arrays, is_placeholder, not_attempted, passed

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


def check_offset_keys(answer: Any, offset: int, d_model: int, seq_len: int, *, base: float = 10000.0) -> CheckResult:
    """Check the keys of the head that attends ``offset`` tokens back.

    The head's queries are ``q_i = PE(i)`` and its keys ``k_j = M(phi) PE(j)``
    (interleaved sinusoidal encoding, ``phi = offset``), so the answer is the
    ``(seq_len, d_model)`` array whose row ``j`` is ``M(phi) PE(j)``, for
    ``j = 0 .. seq_len - 1``.

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
    >>> import numpy as np
    >>> from posenc_helpers import sinusoidal_encoding
    >>> keys = sinusoidal_encoding(np.arange(6) + 2.0, 4)   # PE(j + 2)
    >>> check_offset_keys(keys, offset=2, d_model=4, seq_len=6)
    Correct: k_j = M(2) PE(j) = PE(j + 2), so query i scores highest at key i - 2.
    >>> check_offset_keys(None, offset=2, d_model=4, seq_len=6)
    Not attempted yet.
    Replace the placeholder with your 6 x 4 array of keys, one row per key position j, then run the cell again.
    """
    offset = check_count(offset, "offset", minimum=0)
    d_model = check_even_width(d_model, "d_model")
    seq_len = check_count(seq_len, "seq_len", minimum=1)
    base = check_positive_real(base, "base")
    if is_placeholder(answer):
        return not_attempted(f"your {seq_len} x {d_model} array of keys, one row per key position j")
    positions = np.arange(seq_len, dtype=np.float64)
    expected = sinusoidal_encoding(positions, d_model, base=base) @ shift_matrix(float(offset), d_model, base=base).T
    array = as_answer_array(answer, "keys")
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
    compare_arrays(
        array,
        expected,
        name="keys",
        description=f"the {seq_len} x {d_model} array with row j equal to M({offset}) PE(j)",
        axes=("key position j", "dimension"),
        atol=1e-9,
        known_mistakes=mistakes,
    )
    return passed(f"k_j = M({offset}) PE(j) = PE(j + {offset}), so query i scores highest at key i - {offset}.")


def check_alibi_weight_factor(encode: Any, n_heads: int) -> CheckResult:
    """Check an encoder adapter for ALiBi that returns each head's weight factor ``exp(-m_h t)``.

    Softmax turns ALiBi's bias ``-m_h (i - j)`` into the factor
    ``exp(-m_h (i - j))`` that multiplies the weight of key ``j`` before the
    row is renormalised. The adapter must be a function
    ``encode(positions, seq_len)`` returning, for a query at each position
    ``t`` and a key at position 0, the factors of all heads: shape
    ``(len(positions), n_heads)``, entry ``[row, h] = exp(-m_h * t)`` with the
    slopes of :func:`~posenc_helpers.alibi_slopes`, in that order.

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
        shape, or returns wrong factors (with hints for the sign, a missing
        exponential, the slope order and dividing by the slope).
    TypeError, ValueError
        If ``n_heads`` is not an integer ``>= 1``.

    References
    ----------
    .. [1] O. Press, N. A. Smith, M. Lewis, "Train Short, Test Long: Attention
       with Linear Biases Enables Input Length Extrapolation", ICLR 2022, section 3.

    Examples
    --------
    >>> import numpy as np
    >>> from posenc_helpers import alibi_slopes
    >>> def factor(positions, seq_len):
    ...     return np.exp(-np.outer(positions, alibi_slopes(4)))
    >>> check_alibi_weight_factor(factor, n_heads=4)
    Correct: row t holds exp(-m_h t) for every head: the factor ALiBi puts on the weight of a key t tokens back.
    """
    n_heads = check_count(n_heads, "n_heads", minimum=1)
    if is_placeholder(encode):
        return not_attempted("your function encode(positions, seq_len)")
    if not callable(encode):
        raise CheckFailed(f"the answer should be a function encode(positions, seq_len); got {type(encode).__name__}.")
    seq_len = 40
    positions = np.arange(seq_len)
    try:
        result = encode(positions, seq_len)
    except Exception as exc:  # noqa: BLE001 - report any failure of the student's code
        raise CheckFailed(
            f"calling encode(np.arange({seq_len}), {seq_len}) raised {type(exc).__name__}: {exc}"
        ) from None
    slopes = alibi_slopes(n_heads)
    t = positions.astype(np.float64)[:, None]
    expected = np.exp(-t * slopes[None, :])
    mistakes = [
        (
            np.exp(t * slopes[None, :]),
            "your factors grow with t: the bias is -m_h t, a penalty, so the factor is exp(-m_h t).",
        ),
        (-t * slopes[None, :], "that is the bias -m_h t itself; the weight factor is its exponential."),
        (np.exp(-t / slopes[None, :]), "you divided by the slope; the bias is -m_h times t."),
    ]
    if n_heads > 1:
        mistakes.append(
            (
                np.exp(-t * slopes[::-1][None, :]),
                "the heads are in reverse order: column h must use alibi_slopes(n_heads)[h].",
            )
        )
    compare_arrays(
        result,
        expected,
        name="encode(positions, seq_len)",
        description=f"the ({seq_len}, {n_heads}) array of factors exp(-m_h t), one column per head",
        axes=("position t", "head"),
        atol=1e-12,
        rtol=1e-9,
        known_mistakes=mistakes,
    )
    return passed("row t holds exp(-m_h t) for every head: the factor ALiBi puts on the weight of a key t tokens back.")
