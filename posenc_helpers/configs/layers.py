"""A config's layers: which kinds there are, which apply no RoPE, and what a hybrid adds.

:func:`read_layers` reads the layer pattern (``layer_types``, Gemma 3's
``sliding_window_pattern``, ModernBERT's ``global_attn_every_n_layers``), the
sliding window, NoPE layers (SmolLM3, Llama 4), chunked attention, linear
attention layers, interleaved M-RoPE and the base of local layers, for
:func:`~posenc_helpers.configs.describe`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validation import describe_value
from ..rope_2d import mrope_pair_axes
from .fields import config_int, config_real, first_present

__all__ = ["LayerStory", "read_layers"]


@dataclass(frozen=True)
class LayerStory:
    """What a config says about its layers (the fields of the same names in a ``PositionReport``).

    Attributes
    ----------
    sliding_window : int or None
        The sliding-window width of local attention layers, if any.
    layer_counts : dict of str to int
        How many layers of each kind (empty if not stated).
    nope_layers : tuple of int
        Indices (from 0) of the layers without RoPE.
    local_base : float or None
        The RoPE base of sliding-window layers where it differs.
    notes : tuple of str
        What the report adds in words, in order.
    """

    sliding_window: int | None = None
    layer_counts: dict[str, int] = field(default_factory=dict)
    nope_layers: tuple[int, ...] = ()
    local_base: float | None = None
    notes: tuple[str, ...] = ()


def read_layers(
    cfg: Mapping[str, Any],
    rope: Mapping[str, Any],
    where: str,
    mrope_section: tuple[int, ...] | None,
    local_rope: Mapping[str, Any] | None,
) -> LayerStory:
    """Read a config's layers.

    Parameters
    ----------
    cfg : mapping
        The config, ``text_config`` merged over the top level.
    rope : mapping
        Its RoPE parameters (``rope_scaling`` or ``rope_parameters``).
    where : str
        Where ``rope`` was found, for messages.
    mrope_section : tuple of int or None
        Multimodal RoPE: how many pairs follow time, height and width.
    local_rope : mapping or None
        The sliding-window layers' own RoPE parameters (v5), if separate.

    Returns
    -------
    LayerStory

    Raises
    ------
    TypeError, ValueError
        If a layer field is of the wrong kind or out of range; the message names it.

    Examples
    --------
    >>> story = read_layers({"layer_types": ["full_attention", "sliding_attention"]}, {}, "rope_scaling", None, None)
    >>> story.layer_counts
    {'full_attention': 1, 'sliding_attention': 1}
    """
    sliding_window = _sliding_window(cfg)
    layer_counts, notes = _layer_pattern(cfg)
    nope_layers = _nope_layers(cfg)
    notes.extend(_hybrid_notes(cfg, nope_layers))
    notes.extend(_recurrent_and_mrope_notes(layer_counts, rope, where, mrope_section))
    local_base = _local_base(cfg, local_rope)
    return LayerStory(sliding_window, layer_counts, nope_layers, local_base, tuple(notes))


def _sliding_window(cfg: Mapping[str, Any]) -> int | None:
    if cfg.get("sliding_window") is not None and cfg.get("use_sliding_window") is not False:
        return config_int(cfg, "sliding_window")
    return None


def _local_base(cfg: Mapping[str, Any], local_rope: Mapping[str, Any] | None) -> float | None:
    """The RoPE base of sliding-window layers, where it differs."""
    if local_rope is not None and local_rope.get("rope_theta") is not None:
        return config_real(local_rope, "rope_theta", path="rope_parameters.sliding_attention.rope_theta")
    local_key = first_present(cfg, "rope_local_base_freq", "local_rope_theta")
    return None if local_key is None else config_real(cfg, local_key)


def _layer_count(cfg: Mapping[str, Any], pattern_key: str) -> int:
    if cfg.get("num_hidden_layers") is None:
        raise ValueError(f"config field num_hidden_layers is missing: {pattern_key} needs the number of layers")
    return config_int(cfg, "num_hidden_layers")


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
    pattern_key = first_present(cfg, "sliding_window_pattern", "_sliding_window_pattern")
    if pattern_key is not None:
        period = config_int(cfg, pattern_key)
        layers = _layer_count(cfg, pattern_key)
        full = layers // period
        counts = {"sliding_attention": layers - full, "full_attention": full}
        return {kind: count for kind, count in counts.items() if count}, [
            f"Layer kinds from {pattern_key} {period}: every {_ordinal(period)} layer is full attention "
            f"(layers {period - 1}, {2 * period - 1}, ... counting from 0)."
        ]
    if cfg.get("global_attn_every_n_layers") is not None:
        every = config_int(cfg, "global_attn_every_n_layers")
        layers = _layer_count(cfg, "global_attn_every_n_layers")
        full = -(-layers // every)  # layers 0, every, 2 * every, ...: ceil(layers / every)
        counts = {"sliding_attention": layers - full, "full_attention": full}
        notes = [
            f"Layer kinds from global_attn_every_n_layers {every}: layers 0, {every}, {2 * every}, ... attend globally."
        ]
        if cfg.get("local_attention") is not None:
            window = config_int(cfg, "local_attention")
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
        interval = config_int(cfg, "no_rope_layer_interval")
        layers = _layer_count(cfg, "no_rope_layer_interval")
        return tuple(i for i in range(layers) if (i + 1) % interval == 0)
    return ()


def _hybrid_notes(cfg: Mapping[str, Any], nope_layers: tuple[int, ...]) -> list[str]:
    """What a hybrid's layers carry: the direction of ``no_rope_layers``, chunked attention, Llama 4's temperature."""
    notes = []
    if cfg.get("no_rope_layers") is not None and nope_layers:
        notes.append("no_rope_layers reads backwards: a 1 marks a layer that uses RoPE, a 0 a layer without it (NoPE).")
    if cfg.get("attention_chunk_size") is not None:
        chunk = config_int(cfg, "attention_chunk_size")
        where = "The RoPE layers" if nope_layers else "Chunked layers"
        notes.append(
            f"{where} attend only within chunks of {chunk} tokens (attention_chunk_size): a token sees the "
            f"earlier tokens of its own chunk, so relative offsets stay below {chunk}."
        )
    if cfg.get("attn_temperature_tuning") and nope_layers:
        floor_scale = config_real(cfg, "floor_scale") if cfg.get("floor_scale") is not None else 8192.0
        attn_scale = config_real(cfg, "attn_scale") if cfg.get("attn_scale") is not None else 0.1
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
