"""Checks for chapter 02: the raw index and the index normalised to ``[0, 1]``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._validation import check_lengths, check_positive_real
from ._core import CheckFailed, CheckResult, compare_arrays, is_placeholder, not_attempted, passed

__all__ = ["check_step_table", "check_first_dominant_position"]


def _lengths(lengths: Sequence[int]) -> np.ndarray:
    return np.array(check_lengths(lengths), dtype=np.float64)


def check_step_table(answer: Any, lengths: Sequence[int]) -> CheckResult:
    """Check the step between neighbouring normalised positions for several lengths.

    For a sentence of ``n`` tokens the normalised positions are ``t / (n - 1)``,
    so neighbours differ by ``1 / (n - 1)``. The answer holds that step for
    every length in ``lengths``, in the same order.

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
    >>> check_step_table([1.0, 0.5], lengths=[2, 3])
    Correct: one step is 1/(n-1) of the sentence, so it shrinks as sentences grow.
    >>> check_step_table(None, lengths=[2, 3])
    Not attempted yet.
    Replace the placeholder with an array with one step per length, then run the cell again.
    """
    n = _lengths(lengths)
    if is_placeholder(answer):
        return not_attempted("an array with one step per length")
    compare_arrays(
        answer,
        1.0 / (n - 1.0),
        name="steps",
        description="the step between neighbouring normalised positions, one entry per length",
        axes=("entry",),
        atol=1e-12,
        rtol=1e-9,
        known_mistakes=[
            (1.0 / n, "you divided by n. Positions run from 0 to n - 1, and the last one must land exactly on 1."),
            (n - 1.0, "you computed the number of steps, not the size of one step."),
            (
                (n - 1.0) / n,
                "that is where the second-to-last token would land if you "
                "divided by n; the step is the distance between neighbours.",
            ),
        ],
    )
    return passed("one step is 1/(n-1) of the sentence, so it shrinks as sentences grow.")


def _embedding_table(embeddings: Any) -> np.ndarray:
    table = np.asarray(embeddings, dtype=np.float64)
    if table.ndim != 2 or table.shape[0] < 1 or table.shape[1] < 1:
        raise ValueError(f"embeddings must be a 2-D array (vocabulary, d), got shape {table.shape}")
    if not np.all(np.isfinite(table)):
        raise ValueError("embeddings must be finite")
    return table


def check_first_dominant_position(answer: Any, embeddings: np.ndarray, factor: float) -> CheckResult:
    """Check the first position at which the raw index swamps a typical embedding.

    The position vector of position ``t`` holds ``t`` in every one of the
    ``d`` features, so its norm is ``t * sqrt(d)``. A typical embedding norm is
    the median of the row norms of ``embeddings``. The answer is the smallest
    integer ``t >= 0`` with ``t * sqrt(d) >= factor * median norm``.

    Parameters
    ----------
    answer : int or None
        The position (``None`` or ``...`` while not attempted).
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
        If the position is wrong, or not a whole number.
    TypeError, ValueError
        If ``embeddings`` is not a finite 2-D array or ``factor`` is not a
        positive number.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017,
       section 3.5 (position signals are added to the embeddings).

    Examples
    --------
    Rows of norm 3, 4 and 5 (median 4) in width 4, so ``sqrt(d) = 2``; ten
    times the median is 40, first reached at ``t = 20``:

    >>> import numpy as np
    >>> x = np.zeros((3, 4)); x[:, 0] = [3.0, 4.0, 5.0]
    >>> check_first_dominant_position(20, x, factor=10)
    Correct: from position 20 on, the raw index is at least 10 times as long as a typical embedding.
    """
    table = _embedding_table(embeddings)
    factor = check_positive_real(factor, "factor")
    if is_placeholder(answer):
        return not_attempted("the first position (an integer) where the index dominates")
    if isinstance(answer, (bool, np.bool_)):
        raise CheckFailed("the answer should be a position (a whole number of tokens), not a boolean.")
    try:
        value = float(np.asarray(answer, dtype=np.float64))
    except (TypeError, ValueError):
        raise CheckFailed(
            f"the answer should be a single position (an integer); got {type(answer).__name__}."
        ) from None
    if not np.isfinite(value) or value != np.floor(value):
        raise CheckFailed(
            "the answer should be a whole number of tokens; round up to the first integer "
            "position that reaches the threshold."
        )
    position = int(value)
    d = table.shape[1]
    typical = float(np.median(np.linalg.norm(table, axis=1)))
    expected = int(np.ceil(factor * typical / np.sqrt(d)))
    if position == expected:
        return passed(
            f"from position {position} on, the raw index is at least {factor:g} times as long as a typical embedding."
        )
    hints = []
    if position == int(np.ceil(factor * typical)):
        hints.append("the position vector holds t in every one of the d features, so its norm is t * sqrt(d), not t.")
    if (
        position == int(np.ceil(factor * float(np.mean(np.linalg.norm(table, axis=1))) / np.sqrt(d)))
        and position != expected
    ):
        hints.append("use the median row norm as the typical norm, not the mean.")
    if position == expected - 1:
        hints.append("at your position the index is still just short of the threshold; round up, not down.")
    if position < expected:
        verdict = (
            f"too early: at your position the index vector is still shorter than {factor:g} times a typical embedding."
        )
    else:
        verdict = f"too late: an earlier position already reaches {factor:g} times a typical embedding."
    raise CheckFailed(f"position {position} is {verdict}" + (" Hint: " + " ".join(hints) if hints else ""))
