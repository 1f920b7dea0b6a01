"""Every method of the book behind one interface, and hand-built attention heads.

Chapter 10 scores eight position methods on chapter 01's checklist with
:func:`~posenc_helpers.score_encoding`, which needs each method as a function
``encode(positions, seq_len) -> rows``. Five methods *are* such a function: a
vector added to the token at position ``t``. Three are not, and need an
adapter that says what the rows mean (see :func:`method_encoders`):

``RoPE``
    the rotated probe ``R(t) u``: what a query at position ``t`` carries. Its
    score with any key at position 0 is ``<R(t) u, k>``, a linear function of
    the row.
``T5 buckets``
    the one-hot bucket of the offset ``0 - t`` from a query at ``t`` to a key
    at position 0. Every T5 bias of that pair (any head, any trained values)
    is ``bias_table @ row``, so the row is all a T5 layer can know about it.
``ALiBi``
    the bias ``-m_h * t`` that each head ``h`` adds to the logit of a query at
    ``t`` for a key at position 0.

The second half of this module builds the attention head of chapter 10 that
attends exactly ``phi`` tokens back: queries ``PE(i)``, keys ``M(phi) PE(j)``
(or, for RoPE, ``R(i) u`` and ``R(j) R(phi) u``), so that
``q_i . k_j = sum_p w_p cos(omega_p (i - j - phi))`` peaks at ``j = i - phi``.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._validation import (
    _describe,
    as_real_array,
    check_choice,
    check_count,
    check_even_width,
    check_finite,
    check_positive_real,
)
from .alibi import alibi_slopes
from .checklist import CHECKLIST, CriterionResult
from .learned import learned_encoding, learned_position_table
from .relative import t5_relative_bucket
from .rope import apply_rope, rope_frequencies
from .sinusoidal import frequencies, shift_matrix, sine_only_encoding, sinusoidal_encoding

__all__ = [
    "MECHANISMS",
    "NOT_APPLICABLE",
    "BY_CONSTRUCTION",
    "MethodEncoder",
    "OffsetHeadProfile",
    "method_encoders",
    "criterion_applies",
    "checklist_grid",
    "comparison_markdown",
    "offset_score",
    "offset_head_weights",
    "offset_head_profile",
]

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

HEAD_KINDS = ("sinusoidal", "rope")
_MAX_FULL = 4096  # offset_head_weights builds a full (n, n) matrix: 4096**2 float64 = 134 MB
_MAX_PAIRS = 2_000_000_000  # offset_head_profile: about a minute of scoring


@dataclass(frozen=True)
class MethodEncoder:
    """One method as ``encode(positions, seq_len) -> rows``, with what the rows mean.

    Attributes
    ----------
    name : str
        Display name, e.g. ``"RoPE"``.
    mechanism : str
        One of :data:`MECHANISMS`.
    adapter : str
        One sentence saying what row ``t`` is.
    encode : callable
        ``encode(positions, seq_len)``: a 1-D array of positions
        ``0 <= t < seq_len`` to an array with one row per position.

    Examples
    --------
    >>> enc = method_encoders(d_model=4)["sinusoidal"]
    >>> enc.mechanism
    'added to the input'
    >>> enc([0, 1], 2).shape
    (2, 4)
    """

    name: str
    mechanism: str
    adapter: str
    encode: Callable[[np.ndarray, int], np.ndarray]

    def __call__(self, positions: ArrayLike, seq_len: int) -> np.ndarray:
        return self.encode(positions, seq_len)


def _token_positions(positions: Any, seq_len: Any) -> tuple[np.ndarray, int]:
    """Validate ``positions`` as whole numbers in ``[0, seq_len)``; return int64 and the length."""
    seq_len = check_count(seq_len, "seq_len", minimum=1)
    if isinstance(positions, (str, bytes, numbers.Number)):
        raise TypeError(f"positions must be a 1-D array-like of token positions, got {_describe(positions)}")
    array = as_real_array(positions, "positions")
    if array.ndim != 1:
        raise ValueError(f"positions must be 1-D (one position per token), got shape {array.shape}")
    check_finite(array, "positions")
    if array.size and np.any(array != np.round(array)):
        raise ValueError("positions must be whole numbers (token positions 0, 1, 2, ...)")
    index = array.astype(np.int64)
    if index.size and (index.min() < 0 or index.max() >= seq_len):
        raise ValueError(
            f"positions must lie in [0, seq_len - 1] = [0, {seq_len - 1}], got {int(index.min())} .. {int(index.max())}"
        )
    return index, seq_len


def _probe_rng(seed: int) -> np.random.Generator:
    """A generator independent of ``default_rng(seed)`` (which draws the learned table)."""
    return np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])


def method_encoders(
    d_model: int = 16,
    *,
    base: float = 10000.0,
    learned_max_len: int = 1024,
    n_heads: int = 8,
    t5_num_buckets: int = 32,
    t5_max_distance: int = 128,
    t5_bidirectional: bool = False,
    seed: int = 0,
) -> dict[str, MethodEncoder]:
    """The book's eight position methods as encoders for :func:`~posenc_helpers.score_encoding`.

    ===============  ==========================  =======================================================
    name             mechanism                   row ``t`` (``seq_len`` = n)
    ===============  ==========================  =======================================================
    ``integer``      added to the input          ``[t]``
    ``normalised``   added to the input          ``[t / (n - 1)]`` (``[0]`` when n = 1)
    ``sine-only``    added to the input          :func:`~posenc_helpers.sine_only_encoding`, width d
    ``sinusoidal``   added to the input          :func:`~posenc_helpers.sinusoidal_encoding`, width d
    ``learned``      added to the input          row ``t`` of a ``learned_max_len x d`` table
    ``T5 buckets``   bias on the logits          one-hot of ``t5_relative_bucket(0 - t)``
    ``RoPE``         rotates queries and keys    ``R(t) u`` for a fixed probe ``u``, width d
    ``ALiBi``        bias on the logits          ``-m_h * t`` for each of ``n_heads`` heads
    ===============  ==========================  =======================================================

    The learned table stands in for a trained one (see
    :func:`~posenc_helpers.learned_position_table`); it has no row at or
    beyond ``learned_max_len``, so encoding such a position raises
    ``IndexError``, which ``score_encoding`` records as a failed check. The
    RoPE probe ``u`` is a fixed random vector (any vector with no zero pair
    gives the same verdicts): ``R(t) u`` is what a query ``u`` carries at
    position ``t``, and its score with a key ``k`` at position 0 is
    ``<R(t) u, k>``. For T5 the row is the one-hot bucket of the offset from
    a query at ``t`` to a key at 0: every T5 bias for that pair is
    ``bias_table @ row``, so the row holds everything T5 can know about the
    distance. For ALiBi the row is the bias of every head for the same pair.

    Parameters
    ----------
    d_model : int, optional
        Width of the vector encodings (sine-only, sinusoidal, learned, RoPE);
        a positive even integer. Default 16.
    base : float, optional
        Base of the sinusoidal, sine-only and RoPE frequencies, ``> 0``.
        Default 10000.
    learned_max_len : int, optional
        Rows of the learned table, ``>= 1``. Default 1024 (GPT-2's context).
    n_heads : int, optional
        ALiBi heads, ``>= 1``. Default 8.
    t5_num_buckets, t5_max_distance : int, optional
        T5 bucketing, defaults 32 and 128 (T5's). See
        :func:`~posenc_helpers.t5_relative_bucket`.
    t5_bidirectional : bool, optional
        T5's encoder bucketing (True) or decoder bucketing (False, default:
        keys before the query get all the buckets, as in a causal head).
    seed : int, optional
        Seed of the learned table and of the RoPE probe, ``>= 0``. Default 0.

    Returns
    -------
    dict of str to MethodEncoder
        In the order of the table above. Each encoder also accepts
        ``encode(positions, seq_len)`` directly.

    Raises
    ------
    TypeError, ValueError
        If an argument is not allowed (``d_model`` odd, a count below its
        minimum, ``base <= 0``, a non-bool ``t5_bidirectional``, or T5
        bucket settings that :func:`~posenc_helpers.t5_relative_bucket`
        rejects). The encoders raise ``ValueError`` for positions that are
        not whole numbers in ``[0, seq_len)``.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017, section 3.5.
    .. [2] C. Raffel et al., "Exploring the Limits of Transfer Learning with a
       Unified Text-to-Text Transformer", JMLR 21(140), 2020, section 2.1.
    .. [3] J. Su et al., "RoFormer: Enhanced Transformer with Rotary Position
       Embedding", Neurocomputing 568, 2024.
    .. [4] O. Press, N. A. Smith, M. Lewis, "Train Short, Test Long: Attention
       with Linear Biases Enables Input Length Extrapolation", ICLR 2022.

    Examples
    --------
    >>> import numpy as np
    >>> encoders = method_encoders(d_model=4, n_heads=2)
    >>> list(encoders)
    ['integer', 'normalised', 'sine-only', 'sinusoidal', 'learned', 'T5 buckets', 'RoPE', 'ALiBi']
    >>> encoders["normalised"]([0, 2, 4], 5)
    array([[0. ],
           [0.5],
           [1. ]])
    >>> encoders["ALiBi"]([0, 3], 4)   # slopes 1/16 and 1/256 for two heads
    array([[ 0.      ,  0.      ],
           [-0.1875  , -0.01171875]])
    >>> encoders["T5 buckets"]([0, 1], 2).argmax(axis=1)
    array([0, 1])
    """
    d_model = check_even_width(d_model, "d_model")
    base = check_positive_real(base, "base")
    learned_max_len = check_count(learned_max_len, "learned_max_len", minimum=1)
    n_heads = check_count(n_heads, "n_heads", minimum=1)
    seed = check_count(seed, "seed", minimum=0)
    t5_num_buckets = check_count(t5_num_buckets, "t5_num_buckets", minimum=1)
    t5_max_distance = check_count(t5_max_distance, "t5_max_distance", minimum=1)
    if not isinstance(t5_bidirectional, (bool, np.bool_)):
        raise TypeError(f"t5_bidirectional must be True or False, got {_describe(t5_bidirectional)}")
    t5_settings = dict(bidirectional=bool(t5_bidirectional), num_buckets=t5_num_buckets, max_distance=t5_max_distance)
    try:  # reject bad settings now, not at the first encoding
        t5_relative_bucket(np.zeros(1, dtype=np.int64), **t5_settings)
    except ValueError as exc:
        raise ValueError(
            f"t5_num_buckets / t5_max_distance not allowed (bidirectional={bool(t5_bidirectional)}): {exc}"
        ) from None

    table = learned_position_table(learned_max_len, d_model, seed=seed)
    probe = _probe_rng(seed).normal(size=d_model)
    slopes = alibi_slopes(n_heads)

    def integer(positions, seq_len):
        t, _ = _token_positions(positions, seq_len)
        return t.astype(np.float64)[:, None]

    def normalised(positions, seq_len):
        t, n = _token_positions(positions, seq_len)
        return (t / (n - 1) if n > 1 else np.zeros(t.shape)).astype(np.float64)[:, None]

    def sine_only(positions, seq_len):
        t, _ = _token_positions(positions, seq_len)
        return sine_only_encoding(t.astype(np.float64), d_model, base=base)

    def sinusoidal(positions, seq_len):
        t, _ = _token_positions(positions, seq_len)
        return sinusoidal_encoding(t.astype(np.float64), d_model, base=base)

    def learned(positions, seq_len):
        t, _ = _token_positions(positions, seq_len)
        return learned_encoding(t, table)

    def t5(positions, seq_len):
        t, _ = _token_positions(positions, seq_len)
        buckets = t5_relative_bucket(0 - t, **t5_settings)
        return np.eye(t5_num_buckets)[buckets]

    def rope(positions, seq_len):
        t, _ = _token_positions(positions, seq_len)
        return apply_rope(np.broadcast_to(probe, (t.size, d_model)), t.astype(np.float64), base=base)

    def alibi(positions, seq_len):
        t, _ = _token_positions(positions, seq_len)
        return 0.0 - t.astype(np.float64)[:, None] * slopes[None, :]

    added, rotated, bias = MECHANISMS
    specs = [
        ("integer", added, "the index t itself, one feature", integer),
        ("normalised", added, "t / (n - 1) for a sequence of n tokens, one feature", normalised),
        ("sine-only", added, f"{d_model} sines at geometric frequencies", sine_only),
        ("sinusoidal", added, f"PE(t): {d_model // 2} sine/cosine pairs", sinusoidal),
        ("learned", added, f"row t of a random {learned_max_len} x {d_model} table", learned),
        ("T5 buckets", bias, f"one-hot of the bucket of the offset to a key at 0 ({t5_num_buckets} buckets)", t5),
        ("RoPE", rotated, f"R(t) u: a fixed query u rotated to position t ({d_model} features)", rope),
        ("ALiBi", bias, f"the bias -m_h t of each of {n_heads} heads towards a key at 0", alibi),
    ]
    return {name: MethodEncoder(name, mechanism, adapter, fn) for name, mechanism, adapter, fn in specs}


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

    References
    ----------
    .. [1] O. Press, N. A. Smith, M. Lewis, "Train Short, Test Long: Attention
       with Linear Biases Enables Input Length Extrapolation", ICLR 2022
       (a bias that grows with distance, by design).

    Examples
    --------
    >>> criterion_applies("bounded", "bias on the logits"), criterion_applies("bounded", "rotates queries and keys")
    (False, False)
    >>> criterion_applies("bounded", "added to the input")
    True
    """
    criterion = check_choice(criterion, "criterion", tuple(c.key for c in CHECKLIST))
    mechanism = check_choice(mechanism, "mechanism", MECHANISMS)
    return criterion not in NOT_APPLICABLE.get(mechanism, ())


def _check_scores(scores: Any, mechanisms: Any) -> tuple[list[str], dict[str, str]]:
    keys = [c.key for c in CHECKLIST]
    if not isinstance(scores, Mapping) or not scores:
        raise TypeError("scores must be a non-empty dict {method name: score_encoding result}")
    for method, result in scores.items():
        if not isinstance(result, Mapping):
            raise TypeError(f"scores[{method!r}] must be a score_encoding result (a dict), got {_describe(result)}")
        missing = [key for key in keys if key not in result]
        if missing:
            raise ValueError(f"scores[{method!r}] lacks the criteria {missing}")
        for key in keys:
            if not isinstance(result[key], CriterionResult):
                raise TypeError(
                    f"scores[{method!r}][{key!r}] must be a CriterionResult from score_encoding, "
                    f"got {_describe(result[key])}"
                )
    methods = list(scores)
    if mechanisms is None:
        return methods, {m: MECHANISMS[0] for m in methods}
    if not isinstance(mechanisms, Mapping):
        raise TypeError(f"mechanisms must be a dict {{method name: mechanism}} or None, got {_describe(mechanisms)}")
    resolved = {}
    for method in methods:
        if method not in mechanisms:
            raise ValueError(f"mechanisms lacks the method {method!r}")
        resolved[method] = check_choice(mechanisms[method], f"mechanisms[{method!r}]", MECHANISMS)
    return methods, resolved


def checklist_grid(
    scores: Mapping[str, Mapping[str, CriterionResult]],
    mechanisms: Mapping[str, str] | None = None,
) -> np.ndarray:
    """The scored checklist as numbers: 1 passed (or met by construction), 0 failed, NaN not applicable.

    Parameters
    ----------
    scores : dict
        ``{method name: score_encoding(...) result}``.
    mechanisms : dict, optional
        ``{method name: mechanism}`` with mechanisms from :data:`MECHANISMS`;
        a criterion that does not apply (:func:`criterion_applies`) gives NaN
        and one met by construction (:data:`BY_CONSTRUCTION`) gives 1, whatever
        its check found. Without it every criterion is scored by its check.

    Returns
    -------
    numpy.ndarray
        Shape ``(len(CHECKLIST), len(scores))``: rows in checklist order,
        columns in the order of ``scores``.

    Raises
    ------
    TypeError, ValueError
        If ``scores`` is not a non-empty mapping of complete score results or
        ``mechanisms`` lacks a method or names an unknown mechanism.

    References
    ----------
    .. [1] A. Kazemnejad, "Transformer Architecture: The Positional Encoding", 2019
       (the checklist).

    Examples
    --------
    >>> from posenc_helpers import score_encoding
    >>> enc = method_encoders(d_model=4, n_heads=2)
    >>> scores = {name: score_encoding(enc[name]) for name in ("integer", "ALiBi")}
    >>> checklist_grid(scores, {name: enc[name].mechanism for name in scores})
    array([[ 1.,  1.],
           [ 0., nan],
           [ 1.,  1.],
           [ 1.,  1.],
           [ 1.,  1.],
           [ 0.,  1.]])
    """
    methods, resolved = _check_scores(scores, mechanisms)
    grid = np.empty((len(CHECKLIST), len(methods)))
    for col, method in enumerate(methods):
        for row, criterion in enumerate(CHECKLIST):
            if not criterion_applies(criterion.key, resolved[method]):
                grid[row, col] = np.nan
            elif criterion.key in BY_CONSTRUCTION.get(resolved[method], {}):
                grid[row, col] = 1.0
            else:
                grid[row, col] = 1.0 if scores[method][criterion.key].passed else 0.0
    return grid


def comparison_markdown(
    scores: Mapping[str, Mapping[str, CriterionResult]],
    mechanisms: Mapping[str, str] | None = None,
    extra_rows: Mapping[str, Mapping[str, str]] | None = None,
) -> str:
    """The scored checklist as a Markdown table with ``yes``, ``no`` and ``n/a`` cells.

    Like :func:`~posenc_helpers.checklist_markdown`, plus a first row naming
    each method's mechanism, ``n/a`` where :func:`criterion_applies` says a
    criterion does not apply and ``yes (by construction)`` where
    :data:`BY_CONSTRUCTION` says a mechanism meets it. Every cell comes from
    :func:`checklist_grid`.

    Parameters
    ----------
    scores : dict
        ``{method name: score_encoding(...) result}``.
    mechanisms : dict, optional
        ``{method name: mechanism}``; see :func:`checklist_grid`.
    extra_rows : dict, optional
        ``{row name: {method name: cell text}}``: rows appended below the checklist,
        such as measured results; a method missing from a row gets an em dash.

    Returns
    -------
    str
        A Markdown table (display it with ``IPython.display.Markdown``).

    Raises
    ------
    TypeError, ValueError
        As :func:`checklist_grid`, or if ``extra_rows`` is not a mapping of mappings.

    References
    ----------
    .. [1] A. Kazemnejad, "Transformer Architecture: The Positional Encoding", 2019
       (the checklist).

    Examples
    --------
    >>> from posenc_helpers import score_encoding
    >>> enc = method_encoders(d_model=4, n_heads=2)
    >>> table = comparison_markdown({"ALiBi": score_encoding(enc["ALiBi"])}, {"ALiBi": enc["ALiBi"].mechanism},
    ...                             extra_rows={"Trained: works long": {"ALiBi": "yes"}})
    >>> [table.splitlines()[i] for i in (4, 8, 9)]
    ['| Bounded | n/a |', '| Offsets are a fixed map | yes (by construction) |', '| Trained: works long | yes |']
    """
    grid = checklist_grid(scores, mechanisms)
    methods, resolved = _check_scores(scores, mechanisms)
    if extra_rows is not None and not (
        isinstance(extra_rows, Mapping) and all(isinstance(row, Mapping) for row in extra_rows.values())
    ):
        raise TypeError("extra_rows must be a dict {row name: {method name: cell text}}")
    words = {1.0: "yes", 0.0: "no"}
    lines = [
        "| property | " + " | ".join(methods) + " |",
        "|---|" + "---|" * len(methods),
    ]
    if mechanisms is not None:
        lines.append("| *mechanism* | " + " | ".join(f"*{resolved[m]}*" for m in methods) + " |")
    for row, criterion in enumerate(CHECKLIST):
        cells = []
        for method, value in zip(methods, grid[row], strict=True):
            if np.isnan(value):
                cells.append("n/a")
            elif criterion.key in BY_CONSTRUCTION.get(resolved[method], {}) and mechanisms is not None:
                cells.append("yes (by construction)")
            else:
                cells.append(words[float(value)])
        lines.append(f"| {criterion.name} | " + " | ".join(cells) + " |")
    for name, row in (extra_rows or {}).items():
        lines.append(f"| {name} | " + " | ".join(str(row.get(m, "—")) for m in methods) + " |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- the offset head
def _check_probe(probe: Any, d_model: int, kind: str) -> np.ndarray:
    if probe is None:
        unit = np.zeros(d_model)
        unit[0::2] = 1.0
        return unit
    if kind != "rope":
        raise ValueError("probe is only used by kind='rope'; leave it None for kind='sinusoidal'")
    array = as_real_array(probe, "probe").astype(np.float64)
    if array.shape != (d_model,):
        raise ValueError(f"probe must be 1-D with d_model = {d_model} entries, got shape {array.shape}")
    check_finite(array, "probe")
    if not np.any(array):
        raise ValueError("probe must not be all zeros (a zero query attends uniformly)")
    return array


def _head_args(offset, d_model, temperature, kind, base, probe):
    offset = check_count(offset, "offset", minimum=0)
    d_model = check_even_width(d_model, "d_model")
    temperature = check_positive_real(temperature, "temperature")
    kind = check_choice(kind, "kind", HEAD_KINDS)
    base = check_positive_real(base, "base")
    probe = _check_probe(probe, d_model, kind)
    return offset, d_model, temperature, kind, base, probe


class _Head:
    """Queries and keys of the offset head for any positions, computed on demand."""

    def __init__(self, offset: int, d_model: int, kind: str, base: float, probe: np.ndarray) -> None:
        self.kind, self.base, self.d_model = kind, base, d_model
        if kind == "sinusoidal":
            self.shift = shift_matrix(float(offset), d_model, base=base)  # M(phi)
        else:
            self.probe = probe
            # R(phi) u: the probe turned forward by phi positions.
            self.shifted_probe = apply_rope(probe[None, :], [float(offset)], base=base)[0]

    def _rope(self, vector: np.ndarray, positions: np.ndarray) -> np.ndarray:
        return apply_rope(np.broadcast_to(vector, (positions.size, self.d_model)), positions, base=self.base)

    def queries(self, positions: np.ndarray) -> np.ndarray:
        if self.kind == "sinusoidal":
            return sinusoidal_encoding(positions, self.d_model, base=self.base)  # PE(i)
        return self._rope(self.probe, positions)  # R(i) u

    def keys(self, positions: np.ndarray) -> np.ndarray:
        if self.kind == "sinusoidal":
            # k_j = M(phi) PE(j); rows are row vectors, so PE @ M(phi).T
            return sinusoidal_encoding(positions, self.d_model, base=self.base) @ self.shift.T
        return self._rope(self.shifted_probe, positions)  # R(j) R(phi) u


def offset_score(
    delta: ArrayLike,
    d_model: int,
    *,
    kind: str = "sinusoidal",
    base: float = 10000.0,
    probe: ArrayLike | None = None,
) -> np.ndarray:
    """The offset head's score ``q_i . k_j`` as a function of ``delta = i - j - phi``.

    With ``q_i = PE(i)`` and ``k_j = M(phi) PE(j) = PE(j + phi)``::

        q_i . k_j = sum_k cos(omega_k * delta)

    and for RoPE, ``q_i = R(i) u`` and ``k_j = R(j) R(phi) u``::

        q_i . k_j = sum_p |u_p|^2 cos(theta_p * delta)

    where ``|u_p|^2`` is the squared length of pair ``p`` of the probe. Both
    are largest, ``sum_p w_p``, at ``delta = 0``, and for whole-number
    ``delta`` only there (``cos(delta) = 1`` needs ``delta`` to be a multiple
    of ``2 pi``, which no other integer is), provided pair 0 has weight.

    Parameters
    ----------
    delta : array_like
        Real offsets ``i - j - phi``, any shape.
    d_model : int
        Width of queries and keys, a positive even integer.
    kind : {"sinusoidal", "rope"}, optional
        Which head. Default ``"sinusoidal"``.
    base : float, optional
        Frequency base, ``> 0``. Default 10000.
    probe : array_like, optional
        RoPE only: the probe ``u``, shape ``(d_model,)``, not all zero.
        Default: ``(1, 0)`` in every pair, which gives the sinusoidal score.

    Returns
    -------
    numpy.ndarray
        Same shape as ``delta``, float64.

    Raises
    ------
    TypeError, ValueError
        If an argument is not allowed (non-finite ``delta``, odd ``d_model``,
        unknown ``kind``, a probe of the wrong shape, or a probe with
        ``kind="sinusoidal"``).

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017, section 3.5.
    .. [2] J. Su et al., "RoFormer: Enhanced Transformer with Rotary Position
       Embedding", Neurocomputing 568, 2024, section 3.4.

    Examples
    --------
    >>> import numpy as np
    >>> offset_score([0, 1], 2)   # one pair, omega = 1
    array([1.        , 0.54030231])
    >>> bool(np.allclose(offset_score([3.0], 8, kind="rope"), offset_score([3.0], 8)))
    True
    """
    d_model = check_even_width(d_model, "d_model")
    kind = check_choice(kind, "kind", HEAD_KINDS)
    base = check_positive_real(base, "base")
    u = _check_probe(probe, d_model, kind)
    values = as_real_array(delta, "delta").astype(np.float64)
    check_finite(values, "delta")
    if kind == "sinusoidal":
        omega, weight = frequencies(d_model, base=base), np.ones(d_model // 2)
    else:
        omega, weight = rope_frequencies(d_model, base=base), u[0::2] ** 2 + u[1::2] ** 2
    flat = values.reshape(-1)
    return (np.cos(flat[:, None] * omega[None, :]) @ weight).reshape(values.shape)


def offset_head_weights(
    seq_len: int,
    offset: int,
    d_model: int,
    *,
    temperature: float = 1.0,
    kind: str = "sinusoidal",
    base: float = 10000.0,
    probe: ArrayLike | None = None,
) -> np.ndarray:
    """Causal attention weights of the hand-built head that looks ``offset`` tokens back.

    Queries ``q_i = PE(i)`` and keys ``k_j = M(phi) PE(j)`` (``kind="sinusoidal"``)
    or ``q_i = R(i) u`` and ``k_j = R(j) R(phi) u`` (``kind="rope"``); logits
    ``q_i . k_j / temperature`` with keys after the query masked; a softmax
    over each row. Row ``i >= phi`` peaks at key ``j = i - phi``.

    Parameters
    ----------
    seq_len : int
        Number of tokens, ``1 <= seq_len <= 4096`` (the full matrix is
        returned; use :func:`offset_head_profile` for longer sequences).
    offset : int
        ``phi``, how many tokens back to look, ``>= 0``.
    d_model : int
        Width of queries and keys, a positive even integer.
    temperature : float, optional
        Divides the logits, ``> 0``; smaller is sharper. Default 1.
    kind : {"sinusoidal", "rope"}, optional
        Which construction. Default ``"sinusoidal"``.
    base : float, optional
        Frequency base, ``> 0``. Default 10000.
    probe : array_like, optional
        RoPE only, see :func:`offset_score`.

    Returns
    -------
    numpy.ndarray
        Shape ``(seq_len, seq_len)``; row ``i`` is query ``i``, zero above the
        diagonal, each row summing to 1.

    Raises
    ------
    TypeError, ValueError
        If an argument is not allowed.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017,
       section 3.5 ("the model [can] easily learn to attend by relative positions").

    Examples
    --------
    >>> import numpy as np
    >>> w = offset_head_weights(16, 2, 16, temperature=0.125)
    >>> int(w[10].argmax()), bool(w[10, 8] > 0.9)
    (8, True)
    """
    seq_len = check_count(seq_len, "seq_len", minimum=1)
    if seq_len > _MAX_FULL:
        raise ValueError(
            f"seq_len must be <= {_MAX_FULL} for the full weight matrix, got {seq_len}; "
            "use offset_head_profile for longer sequences"
        )
    offset, d_model, temperature, kind, base, probe = _head_args(offset, d_model, temperature, kind, base, probe)
    head = _Head(offset, d_model, kind, base, probe)
    positions = np.arange(seq_len, dtype=np.float64)
    logits = head.queries(positions) @ head.keys(positions).T / temperature
    logits[np.triu_indices(seq_len, k=1)] = -np.inf
    logits -= logits.max(axis=1, keepdims=True)
    weights = np.exp(logits)
    return weights / weights.sum(axis=1, keepdims=True)


class OffsetHeadProfile(NamedTuple):
    """Per-query summary of the offset head, from :func:`offset_head_profile`.

    Attributes
    ----------
    queries : numpy.ndarray
        The query positions ``i`` (int64).
    argmax : numpy.ndarray
        The key each query weights most (int64; the first on a tie).
    target_weight : numpy.ndarray
        The weight on key ``i - phi``; NaN where ``i < phi`` (no such key).
    runner_up_weight : numpy.ndarray
        The second-largest weight of the row (0 for a row with one key).

    Examples
    --------
    >>> p = offset_head_profile(8, 1, 8, temperature=0.25)
    >>> p._fields
    ('queries', 'argmax', 'target_weight', 'runner_up_weight')
    """

    queries: np.ndarray
    argmax: np.ndarray
    target_weight: np.ndarray
    runner_up_weight: np.ndarray


def _query_positions(queries: Any, seq_len: int) -> np.ndarray:
    if queries is None:
        return np.arange(seq_len, dtype=np.int64)
    if isinstance(queries, (str, bytes, numbers.Number)):
        raise TypeError(f"queries must be a 1-D array-like of query positions or None, got {_describe(queries)}")
    array = as_real_array(queries, "queries")
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"queries must be a non-empty 1-D array of positions, got shape {array.shape}")
    check_finite(array, "queries")
    if np.any(array != np.round(array)):
        raise ValueError("queries must be whole-number positions")
    index = array.astype(np.int64)
    if index.min() < 0 or index.max() >= seq_len:
        raise ValueError(f"queries must lie in [0, seq_len - 1] = [0, {seq_len - 1}]")
    if np.any(np.diff(index) <= 0):
        raise ValueError("queries must be strictly increasing")
    return index


def offset_head_profile(
    seq_len: int,
    offset: int,
    d_model: int,
    *,
    temperature: float = 1.0,
    kind: str = "sinusoidal",
    base: float = 10000.0,
    probe: ArrayLike | None = None,
    queries: ArrayLike | None = None,
    block_size: int = 1024,
) -> OffsetHeadProfile:
    """Run the offset head on a long sequence and summarise every query's row.

    Computes the same logits as :func:`offset_head_weights` (real queries
    ``q_i`` and keys ``k_j``, their dot products, the causal mask) but never
    holds the ``seq_len x seq_len`` matrix: keys are made and scored in blocks,
    and each row's softmax is accumulated block by block (running maximum and
    running sum, as in streaming softmax). Memory is ``O(block_size**2 +
    len(queries))``.

    Parameters
    ----------
    seq_len : int
        Number of tokens, ``>= 1``.
    offset : int
        ``phi``, ``>= 0``.
    d_model : int
        Width, a positive even integer.
    temperature : float, optional
        Divides the logits, ``> 0``. Default 1.
    kind : {"sinusoidal", "rope"}, optional
        Which construction. Default ``"sinusoidal"``.
    base : float, optional
        Frequency base, ``> 0``. Default 10000.
    probe : array_like, optional
        RoPE only, see :func:`offset_score`.
    queries : array_like of int, optional
        Strictly increasing query positions in ``[0, seq_len)`` to summarise
        (default: all). Each still attends to every key ``j <= i``; at most
        two billion (query, key) pairs in all.
    block_size : int, optional
        Rows and keys per block, ``>= 2``. Default 1024.

    Returns
    -------
    OffsetHeadProfile
        ``(queries, argmax, target_weight, runner_up_weight)``.

    Raises
    ------
    TypeError, ValueError
        If an argument is not allowed.

    References
    ----------
    .. [1] M. Milakov, N. Gimelshein, "Online normalizer calculation for
       softmax", arXiv:1805.02867, 2018 (the running maximum and sum).

    Examples
    --------
    >>> import numpy as np
    >>> p = offset_head_profile(3000, 5, 32, temperature=0.125, block_size=256)
    >>> bool(np.all(p.argmax[5:] == p.queries[5:] - 5)), bool(np.nanmin(p.target_weight) > 0.95)
    (True, True)
    """
    seq_len = check_count(seq_len, "seq_len", minimum=1)
    offset, d_model, temperature, kind, base, probe = _head_args(offset, d_model, temperature, kind, base, probe)
    block = check_count(block_size, "block_size", minimum=2)
    q_pos = _query_positions(queries, seq_len)
    pairs = int(np.sum(q_pos + 1))  # (query, key) pairs scored under the causal mask
    if pairs > _MAX_PAIRS:
        raise ValueError(
            f"queries would score {pairs:,} (query, key) pairs, more than {_MAX_PAIRS:,}; "
            "pass a subset of query positions with queries=[...]"
        )
    head = _Head(offset, d_model, kind, base, probe)

    n = q_pos.size
    run_max = np.full(n, -np.inf)
    run_sum = np.zeros(n)
    top1 = np.full(n, -np.inf)
    top1_index = np.zeros(n, dtype=np.int64)
    top2 = np.full(n, -np.inf)
    target_logit = np.full(n, np.nan)
    target = q_pos - offset

    for q_start in range(0, n, block):
        rows = slice(q_start, min(q_start + block, n))
        qp = q_pos[rows]
        qv = head.queries(qp.astype(np.float64))
        last_key = int(qp[-1])
        for k_start in range(0, last_key + 1, block):
            kp = np.arange(k_start, min(k_start + block, last_key + 1), dtype=np.int64)
            logits = qv @ head.keys(kp.astype(np.float64)).T
            logits /= temperature
            if kp[-1] > qp[0]:  # the block crosses the diagonal: mask keys after the query
                logits[kp[None, :] > qp[:, None]] = -np.inf
            local_rows = np.arange(qp.size)
            block_arg = logits.argmax(axis=1)
            block_max = logits[local_rows, block_arg]
            # The logit of the target key, if it lies in this block.
            tgt = target[rows]
            inside = (tgt >= k_start) & (tgt < k_start + kp.size)
            if inside.any():
                local = np.flatnonzero(inside)
                target_logit[q_start + local] = logits[local, tgt[local] - k_start]
            # Running top two: the block's second largest is its maximum once the top is removed.
            logits[local_rows, block_arg] = -np.inf
            block_second = logits.max(axis=1)
            logits[local_rows, block_arg] = block_max
            old1, old2 = top1[rows], top2[rows]
            better = block_max > old1
            top2[rows] = np.where(better, np.maximum(old1, block_second), np.maximum(old2, block_max))
            top1[rows] = np.where(better, block_max, old1)
            top1_index[rows] = np.where(better, kp[block_arg], top1_index[rows])
            # Running softmax normaliser: rescale the old sum to the new maximum.
            new_max = np.maximum(run_max[rows], block_max)
            logits -= new_max[:, None]
            np.exp(logits, out=logits)
            run_sum[rows] = run_sum[rows] * np.exp(run_max[rows] - new_max) + logits.sum(axis=1)
            run_max[rows] = new_max

    target_weight = np.exp(target_logit - run_max) / run_sum
    with np.errstate(invalid="ignore"):
        runner_up = np.where(np.isfinite(top2), np.exp(top2 - run_max) / run_sum, 0.0)
    return OffsetHeadProfile(q_pos, top1_index, target_weight, runner_up)
