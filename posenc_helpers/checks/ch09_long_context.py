"""Checks for chapter 09: rescaled RoPE frequencies and colliding interpolated positions."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validation import require_choice, require_count, require_positive_real
from ..precision import round_to_precision
from ..rope import rope_frequencies
from ._compare import as_answer_array, call_student_function, compare_arrays
from ._core import CheckFailed, CheckResult, is_placeholder, not_attempted, passed

__all__ = ["check_rescaled_frequencies", "check_first_interpolated_collision"]

_SIGNIFICAND_BITS = {"float16": 11, "bfloat16": 8}

# What to do about a wrong first collision, whichever side of the right one it lies on.
_SCAN = " Round t/s and (t+1)/s for every t from 0 on, in order, and stop at the first t where they are equal."

# Scales on which a function answer for the first collision is also tried (4 is a power of two,
# where the interpolated positions collide exactly where the integers do).
_HIDDEN_SCALES = (3.0, 4.0, 7.0)


def _ntk(head_dim: int, base: float, factor: float, exponent: float) -> np.ndarray:
    return rope_frequencies(head_dim, base=base * factor**exponent)


def _rescaled(
    d_model: int, head_dim: int, base: float, factor: float
) -> tuple[np.ndarray, np.ndarray, list[tuple[np.ndarray, str]], list[tuple[np.ndarray, str]]]:
    """The two expected rows, and the rows that named mistakes give for each."""
    pairs = head_dim // 2
    theta = rope_frequencies(head_dim, base=base)
    exponent = head_dim / (head_dim - 2) if head_dim > 2 else 0.0
    expected_pi = theta / factor
    expected_ntk = _ntk(head_dim, base, factor, exponent)
    wrong_base = 10000.0 if base != 10000.0 else 500000.0
    base_hint = f"these are the frequencies for base {wrong_base:g}. Use the model's own base (the exercise gives it)."
    d_model_hint = (
        "the exponent uses d_model. NTK-aware scaling and the frequencies both use the head width "
        "d = d_model / n_heads."
    )
    pi_mistakes = [
        (
            theta * factor,
            "you multiplied the frequencies by s. Interpolation divides positions by s, "
            "which divides every frequency by s (slower rotation).",
        ),
        (theta, "these are the original frequencies; position interpolation divides each by s."),
        (rope_frequencies(head_dim, base=wrong_base) / factor, base_hint),
        (expected_ntk, "this is the NTK-aware row; row 0 should hold position interpolation."),
    ]
    ntk_mistakes = [
        (expected_pi, "this is the position-interpolation row; row 1 should hold the NTK-aware frequencies."),
        (theta, "these are the original frequencies; NTK-aware scaling enlarges the base first."),
        (
            rope_frequencies(head_dim, base=base / factor**exponent),
            "you divided the base by s**(d/(d-2)). NTK-aware scaling multiplies it, so the pairs get slower.",
        ),
        (
            _ntk(head_dim, base, factor, head_dim / 2),
            "the exponent of s is d/(d-2), not d/2. With d/(d-2) the last pair is slowed by exactly s.",
        ),
        (
            _ntk(head_dim, base, factor, 1.0),
            "the exponent of s is d/(d-2), not 1: base * s alone slows the last pair by less than s.",
        ),
        (_ntk(head_dim, base, factor, (head_dim - 2) / head_dim), "the exponent of s is d/(d-2), not (d-2)/d."),
        (_ntk(head_dim, wrong_base, factor, exponent), base_hint),
        (_ntk(head_dim, base, factor, d_model / (d_model - 2)), d_model_hint),
        (rope_frequencies(d_model, base=base * factor ** (d_model / (d_model - 2)))[:pairs], d_model_hint),
    ]
    ntk_mistakes = [(m, h) for m, h in ntk_mistakes if not np.allclose(m, expected_ntk, atol=0.0, rtol=1e-6)]
    return expected_pi, expected_ntk, pi_mistakes, ntk_mistakes


def check_rescaled_frequencies(answer: Any, *, d_model: int, n_heads: int, base: float, factor: float) -> CheckResult:
    """Check position-interpolation and NTK-aware frequencies for a model.

    The answer is a ``(2, head_dim // 2)`` array with ``head_dim = d_model // n_heads``:
    row 0 holds the position-interpolation frequencies of chapter 09 and row 1
    the NTK-aware ones, one per frequency pair of a head, for the model's base
    and the scale ``s = factor``. Each row is compared on its own (relative
    tolerance ``1e-6``, ``1e-5`` for float32 answers), with hints for the
    common mistakes: multiplying by ``s``, three wrong exponents of ``s``,
    dividing the base, ``d_model`` in place of the head width, the base 10000
    instead of the model's base, and the two rows swapped.

    Parameters
    ----------
    answer : array_like or None
        The student's array (``None`` or ``...`` while not attempted).
    d_model : int
        Model width, a positive even integer.
    n_heads : int
        Number of heads, ``>= 1``, dividing ``d_model`` into an even head width.
    base : float
        RoPE base of the model, ``> 0``.
    factor : float
        The scale ``s > 1`` (new context over trained context).

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the array is wrong; the message names the row and the first pair
        that differs, or the recognised mistake, never the expected values.
    TypeError, ValueError
        If ``d_model``, ``n_heads``, ``base`` or ``factor`` is invalid.

    References
    ----------
    .. [1] S. Chen et al., "Extending Context Window of Large Language Models via
       Positional Interpolation", arXiv:2306.15595, 2023.
    .. [2] bloc97, "NTK-Aware Scaled RoPE allows LLaMA models to have extended
       (8k+) context size without any fine-tuning", r/LocalLLaMA, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> check_rescaled_frequencies(None, d_model=8, n_heads=2, base=100.0, factor=2.0)
    Not attempted yet.
    Replace the placeholder with a (2, 2) array: row 0 the position-interpolation frequencies, row 1 the
    NTK-aware ones, then run the cell again.
    >>> check_rescaled_frequencies(np.ones((2, 4)), d_model=8, n_heads=2, base=100.0, factor=2.0)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: your array has 4 frequencies per row, d_model / 2. RoPE rotates
    within one head: its frequencies use the head width d_model / n_heads, not d_model.
    """
    d_model = require_count(d_model, "d_model", minimum=2)
    n_heads = require_count(n_heads, "n_heads", minimum=1)
    if d_model % n_heads or (d_model // n_heads) % 2:
        raise ValueError(
            f"n_heads must divide d_model into an even head width, got d_model={d_model}, n_heads={n_heads}"
        )
    base = require_positive_real(base, "base")
    factor = require_positive_real(factor, "factor")
    if factor <= 1:
        raise ValueError(f"factor must be a scale s > 1 (a longer context), got {factor!r}")
    head_dim = d_model // n_heads
    pairs = head_dim // 2
    if is_placeholder(answer):
        return not_attempted(
            f"a (2, {pairs}) array: row 0 the position-interpolation frequencies, row 1 the NTK-aware ones"
        )
    array = as_answer_array(answer, "your array")
    if array.shape == (2, d_model // 2) and d_model // 2 != pairs:
        raise CheckFailed(
            f"your array has {d_model // 2} frequencies per row, d_model / 2. RoPE rotates within one head: "
            f"its frequencies use the head width d_model / n_heads, not d_model."
        )
    if array.shape != (2, pairs):
        raise CheckFailed(
            f"your array should have shape (2, {pairs}): row 0 for position interpolation, row 1 for "
            f"NTK-aware scaling, one frequency per pair of the head; yours has shape {array.shape}."
            + (" It looks transposed." if array.shape == (pairs, 2) else "")
        )
    expected_pi, expected_ntk, pi_mistakes, ntk_mistakes = _rescaled(d_model, head_dim, base, factor)
    compare_arrays(
        array[0],
        expected_pi,
        name="row 0 (position interpolation)",
        description="the position-interpolation frequencies, one per pair",
        axes=("pair",),
        atol=0.0,
        rtol=1e-6,
        known_mistakes=pi_mistakes,
        given=answer,
    )
    compare_arrays(
        array[1],
        expected_ntk,
        name="row 1 (NTK-aware)",
        description="the NTK-aware frequencies, one per pair",
        axes=("pair",),
        atol=0.0,
        rtol=1e-6,
        known_mistakes=ntk_mistakes,
        given=answer,
    )
    return passed(
        "row 0 slows every pair by s; row 1 keeps pair 0 and slows the last pair by exactly s.",
        check="check_rescaled_frequencies",
    )


def _first_collision(factor: float, dtype: str, *, multiply: bool = False) -> int:
    """Where the interpolated positions first collide (or, with multiply, a wrong variant)."""
    bits = _SIGNIFICAND_BITS[dtype]
    limit = int(math.ceil(2 ** (bits + 2) * factor)) + 2
    t = np.arange(limit, dtype=np.float64)
    values = round_to_precision(t * factor if multiply else t / factor, dtype)
    same = np.flatnonzero(values[1:] == values[:-1])
    return int(same[0])


def _first_inexact(factor: float, dtype: str) -> int:
    bits = _SIGNIFICAND_BITS[dtype]
    t = np.arange(int(math.ceil(2 ** (bits + 2) * factor)) + 2, dtype=np.float64)
    return int(np.flatnonzero(round_to_precision(t / factor, dtype) != t / factor)[0])


def _collision_mistakes(factor: float, dtype: str, expected: int) -> list[tuple[float, str]]:
    other = "float16" if dtype == "bfloat16" else "bfloat16"
    mistakes = [
        (
            expected + 1,
            "you reported the second position of the colliding pair; the question asks for t, the first of the two.",
        ),
        (expected / factor, "you reported the interpolated position t/s; the question asks for the integer t."),
        (
            2.0 ** _SIGNIFICAND_BITS[dtype],
            "that is where the integer positions collide. With position "
            "interpolation the stored numbers are t/s, not t.",
        ),
        (_first_collision(factor, other), f"that is the answer for {other}; round to {dtype}."),
        (
            _first_collision(factor, dtype, multiply=True),
            "you multiplied by s; interpolation divides the positions by s.",
        ),
        (
            _first_inexact(factor, dtype),
            "there t/s is the first position that is not stored exactly, but it "
            "still differs from its neighbour. A collision needs t/s and (t+1)/s "
            "to round to the same number.",
        ),
    ]
    return [(value, hint) for value, hint in mistakes if value != expected]


def _collision_value(answer: Any, name: str) -> float:
    array = as_answer_array(answer, name)
    if array.size != 1:
        raise CheckFailed(f"{name} should be a single integer t; yours has shape {array.shape}.")
    value = float(array.reshape(()))
    if not math.isfinite(value):
        raise CheckFailed(f"{name} is not a finite number (NaN or inf).")
    return value


def _collision_failure(value: float, factor: float, dtype: str, *, name: str) -> str | None:
    """Why ``value`` is not the first collision for ``factor`` (None if it is), in words that do not say
    whether it comes before or after the right one."""
    expected = _first_collision(factor, dtype)
    if value == expected:
        return None
    for mistake, hint in _collision_mistakes(factor, dtype, expected):
        if math.isclose(value, mistake, rel_tol=1e-9, abs_tol=1e-9):
            return f"{name} is not yet the first collision. Hint: {hint}"
    if value != round(value) or value < 0:
        return f"{name} should be a whole number t >= 0; yours is {value:g}."
    return f"{name} is not the first t at which t/s and (t+1)/s round to the same {dtype} number.{_SCAN}"


def _check_collision_function(function: Any, factor: float, dtype: str) -> list[float]:
    """Run a function answer on the exercise's scale and the hidden ones; return the other scales."""
    call = f"your function with s = {factor:g}"
    result = _collision_value(call_student_function(function, factor, call=call), f"the result of {call}")
    failure = _collision_failure(result, factor, dtype, name=f"the result of {call}, {result:g},")
    if failure:
        raise CheckFailed(failure)
    others = [s for s in _HIDDEN_SCALES if s != factor]
    for scale in others:
        call = f"your function with s = {scale:g}"
        other = _collision_value(call_student_function(function, scale, call=call), f"the result of {call}")
        failure = _collision_failure(other, scale, dtype, name=f"the result of {call}, {other:g},")
        if failure:
            same = (
                f" It returns the same t as for s = {factor:g}: does it use its argument s?" if other == result else ""
            )
            raise CheckFailed(
                f"your function finds the first collision for s = {factor:g}, but not for every scale: {failure}{same}"
            )
    return others


def check_first_interpolated_collision(answer: Any, *, factor: float, dtype: str = "bfloat16") -> CheckResult:
    """Check the first integer ``t`` whose interpolated positions ``t/s`` and ``(t+1)/s`` collide.

    Position interpolation feeds the model the positions ``t / s``. Stored in
    ``dtype`` (each computed in float64 and rounded once), two neighbouring
    positions become the same number from some ``t`` on; the answer is the
    first such ``t`` for ``s = factor``.

    The graded form of the answer is a function ``first_collision(s)`` that
    returns that ``t`` for any scale ``s`` (rounding to ``dtype``): the check
    calls it with ``s = factor`` and with other scales (3, 4 and 7), so trying
    values until the check passes does not help. A whole number is still
    accepted for ``s = factor`` alone; it can be found by trying values, so it
    shows understanding only together with the code that computed it.

    Wrong answers that match a common mistake get a hint: reporting ``t + 1``,
    the collision of the integer positions, the other format's answer, the
    value ``t / s`` instead of ``t``, multiplying by ``s``, or the first ``t``
    whose ``t / s`` is merely inexact. A function that gives the same answer
    for every scale is told that it ignores its argument.

    Parameters
    ----------
    answer : int, callable or None
        The student's function ``first_collision(s)`` or position (``None``
        or ``...`` while not attempted).
    factor : float
        The scale ``s``, a finite number ``>= 1``.
    dtype : {"bfloat16", "float16"}, optional
        The storage format. Default ``"bfloat16"``.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the position is wrong (the message names a recognised mistake, and
        never says whether the answer comes before or after the right one),
        if the function fails or gives a wrong position for another scale;
        never the expected position.
    TypeError, ValueError
        If ``factor`` or ``dtype`` is invalid.

    References
    ----------
    .. [1] S. Chen et al., "Extending Context Window of Large Language Models via
       Positional Interpolation", arXiv:2306.15595, 2023.
    .. [2] D. Kalamkar et al., "A Study of BFLOAT16 for Deep Learning Training",
       arXiv:1905.12322, 2019.

    Examples
    --------
    >>> check_first_interpolated_collision(None, factor=5.0)
    Not attempted yet.
    Replace the placeholder with your function first_collision(s) (or the first integer t), then run the
    cell again.
    >>> def first_collision(s):
    ...     return 256
    >>> check_first_interpolated_collision(first_collision, factor=5.0)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: the result of your function with s = 5, 256, is not yet the first
    collision. Hint: that is where the integer positions collide. With position interpolation the stored
    numbers are t/s, not t.
    """
    factor = require_positive_real(factor, "factor")
    if factor < 1:
        raise ValueError(f"factor must be a scale s >= 1, got {factor!r}")
    if factor > 1024:
        raise ValueError(f"factor must be at most 1024 (a search over at most a few million positions), got {factor!r}")
    dtype = require_choice(dtype, "dtype", tuple(_SIGNIFICAND_BITS))
    if is_placeholder(answer):
        return not_attempted("your function first_collision(s) (or the first integer t)")
    expected = _first_collision(factor, dtype)
    summary = f"from t = {expected} on, {dtype} cannot tell t/s from (t+1)/s for s = {factor:g}"
    if callable(answer):
        others = _check_collision_function(answer, factor, dtype)
        scales = ", ".join(f"{s:g}" for s in others)
        return passed(f"{summary}, and your function finds the first collision for s = {scales} too.")
    value = _collision_value(answer, "your position")
    failure = _collision_failure(value, factor, dtype, name="your position")
    if failure:
        raise CheckFailed(failure)
    return passed(f"{summary}.")
