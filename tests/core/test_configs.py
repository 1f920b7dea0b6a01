"""describe(): a model config's position story, against values worked out by hand."""

import datetime
import json
import math

import numpy as np
import pytest

import posenc_helpers as ph
from posenc_helpers import configs, describe, rope_frequencies, shipped_configs

SHIPPED = shipped_configs()


@pytest.mark.parametrize("key", sorted(SHIPPED))
def test_every_shipped_config_describes(key):
    entry = SHIPPED[key]
    assert entry["config_url"].startswith("https://huggingface.co/") and entry["config_url"].endswith("config.json")
    assert datetime.date.fromisoformat(entry["read_on"]) >= datetime.date(2026, 11, 23) and entry["source"]
    report = describe(entry["config"], name=entry["name"])
    assert report.inv_freq.shape == (report.rotary_dim // 2,)
    assert np.all(np.isfinite(report.inv_freq)) and np.all(report.inv_freq > 0)
    assert report.kept.size + report.in_between.size + report.interpolated.size == report.rotary_dim // 2
    text = str(report)
    assert text.startswith(entry["name"])
    # a config without any RoPE layer (Kimi Linear) has no angles to resolve
    assert report.rope_free or ("float32" in text and "bfloat16" in text)
    # original_max_position_embeddings is the length a rule is anchored to, not a trained length (issue 23)
    assert "trained context" not in text
    if report.anchor_context is not None:
        assert f"anchored at {report.anchor_field} = {report.anchor_context} tokens" in text


def test_llama31_report_by_hand():
    report = describe(SHIPPED["llama-3.1-8b"]["config"])
    # head_dim = 4096 / 32 = 128; the band edges 8192 / 4 = 2048 and 8192 / 1 = 8192 tokens put pairs 0..28 below
    # 2048 (kept), 35..63 above 8192 (divided by 8) and 29..34 between (see test_scaling_recipes for the arithmetic).
    assert (report.head_dim, report.rotary_dim, report.base) == (128, 128, 500000.0)
    assert (report.method, report.factor, report.anchor_context, report.extended_context) == (
        "llama3",
        8.0,
        8192,
        131072,
    )
    assert report.anchor_field == "original_max_position_embeddings"
    assert report.kept.tolist() == list(range(29))
    assert report.in_between.tolist() == list(range(29, 35))
    assert report.interpolated.tolist() == list(range(35, 64))
    assert report.attention_factor == 1.0
    assert report.inv_freq[63] == pytest.approx(500000.0 ** (-63 / 64) / 8, rel=1e-14)
    assert report.wavelengths[0] == pytest.approx(2 * math.pi, rel=1e-15)


def test_llama31_angle_resolution_by_hand():
    # Last position 131071, fastest pair 1 rad/token: angle 131071 = 2**17 - 1, so floor(log2) = 16.
    # float32 has 24 significant bits: spacing 2**(16 - 23) = 2**-7 = 0.0078125 rad.
    # bfloat16 has 8: spacing 2**(16 - 7) = 2**9 = 512 rad (about 81 turns).
    report = describe(SHIPPED["llama-3.1-8b"]["config"])
    assert report.max_angle == 131071.0
    assert report.float32_resolution == 2.0**-7
    assert report.bfloat16_resolution == 512.0


def test_bfloat16_spacing_against_rounding():
    # A second method: for numbers bfloat16 holds exactly (8 significant bits), the next one up is x + spacing
    # and nothing lies between (x + 0.4 spacing rounds back to x), using the package's own rounding.
    for x in (1.0, 3.0, 255.0, 256.0, 255.0 * 512):  # 255 * 512 = 130560: floor(log2) = 16, spacing 512
        spacing = 2.0 ** (math.floor(math.log2(x)) - 7)
        assert float(ph.round_to_bfloat16(x)) == x
        assert float(ph.round_to_bfloat16(x + spacing)) == x + spacing
        assert float(ph.round_to_bfloat16(x + 0.4 * spacing)) == x
        assert describe(_plain(max_len=int(x) + 1)).bfloat16_resolution == spacing


def _plain(**overrides):
    config = {"rope_theta": 10000.0, "head_dim": 8, "max_position_embeddings": 64}
    max_len = overrides.pop("max_len", None)
    if max_len is not None:
        config["max_position_embeddings"] = max_len
    config.update(overrides)
    return config


def test_gpt_oss_yarn_without_truncation():
    # head_dim 64, base 150000, L = 4096: ramp from c(32) = 32 ln(4096 / (64 pi)) / ln 150000 = 32 * 3.0142 / 11.918
    # = 8.093 to c(1) = 32 ln(4096 / (2 pi)) / ln 150000 = 32 * 6.4799 / 11.918 = 17.398, unrounded:
    # pairs 0..8 kept, 18..31 divided by 32, 9..17 blended; attention factor 0.1 ln 32 + 1 = 1.3466.
    report = describe(SHIPPED["gpt-oss-120b"]["config"])
    assert report.kept.tolist() == list(range(9))
    assert report.interpolated.tolist() == list(range(18, 32))
    assert report.in_between.tolist() == list(range(9, 18))
    assert report.attention_factor == pytest.approx(0.1 * math.log(32) + 1, rel=1e-15)
    assert report.attention_factor == pytest.approx(1.3466, abs=1e-4)
    assert report.layer_counts == {"sliding_attention": 18, "full_attention": 18}
    assert report.sliding_window == 128
    low = 32 * math.log(4096 / (64 * math.pi)) / math.log(150000)
    ramp = (12 - low) / (32 * math.log(4096 / (2 * math.pi)) / math.log(150000) - low)
    theta = 150000.0 ** (-12 / 32)
    assert report.inv_freq[12] == pytest.approx(theta * (1 - ramp) + theta / 32 * ramp, rel=1e-13)


# The published config.json of deepseek-ai/DeepSeek-V3, as quoted in NVIDIA/Megatron-LM issue #1418.
DEEPSEEK_V3_PUBLISHED_ROPE_SCALING = {
    "beta_fast": 32,
    "beta_slow": 1,
    "factor": 40,
    "mscale": 1.0,
    "mscale_all_dim": 1.0,
    "original_max_position_embeddings": 4096,
    "type": "yarn",
}


def _hf_yarn_get_mscale(scale, mscale=1):
    # transcribed from transformers 4.56.0 (modeling_rope_utils._compute_yarn_parameters.get_mscale and
    # models/deepseek_v3/modeling_deepseek_v3.yarn_get_mscale)
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def test_deepseek_v3_ships_the_published_fields():
    config = SHIPPED["deepseek-v3"]["config"]
    assert config["rope_scaling"] == DEEPSEEK_V3_PUBLISHED_ROPE_SCALING
    assert (config["max_position_embeddings"], config["rope_theta"]) == (163840, 10000.0)
    assert (config["qk_nope_head_dim"], config["qk_rope_head_dim"]) == (128, 64)


def test_deepseek_v3_rope_part_and_reference_rounding():
    report = describe(SHIPPED["deepseek-v3"]["config"])
    assert (report.head_dim, report.rotary_dim, report.extended_context) == (192, 64, 163840)
    assert (report.anchor_context, report.anchor_field) == (4096, "original_max_position_embeddings")
    # DeepSeek's reference code (inference/model.py) floors and ceils the ramp ends, as HF does:
    # c(32) = 64 ln(4096 / (64 pi)) / (2 ln 1e4) = 10.47, c(1) = 64 ln(4096 / (2 pi)) / (2 ln 1e4) = 22.51.
    c_fast = 64 * math.log(4096 / (64 * math.pi)) / (2 * math.log(10000))
    c_slow = 64 * math.log(4096 / (2 * math.pi)) / (2 * math.log(10000))
    assert (math.floor(c_fast), math.ceil(c_slow)) == (10, 23)
    assert report.kept.tolist() == list(range(11))
    assert report.interpolated.tolist() == list(range(23, 32))


def test_deepseek_v3_logit_scale_of_the_published_config():
    # HF: cos and sin are multiplied by mscale(40, 1) / mscale(40, 1) = 1; DeepseekV3Attention multiplies the
    # softmax scale 1/sqrt(192) by mscale(40, mscale_all_dim = 1)**2 = (0.1 ln 40 + 1)**2 = 1.3689**2 = 1.8739.
    # DeepSeek's reference code: softmax_scale = 192**-0.5 * (0.1 * 1.0 * ln 40 + 1)**2, cos/sin unscaled.
    report = describe(SHIPPED["deepseek-v3"]["config"], name="DeepSeek-V3")
    assert report.attention_factor == 1.0
    hand = (0.1 * math.log(40) + 1) ** 2
    assert hand == pytest.approx(1.8739, abs=1e-4)
    assert report.softmax_scale == pytest.approx(hand, rel=1e-15)
    assert report.softmax_scale == pytest.approx(_hf_yarn_get_mscale(40, 1.0) ** 2, rel=1e-15)
    text = report.to_text()
    assert "multiplied by 1.874" in text and "all 192 query/key features" in text
    assert "not rescaled" not in text  # what describe printed before it read mscale_all_dim
    assert "cos and sin are multiplied" not in text  # the factor on cos/sin is exactly 1


def test_mscale_fields_split_between_cos_sin_and_softmax():
    # DeepSeek-V2-Lite style values: mscale 0.707, mscale_all_dim 0.707 -> cos/sin factor 1, softmax
    # (0.0707 ln 40 + 1)**2; with mscale 1 and mscale_all_dim 0.5 the cos/sin factor is
    # (0.1 ln 40 + 1) / (0.05 ln 40 + 1).
    base = {**SHIPPED["deepseek-v3"]["config"]}
    for mscale, all_dim in ((0.707, 0.707), (1.0, 0.5)):
        config = {
            **base,
            "rope_scaling": {**DEEPSEEK_V3_PUBLISHED_ROPE_SCALING, "mscale": mscale, "mscale_all_dim": all_dim},
        }
        report = describe(config)
        cos_sin = (0.1 * mscale * math.log(40) + 1) / (0.1 * all_dim * math.log(40) + 1)
        assert report.attention_factor == pytest.approx(cos_sin, rel=1e-15)
        assert report.softmax_scale == pytest.approx((0.1 * all_dim * math.log(40) + 1) ** 2, rel=1e-15)
    # Without mscale fields (the package's old, edited DeepSeek config): cos and sin carry 0.1 ln 40 + 1, which
    # scales only the 64 rotated features; the softmax scale is untouched.
    edited = {
        **base,
        "rope_scaling": {k: v for k, v in DEEPSEEK_V3_PUBLISHED_ROPE_SCALING.items() if "mscale" not in k},
    }
    report = describe(edited)
    assert report.attention_factor == pytest.approx(0.1 * math.log(40) + 1, rel=1e-15) and report.softmax_scale == 1.0
    assert "the 64 rotated features" in str(report) and "the other 128 features are not scaled" in str(report)


def test_yarn_factor_against_the_pre_456_ratio():
    # Qwen's documented block: factor 4 with max_position_embeddings = original = 32768. transformers 4.56 uses
    # factor 4; releases before it used 32768 / 32768 = 1 (issue #38224, PR #40320), so describe says so.
    qwen = describe(SHIPPED["qwen2.5-7b-instruct-yarn"]["config"])
    assert qwen.factor == 4.0
    assert "= 1. transformers uses factor from release 4.56 on" in str(qwen) and "#40320" in str(qwen)
    # where factor equals the ratio (DeepSeek-V3: 163840 / 4096 = 40), there is nothing to say
    assert "#40320" not in str(describe(SHIPPED["deepseek-v3"]["config"]))


def test_longrope_note_names_the_switch_and_the_cache():
    text = str(describe(SHIPPED["phi-3.5-mini-instruct"]["config"]))
    assert "longer than 4096 tokens" in text and "keys cached before the switch" in text


def test_qwen25_yarn_block_by_hand():
    # head_dim 3584 / 28 = 128, base 1e6, L = 32768, factor 4. HF's ramp ends, floored and ceiled:
    # c(32) = 64 ln(32768 / (64 pi)) / ln 1e6 = 64 * 5.0937 / 13.8155 = 23.60 -> 23,
    # c(1) = 64 ln(32768 / (2 pi)) / ln 1e6 = 64 * 8.5593 / 13.8155 = 39.65 -> 40.
    report = describe(SHIPPED["qwen2.5-7b-instruct-yarn"]["config"])
    c_fast = 64 * math.log(32768 / (64 * math.pi)) / math.log(1e6)
    c_slow = 64 * math.log(32768 / (2 * math.pi)) / math.log(1e6)
    assert (math.floor(c_fast), math.ceil(c_slow)) == (23, 40)
    assert (report.head_dim, report.factor, report.anchor_context, report.extended_context) == (
        128,
        4.0,
        32768,
        131072,
    )
    assert report.kept.tolist() == list(range(24))  # ramp 0 up to and including pair 23
    assert report.interpolated.tolist() == list(range(40, 64))
    assert report.attention_factor == pytest.approx(0.1 * math.log(4) + 1, rel=1e-15)
    assert report.attention_factor == pytest.approx(1.1386, abs=1e-4)
    assert report.inv_freq[63] == pytest.approx(1e6 ** (-63 / 64) / 4, rel=1e-13)


def test_gemma3_4b_global_and_local_layers_by_hand():
    # Global layers: base 1e6, head_dim 256, every pair divided by 8 (linear). Local layers: base 1e4, unscaled.
    # 34 layers, every 6th global (layers 5, 11, 17, 23, 29): 5 global, 29 local.
    report = describe(SHIPPED["gemma-3-4b"]["config"])
    assert (report.head_dim, report.rotary_dim, report.base, report.local_base) == (256, 256, 1e6, 1e4)
    assert report.layer_counts == {"sliding_attention": 29, "full_attention": 5}
    assert (report.method, report.factor, report.anchor_context) == ("linear", 8.0, None)
    np.testing.assert_allclose(report.inv_freq, [1e6 ** (-i / 128) / 8 for i in range(128)], rtol=1e-13)
    assert report.interpolated.size == 128 and report.kept.size == 0
    # The fastest global pair turns 1/8 rad per token: at position 131071 that is 16383.875 rad, floor(log2) = 13,
    # so float32 spacing 2**(13 - 23) and bfloat16 spacing 2**(13 - 7) = 64 rad.
    assert report.max_angle == 131071 / 8
    assert (report.float32_resolution, report.bfloat16_resolution) == (2.0**-10, 64.0)
    # A local layer's slowest pair: 2 pi 1e4**(254/256) tokens, far beyond its 1024-token window.
    local_slowest = 2 * math.pi * 1e4 ** (254 / 256)
    assert local_slowest == pytest.approx(2 * math.pi / rope_frequencies(256, base=1e4)[-1], rel=1e-12)
    assert local_slowest > 50 * report.sliding_window
    text = str(report)
    assert "29 sliding_attention, 5 full_attention" in text and "base 10000, without rescaling" in text


def test_sliding_window_pattern_counts():
    # 7 layers, pattern 3: layers 2 and 5 are global (the last, 6, is local).
    config = {**_plain(), "num_hidden_layers": 7, "sliding_window_pattern": 3, "sliding_window": 4}
    assert describe(config).layer_counts == {"sliding_attention": 5, "full_attention": 2}
    assert describe({**config, "sliding_window_pattern": 8}).layer_counts == {"sliding_attention": 7}


def test_modernbert_global_and_local_bases():
    # 22 layers, global_attn_every_n_layers 3: layers 0, 3, ..., 21 are global, ceil(22 / 3) = 8 of them.
    report = describe(SHIPPED["modernbert-base"]["config"])
    assert (report.head_dim, report.base, report.local_base) == (64, 160000.0, 10000.0)
    assert report.layer_counts == {"sliding_attention": 14, "full_attention": 8}
    assert len(range(0, 22, 3)) == 8
    np.testing.assert_allclose(report.inv_freq, [160000.0 ** (-i / 32) for i in range(32)], rtol=1e-13)
    assert report.sliding_window is None  # an encoder's window is two-sided: reported in words
    assert any("at most 64 positions away" in note for note in report.notes)


def test_smollm3_nope_layers_from_interval_and_list():
    # no_rope_layer_interval 4: layer i has no RoPE when (i + 1) % 4 == 0, i.e. 3, 7, ..., 35: 9 of 36 layers.
    report = describe(SHIPPED["smollm3-3b"]["config"])
    assert report.nope_layers == (3, 7, 11, 15, 19, 23, 27, 31, 35)
    flags = [1, 1, 1, 0] * 9  # the explicit list form: 1 uses RoPE, 0 is NoPE
    explicit = {k: v for k, v in SHIPPED["smollm3-3b"]["config"].items() if k != "no_rope_layer_interval"}
    assert describe({**explicit, "no_rope_layers": flags}).nope_layers == report.nope_layers
    assert (report.method, report.base, report.extended_context) == ("default", 5e6, 65536)
    assert "9 layers use no position encoding" in str(report)
    assert describe(_plain()).nope_layers == ()


def test_gpt_neox_20b_partial_rotary_by_hand():
    # head_dim 6144 / 64 = 96; int(96 * 0.25) = 24 rotated features, 12 pairs at 10000**(-2i / 24).
    report = describe(SHIPPED["gpt-neox-20b"]["config"])
    # plain RoPE is anchored to nothing: 2048 is the context the config provides
    assert (report.head_dim, report.rotary_dim, report.anchor_context, report.extended_context) == (96, 24, None, 2048)
    np.testing.assert_allclose(report.inv_freq, [10000.0 ** (-i / 12) for i in range(12)], rtol=1e-13)
    assert describe(SHIPPED["pythia-6.9b"]["config"]).rotary_dim == 32


def test_unused_sliding_window_is_ignored():
    # Qwen2 configs carry sliding_window with use_sliding_window false: no layer slides.
    assert describe({**_plain(), "sliding_window": 16, "use_sliding_window": False}).sliding_window is None
    assert describe({**_plain(), "sliding_window": 16}).sliding_window == 16


def test_longrope_attention_factor_by_hand():
    # Phi-3's rule: sqrt(1 + ln(s) / ln(L)) with s = 131072 / 4096 = 32 and L = 4096: ln 32 / ln 4096 = 5 / 12.
    config = {
        "hidden_size": 16,
        "num_attention_heads": 2,
        "rope_theta": 10000.0,
        "max_position_embeddings": 131072,
        "original_max_position_embeddings": 4096,
        "rope_scaling": {"type": "longrope", "short_factor": [1.0] * 4, "long_factor": [1.0, 1.5, 2.0, 3.0]},
    }
    report = describe(config)
    assert math.log(32) / math.log(4096) == pytest.approx(5 / 12, rel=1e-15)
    assert report.attention_factor == pytest.approx(math.sqrt(1 + math.log(32) / math.log(4096)), rel=1e-14)


def test_phi35_mini_longrope_by_hand():
    # head_dim 3072 / 32 = 96: 48 pairs, each with its own factor; s = 131072 / 4096 = 32.
    entry = SHIPPED["phi-3.5-mini-instruct"]
    scaling = entry["config"]["rope_scaling"]
    long_factor, short_factor = scaling["long_factor"], scaling["short_factor"]
    assert len(long_factor) == len(short_factor) == 48
    assert (short_factor[0], short_factor[-1], long_factor[0], long_factor[-1]) == (
        1.0,
        2.8399994373321533,
        1.0800000429153442,
        64.83999633789062,
    )
    report = describe(entry["config"], name=entry["name"])
    assert (report.head_dim, report.rotary_dim, report.factor) == (96, 96, 32.0)
    assert (report.anchor_context, report.extended_context) == (4096, 131072)
    assert report.attention_factor == pytest.approx(math.sqrt(17 / 12), rel=1e-15)  # 1 + 5/12
    # at the longest context the long factors divide theta_i = 10000^(-2i/96), pair by pair
    assert report.inv_freq[0] == pytest.approx(1 / 1.0800000429153442, rel=1e-15)
    assert report.inv_freq[47] == pytest.approx(10000.0 ** (-94 / 96) / 64.83999633789062, rel=1e-13)
    # no pair keeps its frequency (the smallest long factor is 1.08); the factors of pairs 20 on reach 32
    assert report.kept.size == 0
    assert report.interpolated.tolist() == [i for i, f in enumerate(long_factor) if f >= 32]
    assert report.interpolated.tolist() == list(range(20, 48))
    assert "no shorter than the longest context (131072)" in report.to_text()  # window 262144


def test_old_type_key_and_v5_rope_parameters_agree():
    old = {**_plain(max_len=4096), "rope_scaling": {"type": "linear", "factor": 4.0}}
    new = {
        "head_dim": 8,
        "max_position_embeddings": 4096,
        "rope_parameters": {"rope_type": "linear", "factor": 4.0, "rope_theta": 10000.0},
    }
    a, b = describe(old), describe(new)
    np.testing.assert_array_equal(a.inv_freq, b.inv_freq)
    np.testing.assert_allclose(a.inv_freq, rope_frequencies(8) / 4, rtol=1e-15)
    assert a.interpolated.tolist() == [0, 1, 2, 3] and a.anchor_context is None


def test_per_layer_type_rope_parameters():
    # Gemma 3-like (values made up for the test): global layers linear x8 at base 1e6, local layers base 1e4.
    config = {
        "head_dim": 16,
        "max_position_embeddings": 1024,
        "sliding_window": 32,
        "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
        "rope_parameters": {
            "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6},
            "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
        },
    }
    report = describe(config)
    assert (report.method, report.base, report.local_base, report.factor) == ("linear", 1e6, 1e4, 8.0)
    assert report.layer_counts == {"sliding_attention": 5, "full_attention": 1}
    np.testing.assert_allclose(report.inv_freq, rope_frequencies(16, base=1e6) / 8, rtol=1e-15)
    text = str(report)
    assert "5 sliding_attention, 1 full_attention" in text and "base 10000" in text


def test_gemma3_style_local_base_field():
    config = {**_plain(), "rope_local_base_freq": 10000.0, "rope_theta": 1e6}
    assert describe(config).local_base == 10000.0


def test_partial_rotary_gpt_neox_fields():
    # Pythia-style field names (values made up): hidden 512 / 8 heads = 64, rotary_pct 0.25 -> 16 rotated features.
    config = {
        "hidden_size": 512,
        "num_attention_heads": 8,
        "rotary_pct": 0.25,
        "rotary_emb_base": 10000,
        "max_position_embeddings": 2048,
    }
    report = describe(config)
    assert (report.head_dim, report.rotary_dim) == (64, 16)
    np.testing.assert_allclose(report.inv_freq, [10000 ** (-i / 8) for i in range(8)], rtol=1e-14)


def test_mrope_is_plain_rope_with_sections():
    config = {**_plain(), "rope_scaling": {"type": "mrope", "mrope_section": [1, 1, 2]}}
    report = describe(config)
    assert report.method == "default" and report.mrope_section == (1, 1, 2)
    assert "time, height and width" in str(report)


def test_longrope_config_phi3_style():
    # Phi-3 style (lists made up): original 4096 at top level, no factor -> 131072 / 4096 = 32,
    # attention factor sqrt(1 + ln 32 / ln 4096) = sqrt(17 / 12).
    config = {
        "head_dim": 8,
        "rope_theta": 10000.0,
        "max_position_embeddings": 131072,
        "original_max_position_embeddings": 4096,
        "rope_scaling": {"type": "longrope", "short_factor": [1, 1, 1, 1], "long_factor": [1, 2, 4, 40]},
    }
    report = describe(config)
    assert report.factor == 32.0 and report.anchor_context == 4096
    assert report.attention_factor == pytest.approx(math.sqrt(17 / 12), rel=1e-14)
    np.testing.assert_allclose(report.inv_freq, [1.0, 0.05, 0.0025, 0.000025], rtol=1e-14)
    assert report.kept.tolist() == [0] and report.interpolated.tolist() == [3] and report.in_between.tolist() == [1, 2]


def test_text_config_is_read():
    report = describe({"model_type": "vlm", "text_config": _plain()})
    assert report.rotary_dim == 8 and report.name == "vlm"


def test_cli_prints_and_returns_zero(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(SHIPPED["llama-3.1-8b"]["config"]))
    assert configs.main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "llama3 with factor 8" in out and "pairs 0-28" in out and "512 rad" in out
    assert configs.main(["gpt-oss-120b"]) == 0
    assert "gpt-oss-120b" in capsys.readouterr().out


def test_cli_rejects_malformed_files(tmp_path, capsys):
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert configs.main([str(broken)]) == 1
    assert "not valid JSON" in capsys.readouterr().err
    assert configs.main([str(tmp_path / "missing.json")]) == 1
    assert "cannot read" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**_plain(), "rope_scaling": {"rope_type": "su", "factor": 2.0}}))
    assert configs.main([str(bad)]) == 1
    assert "rope_type" in capsys.readouterr().err
    assert configs.main([]) == 2
    assert "usage" in capsys.readouterr().err
    for flag in ("-h", "--help"):  # help is asked for, not a file called --help
        assert configs.main([flag]) == 0
        out = capsys.readouterr().out
        assert out.startswith("usage: python -m posenc_helpers.configs") and "phi-3.5-mini-instruct" in out


def test_module_runs_as_a_script():
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "posenc_helpers.configs", "deepseek-v3"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0 and "DeepSeek-V3" in result.stdout


# Run by tests/core/test_bad_input.py with every other module's cases.
BAD_INPUT_CASES = [
    (lambda: ph.describe([("rope_theta", 1.0)]), TypeError, ["config", "mapping"]),
    (lambda: ph.describe({**_plain(), "rope_scaling": {"rope_type": "su"}}), ValueError, ["rope_type", "'llama3'"]),
    (lambda: ph.describe({**_plain(), "head_dim": 7}), ValueError, ["head_dim", "even"]),
    (lambda: ph.describe({**_plain(), "head_dim": 8.0}), TypeError, ["head_dim", "integer"]),
    (lambda: ph.describe({"rope_theta": 1e4, "max_position_embeddings": 64}), ValueError, ["head_dim", "hidden_size"]),
    (lambda: ph.describe({"rope_theta": 1e4, "head_dim": 8}), ValueError, ["max_position_embeddings"]),
    (lambda: ph.describe({**_plain(), "rope_theta": -1.0}), ValueError, ["rope_theta", "> 0"]),
    (lambda: ph.describe({**_plain(), "rope_theta": "1e4"}), TypeError, ["rope_theta"]),
    (lambda: ph.describe({**_plain(), "partial_rotary_factor": 1.5}), ValueError, ["partial_rotary_factor"]),
    (lambda: ph.describe({**_plain(), "partial_rotary_factor": 0.375}), ValueError, ["rotary width", "even"]),
    (
        lambda: ph.describe({**_plain(), "rope_scaling": {"rope_type": "linear"}}),
        ValueError,
        ["rope_scaling.factor", "required"],
    ),
    (
        lambda: ph.describe(
            {
                **_plain(),
                "rope_scaling": {
                    "rope_type": "llama3",
                    "factor": 8.0,
                    "high_freq_factor": 4.0,
                    "original_max_position_embeddings": 16,
                },
            }
        ),
        ValueError,
        ["rope_scaling.low_freq_factor", "required", "llama3"],
    ),
    (
        lambda: ph.describe(
            {
                **_plain(),
                "rope_scaling": {
                    "rope_type": "longrope",
                    "short_factor": [1] * 4,
                    "original_max_position_embeddings": 16,
                },
            }
        ),
        ValueError,
        ["rope_scaling.long_factor", "required"],
    ),
    (
        lambda: ph.describe(
            {
                **_plain(),
                "rope_scaling": {
                    "rope_type": "longrope",
                    "short_factor": [1] * 3,
                    "long_factor": [1] * 4,
                    "original_max_position_embeddings": 16,
                },
            }
        ),
        ValueError,
        ["rope_scaling", "short_factor", "4 factors"],
    ),
    (
        lambda: ph.describe({**_plain(), "rope_scaling": {"rope_type": "yarn", "factor": -4.0}}),
        ValueError,
        ["rope_scaling.factor", "> 0"],
    ),
    (
        lambda: ph.describe({**_plain(), "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "truncate": "no"}}),
        TypeError,
        ["truncate"],
    ),
    (lambda: ph.describe({**_plain(), "rope_scaling": [1, 2]}), TypeError, ["rope_scaling", "mapping"]),
    (lambda: ph.describe({**_plain(), "sliding_window": 0}), ValueError, ["sliding_window", ">= 1"]),
    (
        lambda: ph.describe({**_plain(), "original_max_position_embeddings": "8k"}),
        TypeError,
        ["original_max_position_embeddings"],
    ),
    (lambda: ph.describe(_plain(), name=3), TypeError, ["name", "string"]),
    (
        lambda: ph.describe({**_plain(), "sliding_window_pattern": 6}),
        ValueError,
        ["num_hidden_layers", "sliding_window_pattern"],
    ),
    (
        lambda: ph.describe({**_plain(), "num_hidden_layers": 6, "global_attn_every_n_layers": 0}),
        ValueError,
        ["global_attn_every_n_layers", ">= 1"],
    ),
    (lambda: ph.describe({**_plain(), "no_rope_layers": [1, 2]}), ValueError, ["no_rope_layers", "0 (NoPE)"]),
    (lambda: ph.describe({**_plain(), "no_rope_layers": "1101"}), TypeError, ["no_rope_layers", "list"]),
    (
        lambda: ph.describe({**_plain(), "no_rope_layer_interval": 4}),
        ValueError,
        ["num_hidden_layers", "no_rope_layer_interval"],
    ),
    (lambda: ph.shipped_configs()["no-such-model"], KeyError, ["no-such-model"]),
    (
        lambda: ph.describe(
            {
                **_gemma4_like(),
                "rope_parameters": {"rope_type": "proportional", "rope_theta": 1e6, "partial_rotary_factor": 1.5},
            }
        ),
        ValueError,
        ["partial_rotary_factor", "(0, 1]"],
    ),
    (
        lambda: ph.describe(
            {
                **_gemma4_like(),
                "rope_parameters": {"rope_type": "proportional", "rope_theta": 1e6, "partial_rotary_factor": 0.01},
            }
        ),
        ValueError,
        ["partial_rotary_factor", "no pair"],
    ),
]


# ---------------------------------------------------------------- issue 26: v5 schema, p-RoPE, hybrids


def _gemma4_like(**overrides):
    """A small config in the v5 schema of Gemma 4 (per-layer-type rope_parameters, wider global heads),
    the layout of transformers' Gemma 4 test config; sizes shrunk so the numbers can be worked by hand."""
    return {
        "head_dim": 32,
        "global_head_dim": 64,
        "max_position_embeddings": 64,
        "sliding_window": 16,
        "layer_types": ["sliding_attention"] * 3 + ["full_attention"],
        "rope_parameters": {
            "full_attention": {"partial_rotary_factor": 0.25, "rope_theta": 1e6, "rope_type": "proportional"},
            "sliding_attention": {"rope_theta": 1e4, "rope_type": "default"},
        },
        **overrides,
    }


def test_proportional_v5_config_by_hand():
    report = describe(_gemma4_like(), name="toy gemma 4")
    # global heads of 64: int(0.25 * 64 // 2) = 8 pairs turn, at 1e6**(-2i/64) for i = 0..7
    assert (report.method, report.head_dim, report.rotary_dim, report.base) == ("proportional", 64, 16, 1e6)
    np.testing.assert_allclose(report.inv_freq, [1e6 ** (-2 * i / 64) for i in range(8)], rtol=1e-14)
    assert report.local_base == 1e4 and report.parameters_field == "rope_parameters.full_attention"
    text = str(report)
    assert "8 of 32 pairs turn, at base^(-2i/64)" in text and "feature i and i + 32" in text
    assert "No rescaling" in text and "Read from rope_parameters.full_attention" in text
    assert report.layer_counts == {"sliding_attention": 3, "full_attention": 1}


def test_both_schemas_read_the_same_numbers_and_say_which():
    old = {
        "head_dim": 8,
        "max_position_embeddings": 64,
        "rope_theta": 1e4,
        "rope_scaling": {"rope_type": "linear", "factor": 4.0},
    }
    new = {
        "head_dim": 8,
        "max_position_embeddings": 64,
        "rope_parameters": {"rope_type": "linear", "factor": 4.0, "rope_theta": 1e4},
    }
    a, b = describe(old), describe(new)
    np.testing.assert_array_equal(a.inv_freq, b.inv_freq)
    np.testing.assert_allclose(a.inv_freq, [0.25, 0.025, 0.0025, 0.00025], rtol=1e-13)
    assert (a.parameters_field, b.parameters_field) == ("rope_scaling", "rope_parameters")
    assert "transformers v5 schema" in str(b) and "transformers v5 schema" not in str(a)
    assert describe({"head_dim": 8, "max_position_embeddings": 64, "rope_theta": 1e4}).parameters_field == "none"


def test_no_base_warns_and_says_it_was_assumed():
    with pytest.warns(UserWarning, match="no RoPE base"):
        report = describe({"head_dim": 8, "max_position_embeddings": 64})
    assert report.base == 10000.0 and "assumed, not read" in str(report)
    with pytest.warns(UserWarning, match="rope_parameters"):  # v5: a base inside the parameters is looked for first
        describe({"head_dim": 8, "max_position_embeddings": 64, "rope_parameters": {"rope_type": "default"}})


def test_llama4_style_hybrid_is_explained():
    config = {
        "head_dim": 128,
        "max_position_embeddings": 1048576,
        "rope_theta": 500000.0,
        "num_hidden_layers": 8,
        "no_rope_layers": [1, 1, 1, 0, 1, 1, 1, 0],
        "attention_chunk_size": 8192,
        "attn_temperature_tuning": True,
        "floor_scale": 8192,
        "attn_scale": 0.1,
    }
    report = describe(config, name="toy llama 4")
    assert report.nope_layers == (3, 7)  # 0 marks NoPE
    text = str(report)
    assert "a 1 marks a layer that uses RoPE" in text
    assert "within chunks of 8192 tokens" in text
    assert "1 + 0.1 ln(floor((t + 1) / 8192) + 1)" in text and "1 up to position 8190" in text


def test_each_rope_type_has_one_reader():
    from posenc_helpers.configs.rescaling import RESCALING_READERS, ROPE_TYPES

    assert ROPE_TYPES == ("default", "linear", "dynamic", "yarn", "llama3", "longrope", "proportional")
    # one reader per type, each its own function (issue 49: this compared a set with a tuple built from it)
    assert {rope_type: reader.__name__ for rope_type, reader in RESCALING_READERS.items()} == {
        "default": "_read_default",
        "linear": "_read_linear",
        "dynamic": "_read_dynamic",
        "yarn": "_read_yarn",
        "llama3": "_read_llama3",
        "longrope": "_read_longrope",
        "proportional": "_read_proportional",
    }


def test_explain_is_the_reports_text_and_refuses_anything_else():
    from posenc_helpers.configs.report import explain

    report = describe(_plain())
    assert explain(report) == str(report) == report.to_text()
    with pytest.raises(TypeError, match="report must be a PositionReport"):
        explain({"rope_theta": 10000.0})
