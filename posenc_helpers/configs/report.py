"""A model's position report: the typed record :func:`~posenc_helpers.configs.describe` fills, and its words.

:class:`PositionReport` holds the numbers; ``explain`` (``str(report)``)
says them in plain words, one fact a line. Reading a config into the record is
:mod:`.reading`; the command line is :mod:`.cli`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._validation import describe_value

__all__ = ["PositionReport", "explain"]


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
        """The report in plain words, one fact a line (``explain``)."""
        return explain(self)

    def original_wavelength(self, pair: int) -> float:
        """Wavelength of ``pair`` before rescaling, tokens."""
        return float(2.0 * math.pi / self.original_inv_freq[pair])

    def __str__(self) -> str:
        return self.to_text()


def explain(report: PositionReport) -> str:
    """A :class:`~posenc_helpers.PositionReport` in plain words, one fact a line (``str(report)``).

    Parameters
    ----------
    report : PositionReport
        What :func:`~posenc_helpers.configs.describe` read.

    Returns
    -------
    str
        The lines, joined by newlines.

    Raises
    ------
    TypeError
        If ``report`` is not a :class:`~posenc_helpers.PositionReport`.

    Examples
    --------
    >>> from posenc_helpers.configs import describe
    >>> report = describe({"rope_theta": 10000.0, "head_dim": 4, "max_position_embeddings": 100}, name="toy")
    >>> for line in explain(report).splitlines()[:5]:
    ...     print(line)
    toy: positions by rotary embedding (RoPE).
    - RoPE base 10000; all 4 of 4 features per head are rotated, in 2 frequency pairs.
    - Wavelengths before rescaling run from 6.28 to 628 tokens.
    - No rescaling: context 100 tokens.
    - Attention logits are not rescaled.
    """
    if not isinstance(report, PositionReport):
        raise TypeError(f"report must be a PositionReport (from describe), got {describe_value(report)}")
    if report.rope_free:
        return "\n".join(_rope_free_lines(report))
    pairs = report.rotary_dim // 2
    lines = [f"{report.name}: positions by rotary embedding (RoPE)."]
    share = "all " if report.rotary_dim == report.head_dim else ""
    lines.append(
        f"- RoPE base {report.base:g}; {share}{report.rotary_dim} of {report.head_dim} features per head "
        f"are rotated, in {pairs} frequency pairs."
    )
    lines.append(
        f"- Wavelengths before rescaling run from {report.original_wavelength(0):.3g} to "
        f"{report.original_wavelength(pairs - 1):.3g} tokens."
    )
    if report.anchor_context is None:
        anchor = "anchored to no length (none is stated, and the rule needs none)"
    else:
        anchor = (
            f"anchored at {report.anchor_field} = {report.anchor_context} tokens (the length the formula is "
            "anchored to, not necessarily the length the model was trained on)"
        )
    if report.method == "default" or report.factor is None:  # (proportional RoPE without a factor)
        lines.append(f"- No rescaling: context {report.extended_context} tokens.")
    else:
        lines.append(
            f"- Rescaling: {report.method} with factor {report.factor:g}, {anchor}; longest context "
            f"{report.extended_context} tokens."
        )
        lines.append(
            f"- At the longest context, {_count(report.kept)} pairs keep their frequency{_span(report.kept)}, "
            f"{_count(report.interpolated)} are slowed by the full factor or more{_span(report.interpolated)}, "
            f"{_count(report.in_between)} lie in between{_span(report.in_between)}."
        )
        lines.append(
            f"- Wavelengths after rescaling: {report.wavelengths[0]:.3g} to {report.wavelengths[-1]:.3g} tokens."
        )
    if report.attention_factor != 1.0:
        untouched = report.head_dim - report.rotary_dim
        rest = f"; the other {untouched} features are not scaled" if untouched else ""
        lines.append(
            f"- cos and sin are multiplied by {report.attention_factor:.4g} (the attention factor): the "
            f"{report.rotary_dim} rotated features of each query and key are scaled by it, so the rotary part "
            f"of every logit by {report.attention_factor**2:.4g}{rest}."
        )
    if report.softmax_scale != 1.0:
        lines.append(
            f"- The softmax scale 1/sqrt({report.head_dim}) is multiplied by {report.softmax_scale:.4g} "
            "(0.1 mscale_all_dim ln(factor) + 1, squared, as DeepSeek's reference code and transformers' "
            f"DeepseekV3Attention do): every logit, over all {report.head_dim} query/key features."
        )
    if report.attention_factor == 1.0 and report.softmax_scale == 1.0:
        lines.append("- Attention logits are not rescaled.")
    lines.append(
        f"- At the last position ({report.extended_context - 1}) the fastest pair has turned "
        f"{report.max_angle:.6g} radians: float32 resolves {report.float32_resolution:.3g} rad there, "
        f"bfloat16 only {report.bfloat16_resolution:.3g} rad. Compute angles in float32 or better."
    )
    if report.layer_counts:
        kinds = ", ".join(f"{count} {kind}" for kind, count in report.layer_counts.items())
        lines.append(f"- Layers: {kinds}.")
    if report.sliding_window is not None and report.sliding_window >= report.extended_context:
        lines.append(
            f"- A sliding window of {report.sliding_window} tokens is set, no shorter than the longest "
            f"context ({report.extended_context}): every layer sees every earlier token."
        )
    elif report.sliding_window is not None:
        lines.append(f"- Sliding-window layers attend to the last {report.sliding_window} tokens.")
    if report.local_base is not None:
        lines.append(f"- Local (sliding-window) layers use RoPE base {report.local_base:g}, without rescaling.")
    if report.nope_layers:
        listed = ", ".join(str(i) for i in report.nope_layers)
        lines.append(
            f"- {len(report.nope_layers)} layers use no position encoding at all (NoPE): layers {listed} "
            "(counting from 0)."
        )
    if report.mrope_section is not None:
        sections = ", ".join(str(n) for n in report.mrope_section)
        lines.append(f"- Multimodal RoPE: pairs split {sections} between time, height and width positions.")
    lines.extend(f"- {note}" for note in report.notes)
    return "\n".join(lines)


def _rope_free_lines(report: PositionReport) -> list[str]:
    """The words for a config in which no attention layer applies RoPE (``mla_use_nope``)."""
    lines = [f"{report.name}: no attention layer applies a positional encoding (NoPE)."]
    slice_ = ""
    if report.rotary_dim != report.head_dim:
        slice_ = (
            f" The {report.rotary_dim} query/key features that qk_rope_head_dim reserves in each "
            f"{report.head_dim}-feature head are not rotated either."
        )
    lines.append(
        "- mla_use_nope is true: the latent-attention layers rotate no query or key, so their scores do not "
        f"depend on positions at all.{slice_} Order reaches them only through the causal mask and through "
        "the layers between them."
    )
    lines.append(f"- Context {report.extended_context} tokens; no RoPE base or rescaling is used.")
    if report.layer_counts:
        kinds = ", ".join(f"{count} {kind}" for kind, count in report.layer_counts.items())
        lines.append(f"- Layers: {kinds}.")
    lines.extend(f"- {note}" for note in report.notes)
    return lines


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
