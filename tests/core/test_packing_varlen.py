"""The three mask paths of packed documents (issues 36, 43): a mask the stack builds itself,
Hugging Face's mask-building paths (sdpa, eager, flex), which start a document wherever an id does
not step by +1, and its FlashAttention path, which starts one at every id equal to the row's
smallest, in a batch of one only.

Expected values are worked out by hand in the comments, from transformers'
``find_packed_sequence_indices`` and ``_preprocess_mask_arguments`` (``masking_utils.py``) and
``_is_packed_sequence`` and ``prepare_fa_kwargs_from_position_ids``
(``modeling_flash_attention_utils.py``), read at commit 00c4411cbe15d4c56d54d3b56d4d171e9c289dac
(masking_utils.py) and in release v5.24.0 (both).
"""

import math

import numpy as np
import pytest

from posenc_helpers import (
    apply_rope,
    flash_path_attention_mask,
    flash_path_document_ids,
    flash_varlen_cu_seqlens,
    flash_varlen_is_packed,
    mask_path_attention_mask,
    mask_path_document_ids,
    packed_attention_mask,
    packed_position_ids,
    softmax,
    varlen_attention_mask,
)

BAD_INPUT_CASES = [
    (lambda: flash_varlen_is_packed([0, 1, 0], batch_size=1), ValueError, ["position_ids", "2 dimension"]),
    (lambda: flash_varlen_is_packed([[0.5, 1]], batch_size=1), ValueError, ["position_ids", "whole"]),
    (lambda: flash_varlen_is_packed([["a"]], batch_size=1), TypeError, ["position_ids"]),
    (lambda: flash_varlen_is_packed([[0, 1]], batch_size=0), ValueError, ["batch_size", ">= 1"]),
    (lambda: flash_varlen_is_packed([[0, 1]], batch_size=1.0), TypeError, ["batch_size"]),
    (lambda: flash_varlen_cu_seqlens([]), ValueError, ["position_ids", "at least one"]),
    (lambda: flash_varlen_cu_seqlens([True, False]), TypeError, ["position_ids"]),
    (lambda: varlen_attention_mask([0]), ValueError, ["cu_seqlens", "two entries"]),
    (lambda: varlen_attention_mask([[0, 2]]), ValueError, ["cu_seqlens", "one-dimensional"]),
    (lambda: varlen_attention_mask([1, 3]), ValueError, ["cu_seqlens", "start at 0"]),
    (lambda: varlen_attention_mask([0, 2, 2]), ValueError, ["cu_seqlens", "strictly increasing"]),
    (lambda: varlen_attention_mask("abc"), TypeError, ["cu_seqlens"]),
    (lambda: mask_path_document_ids([[[0, 1]]]), ValueError, ["position_ids", "1-D", "batch of rows"]),
    (lambda: mask_path_document_ids([]), ValueError, ["position_ids", "at least one"]),
    (lambda: mask_path_document_ids([0.5, 1.0]), ValueError, ["position_ids", "whole"]),
    (lambda: mask_path_attention_mask([0, 1], cache_passed=1), TypeError, ["cache_passed", "bool"]),
    (lambda: mask_path_attention_mask([0, 1], attention_mask_passed="no"), TypeError, ["attention_mask_passed"]),
    (lambda: flash_path_document_ids([["a"]]), TypeError, ["position_ids"]),
    (lambda: flash_path_attention_mask(np.zeros((1, 1, 2), dtype=int)), ValueError, ["position_ids", "1-D"]),
]


def test_restarted_ids_are_read_as_packed_only_in_a_batch_of_one():
    # [0 1 2 0 1] against the run [0 1 2 3 4]: differs at the last two ids -> packed
    assert flash_varlen_is_packed([[0, 1, 2, 0, 1]], batch_size=1) is True
    # the same ids in a batch of two rows: transformers never reads a batch of two as packed
    assert flash_varlen_is_packed([[0, 1, 2, 0, 1], [0, 1, 2, 3, 4]], batch_size=2) is False
    # running ids 0..4, or a row that starts at 7 (a decode-style offset 7..11): one sequence each
    assert flash_varlen_is_packed([[0, 1, 2, 3, 4]], batch_size=1) is False
    assert flash_varlen_is_packed([[7, 8, 9, 10, 11]], batch_size=1) is False


def test_mrope_ids_of_a_batch_of_one_are_misread():
    # (3, 1, 4): shape[1] is the batch (1), so the run is [min] = [0]; ids minus 0 are not all 0 -> packed
    text_only = [[[0, 1, 2, 3]]] * 3
    assert flash_varlen_is_packed(text_only, batch_size=1) is True
    # flattening 12 ids finds zeros at 0, 4 and 8: three "documents" of 4, 12 ids for 4 tokens
    assert flash_varlen_cu_seqlens(text_only).tolist() == [0, 4, 8, 12]
    # with two rows per axis, (3, 2, 4): shape[1] = 2 and batch 2 -> not packed
    assert flash_varlen_is_packed([[[0, 1, 2, 3]] * 2] * 3, batch_size=2) is False


def test_cu_seqlens_by_hand():
    # zeros at 0, 3, 5; 9 ids -> [0, 3, 5, 9]: lengths 3, 2, 4
    assert flash_varlen_cu_seqlens([[0, 1, 2, 0, 1, 0, 1, 2, 3]]).tolist() == [0, 3, 5, 9]
    # running ids: one zero -> one sequence of 6
    assert flash_varlen_cu_seqlens([[0, 1, 2, 3, 4, 5]]).tolist() == [0, 6]
    # transformers takes the smallest ids as they are: a row that starts mid-document gives no start at 0
    assert flash_varlen_cu_seqlens([[3, 4, 0, 1]]).tolist() == [2, 4]
    # since pull request #47525 the starts are the row's smallest id, not 0: ids from 2 (RoBERTa) restart at 2
    assert flash_varlen_cu_seqlens([[2, 3, 4, 2, 3]]).tolist() == [0, 3, 5]
    assert flash_varlen_cu_seqlens([[0, 1, 2, 0, 1, 0, 1, 2, 3]]).dtype == np.int64


def test_varlen_mask_by_hand_and_against_the_block_mask():
    # segments [0, 2) and [2, 3): the first two tokens see each other causally, the third only itself
    assert varlen_attention_mask([0, 2, 3]).astype(int).tolist() == [[1, 0, 0], [1, 1, 0], [0, 0, 1]]
    np.testing.assert_array_equal(varlen_attention_mask([0, 4]), np.tri(4, dtype=bool))
    lengths = [3, 2, 4]
    cu = flash_varlen_cu_seqlens(packed_position_ids(lengths)[None, :])
    np.testing.assert_array_equal(varlen_attention_mask(cu), packed_attention_mask(lengths))


def _attend(q, k, v, positions, mask):
    logits = apply_rope(q, positions) @ apply_rope(k, positions).T / math.sqrt(q.shape[-1])
    return softmax(np.where(mask, logits, -np.inf)) @ v


def _flash_path_mask(position_ids):
    """What the FlashAttention path of transformers applies to a batch of one without an attention mask."""
    if flash_varlen_is_packed(position_ids[None, :], batch_size=1):
        return varlen_attention_mask(flash_varlen_cu_seqlens(position_ids))
    return np.tri(position_ids.size, dtype=bool)


@pytest.mark.parametrize("lengths", [[3, 5, 2], [1, 4], [6]])
def test_in_the_flash_path_the_restart_is_the_mask(lengths):
    rng = np.random.default_rng(36)
    n = sum(lengths)
    q, k, v = (rng.normal(size=(n, 8)) for _ in range(3))
    restart, running = packed_position_ids(lengths), np.arange(n)
    isolated = _attend(q, k, v, restart, packed_attention_mask(lengths))
    np.testing.assert_allclose(_attend(q, k, v, restart, _flash_path_mask(restart)), isolated, rtol=0, atol=1e-12)
    leaked = _attend(q, k, v, running, _flash_path_mask(running))
    if len(lengths) > 1:  # every token after the first document sees earlier documents
        later = slice(lengths[0], None)
        assert np.abs(leaked[later] - isolated[later]).max(axis=1).min() > 1e-6
    else:
        np.testing.assert_allclose(leaked, isolated, rtol=0, atol=1e-12)


# The four rows of chapter 13, by hand.
# [0 1 2 0 1 2]     mask paths: steps (prepended 1) 1 1 1 -2 1 1 -> not +1 at index 3 -> docs 000111.
#                   FlashAttention: run 0..5 differs -> packed; smallest id 0 at 0 and 3 -> cu [0 3 6] -> 000111.
# [0 1 2 10 11 12]  mask paths: step 8 at index 3 -> 000111.
#                   FlashAttention: differs from 0..5 -> packed; 0 only at index 0 -> cu [0 6] -> one document.
# [5 6 7 0 1 2]     mask paths: the first token is in document 0 whatever its id; step -7 at 3 -> 000111.
#                   FlashAttention: smallest id 0 at index 3 only -> cu [3 6]: tokens 0-2 in no segment (-1).
# [0 1 2 3 4 5]     mask paths: every step +1 -> 000000 (transformers returns None: no packed mask).
#                   FlashAttention: equals the run 0..5 -> not packed -> one causal sequence -> 000000.
FOUR_ROWS = {
    "restart": ([0, 1, 2, 0, 1, 2], [0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 1]),
    "jump": ([0, 1, 2, 10, 11, 12], [0, 0, 0, 1, 1, 1], [0, 0, 0, 0, 0, 0]),
    "mid-document": ([5, 6, 7, 0, 1, 2], [0, 0, 0, 1, 1, 1], [-1, -1, -1, 0, 0, 0]),
    "running": ([0, 1, 2, 3, 4, 5], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]),
}


@pytest.mark.parametrize("name", FOUR_ROWS)
def test_the_four_rows_by_hand(name):
    ids, mask_docs, flash_docs = FOUR_ROWS[name]
    assert mask_path_document_ids(ids).tolist() == mask_docs
    assert flash_path_document_ids(ids).tolist() == flash_docs
    assert mask_path_document_ids(ids).dtype == np.int64 and flash_path_document_ids(ids).dtype == np.int64


def _mask_by_hand(documents):
    """j <= i and the same document, and no key at all for a token of document -1."""
    n = len(documents)
    return [[int(j <= i and documents[i] == documents[j] and documents[i] >= 0) for j in range(n)] for i in range(n)]


@pytest.mark.parametrize("name", FOUR_ROWS)
def test_the_masks_of_the_four_rows(name):
    ids, mask_docs, flash_docs = FOUR_ROWS[name]
    assert mask_path_attention_mask(ids).astype(int).tolist() == _mask_by_hand(mask_docs)
    assert flash_path_attention_mask(ids).astype(int).tolist() == _mask_by_hand(flash_docs)


def test_the_mask_paths_read_every_row_of_a_batch_but_flash_only_a_batch_of_one():
    batch = [[0, 1, 0, 1], [0, 1, 2, 3]]
    # row 0: restart at index 2 -> 0011; row 1: one document
    assert mask_path_document_ids(batch).tolist() == [[0, 0, 1, 1], [0, 0, 0, 0]]
    # a batch of two is never packed on the FlashAttention path: one causal sequence per row
    assert flash_path_document_ids(batch).tolist() == [[0, 0, 0, 0], [0, 0, 0, 0]]
    assert mask_path_attention_mask(batch).shape == (2, 4, 4)
    assert flash_path_attention_mask(batch).shape == (2, 4, 4)
    # repeated ids step by 0: one-token documents on the mask paths
    assert mask_path_document_ids([3, 3, 3]).tolist() == [0, 1, 2]


def test_a_mask_or_a_cache_turns_the_detection_off():
    # [0 1 0]: documents 001 -> token 2 sees only itself; with a 2-D mask or a cache: plain causal
    assert mask_path_attention_mask([0, 1, 0]).astype(int).tolist() == [[1, 0, 0], [1, 1, 0], [0, 0, 1]]
    causal = [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    assert mask_path_attention_mask([0, 1, 0], attention_mask_passed=True).astype(int).tolist() == causal
    assert mask_path_attention_mask([0, 1, 0], cache_passed=True).astype(int).tolist() == causal


def test_flash_path_mask_is_the_varlen_mask_of_restarted_rows():
    lengths = [3, 2, 4]
    ids = packed_position_ids(lengths)
    np.testing.assert_array_equal(flash_path_attention_mask(ids), varlen_attention_mask(flash_varlen_cu_seqlens(ids)))
    np.testing.assert_array_equal(flash_path_attention_mask(ids), packed_attention_mask(lengths))
    np.testing.assert_array_equal(mask_path_attention_mask(ids), packed_attention_mask(lengths))
