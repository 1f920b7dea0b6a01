"""The book's position methods behind one interface, for the checklist.

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
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._validation import (
    as_integer_array,
    describe_value,
    require_count,
    require_even_width,
    require_positive_real,
)
from .alibi import alibi_slopes
from .checklist import MECHANISMS
from .learned import learned_encoding, learned_position_table
from .relative import t5_relative_bucket
from .rope import apply_rope
from .sinusoidal import sine_only_encoding, sinusoidal_encoding

__all__ = ["MethodEncoder", "method_encoders"]


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
    encode: Callable[[ArrayLike, int], np.ndarray]

    def __call__(self, positions: ArrayLike, seq_len: int) -> np.ndarray:
        return self.encode(positions, seq_len)


def _token_positions(positions: Any, seq_len: Any) -> tuple[np.ndarray, int]:
    """Validate ``positions`` as whole numbers in ``[0, seq_len)``; return int64 and the length."""
    seq_len = require_count(seq_len, "seq_len", minimum=1)
    if isinstance(positions, (str, bytes, numbers.Number)):
        raise TypeError(f"positions must be a 1-D array-like of token positions, got {describe_value(positions)}")
    index = as_integer_array(positions, "positions")
    if index.ndim != 1:
        raise ValueError(f"positions must be 1-D (one position per token), got shape {index.shape}")
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
    d_model = require_even_width(d_model, "d_model")
    base = require_positive_real(base, "base")
    learned_max_len = require_count(learned_max_len, "learned_max_len", minimum=1)
    n_heads = require_count(n_heads, "n_heads", minimum=1)
    seed = require_count(seed, "seed", minimum=0)
    t5_num_buckets = require_count(t5_num_buckets, "t5_num_buckets", minimum=1)
    t5_max_distance = require_count(t5_max_distance, "t5_max_distance", minimum=1)
    if not isinstance(t5_bidirectional, (bool, np.bool_)):
        raise TypeError(f"t5_bidirectional must be True or False, got {describe_value(t5_bidirectional)}")
    t5_settings: dict[str, Any] = dict(
        bidirectional=bool(t5_bidirectional), num_buckets=t5_num_buckets, max_distance=t5_max_distance
    )
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
