"""Which tokens of a packed row share a document, as each of transformers' attention paths reads it.

:mod:`posenc_helpers.packing` gives the rules; this module applies them to whole rows
and batches of position ids, so that the two readings can be put side by side:
:func:`mask_path_document_ids` and :func:`mask_path_attention_mask` for the
mask-building paths (``sdpa``, ``eager``, ``flex_attention``: a new document wherever
an id does not step by exactly +1, with no attention mask and no cache passed),
:func:`flash_path_document_ids` and :func:`flash_path_attention_mask` for the
FlashAttention path (a batch of one row, documents from
:func:`~posenc_helpers.packing.flash_varlen_cu_seqlens`).

Sources read: see :mod:`posenc_helpers.packing`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validation import as_integer_array
from .packing import flash_varlen_cu_seqlens, flash_varlen_is_packed

__all__ = ["flash_path_attention_mask", "flash_path_document_ids", "mask_path_attention_mask", "mask_path_document_ids"]


def _as_rows(position_ids: Any) -> np.ndarray:
    """``position_ids`` as int64 rows ``(batch, n)``: one row (1-D) or a batch of rows (2-D), none empty."""
    ids = as_integer_array(position_ids, "position_ids")
    if ids.ndim not in (1, 2):
        raise ValueError(
            f"position_ids must be one row (1-D) or a batch of rows (batch, sequence), got shape {ids.shape}"
        )
    if ids.size == 0:
        raise ValueError("position_ids must hold at least one position, got an empty array")
    return ids.reshape(-1, ids.shape[-1])


def _causal_within_documents(documents: np.ndarray) -> np.ndarray:
    """Boolean ``(batch, n, n)``: key ``j <= i`` in query ``i``'s document; a token of document -1 sees nothing."""
    n = documents.shape[-1]
    same = documents[:, :, None] == documents[:, None, :]
    return np.tri(n, dtype=bool) & same & (documents[:, :, None] >= 0)


def mask_path_document_ids(position_ids: Any) -> np.ndarray:
    """The document of every token as Hugging Face's mask-building paths read it from ``position_ids``.

    transformers' ``find_packed_sequence_indices`` prepends ``ids[0] - 1`` to each
    row, takes the differences and counts, from the left, the steps that are not
    exactly +1:

    .. math:: \\mathrm{doc}_i = \\#\\{\\, 1 \\le j \\le i : t_j - t_{j-1} \\ne 1 \\,\\}

    so the first token is in document 0 whatever its id, and a document starts
    wherever an id restarts, repeats or jumps. ``create_causal_mask`` ANDs
    "same document" into the causal mask (:func:`mask_path_attention_mask`), in
    every row of any batch. transformers returns ``None`` when every row is one
    document, which means the same as all zeros.

    Parameters
    ----------
    position_ids : array_like of int
        One row, shape ``(n,)``, or a batch of rows, shape ``(batch, n)``.

    Returns
    -------
    numpy.ndarray
        int64, the shape of ``position_ids``: documents numbered 0, 1, ... in each row.

    Raises
    ------
    TypeError
        If ``position_ids`` does not hold integers.
    ValueError
        If ``position_ids`` is not 1-D or 2-D, or is empty.

    See Also
    --------
    flash_path_document_ids : the FlashAttention path's reading of the same ids.

    References
    ----------
    .. [1] Hugging Face, transformers, ``src/transformers/masking_utils.py`` at commit
       00c4411cbe15d4c56d54d3b56d4d171e9c289dac and in release v5.24.0
       (``find_packed_sequence_indices``, ``_preprocess_mask_arguments``).

    Examples
    --------
    >>> mask_path_document_ids([0, 1, 2, 0, 1]).tolist()
    [0, 0, 0, 1, 1]
    >>> mask_path_document_ids([0, 1, 2, 10, 11]).tolist()     # a jump starts a document
    [0, 0, 0, 1, 1]
    >>> mask_path_document_ids([[5, 6, 7, 0, 1], [0, 1, 2, 3, 4]]).tolist()
    [[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]]
    """
    rows = _as_rows(position_ids)
    steps = np.diff(rows, axis=-1, prepend=rows[:, :1] - 1)
    documents = np.cumsum(steps != 1, axis=-1).astype(np.int64)
    return documents.reshape(np.shape(position_ids))


def mask_path_attention_mask(
    position_ids: Any, *, attention_mask_passed: bool = False, cache_passed: bool = False
) -> np.ndarray:
    """The causal mask Hugging Face's ``sdpa``, ``eager`` and ``flex_attention`` paths build for packed rows.

    ``create_causal_mask`` reads packed documents from the position ids
    (:func:`mask_path_document_ids`) only when the model passes it
    ``position_ids``, no 2-D ``attention_mask`` and no cache
    (``_preprocess_mask_arguments``); then token ``i`` sees token ``j`` when
    ``j <= i`` and both are in the same document (``and_masks`` of the causal
    mask and ``packed_sequence_mask_function``). With a mask or a cache passed
    the ids are not read and, without padding, the mask is plain causal. A model
    called with ``use_cache`` left at its config's ``True`` creates a
    ``DynamicCache`` before the mask, and so gets the plain causal mask;
    ``Trainer`` sets ``config.use_cache`` from ``TrainingArguments.use_cache``,
    ``False`` by default. The FlashAttention paths ignore this mask (see
    :func:`flash_path_attention_mask`).

    Parameters
    ----------
    position_ids : array_like of int
        One row, shape ``(n,)``, or a batch of rows, shape ``(batch, n)``.
    attention_mask_passed : bool, optional
        Whether the model was given a 2-D attention mask (here without padding).
    cache_passed : bool, optional
        Whether a cache object reaches ``create_causal_mask``.

    Returns
    -------
    numpy.ndarray
        Boolean, ``(n, n)`` for one row or ``(batch, n, n)``; True where
        attention is allowed (query row, key column).

    Raises
    ------
    TypeError
        If ``position_ids`` does not hold integers, or a flag is not a bool.
    ValueError
        If ``position_ids`` is not 1-D or 2-D, or is empty.

    References
    ----------
    .. [1] Hugging Face, transformers, ``src/transformers/masking_utils.py`` at commit
       00c4411cbe15d4c56d54d3b56d4d171e9c289dac and in release v5.24.0
       (``_preprocess_mask_arguments``, ``create_causal_mask``,
       ``packed_sequence_mask_function``, ``and_masks``); release v5.24.0,
       ``utils/generic.py`` (``merge_with_config_defaults``) and ``trainer.py``.

    Examples
    --------
    >>> mask_path_attention_mask([0, 1, 5]).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [0, 0, 1]]
    >>> mask_path_attention_mask([0, 1, 5], cache_passed=True).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    for name, flag in (("attention_mask_passed", attention_mask_passed), ("cache_passed", cache_passed)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{name} must be a bool, got {type(flag).__name__}")
    rows = _as_rows(position_ids)
    documents = mask_path_document_ids(rows)
    if attention_mask_passed or cache_passed:
        documents = np.zeros_like(documents)
    mask = _causal_within_documents(documents)
    return mask[0] if np.ndim(position_ids) == 1 else mask


def flash_path_document_ids(position_ids: Any) -> np.ndarray:
    """The document of every token as Hugging Face's FlashAttention path reads it from ``position_ids``.

    With no attention mask and no ``cu_seq_lens`` passed, ``_flash_attention_forward``
    asks :func:`flash_varlen_is_packed`: only a batch of one row whose ids are
    not one run ``m, m + 1, ...`` is packed. Its documents are then the segments
    ``[cu[j], cu[j + 1])`` of :func:`flash_varlen_cu_seqlens`: a document starts
    at every id equal to the row's smallest id, so a jump (``2, 10``) starts
    none, and tokens before the first start belong to no segment (marked -1):
    ``flash_attn_varlen_func`` computes no output for them. Every other batch is
    one causal sequence per row (document 0).

    Parameters
    ----------
    position_ids : array_like of int
        One row, shape ``(n,)`` (a batch of one), or a batch of rows, shape ``(batch, n)``.

    Returns
    -------
    numpy.ndarray
        int64, the shape of ``position_ids``: documents 0, 1, ... per row, -1
        for a token no segment covers.

    Raises
    ------
    TypeError
        If ``position_ids`` does not hold integers.
    ValueError
        If ``position_ids`` is not 1-D or 2-D, or is empty.

    See Also
    --------
    mask_path_document_ids : the mask-building paths' reading of the same ids.

    References
    ----------
    .. [1] Hugging Face, transformers, ``src/transformers/modeling_flash_attention_utils.py``,
       release v5.24.0 (``_flash_attention_forward``, ``_is_packed_sequence``,
       ``prepare_fa_kwargs_from_position_ids``).

    Examples
    --------
    >>> flash_path_document_ids([0, 1, 2, 0, 1]).tolist()
    [0, 0, 0, 1, 1]
    >>> flash_path_document_ids([0, 1, 2, 10, 11]).tolist()    # no second 0: one document
    [0, 0, 0, 0, 0]
    >>> flash_path_document_ids([5, 6, 7, 0, 1]).tolist()      # cu_seqlens [3, 5]
    [-1, -1, -1, 0, 0]
    >>> flash_path_document_ids([[0, 1, 0], [0, 1, 0]]).tolist()   # a batch of two: never packed
    [[0, 0, 0], [0, 0, 0]]
    """
    rows = _as_rows(position_ids)
    documents = np.zeros(rows.shape, dtype=np.int64)
    if flash_varlen_is_packed(rows, batch_size=rows.shape[0]):
        cu = flash_varlen_cu_seqlens(rows)
        documents[0] = np.searchsorted(cu, np.arange(rows.shape[1]), side="right") - 1
    return documents.reshape(np.shape(position_ids))


def flash_path_attention_mask(position_ids: Any) -> np.ndarray:
    """The mask Hugging Face's FlashAttention path applies, with no attention mask, to ``position_ids``.

    Token ``i`` sees token ``j`` when ``j <= i`` and both are in the same
    document of :func:`flash_path_document_ids`; a token no segment covers sees
    nothing (its row is all False). For a packed row whose ids start at its
    smallest id this is :func:`varlen_attention_mask` of its ``cu_seqlens``.

    Parameters
    ----------
    position_ids : array_like of int
        One row, shape ``(n,)`` (a batch of one), or a batch of rows, shape ``(batch, n)``.

    Returns
    -------
    numpy.ndarray
        Boolean, ``(n, n)`` for one row or ``(batch, n, n)``; True where
        attention is allowed (query row, key column).

    Raises
    ------
    TypeError
        If ``position_ids`` does not hold integers.
    ValueError
        If ``position_ids`` is not 1-D or 2-D, or is empty.

    References
    ----------
    .. [1] Hugging Face, transformers, ``src/transformers/modeling_flash_attention_utils.py``,
       release v5.24.0 (``_flash_attention_forward``).

    Examples
    --------
    >>> flash_path_attention_mask([0, 1, 0]).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [0, 0, 1]]
    >>> flash_path_attention_mask([4, 0, 1]).astype(int).tolist()   # token 0 is in no segment
    [[0, 0, 0], [0, 1, 0], [0, 1, 1]]
    """
    rows = _as_rows(position_ids)
    mask = _causal_within_documents(flash_path_document_ids(rows))
    return mask[0] if np.ndim(position_ids) == 1 else mask
