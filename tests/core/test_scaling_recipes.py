"""The production rescalings (llama3, dynamic NTK, LongRoPE) against hand-worked values.

Expected values come from the published recipes worked out by hand (the
arithmetic is in the comments) or from the formula evaluated here in plain
scalar math, never from the code under test.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import posenc_helpers as ph
from posenc_helpers import rope_frequencies, scaled_rope_frequencies

# Llama 3.1 (Meta's llama-models apply_scaling; Hugging Face rope_type "llama3"):
# head_dim 128, base 500000, factor 8, low_freq_factor 1, high_freq_factor 4, L = 8192.
LLAMA31 = dict(
    base=500000.0, method="llama3", factor=8.0, original_max_len=8192, low_freq_factor=1.0, high_freq_factor=4.0
)


def _llama31():
    return scaled_rope_frequencies(128, **LLAMA31)


def test_llama31_band_edges_by_hand():
    # Band edges: L / high = 8192 / 4 = 2048 tokens (shorter: kept), L / low = 8192 tokens (longer: divided).
    # Pair k has wavelength 2 pi * 500000**(k/64), so
    #   kept     <=> 500000**(k/64) < 2048 / (2 pi) = 325.95 <=> k < 64 * ln 325.95 / ln 500000 = 64 * 0.44098 = 28.22
    #   divided  <=> 500000**(k/64) > 8192 / (2 pi) = 1303.8 <=> k > 64 * ln 1303.8 / ln 500000 = 64 * 0.54662 = 34.98
    # so pairs 0..28 are kept (29), 35..63 divided by 8 (29), 29..34 blended (6).
    # Spot checks: wavelength of pair 28 = 1956 < 2048, pair 29 = 2402, pair 34 = 6695, pair 35 = 8219 > 8192.
    inv, attn = _llama31()
    original = rope_frequencies(128, base=500000.0)
    ratio = original / inv
    kept = np.flatnonzero(ratio == 1.0)
    divided = np.flatnonzero(np.isclose(ratio, 8.0, rtol=1e-14, atol=0))
    blended = np.flatnonzero((ratio > 1.0) & ~np.isclose(ratio, 8.0, rtol=1e-14, atol=0))
    assert kept.tolist() == list(range(0, 29))
    assert divided.tolist() == list(range(35, 64))
    assert blended.tolist() == list(range(29, 35))
    assert np.all((ratio[blended] > 1.0) & (ratio[blended] < 8.0))
    assert attn == 1.0


def test_llama31_pair_values_by_hand():
    inv, _ = _llama31()
    # Pair 0: theta = 1, wavelength 2 pi, kept.
    assert inv[0] == 1.0
    # Pair 63 (slowest): 500000**(-63/64) / 8.
    assert inv[63] == pytest.approx(500000.0 ** (-63 / 64) / 8, rel=1e-14)
    # Pair 32: theta = 500000**-0.5 = 1.41421e-3, wavelength 2 pi * 707.107 = 4442.88 tokens (in the blend band);
    # smooth = (8192 / 4442.88 - 1) / (4 - 1) = 0.28128;
    # theta' = theta * ((1 - 0.28128) / 8 + 0.28128) = 1.41421e-3 * 0.37112 = 5.2485e-4.
    assert inv[32] == pytest.approx(5.2485e-4, rel=1e-4)
    theta = 500000.0**-0.5
    smooth = (8192 / (2 * math.pi / theta) - 1.0) / 3.0
    assert inv[32] == pytest.approx((1 - smooth) * theta / 8 + smooth * theta, rel=1e-14)


def test_llama3_blend_is_continuous_at_both_edges():
    # At wavelength L/high the blend weight is 1 (kept); at L/low it is 0 (divided): choose a base that puts
    # a pair exactly on each edge. head_dim 4, pair 1 has wavelength 2 pi * sqrt(base).
    for edge, expected_ratio in ((2048.0, 1.0), (8192.0, 8.0)):
        base = (edge / (2 * math.pi)) ** 2
        inv, _ = scaled_rope_frequencies(4, **{**LLAMA31, "base": base})
        assert inv[1] * expected_ratio == pytest.approx(base**-0.5, rel=1e-12)


def test_dynamic_is_unscaled_up_to_the_trained_length():
    original = rope_frequencies(64)
    for seq_len in (None, 1, 100, 4096):
        inv, attn = scaled_rope_frequencies(64, method="dynamic", factor=4.0, original_max_len=4096, seq_len=seq_len)
        np.testing.assert_array_equal(inv, original)
        assert attn == 1.0


@pytest.mark.parametrize("seq_len", [4097, 8192, 20000])
def test_dynamic_above_the_trained_length_is_ntk_at_the_current_scale(seq_len):
    d, base, s, L = 128, 10000.0, 2.0, 4096
    inv, attn = scaled_rope_frequencies(d, base=base, method="dynamic", factor=s, original_max_len=L, seq_len=seq_len)
    scale = s * seq_len / L - (s - 1)  # the effective scale at this length
    new_base = base * scale ** (d / (d - 2))
    expected = np.array([new_base ** (-2 * k / d) for k in range(d // 2)])
    np.testing.assert_allclose(inv, expected, rtol=1e-12)
    assert inv[0] == 1.0  # the fastest pair never moves
    assert inv[-1] == pytest.approx(base ** (-(d - 2) / d) / scale, rel=1e-12)  # the slowest slows by the scale
    assert attn == 1.0


def test_dynamic_by_hand():
    # s = 2, L = 4096, n = 8192: scale = 2 * 8192 / 4096 - 1 = 3, so the slowest pair of d = 4
    # (theta = 10000**(-1/2) = 0.01) becomes 10000**(-1/2) * 3**(-1) = 0.0033333.
    inv, _ = scaled_rope_frequencies(4, method="dynamic", factor=2.0, original_max_len=4096, seq_len=8192)
    np.testing.assert_allclose(inv, [1.0, 0.01 / 3], rtol=1e-12)


def test_dynamic_head_dim_two_keeps_its_one_pair():
    inv, _ = scaled_rope_frequencies(2, method="dynamic", factor=4.0, original_max_len=8, seq_len=100)
    np.testing.assert_array_equal(inv, [1.0])


SHORT = [1.0, 1.5, 2.0, 4.0]
LONG = [1.0, 2.0, 8.0, 32.0]


def test_longrope_divides_each_pair_by_its_factor():
    # head_dim 8, base 10000: theta = 1, 0.1, 0.01, 0.001.
    theta = np.array([1.0, 0.1, 0.01, 0.001])
    inv, _ = scaled_rope_frequencies(
        8, method="longrope", factor=32.0, original_max_len=4096, short_factor=SHORT, long_factor=LONG
    )
    np.testing.assert_allclose(inv, theta / np.array(SHORT), rtol=1e-14)
    inv, _ = scaled_rope_frequencies(
        8, method="longrope", factor=32.0, original_max_len=4096, short_factor=SHORT, long_factor=LONG, seq_len=9000
    )
    np.testing.assert_allclose(inv, [1.0, 0.05, 0.00125, 0.00003125], rtol=1e-14)


@pytest.mark.parametrize("seq_len, factors", [(None, SHORT), (1, SHORT), (4096, SHORT), (4097, LONG)])
def test_longrope_switches_to_long_factors_past_the_trained_length(seq_len, factors):
    inv, _ = scaled_rope_frequencies(
        8, method="longrope", factor=32.0, original_max_len=4096, short_factor=SHORT, long_factor=LONG, seq_len=seq_len
    )
    np.testing.assert_allclose(inv, np.array([1.0, 0.1, 0.01, 0.001]) / np.array(factors), rtol=1e-14)


def test_longrope_attention_factor_from_the_paper():
    # Phi-3-mini-128k: s = 131072 / 4096 = 32 = 2**5, L = 4096 = 2**12:
    # sqrt(1 + ln 32 / ln 4096) = sqrt(1 + 5/12) = sqrt(17/12) = 1.19024.
    kwargs = dict(method="longrope", original_max_len=4096, short_factor=SHORT, long_factor=LONG)
    _, attn = scaled_rope_frequencies(8, factor=32.0, **kwargs)
    assert attn == pytest.approx(math.sqrt(17 / 12), rel=1e-14)
    assert attn == pytest.approx(1.19024, abs=1e-5)
    _, attn = scaled_rope_frequencies(8, factor=1.0, **kwargs)
    assert attn == 1.0
    _, attn = scaled_rope_frequencies(8, factor=32.0, attention_factor=1.5, **kwargs)
    assert attn == 1.5
    _, attn = scaled_rope_frequencies(8, attention_factor=1.25, **kwargs)  # no factor needed then
    assert attn == 1.25


def test_yarn_attention_factor_override_and_truncate():
    _, attn = scaled_rope_frequencies(64, method="yarn", factor=4.0, original_max_len=2048, attention_factor=1.0)
    assert attn == 1.0
    # Without truncation the ramp ends are the real-valued correction dims (gpt-oss sets truncate=false).
    # head_dim 64, base 10000, L = 2048:
    # c(32) = 64 ln(2048 / (64 pi)) / (2 ln 1e4) = 64 ln 10.186 / 18.4207 = 64 * 2.3210 / 18.4207 = 8.0640,
    # c(1) = 64 ln(2048 / (2 pi)) / (2 ln 1e4) = 64 ln 325.95 / 18.4207 = 64 * 5.7867 / 18.4207 = 20.105.
    inv, _ = scaled_rope_frequencies(64, method="yarn", factor=4.0, original_max_len=2048, truncate=False)
    original = rope_frequencies(64)
    low = 64 * math.log(2048 / (64 * math.pi)) / (2 * math.log(10000))
    high = 64 * math.log(2048 / (2 * math.pi)) / (2 * math.log(10000))
    assert low == pytest.approx(8.0640, abs=1e-4) and high == pytest.approx(20.105, abs=1e-3)
    np.testing.assert_array_equal(inv[:9], original[:9])  # pairs 0..8 sit below 8.064: kept
    np.testing.assert_allclose(inv[21:], original[21:] / 4, rtol=1e-15)  # 21.. above 20.105: interpolated
    ramp = (12 - low) / (high - low)
    assert inv[12] == pytest.approx(original[12] * (1 - ramp) + original[12] / 4 * ramp, rel=1e-14)


def test_existing_methods_unchanged_signature():
    inv, attn = scaled_rope_frequencies(8, method="linear", factor=2.0)
    np.testing.assert_allclose(inv, rope_frequencies(8) / 2, rtol=1e-15)
    assert attn == 1.0


def test_against_transformers_when_installed():
    """Optional: the same parameters through Hugging Face's own functions (skipped without transformers)."""
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("torch")
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    rope_scaling = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0}
    rope_scaling["original_max_position_embeddings"] = 8192
    config = transformers.LlamaConfig(
        hidden_size=4096,
        num_attention_heads=32,
        max_position_embeddings=131072,
        rope_theta=500000.0,
        rope_scaling=rope_scaling,
    )
    hf_inv, hf_attn = ROPE_INIT_FUNCTIONS["llama3"](config, "cpu")
    inv, attn = _llama31()
    np.testing.assert_allclose(inv, hf_inv.double().numpy(), rtol=1e-6)  # Hugging Face computes in float32
    assert attn == hf_attn


# Run by tests/core/test_bad_input.py with every other module's cases.
BAD_INPUT_CASES = [
    (
        lambda: ph.scaled_rope_frequencies(8, method="llama3", factor=8.0, original_max_len=64, low_freq_factor=1.0),
        ValueError,
        ["high_freq_factor", "required", "llama3"],
    ),
    (
        lambda: ph.scaled_rope_frequencies(8, method="llama3", factor=8.0, original_max_len=64, high_freq_factor=4.0),
        ValueError,
        ["low_freq_factor", "required"],
    ),
    (
        lambda: ph.scaled_rope_frequencies(
            8, method="llama3", original_max_len=64, low_freq_factor=1.0, high_freq_factor=4.0
        ),
        ValueError,
        ["factor", "required"],
    ),
    (
        lambda: ph.scaled_rope_frequencies(8, method="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0),
        ValueError,
        ["original_max_len", "required"],
    ),
    (
        lambda: ph.scaled_rope_frequencies(
            8, method="llama3", factor=8.0, original_max_len=64, low_freq_factor=4.0, high_freq_factor=1.0
        ),
        ValueError,
        ["high_freq_factor", "low_freq_factor"],
    ),
    (
        lambda: ph.scaled_rope_frequencies(
            8, method="llama3", factor=8.0, original_max_len=64, low_freq_factor=-1.0, high_freq_factor=4.0
        ),
        ValueError,
        ["low_freq_factor", "> 0"],
    ),
    (lambda: ph.scaled_rope_frequencies(8, method="dynamic", factor=2.0), ValueError, ["original_max_len", "dynamic"]),
    (lambda: ph.scaled_rope_frequencies(8, method="dynamic", original_max_len=64), ValueError, ["factor", "dynamic"]),
    (
        lambda: ph.scaled_rope_frequencies(8, method="dynamic", factor=2.0, original_max_len=64, seq_len=0),
        ValueError,
        ["seq_len", ">= 1"],
    ),
    (
        lambda: ph.scaled_rope_frequencies(8, method="dynamic", factor=2.0, original_max_len=64, seq_len=10.5),
        TypeError,
        ["seq_len", "integer"],
    ),
    (
        lambda: ph.scaled_rope_frequencies(8, method="longrope", factor=2.0, original_max_len=64, long_factor=[1] * 4),
        ValueError,
        ["short_factor", "required"],
    ),
    (
        lambda: ph.scaled_rope_frequencies(8, method="longrope", factor=2.0, original_max_len=64, short_factor=[1] * 4),
        ValueError,
        ["long_factor", "required"],
    ),
    (
        lambda: ph.scaled_rope_frequencies(8, method="longrope", factor=2.0, short_factor=[1] * 4, long_factor=[1] * 4),
        ValueError,
        ["original_max_len", "required"],
    ),
    (
        lambda: ph.scaled_rope_frequencies(
            8, method="longrope", original_max_len=64, short_factor=[1] * 4, long_factor=[1] * 4
        ),
        ValueError,
        ["factor", "attention_factor"],
    ),
    (
        lambda: ph.scaled_rope_frequencies(
            8, method="longrope", factor=2.0, original_max_len=64, short_factor=[1] * 3, long_factor=[1] * 4
        ),
        ValueError,
        ["short_factor", "4 factors"],
    ),
    (
        lambda: ph.scaled_rope_frequencies(
            8, method="longrope", factor=2.0, original_max_len=64, short_factor=[1] * 4, long_factor=[[1] * 4]
        ),
        ValueError,
        ["long_factor", "1-D"],
    ),
    (
        lambda: ph.scaled_rope_frequencies(
            8, method="longrope", factor=2.0, original_max_len=64, short_factor=[1] * 4, long_factor=[1, 1, -2, 1]
        ),
        ValueError,
        ["long_factor", "> 0", "entry 2"],
    ),
    (
        lambda: ph.scaled_rope_frequencies(
            8, method="longrope", factor=2.0, original_max_len=64, short_factor=[1] * 4, long_factor=[1, 1, np.nan, 1]
        ),
        ValueError,
        ["long_factor", "finite"],
    ),
    (
        lambda: ph.scaled_rope_frequencies(
            8, method="longrope", factor=2.0, original_max_len=64, short_factor=["a"] * 4, long_factor=[1] * 4
        ),
        TypeError,
        ["short_factor"],
    ),
    (
        lambda: ph.scaled_rope_frequencies(
            8, method="longrope", factor=-2.0, original_max_len=64, short_factor=[1] * 4, long_factor=[1] * 4
        ),
        ValueError,
        ["factor", "> 0"],
    ),
    (
        lambda: ph.scaled_rope_frequencies(
            8,
            method="longrope",
            factor=2.0,
            original_max_len=64,
            short_factor=[1] * 4,
            long_factor=[1] * 4,
            attention_factor=0.0,
        ),
        ValueError,
        ["attention_factor", "> 0"],
    ),
    (
        lambda: ph.scaled_rope_frequencies(
            8, method="longrope", factor=2.0, original_max_len=1, short_factor=[1] * 4, long_factor=[1] * 4
        ),
        ValueError,
        ["original_max_len", ">= 2"],
    ),
    (
        lambda: ph.scaled_rope_frequencies(8, method="linear", factor=2.0, attention_factor=1.2),
        ValueError,
        ["attention_factor", "'yarn'"],
    ),
    (lambda: ph.scaled_rope_frequencies(8, method="linear"), ValueError, ["factor", "required", "linear"]),
    (
        lambda: ph.scaled_rope_frequencies(8, method="yarn", factor=2.0, original_max_len=64, truncate="no"),
        TypeError,
        ["truncate", "True or False"],
    ),
]


# --------------------------------------------------------------------------- any parameters
# A second implementation, one pair at a time in scalar math, transcribed from the
# recipes as Hugging Face transformers' modeling_rope_utils states them
# (_compute_llama3_parameters, _compute_dynamic_ntk_parameters,
# _compute_longrope_parameters), checked for any head width, base, factor and length.

head_dims = st.integers(1, 128).map(lambda half: 2 * half)
bases = st.floats(100.0, 1e7)
factors = st.floats(1.0, 64.0)
lengths = st.integers(16, 262144)


def _theta(i: int, d: int, base: float) -> float:
    return base ** (-(2 * i) / d)


@given(d=head_dims, base=bases, factor=factors, length=lengths, low=st.floats(0.5, 4.0), gap=st.floats(0.5, 8.0))
def test_llama3_matches_the_recipe_pair_by_pair(d, base, factor, length, low, gap):
    high = low + gap
    inv, attn = scaled_rope_frequencies(
        d,
        base=base,
        method="llama3",
        factor=factor,
        original_max_len=length,
        low_freq_factor=low,
        high_freq_factor=high,
    )
    for i in range(d // 2):
        theta = _theta(i, d, base)
        wavelength = 2 * math.pi / theta
        if wavelength < length / high:
            expected = theta
        elif wavelength > length / low:
            expected = theta / factor
        else:
            smooth = (length / wavelength - low) / (high - low)
            expected = (1 - smooth) * theta / factor + smooth * theta
        assert math.isclose(inv[i], expected, rel_tol=1e-12), (i, inv[i], expected)
    assert attn == 1.0


@given(d=head_dims.filter(lambda d: d > 2), base=bases, factor=factors, length=lengths, extra=st.integers(0, 10**6))
def test_dynamic_matches_the_recipe_pair_by_pair(d, base, factor, length, extra):
    seq_len = length + extra
    inv, attn = scaled_rope_frequencies(
        d, base=base, method="dynamic", factor=factor, original_max_len=length, seq_len=seq_len
    )
    current = max(seq_len, length)
    new_base = base * ((factor * current / length) - (factor - 1)) ** (d / (d - 2))
    for i in range(d // 2):
        assert math.isclose(inv[i], _theta(i, d, new_base), rel_tol=1e-12)
    assert attn == 1.0


@given(
    d=head_dims,
    base=bases,
    length=st.integers(16, 65536),
    scale=st.floats(1.0, 64.0),
    seq_len=st.integers(1, 10**6),
    data=st.data(),
)
def test_longrope_matches_the_recipe_pair_by_pair(d, base, length, scale, seq_len, data):
    pair_lists = st.lists(st.floats(0.5, 100.0), min_size=d // 2, max_size=d // 2)
    short, long = data.draw(pair_lists), data.draw(pair_lists)
    inv, attn = scaled_rope_frequencies(
        d,
        base=base,
        method="longrope",
        factor=scale,
        original_max_len=length,
        short_factor=short,
        long_factor=long,
        seq_len=seq_len,
    )
    chosen = long if seq_len > length else short
    for i in range(d // 2):
        assert math.isclose(inv[i], 1.0 / (chosen[i] * base ** (2 * i / d)), rel_tol=1e-12)
    expected_attn = 1.0 if scale <= 1.0 else math.sqrt(1 + math.log(scale) / math.log(length))
    assert math.isclose(attn, expected_attn, rel_tol=1e-12)
