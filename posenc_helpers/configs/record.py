"""The typed record of a model's positions: what :func:`~posenc_helpers.configs.describe` reads.

Reading a config into it is :mod:`.reading`; saying it in words is :mod:`.reporting`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["PositionReport"]


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
    rope_free : bool
        True when no attention layer applies RoPE at all (``mla_use_nope``
        true, as in Kimi Linear): the RoPE numbers above are then what the
        config's fields would give, and none of them is used.
    parameters_field : str
        Where the RoPE parameters were read: ``"rope_scaling"`` (the schema
        before transformers v5), ``"rope_parameters"`` (v5, one mapping),
        ``"rope_parameters.<layer type>"`` (v5, one mapping per layer type: the
        full-attention layers' is reported) or ``"none"`` (neither field: plain
        RoPE from top-level fields).

    Examples
    --------
    >>> from posenc_helpers.configs import describe
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
    parameters_field: str = "none"
    rope_free: bool = False

    def to_text(self) -> str:
        """The report in plain words, one fact a line (``posenc_helpers.configs.explain``)."""
        from .reporting import explain  # reporting reads configs into records: imported when needed

        return explain(self)

    def original_wavelength(self, pair: int) -> float:
        """Wavelength of ``pair`` before rescaling, tokens."""
        return float(2.0 * math.pi / self.original_inv_freq[pair])

    def __str__(self) -> str:
        return self.to_text()
