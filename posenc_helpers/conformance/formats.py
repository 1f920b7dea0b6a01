"""What a number format costs a cos/sin table, and how rounded angles are recognised (shared by the probes).

A model declared in a low-precision ``dtype`` holds its cos/sin tables in that
format: Hugging Face's ``LlamaRotaryEmbedding.forward`` computes the angles in
float32 and returns ``cos.to(dtype=x.dtype)``. Rounding a value ``v`` to a
format with a ``p``-bit significand moves it by at most half a unit in the last
place, at most ``2**-p * |v|``:

==========  ===========  ======================
dtype       ``p``        bound on ``|round(v) - v|``
==========  ===========  ======================
float32     24           ``2**-24 |v|``
float16     11           ``2**-11 |v|`` (+ ``2**-25`` below ``2**-14``)
bfloat16    8            ``2**-8 |v|``
==========  ===========  ======================

That error is bounded: the same at the first position as at the last. A
rounded *angle* (positions, frequencies or their product held in the low
format) costs in proportion to its size and grows with the position; the kit
names that ``low-precision-angles`` whatever the declared dtype.
"""

from __future__ import annotations

import numpy as np

from ..precision import round_to_precision
from .report import Evidence

__all__ = [
    "DTYPES",
    "FLOAT16_OVERFLOW",
    "angle_slack",
    "rounded_angle_variants",
    "rounded_tables",
    "table_cost",
    "within_dtype",
]

#: The dtypes a spec may declare, the default first.
DTYPES = ("float32", "bfloat16", "float16")

#: Relative half-ulp bound of each format; float16's absolute floor covers its subnormals.
_UNIT = {"float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8}
_FLOOR = {"float32": 0.0, "float16": 2.0**-25, "bfloat16": 0.0}

#: The first position float16 cannot hold (the midpoint above its largest finite value, 65504).
FLOAT16_OVERFLOW = 65520


def within_dtype(got: np.ndarray, exact: np.ndarray, dtype: str, tolerance: np.ndarray | float) -> bool:
    """Whether every entry of ``got`` is ``exact`` rounded to ``dtype``, give or take ``tolerance``."""
    bound = _UNIT[dtype] * np.abs(exact) + _FLOOR[dtype] + tolerance
    return bool(np.all(np.abs(got - exact) <= bound))


def rounded_tables(got: np.ndarray, exact: np.ndarray, tolerance: np.ndarray | float) -> str | None:
    """The format (``"float16"`` or ``"bfloat16"``) whose rounding of ``exact`` gives ``got``, or None.

    Every entry of ``got`` must be a value of the format, and within its rounding of ``exact``.
    """
    for fmt in ("float16", "bfloat16"):
        representable = np.all(round_to_precision(got, fmt) == got)
        if representable and within_dtype(got, exact, fmt, tolerance):
            return fmt
    return None


def angle_slack(dtype: str) -> float:
    """How far (radians) a pair's angle moves when its cos and sin are rounded to ``dtype``."""
    return 0.0 if dtype == "float32" else 2.0 * _UNIT[dtype]


def table_cost(dtype: str) -> str:
    """The note a report carries when the tables are rounded to ``dtype``, as the spec allows."""
    exponent = {"bfloat16": 8, "float16": 11}[dtype]
    return (
        f"the cos/sin tables are rounded to {dtype}, as dtype={dtype!r} allows: each entry is off its exact value "
        f"by at most 2**-{exponent} of its size, a bounded error, the same at the first position as at the last; "
        "the angles themselves are exact"
    )


def rounded_angle_variants(positions: np.ndarray, theta: np.ndarray, fmt: str) -> dict[str, list[np.ndarray]]:
    """Angles with some of positions, frequencies and product rounded to ``fmt``, keyed by what is rounded.

    Each variant lists the product computed in float64 and in float32 (a near tie may round either way).
    Positions past float16's range give infinite angles, which match nothing.
    """

    def rounded(x: np.ndarray) -> np.ndarray:
        return round_to_precision(x, fmt)

    variants: dict[str, list[np.ndarray]] = {}
    for t_round in (False, True):
        for f_round in (False, True):
            for p_round in (False, True):
                if not (t_round or f_round or p_round):
                    continue
                t = rounded(positions) if t_round else positions
                f = rounded(theta) if f_round else theta
                with np.errstate(over="ignore", invalid="ignore"):
                    products = [t[:, None] * f[None, :], t.astype(np.float32)[:, None] * f.astype(np.float32)[None, :]]
                    products = [np.asarray(p, dtype=np.float64) for p in products]
                    if p_round:
                        products = [rounded(p) for p in products]
                what = [
                    name
                    for name, used in (("positions", t_round), ("frequencies", f_round), ("their product", p_round))
                    if used
                ]
                variants[" and ".join(what)] = products
    return variants


def overflow_evidence(finite: np.ndarray, positions: np.ndarray, label: str, what: str) -> Evidence | None:
    """Evidence that ``what`` ("the output", "the table") is not finite at the first probe position
    where ``finite`` (one flag per position) is False: past 65504, float16's largest value, the
    position or its angle overflows. None when every position is finite."""
    if np.all(finite):
        return None
    first = int(positions[np.flatnonzero(~finite)[0]])
    note = (
        f"{what} is not finite at position {first}: past 65504, the largest float16, the position or the "
        "angle overflows (positions or angles held in float16)"
    )
    return Evidence(label, note, position=first, bug="low-precision-angles")
