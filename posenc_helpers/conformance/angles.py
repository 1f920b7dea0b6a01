"""Frequencies, phase and offset read off measured rotation angles (shared by the probes).

A correct rotary or sinusoidal code turns pair ``k`` by ``t * theta_k`` at position
``t``. A measured angle table ``psi[t, k]`` is fitted by::

    psi[t, k] = alpha + sigma * (t + delta) * theta'_k      (mod 2 pi)

with a direction ``sigma`` (+1 or -1), a phase ``alpha`` at position 0, an offset
``delta`` and the frequencies ``theta'`` it actually uses. Each bug leaves its own
mark on these numbers (a minus sign, a quarter turn, an offset of one, a
frequency law), which is how the kit tells the bugs apart without a list of
wrong outputs: :func:`fit_angles` measures, :func:`explain_frequencies` reads
the frequency law.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..precision import round_to_precision
from .report import Evidence

__all__ = ["AngleFit", "FrequencyMeaning", "angle_tolerance", "explain_frequencies", "fit_angles", "wrap"]

TWO_PI = 2.0 * np.pi


def wrap(angle: np.ndarray | float) -> np.ndarray:
    """Angles wrapped into ``[-pi, pi)``."""
    return (np.asarray(angle, dtype=np.float64) + np.pi) % TWO_PI - np.pi


def angle_tolerance(positions: np.ndarray) -> np.ndarray:
    """How far a float32 implementation may be from float64 at each position (radians).

    A float32 frequency and a float32 product each carry a relative error of about
    ``2**-24``; at position ``t`` that is a few ``t * 6e-8`` radians. The bound is
    ``1e-5 + 3e-7 * t``: about 1.2e-3 at position 4097, where a bfloat16 angle is
    off by radians and a float16 one by a good fraction of one.
    """
    return 1e-5 + 3e-7 * np.abs(np.asarray(positions, dtype=np.float64))


@dataclass
class AngleFit:
    """The numbers :func:`fit_angles` reads off an angle table (see the module docstring)."""

    direction: int
    phase: float
    offset: float
    freqs: np.ndarray
    residual: np.ndarray
    phase_spread: float
    notes: list[str] = field(default_factory=list)

    def predicted(self, positions: np.ndarray) -> np.ndarray:
        """Angles the fitted law gives at ``positions``, shape ``(len(positions), pairs)``."""
        return self.phase + self.direction * (np.asarray(positions)[:, None] + self.offset) * self.freqs[None, :]


def fit_angles(positions: np.ndarray, angles: np.ndarray) -> AngleFit | None:
    """Fit direction, phase, offset and frequencies to ``angles[t, pair]``.

    ``positions`` must start ``0, 1, 2`` and grow; later positions refine the
    frequencies as long as the law predicts them to within half a radian (a
    larger miss stops the refinement: it is evidence, kept in ``residual``).
    Returns ``None`` when pair 0 does not turn between positions 0 and 1.
    """
    increment = wrap(angles[1] - angles[0])
    if abs(increment[0]) < 1e-9:
        return None
    direction = 1 if increment[0] > 0 else -1
    freqs = direction * increment
    start = angles[0]
    if freqs.size > 1 and abs(freqs[0] - freqs[-1]) > 1e-6:
        offset = float(direction * wrap(start[0] - start[-1]) / (freqs[0] - freqs[-1]))
    else:
        offset = 0.0
    if abs(offset - round(offset)) < 0.05:
        offset = float(round(offset))
    phases = wrap(start - direction * offset * freqs)
    phase = float(np.angle(np.mean(np.exp(1j * phases))))
    spread = float(np.max(np.abs(wrap(phases - phase))))
    for row in range(2, len(positions)):
        effective = positions[row] + offset
        if effective <= 0:
            continue
        miss = wrap(angles[row] - (phase + direction * effective * freqs))
        if np.max(np.abs(miss)) >= 0.5:
            break
        freqs = freqs + direction * miss / effective
    fit = AngleFit(direction, phase, offset, freqs, np.zeros_like(angles), spread)
    fit.residual = wrap(angles - fit.predicted(positions))
    return fit


@dataclass(frozen=True)
class FrequencyMeaning:
    """What the frequencies were meant to be, and the mistakes' alternatives to compare with.

    ``expected`` are the meant frequencies; ``base`` and ``width`` the base and the
    exponent's denominator of the unscaled law; ``other_widths`` maps a wrong
    denominator a real code might use to its name (``{4096: "d_model"}``);
    ``unscaled`` the frequencies before a rescaling, when the spec asks for one.
    """

    expected: np.ndarray
    base: float
    width: int
    other_widths: dict[int, str]
    unscaled: np.ndarray | None = None


def _close(a: np.ndarray | float, b: np.ndarray | float, rtol: float = 2e-4) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return bool(a.shape == b.shape and np.all(np.abs(a - b) <= rtol * np.abs(b) + 1e-12))


def explain_frequencies(observed: np.ndarray, meant: FrequencyMeaning, probe: str) -> list[Evidence]:
    """The named mistakes (or the unrecognised difference) behind wrong frequencies.

    Returns an empty list when ``observed`` are the meant frequencies. Otherwise
    one :class:`Evidence`, naming the bug whose law the observed frequencies
    follow: the meant ones rounded to a low precision, the unscaled ones, the
    rescaling applied twice, a constant factor (2: rotated twice; ``base**(2/w)``:
    the pair index off by one), or a geometric law with another base: the
    exponent's factor 2 lost (``sqrt(base)``), ``d/2 - 1`` steps where ``d/2`` are
    meant (``base**(n/(n - 1))`` for ``n = d/2``), the dimension index in the
    exponent (``base**2``) or another denominator.
    """
    theta = meant.expected
    if _close(observed, theta):
        return []
    pair = int(np.argmax(np.abs(observed - theta) / theta))
    where = {"pair": pair, "expected": float(theta[pair]), "got": float(observed[pair])}
    for precision in ("bfloat16", "float16"):
        if _close(observed, round_to_precision(theta, precision), 2e-5):
            note = f"the frequencies are the meant ones rounded to {precision}"
            return [Evidence(probe, note, bug="low-precision-angles", **where)]  # type: ignore[arg-type]
    if meant.unscaled is not None:
        if _close(observed, meant.unscaled):
            return [Evidence(probe, "the frequencies are the unscaled ones", bug="scaling-ignored", **where)]  # type: ignore[arg-type]
        if _close(observed, theta**2 / meant.unscaled, 1e-3):
            note = "each frequency is rescaled twice (its ratio to the unscaled one is squared)"
            return [Evidence(probe, note, bug="scaling-applied-twice", **where)]  # type: ignore[arg-type]
    if np.all(observed > 0):
        uniform = _uniform_ratio(observed, theta, meant, probe, where)
        if uniform is not None:
            return uniform
        law = _geometric_law(observed, theta, meant, probe, where)
        if law is not None:
            return law
    note = "the frequencies follow no law the kit knows"
    return [Evidence(probe, note, **where)]  # type: ignore[arg-type]


def _uniform_ratio(
    observed: np.ndarray, theta: np.ndarray, meant: FrequencyMeaning, probe: str, where: dict
) -> list[Evidence] | None:
    ratio = observed / theta
    if np.ptp(np.log(ratio)) > 1e-3:
        return None
    factor = float(np.exp(np.mean(np.log(ratio))))
    if _close(factor, 2.0, 1e-3):
        return [Evidence(probe, "every frequency is doubled", bug="rotation-applied-twice", **where)]
    step = meant.base ** (2.0 / meant.width)
    if _close(factor, step, 1e-3) or _close(factor, 1.0 / step, 1e-3):
        shift = "k - 1" if factor > 1 else "k + 1"
        note = f"pair k has the frequency of pair {shift}: the pair index is off by one"
        return [Evidence(probe, note, bug="off-by-one", **where)]
    note = f"every frequency is {factor:.4g} times the meant one"
    return [Evidence(probe, note, **where)]


def _geometric_law(
    observed: np.ndarray, theta: np.ndarray, meant: FrequencyMeaning, probe: str, where: dict
) -> list[Evidence] | None:
    if observed.size < 2 or not _close(observed[0], theta[0], 1e-3):
        return None
    index = np.arange(observed.size, dtype=np.float64)
    slope, intercept = np.polyfit(index, np.log(observed), 1)
    if np.max(np.abs(np.log(observed) - (slope * index + intercept))) > 1e-3 or slope >= 0:
        return None
    law_base = float(np.exp(-slope * meant.width / 2.0))
    # A width the spec names first: p-RoPE over half the head, divided by that half, looks like base**2 too.
    for width, name in meant.other_widths.items():
        if _close(law_base, meant.base ** (meant.width / width), 2e-3):
            note = f"the exponent divides by {name} = {width} where {meant.width} is meant"
            return [Evidence(probe, note, bug="model-dim-denominator", **where)]
    if _close(law_base, meant.base**0.5, 2e-3):
        note = (
            "the frequencies fall half as fast: the exponent lost its factor 2, base**(-k/d) where base**(-2k/d) is "
            "meant (a base of sqrt(base) would give the same numbers)"
        )
        return [Evidence(probe, note, bug="half-exponent", **where)]
    steps = meant.width / 2.0
    if steps > 1 and _close(law_base, meant.base ** (steps / (steps - 1.0)), 2e-3):
        note = (
            f"the exponent divides by d/2 - 1 = {steps - 1:g} steps where {steps:g} are meant, as "
            "linspace(0, 1, d/2) does: the last pair turns at exactly 1/base"
        )
        return [Evidence(probe, note, bug="denominator-minus-one", **where)]
    if _close(law_base, meant.base**2, 2e-3):
        note = (
            "the frequencies fall twice as fast: the exponent holds the dimension index 2k where k is meant "
            "(a base of base**2 would give the same numbers)"
        )
        return [Evidence(probe, note, bug="dimension-index-exponent", **where)]
    note = f"the frequencies follow base {law_base:.6g} where {meant.base:.6g} is meant"
    return [Evidence(probe, note, bug="base", **where)]
