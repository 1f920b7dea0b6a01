"""Checks for chapter 03: encodings made of sines only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._validation import as_real_array, require_count, require_finite, require_positive_real
from ..metrics import linear_shift_fit
from ._compare import Precision, as_answer_array, as_whole_number, call_student_function, compare_number
from ._core import CheckFailed, CheckResult, is_placeholder, not_attempted, passed

__all__ = ["check_period_and_first_repeat", "check_shift_residual"]

_SEARCH_LIMIT = 1_000_000  # positions searched for the first near-repeat

# (omega, tolerance) pairs on which a function answer for the first near-repeat is also tried.
_HIDDEN_REPEATS = ((1.0, 0.05), (0.5, 0.02), (0.25, 0.02))

#: The precisions exercises 3.1 (the period, in tokens) and 3.2 (the relative residual) state
#: in their questions, and what the checks accept.
PERIOD_PRECISION = Precision(2)
RESIDUAL_PRECISION = Precision(4)


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


def _period(omega: float) -> float:
    return 2.0 * np.pi / omega


def _period_mistakes(omega: float) -> list[tuple[float, str]]:
    return [
        (1.0 / omega, "this is 1/ω: the angle ω t is in radians, and a full turn is 2π radians, not 1."),
        (
            np.pi / omega,
            "this is half a turn (π radians), where sin mirrors its values; the wave repeats only after a full turn.",
        ),
        (
            2.0 * np.pi * omega,
            "this is 2π·ω; the period is the angle of a turn divided by the angle gained per token.",
        ),
        (360.0 / omega, "this counts a turn as 360; numpy's sin works in radians."),
    ]


def _check_repeat_position(answer: int, omega: float, tolerance: float) -> None:
    """Fail unless ``answer`` is the first near-repeat for ``omega`` and ``tolerance``."""
    if answer < 1:
        raise CheckFailed("first_repeat should be a position t >= 1 (t = 0 is the position being repeated).")
    gap = float(_turn_gap(np.array([answer], dtype=np.float64), omega)[0])
    if gap >= tolerance:
        hint = ""
        period = _period(omega)
        if answer in (int(np.floor(period)), int(np.ceil(period)), int(round(period))):
            hint = (
                " Rounding the period is not enough: the period is not a whole number of tokens, so "
                "after one period's worth of tokens the angle is off by the rounding. Test the angle "
                "of every candidate position."
            )
        raise CheckFailed(
            f"at t = {answer} the angle ω t is {gap:.3g} rad away from the nearest whole turn, which is not "
            f"within the tolerance {tolerance:g} rad.{hint}"
        )
    if answer != _first_repeat(omega, tolerance):
        raise CheckFailed(
            f"t = {answer} is a near-repeat (its angle is within {tolerance:g} rad of a whole turn), but not the "
            "first one. Test every position from t = 1 on, in order, and stop at the first near-repeat."
        )


def _check_repeat_function(function: Callable[..., Any], omega: float, tolerance: float) -> int:
    """Run a function answer on the exercise's frequency and on the hidden ones; return its exercise answer."""
    call = f"first_repeat(omega={omega:g}, tolerance={tolerance:g})"
    answer = as_whole_number(
        call_student_function(function, omega, tolerance, call=call), f"the result of {call}", "position"
    )
    _check_repeat_position(answer, omega, tolerance)
    for other_omega, other_tolerance in _HIDDEN_REPEATS:
        call = f"first_repeat(omega={other_omega:g}, tolerance={other_tolerance:g})"
        result = as_whole_number(
            call_student_function(function, other_omega, other_tolerance, call=call),
            f"the result of {call}",
            "position",
        )
        try:
            _check_repeat_position(result, other_omega, other_tolerance)
        except CheckFailed as failure:
            raise CheckFailed(
                f"your function works for the exercise's frequency, but {call} returns {result}, which is not "
                f"the first near-repeat there: {failure}"
            ) from None
    return answer


def check_period_and_first_repeat(
    period: Any,
    first_repeat: Any,
    *,
    omega: float,
    tolerance: float,
) -> CheckResult:
    """Check the period of ``sin(omega t)`` and its first near-repeat among integer positions.

    The period is counted in tokens, to two decimal places, as the exercise
    asks: a period that rounds to the exact one at two decimals passes, and
    one right to fewer digits is told to give more. The first near-repeat is the first integer position
    ``t >= 1`` whose angle lies within ``tolerance`` radians of a whole number
    of turns (chapter 03), compared exactly. Named mistakes for the period,
    recognised at the same precision: forgetting that a turn is ``2 pi``
    radians, half a turn, multiplying by the frequency, a turn of 360; for the
    position: a position that is not a near-repeat (such as the rounded
    period) and a near-repeat that is not the first. No message says on which
    side of the answer a wrong period or position lies.

    The graded form of ``first_repeat`` is a function ``first_repeat(omega,
    tolerance)`` returning the position: the check calls it on the exercise's
    values and on other frequencies and tolerances, so a guess cannot pass. A
    whole number is still accepted for the exercise's values alone (it can
    be found by trying values).

    Parameters
    ----------
    period : float or None
        The student's period, in tokens (``None`` or ``...`` while not attempted).
    first_repeat : int, callable or None
        The student's first near-repeat position, or the function.
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
        If the period or the position is wrong; the message says how, never
        the expected value or a direction.
    TypeError, ValueError
        If ``omega`` or ``tolerance`` is not allowed.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017,
       section 3.5 (wavelengths ``2 pi / omega``).

    Examples
    --------
    >>> check_period_and_first_repeat(None, None, omega=1.0, tolerance=0.05)
    Not attempted yet.
    Replace the placeholder with your period (in tokens, to two decimal places) and, below it, first_repeat, then
    run the cell again.
    >>> check_period_and_first_repeat(1.0, None, omega=1.0, tolerance=0.05)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: period is not yet the number of tokens after which ω t has grown
    by one full turn. Hint: this is 1/ω: the angle ω t is in radians, and a full turn is 2π radians, not 1.
    """
    omega = require_positive_real(omega, "omega")
    tolerance = require_positive_real(tolerance, "tolerance")
    if tolerance >= np.pi:
        raise ValueError(f"tolerance must be below pi (half a turn), got {tolerance!r}")
    if is_placeholder(period):
        return not_attempted(f"your period (in tokens, to {PERIOD_PRECISION.words}) and, below it, first_repeat")
    expected_period = _period(omega)
    compare_number(
        period,
        expected_period,
        name="period",
        description="the number of tokens after which ω t has grown by one full turn",
        precision=PERIOD_PRECISION,
        what="number of tokens",
        known_mistakes=_period_mistakes(omega),
    )
    if is_placeholder(first_repeat):
        return not_attempted("first_repeat: the first position t >= 1 whose angle is within tolerance of a whole turn")
    if callable(first_repeat):
        answer = _check_repeat_function(first_repeat, omega, tolerance)
        others = "; your function finds it, and the first near-repeat for other frequencies and tolerances too"
    else:
        answer = as_whole_number(first_repeat, "first_repeat", "position")
        _check_repeat_position(answer, omega, tolerance)
        others = ""
    return passed(
        f"sin(ω t) repeats every {expected_period:.4g} tokens, and t = {answer} "
        f"({omega * answer / (2.0 * np.pi):.3f} turns) is the first integer position within {tolerance:g} rad "
        f"of a whole turn{others}."
    )


def _residuals(values: np.ndarray, offset: int) -> tuple[float, list[tuple[float, str]], np.ndarray]:
    """The expected relative residual, the scalar answers of named mistakes, and lstsq's own per-column residuals."""
    _, expected = linear_shift_fit(values, offset)
    source, target = values[:-offset], values[offset:]
    target_norm = float(np.linalg.norm(target))
    solution, *_ = np.linalg.lstsq(source, target, rcond=None)
    per_column = np.sum((source @ solution - target) ** 2, axis=0)  # what lstsq returns as its residuals
    absolute = float(np.sqrt(per_column.sum()))
    _, backwards = linear_shift_fit(values[::-1], offset)
    unfitted = float(np.linalg.norm(target - source)) / target_norm if target_norm else 0.0
    lstsq_hint = (
        "np.linalg.lstsq's second output is the sum of squared residuals of each target column; add them "
        "up, take the square root, and divide by the norm of the target rows."
    )
    mistakes = [
        (
            absolute,
            "this is the absolute residual |E_source M^T - E_target|; divide it by the "
            "norm of the target rows |E_target| to make it relative.",
        ),
        (
            expected**2,
            "this looks squared; take the norm (square root of the sum of squares), not the sum of squares.",
        ),
        (absolute**2, "this is a sum of squared residuals, as lstsq reports it. " + lstsq_hint),
        (
            absolute**2 / target_norm if target_norm else 0.0,
            "you divided lstsq's squared residuals by the target norm. " + lstsq_hint,
        ),
        (
            float(np.sqrt(per_column).sum()) / target_norm if target_norm else 0.0,
            "you added up the residual norms of the columns one by one; the Frobenius norm is the square "
            "root of the total of the squares. " + lstsq_hint,
        ),
        (
            backwards,
            "this fits the other direction (PE(t + φ) to PE(t)); the source rows are "
            "E[:-offset] and the targets E[offset:].",
        ),
        (
            unfitted,
            "this compares PE(t + φ) with PE(t) directly (M = identity); first find the "
            "best M with np.linalg.lstsq, then measure what it misses.",
        ),
    ]
    return expected, mistakes, per_column


def check_shift_residual(answer: Any, table: Any, offset: int) -> CheckResult:
    """Check the relative least-squares residual of the best shift matrix for a table.

    The answer is the relative residual of the exercise (chapter 03): how far
    the single best matrix stays from mapping every row of ``table`` to the
    row ``offset`` later, relative to the size of those later rows, to four
    decimal places, as the exercise asks: an answer that rounds to the exact
    residual at four decimals passes, and one right to fewer digits is told to
    give more. Named mistakes, recognised at the same precision: the absolute
    residual, a squared norm, the fit in the other direction, no fit at all,
    and using the residuals that ``np.linalg.lstsq`` returns itself as they
    come (one sum of squares per column, their total, or their square roots
    added up). Any other wrong value gets one message, whichever side of the
    residual it lies on.

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
        If the residual is wrong; the message names the likely mistake, or
        says that the answer is close but lacks digits, never the residual.
    TypeError, ValueError
        If ``table`` or ``offset`` is not allowed.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017,
       section 3.5 (the linear-shift property).

    Examples
    --------
    >>> from posenc_helpers import sine_only_encoding
    >>> table = sine_only_encoding(50, 3)
    >>> check_shift_residual(None, table, 2)
    Not attempted yet.
    Replace the placeholder with your relative residual, to four decimal places (one number), then run the cell
    again.
    >>> check_shift_residual(-0.5, table, 2)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: residual should be a ratio of two norms, so it cannot be negative.
    """
    values = as_real_array(table, "table").astype(np.float64)
    if values.ndim != 2:
        raise ValueError(f"table must be 2-D (positions x features), got shape {values.shape}")
    require_finite(values, "table")
    offset = require_count(offset, "offset", minimum=1)
    if offset >= values.shape[0]:
        raise ValueError(f"offset must be smaller than the number of rows ({values.shape[0]}), got {offset}")
    if is_placeholder(answer):
        return not_attempted(f"your relative residual, to {RESIDUAL_PRECISION.words} (one number)")
    array = as_answer_array(answer, "residual")
    expected, mistakes, per_column = _residuals(values, offset)
    if array.size != 1:
        hint = ""
        if array.shape == per_column.shape and np.allclose(array, per_column, rtol=1e-5, atol=1e-12):
            hint = (
                " It looks like np.linalg.lstsq's second output: the sum of squared residuals of each "
                "target column. Add them up, take the square root, and divide by the norm of the target rows."
            )
        raise CheckFailed(f"residual should be a single number; yours has shape {array.shape}.{hint}")
    value = float(array.ravel()[0])
    if np.isfinite(value) and value < 0:
        raise CheckFailed("residual should be a ratio of two norms, so it cannot be negative.")
    compare_number(
        answer,
        expected,
        name="residual",
        description=f"the relative residual of the best matrix mapping PE(t) to PE(t + {offset})",
        precision=RESIDUAL_PRECISION,
        what="ratio of two norms",
        known_mistakes=mistakes,
    )
    return passed(
        f"the best single matrix still misses PE(t + {offset}) by {100 * expected:.3g}% of its size.",
        check="check_shift_residual",
    )
