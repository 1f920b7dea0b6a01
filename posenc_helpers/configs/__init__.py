"""What a model's ``config.json`` says about positions, in numbers and in words.

:func:`describe` reads a Hugging Face style configuration (a mapping, as
``json.load`` returns it) and reports its position story: the RoPE base and
rotary width, the rescaling method and its parameters, the length the
rescaling formula is anchored to (``original_max_position_embeddings``, which
is not necessarily the length the model was trained on) and the longest
context, the frequency and wavelength of every pair at the longest context,
which pairs the rescaling kept, interpolated or blended, what scales the
attention logits and which query/key features that touches, and how finely
float32 and bfloat16 resolve the largest angle. Both config layouts are read: the older
``rope_theta`` plus ``rope_scaling`` (keyed ``rope_type`` or ``type``), and the
newer ``rope_parameters`` of transformers v5, a flat mapping or one mapping per
layer type (``"full_attention"``, ``"sliding_attention"``).

The position fields of a few public models ship with the package
(:func:`shipped_configs`), each with the address of its published
``config.json`` and the source the numbers were checked against.

From a shell::

    python -m posenc_helpers.configs path/to/config.json
    python -m posenc_helpers.configs llama-3.1-8b      # a shipped model
"""

from __future__ import annotations

import copy
import json
import math
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import numpy as np

from .._validation import describe_value
from ..long_context import scaled_rope_frequencies
from ..rope import rope_frequencies

__all__ = ["PositionReport", "describe", "shipped_configs", "main"]

ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "llama3", "longrope")

_KEPT_TOLERANCE = 1e-9  # relative: a pair whose frequency moved less than this is "kept"


@dataclass(frozen=True, eq=False)
class PositionReport:
    """A model's positions, as :func:`describe` reads them from its config.

    Attributes
    ----------
    name : str
        The model's name (the config's ``_name_or_path`` or ``model_type`` if
        no name was given).
    method : str
        The ``rope_type``: ``"default"`` (plain RoPE) or a rescaling method of
        :func:`~posenc_helpers.scaled_rope_frequencies`.
    base : float
        The RoPE base ``rope_theta`` (of the full-attention layers).
    head_dim : int
        Width of one attention head.
    rotary_dim : int
        How many of its features are rotated (``head_dim`` unless the model is
        partially rotary).
    inv_freq : numpy.ndarray
        Frequency of each pair at the longest context, ``(rotary_dim // 2,)``.
    original_inv_freq : numpy.ndarray
        The frequencies before any rescaling, ``base**(-2i / rotary_dim)``.
    attention_factor : float
        What cos and sin are multiplied by (Hugging Face's
        ``attention_factor``): it scales the ``rotary_dim`` rotated features of
        queries and keys, so the rotary part of every logit by its square; the
        other ``head_dim - rotary_dim`` features are not scaled.
    softmax_scale : float
        What the softmax scale ``1 / sqrt(head_dim)`` is multiplied by, over
        all ``head_dim`` query/key features: ``(0.1 * mscale_all_dim * ln(s)
        + 1)**2`` for a YaRN config with ``mscale_all_dim`` (DeepSeek's
        multi-head latent attention), else 1.
    factor : float or None
        The rescaling factor ``s`` (None for plain RoPE).
    anchor_context : int or None
        The length ``L`` the rescaling formula is anchored to:
        ``original_max_position_embeddings``, or ``max_position_embeddings``
        where the method falls back to it (dynamic NTK, and YaRN, llama3 or
        LongRoPE without the field); None for plain RoPE and for linear
        scaling without the field. It is *not* necessarily the length the
        model was trained on: Llama 3.1 and DeepSeek-V3 were trained far past it.
    anchor_field : str or None
        The config field ``anchor_context`` was read from.
    extended_context : int
        The longest context the config provides for.
    wavelengths : numpy.ndarray
        ``2 pi / inv_freq``, tokens per turn of each pair.
    stretch : numpy.ndarray
        ``original_inv_freq / inv_freq``: how much each pair was slowed.
    kept, interpolated, in_between : numpy.ndarray
        Pair indices whose frequency was kept (stretch 1), slowed by the whole
        factor or more, or something in between.
    max_angle : float
        The largest angle, radians: last position ``extended_context - 1``
        times the fastest frequency.
    float32_resolution, bfloat16_resolution : float
        Spacing of representable numbers at ``max_angle`` in float32 and in
        bfloat16 (8 significant bits: ``2**(floor(log2 x) - 7)``).
    sliding_window : int or None
        The sliding-window width of local attention layers, if any.
    layer_counts : dict of str to int
        How many layers of each ``layer_types`` entry (empty if not stated).
    local_base : float or None
        The RoPE base of sliding-window layers where it differs
        (``rope_local_base_freq``, ``local_rope_theta`` or the
        ``sliding_attention`` parameters).
    mrope_section : tuple of int or None
        Multimodal RoPE: how many pairs follow time, height and width.
    nope_layers : tuple of int
        Indices (from 0) of layers that apply no rotary embedding at all
        (SmolLM3's ``no_rope_layers``); empty when every layer uses RoPE.
    notes : tuple of str
        Anything else worth saying about this config.

    Examples
    --------
    >>> report = describe({"rope_theta": 10000.0, "head_dim": 4, "max_position_embeddings": 100})
    >>> report.method, report.rotary_dim, report.inv_freq
    ('default', 4, array([1.  , 0.01]))
    """

    name: str
    method: str
    base: float
    head_dim: int
    rotary_dim: int
    inv_freq: np.ndarray
    original_inv_freq: np.ndarray
    attention_factor: float
    factor: float | None
    anchor_context: int | None
    extended_context: int
    wavelengths: np.ndarray
    stretch: np.ndarray
    kept: np.ndarray
    interpolated: np.ndarray
    in_between: np.ndarray
    max_angle: float
    float32_resolution: float
    bfloat16_resolution: float
    sliding_window: int | None = None
    layer_counts: dict[str, int] = field(default_factory=dict)
    local_base: float | None = None
    mrope_section: tuple[int, ...] | None = None
    nope_layers: tuple[int, ...] = ()
    notes: tuple[str, ...] = ()
    softmax_scale: float = 1.0
    anchor_field: str | None = None

    def to_text(self) -> str:
        """The report in plain words, one fact a line."""
        pairs = self.rotary_dim // 2
        lines = [f"{self.name}: positions by rotary embedding (RoPE)."]
        share = "all " if self.rotary_dim == self.head_dim else ""
        lines.append(
            f"- RoPE base {self.base:g}; {share}{self.rotary_dim} of {self.head_dim} features per head "
            f"are rotated, in {pairs} frequency pairs."
        )
        lines.append(
            f"- Wavelengths before rescaling run from {self.original_wavelength(0):.3g} to "
            f"{self.original_wavelength(pairs - 1):.3g} tokens."
        )
        if self.anchor_context is None:
            anchor = "anchored to no length (none is stated, and the rule needs none)"
        else:
            anchor = (
                f"anchored at {self.anchor_field} = {self.anchor_context} tokens (the length the formula is "
                "anchored to, not necessarily the length the model was trained on)"
            )
        if self.method == "default":
            lines.append(f"- No rescaling: context {self.extended_context} tokens.")
        else:
            lines.append(
                f"- Rescaling: {self.method} with factor {self.factor:g}, {anchor}; longest context "
                f"{self.extended_context} tokens."
            )
            lines.append(
                f"- At the longest context, {_count(self.kept)} pairs keep their frequency{_span(self.kept)}, "
                f"{_count(self.interpolated)} are slowed by the full factor or more{_span(self.interpolated)}, "
                f"{_count(self.in_between)} lie in between{_span(self.in_between)}."
            )
            lines.append(
                f"- Wavelengths after rescaling: {self.wavelengths[0]:.3g} to {self.wavelengths[-1]:.3g} tokens."
            )
        if self.attention_factor != 1.0:
            untouched = self.head_dim - self.rotary_dim
            rest = f"; the other {untouched} features are not scaled" if untouched else ""
            lines.append(
                f"- cos and sin are multiplied by {self.attention_factor:.4g} (the attention factor): the "
                f"{self.rotary_dim} rotated features of each query and key are scaled by it, so the rotary part "
                f"of every logit by {self.attention_factor**2:.4g}{rest}."
            )
        if self.softmax_scale != 1.0:
            lines.append(
                f"- The softmax scale 1/sqrt({self.head_dim}) is multiplied by {self.softmax_scale:.4g} "
                "(0.1 mscale_all_dim ln(factor) + 1, squared, as DeepSeek's reference code and transformers' "
                f"DeepseekV3Attention do): every logit, over all {self.head_dim} query/key features."
            )
        if self.attention_factor == 1.0 and self.softmax_scale == 1.0:
            lines.append("- Attention logits are not rescaled.")
        lines.append(
            f"- At the last position ({self.extended_context - 1}) the fastest pair has turned "
            f"{self.max_angle:.6g} radians: float32 resolves {self.float32_resolution:.3g} rad there, "
            f"bfloat16 only {self.bfloat16_resolution:.3g} rad. Compute angles in float32 or better."
        )
        if self.layer_counts:
            kinds = ", ".join(f"{count} {kind}" for kind, count in self.layer_counts.items())
            lines.append(f"- Layers: {kinds}.")
        if self.sliding_window is not None and self.sliding_window >= self.extended_context:
            lines.append(
                f"- A sliding window of {self.sliding_window} tokens is set, no shorter than the longest "
                f"context ({self.extended_context}): every layer sees every earlier token."
            )
        elif self.sliding_window is not None:
            lines.append(f"- Sliding-window layers attend to the last {self.sliding_window} tokens.")
        if self.local_base is not None:
            lines.append(f"- Local (sliding-window) layers use RoPE base {self.local_base:g}, without rescaling.")
        if self.nope_layers:
            listed = ", ".join(str(i) for i in self.nope_layers)
            lines.append(
                f"- {len(self.nope_layers)} layers use no position encoding at all (NoPE): layers {listed} "
                "(counting from 0)."
            )
        if self.mrope_section is not None:
            sections = ", ".join(str(n) for n in self.mrope_section)
            lines.append(f"- Multimodal RoPE: pairs split {sections} between time, height and width positions.")
        lines.extend(f"- {note}" for note in self.notes)
        return "\n".join(lines)

    def original_wavelength(self, pair: int) -> float:
        """Wavelength of ``pair`` before rescaling, tokens."""
        return float(2.0 * math.pi / self.original_inv_freq[pair])

    def __str__(self) -> str:
        return self.to_text()


def _count(indices: np.ndarray) -> int:
    return int(indices.size)


def _span(indices: np.ndarray) -> str:
    if indices.size == 0:
        return ""
    if indices.size == 1:
        return f" (pair {int(indices[0])})"
    if np.all(np.diff(indices) == 1):
        return f" (pairs {int(indices[0])}-{int(indices[-1])})"
    return f" ({indices.size} scattered pairs)"


def _bfloat16_spacing(x: float) -> float:
    """Spacing of bfloat16 numbers at ``|x|``: ``2**(floor(log2 |x|) - 7)`` (8 significant bits)."""
    if x == 0:
        return 2.0**-133  # the smallest subnormal
    _, exponent = math.frexp(abs(x))  # |x| = m * 2**exponent with 0.5 <= m < 1: floor(log2 |x|) = exponent - 1
    return math.ldexp(1.0, exponent - 1 - 7)


# ---------------------------------------------------------------- reading fields


def _field_error(path: str, message: str) -> ValueError:
    return ValueError(f"config field {path}: {message}")


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
        (SmolLM3), and ``use_sliding_window`` (a ``sliding_window`` is ignored
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
    three position axes.

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
    if not isinstance(config, Mapping):
        raise TypeError(f"config must be a mapping (a parsed config.json), got {describe_value(config)}")
    cfg: dict[str, Any] = dict(config)
    text_config = cfg.get("text_config")
    if text_config is not None:
        if not isinstance(text_config, Mapping):
            raise TypeError(f"config field text_config must be a mapping, got {describe_value(text_config)}")
        cfg.update(text_config)
    if name is None:
        name = str(cfg.get("_name_or_path") or cfg.get("model_type") or "model")
    elif not isinstance(name, str):
        raise TypeError(f"name must be a string, got {describe_value(name)}")

    rope, where, local_rope = _rope_parameters(cfg)
    rope_type = rope.get("rope_type", rope.get("type", "default"))
    notes: list[str] = []
    mrope_section = None
    if rope.get("mrope_section") is not None:
        section = rope["mrope_section"]
        if isinstance(section, (str, bytes)) or not isinstance(section, Sequence):
            raise TypeError(f"config field {where}.mrope_section must be a list of integers, got {section!r}")
        mrope_section = tuple(int(n) for n in section)
    if rope_type == "mrope":  # Qwen2-VL: plain RoPE frequencies, pairs split between three axes
        rope_type = "default"
    if not isinstance(rope_type, str) or rope_type not in ROPE_TYPES:
        allowed = ", ".join(repr(t) for t in ROPE_TYPES + ("mrope",))
        raise ValueError(f"config field {where}.rope_type must be one of {allowed}, got {rope_type!r}")

    base_key = _first_present(rope, "rope_theta")
    base_source: Mapping[str, Any] = rope
    if base_key is None:
        base_source = cfg
        base_key = _first_present(cfg, "rope_theta", "rotary_emb_base", "global_rope_theta")
    if base_key is None:
        raise ValueError(
            "config field rope_theta is missing: RoPE needs its base (rope_theta, or rotary_emb_base for GPT-NeoX)"
        )
    base = _get_real(base_source, base_key, path=base_key if base_source is cfg else f"{where}.{base_key}")

    head_dim, rotary_width = _head_dims(cfg)
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

    def required_real(key: str) -> float:
        if rope.get(key) is None:
            raise ValueError(f"config field {where}.{key} is required for rope_type {rope_type!r}")
        return _get_real(rope, key, path=f"{where}.{key}")

    def optional_real(key: str) -> float | None:
        return None if rope.get(key) is None else _get_real(rope, key, path=f"{where}.{key}")

    unscaled = rope_frequencies(rotary_width, base=base)
    factor: float | None = None
    attention_factor = 1.0
    softmax_scale = 1.0
    trained: int | None  # the anchor length L of the rescaling formula
    anchor_field: str | None = None
    if rope_type == "default":
        inv_freq, trained, extended = unscaled, None, max_len
    elif rope_type == "linear":
        factor = required_real("factor")
        inv_freq, attention_factor = scaled_rope_frequencies(rotary_width, base=base, method="linear", factor=factor)
        trained, extended = original, max_len
        anchor_field = None if original is None else original_field
    elif rope_type == "dynamic":
        factor = required_real("factor")
        trained, anchor_field = max_len, "max_position_embeddings"  # what transformers 4.56 anchors it to
        extended = max(max_len, int(round(factor * max_len)))
        inv_freq, attention_factor = scaled_rope_frequencies(
            rotary_width, base=base, method="dynamic", factor=factor, original_max_len=max_len, seq_len=extended
        )
        notes.append(
            f"Dynamic NTK recomputes the base for the current length; shown at {extended} tokens "
            f"(factor x max_position_embeddings). Up to {max_len} tokens the frequencies are unscaled."
        )
    else:
        trained = max_len if original is None else original
        anchor_field = original_field
        factor = optional_real("factor")
        if rope_type == "longrope" and original is not None:
            factor = max_len / original  # transformers uses the ratio whenever both lengths are stated (Phi-3)
        elif factor is None and rope_type != "llama3":
            factor = max_len / trained  # how HF derives it when no factor is given
        elif factor is None:
            factor = required_real("factor")
        extended = max(max_len, int(round(factor * trained)))
        if rope_type == "yarn" and original is not None and not math.isclose(factor, max_len / original):
            notes.append(
                f"factor {factor:g} differs from max_position_embeddings / original_max_position_embeddings "
                f"= {max_len / original:g}. transformers uses factor from release 4.56 on; earlier releases "
                "used the ratio for YaRN (transformers issue #38224, fixed by pull request #40320)."
            )
        if rope_type == "yarn":
            attention = optional_real("attention_factor")
            mscale, mscale_all_dim = optional_real("mscale"), optional_real("mscale_all_dim")
            if attention is None and mscale and mscale_all_dim:
                attention = _yarn_mscale(factor, mscale) / _yarn_mscale(factor, mscale_all_dim)
            if mscale_all_dim:
                softmax_scale = _yarn_mscale(factor, mscale_all_dim) ** 2
            truncate = rope.get("truncate", True)
            if not isinstance(truncate, bool):
                raise TypeError(f"config field {where}.truncate must be true or false, got {truncate!r}")
            inv_freq, attention_factor = scaled_rope_frequencies(
                rotary_width,
                base=base,
                method="yarn",
                factor=factor,
                original_max_len=trained,
                beta_fast=optional_real("beta_fast") or 32.0,
                beta_slow=optional_real("beta_slow") or 1.0,
                truncate=truncate,
                attention_factor=attention,
            )
        elif rope_type == "llama3":
            inv_freq, attention_factor = scaled_rope_frequencies(
                rotary_width,
                base=base,
                method="llama3",
                factor=factor,
                original_max_len=trained,
                low_freq_factor=required_real("low_freq_factor"),
                high_freq_factor=required_real("high_freq_factor"),
            )
        else:  # longrope
            for key in ("short_factor", "long_factor"):
                if rope.get(key) is None:
                    raise ValueError(f"config field {where}.{key} is required for rope_type 'longrope'")
            try:
                inv_freq, attention_factor = scaled_rope_frequencies(
                    rotary_width,
                    base=base,
                    method="longrope",
                    factor=factor,
                    original_max_len=trained,
                    short_factor=rope["short_factor"],
                    long_factor=rope["long_factor"],
                    seq_len=extended,
                    attention_factor=optional_real("attention_factor"),
                )
            except (TypeError, ValueError) as error:
                raise type(error)(f"config field {where}: {error}") from None
            notes.append(
                f"LongRoPE switches from short_factor to long_factor once a sequence is longer than {trained} "
                "tokens (transformers decides at every forward pass): keys cached before the switch stay rotated "
                "with the short factors. Shown with long_factor."
            )

    stretch = unscaled / inv_freq
    kept = np.flatnonzero(np.abs(stretch - 1.0) <= _KEPT_TOLERANCE)
    if factor is not None and factor > 1.0:
        interpolated = np.flatnonzero(stretch >= factor * (1.0 - _KEPT_TOLERANCE))
    else:
        interpolated = np.flatnonzero(np.zeros(stretch.shape, dtype=bool))
    in_between = np.setdiff1d(np.arange(stretch.size), np.concatenate([kept, interpolated]))
    max_angle = float((extended - 1) * inv_freq.max())

    sliding_window = None
    if cfg.get("sliding_window") is not None and cfg.get("use_sliding_window") is not False:
        sliding_window = _get_int(cfg, "sliding_window")
    layer_counts, layer_notes = _layer_pattern(cfg)
    notes.extend(layer_notes)
    nope_layers = _nope_layers(cfg)
    local_base = None
    if local_rope is not None and local_rope.get("rope_theta") is not None:
        local_base = _get_real(local_rope, "rope_theta", path="rope_parameters.sliding_attention.rope_theta")
    else:
        local_key = _first_present(cfg, "rope_local_base_freq", "local_rope_theta")
        if local_key is not None:
            local_base = _get_real(cfg, local_key)

    return PositionReport(
        name=name,
        method=rope_type,
        base=base,
        head_dim=head_dim,
        rotary_dim=rotary_width,
        inv_freq=inv_freq,
        original_inv_freq=unscaled,
        attention_factor=float(attention_factor),
        softmax_scale=float(softmax_scale),
        factor=factor,
        anchor_context=trained,
        anchor_field=anchor_field,
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
    )


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


def _yarn_mscale(factor: float, mscale: float) -> float:
    return 1.0 if factor <= 1.0 else 0.1 * mscale * math.log(factor) + 1.0


def shipped_configs() -> dict[str, dict[str, Any]]:
    """The position fields of public models that ship with the package.

    Each entry holds ``name``, ``config_url`` (the published ``config.json``
    on huggingface.co), ``source`` (what the numbers were checked against),
    ``read_on`` (the date), ``notes`` and ``config`` (the position fields only,
    in Hugging Face form, ready for :func:`describe`).

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


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: print the position report of a config file (or a shipped model).

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name; default ``sys.argv[1:]``. One
        argument: a path to a ``config.json``, or the key of a shipped model.

    Returns
    -------
    int
        0 on success (and for ``-h`` or ``--help``, which print the usage); 1
        when the file cannot be read or describes no usable RoPE (the reason
        goes to stderr); 2 for a wrong number of arguments.

    Raises
    ------
    TypeError
        Never for a bad file (that is exit status 1); only if ``argv`` is not a
        sequence of strings.

    Examples
    --------
    >>> main(["llama-3.1-8b"])  # doctest: +ELLIPSIS
    Llama 3.1 8B: positions by rotary embedding (RoPE).
    ...
    0
    """
    args = list(sys.argv[1:] if argv is None else argv)
    usage = (
        "usage: python -m posenc_helpers.configs CONFIG_JSON_OR_MODEL\n"
        "Explain the positions of a Hugging Face config.json, or of a shipped model:\n"
        f"  {', '.join(shipped_configs())}"
    )
    if args in (["-h"], ["--help"]):
        print(usage)
        return 0
    if len(args) != 1 or not isinstance(args[0], str):
        print(usage, file=sys.stderr)
        return 2
    target = args[0]
    shipped = shipped_configs()
    try:
        if target in shipped:
            config, name = shipped[target]["config"], shipped[target]["name"]
        else:
            with open(target, encoding="utf-8") as handle:
                config, name = json.load(handle), None
        report = describe(config, name=name)
    except OSError as error:
        print(f"error: cannot read {target}: {error.strerror or error}", file=sys.stderr)
        return 1
    except json.JSONDecodeError as error:
        print(f"error: {target} is not valid JSON: {error}", file=sys.stderr)
        return 1
    except (TypeError, ValueError) as error:
        print(f"error: {target}: {error}", file=sys.stderr)
        return 1
    print(report.to_text())
    return 0
