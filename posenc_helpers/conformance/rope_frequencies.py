"""Probe for a RoPE frequency function ``fn()``: its inverse frequencies, read as a law.

The function is called once. It may return the frequencies, or a pair
``(inv_freq, attention_factor)`` as :func:`~posenc_helpers.scaled_rope_frequencies`
does; the frequencies are compared with the spec's, and when they differ their law
is read (:func:`.angles.explain_frequencies`).
"""

from __future__ import annotations

import numpy as np

from .angles import FrequencyMeaning, explain_frequencies
from .report import Evidence
from .spec import RotarySpec, UserCall, UserFunctionFailed

__all__ = ["diagnose_rope_frequencies"]

PROBE = "fn()"


def _split(out: object) -> tuple[object, object | None]:
    if isinstance(out, tuple) and len(out) == 2 and np.ndim(np.asarray(out[1], dtype=object)) == 0:
        return out[0], out[1]
    return out, None


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
    meaning = FrequencyMeaning(spec.expected, spec.base, spec.rotary_dim, spec.other_widths(), spec.unscaled)
    findings.extend(explain_frequencies(observed, meaning, PROBE))
    if factor is not None:
        got = float(np.asarray(factor, dtype=np.float64))
        meant = spec.attention_factor
        if abs(got - meant) > 1e-6 * meant:
            bug = (
                "scaling-applied-twice" if abs(got - meant**2) <= 1e-6 * meant**2 and meant != 1 else "attention-factor"
            )
            findings.append(Evidence(PROBE, "the attention factor differs", expected=meant, got=got, bug=bug))
    return findings, all(item.bug is not None for item in findings)
