"""Softmax and scaled dot-product attention in plain numpy."""

from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_real_array, describe_value

__all__ = ["softmax", "scaled_dot_product_attention"]


def softmax(x: ArrayLike, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along ``axis``.

    The maximum of each slice is subtracted before exponentiating, which
    changes nothing mathematically (softmax is invariant to adding a constant
    to a slice) but keeps ``exp`` from overflowing. Entries equal to ``-inf``
    (masked positions) get weight exactly 0. A slice that is entirely
    ``-inf`` has no softmax and comes back as NaN.

    Parameters
    ----------
    x : array_like
        Real logits, any shape with at least one dimension; ``-inf`` allowed.
    axis : int, optional
        Axis to normalise over. Default -1.

    Returns
    -------
    numpy.ndarray
        Same shape as ``x``, float64, non-negative, summing to 1 along ``axis``.

    Raises
    ------
    TypeError, ValueError
        If ``x`` is not a real array, holds NaN or ``+inf``, is 0-d, or
        ``axis`` is not a valid axis.

    References
    ----------
    .. [1] I. Goodfellow, Y. Bengio, A. Courville, "Deep Learning", MIT Press,
       2016, section 4.1 (overflow and the shifted softmax).

    Examples
    --------
    >>> import numpy as np
    >>> softmax([0.0, 0.0])
    array([0.5, 0.5])
    >>> softmax([1000.0, 1000.0, -np.inf])
    array([0.5, 0.5, 0. ])
    """
    logits = as_real_array(x, "x").astype(np.float64)
    if logits.ndim == 0:
        raise ValueError("x must have at least one dimension, got a 0-d array")
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"axis must be an integer, got {describe_value(axis)}")
    if not -logits.ndim <= axis < logits.ndim:
        raise ValueError(
            f"axis must be in [{-logits.ndim}, {logits.ndim - 1}] for an array of {logits.ndim} dimensions, got {axis}"
        )
    if np.isnan(logits).any() or np.isposinf(logits).any():
        raise ValueError("x must not contain NaN or +inf (use -inf to mask an entry)")
    if logits.size == 0:
        return logits
    peak = np.max(logits, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    weights = np.exp(logits - peak)
    with np.errstate(invalid="ignore"):
        return weights / weights.sum(axis=axis, keepdims=True)


def scaled_dot_product_attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    *,
    bias: ArrayLike | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Scaled dot-product attention ``softmax(q k^T / sqrt(d) + bias) v``.

    Parameters
    ----------
    q : array_like
        Queries, shape ``(..., n_queries, d)``.
    k : array_like
        Keys, shape ``(..., n_keys, d)``.
    v : array_like
        Values, shape ``(..., n_keys, d_v)``.
    bias : array_like, optional
        Added to the logits before the softmax; must broadcast against
        the logits ``(..., n_queries, n_keys)`` (a per-head bias of shape
        ``(heads, n_queries, n_keys)`` adds a heads axis). Use ``-inf`` to mask (a causal mask, or
        :func:`~posenc_helpers.alibi_bias`).

    Returns
    -------
    output : numpy.ndarray
        Shape ``(..., n_queries, d_v)``.
    weights : numpy.ndarray
        Shape ``(..., n_queries, n_keys)``; each row sums to 1.

    Raises
    ------
    TypeError, ValueError
        If an input is not a real array of at least 2 dimensions, the feature
        widths of ``q`` and ``k`` differ, ``k`` and ``v`` have different
        numbers of rows, or ``bias`` does not broadcast to the logits.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017,
       equation (1).

    Examples
    --------
    Two keys with equal scores share the attention equally:

    >>> import numpy as np
    >>> q = np.array([[1.0, 0.0]])
    >>> k = np.array([[1.0, 0.0], [1.0, 0.0]])
    >>> v = np.array([[2.0], [4.0]])
    >>> out, w = scaled_dot_product_attention(q, k, v)
    >>> out, w
    (array([[3.]]), array([[0.5, 0.5]]))
    """
    arrays = {}
    for name, value in (("q", q), ("k", k), ("v", v)):
        array = as_real_array(value, name).astype(np.float64)
        if array.ndim < 2:
            raise ValueError(
                f"{name} must have shape (..., rows, features) with at least 2 dimensions, got shape {array.shape}"
            )
        arrays[name] = array
    q_, k_, v_ = arrays["q"], arrays["k"], arrays["v"]
    if q_.shape[-1] != k_.shape[-1]:
        raise ValueError(f"q and k must have the same feature width (last axis), got {q_.shape[-1]} and {k_.shape[-1]}")
    if k_.shape[-2] != v_.shape[-2]:
        raise ValueError(
            f"k and v must have the same number of rows (one value per key), got {k_.shape[-2]} and {v_.shape[-2]}"
        )
    width = q_.shape[-1]
    logits = q_ @ np.swapaxes(k_, -1, -2) / np.sqrt(width) if width else q_ @ np.swapaxes(k_, -1, -2)
    if bias is not None:
        bias_ = as_real_array(bias, "bias").astype(np.float64)
        try:
            logits = logits + bias_
        except ValueError:
            raise ValueError(f"bias must broadcast to the logits' shape {logits.shape}, got {bias_.shape}") from None
    weights = softmax(logits, axis=-1)
    return weights @ v_, weights
