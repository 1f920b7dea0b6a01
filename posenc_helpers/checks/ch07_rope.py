"""Checks for chapter 07: a rotated query computed by hand, and a checkpoint converted between RoPE layouts."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import (
    as_real_array,
    require_choice,
    require_count,
    require_finite,
    require_positive_real,
    require_real,
)
from ..rope import ROPE_LAYOUTS, apply_rope
from ..rope_analysis import rope_layout_permutation
from ._compare import compare_arrays
from ._core import CheckResult, is_placeholder, not_attempted, passed

__all__ = ["check_rotated_query", "check_converted_projection"]

_LAYOUT_NAMES = {
    "interleaved": "interleaved layout of the RoFormer paper (pair i is features 2i and 2i+1)",
    "half": "half-split layout of GPT-NeoX and Hugging Face Llama (pair i is features i and i + head_dim/2)",
}


def _rotate(vector: np.ndarray, position: float, inv_freq: np.ndarray, layout: str) -> np.ndarray:
    """``vector`` rotated by RoPE at ``position`` with the given frequencies."""
    return apply_rope(vector[None], [position], layout=layout, inv_freq=inv_freq)[0]


def _swapped_sin_cos(vector: np.ndarray, position: float, inv_freq: np.ndarray, layout: str) -> np.ndarray:
    """The rotation with ``sin`` and ``cos`` exchanged (a common slip)."""
    half = vector.size // 2
    first = np.arange(0, vector.size, 2) if layout == "interleaved" else np.arange(half)
    second = first + 1 if layout == "interleaved" else first + half
    angle = position * inv_freq
    a, b = vector[first], vector[second]
    out = np.empty_like(vector)
    out[first] = a * np.sin(angle) - b * np.cos(angle)
    out[second] = a * np.cos(angle) + b * np.sin(angle)
    return out


def _matrix(value: Any, name: str) -> np.ndarray:
    array = as_real_array(value, name).astype(np.float64)
    if array.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got shape {array.shape}")
    require_finite(array, name)
    return array


def _rotated_query(
    x_: np.ndarray, w: np.ndarray, head: int, n_heads: int, m: float, base: float, layout: str
) -> tuple[np.ndarray, list[tuple[np.ndarray, str]]]:
    """The rotated query of one head, and the vectors that named mistakes give."""
    d_model = x_.size
    head_dim = d_model // n_heads
    part = slice(head * head_dim, (head + 1) * head_dim)
    q = x_ @ w
    q_head = q[part]
    pairs = np.arange(head_dim // 2)
    theta = base ** (-2.0 * pairs / head_dim)
    expected = _rotate(q_head, m, theta, layout)
    other = "half" if layout == "interleaved" else "interleaved"
    mistakes = []
    if n_heads > 1:
        theta_model = base ** (-2.0 * np.arange(d_model // 2) / d_model)
        mistakes += [
            (
                _rotate(q, m, theta_model, layout)[part],
                f"you rotated the whole query of width d_model = {d_model} and then took the head's "
                f"slice. RoPE rotates each head separately, with θ_i = base**(-2i / head_dim) over "
                f"the head width head_dim = {head_dim}: slice first, then rotate.",
            ),
            (
                _rotate(q_head, m, theta_model[: head_dim // 2], layout),
                f"your frequencies use the model width d_model = {d_model}. RoPE works per head: "
                f"θ_i = base**(-2i / head_dim) with head_dim = {head_dim}.",
            ),
        ]
    mistakes += [
        (
            _rotate(q_head, m + 1.0, theta, layout),
            "you rotated to position m + 1: positions count from 0, so the first token is at 0.",
        ),
        (_rotate(q_head, m - 1.0, theta, layout), "you rotated to position m - 1: use the token's 0-based position."),
        (
            _rotate(q_head, m, theta, other),
            f"you used the {other} layout; this exercise uses the {_LAYOUT_NAMES[layout]}.",
        ),
        (
            _rotate(q_head, -m, theta, layout),
            "every pair is turned the wrong way: check the sign of the sine terms, "
            "a' = a cos - b sin and b' = a sin + b cos.",
        ),
        (
            _swapped_sin_cos(q_head, m, theta, layout),
            "sine and cosine are exchanged: each feature keeps its own value times the cosine.",
        ),
        (
            _rotate(q_head, m, base ** (-4.0 * pairs / head_dim), layout),
            "you put the dimension index 2i into the exponent. The frequency belongs to the pair: "
            "pair i uses θ_i = base**(-2i / head_dim).",
        ),
        (
            _rotate(q_head, m, base ** (-1.0 * pairs / head_dim), layout),
            "the exponent lacks its factor 2: θ_i = base**(-2i / head_dim).",
        ),
        (
            _rotate(q_head, m, base ** (2.0 * pairs / head_dim), layout),
            "the frequencies grow instead of shrinking: θ_i = base**(-2i / head_dim) has a minus sign.",
        ),
        (_rotate((x_ @ w.T)[part], m, theta, layout), "you projected with w_q transposed: the query is q = x @ w_q."),
    ]
    for neighbour in (head - 1, head + 1):
        if 0 <= neighbour < n_heads:
            mistakes.append(
                (
                    _rotate(q[neighbour * head_dim : (neighbour + 1) * head_dim], m, theta, layout),
                    f"this is head {neighbour}; head h is columns h * head_dim to "
                    f"(h + 1) * head_dim - 1 of the projected query.",
                )
            )
    mistakes.append((q_head, "this is the head's query before rotation: turn every pair by m θ_i."))
    mistakes = [(value, hint) for value, hint in mistakes if not np.allclose(value, expected, atol=1e-8, rtol=1e-6)]
    return expected, mistakes


def check_rotated_query(
    answer: Any,
    x: Any,
    w_q: Any,
    *,
    head: int,
    n_heads: int,
    position: float,
    base: float = 10000.0,
    layout: str = "interleaved",
) -> CheckResult:
    """Check the RoPE-rotated query of one head, computed by hand from an embedding.

    The answer is the query of head ``head`` for the token with embedding
    ``x`` at ``position``, after RoPE, computed as a transformer with
    ``n_heads`` heads computes it (chapter 07), in the given ``layout``.

    Answers that match a common mistake get a hint naming it: rotating the
    whole ``d_model``-wide query (or using ``d_model`` in the frequencies), a
    position off by one, the other layout, the rotation turned the wrong way,
    sine and cosine exchanged, the dimension index in the exponent, a
    neighbouring head, ``w_q`` transposed, or the slice left unrotated.

    Parameters
    ----------
    answer : array_like or None
        The student's rotated query of the head, shape ``(head_dim,)``
        (``None`` or ``...`` while not attempted).
    x : array_like
        The token's embedding, shape ``(d_model,)``, finite.
    w_q : array_like
        The query projection, shape ``(d_model, d_model)``, finite (``q = x @ w_q``).
    head : int
        Which head, ``0 .. n_heads-1``.
    n_heads : int
        Number of heads, ``>= 1``; ``d_model / n_heads`` must be an even integer.
    position : float
        The token's position ``m`` (0-based, tokens), a finite real.
    base : float, optional
        Base of the frequencies, ``> 0``. Default 10000.
    layout : {"interleaved", "half"}, optional
        The pairing the answer must use. Default ``"interleaved"``.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the vector is wrong; the message says where, or which known mistake
        it matches, but never the expected values.
    TypeError, ValueError
        If an argument other than ``answer`` is not allowed.

    References
    ----------
    .. [1] J. Su et al., "RoFormer: Enhanced Transformer with Rotary Position
       Embedding", Neurocomputing 568, 2024 (arXiv:2104.09864), equation (34).

    Examples
    --------
    >>> import numpy as np
    >>> check_rotated_query(None, [1.0, 0.0], np.eye(2), head=0, n_heads=1, position=3)
    Not attempted yet.
    Replace the placeholder with your rotated query of head 0 (2 numbers), then run the cell again.
    >>> check_rotated_query([1.0, 0.0], [1.0, 0.0], np.eye(2), head=0, n_heads=1, position=3)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: your rotated query is not yet head 0's query at position 3 after
    RoPE (head_dim = 2, interleaved layout). Hint: this is the head's query before rotation: turn every
    pair by m θ_i.
    """
    x_ = as_real_array(x, "x").astype(np.float64)
    if x_.ndim != 1 or x_.size == 0:
        raise ValueError(f"x must be a non-empty 1-D embedding, got shape {x_.shape}")
    require_finite(x_, "x")
    d_model = x_.size
    w = _matrix(w_q, "w_q")
    if w.shape != (d_model, d_model):
        raise ValueError(f"w_q must have shape (d_model, d_model) = ({d_model}, {d_model}), got {w.shape}")
    n_heads = require_count(n_heads, "n_heads", minimum=1)
    if d_model % n_heads or (d_model // n_heads) % 2:
        raise ValueError(f"n_heads must split d_model = {d_model} into heads of even width, got n_heads = {n_heads}")
    head = require_count(head, "head")
    if head >= n_heads:
        raise ValueError(f"head must be one of 0 .. {n_heads - 1}, got {head}")
    m = require_real(position, "position")
    base = require_positive_real(base, "base")
    layout = require_choice(layout, "layout", ROPE_LAYOUTS)
    if is_placeholder(answer):
        return not_attempted(f"your rotated query of head {head} ({d_model // n_heads} numbers)")

    head_dim = d_model // n_heads
    expected, mistakes = _rotated_query(x_, w, head, n_heads, m, base, layout)
    compare_arrays(
        answer,
        expected,
        name="your rotated query",
        description=f"head {head}'s query at position {m:g} after RoPE (head_dim = {head_dim}, {layout} layout)",
        axes=("feature",),
        atol=1e-8,
        rtol=1e-6,
        known_mistakes=mistakes,
    )
    return passed(f"the query of head {head} is projected, sliced and turned by m θ_i in the {layout} layout.")


def _converted(w: np.ndarray) -> tuple[np.ndarray, list[tuple[np.ndarray, str]]]:
    """The projection for the half-split layout, and the matrices that named mistakes give."""
    d_model, head_dim = w.shape
    perm = rope_layout_permutation(head_dim)
    expected = w[:, perm]
    swapped = np.concatenate([perm[head_dim // 2 :], perm[: head_dim // 2]])
    mistakes = [
        (
            w,
            "this is the original matrix: in the half-split layout pair i must sit in columns i "
            "and i + head_dim/2, so the columns have to be reordered.",
        ),
        (
            w[:, np.argsort(perm)],
            "you applied the inverse permutation (half-split back to interleaved). Column j of the new "
            "matrix must be the old column whose feature lands at place j of the half-split query.",
        ),
        (
            w[:, swapped],
            "the two features of every pair are swapped, which turns every pair the other way round: "
            "the first feature of pair i goes to column i, the second to column i + head_dim/2.",
        ),
    ]
    if d_model == head_dim:
        mistakes.append(
            (
                w[perm, :],
                "you reordered the rows (input features). The pairs live in the output "
                "features of the projection, its columns.",
            )
        )
    mistakes = [(value, hint) for value, hint in mistakes if not np.allclose(value, expected)]
    return expected, mistakes


def check_converted_projection(answer: Any, w_interleaved: Any) -> CheckResult:
    """Check a projection matrix converted from the interleaved to the half-split RoPE layout.

    ``w_interleaved`` (shape ``(d_model, head_dim)``, ``q = x @ w``) comes from
    a checkpoint trained with interleaved pairs. The answer is the matrix to
    load into code that uses the half-split layout (chapter 07) so that it
    computes exactly the scores of the original model, for every input.

    Parameters
    ----------
    answer : array_like or None
        The student's converted matrix, shape ``(d_model, head_dim)``
        (``None`` or ``...`` while not attempted).
    w_interleaved : array_like
        The original projection, a finite 2-D array whose number of columns
        ``head_dim`` is even.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the matrix is wrong; the message says where, or which known mistake
        it matches (unchanged, the inverse permutation, the two features of
        each pair swapped, rows instead of columns permuted), never the
        expected entries.
    TypeError, ValueError
        If ``w_interleaved`` is not a finite 2-D array with an even number of
        columns.

    References
    ----------
    .. [1] S. Black et al., "GPT-NeoX-20B: An Open-Source Autoregressive Language
       Model", 2022 (half-split pairs).
    .. [2] J. Su et al., "RoFormer: Enhanced Transformer with Rotary Position
       Embedding", Neurocomputing 568, 2024 (arXiv:2104.09864) (interleaved pairs).

    Examples
    --------
    >>> import numpy as np
    >>> w = np.arange(8.0).reshape(2, 4)
    >>> check_converted_projection(None, w)
    Not attempted yet.
    Replace the placeholder with your converted 2 x 4 matrix, then run the cell again.
    >>> check_converted_projection(w, w)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: your matrix is not yet the 2 x 4 projection for half-split RoPE.
    Hint: this is the original matrix: in the half-split layout pair i must sit in columns i and i +
    head_dim/2, so the columns have to be reordered.
    """
    w = _matrix(w_interleaved, "w_interleaved")
    d_model, head_dim = w.shape
    if head_dim == 0 or head_dim % 2:
        raise ValueError(f"w_interleaved must have an even, non-zero number of columns (head_dim), got {head_dim}")
    if is_placeholder(answer):
        return not_attempted(f"your converted {d_model} x {head_dim} matrix")
    expected, mistakes = _converted(w)
    compare_arrays(
        answer,
        expected,
        name="your matrix",
        description=f"the {d_model} x {head_dim} projection for half-split RoPE",
        axes=("row", "column"),
        atol=1e-12,
        rtol=1e-9,
        known_mistakes=mistakes,
    )
    return passed("half-split RoPE with this matrix gives exactly the scores of the interleaved checkpoint.")
