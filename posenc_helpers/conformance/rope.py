"""Probes for a RoPE implementation ``fn(x, positions)``: unit vectors at chosen positions.

The probe feeds unit vectors: batch entry ``j`` holds ``e_j`` at every position
of :data:`PROBE_POSITIONS`. Because RoPE is linear, output ``[j, t, :]`` is
column ``j`` of the matrix the code applies at position ``t``, so the probe
reads the whole matrix: which features it pairs (the layout, the rotary width),
and, per pair, the angle and scale of the 2x2 block at every position. The
angles are then fitted (:mod:`.angles`): direction, phase at position 0, offset,
frequency law; what remains unexplained is tested against rows numbered from 0
(positions ignored) and against low-precision angles.
"""

from __future__ import annotations

import numpy as np

from ..precision import rope_angles, round_to_precision
from ..rope import apply_rope
from .angles import FrequencyMeaning, angle_tolerance, explain_frequencies, fit_angles, wrap
from .report import Evidence
from .spec import RotarySpec, UserCall

__all__ = ["PROBE_POSITIONS", "diagnose_rope", "pairs_of"]

#: Positions probed: 0, 1, 2 fix direction, phase and offset; the gaps catch code that
#: numbers rows itself; 257 and 4097 are where bfloat16 and float16 lose integers.
PROBE_POSITIONS = np.array([0, 1, 2, 3, 5, 17, 100, 257, 1000, 4097], dtype=np.int64)


def pairs_of(layout: str, width: int) -> list[tuple[int, int]]:
    """The feature pairs ``(first, second)`` of a layout over the first ``width`` features."""
    if layout == "interleaved":
        return [(2 * i, 2 * i + 1) for i in range(width // 2)]
    return [(i, i + width // 2) for i in range(width // 2)]


def _observed_pairs(matrices: np.ndarray) -> tuple[list[tuple[int, int]] | None, Evidence | None]:
    """Which features the code rotates together, read off where each unit vector lands."""
    head_dim = matrices.shape[-1]
    mass = np.abs(matrices[1:]).sum(axis=0)  # mass[i, j]: how much e_j reaches feature i, positions > 0
    np.fill_diagonal(mass, 0.0)
    pairs = []
    for j in range(head_dim):
        reached = np.flatnonzero(mass[:, j] > 1e-7)
        if reached.size > 1:
            note = f"feature {j} is mixed into features {reached.tolist()}: not a rotation of pairs"
            return None, Evidence("unit vectors at every probe position", note)
        if reached.size == 1:
            partner = int(reached[0])
            if j < partner:
                pairs.append((j, partner))
            elif (partner, j) not in pairs:
                note = f"feature {j} turns into feature {partner}, but not the reverse"
                return None, Evidence("unit vectors at every probe position", note)
    return pairs, None


def _pairing(spec: RotarySpec, observed: list[tuple[int, int]]) -> tuple[str, int, Evidence | None]:
    """The layout and width the observed pairs follow, and the evidence if they are not the meant ones."""
    meant = pairs_of(spec.layout, spec.rotary_dim)
    if observed == meant:
        return spec.layout, spec.rotary_dim, None
    probe = "unit vectors at position 1"
    for layout in ("interleaved", "half"):
        for width in sorted({spec.rotary_dim, spec.head_dim}):
            if observed != pairs_of(layout, width):
                continue
            first, partner = meant[0][0], meant[0][1]
            got = dict(observed).get(first)
            if width == spec.rotary_dim:
                note = (
                    f"{layout} pairs: feature {first} turns into feature {got}, expected feature {partner} "
                    f"({spec.layout} layout)"
                )
                return layout, width, Evidence(probe, note, bug="layout")
            note = f"{width} features rotate ({layout} pairs over them), where the spec rotates {spec.rotary_dim}"
            return layout, width, Evidence(probe, note, bug="rotary-width")
    rotated = sorted({f for pair in observed for f in pair})
    note = f"features {rotated[:8]}{'...' if len(rotated) > 8 else ''} rotate, in pairs no layout of the spec forms"
    return "", 0, Evidence(probe, note, bug="rotary-width" if len(rotated) != spec.rotary_dim else None)


def _blocks(matrices: np.ndarray, pairs: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Angle, scale and non-rotation part of each pair's 2x2 block at each position."""
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    aa, ab = matrices[:, a, a], matrices[:, a, b]
    ba, bb = matrices[:, b, a], matrices[:, b, b]
    cos_part, sin_part = (aa + bb) / 2, (ba - ab) / 2
    reflection = np.hypot((aa - bb) / 2, (ba + ab) / 2)
    return np.arctan2(sin_part, cos_part), np.hypot(cos_part, sin_part), reflection


def _fit_findings(spec: RotarySpec, fit, width: int, scale: float) -> list[Evidence]:  # noqa: ANN001
    probe = "unit vectors at positions 0, 1, 2"
    findings: list[Evidence] = []
    quarter = abs(fit.phase - np.pi / 2) < 1e-3
    if fit.phase_spread > 1e-3 or not (abs(fit.phase) < 1e-3 or (quarter and fit.direction < 0)):
        note = f"at position 0 the pairs are already turned by {fit.phase:.4g} rad"
        findings.append(Evidence(probe, note, position=0))
    if fit.direction < 0 and quarter:
        note = "at position 0 every pair is a quarter turn from the identity, and it turns backwards"
        findings.append(Evidence(probe, note, position=0, pair=0, bug="sin-cos-swapped"))
    elif fit.direction < 0:
        note = "every pair turns by minus its angle"
        findings.append(
            Evidence(
                probe,
                note,
                position=1,
                pair=0,
                expected=float(spec.expected[0]),
                got=-float(fit.freqs[0]),
                bug="rotation-direction",
            )
        )
    if fit.offset:
        bug = "off-by-one" if abs(fit.offset) == 1 else None
        note = f"position t is rotated as position t {'+' if fit.offset > 0 else '-'} {abs(fit.offset):g}"
        findings.append(Evidence(probe, note, position=0, pair=0, bug=bug))
    if width == spec.rotary_dim:
        meaning = FrequencyMeaning(spec.expected, spec.base, spec.rotary_dim, spec.other_widths(), spec.unscaled)
        findings.extend(explain_frequencies(np.asarray(fit.freqs), meaning, "unit vectors at positions 0 .. 4097"))
    findings.extend(_scale_findings(spec, scale, findings))
    return findings


def _scale_findings(spec: RotarySpec, scale: float, findings: list[Evidence]) -> list[Evidence]:
    factor = spec.attention_factor
    if abs(scale - factor) <= 1e-4 * factor:
        return []
    probe = "unit vectors at every probe position"
    note = f"the rotation scales by {scale:.6g} where the spec's attention factor is {factor:.6g}"
    twice = any(item.bug == "rotation-applied-twice" for item in findings)
    if abs(scale - factor**2) <= 1e-4 * factor**2 and factor != 1.0:
        if twice:
            return []  # the doubled rotation explains the squared factor too
        return [Evidence(probe, note + " (squared)", expected=factor, got=scale, bug="scaling-applied-twice")]
    return [Evidence(probe, note, expected=factor, got=scale, bug="attention-factor")]


def _low_precision(spec: RotarySpec, positions: np.ndarray, observed: np.ndarray) -> str | None:
    """The format in which the spec's angles (or their cos/sin) give the observed block angles, if one does."""
    theta = spec.expected
    exact = positions[:, None] * theta[None, :]
    for precision in ("bfloat16", "float16"):
        candidates = (
            rope_angles(positions, theta, precision),  # positions, frequencies and product rounded
            positions[:, None] * round_to_precision(theta, precision)[None, :],  # frequencies rounded
            np.arctan2(round_to_precision(np.sin(exact), precision), round_to_precision(np.cos(exact), precision)),
        )
        for angles in candidates:
            if np.all(np.abs(wrap(observed - angles)) <= angle_tolerance(positions)[:, None] + 1e-2 * 2.0**-8):
                return precision
    return None


def diagnose_rope(call: UserCall, spec: RotarySpec) -> tuple[list[Evidence], bool]:
    """Run the probes; return the evidence (empty when the code conforms) and whether it was all read."""
    head_dim, positions = spec.head_dim, PROBE_POSITIONS
    probe_x = np.zeros((head_dim, positions.size, head_dim))
    probe_x[np.arange(head_dim), :, np.arange(head_dim)] = 1.0
    out = call((probe_x, positions.copy()), "unit vectors at positions 0 .. 4097", probe_x.shape)
    matrices = np.transpose(out, (1, 2, 0))  # matrices[t, i, j]: feature i of the output for e_j
    reference = (
        apply_rope(
            probe_x,
            positions.astype(np.float64),
            layout=spec.layout,
            inv_freq=spec.expected,
            rotary_dim=spec.rotary_dim,
        )
        * 1.0
    )
    reference[..., : spec.rotary_dim] *= spec.attention_factor
    tolerance = angle_tolerance(positions)[None, :, None] * max(1.0, spec.attention_factor)
    if np.all(np.abs(out - reference) <= tolerance):
        return [], True
    observed, problem = _observed_pairs(matrices)
    if observed is None:
        return [problem] if problem else [], False
    if not observed:
        return [Evidence("unit vectors at every probe position", "no feature is rotated at any position")], False
    layout, width, pairing = _pairing(spec, observed)
    findings = [pairing] if pairing else []
    if not width:
        return findings, False
    pairs = pairs_of(layout, width)
    angles, scales, reflection = _blocks(matrices, pairs)
    if np.max(reflection) > 1e-3 * max(1.0, float(np.max(scales))):
        t, k = np.unravel_index(int(np.argmax(reflection)), reflection.shape)
        note = "a pair's 2x2 block is not a rotation (one component's sign or factor differs)"
        return findings + [Evidence("unit vectors", note, position=int(positions[t]), pair=int(k))], False
    fit = fit_angles(positions.astype(np.float64), angles)
    if fit is None:
        return findings + [Evidence("unit vectors at positions 0 and 1", "pair 0 does not turn", pair=0)], False
    findings.extend(_fit_findings(spec, fit, width, float(np.median(scales))))
    complete = _explain_residual(spec, fit, positions, angles, findings)
    return findings, complete


def _explain_residual(
    spec: RotarySpec,
    fit,
    positions: np.ndarray,
    angles: np.ndarray,  # noqa: ANN001
    findings: list[Evidence],
) -> bool:
    """Test what the fitted law leaves unexplained; add evidence; True when all is explained."""
    tolerance = angle_tolerance(positions)[:, None]
    miss = np.abs(fit.residual) > tolerance
    if not np.any(miss):
        return True
    rows = np.arange(positions.size, dtype=np.float64)
    by_rows = np.abs(wrap(angles - fit.predicted(rows))) <= tolerance
    t, k = (int(v) for v in np.argwhere(miss)[0])
    if np.all(by_rows) and not np.array_equal(rows, positions):
        note = f"the row at position {int(positions[t])} is rotated as position {t}: rows are numbered 0, 1, 2, ..."
        findings.append(
            Evidence("unit vectors at positions with gaps", note, position=int(positions[t]), bug="positions-ignored")
        )
        return True
    precision = _low_precision(spec, positions.astype(np.float64), angles) if fit.direction > 0 else None
    if precision is None:
        if any(item.bug == "low-precision-angles" for item in findings):
            return True  # frequencies already found rounded; rounded positions add to the same miss
        note = "the angle misses the fitted law" + ("; the miss grows with the position" if t > 2 else "")
        findings.append(
            Evidence(
                "unit vectors at positions 0 .. 4097",
                note,
                position=int(positions[t]),
                pair=k,
                expected=float(wrap(fit.predicted(positions)[t, k])),
                got=float(angles[t, k]),
            )
        )
        return False
    # The simulation used the spec's own frequencies, direction and phase: only the pairing can also be wrong.
    findings[:] = [item for item in findings if item.bug in ("layout", "rotary-width")]
    note = f"the angles are those of the spec computed in {precision}"
    findings.append(
        Evidence(
            "unit vectors at positions 0 .. 4097", note, position=int(positions[t]), pair=k, bug="low-precision-angles"
        )
    )
    return True
