"""The two mask paths of packed documents (issue 36): an explicit block mask, and Hugging Face's
FlashAttention path, which derives the document boundaries from restarts of the position ids.

Expected values are worked out by hand in the comments, from transformers'
``_is_packed_sequence`` and ``prepare_fa_kwargs_from_position_ids``
(``src/transformers/modeling_flash_attention_utils.py``).
"""

import math

import numpy as np
import pytest

from posenc_helpers import (
    apply_rope,
    flash_varlen_cu_seqlens,
    flash_varlen_is_packed,
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
    # transformers takes the zeros as they are: ids that never restart at 0 give no start at 0
    assert flash_varlen_cu_seqlens([[3, 4, 0, 1]]).tolist() == [2, 4]
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
