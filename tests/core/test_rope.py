"""RoPE and its long-context rescalings, against hand values and the reference algorithms."""

import math

import numpy as np
import pytest

from posenc_helpers import apply_rope, rope_frequencies, scaled_rope_frequencies


def test_rope_frequencies_use_head_dim():
    np.testing.assert_allclose(rope_frequencies(4), [1.0, 0.01], rtol=1e-15)
    np.testing.assert_allclose(rope_frequencies(6, base=64.0), [1.0, 0.25, 0.0625], rtol=1e-15)


def test_quarter_turn():
    out = apply_rope(np.array([[1.0, 0.0]]), [math.pi / 2])
    np.testing.assert_allclose(out, [[0.0, 1.0]], atol=1e-15)


def test_interleaved_pair_rotation_by_hand():
    x = np.array([[1.0, 2.0, 3.0, 4.0]])
    t = 5.0
    out = apply_rope(x, [t])[0]
    a0, a1 = t * 1.0, t * 0.01
    expected = [
        1 * math.cos(a0) - 2 * math.sin(a0),
        1 * math.sin(a0) + 2 * math.cos(a0),
        3 * math.cos(a1) - 4 * math.sin(a1),
        3 * math.sin(a1) + 4 * math.cos(a1),
    ]
    np.testing.assert_allclose(out, expected, atol=1e-14)


def test_half_pair_rotation_by_hand():
    x = np.array([[1.0, 3.0, 2.0, 4.0]])  # pairs (x0, x2) and (x1, x3)
    t = 5.0
    out = apply_rope(x, [t], layout="half")[0]
    a0, a1 = t * 1.0, t * 0.01
    expected = [
        1 * math.cos(a0) - 2 * math.sin(a0),
        3 * math.cos(a1) - 4 * math.sin(a1),
        1 * math.sin(a0) + 2 * math.cos(a0),
        3 * math.sin(a1) + 4 * math.cos(a1),
    ]
    np.testing.assert_allclose(out, expected, atol=1e-14)


def test_batched_shapes_and_dtype():
    x = np.ones((2, 3, 5, 8), dtype=np.float32)
    out = apply_rope(x, np.arange(5))
    assert out.shape == x.shape and out.dtype == np.float32
    assert apply_rope(np.ones((2, 4), dtype=int), 2).dtype == np.float64


def test_inv_freq_override():
    x = np.array([[1.0, 0.0, 1.0, 0.0]])
    out = apply_rope(x, [2.0], inv_freq=[0.5, 0.25])[0]
    np.testing.assert_allclose(out, [math.cos(1.0), math.sin(1.0), math.cos(0.5), math.sin(0.5)], atol=1e-15)


def test_linear_scaling():
    inv, attn = scaled_rope_frequencies(8, method="linear", factor=4.0)
    np.testing.assert_allclose(inv, rope_frequencies(8) / 4.0, rtol=1e-15)
    assert attn == 1.0


def test_ntk_scaling_formula_and_endpoints():
    d, s = 128, 8.0
    inv, attn = scaled_rope_frequencies(d, method="ntk", factor=s)
    new_base = 10000.0 * s ** (d / (d - 2))
    expected = np.array([new_base ** (-2 * i / d) for i in range(d // 2)])
    np.testing.assert_allclose(inv, expected, rtol=1e-12)
    original = rope_frequencies(d)
    assert inv[0] == original[0] == 1.0  # fastest pair unchanged
    assert inv[-1] == pytest.approx(original[-1] / s, rel=1e-12)  # slowest pair interpolated by s
    assert attn == 1.0


def _yarn_reference(head_dim, base, factor, original_max_len, beta_fast=32, beta_slow=1):
    """Scalar transliteration of the YaRN reference code (Peng et al. 2023)."""

    def correction_dim(rotations):
        return (head_dim * math.log(original_max_len / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low = max(math.floor(correction_dim(beta_fast)), 0)
    high = min(math.ceil(correction_dim(beta_slow)), head_dim - 1)
    if low == high:
        high += 0.001
    out = []
    for i in range(head_dim // 2):
        pos_freq = base ** (2 * i / head_dim)
        extrapolation, interpolation = 1 / pos_freq, 1 / (factor * pos_freq)
        ramp = min(max((i - low) / (high - low), 0.0), 1.0)
        mask = 1 - ramp
        out.append(interpolation * (1 - mask) + extrapolation * mask)
    mscale = 1.0 if factor <= 1 else 0.1 * math.log(factor) + 1.0
    return np.array(out), mscale


@pytest.mark.parametrize(
    "head_dim, base, factor, original_max_len",
    [(128, 10000.0, 16.0, 4096), (64, 10000.0, 4.0, 2048), (128, 500000.0, 8.0, 8192), (32, 10000.0, 2.0, 512)],
)
def test_yarn_matches_reference_algorithm(head_dim, base, factor, original_max_len):
    inv, attn = scaled_rope_frequencies(
        head_dim, base=base, method="yarn", factor=factor, original_max_len=original_max_len
    )
    ref_inv, ref_attn = _yarn_reference(head_dim, base, factor, original_max_len)
    np.testing.assert_allclose(inv, ref_inv, rtol=1e-12)
    assert attn == pytest.approx(ref_attn, rel=1e-15)


def test_yarn_ramp_by_hand():
    # head_dim 128, base 1e4, L = 4096, by hand:
    #   32 turns: 128 * ln(4096 / (64 pi)) / (2 ln 1e4) = 128 * 3.0144 / 18.421 = 20.95 -> floor 20
    #    1 turn:  128 * ln(4096 / (2 pi))  / (2 ln 1e4) = 128 * 6.4799 / 18.421 = 45.03 -> ceil 46
    inv, attn = scaled_rope_frequencies(128, method="yarn", factor=16.0, original_max_len=4096)
    original = rope_frequencies(128)
    np.testing.assert_allclose(inv[:21], original[:21], rtol=1e-15)  # ramp 0: kept
    np.testing.assert_allclose(inv[46:], original[46:] / 16.0, rtol=1e-15)  # ramp 1: interpolated
    i = 33
    ramp = (i - 20) / (46 - 20)
    assert inv[i] == pytest.approx(original[i] * (1 - ramp) + original[i] / 16 * ramp, rel=1e-14)
    assert attn == pytest.approx(0.1 * math.log(16) + 1, rel=1e-15)


# Partial rotary (GPT-NeoX rotary_pct, Hugging Face partial_rotary_factor).


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_partial_rotary_passes_the_rest_through_bit_identical(layout, dtype):
    x = np.random.default_rng(1).normal(size=(2, 5, 12)).astype(dtype)
    out = apply_rope(x, np.arange(5) * 37.0, layout=layout, rotary_dim=4)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out[..., 4:], x[..., 4:])
    assert not np.allclose(out[..., 1:, :4], x[..., 1:, :4])  # the first four did turn


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_rotary_dim_equal_to_head_dim_is_the_full_rotation(layout):
    x = np.random.default_rng(2).normal(size=(6, 8))
    np.testing.assert_array_equal(apply_rope(x, 6, layout=layout, rotary_dim=8), apply_rope(x, 6, layout=layout))


def test_partial_rotary_by_hand():
    # rotary_dim 4 of 6 features: theta over the rotary width, 10000**(-2i/4) = 1, 0.01; t = 2.
    t = 2.0
    half = apply_rope(np.array([[1.0, 0.0, 0.0, 0.0, 5.0, 6.0]]), [t], layout="half", rotary_dim=4)[0]
    # half layout within the rotated part: pairs (x0, x2) and (x1, x3)
    np.testing.assert_allclose(half, [math.cos(2.0), 0.0, math.sin(2.0), 0.0, 5.0, 6.0], atol=1e-15)
    inter = apply_rope(np.array([[1.0, 0.0, 1.0, 0.0, 7.0, 8.0]]), [t], rotary_dim=4)[0]
    np.testing.assert_allclose(
        inter, [math.cos(2.0), math.sin(2.0), math.cos(0.02), math.sin(0.02), 7.0, 8.0], atol=1e-15
    )


def test_partial_rotary_frequencies_use_the_rotary_width():
    # Pythia-like: head_dim 64, rotary_pct 0.25 -> rotary_dim 16, theta_i = 10000**(-2i/16) = 10000**(-i/8).
    # Pair i = 1 alone (half layout: features 1 and 9) at t = 3 turns by 3 * 10000**(-1/8) = 3 * 0.31623 = 0.94868.
    x = np.zeros((1, 64))
    x[0, 1] = 1.0
    out = apply_rope(x, [3.0], layout="half", rotary_dim=16)[0]
    angle = 3 * 10000 ** (-1 / 8)
    assert angle == pytest.approx(0.94868, abs=1e-5)
    assert out[1] == pytest.approx(math.cos(angle), abs=1e-15)
    assert out[9] == pytest.approx(math.sin(angle), abs=1e-15)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_partial_rotary_scores_depend_on_the_offset_only(layout):
    rng = np.random.default_rng(3)
    q, k = rng.normal(size=(2, 1, 10))
    for shift in (0.0, 17.0, 1000.0):
        s = (
            apply_rope(q, [5.0 + shift], layout=layout, rotary_dim=6)[0]
            @ apply_rope(k, [2.0 + shift], layout=layout, rotary_dim=6)[0]
        )
        if shift == 0.0:
            reference = s
        assert s == pytest.approx(reference, rel=1e-12)


def test_partial_rotary_with_explicit_frequencies():
    x = np.array([[1.0, 0.0, 4.0, 4.0]])
    out = apply_rope(x, [2.0], inv_freq=[0.5], rotary_dim=2)[0]
    np.testing.assert_allclose(out, [math.cos(1.0), math.sin(1.0), 4.0, 4.0], atol=1e-15)
