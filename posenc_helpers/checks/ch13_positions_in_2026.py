"""Checks for chapter 13: positions in 2026 models."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import require_count
from ._core import CheckResult, compare_arrays, is_placeholder, not_attempted, passed

__all__ = ["check_proportional_frequencies"]


def check_proportional_frequencies(answer: Any, n_positions: int) -> CheckResult:
    """Check the positions ``0 .. n_positions - 1`` of a sequence (a scaffold to replace).

    TODO(author): say what the exercise asks for and name the mistakes the check
    recognises (each gets a hint that teaches without giving the answer).

    Parameters
    ----------
    answer : array_like or None
        The student's positions, shape ``(n_positions,)`` (``None`` or ``...`` while
        not attempted).
    n_positions : int
        Length of the sequence, ``>= 1``.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the positions are wrong; the message says where, without the answer.
    TypeError, ValueError
        If ``n_positions`` is not a positive integer.

    Examples
    --------
    >>> check_proportional_frequencies(None, 4)
    Not attempted yet.
    Replace the placeholder with the positions of the sequence, then run the cell again.
    >>> check_proportional_frequencies([1, 2, 3, 4], 4)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: positions are not yet the positions of the sequence, counted from
    0. Hint: positions are counted from 0, not from 1.
    """
    n = require_count(n_positions, "n_positions", minimum=1)
    if is_placeholder(answer):
        return not_attempted("the positions of the sequence")
    expected = np.arange(n, dtype=float)
    compare_arrays(
        answer,
        expected,
        name="positions",
        description="the positions of the sequence, counted from 0",
        axes=("position",),
        atol=0.0,
        rtol=0.0,
        known_mistakes=[(expected + 1, "positions are counted from 0, not from 1.")],
        plural=True,
    )
    return passed(f"the {n} positions, counted from 0.")
