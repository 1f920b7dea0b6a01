"""Relative-position buckets of T5 (Raffel et al. 2020).

T5 learns one scalar bias per (bucket, head) and adds it to the attention
logits. The bucket of an offset is exact for small distances and logarithmic
up to ``max_distance``; every larger distance shares the last bucket.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_integer_array, describe_value, require_count

__all__ = ["t5_relative_bucket"]


def t5_relative_bucket(
    relative_position: ArrayLike,
    *,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> np.ndarray:
    """T5's bucket index for each relative position ``key - query``.

    With ``n = query - key`` (how far back the key is):

    * ``bidirectional=True``: half of the buckets are for keys after the query
      (``n < 0``, offset by ``num_buckets // 2``), half for the rest, and ``|n|``
      is bucketed within a half;
    * ``bidirectional=False``: keys after the query all fall in bucket 0.

    Within the (half) range of ``B`` buckets, distances ``0 .. B/2 - 1`` get a
    bucket each; larger distances get
    ``B/2 + floor(ln(n / (B/2)) / ln(max_distance / (B/2)) * (B - B/2))``,
    capped at ``B - 1``. The logarithm is evaluated in float32, as in the
    original Mesh TensorFlow code, so every bucket matches it.

    Parameters
    ----------
    relative_position : int or array_like of int
        ``key_position - query_position``, any shape.
    bidirectional : bool, optional
        Encoder-style (True, default) or decoder-style (False) bucketing.
    num_buckets : int, optional
        Total number of buckets, default 32. Must leave at least one exact
        bucket: ``>= 2`` (``>= 4`` when bidirectional).
    max_distance : int, optional
        Distance from which on every offset is in the last bucket, default 128.
        Because the logarithmic formula rounds down, the last bucket already
        begins somewhat earlier (at 91 when bidirectional and 113 when not, for
        the defaults). Must exceed the number of exact buckets.

    Returns
    -------
    numpy.ndarray
        Bucket indices in ``[0, num_buckets)``, dtype int64, same shape as
        ``relative_position``.

    Raises
    ------
    TypeError, ValueError
        For non-integer offsets, ``num_buckets < 1`` or too few buckets for
        the chosen mode, ``max_distance`` not above the exact range, or a
        non-bool ``bidirectional``.

    References
    ----------
    .. [1] C. Raffel et al., "Exploring the Limits of Transfer Learning with a
       Unified Text-to-Text Transformer", JMLR 21(140), 2020, section 2.1; the
       function ``_relative_position_bucket`` of Mesh TensorFlow.

    Examples
    --------
    >>> import numpy as np
    >>> t5_relative_bucket(np.array([0, -1, -7, -8, -16, -64, -128, -1000]))
    array([ 0,  1,  7,  8, 10, 14, 15, 15])
    >>> t5_relative_bucket(np.array([1, 2, 20]))
    array([17, 18, 26])
    >>> t5_relative_bucket(np.array([3, -3]), bidirectional=False)
    array([0, 3])

    Where the last bucket really begins, for keys before the query:

    >>> back = np.arange(200)
    >>> int(back[t5_relative_bucket(-back) == 15].min())
    91
    >>> int(back[t5_relative_bucket(-back, bidirectional=False) == 31].min())
    113
    """
    offsets = as_integer_array(relative_position, "relative_position")
    if not isinstance(bidirectional, (bool, np.bool_)):
        raise TypeError(f"bidirectional must be True or False, got {describe_value(bidirectional)}")
    num_buckets = require_count(num_buckets, "num_buckets", minimum=1)
    needed = 4 if bidirectional else 2
    if num_buckets < needed:
        mode = "bidirectional" if bidirectional else "unidirectional"
        raise ValueError(
            f"num_buckets must be >= {needed} for {mode} bucketing (at least one exact "
            f"bucket per direction), got {num_buckets}"
        )
    max_distance = require_count(max_distance, "max_distance", minimum=1)

    n = -offsets
    if bidirectional:
        buckets = num_buckets // 2
        result = np.where(n < 0, buckets, 0).astype(np.int64)
        n = np.abs(n)
    else:
        buckets = num_buckets
        result = np.zeros(n.shape, dtype=np.int64)
        n = np.maximum(n, 0)
    max_exact = buckets // 2
    if max_distance <= max_exact:
        raise ValueError(f"max_distance must be greater than the {max_exact} exact buckets, got {max_distance}")

    is_small = n < max_exact
    # float32 throughout, as tf.log / torch.log on float tensors in the originals.
    ratio = np.maximum(n, max_exact).astype(np.float32) / np.float32(max_exact)
    log_span = np.float32(math.log(max_distance / max_exact))
    scaled = np.log(ratio) / log_span * np.float32(buckets - max_exact)
    if_large = max_exact + scaled.astype(np.int64)  # truncation, like tf.to_int32
    if_large = np.minimum(if_large, buckets - 1)
    return result + np.where(is_small, n, if_large)
