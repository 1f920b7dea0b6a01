"""Packed sequences: several documents in one row, positions restarting at every document.

Training and serving stacks pack short documents into one row to avoid padding.
A token may then attend only to earlier tokens of the same document. Where that
boundary comes from depends on who builds the attention mask, and there are
three cases:

- a stack that builds its own mask: a block-diagonal causal mask
  (:func:`packed_attention_mask`) carries the boundaries itself, and a plain
  causal mask carries none, so the documents see each other; the position ids
  (:func:`packed_position_ids`) are not read for the mask at all;
- Hugging Face's mask-building paths (``sdpa``, ``eager``, ``flex_attention``)
  with no attention mask passed and no cache: ``create_causal_mask`` reads the
  boundaries *from* the position ids, a new document wherever an id does not
  step by exactly +1 from the one before, in every row of any batch
  (:func:`~posenc_helpers.packing_paths.mask_path_document_ids`,
  :func:`~posenc_helpers.packing_paths.mask_path_attention_mask`);
- Hugging Face's FlashAttention path with no attention mask: only a batch of one
  row is read as packed, a document starting at every id equal to the row's
  smallest id (0 for ``DataCollatorWithFlattening``'s default ids)
  (:func:`flash_varlen_is_packed`, :func:`flash_varlen_cu_seqlens`,
  :func:`~posenc_helpers.packing_paths.flash_path_document_ids`,
  :func:`~posenc_helpers.packing_paths.flash_path_attention_mask`).

The two transformers rules agree on ids that restart at 0 and disagree on ids
that jump (``[0, 1, 2, 10, 11]``: two documents on the mask paths, one on the
FlashAttention path) and on a row that starts inside a document
(``[5, 6, 7, 0, 1]``: the FlashAttention path's first segment starts at index
3, so no segment covers the first three tokens).

Sources read (Hugging Face transformers, https://github.com/huggingface/transformers):
``src/transformers/masking_utils.py`` at commit
``00c4411cbe15d4c56d54d3b56d4d171e9c289dac`` and in release v5.24.0
(``find_packed_sequence_indices``, ``_preprocess_mask_arguments``,
``create_causal_mask``, ``packed_sequence_mask_function``, ``and_masks``), and
``src/transformers/modeling_flash_attention_utils.py`` in release v5.24.0
(``_flash_attention_forward``, ``_is_packed_sequence``,
``prepare_fa_kwargs_from_position_ids``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validation import as_integer_array, require_count, require_lengths

__all__ = [
    "flash_varlen_cu_seqlens",
    "flash_varlen_is_packed",
    "packed_attention_mask",
    "packed_position_ids",
    "varlen_attention_mask",
]


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


def _as_position_ids(position_ids: Any, *, min_ndim: int) -> np.ndarray:
    """``position_ids`` as an int64 array of at least ``min_ndim`` dimensions and at least one entry."""
    ids = as_integer_array(position_ids, "position_ids")
    if ids.ndim < min_ndim:
        raise ValueError(
            f"position_ids must have at least {min_ndim} dimension(s)"
            + (" (batch, sequence)" if min_ndim == 2 else "")
            + f", got shape {ids.shape}"
        )
    if ids.size == 0:
        raise ValueError("position_ids must hold at least one position, got an empty array")
    return ids


def flash_varlen_is_packed(position_ids: Any, batch_size: Any) -> bool:
    """Whether Hugging Face's FlashAttention path reads ``position_ids`` as packed documents.

    transformers' ``_is_packed_sequence`` compares the ids with one run
    ``min, min + 1, ...`` as long as ``position_ids.shape[1]`` and calls the
    row packed when they differ anywhere, but only for a batch of one. Then the
    document boundaries are taken from the ids (see
    :func:`flash_varlen_cu_seqlens`); otherwise the whole row is one causal
    sequence. Two consequences: ids that run on across documents (``0 .. n-1``)
    are *not* packed, so the documents see each other; and 3-row M-RoPE ids of
    shape ``(3, 1, n)`` (``shape[1]`` is then the batch) are read as packed.

    Parameters
    ----------
    position_ids : array_like of int
        The ids as passed to the attention, shape ``(batch, n)`` or, for
        M-RoPE, ``(3, batch, n)``.
    batch_size : int
        The batch size of the queries, ``>= 1``.

    Returns
    -------
    bool

    Raises
    ------
    TypeError
        If ``position_ids`` does not hold integers, or ``batch_size`` is not an integer.
    ValueError
        If ``position_ids`` has fewer than two dimensions or no entry, or ``batch_size < 1``.

    References
    ----------
    .. [1] Hugging Face, transformers, ``src/transformers/modeling_flash_attention_utils.py``,
       release v5.24.0 (``_is_packed_sequence``, which also returns False for one id,
       a decoding step); transformers pull request #44911 and issue #44643
       (Qwen3.5's 3-D M-RoPE ids taken for packed documents).

    Examples
    --------
    >>> flash_varlen_is_packed([[0, 1, 2, 0, 1]], batch_size=1)
    True
    >>> flash_varlen_is_packed([[0, 1, 2, 3, 4]], batch_size=1)     # running ids: one sequence
    False
    >>> flash_varlen_is_packed([[[0, 1, 2]], [[0, 1, 2]], [[0, 1, 2]]], batch_size=1)   # M-RoPE, text only
    True
    """
    ids = _as_position_ids(position_ids, min_ndim=2)
    batch = require_count(batch_size, "batch_size", minimum=1)
    one_run = np.arange(ids.shape[1]) + ids.min()
    return bool(batch == 1 and np.abs(one_run - ids).sum() != 0)


def flash_varlen_cu_seqlens(position_ids: Any) -> np.ndarray:
    """The cumulative sequence lengths Hugging Face derives from ``position_ids`` for FlashAttention.

    transformers' ``prepare_fa_kwargs_from_position_ids`` (called by
    ``_prepare_from_posids``) flattens the ids, takes the index of every id equal
    to their smallest id as the start of a sequence, and appends the number of
    ids: ``cu_seqlens``, whose consecutive differences are the documents'
    lengths. ``flash_attn_varlen_func`` then attends causally inside each
    ``[cu[j], cu[j + 1])`` only. Before transformers pull request #47525 (July
    2026) the starts were the ids equal to 0; the two agree on every row that
    holds a 0, as ``DataCollatorWithFlattening``'s default ids do. Nothing makes
    the first entry 0: a row that starts inside a document (``[5, 6, 7, 0, 1]``)
    gives ``[3, 5]``, and no segment covers its first three tokens.

    Parameters
    ----------
    position_ids : array_like of int
        Any shape with at least one entry; it is flattened as transformers does.

    Returns
    -------
    numpy.ndarray
        int64, the indices of the flattened ids equal to their smallest id,
        followed by their count.

    Raises
    ------
    TypeError
        If ``position_ids`` does not hold integers.
    ValueError
        If ``position_ids`` is empty.

    References
    ----------
    .. [1] Hugging Face, transformers, ``src/transformers/modeling_flash_attention_utils.py``,
       release v5.24.0 (``prepare_fa_kwargs_from_position_ids``, ``_prepare_from_posids``);
       pull request #47525 (starts at the smallest id instead of 0).

    Examples
    --------
    >>> flash_varlen_cu_seqlens([[0, 1, 2, 0, 1, 0, 1, 2, 3]]).tolist()
    [0, 3, 5, 9]
    >>> flash_varlen_cu_seqlens([[5, 6, 7, 0, 1]]).tolist()        # a row that starts mid-document
    [3, 5]
    >>> flash_varlen_cu_seqlens([[[0, 1, 2]], [[0, 1, 2]], [[0, 1, 2]]]).tolist()   # 9 ids for 3 tokens
    [0, 3, 6, 9]
    """
    flat = _as_position_ids(position_ids, min_ndim=0).reshape(-1)
    return np.concatenate([np.flatnonzero(flat == flat.min()), [flat.size]]).astype(np.int64)


def varlen_attention_mask(cu_seqlens: Any) -> np.ndarray:
    """The mask that causal ``flash_attn_varlen_func`` applies for given cumulative sequence lengths.

    Token ``i`` sees token ``j`` when ``j <= i`` and both lie in the same
    segment ``[cu[s], cu[s + 1])``: the block-diagonal causal mask of
    :func:`packed_attention_mask` with lengths ``diff(cu_seqlens)``.

    Parameters
    ----------
    cu_seqlens : array_like of int
        Strictly increasing, starting at 0, at least two entries.

    Returns
    -------
    numpy.ndarray
        Boolean, shape ``(cu[-1], cu[-1])``; True where attention is allowed
        (query row, key column).

    Raises
    ------
    TypeError
        If ``cu_seqlens`` does not hold integers.
    ValueError
        If it is not one-dimensional, has fewer than two entries, does not start
        at 0 or is not strictly increasing.

    Examples
    --------
    >>> varlen_attention_mask([0, 2, 3]).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [0, 0, 1]]
    """
    cu = as_integer_array(cu_seqlens, "cu_seqlens")
    if cu.ndim != 1 or cu.size < 2:
        raise ValueError(f"cu_seqlens must be one-dimensional with at least two entries, got shape {cu.shape}")
    if cu[0] != 0:
        raise ValueError(f"cu_seqlens must start at 0, got {int(cu[0])}")
    if np.any(np.diff(cu) <= 0):
        raise ValueError("cu_seqlens must be strictly increasing (every segment at least one token long)")
    return packed_attention_mask(np.diff(cu).tolist())
