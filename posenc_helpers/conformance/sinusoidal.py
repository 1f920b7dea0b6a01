"""Probe for a sinusoidal encoding ``fn(positions, d_model)``: its table, read column by column.

The table at :data:`PROBE_POSITIONS` is compared with
:func:`~posenc_helpers.sinusoidal_encoding`. When it differs, the kit looks for the
columns that pair into unit circles (``sin**2 + cos**2 = 1``): the meant pairs,
the other layout's, or none. Paired columns give an angle per pair and position,
fitted like RoPE's (:mod:`.angles`). Columns that pair with nothing are read one
by one (value at position 0: sine or cosine; frequency from the positions that
follow), which is where the dimension index in the exponent shows: each column,
not each pair, gets its own frequency.
"""

from __future__ import annotations

import numpy as np

from ..sinusoidal import frequencies, sinusoidal_encoding
from .angles import FrequencyMeaning, angle_tolerance, explain_frequencies, fit_angles, wrap
from .report import Evidence
from .rope import PROBE_POSITIONS
from .spec import UserCall

__all__ = ["CONVENTIONS", "convention_frequencies", "diagnose_sinusoidal", "column_frequencies"]

PROBE = "positions 0 .. 4097"

#: Sinusoidal conventions: the paper's (interleaved, base**(-2k/d)) and tensor2tensor's, which fairseq
#: matches (concatenated sines then cosines, base**(-k/(d/2 - 1))); "fairseq" names the second too.
CONVENTIONS = ("vaswani", "tensor2tensor", "fairseq")
DEFAULT_LAYOUT = {"vaswani": "interleaved", "tensor2tensor": "concat", "fairseq": "concat"}


def convention_frequencies(d_model: int, base: float, convention: str) -> tuple[np.ndarray, float]:
    """The frequencies of a convention, and the width its exponent divides by (``d`` or ``d - 2``).

    tensor2tensor's ``get_timing_signal_1d`` divides ``ln(base)`` by ``max(d/2 - 1, 1)``
    timescale steps, fairseq's ``SinusoidalPositionalEmbedding.get_embedding`` by
    ``d/2 - 1``: pair ``k`` turns at ``base**(-2k/(d - 2))``.
    """
    if convention == "vaswani":
        return frequencies(d_model, base=base), float(d_model)
    steps = max(d_model // 2 - 1, 1)
    return base ** (-np.arange(d_model // 2) / steps), 2.0 * steps


def _table(positions: np.ndarray, theta: np.ndarray, layout: str) -> np.ndarray:
    angles = np.asarray(positions, dtype=np.float64)[:, None] * theta[None, :]
    sines, cosines = np.sin(angles), np.cos(angles)
    if layout == "concat":
        return np.concatenate([sines, cosines], axis=1)
    table = np.empty((angles.shape[0], 2 * theta.size))
    table[:, 0::2], table[:, 1::2] = sines, cosines
    return table


def _pairs(layout: str, d_model: int) -> tuple[np.ndarray, np.ndarray]:
    """Sine columns and cosine columns of a layout."""
    if layout == "interleaved":
        return np.arange(0, d_model, 2), np.arange(1, d_model, 2)
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


def _per_column(spec_base: float, d_model: int, table: np.ndarray, positions: np.ndarray) -> list[Evidence]:
    read = column_frequencies(table, positions)
    if read is None:
        bad = int(np.flatnonzero((np.abs(table[0]) > 1e-6) & (np.abs(table[0] - 1) > 1e-6))[0])
        note = "at position 0 this column is neither 0 (a sine) nor 1 (a cosine), and no columns pair up"
        return [Evidence(PROBE, note, position=0, expected=None, got=float(table[0, bad]))]
    kinds, omega = read
    index = np.arange(d_model, dtype=np.float64)
    if np.any(omega <= 0) or abs(omega[0] - 1.0) > 1e-3:
        return [Evidence(PROBE, "the columns pair up with no frequency law the kit knows")]
    slope = -np.polyfit(index, np.log(omega), 1)[0]
    if np.max(np.abs(np.log(omega) + slope * index)) > 1e-3:
        return [Evidence(PROBE, "each column has its own frequency, following no law the kit knows")]
    per_pair_step = 2.0 * np.log(spec_base) / d_model
    note = "each column, not each pair, gets its own frequency: the dimension index is in the exponent"
    found = [
        Evidence(
            PROBE,
            note,
            pair=0,
            expected=float(np.exp(-per_pair_step)),
            got=float(omega[2] if d_model > 2 else omega[1]),
            bug="dimension-index-exponent",
        )
    ]
    if not (abs(slope - per_pair_step) < 1e-3 * per_pair_step or abs(slope - per_pair_step / 2) < 1e-3 * per_pair_step):
        readings = f"{np.exp(slope * d_model / 2):.6g} (index 2j) or {np.exp(slope * d_model):.6g} (index j)"
        found.append(Evidence(PROBE, f"and the base is not {spec_base:.6g}: it reads as {readings}", bug="base"))
    return found


def _other_convention(table: np.ndarray, d_model: int, base: float, convention: str) -> Evidence | None:
    """Evidence when the table is the other published convention's, in that convention's own layout."""
    other = "tensor2tensor" if convention == "vaswani" else "vaswani"
    theta, _ = convention_frequencies(d_model, base, other)
    positions = PROBE_POSITIONS
    expected = _table(positions, theta, DEFAULT_LAYOUT[other])
    if not np.all(np.abs(table - expected) <= angle_tolerance(positions)[:, None]):
        return None
    if other == "tensor2tensor":
        note = (
            "the table is tensor2tensor's and fairseq's (all sines, then all cosines; exponent over d/2 - 1), "
            "where the paper's is meant; if the model was trained with it, give convention='tensor2tensor'"
        )
    else:
        note = (
            "the table is the paper's (interleaved pairs; exponent over d), where tensor2tensor's and "
            "fairseq's is meant; if the model was trained with it, give convention='vaswani'"
        )
    return Evidence(PROBE, note, bug="convention")


def diagnose_sinusoidal(
    call: UserCall, d_model: int, base: float, layout: str, convention: str = "vaswani"
) -> tuple[list[Evidence], bool]:
    """Run the probe; return the evidence (empty when the code conforms) and whether all of it is explained."""
    positions = PROBE_POSITIONS
    table = call((positions.copy(), d_model), PROBE, (positions.size, d_model))
    theta, width = convention_frequencies(d_model, base, convention)
    if convention == "vaswani":
        reference = sinusoidal_encoding(positions.astype(np.float64), d_model, base=base, layout=layout)
    else:
        reference = _table(positions, theta, layout)
    tolerance = angle_tolerance(positions)[:, None]
    if np.all(np.abs(table - reference) <= tolerance):
        return [], True
    named = _other_convention(table, d_model, base, convention)
    if named is not None:
        return [named], True
    findings: list[Evidence] = []
    chosen = None
    other = "concat" if layout == "interleaved" else "interleaved"
    for candidate in (layout, other):
        sines, cosines = _pairs(candidate, d_model)
        if np.all(np.abs(table[:, sines] ** 2 + table[:, cosines] ** 2 - 1) < 1e-3):
            chosen = (sines, cosines)
            if candidate != layout:
                note = f"the columns pair as in the {candidate} layout, where {layout} is meant"
                findings.append(Evidence(PROBE, note, bug="layout"))
            break
    if chosen is None:
        found = _per_column(base, d_model, table, positions)
        return found, all(item.bug is not None for item in found)
    angles = np.arctan2(table[:, chosen[0]], table[:, chosen[1]])
    fit = fit_angles(positions.astype(np.float64), angles)
    if fit is None:
        return findings + [Evidence(PROBE, "pair 0 does not turn between positions 0 and 1", pair=0)], False
    findings.extend(_phase_findings(fit))
    others = {d_model - 2: "d_model - 2"} if convention == "vaswani" else {d_model: "d_model (the paper's)"}
    meaning = FrequencyMeaning(theta, base, int(width), others)
    findings.extend(explain_frequencies(np.asarray(fit.freqs), meaning, PROBE))
    miss = np.abs(fit.residual) > tolerance
    if np.any(miss):
        t, k = (int(v) for v in np.argwhere(miss)[0])
        rows = np.arange(positions.size, dtype=np.float64)
        if np.all(np.abs(wrap(angles - fit.predicted(rows))) <= tolerance):
            note = f"the row for position {int(positions[t])} holds position {t}: positions are replaced by row numbers"
            findings.append(Evidence(PROBE, note, position=int(positions[t]), bug="positions-ignored"))
        elif not any(item.bug == "low-precision-angles" for item in findings):
            findings.append(Evidence(PROBE, "the angle misses the fitted law", position=int(positions[t]), pair=k))
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
