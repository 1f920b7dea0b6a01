"""Checks for chapter 05: a shift of position is a rotation of every sine/cosine pair."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import require_even_width, require_positive_real, require_real
from ..sinusoidal import frequencies, halves_order, shift_matrix
from ._compare import as_answer_array, compare_arrays, tolerances
from ._core import CheckResult, is_placeholder, not_attempted, passed

__all__ = [
    "check_swapped_rotation_block",
    "check_concat_shift_matrix",
    "check_shift_matrix",
]


def _block(angle: float) -> np.ndarray:
    """The 2x2 block of ``M(phi)`` for a pair stored as ``[sin, cos]``, at ``angle = omega * phi``."""
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, s], [-s, c]])


def _swapped_block(omega: float, phi: float) -> tuple[np.ndarray, list[tuple[np.ndarray, str]]]:
    """The block for a pair stored cosine first, and the blocks that named mistakes give."""
    sin_first = _block(omega * phi)
    swap = np.array([[0.0, 1.0], [1.0, 0.0]])
    return swap @ sin_first @ swap, [
        (
            sin_first,
            "this is the block for the paper's order [sin, cos]; applied to a pair stored "
            "cosine first it turns the pair by -φ instead of +φ. Write cos(ω(t+φ)) and "
            "sin(ω(t+φ)) with the angle-addition formulas and read off the coefficients "
            "of cos(ω t) and sin(ω t), in that order.",
        ),
        (
            swap @ _block(phi) @ swap,
            "the angle of the rotation is ω φ (radians), not φ: a pair with frequency ω turns by ω radians per token.",
        ),
    ]


def _concat_permutation(d_model: int) -> np.ndarray:
    """``P`` with ``P @ PE_interleaved(t) == PE_concat(t)``: sines first, then cosines."""
    return np.eye(d_model)[halves_order(d_model)]


def check_swapped_rotation_block(answer: Any, omega: float, offset: float) -> CheckResult:
    """Check the 2x2 shift block for a pair stored cosine first, ``[cos(w t), sin(w t)]``.

    The answer ``B`` must move the pair of every position ``t`` forward by
    ``offset`` tokens: ``B @ [cos(w t), sin(w t)]`` must be the pair at
    ``t + offset``, with ``w = omega``. Named mistakes: the block of the
    paper's ``[sin, cos]`` order, and the offset used as the angle.

    Parameters
    ----------
    answer : array_like or None
        The student's 2x2 matrix (``None`` or ``...`` while not attempted).
    omega : float
        Angular frequency of the pair, radians per token, ``> 0``.
    offset : float
        The shift ``phi`` in tokens, any finite real number.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the matrix is wrong; the message says how, without the right entries.
    TypeError, ValueError
        If ``omega`` is not a finite number ``> 0`` or ``offset`` is not finite.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017, section 3.5.

    Examples
    --------
    >>> check_swapped_rotation_block(None, omega=0.5, offset=1.0)
    Not attempted yet.
    Replace the placeholder with your 2 x 2 matrix B, then run the cell again.
    >>> check_swapped_rotation_block([[1.0, 0.0], [0.0, 1.0]], omega=0.5, offset=1.0)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: B is not yet the 2 x 2 matrix that shifts [cos(ω t), sin(ω t)] by φ
    tokens: 4 of 4 entries differ. The first is at row 0, column 0, where yours is 1.
    """
    omega = require_positive_real(omega, "omega")
    phi = require_real(offset, "offset")
    if is_placeholder(answer):
        return not_attempted("your 2 x 2 matrix B")
    expected, mistakes = _swapped_block(omega, phi)
    compare_arrays(
        answer,
        expected,
        name="B",
        description="the 2 x 2 matrix that shifts [cos(ω t), sin(ω t)] by φ tokens",
        axes=("row", "column"),
        atol=1e-9,
        known_mistakes=mistakes,
    )
    return passed("B moves [cos, sin] of every position forward by the offset.")


def check_concat_shift_matrix(answer: Any, offset: float, d_model: int, *, base: float = 10000.0) -> CheckResult:
    """Check ``M_concat(phi)``, the shift matrix for the layout ``[all sines | all cosines]``.

    With ``layout="concat"`` the sine of pair ``k`` sits in column ``k`` and its
    cosine in column ``d_model/2 + k``. The answer must satisfy
    ``M @ PE_concat(t) == PE_concat(t + phi)`` for every position ``t``. Named
    mistakes: the matrix of the interleaved layout, and the shift by ``-phi``.

    Parameters
    ----------
    answer : array_like or None
        The student's ``(d_model, d_model)`` matrix.
    offset : float
        The shift ``phi`` in tokens, any finite real number.
    d_model : int
        Width of the encoding, a positive even integer.
    base : float, optional
        Base of the frequencies, ``> 0``. Default 10000.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the matrix is wrong; the message says where, without the right entries.
    TypeError, ValueError
        If ``offset``, ``d_model`` or ``base`` is not allowed.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017, section 3.5.
    .. [2] A. Vaswani et al., "Tensor2Tensor for Neural Machine Translation", AMTA 2018
       (the concatenated layout).

    Examples
    --------
    >>> from posenc_helpers import shift_matrix
    >>> check_concat_shift_matrix(None, offset=1.5, d_model=4)
    Not attempted yet.
    Replace the placeholder with your 4 x 4 matrix M_concat, then run the cell again.
    >>> check_concat_shift_matrix(shift_matrix(1.5, 4), offset=1.5, d_model=4)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: M_concat is not yet the 4 x 4 matrix with M_concat @ PE_concat(t) =
    PE_concat(t + φ). Hint: this is M(φ) for the interleaved layout. In the concat layout the sine of pair
    k is column k and its cosine column d/2 + k, so each 2 x 2 block is spread over rows and columns k and
    d/2 + k.
    """
    phi = require_real(offset, "offset")
    d_model = require_even_width(d_model, "d_model")
    base = require_positive_real(base, "base")
    if is_placeholder(answer):
        return not_attempted(f"your {d_model} x {d_model} matrix M_concat")
    expected, mistakes = _concat_shift(phi, d_model, base)
    compare_arrays(
        answer,
        expected,
        name="M_concat",
        description=f"the {d_model} x {d_model} matrix with M_concat @ PE_concat(t) = PE_concat(t + φ)",
        axes=("row", "column"),
        atol=1e-9,
        known_mistakes=mistakes,
    )
    return passed("M @ PE_concat(t) = PE_concat(t + φ) for every position t.")


def _concat_shift(phi: float, d_model: int, base: float) -> tuple[np.ndarray, list[tuple[np.ndarray, str]]]:
    """The shift matrix of the concat layout, and the matrices that named mistakes give."""
    interleaved = shift_matrix(phi, d_model, base=base)
    order = _concat_permutation(d_model)
    expected = order @ interleaved @ order.T
    mistakes = [(expected.T, "your matrix shifts by -φ: check the sign of the sin(ω_k φ) entries.")]
    if d_model > 2:
        mistakes.insert(
            0,
            (
                interleaved,
                "this is M(φ) for the interleaved layout. In the concat layout the sine of "
                "pair k is column k and its cosine column d/2 + k, so each 2 x 2 block is "
                "spread over rows and columns k and d/2 + k.",
            ),
        )
    return expected, mistakes


def check_shift_matrix(answer: Any, offset: float, d_model: int, *, base: float = 10000.0) -> CheckResult:
    """Check a shift matrix ``M(phi)`` for the interleaved sinusoidal encoding.

    The answer must shift the encoding of every position by ``offset`` tokens.
    Named mistake: a matrix that shifts by another whole number of tokens
    (such as the opposite direction); the message says by how many.

    Parameters
    ----------
    answer : array_like or None
        The student's ``(d_model, d_model)`` matrix.
    offset : float
        The shift ``phi`` in tokens it should perform, any finite real number.
    d_model : int
        Width of the encoding, a positive even integer.
    base : float, optional
        Base of the frequencies, ``> 0``. Default 10000.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the matrix is wrong. When it is the shift by some other whole number
        of tokens (for instance ``+phi`` instead of ``-phi``), the message says
        which.
    TypeError, ValueError
        If ``offset``, ``d_model`` or ``base`` is not allowed.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017, section 3.5.

    Examples
    --------
    >>> import numpy as np
    >>> check_shift_matrix(None, offset=-2, d_model=4)
    Not attempted yet.
    Replace the placeholder with your 4 x 4 matrix, then run the cell again.
    >>> check_shift_matrix(np.eye(2), offset=-2, d_model=4)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: your matrix should be M(-2), the 4 x 4 shift by -2 tokens, of shape
    (4, 4); yours has shape (2, 2).
    """
    phi = require_real(offset, "offset")
    d_model = require_even_width(d_model, "d_model")
    base = require_positive_real(base, "base")
    if is_placeholder(answer):
        return not_attempted(f"your {d_model} x {d_model} matrix")
    expected = shift_matrix(phi, d_model, base=base)
    array = as_answer_array(answer, "your matrix")
    atol, _ = tolerances(answer, atol=1e-9, rtol=1e-6)
    mistakes = []
    if array.shape == expected.shape and np.all(np.isfinite(array)):
        # Which whole-token shift (if any) did the answer perform? Read it off pair 0.
        omega = frequencies(d_model, base=base)
        angle = float(np.arctan2(array[0, 1], array[0, 0]))
        for steps in range(-50, 51):
            candidate = float(steps)
            if candidate == phi:
                continue
            wrapped = np.angle(np.exp(1j * (omega[0] * candidate - angle)))
            if abs(wrapped) < atol:
                shifted = shift_matrix(candidate, d_model, base=base)
                mistakes.append(
                    (
                        shifted,
                        f"your matrix is M({steps:g}): it shifts every PE(t) by {steps:g} tokens, "
                        f"not by {phi:g}. Remember M(a) M(b) = M(a + b) and M(φ)ᵀ = M(-φ).",
                    )
                )
                break
    compare_arrays(
        array,
        expected,
        name="your matrix",
        description=f"M({phi:g}), the {d_model} x {d_model} shift by {phi:g} tokens",
        axes=("row", "column"),
        atol=1e-9,
        known_mistakes=mistakes,
        given=answer,
    )
    return passed(f"your matrix shifts every PE(t) by {phi:g} tokens.", check="check_shift_matrix")
