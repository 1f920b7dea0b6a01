"""The statistics behind the lab's claims: seed intervals and the verdicts they allow.

A claim about a position method rests on several training seeds, each evaluated on
its own held-out windows, so a seed's number carries both the run-to-run and the
window-sampling variation. The rules are fixed before any number is looked at:

* a quantity is reported as the mean over seeds with a 95 % Student-t interval,
  ``mean ± t(0.975, n - 1) · s / sqrt(n)``;
* a difference is called positive (or negative) only when its whole interval is
  above (below) zero, and a loss is said to *rise* only when its interval is
  above the margin :data:`FLAT_MARGIN`, to *stay flat* only when the interval
  lies inside ``±FLAT_MARGIN``; anything else is reported as unresolved.
"""

from __future__ import annotations

import numpy as np

__all__ = ["FLAT_MARGIN", "seed_interval", "classify_rise"]

#: Nats per byte: the smallest change of held-out loss the lab calls a change,
#: fixed before the experiment (about 3 % of the loss at the training length).
FLAT_MARGIN = 0.05


def seed_interval(values, confidence: float = 0.95) -> tuple[float, float]:
    """Mean and half-width of the Student-t interval of ``values`` (one per seed).

    Examples
    --------
    Three seeds 1, 2, 3: mean 2, standard deviation 1, and t(0.975, 2) = 4.303, so
    the half-width is 4.303 / sqrt(3) = 2.484:

    >>> mean, half = seed_interval([1.0, 2.0, 3.0])
    >>> mean, round(half, 3)
    (2.0, 2.484)
    """
    from scipy.stats import t  # noqa: PLC0415 (scipy comes with JAX, which the lab needs anyway)

    values = np.asarray(values, dtype=float)
    if values.ndim != 1 or values.size < 2 or not np.isfinite(values).all():
        raise ValueError("values must be at least two finite numbers, one per seed")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    spread = values.std(ddof=1) / np.sqrt(values.size)
    return float(values.mean()), float(t.ppf(0.5 + confidence / 2, values.size - 1) * spread)


def classify_rise(rises, margin: float = FLAT_MARGIN) -> str:
    """``"rises"``, ``"flat"``, ``"falls"`` or ``"unresolved"``, from one rise per seed.

    ``"rises"``: the interval is above ``margin``; ``"flat"``: inside ``±margin``;
    ``"falls"``: below ``-margin``.

    Examples
    --------
    >>> classify_rise([0.50, 0.60, 0.55]), classify_rise([0.01, -0.01, 0.0]), classify_rise([0.0, 0.3, 0.6])
    ('rises', 'flat', 'unresolved')
    """
    mean, half = seed_interval(rises)
    if mean - half > margin:
        return "rises"
    if mean + half < -margin:
        return "falls"
    if -margin < mean - half and mean + half < margin:
        return "flat"
    return "unresolved"
