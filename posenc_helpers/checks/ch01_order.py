"""Checks for chapter 01: attention without positions ignores word order."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..attention import scaled_dot_product_attention
from ._core import (
    CheckFailed,
    CheckResult,
    as_answer_array,
    compare_arrays,
    is_placeholder,
    not_attempted,
    passed,
)

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


def check_permutation_matrix(answer: Any, source: Sequence[str], target: Sequence[str]) -> CheckResult:
    """Check a permutation matrix ``P`` with ``P @ X_source == X_target``.

    Row ``i`` of ``P @ X`` must be the embedding of the ``i``-th word of
    ``target``, where ``X`` stacks the embeddings of ``source`` row by row.

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
    >>> import numpy as np
    >>> check_permutation_matrix(np.eye(2)[[1, 0]], ["a", "b"], ["b", "a"])
    Correct: P @ X puts the words in the order b a.
    """
    source = _words(source, "source")
    target = _words(target, "target")
    if sorted(source) != sorted(target):
        raise ValueError(f"source and target must hold the same words, got {source} and {target}")
    if is_placeholder(answer):
        return not_attempted("your permutation matrix P")
    n = len(source)
    expected = np.zeros((n, n))
    expected[np.arange(n), [source.index(w) for w in target]] = 1.0
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
    )
    return passed(f"P @ X puts the words in the order {' '.join(target)}.")


def check_equivariant_prediction(
    answer: Any,
    embeddings: np.ndarray,
    order: Sequence[int],
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
) -> CheckResult:
    """Check a predicted attention output for a reordered sentence.

    The student predicts the output of self-attention on ``embeddings[order]``
    from the output on ``embeddings``; the check runs attention on the
    reordered input and compares.

    Parameters
    ----------
    answer : array_like or None
        The predicted output, shape ``(n, d_v)``.
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

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x, wq, wk, wv = rng.normal(size=(4, 3, 3))
    >>> out = _attention_output(x, wq, wk, wv)
    >>> check_equivariant_prediction(out[[2, 0, 1]], x, [2, 0, 1], wq, wk, wv)
    Correct: the reordered sentence gives the same output rows, reordered.
    """
    if is_placeholder(answer):
        return not_attempted("your predicted output (computed from the original output)")
    x = np.asarray(embeddings, dtype=np.float64)
    order = [int(i) for i in order]
    if sorted(order) != list(range(x.shape[0])):
        raise ValueError(f"order must be a permutation of 0..{x.shape[0] - 1}, got {order}")
    actual = _attention_output(x[order], w_q, w_k, w_v)
    original = _attention_output(x, w_q, w_k, w_v)
    inverse = np.argsort(order)
    compare_arrays(
        answer,
        actual,
        name="your prediction",
        description="the attention output of the reordered sentence",
        axes=("token", "feature"),
        known_mistakes=[
            (original, "this is the output of the original order, not reordered yet."),
            (
                original[inverse],
                "you applied the inverse reordering: row i of the new sentence is original row order[i].",
            ),
        ],
    )
    return passed("the reordered sentence gives the same output rows, reordered.")


def check_symmetry_preserving_signal(
    answer: Any,
    embeddings: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
) -> CheckResult:
    """Check a non-zero position signal that still leaves attention blind to order.

    The signal ``S`` (one row per position) is added to the token embeddings
    ``X``. It preserves the symmetry if, for every reordering ``pi`` of the
    words, attention on ``X[pi] + S`` gives the rows of attention on ``X + S``
    reordered by ``pi``.

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

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> x, wq, wk, wv = rng.normal(size=(4, 3, 3))
    >>> check_symmetry_preserving_signal(np.ones((3, 3)), x, wq, wk, wv)
    Correct: attention still cannot tell the word orders apart.
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
    for permutation in itertools.permutations(range(x.shape[0])):
        order = list(permutation)
        shuffled = _attention_output(x[order] + signal, w_q, w_k, w_v)
        if not np.allclose(shuffled, reference[order], atol=1e-9):
            raise CheckFailed(
                f"with the words reordered as {order}, the outputs are no longer the "
                "original outputs reordered, so this S lets attention tell the orders "
                "apart. Ask what S must look like for a reordering of the words to "
                "make no difference to X + S other than reordering its rows."
            )
    return passed("attention still cannot tell the word orders apart.")
