"""Checks for chapter 03: encodings made of sines only."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import as_real_array, check_count, check_finite, check_positive_real
from ..metrics import linear_shift_fit
from ._core import (
    CheckFailed,
    CheckResult,
    as_answer_array,
    compare_arrays,
    is_placeholder,
    not_attempted,
    passed,
)

__all__ = ["check_period_and_first_repeat", "check_shift_residual"]

_SEARCH_LIMIT = 1_000_000  # positions searched for the first near-repeat


def _turn_gap(positions: np.ndarray, omega: float) -> np.ndarray:
    """Distance (radians) of ``omega * t`` from the nearest whole number of turns."""
    angle = np.mod(omega * positions, 2.0 * np.pi)
    return np.minimum(angle, 2.0 * np.pi - angle)


def _first_repeat(omega: float, tolerance: float) -> int:
    for start in range(1, _SEARCH_LIMIT, 100_000):
        t = np.arange(start, start + 100_000, dtype=np.float64)
        hits = np.flatnonzero(_turn_gap(t, omega) < tolerance)
        if hits.size:
            return int(t[hits[0]])
    raise ValueError(
        f"no position up to {_SEARCH_LIMIT} comes within tolerance={tolerance} of a whole turn "
        f"for omega={omega}; use a larger tolerance"
    )


def _whole_position(answer: Any, name: str) -> int:
    array = as_answer_array(answer, name)
    if array.size != 1:
        raise CheckFailed(f"{name} should be one position (a single whole number); yours has shape {array.shape}.")
    value = float(array.ravel()[0])
    if not np.isfinite(value) or value != round(value):
        raise CheckFailed(f"{name} should be a whole number of tokens (an integer position); yours is {value:.6g}.")
    return int(round(value))


def check_period_and_first_repeat(
    period: Any,
    first_repeat: Any,
    *,
    omega: float,
    tolerance: float,
) -> CheckResult:
    """Check the period of ``sin(omega t)`` and its first near-repeat among integer positions.

    The period is the number of tokens after which the angle ``omega t`` has
    grown by one full turn, ``2 pi`` radians. Because it is (almost always) not
    a whole number, integer positions never repeat exactly; the first
    near-repeat is the smallest integer ``t >= 1`` whose angle ``omega t`` lies
    within ``tolerance`` radians of a whole number of turns.

    Parameters
    ----------
    period : float or None
        The student's period, in tokens (``None`` or ``...`` while not attempted).
    first_repeat : int or None
        The student's first near-repeat position.
    omega : float
        Angular frequency in radians per token, ``> 0``.
    tolerance : float
        Largest distance from a whole turn that counts as a near-repeat, in
        radians, ``0 < tolerance < pi``.

    Returns
    -------
    CheckResult
        Truthy if both are correct, falsy while either is not attempted.

    Raises
    ------
    CheckFailed
        If the period or the position is wrong; the message says how.
    TypeError, ValueError
        If ``omega`` or ``tolerance`` is not allowed.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017,
       section 3.5 (wavelengths ``2 pi / omega``).

    Examples
    --------
    >>> import numpy as np
    >>> check_period_and_first_repeat(2 * np.pi, 44, omega=1.0, tolerance=0.05)
    Correct: sin(ω t) repeats every 6.283 tokens, and t = 44 (7.003 turns) is the first integer position within 0.05 rad of a whole turn.
    """
    omega = check_positive_real(omega, "omega")
    tolerance = check_positive_real(tolerance, "tolerance")
    if tolerance >= np.pi:
        raise ValueError(f"tolerance must be below pi (half a turn), got {tolerance!r}")
    if is_placeholder(period):
        return not_attempted("your period (in tokens) and, below it, first_repeat")
    expected_period = 2.0 * np.pi / omega
    period_array = as_answer_array(period, "period")
    if period_array.size != 1:
        raise CheckFailed(f"period should be a single number of tokens; yours has shape {period_array.shape}.")
    compare_arrays(
        period_array.reshape(()),
        np.array(expected_period),
        name="period",
        description="the number of tokens after which ω t has grown by one full turn",
        atol=1e-9,
        rtol=1e-6,
        known_mistakes=[
            (np.array(1.0 / omega), "this is 1/ω: the angle ω t is in radians, and a full turn is 2π radians, not 1."),
            (
                np.array(np.pi / omega),
                "this is half a turn (π radians), where sin mirrors its values; the wave "
                "repeats only after a full turn.",
            ),
            (
                np.array(2.0 * np.pi * omega),
                "this is 2π·ω; the period is the angle of a turn divided by the angle gained per token.",
            ),
            (np.array(360.0 / omega), "this counts a turn as 360; numpy's sin works in radians."),
        ],
    )
    if is_placeholder(first_repeat):
        return not_attempted("first_repeat: the first position t >= 1 whose angle is within tolerance of a whole turn")
    answer = _whole_position(first_repeat, "first_repeat")
    if answer < 1:
        raise CheckFailed("first_repeat should be a position t >= 1 (t = 0 is the position being repeated).")
    gap = float(_turn_gap(np.array([answer], dtype=np.float64), omega)[0])
    if gap >= tolerance:
        hint = ""
        if answer in (int(np.floor(expected_period)), int(np.ceil(expected_period)), int(round(expected_period))):
            hint = (
                " Rounding the period is not enough: the period is not a whole number of tokens, so "
                "after one period's worth of tokens the angle is off by the rounding. Test the angle "
                "of every candidate position."
            )
        raise CheckFailed(
            f"at t = {answer} the angle ω t is {gap:.3g} rad away from the nearest whole turn, which is not "
            f"within the tolerance {tolerance:g} rad.{hint}"
        )
    expected = _first_repeat(omega, tolerance)
    if answer != expected:
        raise CheckFailed(
            f"t = {answer} is a near-repeat (its angle is within {tolerance:g} rad of a whole turn), but not the "
            "first one: a smaller position also qualifies. Scan all positions from 1 upward."
        )
    return passed(
        f"sin(ω t) repeats every {expected_period:.4g} tokens, and t = {answer} "
        f"({omega * answer / (2.0 * np.pi):.3f} turns) is the first integer position within {tolerance:g} rad "
        "of a whole turn."
    )


def check_shift_residual(answer: Any, table: Any, offset: int) -> CheckResult:
    """Check a relative least-squares residual of the best shift matrix for a table.

    The residual is ``|E[:-offset] @ M.T - E[offset:]|_F / |E[offset:]|_F`` for
    the matrix ``M`` that minimises it, i.e. how far the best single matrix
    stays from mapping every row ``PE(t)`` to ``PE(t + offset)``.

    Parameters
    ----------
    answer : float or None
        The student's relative residual (``None`` or ``...`` while not attempted).
    table : array_like
        The encoding table ``E``, shape ``(n, d)``, finite real values.
    offset : int
        The shift in rows, ``1 <= offset < n``.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted.

    Raises
    ------
    CheckFailed
        If the residual is wrong; the message names the likely mistake.
    TypeError, ValueError
        If ``table`` or ``offset`` is not allowed.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017,
       section 3.5 (the linear-shift property).

    Examples
    --------
    >>> import numpy as np
    >>> from posenc_helpers import linear_shift_fit, sine_only_encoding
    >>> table = sine_only_encoding(50, 3)
    >>> check_shift_residual(linear_shift_fit(table, 2)[1], table, 2)
    Correct: the best single matrix still misses PE(t + 2) by 60.9% of its size.
    """
    values = as_real_array(table, "table").astype(np.float64)
    if values.ndim != 2:
        raise ValueError(f"table must be 2-D (positions x features), got shape {values.shape}")
    check_finite(values, "table")
    offset = check_count(offset, "offset", minimum=1)
    if offset >= values.shape[0]:
        raise ValueError(f"offset must be smaller than the number of rows ({values.shape[0]}), got {offset}")
    if is_placeholder(answer):
        return not_attempted("your relative residual (one number)")
    array = as_answer_array(answer, "residual")
    if array.size != 1:
        raise CheckFailed(f"residual should be a single number; yours has shape {array.shape}.")
    value = float(array.ravel()[0])
    if np.isfinite(value) and value < 0:
        raise CheckFailed("residual should be a ratio of two norms, so it cannot be negative.")
    _, expected = linear_shift_fit(values, offset)
    source, target = values[:-offset], values[offset:]
    target_norm = float(np.linalg.norm(target))
    solution, *_ = np.linalg.lstsq(source, target, rcond=None)
    absolute = float(np.linalg.norm(source @ solution - target))
    _, backwards = linear_shift_fit(values[::-1], offset)
    unfitted = float(np.linalg.norm(target - source)) / target_norm if target_norm else 0.0
    compare_arrays(
        np.array(value),
        np.array(expected),
        name="residual",
        description=f"the relative residual of the best matrix mapping PE(t) to PE(t + {offset})",
        atol=1e-12,
        rtol=1e-6,
        known_mistakes=[
            (
                np.array(absolute),
                "this is the absolute residual |E_source M^T - E_target|; divide it by the "
                "norm of the target rows |E_target| to make it relative.",
            ),
            (
                np.array(expected**2),
                "this looks squared; take the norm (square root of the sum of squares), not the sum of squares.",
            ),
            (
                np.array(backwards),
                "this fits the other direction (PE(t + φ) to PE(t)); the source rows are "
                "E[:-offset] and the targets E[offset:].",
            ),
            (
                np.array(unfitted),
                "this compares PE(t + φ) with PE(t) directly (M = identity); first find the "
                "best M with np.linalg.lstsq, then measure what it misses.",
            ),
        ],
    )
    return passed(f"the best single matrix still misses PE(t + {offset}) by {100 * value:.3g}% of its size.")
