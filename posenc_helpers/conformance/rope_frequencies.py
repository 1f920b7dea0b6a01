"""Probe for a RoPE frequency function ``fn()``: its inverse frequencies, read as a law.

The function is called once. It may return the frequencies, or a pair
``(inv_freq, attention_factor)`` as :func:`~posenc_helpers.scaled_rope_frequencies`
does; the frequencies are compared with the spec's, and when they differ their law
is read (:func:`.angles.explain_frequencies`).
"""

from __future__ import annotations

import numpy as np

from .angles import explain_frequencies
from .report import Evidence
from .spec import RotarySpec, UserCall, UserFunctionFailed

__all__ = ["diagnose_rope_frequencies"]

PROBE = "fn()"


def _split(out: object) -> tuple[object, object | None]:
    if isinstance(out, tuple) and len(out) == 2 and np.ndim(np.asarray(out[1], dtype=object)) == 0:
        return out[0], out[1]
    return out, None


def _proportional_pairs(observed: np.ndarray, spec: RotarySpec) -> tuple[list[Evidence], np.ndarray]:
    """p-RoPE: evidence when another number of pairs turns than the first ``spec.turning``; the ones to compare."""
    moving = observed != 0
    count = observed.size if moving.all() else int(np.argmin(moving))  # the leading pairs that turn
    clean = not np.any(moving[count:])
    if clean and count == spec.turning:
        return [], observed[:count]
    if clean and count > 0:
        how = "every pair turns" if count == observed.size else f"the first {count} pairs turn"
        pair = min(count, spec.turning)
        note = (
            f"{how}, where the spec (p-RoPE) turns the first {spec.turning} of {observed.size} pairs "
            "and gives the others frequency 0"
        )
        evidence = Evidence(
            PROBE, note, pair=pair, expected=float(spec.expected[pair]), got=float(observed[pair]), bug="rotary-width"
        )
        return [evidence], observed[:pair]
    stray = np.flatnonzero(moving[spec.turning :])
    if stray.size == 0:
        return [], observed[: spec.turning]
    first = spec.turning + int(stray[0])
    note = f"pair {first} turns, where the spec (p-RoPE) gives every pair past the first {spec.turning} frequency 0"
    evidence = Evidence(PROBE, note, pair=first, expected=0.0, got=float(observed[first]), bug="rotary-width")
    return [evidence], observed[: spec.turning]


def diagnose_rope_frequencies(call: UserCall, spec: RotarySpec) -> tuple[list[Evidence], bool]:
    """Call ``fn()``; return the evidence (empty when it conforms) and whether all of it is explained."""
    try:
        raw = call.fn()
    except Exception as exc:  # reported, with the probe
        raise UserFunctionFailed(f"{type(exc).__name__}: {exc} (on {PROBE})") from exc
    frequencies, factor = _split(raw)
    pairs = spec.rotary_dim // 2
    as_call = UserCall(lambda: frequencies, call.accepts)
    if np.shape(np.asarray(frequencies, dtype=object)) == (spec.head_dim // 2,) and pairs != spec.head_dim // 2:
        note = f"{spec.head_dim // 2} frequencies, one per pair of the whole head, where {pairs} pairs rotate"
        return [Evidence(PROBE, note, bug="rotary-width")], True
    observed = as_call((), PROBE, (pairs,))
    findings: list[Evidence] = []
    if spec.proportional:
        found, observed = _proportional_pairs(observed, spec)
        findings.extend(found)
    if np.any(observed <= 0):
        bad = int(np.flatnonzero(observed <= 0)[0])
        findings.append(
            Evidence(
                PROBE,
                "a frequency is not positive",
                pair=bad,
                expected=float(spec.expected[bad]),
                got=float(observed[bad]),
            )
        )
        return findings, False
    findings.extend(explain_frequencies(observed, spec.meaning(observed.size), PROBE))
    if factor is not None:
        got = float(np.asarray(factor, dtype=np.float64))
        meant = spec.attention_factor
        if abs(got - meant) > 1e-6 * meant:
            bug = (
                "scaling-applied-twice" if abs(got - meant**2) <= 1e-6 * meant**2 and meant != 1 else "attention-factor"
            )
            findings.append(Evidence(PROBE, "the attention factor differs", expected=meant, got=got, bug=bug))
    return findings, all(item.bug is not None for item in findings)
