"""A model's positions in words: :func:`explain` (``str(report)``) and the command line, :func:`main`."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

import numpy as np

from .._validation import describe_value
from .reading import describe, shipped_configs
from .record import PositionReport

__all__ = ["explain", "main"]


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
