"""Probe for a sinusoidal encoding ``fn(positions, d_model)``: its table, read column by column.

The table at :func:`~.rope.probe_positions` is compared with the spec's (a
convention's frequencies, a layout, a dtype). When it differs, the kit first
asks whether it is the spec's table computed in a low precision (rounded angles,
or tables rounder than the declared dtype), then whether it is another table the
spec could declare (the other frequency law, another layout). Otherwise it looks
for the columns that pair into unit circles (``sin**2 + cos**2 = 1``): paired
columns give an angle per pair and position, fitted like RoPE's (:mod:`.angles`).
Columns that pair with nothing are read one by one (value at position 0: sine or
cosine; frequency from the positions that follow), which is where the dimension
index in the exponent shows: each column, not each pair, gets its own frequency.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..sinusoidal import frequencies, sinusoidal_encoding
from .angles import FrequencyMeaning, angle_tolerance, explain_frequencies, fit_angles, wrap
from .formats import (
    FLOAT16_OVERFLOW,
    angle_slack,
    overflow_evidence,
    rounded_angle_variants,
    rounded_tables,
    table_cost,
    within_dtype,
)
from .report import Evidence
from .rope import probe_positions
from .spec import UserCall

__all__ = [
    "CONVENTIONS",
    "LAYOUTS",
    "SinusoidalSpec",
    "column_frequencies",
    "convention_frequencies",
    "diagnose_sinusoidal",
]

#: Sinusoidal conventions: the paper's (interleaved, base**(-2k/d)) and tensor2tensor's, which fairseq
#: matches (concatenated sines then cosines, base**(-k/(d/2 - 1))); "fairseq" names the second too.
CONVENTIONS = ("vaswani", "tensor2tensor", "fairseq")
DEFAULT_LAYOUT = {"vaswani": "interleaved", "tensor2tensor": "concat", "fairseq": "concat"}

#: Column orders: the paper's interleaved (sin, cos) pairs; all sines then all cosines (tensor2tensor,
#: fairseq, diffusers' get_timestep_embedding); all cosines then all sines (diffusers' flip_sin_to_cos=True).
LAYOUTS = ("interleaved", "concat", "concat-cos-first")

#: The denominator shift of each convention's exponent, k / (d/2 - shift): diffusers' downscale_freq_shift.
CONVENTION_SHIFT = {"vaswani": 0.0, "tensor2tensor": 1.0, "fairseq": 1.0}

_LAYOUT_WORDS = {
    "interleaved": "sine and cosine interleaved (the paper's)",
    "concat": "all sines, then all cosines (tensor2tensor, fairseq, diffusers)",
    "concat-cos-first": "all cosines, then all sines (diffusers' flip_sin_to_cos=True)",
}


@dataclass(frozen=True)
class SinusoidalSpec:
    """A sinusoidal spec, checked: width, base, convention, layout, denominator shift and dtype."""

    d_model: int
    base: float
    convention: str
    layout: str
    shift: float
    dtype: str = "float32"
    max_position_embeddings: int | None = None


def convention_frequencies(
    d_model: int, base: float, convention: str, shift: float | None = None
) -> tuple[np.ndarray, float]:
    """The frequencies of a convention, and the width its exponent divides by (``d - 2 * shift``).

    tensor2tensor's ``get_timing_signal_1d`` divides ``ln(base)`` by ``max(d/2 - 1, 1)``
    timescale steps, fairseq's ``SinusoidalPositionalEmbedding.get_embedding`` by
    ``d/2 - 1``, diffusers' ``get_timestep_embedding`` by ``d/2 - downscale_freq_shift``:
    pair ``k`` turns at ``base**(-k/(d/2 - shift))``. ``shift`` overrides the convention's.
    """
    if shift is None:
        shift = CONVENTION_SHIFT[convention]
    if shift == 0.0:
        return frequencies(d_model, base=base), float(d_model)
    steps = max(d_model / 2 - shift, 1.0) if shift == 1.0 else d_model / 2 - shift
    return base ** (-np.arange(d_model // 2) / steps), 2.0 * steps


def _table(positions: np.ndarray, theta: np.ndarray, layout: str) -> np.ndarray:
    angles = np.asarray(positions, dtype=np.float64)[:, None] * theta[None, :]
    sines, cosines = np.sin(angles), np.cos(angles)
    if layout == "concat":
        return np.concatenate([sines, cosines], axis=1)
    if layout == "concat-cos-first":
        return np.concatenate([cosines, sines], axis=1)
    table = np.empty((angles.shape[0], 2 * theta.size))
    table[:, 0::2], table[:, 1::2] = sines, cosines
    return table


def _pairs(layout: str, d_model: int) -> tuple[np.ndarray, np.ndarray]:
    """Sine columns and cosine columns of a layout."""
    if layout == "interleaved":
        return np.arange(0, d_model, 2), np.arange(1, d_model, 2)
    if layout == "concat-cos-first":
        return np.arange(d_model // 2, d_model), np.arange(d_model // 2)
    return np.arange(d_model // 2), np.arange(d_model // 2, d_model)


def column_frequencies(table: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Each column's kind (+1 sine, -1 cosine) and angular frequency, or None if a column is neither."""
    kinds = np.where(np.abs(table[0]) < 1e-6, 1, np.where(np.abs(table[0] - 1) < 1e-6, -1, 0))
    if np.any(kinds == 0):
        return None
    omega = np.where(kinds > 0, np.arcsin(np.clip(table[1], -1, 1)), np.arccos(np.clip(table[1], -1, 1)))
    for row in range(2, len(positions)):
        t = float(positions[row])
        principal = np.where(kinds > 0, np.arcsin(np.clip(table[row], -1, 1)), np.arccos(np.clip(table[row], -1, 1)))
        mirror = np.where(kinds > 0, np.pi - principal, -principal)
        predicted = omega * t
        best = np.empty_like(omega)
        for j in range(omega.size):
            options = [
                base + 2 * np.pi * n
                for base in (principal[j], mirror[j])
                for n in np.round((predicted[j] - np.array([principal[j], mirror[j]])) / (2 * np.pi))
            ]
            candidates = np.array(options)
            best[j] = candidates[np.argmin(np.abs(candidates - predicted[j]))]  # the first nearest, as min() gives
        if np.max(np.abs(best - predicted)) > 0.5:
            break
        omega = best / t
    return kinds, omega


def _per_column(
    spec_base: float, theta: np.ndarray, layout: str, table: np.ndarray, positions: np.ndarray
) -> list[Evidence]:
    """Read the columns one by one; name the first column that turns at another frequency than its pair.

    ``theta`` is the spec's frequency of each pair and ``layout`` says which columns form a pair, so
    the evidence's pair, expected and measured frequency all belong to the one column it names.
    """
    d_model = table.shape[1]
    probe = f"positions 0 .. {int(positions[-1])}"
    read = column_frequencies(table, positions)
    if read is None:
        bad = int(np.flatnonzero((np.abs(table[0]) > 1e-6) & (np.abs(table[0] - 1) > 1e-6))[0])
        note = "at position 0 this column is neither 0 (a sine) nor 1 (a cosine), and no columns pair up"
        return [Evidence(probe, note, position=0, expected=None, got=float(table[0, bad]))]
    kinds, omega = read
    index = np.arange(d_model, dtype=np.float64)
    if np.any(omega <= 0) or abs(omega[0] - 1.0) > 1e-3:
        return [Evidence(probe, "the columns pair up with no frequency law the kit knows")]
    slope = -np.polyfit(index, np.log(omega), 1)[0]
    if np.max(np.abs(np.log(omega) + slope * index)) > 1e-3:
        return [Evidence(probe, "each column has its own frequency, following no law the kit knows")]
    sines, cosines = _pairs(layout, d_model)
    pair_of = np.empty(d_model, dtype=int)
    pair_of[sines], pair_of[cosines] = np.arange(d_model // 2), np.arange(d_model // 2)
    meant = theta[pair_of]
    differ = np.flatnonzero(np.abs(omega - meant) > 1e-3 * meant)
    if differ.size == 0:
        return [Evidence(probe, "the columns pair up with no frequency law the kit knows")]
    column = int(differ[0])
    pair = int(pair_of[column])
    note = (
        "each column, not each pair, gets its own frequency (the dimension index is in the exponent): "
        f"dimension {column}, the {'sine' if kinds[column] > 0 else 'cosine'} of pair {pair}, "
        "does not turn with its pair"
    )
    found = [
        Evidence(
            probe,
            note,
            pair=pair,
            expected=float(meant[column]),
            got=float(omega[column]),
            bug="dimension-index-exponent",
        )
    ]
    per_pair_step = 2.0 * np.log(spec_base) / d_model
    if not (abs(slope - per_pair_step) < 1e-3 * per_pair_step or abs(slope - per_pair_step / 2) < 1e-3 * per_pair_step):
        readings = f"{np.exp(slope * d_model / 2):.6g} (index 2j) or {np.exp(slope * d_model):.6g} (index j)"
        found.append(Evidence(probe, f"and the base is not {spec_base:.6g}: it reads as {readings}", bug="base"))
    return found


def _declared_as(shift: float, layout: str, spec: SinusoidalSpec) -> str:
    """The spec options that declare a table of this shift and layout."""
    options = []
    if shift != spec.shift:
        name = "vaswani" if shift == 0.0 else "tensor2tensor"
        options.append(f"convention={name!r}")
    if layout != spec.layout or (options and layout != DEFAULT_LAYOUT["vaswani" if shift == 0.0 else "tensor2tensor"]):
        options.append(f"layout={layout!r}")
    return ", ".join(options)


def _declarable(table: np.ndarray, spec: SinusoidalSpec, positions: np.ndarray) -> Evidence | None:
    """Evidence when the table is one the spec could declare: the other frequency law, or another layout."""
    tolerance = angle_tolerance(positions)[:, None]
    label = f"positions 0 .. {int(positions[-1])}"
    for shift in dict.fromkeys((spec.shift, 0.0, 1.0)):
        theta, _ = convention_frequencies(spec.d_model, spec.base, spec.convention, shift)
        for layout in LAYOUTS:
            if (shift, layout) == (spec.shift, spec.layout):
                continue
            if not within_dtype(table, _table(positions, theta, layout), spec.dtype, tolerance):
                continue
            hint = _declared_as(shift, layout, spec)
            if shift != spec.shift:
                law = (
                    "base**(-2k/d), the paper's"
                    if shift == 0.0
                    else "base**(-k/(d/2 - 1)), tensor2tensor's and fairseq's"
                )
                note = (
                    f"the table follows {law} frequencies, with {_LAYOUT_WORDS[layout]}, where the spec means "
                    f"another frequency law; if the model was trained with it, give {hint}"
                )
                return Evidence(label, note, bug="convention")
            note = (
                f"the columns are {_LAYOUT_WORDS[layout]}, where the {spec.layout} layout is meant; "
                f"if the model was trained with it, give {hint}"
            )
            return Evidence(label, note, bug="layout")
    return None


def _precision(table: np.ndarray, spec: SinusoidalSpec, positions: np.ndarray, theta: np.ndarray) -> Evidence | None:
    """Evidence when the table is the spec's with rounded angles, or tables rounder than the declared dtype."""
    label = f"positions 0 .. {int(positions[-1])}"
    tolerance = angle_tolerance(positions)[:, None]
    exact = _table(positions, theta, spec.layout)
    fmt = rounded_tables(table, exact, tolerance)
    if fmt is not None:
        note = f"the table is the exact one rounded to {fmt}: the error is bounded, about the same at every position"
        if spec.dtype == "float32":
            note += f" (if the model runs in {fmt}, give dtype={fmt!r})"
        return Evidence(label, note, bug="low-precision-tables")
    sines, cosines = _pairs(spec.layout, spec.d_model)
    observed = np.arctan2(table[:, sines], table[:, cosines])
    slack = angle_tolerance(positions)[:, None] + 2.0 * angle_slack("bfloat16")
    for fmt in ("bfloat16", "float16"):
        for what, products in rounded_angle_variants(positions.astype(np.float64), theta, fmt).items():
            hit = np.zeros(observed.shape, dtype=bool)
            for angles in products:
                with np.errstate(invalid="ignore"):
                    hit |= np.abs(wrap(observed - angles)) <= slack
            if np.all(hit):
                miss = np.abs(wrap(observed - positions[:, None] * theta[None, :]))
                t = int(np.unravel_index(int(np.argmax(miss)), miss.shape)[0])
                note = f"the angles are the spec's with {what} rounded to {fmt}: the error grows with the position"
                return Evidence(label, note, position=int(positions[t]), bug="low-precision-angles")
    return None


def _overflow(table: np.ndarray, positions: np.ndarray, label: str) -> tuple[np.ndarray, Evidence | None]:
    finite = np.all(np.isfinite(table), axis=1)
    return finite, overflow_evidence(finite, positions, label, "the table")


def diagnose_sinusoidal(call: UserCall, spec: SinusoidalSpec) -> tuple[list[Evidence], bool, list[str]]:
    """Run the probe; return the evidence (empty when the code conforms), whether all of it is explained, notes."""
    positions = probe_positions(spec.max_position_embeddings)
    label = f"positions 0 .. {int(positions[-1])}"
    d_model = spec.d_model
    finite_where = np.broadcast_to((positions < FLOAT16_OVERFLOW)[:, None], (positions.size, d_model))
    table = call((positions.copy(), d_model), label, (positions.size, d_model), finite_where)
    theta, width = convention_frequencies(d_model, spec.base, spec.convention, spec.shift)
    if spec.shift == 0.0 and spec.layout != "concat-cos-first":
        reference = sinusoidal_encoding(positions.astype(np.float64), d_model, base=spec.base, layout=spec.layout)
    else:
        reference = _table(positions, theta, spec.layout)
    tolerance = angle_tolerance(positions)[:, None]
    finite, overflow = _overflow(table, positions, label)
    if overflow is None and within_dtype(table, reference, spec.dtype, tolerance):
        rounded = not within_dtype(table, reference, "float32", tolerance)
        return [], True, [table_cost(spec.dtype).replace("cos/sin tables are", "table is")] if rounded else []
    if overflow is not None:
        positions, table, reference = positions[finite], table[finite], reference[finite]
        tolerance = tolerance[finite]
    found = _precision(table, spec, positions, theta) or _declarable(table, spec, positions)
    if found is not None or overflow is not None:
        findings = [item for item in (overflow, found) if item is not None]
        if overflow is not None and found is not None and found.bug == "low-precision-angles":
            findings = [overflow]
        return findings, all(item.bug is not None for item in findings), []
    return (*_read_table(table, spec, positions, theta, width, tolerance), [])


def _read_table(
    table: np.ndarray,
    spec: SinusoidalSpec,
    positions: np.ndarray,
    theta: np.ndarray,
    width: float,
    tolerance: np.ndarray,
) -> tuple[list[Evidence], bool]:
    """Pair the columns, fit the angles, and name what differs from the spec's table."""
    d_model, layout = spec.d_model, spec.layout
    label = f"positions 0 .. {int(positions[-1])}"
    findings: list[Evidence] = []
    chosen = None
    for candidate in dict.fromkeys((layout, *LAYOUTS)):
        sines, cosines = _pairs(candidate, d_model)
        if np.all(np.abs(table[:, sines] ** 2 + table[:, cosines] ** 2 - 1) < 1e-3):
            chosen = (sines, cosines)
            if candidate != layout:
                note = f"the columns pair as in the {candidate} layout, where {layout} is meant"
                findings.append(Evidence(label, note, bug="layout"))
            break
    if chosen is None:
        found = _per_column(spec.base, theta, layout, table, positions)
        return found, all(item.bug is not None for item in found)
    angles = np.arctan2(table[:, chosen[0]], table[:, chosen[1]])
    fit = fit_angles(positions.astype(np.float64), angles)
    if fit is None:
        return findings + [Evidence(label, "pair 0 does not turn between positions 0 and 1", pair=0)], False
    findings.extend(_phase_findings(fit))
    others = {d_model: "d_model (the paper's)"} if spec.shift != 0.0 else {}
    meaning = FrequencyMeaning(theta, spec.base, int(width), others)
    findings.extend(explain_frequencies(np.asarray(fit.freqs), meaning, label))
    miss = np.abs(fit.residual) > tolerance
    if np.any(miss):
        t, k = (int(v) for v in np.argwhere(miss)[0])
        rows = np.arange(positions.size, dtype=np.float64)
        if np.all(np.abs(wrap(angles - fit.predicted(rows))) <= tolerance):
            note = f"the row for position {int(positions[t])} holds position {t}: positions are replaced by row numbers"
            findings.append(Evidence(label, note, position=int(positions[t]), bug="positions-ignored"))
        elif not any(item.bug == "low-precision-angles" for item in findings):
            findings.append(Evidence(label, "the angle misses the fitted law", position=int(positions[t]), pair=k))
            return findings, False
    return findings, all(item.bug is not None for item in findings)


def _phase_findings(fit) -> list[Evidence]:  # noqa: ANN001
    probe = "positions 0, 1, 2"
    found: list[Evidence] = []
    quarter = abs(fit.phase - np.pi / 2) < 1e-3
    if fit.direction < 0 and quarter:
        note = "at position 0 the sine columns hold 1 and the cosine columns 0"
        found.append(Evidence(probe, note, position=0, pair=0, expected=0.0, got=1.0, bug="sin-cos-swapped"))
    elif fit.phase_spread > 1e-3 or abs(fit.phase) > 1e-3:
        found.append(Evidence(probe, f"at position 0 the pairs start at {fit.phase:.4g} rad", position=0))
    elif fit.direction < 0:
        note = "the sine columns hold sin(-omega t): the angles turn backwards"
        found.append(Evidence(probe, note, position=1, pair=0, bug="rotation-direction"))
    if fit.offset:
        bug = "off-by-one" if abs(fit.offset) == 1 else None
        note = f"row t holds position t {'+' if fit.offset > 0 else '-'} {abs(fit.offset):g}"
        found.append(Evidence(probe, note, position=0, bug=bug))
    return found
