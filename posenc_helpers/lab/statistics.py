"""The statistics behind the lab's claims: seed intervals and the verdicts they allow.

A claim about a position method rests on several training seeds, each evaluated on
its own held-out windows, so a seed's number carries both the run-to-run and the
window-sampling variation. The rules are fixed before any number is looked at:

* a quantity is reported as the mean over seeds with a 95 % Student-t interval,
  ``mean ± t(0.975, n - 1) · s / sqrt(n)``;
* a difference is called positive (or negative) only when its whole interval is
  above (below) zero;
* the loss question is one-sided (:func:`~posenc_helpers.lab.rise_verdict`): a method's loss *does not
  rise* past the training length when the 95 % upper bound of its rise lies below
  the margin :data:`~posenc_helpers.lab.FLAT_MARGIN` at every longer length; it *rises* when, at some
  length, the lower bound of the rise lies above the margin, the bound taken at
  ``1 - 0.05 / k`` for ``k`` lengths (Bonferroni); anything else is unresolved.
  "Does not rise" needs every length to pass (an intersection-union test), so it
  needs no correction; "rises" can be reached at any of ``k`` lengths, so it does.
  Each verdict is then wrong with probability at most 5 %; over ``m`` methods, at
  most ``0.05 m`` verdicts are expected to be wrong.

An earlier version called a loss *flat* only when its two-sided interval lay inside
``±FLAT_MARGIN``: a method whose loss clearly fell or barely moved but whose seeds
spread more was then "unresolved", although the question asked is only whether the
loss rises.
"""

from __future__ import annotations

import numpy as np

__all__ = ["FLAT_MARGIN", "seed_interval", "one_sided_bound", "rise_verdict"]

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


def one_sided_bound(values, side: str, confidence: float = 0.95) -> float:
    """The one-sided Student-t bound of the mean of ``values`` (one per seed): the mean plus
    (``side="upper"``) or minus (``"lower"``) ``t(confidence, n - 1) · s / sqrt(n)``.

    Examples
    --------
    Three seeds 1, 2, 3: t(0.95, 2) = 2.920, so the bounds are 2 ± 2.920 / sqrt(3):

    >>> round(one_sided_bound([1.0, 2.0, 3.0], "upper"), 3), round(one_sided_bound([1.0, 2.0, 3.0], "lower"), 3)
    (3.686, 0.314)
    """
    from scipy.stats import t  # noqa: PLC0415 (scipy comes with JAX, which the lab needs anyway)

    values = np.asarray(values, dtype=float)
    if values.ndim != 1 or values.size < 2 or not np.isfinite(values).all():
        raise ValueError("values must be at least two finite numbers, one per seed")
    if side not in ("upper", "lower"):
        raise ValueError(f"side must be 'upper' or 'lower', got {side!r}")
    if not 0.5 <= confidence < 1:
        raise ValueError(f"confidence must be in [0.5, 1), got {confidence}")
    half = float(t.ppf(confidence, values.size - 1) * values.std(ddof=1) / np.sqrt(values.size))
    return float(values.mean()) + (half if side == "upper" else -half)


def rise_verdict(rises, margin: float = FLAT_MARGIN, alpha: float = 0.05) -> str:
    """``"does not rise"``, ``"rises"`` or ``"unresolved"``, from the rises of one method,
    ``(seeds, lengths)``: the one-sided rule of the module docstring at level ``alpha``.

    Examples
    --------
    >>> rise_verdict([[0.00, 0.01], [-0.02, 0.00], [0.01, 0.02]])     # every upper bound below 0.05
    'does not rise'
    >>> rise_verdict([[0.0, 0.9], [0.01, 1.0], [0.0, 1.1]])            # clearly above at the second length
    'rises'
    >>> rise_verdict([[0.0, -0.1], [0.01, 0.2], [0.0, 0.05]])          # too spread to say either
    'unresolved'
    """
    rises = np.asarray(rises, dtype=float)
    if rises.ndim != 2 or rises.shape[0] < 2 or rises.shape[1] < 1:
        raise ValueError("rises must be an array (seeds, lengths) with at least two seeds")
    if not 0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha}")
    lengths = rises.shape[1]
    if all(one_sided_bound(rises[:, k], "upper", 1 - alpha) < margin for k in range(lengths)):
        return "does not rise"
    if any(one_sided_bound(rises[:, k], "lower", 1 - alpha / lengths) > margin for k in range(lengths)):
        return "rises"
    return "unresolved"
