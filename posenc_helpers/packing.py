"""Packed sequences: several documents in one row, positions restarting at every document.

Training and serving stacks pack short documents into one row to avoid padding.
Then each token's position must count from the start of *its* document, and a
token may attend only to earlier tokens of the same document; otherwise RoPE
sees offsets across documents and attention leaks between them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validation import require_lengths

__all__ = ["packed_attention_mask", "packed_position_ids"]


def packed_position_ids(document_lengths: Any) -> np.ndarray:
    """Position ids of a packed row: ``0 .. n_j - 1`` for each document ``j`` in turn.

    Parameters
    ----------
    document_lengths : sequence of int
        The length of each document in the row, in order, each ``>= 1``.

    Returns
    -------
    numpy.ndarray
        Shape ``(sum(document_lengths),)``, int64.

    Raises
    ------
    TypeError, ValueError
        If ``document_lengths`` is not a non-empty sequence of integers ``>= 1``.

    References
    ----------
    .. [1] Hugging Face, transformers, ``modeling_flash_attention_utils.py``
       (``_is_packed_sequence``: a batch of one whose ``position_ids`` restart
       is read as packed documents, pull request #40002); pull request #44911
       fixes Qwen3.5, whose 3-D M-RoPE ``position_ids`` were taken for packed
       documents.

    Examples
    --------
    >>> packed_position_ids([3, 2, 4]).tolist()
    [0, 1, 2, 0, 1, 0, 1, 2, 3]
    """
    lengths = require_lengths(document_lengths, "document_lengths", minimum=1)
    return np.concatenate([np.arange(n, dtype=np.int64) for n in lengths])


def packed_attention_mask(document_lengths: Any) -> np.ndarray:
    """The causal mask of a packed row: token ``i`` sees ``j <= i`` of the same document only.

    Parameters
    ----------
    document_lengths : sequence of int
        The length of each document in the row, in order, each ``>= 1``.

    Returns
    -------
    numpy.ndarray
        Boolean, shape ``(n, n)`` with ``n = sum(document_lengths)``; True where
        attention is allowed (query row, key column).

    Raises
    ------
    TypeError, ValueError
        If ``document_lengths`` is not a non-empty sequence of integers ``>= 1``.

    Examples
    --------
    >>> packed_attention_mask([2, 1]).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [0, 0, 1]]
    """
    lengths = require_lengths(document_lengths, "document_lengths", minimum=1)
    document = np.repeat(np.arange(len(lengths)), lengths)
    n = document.size
    causal = np.tril(np.ones((n, n), dtype=bool))
    return causal & (document[:, None] == document[None, :])
