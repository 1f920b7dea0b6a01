"""The checklist every positional encoding in the book is scored against.

Chapter 01 states six properties a position signal should have (the list is
Kazemnejad's, 2019; Vaswani et al. state only the hope that offsets act as a
linear map); later chapters score each method by *running* a check for every
property, never by typing a tick. Five checks decide their property exactly for
the positions they examine; ``bounded`` is a heuristic (no finite check can prove
a bound) and says so in its evidence. An encoding is scored through a function

``encode(positions, seq_len) -> array of shape (len(positions), d)``

that returns the vectors of the integer ``positions`` inside a sequence of
``seq_len`` tokens (some naive schemes need the length, most ignore it).

The scored checklist as tables (Markdown and numbers) is :mod:`.checklist_tables`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._validation import require_choice, require_count, require_positive_real
from .metrics import linear_shift_fit, min_pairwise_distance

__all__ = [
    "Criterion",
    "CriterionResult",
    "CHECKLIST",
    "MECHANISMS",
    "NOT_APPLICABLE",
    "BY_CONSTRUCTION",
    "HEURISTIC",
    "score_encoding",
    "criterion_applies",
]

Encoder = Callable[[np.ndarray, int], np.ndarray]


@dataclass(frozen=True)
class Criterion:
    """One property of the checklist: a short ``key``, a ``name`` and the ``question`` it asks."""

    key: str
    name: str
    question: str


@dataclass(frozen=True)
class CriterionResult:
    """The outcome of checking one criterion: ``passed`` and the measured ``evidence``."""

    passed: bool
    evidence: str


CHECKLIST: tuple[Criterion, ...] = (
    Criterion("unique", "Unique", "Does every position get its own vector?"),
    Criterion("bounded", "Bounded", "Do the values stay in a fixed range as sequences grow?"),
    Criterion(
        "consistent",
        "Length-independent",
        "Does one step between neighbours mean the same in sequences of any length?",
    ),
    Criterion("deterministic", "Deterministic", "Does a position always get the same vector?"),
    Criterion(
        "defined_unseen",
        "Defined at unseen positions",
        "Can positions beyond those seen so far be encoded at all? (Not: does a trained model work there.)",
    ),
    Criterion(
        "linear_offset",
        "Offsets are a fixed map",
        "Is there one matrix M(φ) with PE(t + φ) = M(φ) PE(t) for every t?",
    ),
)

_KEYS = tuple(c.key for c in CHECKLIST)

#: How a method brings position into attention.
MECHANISMS: tuple[str, ...] = ("added to the input", "rotates queries and keys", "bias on the logits")

#: Criteria that do not apply to a mechanism, by one rule: chapter 01 asks for
#: *bounded* values so that a vector added to the token embeddings cannot swamp
#: them, so ``bounded`` applies only to methods that add a vector to the input.
#: RoPE rotates queries and keys (a rotation keeps every norm), and a bias on the
#: logits is never added to an embedding (ALiBi's grows with distance on purpose).
NOT_APPLICABLE: dict[str, tuple[str, ...]] = {
    "rotates queries and keys": ("bounded",),
    "bias on the logits": ("bounded",),
}

#: Criteria a mechanism meets by construction, with the reason. ``linear_offset``
#: asks that what a query at ``t`` knows about a key ``phi`` away not depend on
#: ``t``. A bias on the logits is a function of the offset ``j - i`` alone, so it
#: holds whatever any check of an adapter's rows finds (T5's shared buckets and
#: ALiBi's affine rows fail the *linear* least-squares test of their adapters).
BY_CONSTRUCTION: dict[str, dict[str, str]] = {
    "bias on the logits": {"linear_offset": "the bias is a function of the offset j - i only"},
}

#: Criteria a finite check can only suggest, not prove: the tables label their rows so.
HEURISTIC: tuple[str, ...] = ("bounded",)

# A finite check cannot prove a bound, so ``bounded`` is a heuristic: it looks at the
# largest |value| over ever longer ranges (x 16 each) and calls the values bounded when
# that stops growing, by at most _BOUNDED_GROWTH from the second-longest range to the
# longest. sin(t / 1000) passes (it reaches 1 by t = 1571); sqrt(log(1 + t)) fails (13 %
# more from 16 000 to 256 000 positions); slower growth still could slip through. An
# encoder that cannot encode the longer ranges (a learned table) has finitely many
# values, and those are bounded.
_BOUNDED_GROWTH = 1.02
_BOUNDED_SCALES = (1, 16, 256)  # multiples of long_length


def _table(encode: Encoder, length: int) -> np.ndarray:
    out = np.asarray(encode(np.arange(length), length), dtype=np.float64)
    if out.ndim == 1:
        out = out[:, None]
    if out.shape[0] != length:
        raise ValueError(f"encode returned {out.shape[0]} rows for {length} positions")
    return out


def _figure_or_bound(value: float, tolerance: float, digits: int = 2) -> str:
    """``value`` to ``digits`` significant digits, or the bound it passed when it is below it.

    A residual at rounding level differs from CPU to CPU; the bound it passed does not.
    """
    if value <= tolerance:
        return f"below {tolerance:.0e}".replace("e-0", "e-")
    return f"{value:.{digits}g}"


def _guarded(check: Callable[[], CriterionResult]) -> CriterionResult:
    try:
        return check()
    except (IndexError, ValueError, KeyError) as exc:
        return CriterionResult(False, f"failed to encode: {type(exc).__name__}: {exc}")


def score_encoding(
    encode: Encoder,
    *,
    short_length: int = 50,
    long_length: int = 1000,
    offsets: tuple[int, ...] = (1, 7),
    tolerance: float = 1e-8,
) -> dict[str, CriterionResult]:
    """Score an encoding on the six checklist properties by running a check for each.

    Parameters
    ----------
    encode : callable
        ``encode(positions, seq_len)`` returning one row per position (a 1-D
        result is treated as one feature).
    short_length, long_length : int, optional
        The two sequence lengths compared (defaults 50 and 1000);
        ``2 <= short_length < long_length``.
    offsets : tuple of int, optional
        Offsets ``phi`` for the linear-map test. Default ``(1, 7)``.
    tolerance : float, optional
        Threshold for "equal" and "zero residual". Default 1e-8.

    Returns
    -------
    dict
        ``{key: CriterionResult}`` in :data:`CHECKLIST` order. The checks:

        ``unique``
            minimum distance between rows over ``long_length`` positions
            is above ``tolerance``;
        ``bounded``
            a heuristic, since no finite check can prove a bound: the largest
            ``|value|`` over ``16 * long_length`` and over ``256 * long_length``
            positions differ by at most 2 % (growth has stopped); an encoder
            that raises before those lengths has finitely many values and
            passes;
        ``consistent``
            the steps ``PE(t+1) - PE(t)`` for the first ``short_length``
            positions are the same in both sequence lengths;
        ``deterministic``
            two calls give identical tables;
        ``defined_unseen``
            positions up to ``4 * long_length`` can be encoded and are finite
            (whether a *trained* model works there is another question: chapter 11);
        ``linear_offset``
            for each offset a least-squares matrix maps ``PE(t)`` to
            ``PE(t + phi)`` with relative residual below ``tolerance``.

        A check whose encoding call raises ``IndexError``, ``ValueError`` or
        ``KeyError`` fails, with the error as its evidence.

    Raises
    ------
    TypeError, ValueError
        If ``encode`` is not callable or a length, offset or tolerance is
        invalid.

    References
    ----------
    .. [1] A. Kazemnejad, "Transformer Architecture: The Positional Encoding",
       2019 (the list of properties a positional encoding should have).
    .. [2] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017,
       section 3.5 (the hope that offsets act as a linear map).

    Examples
    --------
    >>> import numpy as np
    >>> def index(positions, seq_len):
    ...     return np.asarray(positions, dtype=float)
    >>> scores = score_encoding(index)
    >>> [key for key, result in scores.items() if result.passed]
    ['unique', 'consistent', 'deterministic', 'defined_unseen']
    >>> slow = score_encoding(lambda positions, seq_len: np.sin(np.asarray(positions) / 1000.0))
    >>> slow["bounded"].passed, slow["bounded"].evidence
    (True, 'max |value| 1 over 16,000 positions, 1 over 256,000 (heuristic: no growth seen means bounded)')
    """
    if not callable(encode):
        raise TypeError(f"encode must be callable as encode(positions, seq_len), got {type(encode).__name__}")
    short_length = require_count(short_length, "short_length", minimum=2)
    long_length = require_count(long_length, "long_length", minimum=short_length + 1)
    if not isinstance(offsets, (tuple, list)) or not offsets:
        raise TypeError("offsets must be a non-empty tuple of positive integers")
    offsets = tuple(require_count(o, "offsets", minimum=1) for o in offsets)
    if max(offsets) >= long_length - 1:
        raise ValueError(f"offsets must be smaller than long_length - 1 = {long_length - 1}, got {max(offsets)}")
    tolerance = require_positive_real(tolerance, "tolerance")

    def unique() -> CriterionResult:
        distance = min_pairwise_distance(_table(encode, long_length))
        return CriterionResult(
            distance > tolerance,
            f"min distance between {long_length} positions: {distance:.3g}",
        )

    def bounded() -> CriterionResult:
        peaks: list[tuple[int, float]] = []
        for length in (short_length, *(m * long_length for m in _BOUNDED_SCALES)):
            try:
                peaks.append((length, float(np.abs(_table(encode, length)).max())))
            except (IndexError, ValueError, KeyError) as error:
                if len(peaks) < 2:
                    raise
                return CriterionResult(
                    True,
                    f"defined on finitely many positions ({type(error).__name__} at {length}), "
                    f"so finitely many values; max |value| {peaks[-1][1]:.3g}",
                )
        (n_before, before), (n_last, last) = peaks[-2:]
        return CriterionResult(
            last <= _BOUNDED_GROWTH * before + tolerance,
            f"max |value| {before:.3g} over {n_before:,} positions, {last:.3g} over {n_last:,} "
            f"(heuristic: no growth seen means bounded)",
        )

    def consistent() -> CriterionResult:
        short_steps = np.diff(_table(encode, short_length), axis=0)
        long_steps = np.diff(_table(encode, long_length)[:short_length], axis=0)
        gap = float(np.abs(short_steps - long_steps).max())
        return CriterionResult(
            gap <= tolerance,
            f"largest change of a step between lengths {short_length} and {long_length}: "
            + ("0" if gap == 0 else _figure_or_bound(gap, tolerance, digits=3)),
        )

    def deterministic() -> CriterionResult:
        same = np.array_equal(_table(encode, short_length), _table(encode, short_length))
        return CriterionResult(bool(same), "two calls identical" if same else "two calls differ")

    def defined_unseen() -> CriterionResult:
        far = 4 * long_length
        table = _table(encode, far)
        finite = bool(np.all(np.isfinite(table)))
        return CriterionResult(finite, f"encoded {far} positions" + ("" if finite else " (non-finite values)"))

    def linear_offset() -> CriterionResult:
        table = _table(encode, long_length)
        worst = max(linear_shift_fit(table, phi)[1] for phi in offsets)
        return CriterionResult(
            worst <= tolerance,
            f"relative least-squares residual (offsets {', '.join(map(str, offsets))}): "
            + _figure_or_bound(worst, tolerance),
        )

    checks = {
        "unique": unique,
        "bounded": bounded,
        "consistent": consistent,
        "deterministic": deterministic,
        "defined_unseen": defined_unseen,
        "linear_offset": linear_offset,
    }
    return {key: _guarded(checks[key]) for key in _KEYS}


def criterion_applies(criterion: str, mechanism: str) -> bool:
    """Whether a checklist criterion applies to a mechanism, by the rule :data:`NOT_APPLICABLE`.

    Parameters
    ----------
    criterion : str
        A key of :data:`~posenc_helpers.CHECKLIST` (``"unique"``, ``"bounded"``, ...).
    mechanism : str
        One of :data:`MECHANISMS`.

    Returns
    -------
    bool
        False only for the pairs listed in :data:`NOT_APPLICABLE` (``"bounded"``
        for every mechanism that adds nothing to the input).

    Raises
    ------
    TypeError, ValueError
        If ``criterion`` or ``mechanism`` is not one of the allowed strings.

    Examples
    --------
    >>> criterion_applies("bounded", "bias on the logits"), criterion_applies("bounded", "rotates queries and keys")
    (False, False)
    >>> criterion_applies("bounded", "added to the input")
    True
    """
    criterion = require_choice(criterion, "criterion", tuple(c.key for c in CHECKLIST))
    mechanism = require_choice(mechanism, "mechanism", MECHANISMS)
    return criterion not in NOT_APPLICABLE.get(mechanism, ())
