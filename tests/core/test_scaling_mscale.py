"""YaRN's mscale and mscale_all_dim (DeepSeek-V2/V3 configs) in scaled_rope_frequencies.

Expected values are worked out by hand (the arithmetic is in the comments) or come
from a transcription of Hugging Face's ``_compute_yarn_parameters`` written here in
scalar math (``get_mscale`` and the branch that uses it, read in
``src/transformers/modeling_rope_utils.py`` of the forks zucchini-nlp/transformers
at 26892c16b782513fdf938920653228ef63a19d7d and cyyever/transformers at
89539b0672a0cdc52b29f9ea6f1554a179195e40), never from the code under test.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from posenc_helpers import describe, scaled_rope_frequencies, shipped_configs

# ln 40 = 3.6888794541139363 (ln 4 + ln 10 = 1.3862943611198906 + 2.302585092994046).
LN40 = 1.3862943611198906 + 2.302585092994046
DEEPSEEK = dict(method="yarn", factor=40.0, original_max_len=4096)


def _attention(**keys):
    return scaled_rope_frequencies(64, **DEEPSEEK, **keys)[1]


def _hf_attention_factor(factor, attention_factor=None, mscale=None, mscale_all_dim=None):
    """Transcribed from transformers' _compute_yarn_parameters (the attention factor only)."""

    def get_mscale(scale, mscale=1):
        if scale <= 1:
            return 1.0
        return 0.1 * mscale * math.log(scale) + 1.0

    if attention_factor is None:
        if mscale and mscale_all_dim:
            attention_factor = float(get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim))
        else:
            attention_factor = get_mscale(factor)
    return attention_factor


def test_deepseek_v3_keys_give_exactly_one():
    # DeepSeek-V3: mscale = mscale_all_dim = 1.0, so get_mscale(40, 1) / get_mscale(40, 1) = x / x = 1 exactly.
    assert _attention(mscale=1.0, mscale_all_dim=1.0) == 1.0
    # DeepSeek-V2: both 0.707: (0.0707 ln 40 + 1) / (0.0707 ln 40 + 1) = 1 exactly as well.
    assert _attention(mscale=0.707, mscale_all_dim=0.707) == 1.0


@pytest.mark.parametrize(
    "keys",
    [
        {},
        {"mscale": 0.707},
        {"mscale": 0.707, "mscale_all_dim": 0},
        {"mscale": 0.707, "mscale_all_dim": 0.0},
        {"mscale": 0, "mscale_all_dim": 1.0},
        {"mscale_all_dim": 0.707},
    ],
    ids=["none", "mscale-alone", "all-dim-0", "all-dim-0.0", "mscale-0", "all-dim-alone"],
)
def test_one_key_absent_or_zero_falls_back_to_the_paper(keys):
    # transformers tests `if mscale and mscale_all_dim`: with either absent or 0 the factor is
    # get_mscale(40) = 0.1 ln 40 + 1 = 0.36888794541139363 + 1 = 1.3688879454113936,
    # not 0.0707 ln 40 + 1 = 1.2608 for mscale 0.707.
    assert _attention(**keys) == pytest.approx(1.3688879454113936, rel=1e-15)
    assert _attention(**keys) == pytest.approx(0.1 * LN40 + 1.0, rel=1e-15)


def test_different_keys_give_the_ratio():
    # mscale 1.0, mscale_all_dim 0.707: (0.1 ln 40 + 1) / (0.0707 ln 40 + 1)
    #   = 1.3688879454 / (0.2608037774 + 1) = 1.3688879454 / 1.2608037774 = 1.0857264.
    assert _attention(mscale=1.0, mscale_all_dim=0.707) == pytest.approx(1.0857264, rel=1e-7)
    # and the reverse, its reciprocal 0.9210417.
    assert _attention(mscale=0.707, mscale_all_dim=1.0) == pytest.approx(1 / 1.0857264, rel=1e-7)


def test_factor_at_most_one_gives_one_whatever_the_keys():
    # get_mscale(s, m) = 1 for s <= 1, so the ratio is 1 / 1.
    for factor in (0.5, 1.0):
        inv, attn = scaled_rope_frequencies(
            16, method="yarn", factor=factor, original_max_len=64, mscale=1.0, mscale_all_dim=0.5
        )
        assert attn == 1.0


def test_an_explicit_attention_factor_wins():
    # transformers reads attention_factor first and never looks at mscale then.
    assert _attention(attention_factor=1.25, mscale=1.0, mscale_all_dim=0.707) == 1.25
    assert _attention(attention_factor=1.25, mscale=0.707) == 1.25


def test_the_keys_leave_the_frequencies_alone():
    plain, _ = scaled_rope_frequencies(64, **DEEPSEEK)
    with_keys, _ = scaled_rope_frequencies(64, **DEEPSEEK, mscale=1.0, mscale_all_dim=0.707)
    assert np.array_equal(plain, with_keys)


@pytest.mark.parametrize("factor", [1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 40.0, 64.0])
def test_without_the_keys_the_factor_is_bit_for_bit_the_old_formula(factor):
    # The training lab of chapter 11 uses YaRN without mscale: 0.1 * ln(s) + 1, the same bits as before.
    _, attn = scaled_rope_frequencies(32, method="yarn", factor=factor, original_max_len=128)
    assert attn == 0.1 * math.log(factor) + 1.0


def test_deepseek_v3_config_reading_agrees():
    # describe() reads DeepSeek-V3's config (its own code for the ratio); the function with the keys agrees.
    report = describe(shipped_configs()["deepseek-v3"]["config"])
    assert report.attention_factor == _attention(mscale=1.0, mscale_all_dim=1.0) == 1.0


optional_keys = st.one_of(st.none(), st.just(0.0), st.floats(0.01, 2.0))


@given(
    factor=st.floats(0.25, 128.0),
    mscale=optional_keys,
    mscale_all_dim=optional_keys,
    explicit=st.one_of(st.none(), st.floats(0.5, 2.0)),
)
def test_matches_the_transcription_for_any_keys(factor, mscale, mscale_all_dim, explicit):
    _, attn = scaled_rope_frequencies(
        16,
        method="yarn",
        factor=factor,
        original_max_len=256,
        mscale=mscale,
        mscale_all_dim=mscale_all_dim,
        attention_factor=explicit,
    )
    expected = _hf_attention_factor(factor, explicit, mscale, mscale_all_dim)
    assert math.isclose(attn, expected, rel_tol=1e-15)


BAD = [
    ({"method": "linear", "factor": 2.0, "mscale": 1.0}, ValueError, ["mscale", "'yarn'"]),
    ({"method": "proportional", "mscale_all_dim": 1.0}, ValueError, ["mscale_all_dim", "'yarn'"]),
    ({**DEEPSEEK, "mscale": -0.1}, ValueError, ["mscale", ">= 0"]),
    ({**DEEPSEEK, "mscale_all_dim": -1}, ValueError, ["mscale_all_dim", ">= 0"]),
    ({**DEEPSEEK, "mscale": float("nan")}, ValueError, ["mscale", "finite"]),
    ({**DEEPSEEK, "mscale_all_dim": float("inf")}, ValueError, ["mscale_all_dim", "finite"]),
    ({**DEEPSEEK, "mscale": "1.0"}, TypeError, ["mscale", "real number"]),
    ({**DEEPSEEK, "mscale_all_dim": True}, TypeError, ["mscale_all_dim", "real number"]),
]


@pytest.mark.parametrize("kwargs, error, words", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_keys_are_refused_by_name(kwargs, error, words):
    with pytest.raises(error) as caught:
        scaled_rope_frequencies(16, **kwargs)
    for word in words:
        assert word in str(caught.value)
