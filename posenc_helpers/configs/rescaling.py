"""One reader per ``rope_type``: the frequencies a config's rescaling gives at its longest context.

:func:`~posenc_helpers.configs.describe` reads the fields every method shares
into a :class:`RopeFields`, then calls the reader of the config's ``rope_type``
(:data:`RESCALING_READERS`), which computes the frequencies with
:func:`~posenc_helpers.scaled_rope_frequencies` and says what they are anchored
to (a :class:`Rescaling`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..long_context import scaled_rope_frequencies
from ..rope import rope_frequencies
from .fields import config_real

__all__ = ["RESCALING_READERS", "ROPE_TYPES", "Rescaling", "RopeFields"]


@dataclass(frozen=True)
class RopeFields:
    """What every rescaling reader needs: the RoPE parameters and the lengths, already checked.

    Attributes
    ----------
    rope : mapping
        The RoPE parameters (``rope_scaling`` or ``rope_parameters``).
    where : str
        Where they were found, for messages.
    rope_type : str
        A key of :data:`RESCALING_READERS`.
    base : float
        The RoPE base.
    rotary_width : int
        How many features of a head are rotated (even).
    max_len : int
        ``max_position_embeddings``.
    original : int or None
        ``original_max_position_embeddings``, if stated.
    original_field : str
        The field the anchor length is read from.
    head_dim : int
        The full head width (the proportional rule's denominator).

    Examples
    --------
    >>> fields = RopeFields({"factor": 4.0}, "rope_scaling", "linear", 10000.0, 4, 400, None, "max_position_embeddings")
    >>> RESCALING_READERS["linear"](fields).inv_freq
    array([0.25  , 0.0025])
    """

    rope: Mapping[str, Any]
    where: str
    rope_type: str
    base: float
    rotary_width: int
    max_len: int
    original: int | None
    original_field: str
    head_dim: int = 0

    def required_real(self, key: str) -> float:
        """The number ``rope[key]``; a ValueError naming the field if it is missing."""
        if self.rope.get(key) is None:
            raise ValueError(f"config field {self.where}.{key} is required for rope_type {self.rope_type!r}")
        return config_real(self.rope, key, path=f"{self.where}.{key}")

    def optional_real(self, key: str) -> float | None:
        """The number ``rope[key]``, or None if it is not stated."""
        return None if self.rope.get(key) is None else config_real(self.rope, key, path=f"{self.where}.{key}")


@dataclass(frozen=True)
class Rescaling:
    """What a reader returns: the frequencies at the longest context and what they are anchored to.

    Attributes
    ----------
    inv_freq : numpy.ndarray
        The frequency of each pair at ``extended_context``.
    extended_context : int
        The longest context the config provides for.
    attention_factor, softmax_scale : float
        What cos and sin, and the softmax scale, are multiplied by.
    factor : float or None
        The rescaling factor (None for plain RoPE).
    anchor_context : int or None
        The length the rescaling formula is anchored to.
    anchor_field : str or None
        The field ``anchor_context`` was read from.
    notes : tuple of str
        What the report should add in words.
    original_inv_freq : numpy.ndarray or None
        The frequencies before rescaling where they are not ``rope_frequencies(rotary_width)``.

    Examples
    --------
    >>> Rescaling(inv_freq=np.array([1.0]), extended_context=8).factor is None
    True
    """

    inv_freq: np.ndarray
    extended_context: int
    attention_factor: float = 1.0
    softmax_scale: float = 1.0
    factor: float | None = None
    anchor_context: int | None = None
    anchor_field: str | None = None
    notes: tuple[str, ...] = ()
    original_inv_freq: np.ndarray | None = None


def _read_default(f: RopeFields) -> Rescaling:
    return Rescaling(inv_freq=rope_frequencies(f.rotary_width, base=f.base), extended_context=f.max_len)


def _read_linear(f: RopeFields) -> Rescaling:
    factor = f.required_real("factor")
    inv_freq, attention = scaled_rope_frequencies(f.rotary_width, base=f.base, method="linear", factor=factor)
    return Rescaling(
        inv_freq=inv_freq,
        extended_context=f.max_len,
        attention_factor=attention,
        factor=factor,
        anchor_context=f.original,
        anchor_field=None if f.original is None else f.original_field,
    )


def _read_dynamic(f: RopeFields) -> Rescaling:
    factor = f.required_real("factor")
    extended = max(f.max_len, int(round(factor * f.max_len)))
    inv_freq, attention = scaled_rope_frequencies(
        f.rotary_width, base=f.base, method="dynamic", factor=factor, original_max_len=f.max_len, seq_len=extended
    )
    return Rescaling(
        inv_freq=inv_freq,
        extended_context=extended,
        attention_factor=attention,
        factor=factor,
        anchor_context=f.max_len,  # what transformers 4.56 anchors it to
        anchor_field="max_position_embeddings",
        notes=(
            f"Dynamic NTK recomputes the base for the current length; shown at {extended} tokens "
            f"(factor x max_position_embeddings). Up to {f.max_len} tokens the frequencies are unscaled.",
        ),
    )


def _anchored_factor(f: RopeFields) -> tuple[int, float, int]:
    """``(anchor length L, factor s, longest context)`` of the methods anchored to a length (yarn, llama3, longrope)."""
    anchor = f.max_len if f.original is None else f.original
    factor = f.optional_real("factor")
    if f.rope_type == "longrope" and f.original is not None:
        factor = f.max_len / f.original  # transformers uses the ratio whenever both lengths are stated (Phi-3)
    elif factor is None and f.rope_type != "llama3":
        factor = f.max_len / anchor  # how HF derives it when no factor is given
    elif factor is None:
        factor = f.required_real("factor")
    return anchor, factor, max(f.max_len, int(round(factor * anchor)))


def _read_yarn(f: RopeFields) -> Rescaling:
    anchor, factor, extended = _anchored_factor(f)
    notes = []
    if f.original is not None and not math.isclose(factor, f.max_len / f.original):
        notes.append(
            f"factor {factor:g} differs from max_position_embeddings / original_max_position_embeddings "
            f"= {f.max_len / f.original:g}. transformers uses factor from release 4.56 on; earlier releases "
            "used the ratio for YaRN (transformers issue #38224, fixed by pull request #40320)."
        )
    mscale, mscale_all_dim = f.optional_real("mscale"), f.optional_real("mscale_all_dim")
    truncate = f.rope.get("truncate", True)
    if not isinstance(truncate, bool):
        raise TypeError(f"config field {f.where}.truncate must be true or false, got {truncate!r}")
    beta_fast = f.optional_real("beta_fast") or 32.0
    beta_slow = f.optional_real("beta_slow") or 1.0

    def yarn_frequencies(
        mscale: float | None = None, mscale_all_dim: float | None = None, attention_factor: float | None = None
    ) -> tuple[np.ndarray, float]:
        return scaled_rope_frequencies(
            f.rotary_width, base=f.base, method="yarn", factor=factor, original_max_len=anchor,
            beta_fast=beta_fast, beta_slow=beta_slow, truncate=truncate, attention_factor=attention_factor,
            mscale=mscale, mscale_all_dim=mscale_all_dim,
        )  # fmt: skip

    # One implementation of YaRN's factor g(m) = 0.1 m ln s + 1 and of the mscale ratio: the package's
    # scaled_rope_frequencies, which computes them as transformers does (issue 36).
    inv_freq, attention_factor = yarn_frequencies(mscale, mscale_all_dim, f.optional_real("attention_factor"))
    softmax_scale = 1.0
    if mscale_all_dim:
        # DeepSeek's attention multiplies its softmax scale by g(mscale_all_dim)**2; g is linear in m, so
        # g(m) = 1 + m (g(1) - 1), with g(1) YaRN's default factor from the same implementation.
        _, default_factor = yarn_frequencies()
        softmax_scale = (1.0 + mscale_all_dim * (default_factor - 1.0)) ** 2
    return Rescaling(
        inv_freq=inv_freq,
        extended_context=extended,
        attention_factor=attention_factor,
        softmax_scale=softmax_scale,
        factor=factor,
        anchor_context=anchor,
        anchor_field=f.original_field,
        notes=tuple(notes),
    )


def _read_llama3(f: RopeFields) -> Rescaling:
    anchor, factor, extended = _anchored_factor(f)
    inv_freq, attention_factor = scaled_rope_frequencies(
        f.rotary_width,
        base=f.base,
        method="llama3",
        factor=factor,
        original_max_len=anchor,
        low_freq_factor=f.required_real("low_freq_factor"),
        high_freq_factor=f.required_real("high_freq_factor"),
    )
    return Rescaling(
        inv_freq=inv_freq,
        extended_context=extended,
        attention_factor=attention_factor,
        factor=factor,
        anchor_context=anchor,
        anchor_field=f.original_field,
    )


def _read_longrope(f: RopeFields) -> Rescaling:
    anchor, factor, extended = _anchored_factor(f)
    for key in ("short_factor", "long_factor"):
        if f.rope.get(key) is None:
            raise ValueError(f"config field {f.where}.{key} is required for rope_type 'longrope'")
    try:
        inv_freq, attention_factor = scaled_rope_frequencies(
            f.rotary_width,
            base=f.base,
            method="longrope",
            factor=factor,
            original_max_len=anchor,
            short_factor=f.rope["short_factor"],
            long_factor=f.rope["long_factor"],
            seq_len=extended,
            attention_factor=f.optional_real("attention_factor"),
        )
    except (TypeError, ValueError) as error:
        raise type(error)(f"config field {f.where}: {error}") from None
    return Rescaling(
        inv_freq=inv_freq,
        extended_context=extended,
        attention_factor=attention_factor,
        factor=factor,
        anchor_context=anchor,
        anchor_field=f.original_field,
        notes=(
            f"LongRoPE switches from short_factor to long_factor once a sequence is longer than {anchor} "
            "tokens (transformers decides at every forward pass): keys cached before the switch stay rotated "
            "with the short factors. Shown with long_factor.",
        ),
    )


def _read_proportional(f: RopeFields) -> Rescaling:
    share = f.optional_real("partial_rotary_factor") or 1.0
    factor = f.optional_real("factor") or 1.0
    turning = f.rotary_width // 2
    inv_freq, attention = scaled_rope_frequencies(
        f.head_dim, base=f.base, method="proportional", partial_rotary_factor=share, factor=factor
    )
    plain, _ = scaled_rope_frequencies(f.head_dim, base=f.base, method="proportional", partial_rotary_factor=share)
    return Rescaling(
        inv_freq=inv_freq[:turning],
        original_inv_freq=plain[:turning],
        extended_context=f.max_len,
        attention_factor=attention,
        factor=None if factor == 1.0 else factor,
        notes=(
            f"Proportional RoPE (p-RoPE): {turning} of {f.head_dim // 2} pairs turn, at base^(-2i/{f.head_dim}): "
            f"the exponent runs over the full head width {f.head_dim}, not over the {f.rotary_width} rotated "
            f"features as in ordinary partial rotary; the other {f.head_dim // 2 - turning} pairs have frequency "
            f"0. Pairs join feature i and i + {f.head_dim // 2}.",
        ),
    )


#: The reader of each ``rope_type``: its frequencies at the longest context, factor, anchor and notes.
#: (``"mrope"``, Qwen2-VL's, is read as ``"default"``: plain frequencies, pairs split between three axes.)
RESCALING_READERS: dict[str, Callable[[RopeFields], Rescaling]] = {
    "default": _read_default,
    "linear": _read_linear,
    "dynamic": _read_dynamic,
    "yarn": _read_yarn,
    "llama3": _read_llama3,
    "longrope": _read_longrope,
    "proportional": _read_proportional,
}
ROPE_TYPES = tuple(RESCALING_READERS)
