"""The helpers of chapter 13 (positions in 2026 models) against values worked out independently,
and, where the semantics are Hugging Face's or a reference implementation's, against a
transcription of that formula written out here.

p-RoPE (proportional), partial rotary pairs, interleaved M-RoPE, MLA's decoupled RoPE,
re-rotation of cached keys and sink caches, packed position ids, Llama 4's attention
temperature and Qwen's log-n scale."""

import math

import numpy as np
import pytest

from posenc_helpers import (
    apply_rope,
    llama4_attention_scale,
    logn_attention_scale,
    mla_scores,
    mrope_pair_axes,
    multimodal_rope,
    packed_attention_mask,
    packed_position_ids,
    partial_rotary_pairs,
    rerotate_keys,
    rope_layout_permutation,
    scaled_rope_frequencies,
    sink_cache_positions,
    softmax,
)

BAD_INPUT_CASES = [
    (
        lambda: scaled_rope_frequencies(8, method="proportional", partial_rotary_factor=0.0),
        ValueError,
        ["partial_rotary_factor", "> 0"],
    ),
    (
        lambda: scaled_rope_frequencies(8, method="proportional", partial_rotary_factor=1.5),
        ValueError,
        ["partial_rotary_factor", "(0, 1]"],
    ),
    (
        lambda: scaled_rope_frequencies(8, method="proportional", partial_rotary_factor="a"),
        TypeError,
        ["partial_rotary_factor"],
    ),
    (
        lambda: scaled_rope_frequencies(8, method="linear", factor=2.0, partial_rotary_factor=0.5),
        ValueError,
        ["partial_rotary_factor", "proportional"],
    ),
    (lambda: scaled_rope_frequencies(8, method="proportional", factor=0.0), ValueError, ["factor", "> 0"]),
    (lambda: partial_rotary_pairs(8, 0.5, style="split"), ValueError, ["style"]),
    (lambda: partial_rotary_pairs(8, 1.5, style="partial"), ValueError, ["partial_rotary_factor", "(0, 1]"]),
    (lambda: partial_rotary_pairs(8, 0.375, style="partial"), ValueError, ["rotated width", "even"]),
    (lambda: partial_rotary_pairs(7, 0.5, style="partial"), ValueError, ["head_dim", "even"]),
    (lambda: partial_rotary_pairs(8, 0.5, base=0.0, style="partial"), ValueError, ["base"]),
    (lambda: mrope_pair_axes([2, 1, 1], arrangement="mixed"), ValueError, ["arrangement"]),
    (lambda: mrope_pair_axes([2, 1, 1, 0], arrangement="interleaved"), ValueError, ["three entries"]),
    (lambda: mrope_pair_axes([1, 2, 1], arrangement="interleaved"), ValueError, ["cannot be interleaved"]),
    (lambda: mrope_pair_axes("211"), TypeError, ["sections"]),
    (lambda: mrope_pair_axes([2, -1, 1]), ValueError, ["sections", ">= 0"]),
    (
        lambda: multimodal_rope(np.ones((2, 8)), np.zeros((3, 2)), (1, 2, 1), arrangement="interleaved"),
        ValueError,
        ["interleaved"],
    ),
    (lambda: rerotate_keys(np.ones((3, 4)), [1.0, 2.0]), ValueError, ["shift", "keys.shape[-2] = 3"]),
    (lambda: rerotate_keys(np.ones((3, 4)), np.nan), ValueError, ["shift", "finite"]),
    (lambda: rerotate_keys(np.ones(4), 1.0), ValueError, ["x", "2 dimensions"]),
    (lambda: rerotate_keys(np.ones((3, 5)), 1.0), ValueError, ["head_dim", "even"]),
    (lambda: sink_cache_positions(10, n_sinks=2, window=0), ValueError, ["window", ">= 1"]),
    (lambda: sink_cache_positions(10, n_sinks=-1, window=3), ValueError, ["n_sinks", ">= 0"]),
    (lambda: sink_cache_positions(2.5, n_sinks=1, window=3), TypeError, ["n_tokens"]),
    (lambda: packed_position_ids([]), ValueError, ["document_lengths", "at least one"]),
    (lambda: packed_position_ids([3, 0]), ValueError, ["document_lengths", ">= 1"]),
    (lambda: packed_position_ids([1.5]), TypeError, ["document_lengths"]),
    (lambda: packed_attention_mask("abc"), TypeError, ["document_lengths"]),
    (
        lambda: mla_scores(np.ones((2, 4)), np.ones((2, 4)), np.ones((3, 6)), np.ones((5, 4)), np.ones((3, 4)), 2, 3),
        ValueError,
        ["w_uk", "latent.shape[1] = 6"],
    ),
    (
        lambda: mla_scores(np.ones((2, 3)), np.ones((2, 4)), np.ones((3, 6)), np.ones((6, 4)), np.ones((3, 4)), 2, 3),
        ValueError,
        ["q_nope", "4"],
    ),
    (
        lambda: mla_scores(np.ones((2, 4)), np.ones((2, 3)), np.ones((3, 6)), np.ones((6, 4)), np.ones((3, 3)), 2, 3),
        ValueError,
        ["q_pe", "even"],
    ),
    (
        lambda: mla_scores(np.ones((2, 4)), np.ones((1, 4)), np.ones((3, 6)), np.ones((6, 4)), np.ones((3, 4)), 2, 3),
        ValueError,
        ["one row per query"],
    ),
    (
        lambda: mla_scores(np.ones((2, 4)), np.ones((2, 4)), np.ones((2, 6)), np.ones((6, 4)), np.ones((3, 4)), 2, 3),
        ValueError,
        ["one row per key"],
    ),
    (
        lambda: mla_scores(np.ones(4), np.ones((2, 4)), np.ones((3, 6)), np.ones((6, 4)), np.ones((3, 4)), 2, 3),
        ValueError,
        ["q_nope", "2-D"],
    ),
    (
        lambda: mla_scores(
            np.ones((2, 4)), np.ones((2, 4)), np.full((3, 6), np.inf), np.ones((6, 4)), np.ones((3, 4)), 2, 3
        ),
        ValueError,
        ["latent", "finite"],
    ),
    (lambda: llama4_attention_scale([-1, 0]), ValueError, ["positions", ">= 0"]),
    (lambda: llama4_attention_scale([0.5]), ValueError, ["positions", "whole"]),
    (lambda: llama4_attention_scale([1], floor_scale=0), ValueError, ["floor_scale", "> 0"]),
    (lambda: llama4_attention_scale([1], attn_scale=-0.1), ValueError, ["attn_scale", "> 0"]),
    (lambda: logn_attention_scale([1], train_length=1), ValueError, ["train_length", ">= 2"]),
    (lambda: logn_attention_scale([-3], train_length=8), ValueError, ["positions", ">= 0"]),
    (lambda: logn_attention_scale("a", train_length=8), TypeError, ["positions"]),
]


# ---------------------------------------------------------------- proportional (p-RoPE)


def _hf_proportional(head_dim, base, partial_rotary_factor, factor=1.0):
    """Transcription of transformers' _compute_proportional_rope_parameters (torch -> numpy)."""
    rope_angles = int(partial_rotary_factor * head_dim // 2)
    inv_freq_rotated = 1.0 / (base ** (np.arange(0, 2 * rope_angles, 2, dtype=np.int64).astype(np.float64) / head_dim))
    nope_angles = head_dim // 2 - rope_angles
    inv_freq = np.concatenate([inv_freq_rotated, np.zeros(nope_angles)]) if nope_angles > 0 else inv_freq_rotated
    return inv_freq / factor, 1.0


def test_proportional_hand_worked():
    # head_dim 8, share 1/2: int(0.5 * 8 // 2) = 2 pairs turn, at 10000**(-0/8) = 1 and 10000**(-2/8) = 0.1
    inv, attention = scaled_rope_frequencies(8, method="proportional", partial_rotary_factor=0.5)
    np.testing.assert_allclose(inv, [1.0, 0.1, 0.0, 0.0], rtol=1e-15, atol=0)
    assert attention == 1.0
    inv, _ = scaled_rope_frequencies(8, method="proportional", partial_rotary_factor=0.5, factor=4.0)
    np.testing.assert_allclose(inv, [0.25, 0.025, 0.0, 0.0], rtol=1e-15, atol=0)


@pytest.mark.parametrize(
    "head_dim, base, share, factor",
    [(512, 1e6, 0.25, 1.0), (256, 1e4, 1.0, 1.0), (10, 1e4, 0.3, 1.0), (64, 5e5, 0.5, 8.0), (128, 1e6, 0.01, 1.0)],
)
def test_proportional_equals_hf_transcription(head_dim, base, share, factor):
    ours = scaled_rope_frequencies(
        head_dim, base=base, method="proportional", partial_rotary_factor=share, factor=factor
    )
    hf = _hf_proportional(head_dim, base, share, factor)
    np.testing.assert_allclose(ours[0], hf[0], rtol=1e-14, atol=0)
    assert ours[1] == hf[1]


def test_gemma4_global_layer_turns_64_of_256_pairs_with_the_full_denominator():
    inv, _ = scaled_rope_frequencies(512, base=1e6, method="proportional", partial_rotary_factor=0.25)
    assert inv.shape == (256,)
    assert np.count_nonzero(inv) == 64 and np.all(inv[64:] == 0)
    assert math.isclose(inv[63], 1e6 ** (-126 / 512), rel_tol=1e-14)
    # ordinary partial rotary of the same share rotates 128 features at 1e6**(-2i/128): pair 63 far slower
    _, partial = partial_rotary_pairs(512, 0.25, base=1e6, style="partial")
    assert math.isclose(partial[63], 1e6 ** (-126 / 128), rel_tol=1e-14)
    assert inv[63] / partial[63] > 1e4


def test_partial_rotary_pairs_hand_worked():
    pairs, inv = partial_rotary_pairs(8, 0.5, style="proportional")
    assert pairs.tolist() == [[0, 4], [1, 5], [2, 6], [3, 7]]
    np.testing.assert_allclose(inv, [1.0, 0.1, 0.0, 0.0], rtol=1e-15, atol=0)
    pairs, inv = partial_rotary_pairs(8, 0.5, style="partial")
    assert pairs.tolist() == [[0, 2], [1, 3], [4, 5], [6, 7]]
    np.testing.assert_allclose(inv, [1.0, 0.01, 0.0, 0.0], rtol=1e-15, atol=0)
    assert sorted(pairs.ravel().tolist()) == list(range(8))


def test_proportional_frequencies_rotate_like_apply_rope_half_layout():
    # Gemma 4's pairing is i <-> i + head_dim/2 over the whole head: apply_rope(layout="half") with the zeros
    rng = np.random.default_rng(3)
    x = rng.normal(size=(5, 16))
    inv, _ = scaled_rope_frequencies(16, base=100.0, method="proportional", partial_rotary_factor=0.25)
    out = apply_rope(x, 5, inv_freq=inv, layout="half")
    pairs, pair_freq = partial_rotary_pairs(16, 0.25, base=100.0, style="proportional")
    expected = x.copy()
    for (a, b), w in zip(pairs, pair_freq, strict=True):
        angle = np.arange(5) * w
        expected[:, a] = x[:, a] * np.cos(angle) - x[:, b] * np.sin(angle)
        expected[:, b] = x[:, a] * np.sin(angle) + x[:, b] * np.cos(angle)
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-14)
    assert np.array_equal(
        out[:, [2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15]], x[:, [2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15]]
    )


# ---------------------------------------------------------------- interleaved M-RoPE


def _hf_interleaved_axes(mrope_section, pairs):
    """Transcription of Qwen3-VL's apply_interleaved_mrope, on the axis index instead of the angles."""
    freqs = np.stack([np.full(pairs, axis) for axis in range(3)])
    freqs_t = freqs[0].copy()
    for dim, offset in enumerate((1, 2), start=1):
        length = mrope_section[dim] * 3
        freqs_t[offset:length:3] = freqs[dim, offset:length:3]
    return freqs_t


def test_qwen3_vl_interleaving():
    axes = mrope_pair_axes([24, 20, 20], arrangement="interleaved")
    np.testing.assert_array_equal(axes, _hf_interleaved_axes([24, 20, 20], 64))
    assert axes[:6].tolist() == [0, 1, 2, 0, 1, 2] and axes[60:].tolist() == [0, 0, 0, 0]
    assert [int(np.sum(axes == a)) for a in range(3)] == [24, 20, 20]
    sectioned = mrope_pair_axes([16, 24, 24])  # Qwen2-VL: blocks
    assert sectioned[:16].tolist() == [0] * 16 and sectioned[16:40].tolist() == [1] * 24


def test_interleaved_mrope_rotation_by_hand():
    # 4 pairs, sections (2, 1, 1) interleaved: axes [t, h, w, t]; half layout pairs (i, i + 4)
    theta = 10000.0 ** (-np.arange(0, 8, 2) / 8)
    x = np.arange(1.0, 9.0).reshape(1, 8)
    positions = np.array([[3.0], [5.0], [7.0]])
    out = multimodal_rope(x, positions, (2, 1, 1), arrangement="interleaved")
    expected = x.copy()
    for i, pos in enumerate([3.0, 5.0, 7.0, 3.0]):
        a, b, angle = x[0, i], x[0, i + 4], pos * theta[i]
        expected[0, i] = a * math.cos(angle) - b * math.sin(angle)
        expected[0, i + 4] = a * math.sin(angle) + b * math.cos(angle)
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-13)


# ---------------------------------------------------------------- MLA


def test_mla_hand_worked_and_position_free_latent():
    # one rotary pair (frequency base**0 = 1): the rotary term of unit vectors is cos(m - n)
    q_nope, latent, w_uk = (
        np.array([[1.0, 2.0]]),
        np.array([[1.0, 0.0, 1.0]]),
        np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 3.0]]),
    )
    content, rotary = mla_scores(q_nope, [[1.0, 0.0]], latent, w_uk, [[1.0, 0.0]], [7.0], [4.0])
    assert content[0, 0] == 1.0 * 1.0 + 2.0 * 3.0  # key content latent @ w_uk = [1, 3]
    assert math.isclose(rotary[0, 0], math.cos(3.0), rel_tol=1e-14)
    rng = np.random.default_rng(11)
    qn, qp, c, w, kp = (rng.normal(size=s) for s in [(3, 8), (3, 4), (5, 16), (16, 8), (5, 4)])
    first = mla_scores(qn, qp, c, w, kp, [10, 11, 12], [0, 3, 4, 8, 9])
    moved = mla_scores(qn, qp, c, w, kp, [1010, 1011, 2012], [1000, 1003, 1004, 1008, 1009])
    assert np.array_equal(first[0], moved[0])  # the latent part never sees a position
    np.testing.assert_allclose(first[1][:2], moved[1][:2], rtol=0, atol=1e-9)  # offsets kept: same rotary term
    assert not np.allclose(first[1][2], moved[1][2], atol=1e-3)  # offset changed: it moves
    # and the content term can be computed with W_uk folded into the query (what the cache relies on)
    np.testing.assert_allclose(first[0], (qn @ w.T) @ c.T, rtol=1e-12, atol=1e-12)


def test_mla_interleaved_is_half_after_permutation():
    rng = np.random.default_rng(5)
    qp, kp = rng.normal(size=(2, 8)), rng.normal(size=(3, 8))
    perm = rope_layout_permutation(8)
    zeros_q, zeros_c, zeros_w = np.zeros((2, 2)), np.zeros((3, 2)), np.zeros((2, 2))
    _, interleaved = mla_scores(zeros_q, qp, zeros_c, zeros_w, kp, [4, 9], [0, 1, 2], layout="interleaved")
    _, half = mla_scores(zeros_q, qp[:, perm], zeros_c, zeros_w, kp[:, perm], [4, 9], [0, 1, 2], layout="half")
    np.testing.assert_allclose(interleaved, half, rtol=0, atol=1e-12)


# ---------------------------------------------------------------- KV cache


def test_rerotation_equals_recomputing():
    rng = np.random.default_rng(2)
    keys = rng.normal(size=(2, 6, 16))
    old = np.array([40.0, 41.0, 42.0, 43.0, 44.0, 45.0])
    new = np.array([0.0, 1.0, 2.0, 30.0, 31.0, 32.0])  # two shifts at once
    cached = apply_rope(keys, old, base=500.0, layout="half")
    moved = rerotate_keys(cached, new - old, base=500.0, layout="half")
    np.testing.assert_allclose(moved, apply_rope(keys, new, base=500.0, layout="half"), rtol=0, atol=1e-12)


def test_rerotation_of_one_pair_by_hand():
    # key [1, 0] rotated at 1 then moved by 2: [cos 3, sin 3]
    out = rerotate_keys(apply_rope(np.array([[1.0, 0.0]]), [1.0]), 2.0)
    np.testing.assert_allclose(out, [[math.cos(3.0), math.sin(3.0)]], rtol=0, atol=1e-15)


def test_sink_cache_hand_worked_and_streaming_scores():
    kept, positions = sink_cache_positions(10, n_sinks=2, window=3)
    assert kept.tolist() == [0, 1, 7, 8, 9] and positions.tolist() == [0, 1, 2, 3, 4]
    kept, positions = sink_cache_positions(4, n_sinks=2, window=3)
    assert kept.tolist() == [0, 1, 2, 3] and positions.tolist() == [0, 1, 2, 3]
    # keys cached at their text positions, re-rotated to their cache positions, equal keys rotated there
    kept, positions = sink_cache_positions(10, n_sinks=2, window=3)
    raw = np.random.default_rng(4).normal(size=(5, 8))
    cached = apply_rope(raw, kept.astype(float))
    np.testing.assert_allclose(
        rerotate_keys(cached, (positions - kept).astype(float)), apply_rope(raw, positions.astype(float)), atol=1e-12
    )


# ---------------------------------------------------------------- packing


def test_packed_ids_and_mask_by_hand():
    assert packed_position_ids([3, 2, 4]).tolist() == [0, 1, 2, 0, 1, 0, 1, 2, 3]
    assert packed_attention_mask([2, 1]).astype(int).tolist() == [[1, 0, 0], [1, 1, 0], [0, 0, 1]]


def _causal_rope_attention(q, k, v, positions, mask):
    qr, kr = apply_rope(q, positions), apply_rope(k, positions)
    logits = np.where(mask, qr @ kr.T / math.sqrt(q.shape[-1]), -np.inf)
    return softmax(logits) @ v


def test_packed_row_equals_documents_run_alone():
    rng = np.random.default_rng(9)
    lengths = [3, 5, 2]
    q, k, v = (rng.normal(size=(10, 8)) for _ in range(3))
    packed = _causal_rope_attention(q, k, v, packed_position_ids(lengths), packed_attention_mask(lengths))
    start = 0
    for n in lengths:
        rows = slice(start, start + n)
        alone = _causal_rope_attention(q[rows], k[rows], v[rows], np.arange(n), np.tril(np.ones((n, n), bool)))
        np.testing.assert_allclose(packed[rows], alone, rtol=0, atol=1e-12)
        start += n
    # RoPE is relative: with the right mask, positions that do not restart give the same outputs ...
    unrestarted = _causal_rope_attention(q, k, v, np.arange(10), packed_attention_mask(lengths))
    np.testing.assert_allclose(unrestarted, packed, rtol=0, atol=1e-12)
    # ... but a stack that finds the documents from where the positions restart then sees one document,
    # and a plain causal mask lets the later documents attend to the earlier ones
    leaking = _causal_rope_attention(q, k, v, np.arange(10), np.tril(np.ones((10, 10), bool)))
    np.testing.assert_allclose(leaking[:3], packed[:3], rtol=0, atol=1e-12)  # the first document sees no other
    assert not np.allclose(leaking[3:], packed[3:], atol=1e-3)


# ---------------------------------------------------------------- attention scales


def _meta_llama4_scale(t, floor_scale, attn_scale):
    """Transcription of llama-models' Attention.forward (temperature tuning of NoPE layers)."""
    return np.log(np.floor((np.asarray(t, float) + 1.0) / floor_scale) + 1.0) * attn_scale + 1.0


def test_llama4_temperature_by_hand_and_transcription():
    # floor_scale 4, attn_scale 1: positions 0..2 give 1; 3 gives 1 + ln 2; 11 gives 1 + ln 4
    out = llama4_attention_scale([0, 2, 3, 11], floor_scale=4, attn_scale=1.0)
    np.testing.assert_allclose(out, [1.0, 1.0, 1.0 + math.log(2.0), 1.0 + 2.0 * math.log(2.0)], rtol=1e-15)
    t = np.arange(0, 200_000, 977)
    np.testing.assert_allclose(llama4_attention_scale(t), _meta_llama4_scale(t, 8192, 0.1), rtol=1e-15)
    assert np.all(llama4_attention_scale(np.arange(8191)) == 1.0)  # short contexts are untouched


def test_logn_by_hand():
    out = logn_attention_scale([0, 7, 8, 63, 511], train_length=8)
    np.testing.assert_allclose(out, [1.0, 1.0, math.log(9) / math.log(8), 2.0, 3.0], rtol=1e-14)
