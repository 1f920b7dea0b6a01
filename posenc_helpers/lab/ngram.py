"""Count-based byte n-gram models: the baselines that calibrate the lab's transformers.

A transformer that predicts bytes no better than counting which byte followed the
last two or three bytes in the training text has learned little that needs
attention. :func:`ngram_byte_losses` fits interpolated absolute-discounting
n-gram models on the training text and scores every held-out byte, so the lab can
draw unigram to 6-gram lines beside its length curves, scored on exactly the bytes
the transformers are scored on.

For a context ``h`` of ``n - 1`` bytes, ``h'`` the same context without its oldest
byte, ``c`` counts in the training text and ``D`` the discount,

.. math::

    P_n(w \\mid h) = \\frac{\\max(c(h w) - D, 0)}{c(h)}
                    + \\frac{D \\, N_{1+}(h\\,\\cdot)}{c(h)} \\, P_{n-1}(w \\mid h'),

where ``N_{1+}(h .)`` is the number of distinct bytes seen after ``h``; a context
never seen in training falls back to ``P_{n-1}`` whole, and ``P_0`` is uniform
over the 256 byte values. Near the start of the held-out text, where fewer than
``n - 1`` bytes precede a byte, the longest available context is used.
"""

from __future__ import annotations

import numpy as np

from .._validation import require_count, require_positive_real

__all__ = ["ngram_byte_losses"]

VOCAB = 256


def _context_keys(text: np.ndarray, order: int) -> np.ndarray:
    """For each position ``t >= order - 1``: the ``order - 1`` bytes before it as one integer."""
    keys = np.zeros(text.size - order + 1, dtype=np.int64)
    for back in range(1, order):
        keys = keys * VOCAB + text[order - 1 - back : text.size - back]
    return keys


def _counts(sorted_keys: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """How often each query occurs in ``sorted_keys``."""
    return np.searchsorted(sorted_keys, queries, side="right") - np.searchsorted(sorted_keys, queries, side="left")


def ngram_byte_losses(train: np.ndarray, held_out: np.ndarray, order: int, *, discount: float = 0.75) -> np.ndarray:
    """Loss ``-ln P(byte | preceding bytes)`` (nats) of every held-out byte under an n-gram model.

    Parameters
    ----------
    train, held_out : numpy.ndarray
        Byte texts (integer arrays with values in 0..255).
    order : int
        ``n >= 1``: 1 is the unigram model (no context), 4 the 4-gram (three bytes).
    discount : float, optional
        The absolute discount ``D`` in ``(0, 1]``, default 0.75.

    Returns
    -------
    numpy.ndarray
        float64, one loss per byte of ``held_out``.

    References
    ----------
    .. [1] H. Ney, U. Essen, R. Kneser, "On structuring probabilistic dependences in
       stochastic language modelling", Computer Speech & Language 8(1), 1994
       (absolute discounting with interpolation).

    Examples
    --------
    Training text ``abab``: the bigram counts are ab twice, ba once. After ``a``
    the model gives ``b`` probability (2 - 0.75)/2 + 0.75·1/2·P_1(b), with the
    unigram P_1(b) = (2 - 0.75)/4 + 0.75·2/4·1/256:

    >>> import numpy as np
    >>> text = np.frombuffer(b"abab", dtype=np.uint8)
    >>> losses = ngram_byte_losses(text, np.frombuffer(b"ab", dtype=np.uint8), order=2)
    >>> unigram_b = 1.25 / 4 + 0.375 / 256
    >>> bool(np.isclose(losses[1], -np.log(1.25 / 2 + 0.375 * unigram_b)))
    True
    """
    order = require_count(order, "order", minimum=1)
    discount = require_positive_real(discount, "discount")
    if discount > 1:
        raise ValueError(f"discount must be in (0, 1], got {discount}")
    texts = []
    for name, text in (("train", train), ("held_out", held_out)):
        array = np.asarray(text)
        if array.ndim != 1 or array.size == 0 or not np.issubdtype(array.dtype, np.integer):
            raise TypeError(f"{name} must be a non-empty 1-D array of bytes (integers 0..255)")
        if array.min() < 0 or array.max() >= VOCAB:
            raise ValueError(f"{name} must hold byte values 0..255")
        texts.append(array.astype(np.int64))
    train, held_out = texts
    if order > train.size:
        raise ValueError(f"order must be at most the training text's {train.size} bytes, got {order}")

    # P_0: uniform. Then each order in turn, interpolated with the one below.
    probability = np.full(held_out.size, 1.0 / VOCAB)
    for n in range(1, order + 1):
        context_train = _context_keys(train, n)  # contexts of training positions n-1 ..
        pair_train = np.sort(context_train * VOCAB + train[n - 1 :])
        context_sorted = np.sort(context_train)
        distinct_pairs = np.unique(pair_train)
        distinct_context_of_pairs = np.sort(distinct_pairs // VOCAB)
        # Held-out positions with at least n - 1 bytes before them use this order.
        usable = np.arange(n - 1, held_out.size)
        context = _context_keys(held_out, n)
        pair = context * VOCAB + held_out[n - 1 :]
        c_h = _counts(context_sorted, context).astype(float)
        c_hw = _counts(pair_train, pair).astype(float)
        followers = _counts(distinct_context_of_pairs, context).astype(float)
        seen = c_h > 0
        lower = probability[usable]
        mixed = lower.copy()
        mixed[seen] = (np.maximum(c_hw[seen] - discount, 0.0) + discount * followers[seen] * lower[seen]) / c_h[seen]
        probability[usable] = mixed
    return -np.log(probability)
