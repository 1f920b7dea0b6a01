"""Which RoPE pairs reach rotation angles at a new length that training never produced.

A pair that turned through the whole circle within the training context has
seen every angle; a slower one has seen only an arc, and at a longer context
(rescaled or not) it may turn past it. :func:`unseen_angle_pairs` says which
pairs do, for plain RoPE and for any rescaling of
:func:`~posenc_helpers.scaled_rope_frequencies`.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ._validation import require_count, require_positive_frequencies

__all__ = ["unseen_angle_pairs"]


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
    theta = require_positive_frequencies(inv_freq, "inv_freq")
    scaled = require_positive_frequencies(scaled_inv_freq, "scaled_inv_freq")
    if scaled.shape != theta.shape:
        raise ValueError(
            f"scaled_inv_freq must have the shape of inv_freq {theta.shape} (one frequency per pair), "
            f"got {scaled.shape}"
        )
    original_max_len = require_count(original_max_len, "original_max_len", minimum=1)
    new_max_len = require_count(new_max_len, "new_max_len", minimum=1)
    trained_edge = original_max_len * theta
    partial_turn = trained_edge < 2.0 * math.pi
    return partial_turn & ((new_max_len - 1) * scaled > trained_edge)
