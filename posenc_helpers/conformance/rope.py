"""Probes for a RoPE implementation ``fn(x, positions)``: unit vectors at chosen positions.

The probe feeds unit vectors: batch entry ``j`` holds ``e_j`` at every position
of :func:`probe_positions`. Because RoPE is linear, output ``[j, t, :]`` is
column ``j`` of the matrix the code applies at position ``t``, so the probe
reads the whole matrix: which features it pairs (the layout, the rotary width),
and, per pair, the angle and scale of the 2x2 block at every position. The
angles are then fitted (:mod:`.angles`): direction, phase at position 0, offset,
frequency law; what remains unexplained is tested against rows numbered from 0
(positions ignored), against low-precision angles and tables (:mod:`.formats`),
and against positions that wrap around a table too short for them.
"""

from __future__ import annotations

import numpy as np

from ..rope import apply_rope
from .angles import angle_tolerance, explain_frequencies, fit_angles, wrap
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
from .spec import RotarySpec, UserCall

__all__ = ["PROBE_POSITIONS", "diagnose_rope", "pairs_of", "probe_label", "probe_positions"]

#: Positions probed: 0, 1, 2 fix direction, phase and offset; the gaps catch code that
#: numbers rows itself; 257 and 4097 are where bfloat16 and float16 lose integers; 8193,
#: 32769 and 131073 are one past the context lengths where long-context failures start
#: (a table of 2**13, 2**15 or 2**17 rows indexed modulo its length, float16's range).
PROBE_POSITIONS = np.array([0, 1, 2, 3, 5, 17, 100, 257, 1000, 4097, 8193, 32769, 131073], dtype=np.int64)


def probe_positions(max_position_embeddings: int | None = None) -> np.ndarray:
    """:data:`PROBE_POSITIONS`, plus the last position of the model's context when it is given."""
    if max_position_embeddings is None:
        return PROBE_POSITIONS.copy()
    return np.unique(np.append(PROBE_POSITIONS, max_position_embeddings - 1)).astype(np.int64)


def probe_label(positions: np.ndarray) -> str:
    """``"unit vectors at positions 0 .. 131073"``."""
    return f"unit vectors at positions 0 .. {int(positions[-1])}"


def pairs_of(layout: str, width: int, start: int = 0) -> list[tuple[int, int]]:
    """The feature pairs ``(first, second)`` of a layout over ``width`` features from feature ``start``."""
    if layout == "interleaved":
        return [(start + 2 * i, start + 2 * i + 1) for i in range(width // 2)]
    return [(start + i, start + i + width // 2) for i in range(width // 2)]


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


def _pairing(spec: RotarySpec, observed: list[tuple[int, int]]) -> tuple[str, int, int, Evidence | None]:
    """The layout, width and first feature the observed pairs follow, and the evidence if not the meant ones."""
    meant = pairs_of(spec.layout, spec.rotary_dim)[: spec.turning]
    if observed == meant:
        return spec.layout, spec.rotary_dim, 0, None
    if spec.proportional:
        found = _proportional_pairing(spec, observed)
        if found is not None:
            return found
    probe = "unit vectors at position 1"
    for layout in (spec.layout, "interleaved" if spec.layout == "half" else "half"):
        for width in sorted({spec.rotary_dim, spec.head_dim}):
            for start in sorted({0, spec.head_dim - width}):
                candidate = pairs_of(layout, width, start)
                prefix = spec.proportional and observed == candidate[: spec.turning]  # p-RoPE: the first turn
                if observed != candidate and not prefix:
                    continue
                return layout, width, start, _pairing_evidence(spec, observed, layout, width, start)
    rotated = sorted({f for pair in observed for f in pair})
    note = f"features {rotated[:8]}{'...' if len(rotated) > 8 else ''} rotate, in pairs no layout of the spec forms"
    return "", 0, 0, Evidence(probe, note, bug="rotary-width" if len(rotated) != 2 * spec.turning else None)


def _proportional_pairing(
    spec: RotarySpec, observed: list[tuple[int, int]]
) -> tuple[str, int, int, Evidence | None] | None:
    """p-RoPE's two look-alikes: every pair of the head turning, or ordinary partial rotary over 2 * turning."""
    probe = "unit vectors at position 1"
    whole = pairs_of(spec.layout, spec.rotary_dim)
    if observed == whole[: len(observed)]:  # the head's own pairs, but another number of them turn
        turning = f"all {len(observed)} pairs turn" if observed == whole else f"the first {len(observed)} pairs turn"
        note = (
            f"{turning}, where the spec (p-RoPE) turns the first {spec.turning} of {len(whole)} "
            "and leaves the others at frequency 0"
        )
        return spec.layout, spec.rotary_dim, 0, Evidence(probe, note, bug="rotary-width")
    width = 2 * spec.turning
    if observed == pairs_of(spec.layout, width):
        first, partner = observed[0]
        note = (
            f"ordinary partial rotary: feature {first} turns into feature {partner}, pairs of the first {width} "
            f"features alone, where the spec (p-RoPE) keeps the whole head's {spec.layout} pairs"
        )
        return spec.layout, width, 0, Evidence(probe, note, bug="model-dim-denominator")
    return None


def _pairing_evidence(
    spec: RotarySpec, observed: list[tuple[int, int]], layout: str, width: int, start: int
) -> Evidence | None:
    """Say how the observed pairs (a layout over ``width`` features from ``start``) differ from the meant ones."""
    probe = "unit vectors at position 1"
    if start:
        note = f"the last {width} features rotate ({layout} pairs over them), where the first ones are meant"
        return Evidence(probe, note, bug="rotary-width")
    if width != spec.rotary_dim:
        note = f"{width} features rotate ({layout} pairs over them), where the spec rotates {spec.rotary_dim}"
        return Evidence(probe, note, bug="rotary-width")
    meant = pairs_of(spec.layout, spec.rotary_dim)[: spec.turning]
    first, partner = meant[0]
    got = dict(observed).get(first)
    note = (
        f"{layout} pairs: feature {first} turns into feature {got}, expected feature {partner} ({spec.layout} layout)"
    )
    return Evidence(probe, note, bug="layout")


def _pass_through(matrices: np.ndarray, pairs: list[tuple[int, int]], positions: np.ndarray) -> Evidence | None:
    """Evidence unless every feature outside the rotated pairs comes back unchanged at every position."""
    rotated = {f for pair in pairs for f in pair}
    rest = [j for j in range(matrices.shape[-1]) if j not in rotated]
    if not rest:
        return None
    block = matrices[:, :, rest]  # block[t, i, n]: feature i of the output for e_rest[n]
    identity = np.zeros(block.shape[1:])
    identity[rest, np.arange(len(rest))] = 1.0
    miss = np.abs(block - identity[None]).max(axis=1)  # miss[t, n]
    if np.max(miss) <= 1e-6:
        return None
    t, n = np.unravel_index(int(np.argmax(miss)), miss.shape)
    j = rest[n]
    column = block[t, :, n]
    norm = float(np.linalg.norm(column))
    if norm < 1e-6:
        how = "comes back as zeros"
    elif np.abs(column[j]) > 0.999 * norm and abs(norm - 1) > 1e-6:
        how = f"comes back times {column[j]:.4g}"
    elif np.abs(column[j]) > 0.999 * norm:
        how = "comes back negated"
    else:
        how = "comes back mixed into other features"
    note = f"a unit vector in feature {j}, outside the rotated width, {how}: it must pass through unchanged"
    return Evidence(
        "unit vectors in the features that do not rotate", note, position=int(positions[t]), bug="pass-through-changed"
    )


def _blocks(matrices: np.ndarray, pairs: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Angle, scale and non-rotation part of each pair's 2x2 block at each position."""
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    aa, ab = matrices[:, a, a], matrices[:, a, b]
    ba, bb = matrices[:, b, a], matrices[:, b, b]
    cos_part, sin_part = (aa + bb) / 2, (ba - ab) / 2
    reflection = np.hypot((aa - bb) / 2, (ba + ab) / 2)
    return np.arctan2(sin_part, cos_part), np.hypot(cos_part, sin_part), reflection


def _fit_findings(spec: RotarySpec, fit, width: int, scale: float, label: str) -> list[Evidence]:  # noqa: ANN001
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
    if width == spec.rotary_dim:  # p-RoPE: the pairs meant to turn (the rest, turning, is already evidence)
        freqs = np.asarray(fit.freqs)[: spec.turning]
        findings.extend(explain_frequencies(freqs, spec.meaning(freqs.size), label))
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


def _low_precision_angles(
    spec: RotarySpec, positions: np.ndarray, observed: np.ndarray, slack: float
) -> tuple[str, str] | None:
    """The format and what was rounded when the observed block angles are the spec's angles so computed.

    ``slack`` allows for cos/sin tables rounded as well (a whole model cast to the format).
    """
    tolerance = angle_tolerance(positions)[:, None] + 1e-6 + slack
    for precision in ("bfloat16", "float16"):
        for what, products in rounded_angle_variants(positions, spec.expected[: spec.turning], precision).items():
            hit = np.zeros(observed.shape, dtype=bool)
            for angles in products:
                with np.errstate(invalid="ignore"):
                    hit |= np.abs(wrap(observed - angles)) <= tolerance
            if np.all(hit):
                return precision, what
    return None


def _precision_findings(
    spec: RotarySpec, positions: np.ndarray, matrices: np.ndarray, pairs: list[tuple[int, int]], label: str
) -> Evidence | None:
    """Evidence of angles or cos/sin tables in a low precision, when that explains every block."""
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    cos_part = (matrices[:, a, a] + matrices[:, b, b]) / 2
    sin_part = (matrices[:, b, a] - matrices[:, a, b]) / 2
    exact = positions[:, None] * spec.expected[None, : spec.turning]
    factor = spec.attention_factor
    tolerance = angle_tolerance(positions)[:, None]
    got = np.concatenate([cos_part, sin_part], axis=1)
    table = rounded_tables(got, factor * np.concatenate([np.cos(exact), np.sin(exact)], axis=1), tolerance)
    if table is not None:
        coarser = f", coarser than the spec's dtype {spec.dtype}" if spec.dtype != "float32" else ""
        note = (
            f"the cos/sin tables are the exact ones rounded to {table}{coarser}: the error is bounded, "
            "about the same at every position"
        )
        if spec.dtype == "float32":
            note += f" (if the model runs in {table}, give dtype={table!r})"
        return Evidence(label, note, bug="low-precision-tables")
    found = _low_precision_angles(spec, positions, np.arctan2(sin_part, cos_part), 2.0 * angle_slack("bfloat16"))
    if found is None:
        return None
    precision, what = found
    miss = np.abs(wrap(np.arctan2(sin_part, cos_part) - exact))
    t, k = (int(v) for v in np.unravel_index(int(np.argmax(miss)), miss.shape))
    note = f"the angles are the spec's with {what} rounded to {precision}: the error grows with the position"
    return Evidence(label, note, position=int(positions[t]), pair=k, bug="low-precision-angles")


def _unit_probe(head_dim: int, length: int) -> np.ndarray:
    """Batch entry ``j`` holds the unit vector ``e_j`` at every one of ``length`` positions."""
    probe_x = np.zeros((head_dim, length, head_dim))
    probe_x[np.arange(head_dim), :, np.arange(head_dim)] = 1.0
    return probe_x


def _reference(spec: RotarySpec, probe_x: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """What the spec's RoPE returns for ``probe_x`` at ``positions`` (float64)."""
    reference = apply_rope(
        probe_x,
        np.asarray(positions, dtype=np.float64),
        layout=spec.layout,
        inv_freq=spec.expected,
        rotary_dim=spec.rotary_dim,
    )
    reference = np.array(reference, dtype=np.float64)
    reference[..., : spec.rotary_dim] *= spec.attention_factor
    return reference


def _matches(
    spec: RotarySpec, out: np.ndarray, probe_x: np.ndarray, positions: np.ndarray, dtype: str | None = None
) -> bool:
    """Whether ``out`` is the spec's rotation, give or take float32 angles and the rounding of ``dtype``."""
    tolerance = angle_tolerance(positions)[None, :, None] * max(1.0, spec.attention_factor)
    return within_dtype(out, _reference(spec, probe_x, positions), dtype or spec.dtype, tolerance)


#: Blocks that start after position 0: a prefill chunk after a cached prompt, and one decode step.
OFFSET_BLOCKS = {
    "a prefill chunk at positions 37 .. 42": np.arange(37, 43, dtype=np.int64),
    "one decode step at position 613": np.array([613], dtype=np.int64),
}


def _offset_findings(call: UserCall, spec: RotarySpec) -> list[Evidence]:
    """Probe blocks that do not start at 0; name a cache offset added twice or positions counted from 0."""
    findings: list[Evidence] = []
    for probe, positions in OFFSET_BLOCKS.items():
        probe_x = _unit_probe(spec.head_dim, positions.size)
        out = call((probe_x, positions.copy()), f"unit vectors in {probe}", probe_x.shape)
        if _matches(spec, out, probe_x, positions):
            continue
        first = int(positions[0])
        readings = (
            (
                positions + first,
                "offset-applied-twice",
                f"the row at position {first} is rotated as position "
                f"{2 * first}: the block's start is added to positions that already hold it",
            ),
            (
                positions - first,
                "positions-ignored",
                f"the row at position {first} is rotated as position 0: "
                "the block's positions are counted from its start, not taken as given",
            ),
        )
        for candidate, bug, note in readings:
            if _matches(spec, out, probe_x, candidate):
                findings.append(Evidence(f"unit vectors in {probe}", note, position=first, bug=bug))
                break
        else:
            note = "rows of a block that starts after position 0 are rotated as other positions"
            findings.append(Evidence(f"unit vectors in {probe}", note, position=first))
    unique: dict[tuple[str | None, str], Evidence] = {}
    for item in findings:
        unique.setdefault((item.bug, item.note.split(":")[-1]), item)
    return list(unique.values())


def _overflow(out: np.ndarray, positions: np.ndarray, label: str) -> tuple[np.ndarray, Evidence | None]:
    """The positions whose rows are finite, and evidence when rows past float16's range are not."""
    finite = np.all(np.isfinite(out), axis=(0, 2))
    return finite, overflow_evidence(finite, positions, label, "the output")


def diagnose_rope(call: UserCall, spec: RotarySpec) -> tuple[list[Evidence], bool, list[str]]:
    """Run the probes; return the evidence (empty when it conforms), whether it was all read, and notes."""
    positions = probe_positions(spec.max_position_embeddings)
    label = probe_label(positions)
    probe_x = _unit_probe(spec.head_dim, positions.size)
    finite_where = np.broadcast_to((positions < FLOAT16_OVERFLOW)[None, :, None], probe_x.shape)
    out = call((probe_x, positions.copy()), label, probe_x.shape, finite_where)
    finite, overflow = _overflow(out, positions, label)
    if overflow is None and _matches(spec, out, probe_x, positions):
        offsets = _offset_findings(call, spec)
        notes = [] if offsets or _matches(spec, out, probe_x, positions, "float32") else [table_cost(spec.dtype)]
        return offsets, all(item.bug is not None for item in offsets), notes
    kept = positions[finite]
    findings, complete = _read_matrices(spec, np.transpose(out[:, finite], (1, 2, 0)), kept, label)
    if overflow is not None:
        findings = [overflow] + [item for item in findings if item.bug != "low-precision-angles"]
    if not findings:  # never silent about a difference: the output is not the spec's rotation
        note = "the output differs from the spec's rotation in a way the probes could not read"
        findings, complete = [Evidence(label, note)], False
    return findings, complete, []


def _read_matrices(
    spec: RotarySpec, matrices: np.ndarray, positions: np.ndarray, label: str
) -> tuple[list[Evidence], bool]:
    """Read pairs, pass-through, precision, angles and scale off ``matrices[t, i, j]``; name what differs."""
    observed, problem = _observed_pairs(matrices)
    if observed is None:
        return [problem] if problem else [], False
    if not observed:
        return [Evidence("unit vectors at every probe position", "no feature is rotated at any position")], False
    layout, width, start, pairing = _pairing(spec, observed)
    findings = [pairing] if pairing else []
    passing = _pass_through(matrices, observed, positions)
    if passing is not None:
        findings.append(passing)
    if not width:
        return findings, False
    pairs = [pair for pair in pairs_of(layout, width, start) if pair in observed]  # p-RoPE: those that turn
    angles, scales, reflection = _blocks(matrices, pairs)
    if np.max(reflection) > 1e-3 * max(1.0, float(np.max(scales))):
        t, k = np.unravel_index(int(np.argmax(reflection)), reflection.shape)
        note = "a pair's 2x2 block is not a rotation (one component's sign or factor differs)"
        return findings + [Evidence("unit vectors", note, position=int(positions[t]), pair=int(k))], False
    if width == spec.rotary_dim and len(pairs) == spec.turning:
        precision = _precision_findings(spec, positions.astype(np.float64), matrices, pairs, label)
        if precision is not None:
            return findings + [precision], all(item.bug is not None for item in findings)
    fit = fit_angles(positions.astype(np.float64), angles)
    if fit is None:
        return findings + [Evidence("unit vectors at positions 0 and 1", "pair 0 does not turn", pair=0)], False
    findings.extend(_fit_findings(spec, fit, width, float(np.median(scales)), label))
    complete = _explain_residual(fit, positions, angles, findings, label, angle_slack(spec.dtype))
    return findings, complete


#: Table lengths a too-short cos/sin cache is tried at: the powers of two a context is usually made of.
_TABLE_LENGTHS = tuple(2**n for n in range(8, 18))


def _wrapped(fit, positions: np.ndarray, angles: np.ndarray, tolerance: np.ndarray) -> int | None:  # noqa: ANN001
    """The table length ``n`` when each position ``t`` is rotated as ``t mod n``, or None.

    The probes do not tell every length apart (none lies between 16385 and 32768): the longest length they
    allow is named.
    """
    for length in reversed(_TABLE_LENGTHS):
        wrapped = positions % length
        if np.array_equal(wrapped, positions):
            continue
        if np.all(np.abs(wrap(angles - fit.predicted(wrapped.astype(np.float64)))) <= tolerance):
            return length
    return None


def _explain_residual(
    fit,  # noqa: ANN001
    positions: np.ndarray,
    angles: np.ndarray,
    findings: list[Evidence],
    label: str,
    slack: float = 0.0,
) -> bool:
    """Test what the fitted law leaves unexplained; add evidence; True when all is explained."""
    tolerance = angle_tolerance(positions)[:, None] + slack
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
    if any(item.bug == "low-precision-angles" for item in findings):
        return True  # frequencies already found rounded; rounded positions add to the same miss
    length = _wrapped(fit, positions, angles, tolerance)
    if length is not None:
        note = (
            f"the row at position {int(positions[t])} is rotated as position {int(positions[t]) % length}: "
            f"positions wrap around at {length} (a cos/sin table of {length} rows indexed modulo its length); "
            "every position from there on is wrong"
        )
        findings.append(Evidence(label, note, position=int(positions[t])))
        return False
    note = "the angle misses the fitted law" + ("; the miss grows with the position" if t > 2 else "")
    findings.append(
        Evidence(
            label,
            note,
            position=int(positions[t]),
            pair=k,
            expected=float(wrap(fit.predicted(positions)[t, k])),
            got=float(angles[t, k]),
        )
    )
    return False
