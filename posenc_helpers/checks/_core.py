"""Machinery shared by the exercise checks.

A check is called with the student's answer (and whatever context the
exercise defines). It

* returns a :class:`CheckResult` that reads ``Not attempted yet ...`` and is
  falsy when the answer is still the placeholder (``None`` or ``...``), so
  "Run all" works on an untouched notebook;
* raises :class:`CheckFailed` (an ``AssertionError``) with a helpful message
  when the answer is wrong: what was expected (shape, meaning) and where the
  answer first differs, never the expected values themselves;
* returns a truthy :class:`CheckResult` that reads ``Correct: ...`` when the
  answer is right.

Placed last in a cell, the result shows its message; a grader can use
``bool(result)`` or ``result.status``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "CheckFailed",
    "CheckResult",
    "is_placeholder",
    "not_attempted",
    "passed",
    "compare_arrays",
]


class CheckFailed(AssertionError):
    """Raised by a check when an answer is wrong; the message says how, not what is right."""


class CheckResult:
    """Outcome of a check that did not fail: ``status`` is ``"correct"`` or ``"not attempted"``.

    Truthy only when correct; its ``repr`` is the message, so a check placed
    last in a notebook cell displays one readable line.
    """

    __slots__ = ("status", "message")

    def __init__(self, status: str, message: str) -> None:
        if status not in ("correct", "not attempted"):
            raise ValueError(f"status must be 'correct' or 'not attempted', got {status!r}")
        self.status = status
        self.message = message

    def __bool__(self) -> bool:
        return self.status == "correct"

    def __repr__(self) -> str:
        return self.message


def is_placeholder(answer: Any) -> bool:
    """True for the exercise placeholders ``None`` and ``...`` (Ellipsis)."""
    return answer is None or answer is Ellipsis


def not_attempted(what: str) -> CheckResult:
    """The result for an untouched exercise (falsy)."""
    return CheckResult(
        "not attempted",
        f"Not attempted yet.\nReplace the placeholder with {what}, then run the cell again.",
    )


def passed(message: str) -> CheckResult:
    """The result for a right answer (truthy)."""
    return CheckResult("correct", f"Correct: {message}")


def _format_index(index: tuple[int, ...], axes: Sequence[str]) -> str:
    names = list(axes) + [f"axis {i}" for i in range(len(axes), len(index))]
    return ", ".join(f"{name} {i}" for name, i in zip(names, index, strict=False))


def as_answer_array(answer: Any, name: str) -> np.ndarray:
    """Convert an answer to a float array or fail with a message about its type."""
    try:
        array = np.asarray(answer, dtype=np.float64)
    except (TypeError, ValueError):
        raise CheckFailed(
            f"{name} should be a numpy array of numbers; got {type(answer).__name__}, which cannot be converted to one."
        ) from None
    return array


def compare_arrays(
    answer: Any,
    expected: np.ndarray,
    *,
    name: str,
    description: str,
    axes: Sequence[str] = (),
    atol: float = 1e-8,
    rtol: float = 1e-6,
    known_mistakes: Sequence[tuple[np.ndarray, str]] = (),
) -> None:
    """Raise :class:`CheckFailed` unless ``answer`` matches ``expected``.

    Parameters
    ----------
    answer : array_like
        The student's answer.
    expected : numpy.ndarray
        The reference (never shown in messages).
    name : str
        How the answer is called in the exercise, e.g. ``"P"``.
    description : str
        What the answer should be, e.g. ``"the 3 x 3 permutation matrix"``.
    axes : sequence of str, optional
        Names of the axes, used to say where the first difference is.
    atol, rtol : float, optional
        Tolerances, as in :func:`numpy.allclose`.
    known_mistakes : sequence of (array, str), optional
        Wrong answers that a common mistake produces, each with a hint. If the
        answer equals one of them, the hint is added to the message.
    """
    array = as_answer_array(answer, name)
    if array.shape != expected.shape:
        hint = ""
        if array.ndim == 2 and array.shape == expected.shape[::-1]:
            hint = " It looks transposed."
        raise CheckFailed(
            f"{name} should be {description}, of shape {expected.shape}; yours has shape {array.shape}.{hint}"
        )
    if not np.all(np.isfinite(array)):
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(array))[0])
        raise CheckFailed(f"{name} holds a non-finite value (NaN or inf) at {_format_index(where, axes)}.")
    close = np.isclose(array, expected, atol=atol, rtol=rtol)
    if close.all():
        return
    for mistake, hint in known_mistakes:
        if mistake.shape == array.shape and np.allclose(array, mistake, atol=atol, rtol=rtol):
            raise CheckFailed(f"{name} is not yet {description}. Hint: {hint}")
    first = tuple(int(i) for i in np.argwhere(~close)[0])
    count = int((~close).sum())
    raise CheckFailed(
        f"{name} is not yet {description}: {count} of {close.size} entries differ. "
        f"The first is at {_format_index(first, axes)}, where yours is "
        f"{array[first]:.6g}."
    )
