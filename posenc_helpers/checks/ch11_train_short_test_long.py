"""Checks for chapter 11: reading the lab's length curves, and which RoPE pairs meet new angles."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .._validation import require_count, require_even_width
from ..long_context import unseen_angle_pairs
from ..rope import rope_frequencies
from ._compare import Precision, compare_number
from ._core import CheckFailed, CheckResult, is_placeholder, not_attempted, passed

__all__ = ["check_length_jumps", "check_unseen_pairs"]

#: The precision exercise 11.1 states in its question (each rise, in nats), and what the check accepts.
JUMP_PRECISION = Precision(3)


def _curves(curves: Any) -> dict[tuple[str, int], np.ndarray]:
    if not isinstance(curves, Mapping) or not curves:
        raise TypeError("curves must be the chapter's non-empty dict {(method, seed): losses}")
    out = {}
    for key, values in curves.items():
        if not (isinstance(key, tuple) and len(key) == 2):
            raise TypeError(f"curves must be keyed by (method, seed) pairs, got the key {key!r}")
        array = np.asarray(values, dtype=float)
        if array.ndim != 1 or array.size < 2:
            raise ValueError(f"curves[{key!r}] must hold the losses at two or more lengths")
        out[key] = array
    return out


def check_length_jumps(jumps: Any, curves: Any) -> CheckResult:
    """Check the worst rise of held-out loss from 1x to 2x the training length, per method.

    The answer is a dict ``{method: rise}`` with, for every method in ``curves``,
    the worst rise over its seeds of the held-out loss from the training
    length to twice it, in nats, as chapter 11's exercise defines it (the
    losses at those two lengths are the first two entries of each curve).
    Recognised mistakes: the difference taken the other way round, the mean
    over seeds instead of the worst, the longest length instead of 2x,
    methods missing or extra.

    Parameters
    ----------
    jumps : dict or None
        The student's answer (``None`` or ``...`` while not attempted).
    curves : dict
        ``{(method, seed): losses}`` as computed in the chapter, the first entry
        of each at the training length and the second at twice it.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the answer is wrong; the message names the method and the mistake,
        never the expected number.
    TypeError, ValueError
        If ``curves`` is not of the form above.

    Examples
    --------
    >>> curves = {("a", 0): [2.0, 2.5, 2.9], ("a", 1): [2.0, 2.3, 2.4], ("b", 0): [2.1, 2.1, 2.1]}
    >>> check_length_jumps(None, curves)
    Not attempted yet.
    Replace the placeholder with a dict {method: worst rise in nats from 1x to 2x}, then run the cell again.
    >>> check_length_jumps({"a": 0.1}, curves)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: jumps should have exactly one entry per method in curves; missing: ['b']
    """
    curves = _curves(curves)
    if is_placeholder(jumps):
        return not_attempted("a dict {method: worst rise in nats from 1x to 2x}")
    if not isinstance(jumps, Mapping):
        raise CheckFailed(f"jumps should be a dict from method name to a number; got {type(jumps).__name__}.")
    methods = list(dict.fromkeys(method for method, _ in curves))
    missing = [m for m in methods if m not in jumps]
    extra = [m for m in jumps if m not in methods]
    if missing or extra:
        raise CheckFailed(
            "jumps should have exactly one entry per method in curves"
            + (f"; missing: {missing}" if missing else "")
            + (f"; not a method: {extra}" if extra else "")
        )
    for method in methods:
        if isinstance(jumps[method], str):
            raise CheckFailed(f"jumps[{method!r}] should be a number (nats).")
        seeds = [c for (m, _), c in curves.items() if m == method]
        rises = np.array([c[1] - c[0] for c in seeds])
        expected = float(rises.max())
        mistakes = [
            (-expected, "it has the sign flipped: take the loss at 2x minus the loss at 1x."),
            (
                float(rises.mean()),
                "it is the mean over the seeds; the exercise asks for the worst seed (the largest rise).",
            ),
        ]
        mistakes += [
            (
                float(c[-1] - c[0]),
                "it compares the longest length with 1x; the exercise asks for 2x (the second entry).",
            )
            for c in seeds
        ]
        compare_number(
            jumps[method],
            expected,
            name=f"jumps[{method!r}]",
            description="the worst rise of that method from 1x to 2x",
            precision=JUMP_PRECISION,
            what="rise in nats",
            known_mistakes=mistakes,
            advice="It is not the largest, over the seeds, of loss(2x) - loss(1x).",
        )
    return passed(f"the worst rise from 1x to 2x for each of {len(methods)} methods.")


def _unseen_pairs_failure(mask: np.ndarray, expected: np.ndarray, full_turn: np.ndarray, length: int) -> str:
    """What kind of pair the mask gets wrong, in words; not which pair (for a mask of booleans, naming
    the pair would give its entry away)."""
    kinds = []
    if np.any(mask & ~expected & full_turn):
        kinds.append(
            "it marks True a pair that turned a full circle in training, and a pair that has seen every "
            "angle meets nothing new"
        )
    if np.any(mask & ~expected & ~full_turn):
        kinds.append(
            f"it marks True a pair whose largest angle at {length} tokens is still inside the arc training gave it"
        )
    if np.any(~mask & expected):
        kinds.append(
            f"it marks False a pair that meets new angles: its trained arc is less than a full circle, and "
            f"at {length} tokens its largest angle goes past that arc"
        )
    return (
        "the mask is not yet right: "
        + "; and ".join(kinds)
        + ". For each pair, compare its largest angle at the new length with the largest angle training gave it."
    )


def check_unseen_pairs(answer: Any, *, head_dim: int, train_len: int, length: int) -> CheckResult:
    """Check which RoPE pairs reach angles at ``length`` that training at ``train_len`` never produced.

    The answer is a boolean array with one entry per frequency pair
    (``head_dim // 2`` entries, base 10000): True for the pairs that meet, in a
    sequence of ``length`` tokens, rotation angles that training on
    ``train_len`` tokens never produced (chapter 11). An array of zeros and
    ones is read as False and True. Recognised mistakes: one entry per feature
    instead of per pair, the mask inverted, and flagging every pair that turns
    less than once in training without comparing its reach at the new length.

    Parameters
    ----------
    answer : array_like of bool or None
        The student's mask, booleans or zeros and ones (``None`` or ``...``
        while not attempted).
    head_dim : int
        Width of one head, a positive even integer.
    train_len : int
        The training length, ``>= 1``.
    length : int
        The evaluation length, ``>= 1``.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the mask is wrong; the message says what kind of pair it gets wrong
        (one that turned a full circle in training, one whose largest angle
        stays inside its trained arc, one that meets new angles) and names
        the mistake, but not which pair: for a mask of booleans that would
        give the entry away. Never the expected mask.
    TypeError, ValueError
        If ``head_dim``, ``train_len`` or ``length`` is invalid.

    References
    ----------
    .. [1] S. Chen et al., "Extending Context Window of Large Language Models via
       Positional Interpolation", arXiv:2306.15595, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> check_unseen_pairs(None, head_dim=4, train_len=64, length=256)
    Not attempted yet.
    Replace the placeholder with a boolean array with one entry per frequency pair (2 entries), then run the
    cell again.
    >>> check_unseen_pairs(np.zeros(4, dtype=bool), head_dim=4, train_len=64, length=256)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: the answer has one entry per feature (4); RoPE has one frequency per
    pair of features, so 2 entries.
    """
    head_dim = require_even_width(head_dim, "head_dim")
    train_len = require_count(train_len, "train_len", minimum=1)
    length = require_count(length, "length", minimum=1)
    if is_placeholder(answer):
        return not_attempted(f"a boolean array with one entry per frequency pair ({head_dim // 2} entries)")
    mask = np.asarray(answer)
    if mask.dtype != bool:
        numeric = mask.dtype.kind in "iuf" and np.all(np.isin(mask, (0, 1)))
        if not numeric:
            raise CheckFailed(f"the answer should be a boolean array (True/False per pair); got dtype {mask.dtype}.")
        mask = mask == 1
    pairs = head_dim // 2
    if mask.shape == (head_dim,):
        raise CheckFailed(
            f"the answer has one entry per feature ({head_dim}); RoPE has one frequency per pair "
            f"of features, so {pairs} entries."
        )
    if mask.shape != (pairs,):
        raise CheckFailed(f"the answer should have shape ({pairs},), one entry per pair; got {mask.shape}.")
    theta = rope_frequencies(head_dim)
    expected = unseen_angle_pairs(theta, theta, train_len, length)
    if np.array_equal(mask, expected):
        return passed(
            f"{int(expected.sum())} of {pairs} pairs meet angles at {length} tokens that "
            f"{train_len} tokens of training never showed.",
            check="check_unseen_pairs",
        )
    if np.array_equal(mask, ~expected):
        raise CheckFailed("every entry is the opposite: True should mark the pairs that meet new angles.")
    slow = train_len * theta < 2 * np.pi
    if np.array_equal(mask, slow) and not np.array_equal(slow, expected):
        raise CheckFailed(
            "the answer flags every pair that turns less than once in training; a pair whose largest "
            "angle at the new length is still inside its trained arc meets nothing new."
        )
    raise CheckFailed(_unseen_pairs_failure(mask, expected, train_len * theta >= 2 * np.pi, length))
