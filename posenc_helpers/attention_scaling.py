"""Logit scales that grow with position: Qwen's log-n scaling and Llama 4's attention temperature.

As a sequence grows, softmax spreads its weight over more keys and attention
flattens. Two production recipes sharpen it again by multiplying each query by
a factor that depends only on its position ``t`` (0-based):

:func:`logn_attention_scale` (Qwen, ``use_logn_attn``)
    ``log_L(t + 1)`` once ``t + 1`` exceeds the training length ``L``, else 1:
    the entropy-keeping scale of Chiang and Cholak, switched on only past ``L``.
:func:`llama4_attention_scale` (Llama 4, ``attn_temperature_tuning``)
    ``1 + attn_scale * ln(floor((t + 1) / floor_scale) + 1)``, applied to the
    queries of the global NoPE layers only: exactly 1 for the first
    ``floor_scale - 1`` positions, then rising in steps, logarithmically.

Both are the counterpart of YaRN's attention factor (which is fixed per
rescaling factor, not per position).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validation import as_integer_array, require_count, require_positive_real

__all__ = ["llama4_attention_scale", "logn_attention_scale"]


def _require_positions(positions: Any) -> np.ndarray:
    t = as_integer_array(positions, "positions")
    if t.size and t.min() < 0:
        raise ValueError(f"positions must be >= 0 (0-based token positions), got {int(t.min())}")
    return t


def llama4_attention_scale(positions: Any, *, floor_scale: float = 8192, attn_scale: float = 0.1) -> np.ndarray:
    """Llama 4's query scale for its NoPE layers: ``1 + attn_scale * ln(floor((t + 1) / floor_scale) + 1)``.

    Parameters
    ----------
    positions : int or array_like of int
        0-based positions ``t >= 0`` of the queries (``cache_position`` in the
        Hugging Face code), any shape; whole-number floats are accepted.
    floor_scale : float, optional
        Positions per step, ``> 0``. Default 8192, Llama 4's ``floor_scale``.
    attn_scale : float, optional
        Slope of the logarithm, ``> 0``. Default 0.1, Llama 4's ``attn_scale``.

    Returns
    -------
    numpy.ndarray
        The factor each query is multiplied by, float64, shape of ``positions``.

    Raises
    ------
    TypeError, ValueError
        If ``positions`` are not whole numbers ``>= 0`` or a scale is not a
        finite number ``> 0``.

    References
    ----------
    .. [1] Meta, llama-models, ``models/llama4/model.py`` (``Attention.forward``:
       temperature tuning of the NoPE layers) and Hugging Face transformers,
       ``models/llama4/modeling_llama4.py`` (``Llama4TextAttention``).
    .. [2] K. M. Nakanishi, "Scalable-Softmax Is Superior for Attention",
       arXiv:2501.19399, 2025 (the paper the reference code cites).

    Examples
    --------
    >>> llama4_attention_scale([0, 8190, 8191, 3 * 8192 - 1]).round(6).tolist()
    [1.0, 1.0, 1.069315, 1.138629]
    """
    t = _require_positions(positions)
    floor_scale = require_positive_real(floor_scale, "floor_scale")
    attn_scale = require_positive_real(attn_scale, "attn_scale")
    return np.log(np.floor((t + 1.0) / floor_scale) + 1.0) * attn_scale + 1.0


def logn_attention_scale(positions: Any, train_length: int) -> np.ndarray:
    """Qwen's log-n query scale: ``ln(t + 1) / ln(L)`` when ``t + 1 > L``, else 1.

    Parameters
    ----------
    positions : int or array_like of int
        0-based positions ``t >= 0`` of the queries, any shape.
    train_length : int
        The training length ``L >= 2`` (Qwen's ``seq_length``).

    Returns
    -------
    numpy.ndarray
        The factor each query is multiplied by, float64, shape of ``positions``.

    Raises
    ------
    TypeError, ValueError
        If ``positions`` are not whole numbers ``>= 0`` or ``train_length`` is
        not an integer ``>= 2``.

    References
    ----------
    .. [1] Qwen team, Qwen-7B ``modeling_qwen.py`` (``use_logn_attn``:
       ``logn_list = [math.log(i, seq_length) if i > seq_length else 1 ...]``,
       indexed by the query's 1-based position).
    .. [2] D. Chiang, P. Cholak, "Overcoming a Theoretical Limitation of
       Self-Attention", ACL 2022 (arXiv:2202.12172).

    Examples
    --------
    >>> logn_attention_scale([0, 7, 8, 63], train_length=8).round(6).tolist()
    [1.0, 1.0, 1.056642, 2.0]
    """
    t = _require_positions(positions)
    length = require_count(train_length, "train_length", minimum=2)
    count = t + 1.0
    return np.where(count > length, np.log(np.maximum(count, 1.0)) / np.log(length), 1.0)
