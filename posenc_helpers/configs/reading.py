"""Reading a model's ``config.json`` into a :class:`~posenc_helpers.PositionReport`: :func:`describe`.

The config's fields are read once, in order: the RoPE parameters and their
``rope_type``, the base, the rotary width, the context lengths; then the reader of
that ``rope_type`` (:data:`~posenc_helpers.configs.rescaling.RESCALING_READERS`, one function per
method, in :mod:`.rescaling`) computes the frequencies at the longest context and what they are
anchored to; then the layers (:mod:`.layers`). :func:`shipped_configs` gives the
position fields of a few public models. Putting the record into words is :mod:`.report`.
"""

from __future__ import annotations

import copy
import json
import math
import warnings
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

import numpy as np

from .._validation import describe_value
from ..rope import rope_frequencies
from .fields import config_int, config_real, first_present
from .layers import read_layers
from .report import PositionReport
from .rescaling import RESCALING_READERS, ROPE_TYPES, RopeFields

__all__ = ["ROPE_TYPES", "RESCALING_READERS", "describe", "shipped_configs"]

_KEPT_TOLERANCE = 1e-9  # relative: a pair whose frequency moved less than this is "kept"


def _bfloat16_spacing(x: float) -> float:
    """Spacing of bfloat16 numbers at ``|x|``: ``2**(floor(log2 |x|) - 7)`` (8 significant bits)."""
    if x == 0:
        return 2.0**-133  # the smallest subnormal
    _, exponent = math.frexp(abs(x))  # |x| = m * 2**exponent with 0.5 <= m < 1: floor(log2 |x|) = exponent - 1
    return math.ldexp(1.0, exponent - 1 - 7)


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
        rotary = config_int(cfg, "qk_rope_head_dim")
        nope = config_int(cfg, "qk_nope_head_dim", minimum=0) if cfg.get("qk_nope_head_dim") is not None else 0
        return nope + rotary, rotary
    if cfg.get("head_dim") is not None:
        return config_int(cfg, "head_dim"), None
    missing = [key for key in ("hidden_size", "num_attention_heads") if cfg.get(key) is None]
    if missing:
        raise ValueError(
            f"config field head_dim is missing and so is {' and '.join(missing)}: give head_dim, or "
            "hidden_size and num_attention_heads (head_dim = hidden_size // num_attention_heads)"
        )
    return config_int(cfg, "hidden_size") // config_int(cfg, "num_attention_heads"), None


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
    base_key = first_present(rope, "rope_theta")
    base_source: Mapping[str, Any] = rope
    if base_key is None:
        base_source = cfg
        base_key = first_present(cfg, "rope_theta", "rotary_emb_base", "global_rope_theta")
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
    return config_real(base_source, base_key, path=base_key if base_source is cfg else f"{where}.{base_key}")


_ASSUMED_BASE = 10000.0


def _rotary_widths(
    cfg: Mapping[str, Any], rope: Mapping[str, Any], rope_type: str = "default", head_dim_key: str | None = None
) -> tuple[int, int, list[str]]:
    """``(head_dim, rotary width, notes)``: the rotated share of each head.

    For ``"proportional"`` the rotary width is twice the number of pairs that
    turn, ``2 * int(partial_rotary_factor * head_dim // 2)``.
    """
    if head_dim_key is not None:  # Gemma 4: the global layers have their own, wider heads
        head_dim, rotary_width = config_int(cfg, head_dim_key), None
    else:
        head_dim, rotary_width = _head_dims(cfg)
    if rope_type == "proportional":
        share = config_real(rope, "partial_rotary_factor") if rope.get("partial_rotary_factor") is not None else 1.0
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
        factor_key = first_present(rope, "partial_rotary_factor")
        factor_source: Mapping[str, Any] = rope if factor_key else cfg
        factor_key = factor_key or first_present(cfg, "partial_rotary_factor", "rotary_pct")
        fraction = 1.0 if factor_key is None else config_real(factor_source, factor_key)
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
    max_len = config_int(cfg, "max_position_embeddings")
    if cfg.get("original_max_position_embeddings") is not None:  # wins over rope parameters, as in HF (Phi-3)
        original: int | None = config_int(cfg, "original_max_position_embeddings")
    elif rope.get("original_max_position_embeddings") is not None:
        original = config_int(
            rope, "original_max_position_embeddings", path=f"{where}.original_max_position_embeddings"
        )
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
    fields = RopeFields(rope, where, rope_type, base, rotary_width, max_len, original, original_field, head_dim)
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

    layers = read_layers(cfg, rope, where, mrope_section, local_rope)
    notes.extend(layers.notes)

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
        sliding_window=layers.sliding_window,
        layer_counts=layers.layer_counts,
        local_base=layers.local_base,
        mrope_section=mrope_section,
        nope_layers=layers.nope_layers,
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


def _schema_notes(cfg: Mapping[str, Any], rope: Mapping[str, Any], where: str, base: float) -> list[str]:
    """Which schema the parameters came from (v5 only), and a base that was assumed rather than read."""
    notes = []
    stated = first_present(rope, "rope_theta") or first_present(
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
