"""Checks for chapter 12: position ids under left padding, Llama 3 band scaling, 2-D axial RoPE."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import as_real_array, require_count, require_even_width, require_positive_real, require_real
from ..long_context import scaled_rope_frequencies
from ..rope import apply_rope, rope_frequencies
from ..rope_2d import axial_rope
from ._compare import as_answer_array, compare_arrays
from ._core import CheckFailed, CheckResult, is_placeholder, not_attempted, passed

__all__ = ["check_position_ids", "check_llama3_frequencies", "check_axial_query"]


def _llama3(
    theta: np.ndarray, wavelength: np.ndarray, factor: float, length: float, low: float, high: float
) -> np.ndarray:
    """The Llama 3 rule with a given wavelength per pair (to build the 1 / theta mistake)."""
    smooth = np.clip((length / wavelength - low) / (high - low), 0.0, 1.0)
    return (1 - smooth) * theta / factor + smooth * theta


def _position_ids(mask: np.ndarray) -> tuple[np.ndarray, list[tuple[np.ndarray, str]]]:
    """The position ids of a left-padded batch, and the ids that named mistakes give."""
    expected = np.cumsum(mask, axis=1) - 1
    arange = np.broadcast_to(np.arange(mask.shape[1], dtype=np.float64), mask.shape)
    return expected, [
        (arange, "you counted the pad tokens. A token's position should not depend on how much padding precedes it."),
        (expected + 1, "your positions start at 1. The first real token of each sequence is at position 0."),
    ]


def check_position_ids(answer: Any, attention_mask: Any) -> CheckResult:
    """Check position ids computed from a left-padded batch's attention mask.

    The answer has the mask's shape ``(batch, seq)``. At every real token
    (mask 1) it must hold that token's position within its own sequence,
    counted as chapter 12 counts them whatever the padding; entries at pad
    tokens (mask 0) are not compared. Hints name the usual slips: counting the
    pads, and starting at 1.

    Parameters
    ----------
    answer : array_like or None
        The student's position ids (``None`` or ``...`` while not attempted).
    attention_mask : array_like
        Shape ``(batch, seq)`` of 0 (pad) and 1 (token), every row with at
        least one 1.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the ids are wrong; the message names the first sequence and token
        that differ, or the recognised mistake, never the expected ids.
    TypeError, ValueError
        If ``attention_mask`` is not a 2-D array of zeros and ones with a
        token in every row.

    References
    ----------
    .. [1] Hugging Face, transformers, ``generation/utils.py``
       (``prepare_inputs_for_generation``, position ids from the attention mask).

    Examples
    --------
    >>> mask = [[0, 1, 1], [1, 1, 1]]
    >>> check_position_ids(None, mask)
    Not attempted yet.
    Replace the placeholder with an integer array of shape (2, 3), then run the cell again.
    >>> check_position_ids([[0, 1, 2], [0, 1, 2]], mask)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: your position ids are not yet right at the real tokens. Hint: you
    counted the pad tokens. A token's position should not depend on how much padding precedes it.
    """
    mask = as_real_array(attention_mask, "attention_mask")
    if mask.ndim != 2 or mask.size == 0:
        raise ValueError(f"attention_mask must be a non-empty 2-D array (batch, seq), got shape {mask.shape}")
    if not np.all((mask == 0) | (mask == 1)):
        raise ValueError("attention_mask must hold only 0 (pad) and 1 (token)")
    if not np.all(mask.sum(axis=1) >= 1):
        raise ValueError("attention_mask must have at least one token (a 1) in every row")
    if is_placeholder(answer):
        return not_attempted(f"an integer array of shape {mask.shape}")
    array = as_answer_array(answer, "your position ids")
    if array.shape != mask.shape:
        raise CheckFailed(
            f"your position ids should have the mask's shape {mask.shape}, one id per token; "
            f"yours has shape {array.shape}."
        )
    real = mask == 1
    expected, mistakes = _position_ids(mask)
    if np.array_equal(array[real], expected[real]):
        return passed("every token's position counts only the real tokens before it, so padding changes nothing.")
    for mistake, hint in mistakes:
        if np.array_equal(array[real], mistake[real]):
            raise CheckFailed(f"your position ids are not yet right at the real tokens. Hint: {hint}")
    wrong = real & (array != expected)
    row, col = (int(i) for i in np.argwhere(wrong)[0])
    raise CheckFailed(
        f"your position ids differ at {int(wrong.sum())} of {int(real.sum())} real tokens; the first is in "
        f"sequence {row}, column {col}, where yours is {array[row, col]:g}. Count the real tokens before it."
    )


def _llama3_mistakes(
    expected: np.ndarray,
    head_dim: int,
    base: float,
    factor: float,
    original_max_len: int,
    low_freq_factor: float,
    high_freq_factor: float,
) -> list[tuple[np.ndarray, str]]:
    """The frequencies that named mistakes give (those equal to the answer dropped)."""
    theta = rope_frequencies(head_dim, base=base)
    wavelength = 2 * np.pi / theta
    low_edge, high_edge = original_max_len / low_freq_factor, original_max_len / high_freq_factor
    kept, divided = wavelength < high_edge, wavelength > low_edge
    between = ~kept & ~divided
    smooth = (original_max_len / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)
    hard = np.where(wavelength > (low_edge + high_edge) / 2, theta / factor, theta)
    reversed_blend = np.where(between, smooth * theta / factor + (1 - smooth) * theta, expected)
    no_two_pi = _llama3(theta, 1 / theta, factor, original_max_len, low_freq_factor, high_freq_factor)
    swapped = np.where(wavelength > high_edge, theta / factor, theta)
    mistakes = [
        (theta / factor, "every pair is divided by the factor; the fast pairs (short wavelengths) keep theta_i."),
        (theta * factor, "you multiplied by the factor. Slowing a pair down divides its frequency."),
        (theta, "these are the unscaled frequencies; the slow pairs must be divided by the factor."),
        (hard, "you switched from kept to divided at one wavelength; the pairs between the edges are blended."),
        (reversed_blend, "the blend runs the wrong way: the weight on theta_i grows towards the kept band."),
        (no_two_pi, "the wavelength is 2 pi / theta_i, not 1 / theta_i."),
        (
            swapped,
            "the band edges look swapped: L / high_freq_factor is the shorter edge, L / low_freq_factor the longer.",
        ),
    ]
    mistakes = [(m, h) for m, h in mistakes if not np.allclose(m, expected, rtol=1e-9, atol=0)]
    return mistakes


def check_llama3_frequencies(
    answer: Any,
    *,
    head_dim: int,
    base: float,
    factor: float,
    original_max_len: int,
    low_freq_factor: float,
    high_freq_factor: float,
) -> CheckResult:
    """Check RoPE frequencies rescaled by the Llama 3 band rule.

    The answer holds one frequency per pair, ``(head_dim // 2,)``: the
    frequencies of the given base rescaled by the ``llama3`` rule of chapter
    12 with the given factor, anchor length ``L = original_max_len`` and band
    edges. Hints name the usual slips: the band edges swapped, dividing every
    pair (plain interpolation), multiplying by the factor, no rescaling at
    all, a hard switch without the blend, the blend weights reversed, and a
    wavelength without its ``2 pi``.

    Parameters
    ----------
    answer : array_like or None
        The student's frequencies (``None`` or ``...`` while not attempted).
    head_dim : int
        Width of one head, a positive even integer.
    base : float
        RoPE base, ``> 0``.
    factor : float
        The scale ``s > 1``.
    original_max_len : int
        The anchor length ``L`` (``original_max_position_embeddings``), ``>= 1``.
    low_freq_factor, high_freq_factor : float
        The band edges, ``0 < low < high``.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the frequencies are wrong; the message names the first pair that
        differs or the recognised mistake, never the expected values.
    TypeError, ValueError
        If a parameter is invalid (as for
        :func:`~posenc_helpers.scaled_rope_frequencies`).

    References
    ----------
    .. [1] A. Grattafiori et al., "The Llama 3 Herd of Models", arXiv:2407.21783,
       2024; Meta, llama-models, ``models/llama3/reference_impl/model.py``
       (``apply_scaling``).

    Examples
    --------
    >>> params = dict(head_dim=8, base=10000.0, factor=4.0, original_max_len=64,
    ...               low_freq_factor=1.0, high_freq_factor=4.0)
    >>> check_llama3_frequencies(None, **params)
    Not attempted yet.
    Replace the placeholder with an array of 4 frequencies, one per pair, then run the cell again.
    >>> check_llama3_frequencies([1.0, 0.1], **params)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: your frequencies should be the 4 rescaled frequencies, of shape
    (4,); yours has shape (2,).
    """
    head_dim = require_even_width(head_dim, "head_dim")
    expected, _ = scaled_rope_frequencies(
        head_dim,
        base=base,
        method="llama3",
        factor=factor,
        original_max_len=original_max_len,
        low_freq_factor=low_freq_factor,
        high_freq_factor=high_freq_factor,
    )
    factor = require_positive_real(factor, "factor")
    if factor <= 1:
        raise ValueError(f"factor must be a scale s > 1 (a longer context), got {factor!r}")
    if is_placeholder(answer):
        return not_attempted(f"an array of {head_dim // 2} frequencies, one per pair")
    mistakes = _llama3_mistakes(expected, head_dim, base, factor, original_max_len, low_freq_factor, high_freq_factor)
    compare_arrays(
        answer,
        expected,
        name="your frequencies",
        description=f"the {head_dim // 2} rescaled frequencies",
        axes=("pair",),
        atol=0.0,
        rtol=1e-6,
        known_mistakes=mistakes,
        plural=True,
    )
    return passed(
        "short wavelengths kept, long ones divided by the factor, the band between blended.",
        check="check_llama3_frequencies",
    )


def check_axial_query(
    answer: Any, *, query: Any, row: float, col: float, width: int, base: float = 10000.0
) -> CheckResult:
    """Check a query rotated by 2-D axial RoPE for an image patch at ``(row, col)``.

    The answer is the query after 2-D axial RoPE (chapter 12, interleaved
    pairs) for the patch in row ``row`` and column ``col``, ``(head_dim,)``.
    Hints name the usual slips: row and column swapped, the row used for
    both, and 1-D RoPE over the whole head at the raster index
    ``row * width + col`` or at the row.

    Parameters
    ----------
    answer : array_like or None
        The student's rotated query (``None`` or ``...`` while not attempted).
    query : array_like
        The query before rotation, 1-D with a length that is a multiple of 4.
    row, col : float
        The patch's row and column.
    width : int
        Patches per row of the image, ``>= 1`` (used to recognise the raster
        index mistake).
    base : float, optional
        RoPE base, ``> 0``. Default 10000.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the vector is wrong; the message names the first feature that
        differs or the recognised mistake, never the expected values.
    TypeError, ValueError
        If ``query``, ``row``, ``col``, ``width`` or ``base`` is invalid.

    References
    ----------
    .. [1] B. Heo, S. Park, D. Han, S. Yun, "Rotary Position Embedding for
       Vision Transformer", ECCV 2024 (arXiv:2403.13298).

    Examples
    --------
    >>> import numpy as np
    >>> q = np.array([1.0, 0.0, 1.0, 0.0])
    >>> check_axial_query(None, query=q, row=1, col=2, width=3)
    Not attempted yet.
    Replace the placeholder with the rotated query, an array of 4 numbers, then run the cell again.
    >>> check_axial_query([1.0, 0.0], query=q, row=1, col=2, width=3)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: your rotated query should be the query rotated by 2-D axial RoPE,
    of shape (4,); yours has shape (2,).
    """
    vector = as_real_array(query, "query").astype(np.float64)
    if vector.ndim != 1 or vector.size == 0 or vector.size % 4:
        raise ValueError(f"query must be 1-D with a length that is a positive multiple of 4, got shape {vector.shape}")
    row = require_real(row, "row")
    col = require_real(col, "col")
    width = require_count(width, "width", minimum=1)
    base = require_positive_real(base, "base")
    if is_placeholder(answer):
        return not_attempted(f"the rotated query, an array of {vector.size} numbers")
    expected, mistakes = _axial(vector, row, col, width, base)
    compare_arrays(
        answer,
        expected,
        name="your rotated query",
        description="the query rotated by 2-D axial RoPE",
        axes=("feature",),
        atol=1e-9,
        rtol=1e-7,
        known_mistakes=mistakes,
    )
    return passed("the first half turns with the row, the second with the column.", check="check_axial_query")


def _axial(
    vector: np.ndarray, row: float, col: float, width: int, base: float
) -> tuple[np.ndarray, list[tuple[np.ndarray, str]]]:
    """The rotated query, and the vectors that named mistakes give."""
    expected = axial_rope(vector[None], [row], [col], base=base)[0]
    mistakes = [
        (
            axial_rope(vector[None], [col], [row], base=base)[0],
            "row and column are swapped: the first half turns with the row.",
        ),
        (
            axial_rope(vector[None], [row], [row], base=base)[0],
            "both halves turned with the row; the second half turns with the column.",
        ),
        (
            apply_rope(vector[None], [row * width + col], base=base)[0],
            "that is 1-D RoPE at the raster index row * width + col. Axial RoPE rotates the two halves "
            "separately, by the row and by the column.",
        ),
        (apply_rope(vector[None], [row], base=base)[0], "that is 1-D RoPE over the whole head at the row."),
    ]
    return expected, [(m, h) for m, h in mistakes if not np.allclose(m, expected, rtol=1e-9, atol=1e-12)]
