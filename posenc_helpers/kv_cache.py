"""RoPE and the KV cache: re-rotating cached keys for a position shift, and attention-sink caches.

A key is cached *after* it was rotated by its position. If the positions of
cached tokens change (llama.cpp's context shift drops old tokens and moves the
rest forward; StreamingLLM keeps a few "attention sink" tokens and a recent
window and numbers them by their place in the cache), the cached keys must be
rotated again. Rotations compose, ``R(a) R(b) = R(a + b)``, so a key rotated at
``p`` becomes the key rotated at ``p + delta`` by one more rotation by
``delta``, without the unrotated key: :func:`rerotate_keys`. Values carry no
rotation and never change.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_head_array, as_positions, require_count
from .rope import apply_rope

__all__ = ["rerotate_keys", "sink_cache_positions"]


def rerotate_keys(
    keys: ArrayLike,
    shift: float | ArrayLike,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    inv_freq: ArrayLike | None = None,
    rotary_dim: int | None = None,
) -> np.ndarray:
    """Move cached, already rotated keys by ``shift`` positions: ``R(p + shift) k = R(shift) R(p) k``.

    Parameters
    ----------
    keys : array_like
        Cached keys, rotated at their old positions, shape ``(..., seq, head_dim)``.
    shift : float or array_like
        The change of position ``delta`` (negative to move keys towards 0): one
        number for every key, or a 1-D array with one per row of the sequence axis.
    base, layout, inv_freq, rotary_dim
        As in :func:`~posenc_helpers.apply_rope`; they must be those the keys
        were rotated with.

    Returns
    -------
    numpy.ndarray
        The keys as if rotated at ``p + shift``, same shape as ``keys``.

    Raises
    ------
    TypeError, ValueError
        If ``keys`` is not a real array of shape ``(..., seq, head_dim)`` with
        ``head_dim`` even, ``shift`` is not finite or has the wrong length, or
        an argument of :func:`~posenc_helpers.apply_rope` is invalid.

    References
    ----------
    .. [1] G. Xiao, Y. Tian, B. Chen, S. Han, M. Lewis, "Efficient Streaming
       Language Models with Attention Sinks", ICLR 2024 (arXiv:2309.17453),
       section 3.2 (positions inside the cache).
    .. [2] ggml-org, llama.cpp, ``llama_memory_seq_add`` / context shift
       (cached keys rotated by the position delta with the RoPE kernel).

    Examples
    --------
    >>> import numpy as np
    >>> from posenc_helpers import apply_rope
    >>> k = np.random.default_rng(0).normal(size=(3, 8))
    >>> cached = apply_rope(k, [10.0, 11.0, 12.0])
    >>> bool(np.allclose(rerotate_keys(cached, -10.0), apply_rope(k, [0.0, 1.0, 2.0])))
    True
    """
    array = as_head_array(keys)
    seq = array.shape[-2]
    if np.ndim(shift) == 0 and not isinstance(shift, (str, bytes)):
        delta = as_positions([shift], "shift")
        delta = np.full(seq, delta[0])
    else:
        delta = as_positions(shift, "shift")
        if delta.shape[0] != seq:
            raise ValueError(
                f"shift must be one number or one per row of keys' sequence axis (keys.shape[-2] = {seq}), "
                f"got {delta.shape[0]}"
            )
    return apply_rope(array, delta, base=base, layout=layout, inv_freq=inv_freq, rotary_dim=rotary_dim)


def sink_cache_positions(n_tokens: Any, *, n_sinks: Any, window: Any) -> tuple[np.ndarray, np.ndarray]:
    """StreamingLLM's cache after ``n_tokens``: which tokens it keeps and the positions it gives them.

    The first ``n_sinks`` tokens (the attention sinks) and the last ``window``
    tokens are kept; positions are assigned by place in the cache,
    ``0 .. kept - 1``, not by place in the text.

    Parameters
    ----------
    n_tokens : int
        Tokens seen so far, ``>= 0``.
    n_sinks : int
        Sink tokens kept at the start, ``>= 0``.
    window : int
        Most recent tokens kept, ``>= 1``.

    Returns
    -------
    kept : numpy.ndarray
        Indices (in the text, from 0) of the cached tokens, ascending, int64.
    positions : numpy.ndarray
        The position each cached token has inside the cache, int64.

    Raises
    ------
    TypeError, ValueError
        If a count is not an integer or out of range.

    References
    ----------
    .. [1] G. Xiao et al., "Efficient Streaming Language Models with Attention
       Sinks", ICLR 2024 (arXiv:2309.17453), sections 3.2 and 4.

    Examples
    --------
    >>> kept, positions = sink_cache_positions(10, n_sinks=2, window=3)
    >>> kept.tolist(), positions.tolist()
    ([0, 1, 7, 8, 9], [0, 1, 2, 3, 4])
    """
    n_tokens = require_count(n_tokens, "n_tokens")
    n_sinks = require_count(n_sinks, "n_sinks")
    window = require_count(window, "window", minimum=1)
    if n_tokens <= n_sinks + window:
        kept: np.ndarray = np.arange(n_tokens, dtype=np.int64)
    else:
        kept = np.concatenate([np.arange(n_sinks), np.arange(n_tokens - window, n_tokens)]).astype(np.int64)
    return kept, np.arange(kept.size, dtype=np.int64)
