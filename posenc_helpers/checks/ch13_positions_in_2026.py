"""Checks for chapter 13: proportional p-RoPE frequencies, the RoPE base of every layer of a 2026 config, and the
documents Hugging Face's mask-building attention paths read from a packed row's position ids."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._validation import as_integer_array, describe_value, require_even_width, require_positive_real
from ..long_context import scaled_rope_frequencies
from ..packing_paths import mask_path_document_ids
from ..rope import rope_frequencies
from ._compare import as_answer_array, call_student_function, compare_arrays
from ._core import CheckFailed, CheckResult, is_placeholder, not_attempted, passed

__all__ = ["check_proportional_frequencies", "check_layer_bases", "check_packed_documents"]


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


# --------------------------------------------------------------------------- packed rows on the mask-building paths
# The rows the check runs the student's function on besides the exercise's own: ids that jump up, a row that starts
# inside a document, ids that run on, and documents of one token each.
_PACKED_ROWS = (
    ("a row whose ids jump up", np.array([0, 1, 2, 10, 11, 12])),
    ("a row that starts inside a document", np.array([5, 6, 7, 0, 1, 2])),
    ("a row whose ids run on from 0 (one document)", np.arange(7)),
    ("a row of four one-token documents", np.zeros(4, dtype=np.int64)),
)


def _starts_to_documents(starts: np.ndarray) -> np.ndarray:
    """Document numbers from a start flag per token, the first token in document 0."""
    starts = starts.copy()
    starts[0] = False
    return np.cumsum(starts).astype(float)


def _packed_mistakes(ids: np.ndarray) -> list[tuple[np.ndarray, str]]:
    """The arrays that named mistakes give for one row (those equal to the answer dropped)."""
    expected = mask_path_document_ids(ids).astype(float)
    steps = np.diff(ids, prepend=ids[0] - 1)
    flash_rule = (
        "you numbered the documents by the zeros, as the FlashAttention path reads a row. The mask-building paths "
        "put the first token in document 0 whatever its id, and start a new document wherever an id does not step "
        "by exactly +1 from the one before, so a jump up starts one too."
    )
    falls = (
        "you started a document only where the ids fall back (to 0, say), close to the FlashAttention path's "
        "rule. The mask-building paths start one wherever an id does not step by exactly +1 from the one before, "
        "so a jump up starts one too."
    )
    mistakes = [
        (np.cumsum(ids == 0).astype(float) - 1.0, flash_rule),
        (np.maximum(np.cumsum(ids == 0) - 1, 0).astype(float), flash_rule),
        (_starts_to_documents(ids == 0), falls),
        (_starts_to_documents(ids == ids.min()), falls),
        (_starts_to_documents(steps < 0), falls),
        (_starts_to_documents(steps <= 0), falls),
        (expected + 1.0, "documents are numbered from 0: the row's first token is in document 0."),
    ]
    flags = "these flag where documents start; the answer numbers the documents, a running count of the starts."
    first_flagged = steps != 1
    first_flagged[0] = True
    mistakes += [((steps != 1).astype(float), flags), (first_flagged.astype(float), flags)]
    return [(m, h) for m, h in mistakes if m.shape != expected.shape or not np.array_equal(m, expected)]


def check_packed_documents(answer: Any, *, position_ids: Any) -> CheckResult:
    """Check a function that reads packed documents from position ids as transformers' mask-building paths do.

    The answer is a function of one argument, the position ids of one packed
    row (a 1-D integer array), returning one integer per token: the number of
    the document it belongs to as Hugging Face's ``sdpa``, ``eager`` and
    ``flex_attention`` paths read it when no attention mask and no cache are
    passed (``find_packed_sequence_indices``). The check runs it on
    ``position_ids`` and on four rows of its own (ids that jump up, a row that
    starts inside a document, ids that run on, one-token documents). Hints name
    the usual slips: the FlashAttention path's rule (documents start at the
    zeros) used instead, documents started only where the ids fall, documents
    numbered from 1, and start flags instead of document numbers.

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
        If the answer is not a function or returns wrong documents for a row;
        the message names the row and the recognised mistake, never the
        expected values.
    TypeError, ValueError
        If ``position_ids`` is not a one-dimensional array of integers ``>= 0``.

    References
    ----------
    .. [1] Hugging Face, transformers, ``src/transformers/masking_utils.py`` at commit
       00c4411cbe15d4c56d54d3b56d4d171e9c289dac and in release v5.24.0
       (``find_packed_sequence_indices``, ``_preprocess_mask_arguments``).

    Examples
    --------
    >>> check_packed_documents(None, position_ids=[0, 1, 0, 1, 2])
    Not attempted yet.
    Replace the placeholder with your function of one row of position ids, then run the cell again.
    >>> check_packed_documents(lambda ids: [0] * len(ids), position_ids=[0, 1, 2, 7, 8])
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: your function's result for the exercise's row is not yet the document of
    every token. Hint: you numbered the documents by the zeros, as the FlashAttention path reads a row. The
    mask-building paths put the first token in document 0 whatever its id, and start a new document wherever an
    id does not step by exactly +1 from the one before, so a jump up starts one too.
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
    for label, row in (("the exercise's row", ids), *_PACKED_ROWS):
        result = call_student_function(answer, row.copy(), call=f"your function on {label}")
        name = f"your function's result for {label}"
        expected = mask_path_document_ids(row).astype(float)
        array = as_answer_array(result, name)
        for mistake, hint in _packed_mistakes(row):
            if mistake.shape == array.shape and np.array_equal(array, mistake):
                raise CheckFailed(f"{name} is not yet the document of every token. Hint: {hint}")
        if array.shape != expected.shape:
            raise CheckFailed(
                f"{name} has the wrong shape {array.shape}: it should be one-dimensional, one document number per "
                "token of the row."
            )
        compare_arrays(
            array,
            expected,
            name=name,
            description="the document of every token",
            axes=("token",),
            atol=0.0,
            rtol=0.0,
            given=result,
        )
    return passed(
        "a document starts wherever an id does not step by +1, for the exercise's row and four others "
        "(ids that jump, a row that starts inside a document, ids that run on, one-token documents).",
        check="check_packed_documents",
    )
