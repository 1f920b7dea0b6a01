"""Checks for chapter 04: the sinusoidal encoding with sine/cosine pairs."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validation import as_real_array, require_count, require_even_width, require_positive_real, require_real
from ..sinusoidal import halves_order, sinusoidal_encoding
from ._compare import Precision, as_answer_array, compare_arrays, compare_number, tolerances
from ._core import CheckFailed, CheckResult, is_placeholder, not_attempted, passed

__all__ = ["check_encoding_row", "check_dimension_wavelength", "check_concat_readout"]

_DIMENSION_INDEX_HINT = (
    "you used the dimension index i in the exponent. The frequency belongs to the pair: "
    "dimensions 2k and 2k+1 share one frequency, so the exponent uses the pair index k = i // 2."
)

# Bases a student may type instead of the exercise's (a digit too many or too few, e, Llama 3's).
_OTHER_BASES = {1000.0: "1000", 100000.0: "100000", math.e: "e (np.exp)", 500000.0: "500000", 100.0: "100"}


def _interleave(sines: np.ndarray, cosines: np.ndarray) -> np.ndarray:
    row = np.empty(sines.size + cosines.size)
    row[0::2], row[1::2] = sines, cosines
    return row


def _row_mistakes(t: float, d_model: int, base: float) -> list[tuple[np.ndarray, str]]:
    """Rows that named mistakes give for PE(t)."""
    dims = np.arange(d_model)
    omega = base ** (-2.0 * np.arange(d_model // 2) / d_model)
    by_dimension = base ** (-2.0 * dims / d_model)
    by_dimension_no_two = base ** (-1.0 * dims / d_model)
    mistakes = [
        (_interleave(np.sin(t * by_dimension[0::2]), np.cos(t * by_dimension[1::2])), _DIMENSION_INDEX_HINT),
        (
            _interleave(np.sin(t * by_dimension_no_two[0::2]), np.cos(t * by_dimension_no_two[1::2])),
            _DIMENSION_INDEX_HINT,
        ),
        (
            _interleave(np.cos(t * omega), np.sin(t * omega)),
            "sine and cosine are swapped: the even dimension 2k holds the sine, the odd one 2k+1 the cosine.",
        ),
        (
            np.concatenate([np.sin(t * omega), np.cos(t * omega)]),
            "you wrote all sines, then all cosines (the tensor2tensor layout). The paper interleaves "
            "them: sin, cos of pair 0, then sin, cos of pair 1, and so on.",
        ),
        (
            _interleave(np.sin(t / omega), np.cos(t / omega)),
            "the frequencies grow instead of shrinking: the exponent has a minus sign, "
            "so pair 0 is the fastest and every later pair is slower.",
        ),
        (
            sinusoidal_encoding([t - 1.0], d_model, base=base)[0],
            f"this is PE({t - 1:g}), the row of the position before: the exercise asks for PE({t:g}), "
            "and t goes into every angle as it is.",
        ),
        (
            sinusoidal_encoding([t + 1.0], d_model, base=base)[0],
            f"this is PE({t + 1:g}), the row of the position after: positions count from 0, so the "
            f"exercise's PE({t:g}) uses t = {t:g} itself.",
        ),
    ]
    for other, shown in _OTHER_BASES.items():
        if not math.isclose(other, base):
            mistakes.append(
                (
                    sinusoidal_encoding([t], d_model, base=other)[0],
                    f"these are the frequencies of base {shown}; the exercise uses base {base:g}.",
                )
            )
    return mistakes


def _only_the_speeds_differ(answer: np.ndarray, expected: np.ndarray, atol: float) -> bool:
    """Pair 0 right and every pair on the unit circle: the slower pairs turn at the wrong speed."""
    if answer.shape != expected.shape or answer.size < 4 or not np.all(np.isfinite(answer)):
        return False
    radii = answer[0::2] ** 2 + answer[1::2] ** 2
    return bool(np.allclose(answer[:2], expected[:2], atol=atol) and np.allclose(radii, 1.0, atol=10 * atol))


def check_encoding_row(answer: Any, position: float, d_model: int, *, base: float = 10000.0) -> CheckResult:
    """Check a hand-computed encoding vector ``PE(position)`` of width ``d_model``.

    The answer is the row of the sinusoidal encoding of chapter 04 at
    ``position``, in the paper's interleaved layout. Wrong answers that match
    a common mistake get a hint naming it: the dimension index in the exponent
    (with or without the factor 2), sine and cosine swapped, the
    ``[sines | cosines]`` layout, a positive exponent, the row of the position
    before or after, and another base (1000, 100000, 100, 500000 or e; any
    other base is recognised because the fastest pair is still right).

    Parameters
    ----------
    answer : array_like or None
        The student's vector, shape ``(d_model,)`` (``None`` or ``...`` while
        not attempted).
    position : float
        The position ``t``, a finite real number.
    d_model : int
        Width of the encoding; a positive even integer.
    base : float, optional
        Base of the frequencies, ``> 0``. Default 10000.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the vector is wrong; the message says where and, for a known
        mistake, which one, but never the expected values.
    TypeError, ValueError
        If ``position``, ``d_model`` or ``base`` is invalid.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017, section 3.5.

    Examples
    --------
    >>> check_encoding_row(None, 2, 4)
    Not attempted yet.
    Replace the placeholder with your vector PE(2) (d = 4 numbers), then run the cell again.
    >>> check_encoding_row([0.5, 0.5], 2, 4)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: your PE should be PE(2) for d = 4, of shape (4,); yours has shape (2,).
    """
    t = require_real(position, "position")
    d_model = require_even_width(d_model, "d_model")
    base = require_positive_real(base, "base")
    if is_placeholder(answer):
        return not_attempted(f"your vector PE({t:g}) (d = {d_model} numbers)")
    expected = sinusoidal_encoding([t], d_model, base=base)[0]
    try:
        compare_arrays(
            answer,
            expected,
            name="your PE",
            description=f"PE({t:g}) for d = {d_model}",
            axes=("dimension",),
            atol=1e-6,
            rtol=1e-6,
            known_mistakes=_row_mistakes(t, d_model, base),
        )
    except CheckFailed as failure:
        atol, _ = tolerances(answer, atol=1e-6, rtol=1e-6)
        if "Hint:" not in str(failure) and _only_the_speeds_differ(as_answer_array(answer, "your PE"), expected, atol):
            raise CheckFailed(
                f"{failure} Hint: pair 0 (dimensions 0 and 1) is right and every pair is a point on the unit "
                f"circle, but the slower pairs turn at the wrong speed: check the base (the exercise uses "
                f"{base:g}) and the exponent of the frequencies."
            ) from None
        raise
    return passed(
        f"this is PE({t:g}) for d = {d_model}, each pair a point on the unit circle.", check="check_encoding_row"
    )


def _wavelength_mistakes(dimension: int, d_model: int, base: float) -> tuple[float, list[tuple[float, str]]]:
    """The expected wavelength of a dimension, and the values named mistakes give."""
    omega = base ** (-2.0 * (dimension // 2) / d_model)
    expected = 2.0 * math.pi / omega
    return expected, [
        (2.0 * math.pi * base ** (2.0 * dimension / d_model), _DIMENSION_INDEX_HINT),
        (2.0 * math.pi * base ** (1.0 * dimension / d_model), _DIMENSION_INDEX_HINT),
        (
            omega,
            "this is the angular frequency omega_k (radians per token). The wavelength is the "
            "number of tokens for one full turn.",
        ),
        (1.0 / omega, "a full turn is 2*pi radians, not 1."),
        (360.0 / omega, "angles here are in radians: one full turn is 2*pi, not 360."),
    ]


#: The precision exercise 4.2 states in its question, and what the check accepts.
WAVELENGTH_PRECISION = Precision(2)


def check_dimension_wavelength(answer: Any, dimension: int, d_model: int, *, base: float = 10000.0) -> CheckResult:
    """Check the wavelength, in tokens, of dimension ``dimension`` of the encoding.

    The answer is the number of tokens dimension ``dimension`` of the
    sinusoidal encoding of chapter 04 takes to complete one cycle, to two
    decimal places, as the exercise asks: an answer that rounds to the exact
    wavelength at two decimals passes (more digits of it too). An answer right
    to fewer digits is told to give more digits; a number typed as a string is
    told it is a string.
    Named mistakes, recognised at the same precision: the dimension index in
    the exponent, the angular frequency instead of the wavelength, a turn of 1
    radian or of 360. Any other wrong value gets one message, which says what
    to compute and not on which side the answer lies.

    Parameters
    ----------
    answer : float or None
        The student's wavelength in tokens (``None`` or ``...`` while not
        attempted).
    dimension : int
        The dimension ``i``, ``0 <= i < d_model``.
    d_model : int
        Width of the encoding; a positive even integer.
    base : float, optional
        Base of the frequencies, ``> 0``. Default 10000.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the wavelength is wrong: the message names a recognised mistake,
        or says that the answer is close but lacks digits, never the expected
        value or whether the answer is too long or too short.
    TypeError, ValueError
        If ``dimension``, ``d_model`` or ``base`` is invalid.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017, section 3.5.

    Examples
    --------
    >>> check_dimension_wavelength(None, 3, 4)
    Not attempted yet.
    Replace the placeholder with the wavelength of dimension 3 in tokens, to two decimal places (one number), then
    run the cell again.
    >>> check_dimension_wavelength(1.0, 3, 4)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: your wavelength is not yet that of dimension 3 of a width-4 encoding (base
    10000). The wavelength of a dimension is that of its pair k: the number of tokens the pair's angle omega_k t
    takes to grow by one full turn.
    """
    d_model = require_even_width(d_model, "d_model")
    dimension = require_count(dimension, "dimension")
    if dimension >= d_model:
        raise ValueError(f"dimension must be an integer in [0, d_model - 1] = [0, {d_model - 1}], got {dimension}")
    base = require_positive_real(base, "base")
    if is_placeholder(answer):
        return not_attempted(
            f"the wavelength of dimension {dimension} in tokens, to {WAVELENGTH_PRECISION.words} (one number)"
        )
    expected, mistakes = _wavelength_mistakes(dimension, d_model, base)
    compare_number(
        answer,
        expected,
        name="your wavelength",
        description=f"that of dimension {dimension} of a width-{d_model} encoding (base {base:g})",
        precision=WAVELENGTH_PRECISION,
        what="wavelength in tokens",
        known_mistakes=mistakes,
        advice=(
            "The wavelength of a dimension is that of its pair k: the number of tokens the pair's angle "
            "omega_k t takes to grow by one full turn."
        ),
    )
    return passed(f"dimension {dimension} belongs to pair {dimension // 2}, whose wavelength this is.")


def _concat_weights(weights: np.ndarray) -> tuple[np.ndarray, list[tuple[np.ndarray, str]]]:
    """The converted read-out, and the weights that named mistakes give."""
    order = halves_order(weights.shape[0])
    expected = weights[order]
    return expected, [
        (
            weights,
            "these are the interleaved weights unchanged, but the columns of the table moved: "
            "the weight for each feature has to move with it.",
        ),
        (
            weights[np.argsort(order)],
            "you permuted the rows the wrong way round (the inverse "
            "permutation). Row j of the new weights must be the weight of "
            "the interleaved dimension that lands in column j.",
        ),
    ]


def check_concat_readout(answer: Any, readout: Any) -> CheckResult:
    """Check read-out weights converted from the interleaved to the ``[sines | cosines]`` layout.

    ``readout`` has one row per dimension of the interleaved encoding and is
    applied as ``table @ readout``. The answer must give the same outputs when
    applied to the table in the ``[sines | cosines]`` layout, for every
    position. Named mistakes: the weights unchanged, and the rows moved the
    wrong way round.

    Parameters
    ----------
    answer : array_like or None
        The converted weights, the same shape as ``readout``.
    readout : array_like
        Weights for the interleaved layout, shape ``(d,)`` or ``(d, m)`` with
        ``d`` even.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the weights are wrong (with a hint if they are unchanged or
        permuted the wrong way round).
    TypeError, ValueError
        If ``readout`` is not a real array of shape ``(d,)`` or ``(d, m)``
        with ``d`` a positive even number.

    References
    ----------
    .. [1] A. Vaswani et al., "Tensor2Tensor for Neural Machine Translation", AMTA 2018.
    .. [2] M. Ott et al., "fairseq: A Fast, Extensible Toolkit for Sequence Modeling",
       NAACL 2019 (Demonstrations).

    Examples
    --------
    >>> import numpy as np
    >>> w = np.arange(8.0).reshape(4, 2)
    >>> check_concat_readout(None, w)
    Not attempted yet.
    Replace the placeholder with your weights for the [sines | cosines] layout, then run the cell again.
    >>> check_concat_readout(w, w)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: your weights are not yet the read-out for the [sines | cosines]
    layout. Hint: these are the interleaved weights unchanged, but the columns of the table moved: the
    weight for each feature has to move with it.
    """
    weights = as_real_array(readout, "readout").astype(np.float64)
    if weights.ndim not in (1, 2) or weights.shape[0] == 0 or weights.shape[0] % 2:
        raise ValueError(f"readout must have shape (d,) or (d, m) with d a positive even number, got {weights.shape}")
    if is_placeholder(answer):
        return not_attempted("your weights for the [sines | cosines] layout")
    expected, mistakes = _concat_weights(weights)
    compare_arrays(
        answer,
        expected,
        name="your weights",
        description="the read-out for the [sines | cosines] layout",
        axes=("dimension", "output"),
        known_mistakes=mistakes,
        plural=True,
    )
    return passed("the [sines | cosines] table with these weights gives the same outputs.")
