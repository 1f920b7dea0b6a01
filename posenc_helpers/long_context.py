"""Frequency rescaling that lets RoPE run past the context it was trained on.

Three methods are implemented, all returning ``(inv_freq, attention_factor)``
for :func:`~posenc_helpers.apply_rope` (``inv_freq``) and for the logits
(multiply queries and keys by ``attention_factor``, as the YaRN reference code
does through its cached cos/sin tables):

``"linear"``  (position interpolation, Chen et al. 2023)
    every frequency divided by the scale ``s``: positions ``0 .. s*L`` are
    squeezed into the angles the model saw for ``0 .. L``.
``"ntk"``  (NTK-aware scaling, bloc97 2023)
    the base is raised to ``base * s**(d / (d - 2))``: the fastest pair is
    unchanged and the slowest pair is slowed by exactly ``s``.
``"yarn"``  (Peng et al., ICLR 2024)
    pairs that turn many times within the original context keep their
    frequency, pairs that turn less than once are interpolated by ``s``, with a
    linear ramp over the pair index in between; logits are scaled by
    ``0.1 * ln(s) + 1``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ._validation import (
    check_choice,
    check_count,
    check_even_width,
    check_positive_frequencies,
    check_positive_real,
)
from .rope import rope_frequencies

__all__ = ["scaled_rope_frequencies", "unseen_angle_pairs"]

SCALING_METHODS = ("linear", "ntk", "yarn")


def _yarn_correction_dim(rotations: float, head_dim: int, base: float, original_max_len: int) -> float:
    """Pair index (as a real number) whose wavelength fits ``rotations`` times in the context."""
    return head_dim * math.log(original_max_len / (rotations * 2.0 * math.pi)) / (2.0 * math.log(base))


def _yarn_attention_factor(factor: float) -> float:
    return 1.0 if factor <= 1.0 else 0.1 * math.log(factor) + 1.0


def scaled_rope_frequencies(
    head_dim: int,
    *,
    base: float = 10000.0,
    method: str,
    factor: float,
    original_max_len: int | None = None,
    beta_fast: float = 32,
    beta_slow: float = 1,
) -> tuple[np.ndarray, float]:
    """RoPE frequencies rescaled for a context ``factor`` times longer.

    Parameters
    ----------
    head_dim : int
        Width of one attention head; a positive even integer.
    base : float, optional
        RoPE base of the original model, ``> 0``. Default 10000.
    method : {"linear", "ntk", "yarn"}
        The rescaling rule (see the module docstring).
    factor : float
        The scale ``s > 0``: new context length over original context length.
    original_max_len : int, optional
        Context length ``L`` the model was trained on. Required for ``"yarn"``
        (it decides which pairs are kept and which interpolated); validated but
        unused by the other methods.
    beta_fast, beta_slow : float, optional
        YaRN's ramp bounds in rotations per original context (defaults 32 and
        1, as in the paper): pairs that rotate at least ``beta_fast`` times keep
        their frequency, pairs that rotate at most ``beta_slow`` times are
        interpolated. ``beta_fast > beta_slow > 0``.

    Returns
    -------
    inv_freq : numpy.ndarray
        Shape ``(head_dim // 2,)``, the frequencies to pass to
        :func:`~posenc_helpers.apply_rope` as ``inv_freq``.
    attention_factor : float
        ``1.0`` for ``"linear"`` and ``"ntk"``; ``0.1 * ln(s) + 1`` for
        ``"yarn"`` when ``s > 1`` (and 1.0 when ``s <= 1``).

    Raises
    ------
    TypeError, ValueError
        For an invalid ``head_dim`` or ``base``, an unknown ``method``, a
        ``factor`` that is not ``> 0``, ``"yarn"`` without a positive integer
        ``original_max_len``, or ``beta_fast <= beta_slow``.

    Notes
    -----
    YaRN follows the reference implementation of Peng et al.: the correction
    range is ``floor(c(beta_fast)), ceil(c(beta_slow))`` with
    ``c(r) = head_dim * ln(L / (2 pi r)) / (2 ln base)``, clamped to
    ``[0, head_dim - 1]``; the ramp ``clip((i - low) / (high - low), 0, 1)``
    over the pair index ``i`` blends the original frequency (ramp 0) into the
    interpolated one (ramp 1).

    References
    ----------
    .. [1] S. Chen, S. Wong, L. Chen, Y. Tian, "Extending Context Window of Large
       Language Models via Positional Interpolation", arXiv:2306.15595, 2023.
    .. [2] bloc97, "NTK-Aware Scaled RoPE allows LLaMA models to have extended
       (8k+) context size without any fine-tuning", 2023 (online post).
    .. [3] B. Peng, J. Quesnelle, H. Fan, E. Shippole, "YaRN: Efficient Context
       Window Extension of Large Language Models", ICLR 2024 (arXiv:2309.00071).

    Examples
    --------
    >>> import numpy as np
    >>> inv, attn = scaled_rope_frequencies(4, method="linear", factor=4.0)
    >>> inv, attn
    (array([0.25  , 0.0025]), 1.0)
    >>> inv, attn = scaled_rope_frequencies(8, method="ntk", factor=2.0)
    >>> bool(np.isclose(inv[0], 1.0)), bool(np.isclose(inv[-1], rope_frequencies(8)[-1] / 2))
    (True, True)
    >>> inv, attn = scaled_rope_frequencies(
    ...     128, method="yarn", factor=16.0, original_max_len=4096)
    >>> round(attn, 4)
    1.2773
    """
    head_dim = check_even_width(head_dim, "head_dim")
    base = check_positive_real(base, "base")
    method = check_choice(method, "method", SCALING_METHODS)
    factor = check_positive_real(factor, "factor")
    if original_max_len is not None:
        original_max_len = check_count(original_max_len, "original_max_len", minimum=1)
    beta_fast = check_positive_real(beta_fast, "beta_fast")
    beta_slow = check_positive_real(beta_slow, "beta_slow")
    if beta_fast <= beta_slow:
        raise ValueError(
            f"beta_fast must be greater than beta_slow (rotations per original context), "
            f"got beta_fast={beta_fast!r}, beta_slow={beta_slow!r}"
        )

    original = rope_frequencies(head_dim, base=base)
    if method == "linear":
        return original / factor, 1.0
    if method == "ntk":
        ntk_base = base * factor ** (head_dim / (head_dim - 2)) if head_dim > 2 else base
        return rope_frequencies(head_dim, base=ntk_base), 1.0

    if original_max_len is None:
        raise ValueError(
            "original_max_len is required for method='yarn': give the context length "
            "(a positive integer) the model was trained on"
        )
    low = math.floor(_yarn_correction_dim(beta_fast, head_dim, base, original_max_len))
    high = math.ceil(_yarn_correction_dim(beta_slow, head_dim, base, original_max_len))
    low, high = max(low, 0), min(high, head_dim - 1)
    span = (high - low) if high != low else 0.001
    pair_index = np.arange(head_dim // 2, dtype=np.float64)
    ramp = np.clip((pair_index - low) / span, 0.0, 1.0)
    inv_freq = original * (1.0 - ramp) + (original / factor) * ramp
    return inv_freq, _yarn_attention_factor(factor)


def unseen_angle_pairs(
    inv_freq: ArrayLike,
    scaled_inv_freq: ArrayLike,
    original_max_len: int,
    new_max_len: int,
) -> np.ndarray:
    """Which pairs reach rotation angles at ``new_max_len`` that training never produced.

    During training on positions ``0 .. L-1`` pair ``i`` turns through the
    angles ``[0, L * theta_i)`` (the interval that positions in ``[0, L)``
    cover, the convention of position interpolation). If ``L * theta_i >= 2 pi``
    that is the whole circle and no angle can be new. Otherwise a pair whose
    largest angle at the new length, ``(L' - 1) * theta'_i``, is beyond
    ``L * theta_i`` turns into angles the model has never seen.

    Parameters
    ----------
    inv_freq : array_like
        The frequencies ``theta_i`` the model was trained with, a non-empty
        1-D array of finite numbers ``> 0``.
    scaled_inv_freq : array_like
        The frequencies ``theta'_i`` used at the new length (``inv_freq``
        itself for plain RoPE), same shape, finite and ``> 0``.
    original_max_len : int
        The training context ``L``, an integer ``>= 1``.
    new_max_len : int
        The new context ``L'``, an integer ``>= 1``.

    Returns
    -------
    numpy.ndarray
        Boolean mask, one entry per pair: True where the pair reaches unseen angles.

    Raises
    ------
    TypeError, ValueError
        If the frequencies are not 1-D arrays of the same non-zero length
        holding finite numbers ``> 0``, or a length is not an integer ``>= 1``.

    References
    ----------
    .. [1] S. Chen, S. Wong, L. Chen, Y. Tian, "Extending Context Window of Large
       Language Models via Positional Interpolation", arXiv:2306.15595, 2023.
    .. [2] B. Peng, J. Quesnelle, H. Fan, E. Shippole, "YaRN: Efficient Context
       Window Extension of Large Language Models", ICLR 2024 (arXiv:2309.00071)
       (NTK-aware scaling pushes some pairs slightly out of bounds).

    Examples
    --------
    Two pairs, trained on 100 tokens: the fast pair (one radian per token) has
    seen the whole circle; the slow one only a tenth of a radian.

    >>> theta = np.array([1.0, 0.001])
    >>> unseen_angle_pairs(theta, theta, 100, 400)
    array([False,  True])
    >>> unseen_angle_pairs(theta, theta / 4, 100, 400)
    array([False, False])
    """
    theta = check_positive_frequencies(inv_freq, "inv_freq")
    scaled = check_positive_frequencies(scaled_inv_freq, "scaled_inv_freq")
    if scaled.shape != theta.shape:
        raise ValueError(
            f"scaled_inv_freq must have the shape of inv_freq {theta.shape} (one frequency per pair), "
            f"got {scaled.shape}"
        )
    original_max_len = check_count(original_max_len, "original_max_len", minimum=1)
    new_max_len = check_count(new_max_len, "new_max_len", minimum=1)
    trained_edge = original_max_len * theta
    partial_turn = trained_edge < 2.0 * math.pi
    return partial_turn & ((new_max_len - 1) * scaled > trained_edge)
