"""Checks for chapter 02: the raw index and the index normalised to ``[0, 1]``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._validation import require_lengths, require_positive_real
from ._compare import as_whole_number, call_student_function, compare_arrays
from ._core import CheckFailed, CheckResult, is_placeholder, not_attempted, passed

__all__ = ["check_step_table", "check_first_dominant_position"]

# The width of the embeddings of section 2.1, which a student may carry over to the exercise.
_SECTION_WIDTH = 64


def _lengths(lengths: Sequence[int]) -> np.ndarray:
    return np.array(require_lengths(lengths), dtype=np.float64)


def _steps(n: np.ndarray) -> np.ndarray:
    return 1.0 / (n - 1.0)


def _step_mistakes(n: np.ndarray) -> list[tuple[np.ndarray, str]]:
    return [
        (1.0 / n, "you divided by n. Positions run from 0 to n - 1, and the last one must land exactly on 1."),
        (n - 1.0, "you computed the number of steps, not the size of one step."),
        (
            (n - 1.0) / n,
            "that is where the second-to-last token would land if you "
            "divided by n; the step is the distance between neighbours.",
        ),
    ]


def check_step_table(answer: Any, lengths: Sequence[int]) -> CheckResult:
    """Check the step between neighbouring normalised positions for several lengths.

    The answer holds, for every sentence length in ``lengths`` and in the same
    order, the distance between two neighbouring positions once the positions
    of that sentence are normalised to ``[0, 1]`` (chapter 02). Named mistakes:
    dividing by the length instead of what the normalisation divides by, the
    number of steps instead of the size of one, and the place of the
    second-to-last token.

    Parameters
    ----------
    answer : array_like or None
        The steps, shape ``(len(lengths),)`` (``None`` or ``...`` while not
        attempted).
    lengths : sequence of int
        Sentence lengths, each ``>= 2``.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the steps are wrong; the message says where and hints at common
        mistakes, without giving the steps.
    TypeError, ValueError
        If ``lengths`` is not a non-empty sequence of integers ``>= 2``.

    References
    ----------
    .. [1] A. Kazemnejad, "Transformer Architecture: The Positional Encoding",
       2019 (the length-dependent step of normalised positions).

    Examples
    --------
    >>> check_step_table(None, lengths=[2, 4])
    Not attempted yet.
    Replace the placeholder with an array with one step per length, then run the cell again.
    >>> check_step_table([0.5, 0.25], lengths=[2, 4])
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: steps are not yet the step between neighbouring normalised
    positions, one entry per length. Hint: you divided by n. Positions run from 0 to n - 1, and the
    last one must land exactly on 1.
    """
    n = _lengths(lengths)
    if is_placeholder(answer):
        return not_attempted("an array with one step per length")
    compare_arrays(
        answer,
        _steps(n),
        name="steps",
        description="the step between neighbouring normalised positions, one entry per length",
        axes=("entry",),
        atol=0.0,  # steps are positive: compared relatively only
        rtol=1e-9,
        known_mistakes=_step_mistakes(n),
        plural=True,
    )
    return passed("one step is 1/(n-1) of the sentence, so it shrinks as sentences grow.")


def _embedding_table(embeddings: Any) -> np.ndarray:
    table = np.asarray(embeddings, dtype=np.float64)
    if table.ndim != 2 or table.shape[0] < 1 or table.shape[1] < 1:
        raise ValueError(f"embeddings must be a 2-D array (vocabulary, d), got shape {table.shape}")
    if not np.all(np.isfinite(table)):
        raise ValueError("embeddings must be finite")
    return table


def _first_reaching(typical: float, factor: float, length_per_token: float) -> int:
    return int(np.ceil(factor * typical / length_per_token))


def _dominant(table: np.ndarray, factor: float) -> tuple[int, list[tuple[int, str]]]:
    """The expected position for a table, and the positions that named mistakes give, with hints."""
    norms = np.linalg.norm(table, axis=1)
    median, mean = float(np.median(norms)), float(np.mean(norms))
    d = table.shape[1]
    expected = _first_reaching(median, factor, np.sqrt(d))
    mistakes = [
        (
            _first_reaching(median, factor, 1.0),
            "the position vector holds t in every one of the d features, so its norm is t * sqrt(d), not t.",
        ),
        (
            _first_reaching(median, factor, float(d)),
            "the norm of a vector with t in each of its d features is t * sqrt(d), not t * d.",
        ),
        (_first_reaching(mean, factor, np.sqrt(d)), "use the median row norm as the typical norm, not the mean."),
        (expected - 1, "at that position the index is still just short of the threshold; round up, not down."),
    ]
    if d != _SECTION_WIDTH:
        mistakes.append(
            (
                _first_reaching(median, factor, np.sqrt(_SECTION_WIDTH)),
                f"you used d = {_SECTION_WIDTH}, the width of section 2.1; these embeddings have "
                f"{d} columns, so d = {d} here.",
            )
        )
    return expected, [(position, hint) for position, hint in mistakes if position != expected]


def _hints(position: int, mistakes: list[tuple[int, str]]) -> str:
    hints = list(dict.fromkeys(hint for value, hint in mistakes if value == position))
    return (" Hint: " + " ".join(hints)) if hints else ""


def _hidden_tables() -> list[tuple[np.ndarray, float]]:
    """Tables a function answer must also get right: other widths, norms whose mean is not their median."""

    def rows_of_norms(norms: list[float], width: int) -> np.ndarray:
        return np.repeat((np.asarray(norms) / np.sqrt(width))[:, None], width, axis=1)

    return [(rows_of_norms([1.0, 2.0, 2.0, 3.0, 12.0], 16), 9.0), (rows_of_norms([0.5, 0.8, 1.0, 1.5, 7.0], 100), 35.0)]


def _check_function(function: Callable[..., Any], table: np.ndarray, factor: float) -> CheckResult:
    expected, mistakes = _dominant(table, factor)
    call = f"your function with the exercise's embeddings and factor = {factor:g}"
    position = as_whole_number(
        call_student_function(function, table, factor, call=call), f"the result of {call}", "position"
    )
    if position != expected:
        raise CheckFailed(f"{call} returns {position}, which is {_not_first(factor)}{_hints(position, mistakes)}")
    for other, other_factor in _hidden_tables():
        other_expected, other_mistakes = _dominant(other, other_factor)
        rows, width = other.shape
        call = f"your function with another table ({rows} rows of width {width}, factor {other_factor:g})"
        result = as_whole_number(
            call_student_function(function, other, other_factor, call=call),
            f"the result of {call}",
            "position",
        )
        if result != other_expected:
            raise CheckFailed(
                f"{call} returns {result}, which is not the first position where the raw index dominates "
                f"there: your function must work for any table and factor.{_hints(result, other_mistakes)}"
            )
    return passed(
        f"from position {expected} on, the raw index is at least {factor:g} times as long as a typical "
        "embedding, and your function finds the first such position for other tables and factors too."
    )


def _not_first(factor: float) -> str:
    """What a wrong position is not, the same words whichever side of the answer it lies on."""
    return (
        f"not the first position whose index vector is at least {factor:g} times as long as a typical "
        "embedding (the median row norm)."
    )


def check_first_dominant_position(answer: Any, embeddings: np.ndarray, factor: float) -> CheckResult:
    """Check the first position at which the raw index swamps a typical embedding.

    The position vector of chapter 02's raw index holds the position in every
    feature. The answer is the first position whose vector is at least
    ``factor`` times as long as a typical embedding of ``embeddings`` (the
    median row norm, as in the chapter).

    The graded form of the answer is a function ``first_position(embeddings,
    factor)`` returning that position: the check calls it on the exercise's
    table and on other tables (other widths, norms whose mean and median
    differ), so a guess cannot pass. A whole number is still accepted for the
    exercise's table alone; it cannot tell a median from a mean when both give
    the same position, and it can be found by trying values.

    Named mistakes: forgetting that the index fills every feature, the width
    in place of its square root, the mean instead of the median, rounding
    down, and the width of section 2.1 in place of that of ``embeddings``.
    Any other wrong position gets one message, which does not say whether
    the answer comes before or after the right one (that would let a guess
    be narrowed down by halves).

    Parameters
    ----------
    answer : int, callable or None
        The position, or the function (``None`` or ``...`` while not
        attempted).
    embeddings : numpy.ndarray
        Token embeddings, shape ``(vocabulary, d)``, finite.
    factor : float
        How many times the typical norm the index must reach, ``> 0``.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the position is wrong, or not a whole number, or the function
        fails or gives a wrong position for one of the tables; never the
        expected position or a direction.
    TypeError, ValueError
        If ``embeddings`` is not a finite 2-D array or ``factor`` is not a
        positive number.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017,
       section 3.5 (position signals are added to the embeddings).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.zeros((3, 4)); x[:, 0] = [3.0, 4.0, 5.0]
    >>> check_first_dominant_position(None, x, factor=10)
    Not attempted yet.
    Replace the placeholder with your function first_position(embeddings, factor), then run the cell again.
    >>> check_first_dominant_position(0, x, factor=10)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: position 0 is not the first position whose index vector is at least 10
    times as long as a typical embedding (the median row norm).
    """
    table = _embedding_table(embeddings)
    factor = require_positive_real(factor, "factor")
    if is_placeholder(answer):
        return not_attempted("your function first_position(embeddings, factor)")
    if callable(answer):
        return _check_function(answer, table, factor)
    if isinstance(answer, bool | np.bool_):
        raise CheckFailed("the answer should be a position (a whole number of tokens), not a boolean.")
    try:
        values = np.asarray(answer, dtype=np.float64)
    except (TypeError, ValueError):
        raise CheckFailed(
            f"the answer should be a single position (an integer); got {type(answer).__name__}."
        ) from None
    if values.size != 1:
        raise CheckFailed(f"the answer should be a single position (an integer); yours has shape {values.shape}.")
    value = float(values.ravel()[0])
    if not np.isfinite(value) or value != np.floor(value):
        raise CheckFailed(
            "the answer should be a whole number of tokens; round up to the first integer "
            "position that reaches the threshold."
        )
    position = int(value)
    expected, mistakes = _dominant(table, factor)
    if position == expected:
        return passed(
            f"from position {position} on, the raw index is at least {factor:g} times as long as a typical embedding."
        )
    raise CheckFailed(f"position {position} is {_not_first(factor)}{_hints(position, mistakes)}")
