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

Accuracy on a question task is a count: a seed answers ``x`` of ``W`` sequences. Its
uncertainty has two sources, the sequences drawn (binomial) and the seed itself. The
spread over seeds already contains both (each seed is scored on its own sequences),
but three seeds can agree by luck (three perfect scores have no spread at all), so the
standard error of a mean accuracy is the larger of the seeds' and the binomial one
(:func:`~posenc_helpers.lab.accuracy_standard_error`; Agresti-Coull's adjusted proportion
``(x + 2) / (W + 4)``, which is never 0 or 1), with Student's t on ``n - 1`` degrees of
freedom as before. A *drop* of accuracy from the training length is paired by seed,
and its binomial part adds both counts' variances (:func:`~posenc_helpers.lab.drop_verdicts`).

An earlier version called a loss *flat* only when its two-sided interval lay inside
``±FLAT_MARGIN``: a method whose loss clearly fell or barely moved but whose seeds
spread more was then "unresolved", although the question asked is only whether the
loss rises.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "FLAT_MARGIN",
    "DROP_MARGIN",
    "seed_interval",
    "one_sided_bound",
    "rise_verdict",
    "accuracy_standard_error",
    "accuracy_interval",
    "drop_verdicts",
]

#: Nats per byte: the smallest change of held-out loss the lab calls a change,
#: fixed before the experiment (about 3 % of the loss at the training length).
FLAT_MARGIN = 0.05

#: The smallest drop of accuracy (a fraction of the questions) the lab calls a drop, fixed
#: before the record that uses it: about 2.6 binomial standard errors of one seed's
#: accuracy at 0.75 on 128 sequences (0.038).
DROP_MARGIN = 0.1


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


def _binomial_variance(accuracy, windows: int) -> np.ndarray:
    """Variance of one seed's accuracy from its ``windows`` sequences, with Agresti-Coull's
    adjusted proportion (two successes and two failures added), so never zero."""
    hits = np.rint(np.asarray(accuracy, dtype=float) * windows)
    adjusted = (hits + 2) / (windows + 4)
    return adjusted * (1 - adjusted) / (windows + 4)


def _check_accuracies(values, windows) -> tuple[np.ndarray, int]:
    values = np.asarray(values, dtype=float)
    if values.ndim != 1 or values.size < 2 or not np.isfinite(values).all() or (values < 0).any() or (values > 1).any():
        raise ValueError("accuracies must be at least two fractions in [0, 1], one per seed")
    if isinstance(windows, bool) or not isinstance(windows, int | np.integer) or windows < 1:
        raise ValueError(f"windows must be a positive integer (sequences per seed), got {windows!r}")
    return values, int(windows)


def accuracy_standard_error(values, windows: int, baseline=None) -> float:
    """Standard error of the mean over seeds of an accuracy (or, with ``baseline``, of the
    paired drop ``baseline - values``): the larger of the seeds' spread and the binomial one.

    ``values`` (and ``baseline``) hold one accuracy per seed, each from ``windows``
    sequences. The binomial variance of the mean is ``sum(v_s) / n**2``, with
    ``v_s = p(1 - p) / (W + 4)`` at ``p = (x + 2) / (W + 4)`` for each count in play.

    Examples
    --------
    Three seeds right on all 128 sequences: no spread, but p = 130/132 gives a binomial
    standard error of ``sqrt(3 * p * (1 - p) / 132) / 3``:

    >>> round(accuracy_standard_error([1.0, 1.0, 1.0], 128), 5)
    0.00614
    >>> round(accuracy_standard_error([0.5, 0.7, 0.9], 128), 5)   # the seeds' spread, 0.2 / sqrt(3)
    0.11547
    """
    values, windows = _check_accuracies(values, windows)
    variance = _binomial_variance(values, windows)
    quantity = values
    if baseline is not None:
        baseline, _ = _check_accuracies(baseline, windows)
        if baseline.shape != values.shape:
            raise ValueError(f"baseline must hold one accuracy per seed, {values.size}, got {baseline.size}")
        variance = variance + _binomial_variance(baseline, windows)
        quantity = baseline - values
    seeds = quantity.size
    return float(np.sqrt(max(quantity.var(ddof=1) / seeds, variance.sum() / seeds**2)))


def accuracy_interval(values, windows: int, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean accuracy over seeds and its two-sided Student-t interval (``n - 1`` degrees of
    freedom) with :func:`accuracy_standard_error`, clipped to [0, 1]: ``(mean, low, high)``.

    Examples
    --------
    t(0.975, 2) = 4.303 times the standard error above:

    >>> [round(v, 3) for v in accuracy_interval([1.0, 1.0, 1.0], 128)]
    [1.0, 0.974, 1.0]
    """
    from scipy.stats import t  # noqa: PLC0415 (scipy comes with JAX, which the lab needs anyway)

    values, windows = _check_accuracies(values, windows)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    half = float(t.ppf(0.5 + confidence / 2, values.size - 1)) * accuracy_standard_error(values, windows)
    mean = float(values.mean())
    return mean, max(0.0, mean - half), min(1.0, mean + half)


def drop_verdicts(at_train_len, at_lengths, windows: int, margin: float = DROP_MARGIN, alpha: float = 0.05):
    """Whether a question task's accuracy *keeps* past the training length, one verdict per
    longer length, from each seed's paired drop ``a_s(L) - a_s(n)``.

    ``at_train_len`` holds each seed's accuracy at ``L``, ``at_lengths`` its accuracy at
    the longer lengths, ``(seeds, lengths)``. At each length: ``"keeps"`` when the
    one-sided upper bound (level ``1 - alpha``) of the mean drop lies below ``margin``;
    ``"drops"`` when its lower bound at ``1 - alpha / k`` (Bonferroni over the ``k``
    lengths) lies above ``margin``; ``"unresolved"`` otherwise. The bounds are Student-t
    with ``n - 1`` degrees of freedom and :func:`accuracy_standard_error`.

    Returns
    -------
    (list of str, list of float, list of float)
        The verdicts, and the upper and the lower bounds they were read from.

    Examples
    --------
    >>> verdicts, upper, lower = drop_verdicts([1.0, 1.0, 1.0], [[1.0, 0.5], [0.99, 0.4], [1.0, 0.45]], 128)
    >>> verdicts
    ['keeps', 'drops']
    >>> drop_verdicts([0.9, 0.95], [[0.9], [0.6]], 128)[0]   # two seeds that disagree: too spread to say
    ['unresolved']
    """
    from scipy.stats import t  # noqa: PLC0415 (scipy comes with JAX, which the lab needs anyway)

    at_train_len, windows = _check_accuracies(at_train_len, windows)
    at_lengths = np.asarray(at_lengths, dtype=float)
    if at_lengths.ndim != 2 or at_lengths.shape[0] != at_train_len.size or at_lengths.shape[1] < 1:
        raise ValueError(f"at_lengths must be (seeds, lengths) with {at_train_len.size} seeds, got {at_lengths.shape}")
    if not 0 < margin < 1:
        raise ValueError(f"margin must be in (0, 1), got {margin}")
    if not 0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha}")
    seeds, lengths = at_lengths.shape
    verdicts, uppers, lowers = [], [], []
    for k in range(lengths):
        drop = at_train_len - at_lengths[:, k]
        se = accuracy_standard_error(at_lengths[:, k], windows, baseline=at_train_len)
        upper = float(drop.mean() + t.ppf(1 - alpha, seeds - 1) * se)
        lower = float(drop.mean() - t.ppf(1 - alpha / lengths, seeds - 1) * se)
        verdicts.append("keeps" if upper < margin else "drops" if lower > margin else "unresolved")
        uppers.append(upper)
        lowers.append(lower)
    return verdicts, uppers, lowers
