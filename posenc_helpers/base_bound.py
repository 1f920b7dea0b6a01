"""Men et al.'s criterion for the RoPE base: how far a similar key keeps its advantage.

Men et al. (2024) ask that a query give a key similar to it more attention than
a random key at every distance ``m`` within the context. Under their
assumptions (query and key features independent, a similar key equal to the
query plus noise) the expected advantage is proportional to

    B(m) = sum over query/key feature pairs of cos(m * theta_i),

where the sum runs over *every* pair of query/key features. A pair that is not
rotated (the pass-through part of a partially rotary head, the
position-free part of DeepSeek's multi-head latent attention, or a pair whose
frequency p-RoPE set to zero) has ``theta = 0`` and adds ``cos 0 = 1`` at every
distance: ``u`` unrotated features add ``u / 2``. ``B(0)`` is the number of
pairs, ``head_dim / 2``; the criterion holds over a context of ``L`` tokens
when ``B(m) >= 0`` for ``m = 0 .. L - 1``.

* :func:`men_criterion` evaluates ``B(m)`` for every distance of a context;
* :func:`first_negative_distance` finds the first distance where ``B`` drops
  below zero, the longest context the criterion allows;
* :func:`smallest_passing_base` finds, for one context, the smallest base that
  satisfies it, by a fine scan of bases and bisection of the first fail-to-pass
  transition.

The criterion is not monotone in the base: a larger base can fail where a
smaller one passes (chapter 12 shows the pattern), which is why the smallest
passing base is found by scanning rather than by bisection alone.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_real_array, require_count, require_even_width, require_finite, require_positive_real
from .rope import rope_frequencies

__all__ = ["men_criterion", "first_negative_distance", "smallest_passing_base"]

#: Distances evaluated per block by :func:`first_negative_distance` before it looks for a sign change.
_FIRST_BLOCK = 4096


def _require_frequencies(values: ArrayLike) -> np.ndarray:
    """Frequencies ``>= 0`` (zero: an unrotated pair), a non-empty 1-D float64 array."""
    array = as_real_array(values, "inv_freq").astype(np.float64)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"inv_freq must be a non-empty 1-D array (one frequency per pair), got shape {array.shape}")
    require_finite(array, "inv_freq")
    if np.any(array < 0):
        bad = int(np.flatnonzero(array < 0)[0])
        raise ValueError(f"inv_freq must hold frequencies >= 0 (0: an unrotated pair); entry {bad} is {array[bad]!r}")
    return array


def _criterion(theta: np.ndarray, start: int, stop: int, constant: float) -> np.ndarray:
    """``B(m)`` for ``m = start .. stop - 1``, with ``cos(a + b)`` split into two small tables.

    Writing ``m = start + k J + j`` (``0 <= j < J``), ``cos(m theta) = cos((start + kJ) theta) cos(j theta)
    - sin((start + kJ) theta) sin(j theta)``, so the sum over pairs is two matrix products of a
    ``K x P`` and a ``P x J`` table instead of ``n x P`` cosines.
    """
    n = stop - start
    fine_count = max(1, math.isqrt(n - 1) + 1)  # J >= sqrt(n)
    coarse_count = -(-n // fine_count)  # K = ceil(n / J)
    fine = np.arange(fine_count, dtype=np.float64)[:, None] * theta
    coarse = (start + np.arange(coarse_count, dtype=np.float64) * fine_count)[:, None] * theta
    table = np.cos(coarse) @ np.cos(fine).T - np.sin(coarse) @ np.sin(fine).T
    return table.reshape(-1)[:n] + constant


def men_criterion(inv_freq: ArrayLike, context: int, *, unrotated_features: int = 0) -> np.ndarray:
    """Men et al.'s ``B(m)`` for every distance ``m = 0 .. context - 1``.

    ``B(m) = sum_i cos(m * theta_i) + unrotated_features / 2``: one term per
    rotated pair and ``cos 0 = 1`` for every pair of features that is not
    rotated. ``B(0) = len(inv_freq) + unrotated_features / 2`` is the number of
    query/key feature pairs.

    Parameters
    ----------
    inv_freq : array_like
        The rotated pairs' frequencies ``theta_i`` (radians per token), a
        non-empty 1-D array of finite numbers ``>= 0``; a zero frequency is a
        pair that is not rotated (p-RoPE). Rescaled frequencies (from
        :func:`~posenc_helpers.scaled_rope_frequencies`) are allowed: the
        derivation does not need them to be geometric.
    context : int
        Number of distances, ``>= 1``: ``m`` runs from 0 to ``context - 1``,
        the distances that occur within a context of that many tokens.
    unrotated_features : int, optional
        Query/key features of the head that carry no rotation (the
        pass-through part of a partially rotary head, DeepSeek's
        ``qk_nope_head_dim``), ``>= 0``. Default 0.

    Returns
    -------
    numpy.ndarray
        ``B(m)``, shape ``(context,)``, float64. Computed by splitting
        ``cos(a + b)`` into two small tables (two matrix products), which agrees
        with summing ``np.cos(np.outer(m, inv_freq))`` to within about
        ``1e-15 * context * len(inv_freq)``.

    Raises
    ------
    TypeError, ValueError
        If ``inv_freq`` is not a non-empty 1-D array of finite numbers ``>= 0``,
        or ``context`` or ``unrotated_features`` is not an integer in range.

    References
    ----------
    .. [1] X. Men, M. Xu, B. Wang, Q. Zhang, H. Lin, X. Han, W. Chen, "Base of
       RoPE Bounds Context Length", NeurIPS 2024 (arXiv:2405.14591), the
       quantity ``B_{m, theta}`` and the criterion ``B_{m, theta} >= 0``.

    Examples
    --------
    One pair turning one radian per token: ``B(m) = cos m``.

    >>> import numpy as np
    >>> bool(np.allclose(men_criterion([1.0], 4), np.cos(np.arange(4))))
    True

    Two more features that are not rotated add 1 at every distance:

    >>> bool(np.allclose(men_criterion([1.0], 4, unrotated_features=2), np.cos(np.arange(4)) + 1))
    True
    """
    theta = _require_frequencies(inv_freq)
    context = require_count(context, "context", minimum=1)
    unrotated_features = require_count(unrotated_features, "unrotated_features", minimum=0)
    return _criterion(theta, 0, context, unrotated_features / 2)


def first_negative_distance(inv_freq: ArrayLike, *, unrotated_features: int = 0, limit: int = 2**18) -> int | None:
    """The first distance ``m`` at which Men et al.'s ``B(m)`` is negative.

    A context of ``L`` tokens satisfies the criterion exactly when the answer
    is ``None`` or at least ``L``.

    Parameters
    ----------
    inv_freq : array_like
        The rotated pairs' frequencies, as for :func:`men_criterion`.
    unrotated_features : int, optional
        Query/key features that carry no rotation, ``>= 0``. Default 0.
    limit : int, optional
        Search the distances ``0 .. limit - 1``, ``>= 1``. Default ``2**18``
        (262,144).

    Returns
    -------
    int or None
        The smallest ``m < limit`` with ``B(m) < 0``, or ``None`` if there is
        none. When the unrotated pairs (and zero frequencies) are at least as
        many as the rotating ones, ``B(m) >= 0`` at every distance and the
        answer is ``None`` without evaluating anything.

    Raises
    ------
    TypeError, ValueError
        As :func:`men_criterion`, and if ``limit`` is not an integer ``>= 1``.

    References
    ----------
    .. [1] X. Men et al., "Base of RoPE Bounds Context Length", NeurIPS 2024
       (arXiv:2405.14591).

    Examples
    --------
    ``cos m`` is first negative at ``m = 2`` (``cos 2 = -0.42``); with two
    unrotated features ``1 + cos m`` never is.

    >>> first_negative_distance([1.0])
    2
    >>> first_negative_distance([1.0], unrotated_features=2) is None
    True
    """
    theta = _require_frequencies(inv_freq)
    unrotated_features = require_count(unrotated_features, "unrotated_features", minimum=0)
    limit = require_count(limit, "limit", minimum=1)
    constant = unrotated_features / 2
    rotating = int(np.count_nonzero(theta))
    if constant + (theta.size - rotating) >= rotating:  # each rotating term is >= -1: B(m) >= 0 everywhere
        return None
    start, block = 0, _FIRST_BLOCK
    while start < limit:
        stop = min(limit, start + block)
        negative = np.flatnonzero(_criterion(theta, start, stop, constant) < 0)
        if negative.size:
            return start + int(negative[0])
        start, block = stop, 2 * block
    return None


def smallest_passing_base(
    context: int,
    rotary_dim: int,
    *,
    unrotated_features: int = 0,
    low: float = 100.0,
    high: float = 1e9,
    points_per_decade: int = 1000,
    rtol: float = 1e-4,
) -> float:
    """The smallest RoPE base for which Men et al.'s criterion holds over a context.

    ``B(m) >= 0`` for every ``m < context``, with the frequencies
    ``base**(-2i / rotary_dim)``. Pass or fail is not monotone in the base,
    so the bases are scanned on a geometric grid from ``low`` up, and the
    first transition from a failing grid base to a passing one is bisected
    (in the logarithm of the base) down to ``rtol``. A passing window
    narrower than the grid spacing below the one found can be missed; a finer
    grid finds it.

    Parameters
    ----------
    context : int
        Context length ``L`` in tokens, ``>= 2``.
    rotary_dim : int
        Rotated width of one head, a positive even integer.
    unrotated_features : int, optional
        Query/key features that carry no rotation, ``>= 0``. Default 0.
    low, high : float, optional
        The bases scanned, ``0 < low < high``; ``low`` must fail. Defaults 100
        and 1e9.
    points_per_decade : int, optional
        Grid bases per factor of 10, ``>= 1``. Default 1000 (steps of 0.23 %).
        Passing windows can be narrower than that near the bound: the
        answer is the smallest base *found*, a few percent above the true
        infimum at worst for a 128-wide head.
    rtol : float, optional
        Relative width of the final bracket, ``> 0``. Default 1e-4.

    Returns
    -------
    float
        A base that passes, within a factor ``1 + rtol`` of one that fails.

    Raises
    ------
    TypeError, ValueError
        If an argument is out of range (the message names it), if ``low``
        already passes (the answer may lie below it), or if no grid base up to
        ``high`` passes.

    References
    ----------
    .. [1] X. Men et al., "Base of RoPE Bounds Context Length", NeurIPS 2024
       (arXiv:2405.14591): Figure 1 plots this bound against the context for
       a 128-wide head.

    Examples
    --------
    A 128-wide head over 1,024 tokens (Men et al.'s Figure 1 puts the bound
    near 4e3):

    >>> f"{smallest_passing_base(1024, 128):.2g}"
    '4.3e+03'
    """
    context = require_count(context, "context", minimum=2)
    rotary_dim = require_even_width(rotary_dim, "rotary_dim")
    unrotated_features = require_count(unrotated_features, "unrotated_features", minimum=0)
    low = require_positive_real(low, "low")
    high = require_positive_real(high, "high")
    if high <= low:
        raise ValueError(f"high must be larger than low ({low!r}), got {high!r}")
    points_per_decade = require_count(points_per_decade, "points_per_decade", minimum=1)
    rtol = require_positive_real(rtol, "rtol")

    def passes(base: float) -> bool:
        theta = rope_frequencies(rotary_dim, base=base)
        return first_negative_distance(theta, unrotated_features=unrotated_features, limit=context) is None

    steps = max(1, math.ceil(math.log10(high / low) * points_per_decade))
    grid = np.geomspace(low, high, steps + 1)
    if passes(float(grid[0])):
        raise ValueError(f"low = {low!r} already passes over {context} tokens: give a smaller low")
    for failing, candidate in zip(grid[:-1], grid[1:], strict=True):
        if passes(float(candidate)):
            lo, hi = math.log(failing), math.log(candidate)
            while hi - lo > math.log1p(rtol):
                middle = 0.5 * (lo + hi)
                if passes(math.exp(middle)):
                    hi = middle
                else:
                    lo = middle
            return math.exp(hi)
    raise ValueError(f"no base up to high = {high!r} passes over {context} tokens: give a larger high")
