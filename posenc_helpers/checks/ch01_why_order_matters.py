"""Checks for chapter 01: attention without positions ignores word order."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..attention import scaled_dot_product_attention
from ._compare import as_answer_array, compare_arrays, tolerances
from ._core import CheckFailed, CheckResult, is_placeholder, not_attempted, passed

__all__ = [
    "check_permutation_matrix",
    "check_equivariant_prediction",
    "check_symmetry_preserving_signal",
]


def _words(words: Sequence[str], name: str) -> list[str]:
    if isinstance(words, str) or not all(isinstance(w, str) for w in words):
        raise TypeError(f"{name} must be a sequence of words (strings), got {words!r}")
    words = list(words)
    if len(set(words)) != len(words):
        raise ValueError(f"{name} must not repeat a word, got {words}")
    return words


def _attention_output(x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray) -> np.ndarray:
    return scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v)[0]


def _reordering(source: list[str], target: list[str]) -> np.ndarray:
    n = len(source)
    matrix = np.zeros((n, n))
    matrix[np.arange(n), [source.index(w) for w in target]] = 1.0
    return matrix


def check_permutation_matrix(answer: Any, source: Sequence[str], target: Sequence[str]) -> CheckResult:
    """Check a permutation matrix ``P`` that reorders a sentence's embeddings.

    ``X`` stacks the embeddings of the words of ``source``, one row per word;
    the answer must turn it into the embeddings of the words of ``target``,
    ``P @ X``, row by row. Named mistakes: a matrix that is not a permutation
    matrix, and the inverse permutation.

    Parameters
    ----------
    answer : array_like or None
        The student's matrix (``None`` or ``...`` while not attempted).
    source, target : sequence of str
        The two word orders; the same words, each once.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the matrix is wrong; the message says how.
    TypeError, ValueError
        If ``source`` and ``target`` are not orders of the same distinct words.

    Examples
    --------
    >>> check_permutation_matrix(None, ["a", "b", "c"], ["c", "a", "b"])
    Not attempted yet.
    Replace the placeholder with your permutation matrix P, then run the cell again.
    >>> check_permutation_matrix([[1, 1, 0], [0, 0, 1], [0, 0, 0]], ["a", "b", "c"], ["c", "a", "b"])
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: P should be a permutation matrix: exactly one 1 in every row
    and every column, 0 everywhere else. Yours is not.
    """
    source = _words(source, "source")
    target = _words(target, "target")
    if sorted(source) != sorted(target):
        raise ValueError(f"source and target must hold the same words, got {source} and {target}")
    if is_placeholder(answer):
        return not_attempted("your permutation matrix P")
    n = len(source)
    expected = _reordering(source, target)
    array = as_answer_array(answer, "P")
    if array.shape == expected.shape:
        is_binary = np.isin(array, (0.0, 1.0)).all()
        ones_per_line = np.all(array.sum(axis=0) == 1) and np.all(array.sum(axis=1) == 1)
        if not (is_binary and ones_per_line):
            raise CheckFailed(
                "P should be a permutation matrix: exactly one 1 in every row and every "
                "column, 0 everywhere else. Yours is not."
            )
    compare_arrays(
        array,
        expected,
        name="P",
        description=f"the {n} x {n} matrix with P @ X_source = X_target",
        axes=("row", "column"),
        known_mistakes=[
            (
                expected.T,
                "your P maps the target order back to the source order (it is the "
                "inverse permutation). Row i of P picks the source word that should "
                "land at position i of the target.",
            )
        ],
        given=answer,
    )
    return passed(f"P @ X puts the words in the order {' '.join(target)}.")


def _axis_mistakes(original: np.ndarray, order: list[int]) -> list[tuple[np.ndarray, str]]:
    """Predictions that reorder along the wrong axis of the output (or along both)."""
    n, width = original.shape
    columns = (
        "you reordered the columns (the features of each output) instead of the rows: "
        "each row is one word's output, and it is the words that move."
    )
    mistakes = []
    if width == n:
        mistakes.append((original[:, order], columns))
    if order == list(range(n - 1, -1, -1)):
        mistakes.append((original[:, ::-1], columns))
        mistakes.append(
            (
                original[::-1, ::-1],
                "you reversed both axes (np.flip without an axis does that): only the rows, "
                "one per word, change places; the features of each row stay where they are.",
            )
        )
    return mistakes


def check_equivariant_prediction(
    answer: Any,
    embeddings: np.ndarray,
    order: Sequence[int],
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
) -> CheckResult:
    """Check a predicted attention output for a reordered sentence.

    The student predicts, from the output of self-attention on a sentence,
    its output on the same words in a new order; the check runs attention on
    the reordered sentence and compares. Named mistakes: the original output
    unchanged, the inverse reordering, and reordering along the wrong axis
    (the features instead of the words, or both).

    Parameters
    ----------
    answer : array_like or None
        The predicted output, shape ``(n, d_v)`` (``None`` or ``...`` while
        not attempted).
    embeddings : numpy.ndarray
        Token embeddings of the original sentence, shape ``(n, d)``.
    order : sequence of int
        The new order: row ``i`` of the new sentence is ``embeddings[order[i]]``.
    w_q, w_k, w_v : numpy.ndarray
        Projection matrices, shapes ``(d, d_k)``, ``(d, d_k)``, ``(d, d_v)``.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the prediction is wrong.
    ValueError
        If ``order`` is not a permutation of the rows of ``embeddings``.

    Examples
    --------
    Predicting that nothing changes is the first named mistake:

    >>> import numpy as np
    >>> from posenc_helpers import scaled_dot_product_attention
    >>> rng = np.random.default_rng(0)
    >>> x, wq, wk, wv = rng.normal(size=(4, 3, 3))
    >>> out, _ = scaled_dot_product_attention(x @ wq, x @ wk, x @ wv)
    >>> check_equivariant_prediction(out, x, [2, 0, 1], wq, wk, wv)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: your prediction is not yet the attention output of the
    reordered sentence. Hint: this is the output of the original order, not reordered yet.
    >>> check_equivariant_prediction(None, x, [2, 0, 1], wq, wk, wv)
    Not attempted yet.
    Replace the placeholder with your predicted output (computed from the original output), then run the cell again.
    """
    if is_placeholder(answer):
        return not_attempted("your predicted output (computed from the original output)")
    x = np.asarray(embeddings, dtype=np.float64)
    order = [int(i) for i in order]
    if sorted(order) != list(range(x.shape[0])):
        raise ValueError(f"order must be a permutation of 0..{x.shape[0] - 1}, got {order}")
    actual = _attention_output(x[order], w_q, w_k, w_v)
    original = _attention_output(x, w_q, w_k, w_v)
    array = as_answer_array(answer, "your prediction")
    n = x.shape[0]
    atol, rtol = tolerances(answer, atol=1e-8, rtol=1e-6, scale=float(np.abs(actual).max()))
    if array.shape == (n, n) != actual.shape and np.allclose(array, original[:, order], atol=atol, rtol=rtol):
        raise CheckFailed(
            f"your prediction should have the shape of the output, {actual.shape}; yours has shape "
            f"{array.shape} because you indexed the columns (the features) with order. Each row is "
            "one word's output, and it is the words that move."
        )
    mistakes = [
        (original, "this is the output of the original order, not reordered yet."),
        (
            original[np.argsort(order)],
            "you applied the inverse reordering: row i of the new sentence is original row order[i].",
        ),
        *_axis_mistakes(original, order),
    ]
    compare_arrays(
        array,
        actual,
        name="your prediction",
        description="the attention output of the reordered sentence",
        axes=("token", "feature"),
        known_mistakes=mistakes,
        given=answer,
    )
    return passed("the reordered sentence gives the same output rows, reordered.", check="check_equivariant_prediction")


def check_symmetry_preserving_signal(
    answer: Any,
    embeddings: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
) -> CheckResult:
    """Check a non-zero position signal that still leaves attention blind to order.

    The signal ``S`` (one row per position) is added to the token embeddings
    ``X``. It passes if, for every reordering of the words, attention on the
    reordered words plus ``S`` gives the rows of attention on ``X + S``, reordered
    the same way. The check tries every reordering; it rejects an all-zero
    signal, and names the first reordering that attention can tell apart.

    Parameters
    ----------
    answer : array_like or None
        The signal ``S``, shape ``embeddings.shape``, not all zeros.
    embeddings : numpy.ndarray
        Token embeddings ``X``, shape ``(n, d)`` with ``n <= 7``.
    w_q, w_k, w_v : numpy.ndarray
        Projection matrices.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the signal is zero, has the wrong shape, or breaks the symmetry.
    ValueError
        If ``embeddings`` is not of shape ``(n, d)`` with ``1 <= n <= 7``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> x, wq, wk, wv = rng.normal(size=(4, 3, 3))
    >>> check_symmetry_preserving_signal(np.zeros((3, 3)), x, wq, wk, wv)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: S is all zeros, which preserves the symmetry trivially. Find a
    signal that is not zero and still does not help attention tell orders apart.
    >>> check_symmetry_preserving_signal(None, x, wq, wk, wv)
    Not attempted yet.
    Replace the placeholder with your position signal S, then run the cell again.
    """
    x = np.asarray(embeddings, dtype=np.float64)
    if x.ndim != 2 or not 1 <= x.shape[0] <= 7:
        raise ValueError(f"embeddings must have shape (n, d) with 1 <= n <= 7, got {x.shape}")
    if is_placeholder(answer):
        return not_attempted("your position signal S")
    signal = as_answer_array(answer, "S")
    if signal.shape != x.shape:
        raise CheckFailed(
            f"S should have one row per position and one column per feature, shape "
            f"{x.shape}; yours has shape {signal.shape}."
        )
    if not np.all(np.isfinite(signal)):
        raise CheckFailed("S holds a non-finite value (NaN or inf).")
    if not np.any(signal):
        raise CheckFailed(
            "S is all zeros, which preserves the symmetry trivially. Find a signal "
            "that is not zero and still does not help attention tell orders apart."
        )
    reference = _attention_output(x + signal, w_q, w_k, w_v)
    atol, rtol = tolerances(answer, atol=1e-9, rtol=1e-9, scale=float(np.abs(reference).max()))
    for permutation in itertools.permutations(range(x.shape[0])):
        order = list(permutation)
        shuffled = _attention_output(x[order] + signal, w_q, w_k, w_v)
        if not np.allclose(shuffled, reference[order], atol=atol, rtol=rtol):
            raise CheckFailed(
                f"with the words reordered as {order}, the outputs are no longer the "
                "original outputs reordered, so this S lets attention tell the orders "
                "apart. Ask what S must look like for a reordering of the words to "
                "make no difference to X + S other than reordering its rows."
            )
    return passed("attention still cannot tell the word orders apart.")
