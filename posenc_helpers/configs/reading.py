"""Reading a model's ``config.json`` into a :class:`~posenc_helpers.PositionReport`: :func:`describe`.

The config's fields are read once, in order: the RoPE parameters and their
``rope_type``, the base, the rotary width, the context lengths; then the reader of
that ``rope_type`` (:data:`RESCALING_READERS`, one function per method) computes the
frequencies at the longest context and what they are anchored to; then the layer
pattern. :func:`shipped_configs` gives the position fields of a few public models.
Putting the record into words is :mod:`.reporting`.
"""

from __future__ import annotations

import copy
import json
import math
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np

from .._validation import describe_value
from ..long_context import scaled_rope_frequencies
from ..rope import rope_frequencies
from ..rope_2d import mrope_pair_axes
from .record import PositionReport

__all__ = ["ROPE_TYPES", "RESCALING_READERS", "describe", "shipped_configs"]

_KEPT_TOLERANCE = 1e-9  # relative: a pair whose frequency moved less than this is "kept"


def _bfloat16_spacing(x: float) -> float:
    """Spacing of bfloat16 numbers at ``|x|``: ``2**(floor(log2 |x|) - 7)`` (8 significant bits)."""
    if x == 0:
        return 2.0**-133  # the smallest subnormal
    _, exponent = math.frexp(abs(x))  # |x| = m * 2**exponent with 0.5 <= m < 1: floor(log2 |x|) = exponent - 1
    return math.ldexp(1.0, exponent - 1 - 7)


# ---------------------------------------------------------------- reading fields


def _get_int(config: Mapping[str, Any], key: str, *, path: str | None = None, minimum: int = 1) -> int:
    value = config[key]
    where = path or key
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"config field {where} must be an integer >= {minimum}, got {describe_value(value)}")
    if value < minimum:
        raise ValueError(f"config field {where} must be an integer >= {minimum}, got {value}")
    return int(value)


def _get_real(config: Mapping[str, Any], key: str, *, path: str | None = None) -> float:
    value = config[key]
    where = path or key
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"config field {where} must be a number > 0, got {describe_value(value)}")
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"config field {where} must be a finite number > 0, got {value!r}")
    return value


def _first_present(config: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        if config.get(key) is not None:
            return key
    return None


def _rope_parameters(cfg: Mapping[str, Any]) -> tuple[dict[str, Any], str, dict[str, Any] | None]:
    """The full-attention RoPE parameters, where they were found, and the sliding-window ones if separate."""
    layer_types = cfg.get("layer_types")
    parameters = cfg.get("rope_parameters")
    if parameters is not None:
        if not isinstance(parameters, Mapping):
            raise TypeError(f"config field rope_parameters must be a mapping, got {describe_value(parameters)}")
        kinds = set(layer_types) if isinstance(layer_types, Sequence) and not isinstance(layer_types, str) else set()
        if parameters and kinds and set(parameters) <= kinds:  # one mapping per layer type (transformers v5)
            full_key = "full_attention" if "full_attention" in parameters else sorted(parameters)[0]
            full = parameters[full_key]
            local = parameters.get("sliding_attention") if full_key != "sliding_attention" else None
            for key, value in ((full_key, full), ("sliding_attention", local)):
                if value is not None and not isinstance(value, Mapping):
                    raise TypeError(
                        f"config field rope_parameters.{key} must be a mapping, got {describe_value(value)}"
                    )
            return dict(full), f"rope_parameters.{full_key}", None if local is None else dict(local)
        return dict(parameters), "rope_parameters", None
    scaling = cfg.get("rope_scaling")
    if scaling is not None:
        if not isinstance(scaling, Mapping):
            raise TypeError(f"config field rope_scaling must be a mapping or null, got {describe_value(scaling)}")
        return dict(scaling), "rope_scaling", None
    return {}, "rope_scaling", None


def _head_dims(cfg: Mapping[str, Any]) -> tuple[int, int | None]:
    """``(head_dim, rotary width if the config states it directly)``."""
    if cfg.get("qk_rope_head_dim") is not None:  # DeepSeek's multi-head latent attention
        rotary = _get_int(cfg, "qk_rope_head_dim")
        nope = _get_int(cfg, "qk_nope_head_dim", minimum=0) if cfg.get("qk_nope_head_dim") is not None else 0
        return nope + rotary, rotary
    if cfg.get("head_dim") is not None:
        return _get_int(cfg, "head_dim"), None
    missing = [key for key in ("hidden_size", "num_attention_heads") if cfg.get(key) is None]
    if missing:
        raise ValueError(
            f"config field head_dim is missing and so is {' and '.join(missing)}: give head_dim, or "
            "hidden_size and num_attention_heads (head_dim = hidden_size // num_attention_heads)"
        )
    return _get_int(cfg, "hidden_size") // _get_int(cfg, "num_attention_heads"), None


# ---------------------------------------------------------------- one reader per rope_type


@dataclass(frozen=True)
class _RopeFields:
    """What every rescaling reader needs: the RoPE parameters and the lengths, already checked."""

    rope: Mapping[str, Any]  # the RoPE parameters (rope_scaling or rope_parameters)
    where: str  # where they were found, for messages
    rope_type: str
    base: float
    rotary_width: int
    max_len: int  # max_position_embeddings
    original: int | None  # original_max_position_embeddings, if stated
    original_field: str  # the field the anchor length is read from
    head_dim: int = 0  # the full head width (the proportional rule's denominator)

    def required_real(self, key: str) -> float:
        if self.rope.get(key) is None:
            raise ValueError(f"config field {self.where}.{key} is required for rope_type {self.rope_type!r}")
        return _get_real(self.rope, key, path=f"{self.where}.{key}")

    def optional_real(self, key: str) -> float | None:
        return None if self.rope.get(key) is None else _get_real(self.rope, key, path=f"{self.where}.{key}")


@dataclass(frozen=True)
class _Rescaling:
    """What a reader returns: the frequencies at the longest context and what they are anchored to."""

    inv_freq: np.ndarray
    extended_context: int
    attention_factor: float = 1.0
    softmax_scale: float = 1.0
    factor: float | None = None
    anchor_context: int | None = None  # the length L the rescaling formula is anchored to
    anchor_field: str | None = None
    notes: tuple[str, ...] = ()
    original_inv_freq: np.ndarray | None = None  # where "before rescaling" is not rope_frequencies(rotary_width)


def _read_default(f: _RopeFields) -> _Rescaling:
    return _Rescaling(inv_freq=rope_frequencies(f.rotary_width, base=f.base), extended_context=f.max_len)


def _read_linear(f: _RopeFields) -> _Rescaling:
    factor = f.required_real("factor")
    inv_freq, attention = scaled_rope_frequencies(f.rotary_width, base=f.base, method="linear", factor=factor)
    return _Rescaling(
        inv_freq=inv_freq,
        extended_context=f.max_len,
        attention_factor=attention,
        factor=factor,
        anchor_context=f.original,
        anchor_field=None if f.original is None else f.original_field,
    )


def _read_dynamic(f: _RopeFields) -> _Rescaling:
    factor = f.required_real("factor")
    extended = max(f.max_len, int(round(factor * f.max_len)))
    inv_freq, attention = scaled_rope_frequencies(
        f.rotary_width, base=f.base, method="dynamic", factor=factor, original_max_len=f.max_len, seq_len=extended
    )
    return _Rescaling(
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


def _anchored_factor(f: _RopeFields) -> tuple[int, float, int]:
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


def _read_yarn(f: _RopeFields) -> _Rescaling:
    anchor, factor, extended = _anchored_factor(f)
    notes = []
    if f.original is not None and not math.isclose(factor, f.max_len / f.original):
        notes.append(
            f"factor {factor:g} differs from max_position_embeddings / original_max_position_embeddings "
            f"= {f.max_len / f.original:g}. transformers uses factor from release 4.56 on; earlier releases "
            "used the ratio for YaRN (transformers issue #38224, fixed by pull request #40320)."
        )
    attention = f.optional_real("attention_factor")
    mscale, mscale_all_dim = f.optional_real("mscale"), f.optional_real("mscale_all_dim")
    if attention is None and mscale and mscale_all_dim:
        attention = _yarn_mscale(factor, mscale) / _yarn_mscale(factor, mscale_all_dim)
    softmax_scale = _yarn_mscale(factor, mscale_all_dim) ** 2 if mscale_all_dim else 1.0
    truncate = f.rope.get("truncate", True)
    if not isinstance(truncate, bool):
        raise TypeError(f"config field {f.where}.truncate must be true or false, got {truncate!r}")
    inv_freq, attention_factor = scaled_rope_frequencies(
        f.rotary_width,
        base=f.base,
        method="yarn",
        factor=factor,
        original_max_len=anchor,
        beta_fast=f.optional_real("beta_fast") or 32.0,
        beta_slow=f.optional_real("beta_slow") or 1.0,
        truncate=truncate,
        attention_factor=attention,
    )
    return _Rescaling(
        inv_freq=inv_freq,
        extended_context=extended,
        attention_factor=attention_factor,
        softmax_scale=softmax_scale,
        factor=factor,
        anchor_context=anchor,
        anchor_field=f.original_field,
        notes=tuple(notes),
    )


def _read_llama3(f: _RopeFields) -> _Rescaling:
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
    return _Rescaling(
        inv_freq=inv_freq,
        extended_context=extended,
        attention_factor=attention_factor,
        factor=factor,
        anchor_context=anchor,
        anchor_field=f.original_field,
    )


def _read_longrope(f: _RopeFields) -> _Rescaling:
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
    return _Rescaling(
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


def _read_proportional(f: _RopeFields) -> _Rescaling:
    share = f.optional_real("partial_rotary_factor") or 1.0
    factor = f.optional_real("factor") or 1.0
    turning = f.rotary_width // 2
    inv_freq, attention = scaled_rope_frequencies(
        f.head_dim, base=f.base, method="proportional", partial_rotary_factor=share, factor=factor
    )
    plain, _ = scaled_rope_frequencies(f.head_dim, base=f.base, method="proportional", partial_rotary_factor=share)
    return _Rescaling(
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
RESCALING_READERS: dict[str, Callable[[_RopeFields], _Rescaling]] = {
    "default": _read_default,
    "linear": _read_linear,
    "dynamic": _read_dynamic,
    "yarn": _read_yarn,
    "llama3": _read_llama3,
    "longrope": _read_longrope,
    "proportional": _read_proportional,
}
ROPE_TYPES = tuple(RESCALING_READERS)


# ---------------------------------------------------------------- the parts of describe


def _merged_config(config: Any) -> dict[str, Any]:
    """The config with a ``text_config`` entry (multimodal models) merged over the top level."""
    if not isinstance(config, Mapping):
        raise TypeError(f"config must be a mapping (a parsed config.json), got {describe_value(config)}")
    cfg: dict[str, Any] = dict(config)
    text_config = cfg.get("text_config")
    if text_config is not None:
        if not isinstance(text_config, Mapping):
            raise TypeError(f"config field text_config must be a mapping, got {describe_value(text_config)}")
        cfg.update(text_config)
    return cfg


def _model_name(cfg: Mapping[str, Any], name: Any) -> str:
    if name is None:
        return str(cfg.get("_name_or_path") or cfg.get("model_type") or "model")
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, got {describe_value(name)}")
    return name


def _rope_type(rope: Mapping[str, Any], where: str) -> tuple[str, tuple[int, ...] | None]:
    """``(rope_type, mrope_section)``; Qwen2-VL's ``"mrope"`` is read as ``"default"``."""
    rope_type = rope.get("rope_type", rope.get("type", "default"))
    mrope_section = None
    if rope.get("mrope_section") is not None:
        section = rope["mrope_section"]
        if isinstance(section, (str, bytes)) or not isinstance(section, Sequence):
            raise TypeError(f"config field {where}.mrope_section must be a list of integers, got {section!r}")
        mrope_section = tuple(int(n) for n in section)
    if rope_type == "mrope":  # Qwen2-VL: plain RoPE frequencies, pairs split between three axes
        rope_type = "default"
    if not isinstance(rope_type, str) or rope_type not in RESCALING_READERS:
        allowed = ", ".join(repr(t) for t in ROPE_TYPES + ("mrope",))
        raise ValueError(f"config field {where}.rope_type must be one of {allowed}, got {rope_type!r}")
    return rope_type, mrope_section


def _base(cfg: Mapping[str, Any], rope: Mapping[str, Any], where: str, *, used: bool = True) -> float:
    """``rope_theta`` from the RoPE parameters, else from the top level (or GPT-NeoX's, ModernBERT's names).

    Without any base it warns, unless ``used`` is False (no layer applies RoPE, so no base is missing).
    """
    base_key = _first_present(rope, "rope_theta")
    base_source: Mapping[str, Any] = rope
    if base_key is None:
        base_source = cfg
        base_key = _first_present(cfg, "rope_theta", "rotary_emb_base", "global_rope_theta")
    if base_key is None and not used:
        return _ASSUMED_BASE
    if base_key is None:
        warnings.warn(
            f"config states no RoPE base (no rope_theta in {where} or at the top level, no rotary_emb_base): "
            "this report assumes 10000, the default that code reading config.rope_theta falls back to; "
            "check the model's own code before trusting it",
            UserWarning,
            stacklevel=3,
        )
        return _ASSUMED_BASE
    return _get_real(base_source, base_key, path=base_key if base_source is cfg else f"{where}.{base_key}")


_ASSUMED_BASE = 10000.0


def _rotary_widths(
    cfg: Mapping[str, Any], rope: Mapping[str, Any], rope_type: str = "default", head_dim_key: str | None = None
) -> tuple[int, int, list[str]]:
    """``(head_dim, rotary width, notes)``: the rotated share of each head.

    For ``"proportional"`` the rotary width is twice the number of pairs that
    turn, ``2 * int(partial_rotary_factor * head_dim // 2)``.
    """
    if head_dim_key is not None:  # Gemma 4: the global layers have their own, wider heads
        head_dim, rotary_width = _get_int(cfg, head_dim_key), None
    else:
        head_dim, rotary_width = _head_dims(cfg)
    if rope_type == "proportional":
        share = _get_real(rope, "partial_rotary_factor") if rope.get("partial_rotary_factor") is not None else 1.0
        if share > 1.0:
            raise ValueError(f"config field partial_rotary_factor must be in (0, 1] (the rotated share), got {share!r}")
        turning = int(share * head_dim // 2)
        if turning < 1:
            raise ValueError(
                f"config field partial_rotary_factor {share!r} leaves no pair turning in a head of {head_dim} features"
            )
        return head_dim, 2 * turning, []
    notes = []
    if rotary_width is not None:
        notes.append(
            f"Multi-head latent attention: a separate part of {rotary_width} query/key features is rotated "
            f"(qk_rope_head_dim); the other {head_dim - rotary_width} carry no position."
        )
    else:
        factor_key = _first_present(rope, "partial_rotary_factor")
        factor_source: Mapping[str, Any] = rope if factor_key else cfg
        factor_key = factor_key or _first_present(cfg, "partial_rotary_factor", "rotary_pct")
        fraction = 1.0 if factor_key is None else _get_real(factor_source, factor_key)
        if fraction > 1.0:
            raise ValueError(f"config field {factor_key} must be in (0, 1] (the rotated share), got {fraction!r}")
        rotary_width = int(head_dim * fraction)
    if rotary_width <= 0 or rotary_width % 2 or rotary_width > head_dim:
        what = "head_dim" if rotary_width == head_dim else "rotary width (head_dim * partial_rotary_factor)"
        raise ValueError(
            f"config field {what} must be a positive even number of features (<= head_dim {head_dim}), "
            f"got {rotary_width}"
        )
    return head_dim, rotary_width, notes


def _context_lengths(cfg: Mapping[str, Any], rope: Mapping[str, Any], where: str) -> tuple[int, int | None, str]:
    """``(max_position_embeddings, original_max_position_embeddings or None, the anchor's field)``."""
    if cfg.get("max_position_embeddings") is None:
        raise ValueError("config field max_position_embeddings is missing: the longest context must be stated")
    max_len = _get_int(cfg, "max_position_embeddings")
    if cfg.get("original_max_position_embeddings") is not None:  # wins over rope parameters, as in HF (Phi-3)
        original: int | None = _get_int(cfg, "original_max_position_embeddings")
    elif rope.get("original_max_position_embeddings") is not None:
        original = _get_int(rope, "original_max_position_embeddings", path=f"{where}.original_max_position_embeddings")
    else:
        original = None
    original_field = "original_max_position_embeddings" if original is not None else "max_position_embeddings"
    return max_len, original, original_field


def _pair_groups(stretch: np.ndarray, factor: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indices of the pairs kept (stretch 1), interpolated (the whole factor or more) and in between."""
    kept = np.flatnonzero(np.abs(stretch - 1.0) <= _KEPT_TOLERANCE)
    if factor is not None and factor > 1.0:
        interpolated = np.flatnonzero(stretch >= factor * (1.0 - _KEPT_TOLERANCE))
    else:
        interpolated = np.flatnonzero(np.zeros(stretch.shape, dtype=bool))
    in_between = np.setdiff1d(np.arange(stretch.size), np.concatenate([kept, interpolated]))
    return kept, interpolated, in_between


def _sliding_window(cfg: Mapping[str, Any]) -> int | None:
    if cfg.get("sliding_window") is not None and cfg.get("use_sliding_window") is not False:
        return _get_int(cfg, "sliding_window")
    return None


def _local_base(cfg: Mapping[str, Any], local_rope: Mapping[str, Any] | None) -> float | None:
    """The RoPE base of sliding-window layers, where it differs."""
    if local_rope is not None and local_rope.get("rope_theta") is not None:
        return _get_real(local_rope, "rope_theta", path="rope_parameters.sliding_attention.rope_theta")
    local_key = _first_present(cfg, "rope_local_base_freq", "local_rope_theta")
    return None if local_key is None else _get_real(cfg, local_key)


def describe(config: Mapping[str, Any], *, name: str | None = None) -> PositionReport:
    """Read the position story of a Hugging Face style model config.

    Parameters
    ----------
    config : mapping
        The model's ``config.json`` as a mapping (only the position fields are
        read). A ``text_config`` entry, as in multimodal models, is merged over
        the top level. Fields read: ``rope_theta`` (or GPT-NeoX's
        ``rotary_emb_base``, ModernBERT's ``global_rope_theta``),
        ``rope_scaling`` or ``rope_parameters``, ``head_dim`` or
        ``hidden_size`` and ``num_attention_heads`` (``qk_rope_head_dim`` and
        ``qk_nope_head_dim`` for DeepSeek), ``partial_rotary_factor`` or
        ``rotary_pct``, ``max_position_embeddings``,
        ``original_max_position_embeddings``, ``sliding_window``,
        ``layer_types`` (or Gemma 3's ``sliding_window_pattern``, ModernBERT's
        ``global_attn_every_n_layers`` and ``local_attention``, with
        ``num_hidden_layers``), ``rope_local_base_freq`` or
        ``local_rope_theta``, ``no_rope_layers`` or ``no_rope_layer_interval``
        (SmolLM3, Llama 4), ``global_head_dim`` (Gemma 4), ``attention_chunk_size``,
        ``attn_temperature_tuning``, ``floor_scale`` and ``attn_scale`` (Llama 4),
        ``mla_use_nope`` (Kimi Linear: no layer applies RoPE)
        and ``use_sliding_window`` (a ``sliding_window`` is ignored
        when it is false, as in Qwen2).
    name : str, optional
        What to call the model; default the config's ``_name_or_path`` or
        ``model_type``.

    Returns
    -------
    PositionReport
        The numbers; ``str(report)`` explains them in plain words.

    Raises
    ------
    TypeError, ValueError
        If ``config`` is not a mapping, or a field is missing, of the wrong
        kind or out of range: the message names the field (for instance an
        unknown ``rope_type``, a ``head_dim`` or rotary width that is not
        even, a missing ``rope_theta`` or ``max_position_embeddings``, a
        llama3 config without ``low_freq_factor``, a layer pattern without
        ``num_hidden_layers``, or a ``no_rope_layers`` entry other than 0 or 1).

    Notes
    -----
    The rescaled frequencies are those of
    :func:`~posenc_helpers.scaled_rope_frequencies` with the parameters read
    as Hugging Face ``transformers`` 4.56 reads them (``modeling_rope_utils.py``
    of release 4.56.0): the rotary width is ``int(head_dim *
    partial_rotary_factor)``; a top-level ``original_max_position_embeddings``
    wins over one inside the RoPE parameters (Phi-3); YaRN uses the ``factor``
    it is given; LongRoPE uses ``max_position_embeddings /
    original_max_position_embeddings`` whenever both are stated, and so does a
    YaRN config without ``factor``; yarn's attention factor (on cos and sin) is
    ``attention_factor`` if given, else the ratio of ``0.1 * m * ln(s) + 1``
    for ``m = mscale`` and ``m = mscale_all_dim`` when both are given, else
    ``0.1 * ln(s) + 1``; ``mscale_all_dim`` also multiplies the softmax scale
    by ``(0.1 * mscale_all_dim * ln(s) + 1)**2``, as ``DeepseekV3Attention``
    does. Releases before 4.56 differ for YaRN: when
    ``original_max_position_embeddings`` was given they replaced ``factor`` by
    ``max_position_embeddings / original_max_position_embeddings``
    (transformers issue #38224, fixed by pull request #40320, August 2025);
    the report notes where the two disagree. Dynamic NTK is evaluated at
    ``factor * max_position_embeddings`` tokens, the context its factor aims
    at. ``"mrope"`` (Qwen2-VL) is plain RoPE with its pairs split between
    three position axes. ``"proportional"`` (Gemma 4, transformers v5) is read
    as ``_compute_proportional_rope_parameters`` computes it: ``int(p *
    head_dim // 2)`` pairs turn at ``base**(-2i / head_dim)``; the report's
    ``rotary_dim`` is twice that, and a v5 ``full_attention`` mapping uses
    ``global_head_dim`` where the config states one.

    The report's ``parameters_field`` says which schema was read; the text
    says it for the v5 ``rope_parameters``. A config with no base at all
    (no ``rope_theta`` inside the parameters or at the top level) raises a
    ``UserWarning`` and is reported with the base 10000 marked as assumed,
    the value code that reads ``config.rope_theta`` with a default would
    silently use. Hybrids are explained per layer: the layer kinds, NoPE
    layers (``no_rope_layers``, where 1 means the layer *uses* RoPE),
    ``attention_chunk_size`` and Llama 4's ``attn_temperature_tuning``
    (``floor_scale``, ``attn_scale``).

    References
    ----------
    .. [1] Hugging Face, transformers 4.56.0, ``src/transformers/modeling_rope_utils.py``
       (``rope_type`` implementations) and
       ``src/transformers/models/deepseek_v3/modeling_deepseek_v3.py``
       (``DeepseekV3Attention``: the softmax scale and ``mscale_all_dim``).
    .. [2] A. Grattafiori et al., "The Llama 3 Herd of Models", arXiv:2407.21783, 2024.
    .. [3] B. Peng, J. Quesnelle, H. Fan, E. Shippole, "YaRN: Efficient Context
       Window Extension of Large Language Models", ICLR 2024 (arXiv:2309.00071).

    Examples
    --------
    >>> report = describe(shipped_configs()["llama-3.1-8b"]["config"], name="Llama 3.1 8B")
    >>> report.method, report.anchor_field, report.anchor_context, report.extended_context
    ('llama3', 'original_max_position_embeddings', 8192, 131072)
    >>> report.kept.size, report.in_between.size, report.interpolated.size
    (29, 6, 29)
    >>> report.float32_resolution, report.bfloat16_resolution
    (0.0078125, 512.0)
    >>> print(str(report).splitlines()[1])
    - RoPE base 500000; all 128 of 128 features per head are rotated, in 64 frequency pairs.
    """
    cfg = _merged_config(config)
    name = _model_name(cfg, name)
    rope, where, local_rope = _rope_parameters(cfg)
    # neither rope_scaling nor rope_parameters: plain RoPE from the top-level fields
    where_read = "none" if where == "rope_scaling" and cfg.get("rope_scaling") is None else where
    rope_type, mrope_section = _rope_type(rope, where)
    rope_free = _rope_free(cfg)
    base = _base(cfg, rope, where, used=not rope_free)
    wide_heads = "global_head_dim" if where == "rope_parameters.full_attention" and cfg.get("global_head_dim") else None
    head_dim, rotary_width, notes = _rotary_widths(cfg, rope, rope_type, wide_heads)
    max_len, original, original_field = _context_lengths(cfg, rope, where)
    fields = _RopeFields(rope, where, rope_type, base, rotary_width, max_len, original, original_field, head_dim)
    rescaling = RESCALING_READERS[rope_type](fields)
    notes.extend(rescaling.notes)
    if rope_free:  # the latent-attention note would say the slice is rotated; here nothing is
        notes = [note for note in notes if not note.startswith("Multi-head latent attention")]
    else:
        notes.extend(_schema_notes(cfg, rope, where, base))

    unscaled = (
        rope_frequencies(rotary_width, base=base)
        if rescaling.original_inv_freq is None
        else rescaling.original_inv_freq
    )
    inv_freq, extended = rescaling.inv_freq, rescaling.extended_context
    stretch = unscaled / inv_freq
    kept, interpolated, in_between = _pair_groups(stretch, rescaling.factor)
    max_angle = float((extended - 1) * inv_freq.max())

    sliding_window = _sliding_window(cfg)
    layer_counts, layer_notes = _layer_pattern(cfg)
    notes.extend(layer_notes)
    nope_layers = _nope_layers(cfg)
    notes.extend(_hybrid_notes(cfg, nope_layers))
    notes.extend(_recurrent_and_mrope_notes(layer_counts, rope, where, mrope_section))
    local_base = _local_base(cfg, local_rope)

    return PositionReport(
        name=name,
        method=rope_type,
        base=base,
        head_dim=head_dim,
        rotary_dim=rotary_width,
        inv_freq=inv_freq,
        original_inv_freq=unscaled,
        attention_factor=float(rescaling.attention_factor),
        softmax_scale=float(rescaling.softmax_scale),
        factor=rescaling.factor,
        anchor_context=rescaling.anchor_context,
        anchor_field=rescaling.anchor_field,
        extended_context=extended,
        wavelengths=2.0 * math.pi / inv_freq,
        stretch=stretch,
        kept=kept,
        interpolated=interpolated,
        in_between=in_between,
        max_angle=max_angle,
        float32_resolution=float(np.spacing(np.float32(max_angle))),
        bfloat16_resolution=_bfloat16_spacing(max_angle),
        sliding_window=sliding_window,
        layer_counts=layer_counts,
        local_base=local_base,
        mrope_section=mrope_section,
        nope_layers=nope_layers,
        notes=tuple(notes),
        parameters_field=where_read,
        rope_free=rope_free,
    )


def _rope_free(cfg: Mapping[str, Any]) -> bool:
    """Whether no attention layer applies RoPE: ``mla_use_nope`` true (Kimi Linear's NoPE latent attention)."""
    flag = cfg.get("mla_use_nope")
    if flag is None:
        return False
    if not isinstance(flag, bool):
        raise TypeError(f"config field mla_use_nope must be true or false, got {describe_value(flag)}")
    return flag


def _layer_count(cfg: Mapping[str, Any], pattern_key: str) -> int:
    if cfg.get("num_hidden_layers") is None:
        raise ValueError(f"config field num_hidden_layers is missing: {pattern_key} needs the number of layers")
    return _get_int(cfg, "num_hidden_layers")


def _layer_pattern(cfg: Mapping[str, Any]) -> tuple[dict[str, int], list[str]]:
    """How many layers of each attention kind, and notes on where that came from.

    ``layer_types`` is read as it is; without it, Gemma 3's
    ``sliding_window_pattern`` (layer ``i`` is global when ``(i + 1) % p == 0``)
    and ModernBERT's ``global_attn_every_n_layers`` with ``local_attention``
    (layer ``i`` is global when ``i % n == 0``; the others see
    ``local_attention // 2`` tokens either side) are expanded over
    ``num_hidden_layers``.
    """
    layer_types = cfg.get("layer_types")
    if layer_types is not None:
        if isinstance(layer_types, (str, bytes)) or not isinstance(layer_types, Sequence):
            raise TypeError(f"config field layer_types must be a list of strings, got {describe_value(layer_types)}")
        return dict(Counter(str(kind) for kind in layer_types)), []
    pattern_key = _first_present(cfg, "sliding_window_pattern", "_sliding_window_pattern")
    if pattern_key is not None:
        period = _get_int(cfg, pattern_key)
        layers = _layer_count(cfg, pattern_key)
        full = layers // period
        counts = {"sliding_attention": layers - full, "full_attention": full}
        return {kind: count for kind, count in counts.items() if count}, [
            f"Layer kinds from {pattern_key} {period}: every {_ordinal(period)} layer is full attention "
            f"(layers {period - 1}, {2 * period - 1}, ... counting from 0)."
        ]
    if cfg.get("global_attn_every_n_layers") is not None:
        every = _get_int(cfg, "global_attn_every_n_layers")
        layers = _layer_count(cfg, "global_attn_every_n_layers")
        full = -(-layers // every)  # layers 0, every, 2 * every, ...: ceil(layers / every)
        counts = {"sliding_attention": layers - full, "full_attention": full}
        notes = [
            f"Layer kinds from global_attn_every_n_layers {every}: layers 0, {every}, {2 * every}, ... attend globally."
        ]
        if cfg.get("local_attention") is not None:
            window = _get_int(cfg, "local_attention")
            notes.append(
                f"The other layers attend both ways, to tokens at most {window // 2} positions away "
                f"(local_attention {window})."
            )
        return {kind: count for kind, count in counts.items() if count}, notes
    return {}, []


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _nope_layers(cfg: Mapping[str, Any]) -> tuple[int, ...]:
    """Indices (from 0) of layers without RoPE: SmolLM3's ``no_rope_layers`` or ``no_rope_layer_interval``.

    In ``no_rope_layers`` a 1 marks a layer that uses RoPE and a 0 a NoPE
    layer; without the list, ``no_rope_layer_interval`` ``k`` makes layer
    ``i`` a NoPE layer when ``(i + 1) % k == 0``, as transformers'
    ``SmolLM3Config`` does.
    """
    flags = cfg.get("no_rope_layers")
    if flags is not None:
        if isinstance(flags, (str, bytes)) or not isinstance(flags, Sequence):
            raise TypeError(f"config field no_rope_layers must be a list of 0s and 1s, got {describe_value(flags)}")
        for flag in flags:
            if isinstance(flag, bool) or flag not in (0, 1):
                raise ValueError(
                    f"config field no_rope_layers must hold only 0 (NoPE) and 1 (RoPE), got {describe_value(flag)}"
                )
        return tuple(i for i, flag in enumerate(flags) if flag == 0)
    if cfg.get("no_rope_layer_interval") is not None:
        interval = _get_int(cfg, "no_rope_layer_interval")
        layers = _layer_count(cfg, "no_rope_layer_interval")
        return tuple(i for i in range(layers) if (i + 1) % interval == 0)
    return ()


def _schema_notes(cfg: Mapping[str, Any], rope: Mapping[str, Any], where: str, base: float) -> list[str]:
    """Which schema the parameters came from (v5 only), and a base that was assumed rather than read."""
    notes = []
    stated = _first_present(rope, "rope_theta") or _first_present(
        cfg, "rope_theta", "rotary_emb_base", "global_rope_theta"
    )
    if base == _ASSUMED_BASE and stated is None:
        notes.append("No RoPE base is stated anywhere in this config: the base 10000 above is assumed, not read.")
    if where.startswith("rope_parameters"):
        notes.append(
            f"Read from {where} (the transformers v5 schema: rope_theta sits inside rope_parameters, "
            "one mapping per layer type where the layers differ; code that still reads config.rope_theta "
            "gets a default instead)."
        )
    return notes


def _hybrid_notes(cfg: Mapping[str, Any], nope_layers: tuple[int, ...]) -> list[str]:
    """What a hybrid's layers carry: the direction of ``no_rope_layers``, chunked attention, Llama 4's temperature."""
    notes = []
    if cfg.get("no_rope_layers") is not None and nope_layers:
        notes.append("no_rope_layers reads backwards: a 1 marks a layer that uses RoPE, a 0 a layer without it (NoPE).")
    if cfg.get("attention_chunk_size") is not None:
        chunk = _get_int(cfg, "attention_chunk_size")
        where = "The RoPE layers" if nope_layers else "Chunked layers"
        notes.append(
            f"{where} attend only within chunks of {chunk} tokens (attention_chunk_size): a token sees the "
            f"earlier tokens of its own chunk, so relative offsets stay below {chunk}."
        )
    if cfg.get("attn_temperature_tuning") and nope_layers:
        floor_scale = _get_real(cfg, "floor_scale") if cfg.get("floor_scale") is not None else 8192.0
        attn_scale = _get_real(cfg, "attn_scale") if cfg.get("attn_scale") is not None else 0.1
        notes.append(
            f"The NoPE layers multiply each query at position t by 1 + {attn_scale:g} ln(floor((t + 1) / "
            f"{floor_scale:g}) + 1) (attn_temperature_tuning): 1 up to position {floor_scale - 2:g}, then rising "
            "logarithmically (llama4_attention_scale)."
        )
    return notes


def _recurrent_and_mrope_notes(
    layer_counts: Mapping[str, int], rope: Mapping[str, Any], where: str, mrope_section: tuple[int, ...] | None
) -> list[str]:
    """Linear-attention layers (Qwen3-Next) carry no RoPE; Qwen3-VL's ``mrope_interleaved`` deals pairs out in turn."""
    notes = []
    linear = layer_counts.get("linear_attention", 0)
    if linear:
        notes.append(
            f"The {linear} linear_attention layers (linear attention such as Gated DeltaNet) apply no RoPE: "
            "they read the tokens in order and carry it in their recurrent state; only the attention layers rotate."
        )
    interleaved = rope.get("mrope_interleaved")
    if interleaved is not None and not isinstance(interleaved, bool):
        raise TypeError(
            f"config field {where}.mrope_interleaved must be true or false, got {describe_value(interleaved)}"
        )
    if interleaved and mrope_section is not None:
        if len(mrope_section) != 3:
            raise ValueError(
                f"config field {where}.mrope_section must give 3 counts (time, height, width) when "
                f"mrope_interleaved is true, got {list(mrope_section)}"
            )
        try:  # the layout itself is rope_2d's; it refuses sections that do not interleave
            axes = mrope_pair_axes(mrope_section, arrangement="interleaved")
        except ValueError as error:
            raise ValueError(f"config field {where}.mrope_section: {error}") from None
        t, h, w = (int(np.count_nonzero(axes == axis)) for axis in range(3))
        notes.append(
            f"Interleaved M-RoPE (mrope_interleaved): pair j follows height when j % 3 == 1 and j < {3 * h}, "
            f"width when j % 3 == 2 and j < {3 * w}, time otherwise ({t} pairs): each axis gets fast and slow "
            "pairs instead of one contiguous block."
        )
    return notes


def _yarn_mscale(factor: float, mscale: float) -> float:
    return 1.0 if factor <= 1.0 else 0.1 * mscale * math.log(factor) + 1.0


def shipped_configs() -> dict[str, dict[str, Any]]:
    """The position fields of public models that ship with the package.

    Each entry holds ``name``, ``config_url`` (the published ``config.json``
    on huggingface.co), ``source`` (what the numbers were checked against),
    ``read_on`` (the date), ``chapter`` (12 for the configs chapter 12
    decodes, 13 for the 2025-2026 models of chapter 13), ``notes`` and
    ``config`` (the position fields only, in Hugging Face form, ready for
    :func:`describe`).

    Parameters
    ----------
    None

    Returns
    -------
    dict of str to dict
        A fresh copy, keyed by a short model name such as ``"llama-3.1-8b"``.

    Raises
    ------
    OSError
        Only if the package's data file is missing (a broken installation).

    Examples
    --------
    >>> configs = shipped_configs()
    >>> configs["llama-3.1-8b"]["config"]["rope_theta"]
    500000.0
    """
    text = resources.files("posenc_helpers").joinpath("data/model_configs.json").read_text(encoding="utf-8")
    return copy.deepcopy(json.loads(text)["models"])
