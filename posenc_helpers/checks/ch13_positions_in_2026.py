"""Checks for chapter 13: proportional p-RoPE frequencies, the RoPE base of every layer of a 2026 config, and the
document boundaries FlashAttention's path reads from a packed row's position ids."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._validation import as_integer_array, describe_value, require_even_width, require_positive_real
from ..long_context import scaled_rope_frequencies
from ..packing import flash_varlen_cu_seqlens
from ..rope import rope_frequencies
from ._compare import as_answer_array, call_student_function, compare_arrays
from ._core import CheckFailed, CheckResult, is_placeholder, not_attempted, passed

__all__ = ["check_proportional_frequencies", "check_layer_bases", "check_varlen_boundaries"]


def _proportional_mistakes(
    expected: np.ndarray, head_dim: int, base: float, turning: int
) -> list[tuple[np.ndarray, str]]:
    """The frequencies that named mistakes give (those equal to the answer dropped)."""
    pairs = head_dim // 2
    ordinary = np.zeros(pairs)
    if turning:
        ordinary[:turning] = rope_frequencies(2 * turning, base=base)
    dimension_index = np.zeros(pairs)
    dimension_index[:turning] = base ** (-np.arange(turning) / head_dim)
    slow_ones = np.zeros(pairs)
    slow_ones[pairs - turning :] = rope_frequencies(head_dim, base=base)[pairs - turning :]
    mistakes = [
        (
            ordinary,
            "you computed the frequencies over the rotated width, as ordinary partial rotary does. In p-RoPE the "
            "exponent's denominator stays the full head width.",
        ),
        (rope_frequencies(head_dim, base=base), "every pair turns here; the pairs past the rotary share must be 0."),
        (dimension_index, "the exponent uses the pair index i as -2i / head_dim, not -i / head_dim."),
        (slow_ones, "the pairs that keep turning are the fast ones, at the start; the slow ones are set to 0."),
    ]
    return [(m, h) for m, h in mistakes if not np.allclose(m, expected, rtol=1e-9, atol=0)]


def check_proportional_frequencies(
    answer: Any, *, head_dim: int, base: float, partial_rotary_factor: float
) -> CheckResult:
    """Check the frequencies of proportional p-RoPE (Gemma 4's ``rope_type: "proportional"``).

    The answer holds one frequency per pair of the whole head,
    ``(head_dim // 2,)``, as chapter 13 defines p-RoPE: the first
    ``int(partial_rotary_factor * head_dim // 2)`` pairs turn at RoPE's
    frequencies for the full head width, the others have frequency 0. Hints
    name the usual slips: frequencies over the rotated width (ordinary partial
    rotary), every pair turning, the pair index without its factor 2 in the
    exponent, and the slow pairs kept instead of the fast ones.

    Parameters
    ----------
    answer : array_like or None
        The student's frequencies (``None`` or ``...`` while not attempted).
    head_dim : int
        Width of one head, a positive even integer.
    base : float
        RoPE base, ``> 0``.
    partial_rotary_factor : float
        The share of the pairs that turn, in ``(0, 1]``.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the frequencies are wrong; the message names the first pair that
        differs or the recognised mistake, never the expected values.
    TypeError, ValueError
        If a parameter is invalid (as for
        :func:`~posenc_helpers.scaled_rope_frequencies`).

    References
    ----------
    .. [1] Hugging Face, transformers v5, ``src/transformers/modeling_rope_utils.py``
       (``_compute_proportional_rope_parameters``).
    .. [2] F. Barbero et al., "Round and Round We Go! What makes Rotary
       Positional Encodings useful?", ICLR 2025 (arXiv:2410.06205).

    Examples
    --------
    >>> check_proportional_frequencies(None, head_dim=8, base=10000.0, partial_rotary_factor=0.5)
    Not attempted yet.
    Replace the placeholder with an array of 4 frequencies, one per pair of the head, then run the cell again.
    >>> check_proportional_frequencies([1.0, 0.01, 0.0, 0.0], head_dim=8, base=10000.0, partial_rotary_factor=0.5)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: your frequencies are not yet the 4 frequencies of proportional p-RoPE.
    Hint: you computed the frequencies over the rotated width, as ordinary partial rotary does. In p-RoPE
    the exponent's denominator stays the full head width.
    """
    head_dim = require_even_width(head_dim, "head_dim")
    expected, _ = scaled_rope_frequencies(
        head_dim, base=base, method="proportional", partial_rotary_factor=partial_rotary_factor
    )
    turning = int(np.count_nonzero(expected))
    if is_placeholder(answer):
        return not_attempted(f"an array of {head_dim // 2} frequencies, one per pair of the head")
    compare_arrays(
        answer,
        expected,
        name="your frequencies",
        description=f"the {head_dim // 2} frequencies of proportional p-RoPE",
        axes=("pair",),
        atol=0.0,
        rtol=1e-6,
        known_mistakes=_proportional_mistakes(expected, head_dim, float(base), turning),
        plural=True,
    )
    return passed(
        f"the fastest {turning} pairs turn at the full head's frequencies and the other {head_dim // 2 - turning} "
        "stand still.",
        check="check_proportional_frequencies",
    )


# --------------------------------------------------------------------------- a 2026 config, layer by layer
def _require_mapping(value: Any, name: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping, got {describe_value(value)}")
    return value


def _layer_fields(config: Any) -> tuple[list[str], list[int], dict[str, float]]:
    """``layer_types``, ``no_rope_layers`` and the base of each layer type, validated."""
    cfg = _require_mapping(config, "config")
    layer_types, flags = cfg.get("layer_types"), cfg.get("no_rope_layers")
    for field, value in (("layer_types", layer_types), ("no_rope_layers", flags)):
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not value:
            raise TypeError(f"config['{field}'] must be a non-empty list, got {describe_value(value)}")
    assert isinstance(layer_types, Sequence) and isinstance(flags, Sequence)
    if len(layer_types) != len(flags):
        raise ValueError(
            f"config['layer_types'] and config['no_rope_layers'] must have one entry per layer each, got "
            f"{len(layer_types)} and {len(flags)}"
        )
    if any(isinstance(f, bool) or f not in (0, 1) for f in flags):
        raise ValueError("config['no_rope_layers'] must hold only 0 (NoPE) and 1 (RoPE)")
    parameters = _require_mapping(cfg.get("rope_parameters"), "config['rope_parameters']")
    bases = {}
    for kind in set(layer_types):
        entry = _require_mapping(parameters.get(kind), f"config['rope_parameters']['{kind}']")
        bases[str(kind)] = require_positive_real(entry.get("rope_theta"), f"rope_parameters['{kind}']['rope_theta']")
    return [str(k) for k in layer_types], [int(f) for f in flags], bases


def _layer_bases(layer_types: list[str], flags: list[int], bases: dict[str, float]) -> np.ndarray:
    return np.array([bases[kind] if flag == 1 else 0.0 for kind, flag in zip(layer_types, flags, strict=True)])


def _layer_mistakes(
    expected: np.ndarray, layer_types: list[str], flags: list[int], bases: dict[str, float]
) -> list[tuple[np.ndarray, str]]:
    backwards = _layer_bases(layer_types, [1 - f for f in flags], bases)
    default = np.where(expected > 0, 10000.0, 0.0)
    kinds = sorted(bases)
    mistakes = [
        (
            backwards,
            "no_rope_layers reads backwards: a 1 marks a layer that uses RoPE, a 0 a layer without it.",
        ),
        (
            default,
            "10000 is the default that code reading config.rope_theta falls back to; in the v5 schema the base "
            "sits inside rope_parameters, one per layer type.",
        ),
        (
            np.array([bases[kind] for kind in layer_types]),
            "the NoPE layers apply no rotation at all: give them 0.",
        ),
    ]
    for kind in kinds:
        mistakes.append(
            (
                np.where(expected > 0, bases[kind], 0.0),
                "every RoPE layer has the same base here; each layer type has its own in rope_parameters.",
            )
        )
    if len(kinds) == 2:
        swapped = {kinds[0]: bases[kinds[1]], kinds[1]: bases[kinds[0]]}
        mistakes.append(
            (_layer_bases(layer_types, flags, swapped), "the two layer types' bases are swapped; match them by name.")
        )
    return [(m, h) for m, h in mistakes if not np.array_equal(m, expected)]


def check_layer_bases(answer: Any, *, config: Any) -> CheckResult:
    """Check the RoPE base of every layer of a config in the transformers v5 schema (0 for a NoPE layer).

    The config gives ``layer_types`` (one kind per layer), ``no_rope_layers``
    (one flag per layer) and ``rope_parameters`` with one mapping per layer
    kind, each with its ``rope_theta``. The answer holds, for each layer in
    order, the base its rotary embedding uses, or 0 where the layer applies
    none. Hints name the usual slips: ``no_rope_layers`` read backwards, the
    default 10000 of code that reads ``config.rope_theta``, a base for the
    NoPE layers, one base for every layer, and the layer kinds' bases swapped.

    Parameters
    ----------
    answer : array_like or None
        The student's bases, one per layer (``None`` or ``...`` while not
        attempted).
    config : mapping
        The config, with ``layer_types``, ``no_rope_layers`` (0 or 1 per
        layer) and ``rope_parameters[kind]["rope_theta"]`` for every kind.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the bases are wrong; the message names the first layer that
        differs or the recognised mistake, never the expected values.
    TypeError, ValueError
        If ``config`` lacks one of the fields above or they disagree in length.

    References
    ----------
    .. [1] Hugging Face, transformers v5 (``rope_parameters``, one mapping per
       layer type) and ``models/smollm3/configuration_smollm3.py``
       (``no_rope_layers``: 1 means the layer uses RoPE).

    Examples
    --------
    >>> cfg = {"layer_types": ["sliding_attention", "full_attention"], "no_rope_layers": [1, 0],
    ...        "rope_parameters": {"sliding_attention": {"rope_theta": 10000.0},
    ...                            "full_attention": {"rope_theta": 1e6}}}
    >>> check_layer_bases(None, config=cfg)
    Not attempted yet.
    Replace the placeholder with an array of 2 bases, one per layer (0 for a NoPE layer), then run the cell again.
    >>> check_layer_bases([0.0, 1e6], config=cfg)
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: your bases are not yet the RoPE base of each of the 2 layers (0 where
    a layer has none). Hint: no_rope_layers reads backwards: a 1 marks a layer that uses RoPE, a 0 a layer
    without it.
    """
    layer_types, flags, bases = _layer_fields(config)
    n = len(layer_types)
    if is_placeholder(answer):
        return not_attempted(f"an array of {n} bases, one per layer (0 for a NoPE layer)")
    expected = _layer_bases(layer_types, flags, bases)
    compare_arrays(
        answer,
        expected,
        name="your bases",
        description=f"the RoPE base of each of the {n} layers (0 where a layer has none)",
        axes=("layer",),
        atol=0.0,
        rtol=1e-6,
        known_mistakes=_layer_mistakes(expected, layer_types, flags, bases),
        plural=True,
    )
    rope_count = int(np.count_nonzero(expected))
    return passed(
        f"{rope_count} of {n} layers rotate, each with its own layer type's base; the others are NoPE.",
        check="check_layer_bases",
    )


# --------------------------------------------------------------------------- packed rows on the FlashAttention path
# The rows the check runs the student's function on besides the exercise's own: one document whose ids
# run on, documents of one token each, and a last document of one token.
_VARLEN_ROWS = (
    ("a row whose ids run on from 0 (one document)", np.arange(7)),
    ("a row of four one-token documents", np.zeros(4, dtype=np.int64)),
    ("a row whose last document has one token", np.array([0, 1, 2, 0])),
)


def _varlen_reference(ids: np.ndarray) -> np.ndarray:
    return flash_varlen_cu_seqlens(ids).astype(float)


def _varlen_mistakes(ids: np.ndarray) -> list[tuple[np.ndarray, str]]:
    """The arrays that named mistakes give for one row (those equal to the answer dropped)."""
    expected = _varlen_reference(ids)
    falls = np.append(np.concatenate([[0], np.flatnonzero(np.diff(ids) < 0) + 1]), ids.size).astype(float)
    mistakes = [
        (np.diff(expected), "these are the documents' lengths; cu_seqlens accumulates them, from 0 to the row's end."),
        (
            expected[:-1],
            "the last entry is missing: after the starts comes the number of ids, where the last document ends.",
        ),
        (expected[1:], "the first entry is missing: the first document starts at index 0."),
        (
            falls,
            "a document starts at every id equal to 0, also where the ids do not decrease (two one-token "
            "documents in a row).",
        ),
    ]
    return [(m, h) for m, h in mistakes if m.shape != expected.shape or not np.array_equal(m, expected)]


def check_varlen_boundaries(answer: Any, *, position_ids: Any) -> CheckResult:
    """Check a function that reads the document boundaries of a packed row as FlashAttention's path does.

    The answer is a function of one argument, the position ids of one packed
    row (a 1-D integer array), returning the cumulative sequence lengths
    ``cu_seqlens`` that Hugging Face's FlashAttention path derives from them:
    the index of every id equal to 0, in order, then the number of ids. The
    check runs it on ``position_ids`` and on three rows of its own (ids that
    run on, one-token documents, a last document of one token). Hints name the
    usual slips: the documents' lengths instead of their cumulative sums, the
    final entry or the first one left out, and documents started where the ids
    decrease rather than at every 0.

    Parameters
    ----------
    answer : callable or None
        The student's function (``None`` or ``...`` while not attempted).
    position_ids : array_like of int
        The exercise's packed row, one-dimensional, non-negative.

    Returns
    -------
    CheckResult
        Truthy if correct, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If the answer is not a function or returns wrong boundaries for a row;
        the message names the row and the recognised mistake, never the
        expected values.
    TypeError, ValueError
        If ``position_ids`` is not a one-dimensional array of integers ``>= 0``.

    References
    ----------
    .. [1] Hugging Face, transformers, ``src/transformers/modeling_flash_attention_utils.py``
       (``prepare_fa_kwargs_from_position_ids``, ``_prepare_from_posids``).

    Examples
    --------
    >>> check_varlen_boundaries(None, position_ids=[0, 1, 0, 1, 2])
    Not attempted yet.
    Replace the placeholder with your function of one row of position ids, then run the cell again.
    >>> import numpy as np
    >>> check_varlen_boundaries(lambda ids: np.diff(np.append(np.flatnonzero(np.asarray(ids) == 0), len(ids))),
    ...                         position_ids=[0, 1, 0, 1, 2])
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: your function's result for the exercise's row is not yet its cumulative
    sequence lengths. Hint: these are the documents' lengths; cu_seqlens accumulates them, from 0 to the row's end.
    """
    ids = as_integer_array(position_ids, "position_ids")
    if ids.ndim != 1 or ids.size == 0:
        raise ValueError(f"position_ids must be one packed row: a non-empty 1-D array, got shape {ids.shape}")
    if (ids < 0).any():
        raise ValueError("position_ids must hold ids >= 0")
    if is_placeholder(answer):
        return not_attempted("your function of one row of position ids")
    if not callable(answer):
        raise CheckFailed(f"the answer should be a function of one row of position ids; got {type(answer).__name__}.")
    for label, row in (("the exercise's row", ids), *_VARLEN_ROWS):
        result = call_student_function(answer, row.copy(), call=f"your function on {label}")
        name = f"your function's result for {label}"
        expected = _varlen_reference(row)
        array = as_answer_array(result, name)
        for mistake, hint in _varlen_mistakes(row):
            if mistake.shape == array.shape and np.array_equal(array, mistake):
                raise CheckFailed(f"{name} is not yet its cumulative sequence lengths. Hint: {hint}")
        if array.shape != expected.shape:
            raise CheckFailed(
                f"{name} has the wrong shape {array.shape}: it should be one-dimensional, one entry per document "
                "start and one more for the end of the row."
            )
        compare_arrays(
            array,
            expected,
            name=name,
            description="its cumulative sequence lengths",
            axes=("entry",),
            atol=0.0,
            rtol=0.0,
            given=result,
        )
    return passed(
        "a document starts at every 0 and the row's length closes the list, for the exercise's row and three others.",
        check="check_varlen_boundaries",
    )
