"""The arguments of the RoPE rescaling recipes, checked: what :func:`~posenc_helpers.scaled_rope_frequencies`
accepts for each method (YaRN's ramp and DeepSeek-style keys, Llama 3's band, LongRoPE's
per-pair factors, the attention factor, p-RoPE's share of turning pairs).

Each function checks one argument or one pair of arguments, at the public boundary, and
returns it as the recipe uses it; the recipes themselves (:mod:`posenc_helpers.long_context`)
trust what they are given.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validation import as_real_array, require_finite, require_positive_real, require_real

__all__ = [
    "require_pair_factors",
    "require_partial_rotary_factor",
    "require_mscale",
    "require_betas",
    "require_llama3_band",
    "require_attention_factor",
]


def require_pair_factors(values: Any, name: str, pairs: int) -> np.ndarray:
    """One rescaling factor per frequency pair: a 1-D array of ``pairs`` finite numbers ``> 0``."""
    array = as_real_array(values, name).astype(np.float64)
    if array.shape != (pairs,):
        raise ValueError(
            f"{name} must be a 1-D list of head_dim // 2 = {pairs} factors (one per frequency pair), "
            f"got shape {array.shape}"
        )
    require_finite(array, name)
    if np.any(array <= 0):
        bad = int(np.flatnonzero(array <= 0)[0])
        raise ValueError(f"{name} must hold factors > 0; entry {bad} is {array[bad]!r}")
    return array


def require_partial_rotary_factor(method: str, value: Any) -> float | None:
    """p-RoPE's share of turning pairs: ``"proportional"`` only, in ``(0, 1]``.

    >>> require_partial_rotary_factor("proportional", 0.25), require_partial_rotary_factor("yarn", None)
    (0.25, None)
    """
    if value is None:
        return None
    if method != "proportional":
        raise ValueError(
            f"partial_rotary_factor applies only to method='proportional' (for ordinary partial rotary give "
            f"the rotated width as head_dim), got partial_rotary_factor={value!r} with method={method!r}"
        )
    value = require_positive_real(value, "partial_rotary_factor")
    if value > 1.0:
        raise ValueError(f"partial_rotary_factor must be in (0, 1] (the share of pairs that turn), got {value!r}")
    return value


def require_mscale(method: str, value: Any, name: str) -> float | None:
    """A DeepSeek-style YaRN key: ``"yarn"`` only, a finite real ``>= 0`` (0 switches the ratio off, as in HF)."""
    if value is not None and method != "yarn":
        raise ValueError(f"{name} applies only to method='yarn', got {name}={value!r} with method={method!r}")
    if value is not None and require_real(value, name) < 0:
        raise ValueError(f"{name} must be a finite real number >= 0 (0 leaves it out), got {value!r}")
    return None if value is None else float(value)


def require_betas(beta_fast: Any, beta_slow: Any) -> tuple[float, float]:
    """YaRN's ramp edges, in rotations per original context: both > 0, ``beta_fast > beta_slow``.

    >>> require_betas(32, 1)
    (32.0, 1.0)
    """
    beta_fast = require_positive_real(beta_fast, "beta_fast")
    beta_slow = require_positive_real(beta_slow, "beta_slow")
    if beta_fast <= beta_slow:
        raise ValueError(
            f"beta_fast must be greater than beta_slow (rotations per original context), "
            f"got beta_fast={beta_fast!r}, beta_slow={beta_slow!r}"
        )
    return beta_fast, beta_slow


def require_llama3_band(low_freq_factor: Any, high_freq_factor: Any) -> tuple[float | None, float | None]:
    """Llama 3's band edges, each > 0 if given, ``high_freq_factor >= low_freq_factor`` if both are."""
    if low_freq_factor is not None:
        low_freq_factor = require_positive_real(low_freq_factor, "low_freq_factor")
    if high_freq_factor is not None:
        high_freq_factor = require_positive_real(high_freq_factor, "high_freq_factor")
    if low_freq_factor is not None and high_freq_factor is not None and high_freq_factor < low_freq_factor:
        raise ValueError(
            f"high_freq_factor must be at least low_freq_factor (the kept band lies above the divided one), "
            f"got high_freq_factor={high_freq_factor!r}, low_freq_factor={low_freq_factor!r}"
        )
    return low_freq_factor, high_freq_factor


def require_attention_factor(
    method: str, attention_factor: Any, factor: float | None, original_max_len: int | None
) -> float | None:
    """The logits' scale, given only for YaRN and LongRoPE; LongRoPE derives it from ``factor`` otherwise."""
    if attention_factor is not None:
        if method not in ("yarn", "longrope"):
            raise ValueError(
                f"attention_factor applies only to method='yarn' or 'longrope' "
                f"(method={method!r} leaves the logits unscaled), got attention_factor={attention_factor!r}"
            )
        attention_factor = require_positive_real(attention_factor, "attention_factor")
    if method == "longrope" and factor is None and attention_factor is None:
        raise ValueError(
            "factor is required for method='longrope' unless attention_factor is given: pass "
            "max_position_embeddings / original_max_len (how Hugging Face derives it when a config has none)"
        )
    if method == "longrope" and attention_factor is None and original_max_len == 1:
        raise ValueError("original_max_len must be >= 2 for the LongRoPE attention factor sqrt(1 + ln s / ln L)")
    return attention_factor
