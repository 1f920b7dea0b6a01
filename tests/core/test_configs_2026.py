"""The shipped configs of 2025-2026 (chapter 13): what describe reads, against values worked out by hand.

Each number below is worked from the primary source named in the entry's ``source`` field (Meta's reference code,
transformers' conversion scripts, DeepSeek's config and reference code, Moonshot's tech report, OpenAI's reference
code, the Qwen3 technical report, Qwen's documentation and Alibaba's training scripts), not taken from describe's
output.
"""

import copy
import json
import math
import warnings

import numpy as np
import pytest

from posenc_helpers import describe, scaled_rope_frequencies, shipped_configs
from posenc_helpers.configs import main

SHIPPED = shipped_configs()
CHAPTER_12 = [
    "llama-3.1-8b",
    "gpt-oss-120b",
    "deepseek-v3",
    "qwen2.5-7b-instruct-yarn",
    "phi-3.5-mini-instruct",
    "gemma-3-4b",
    "smollm3-3b",
    "modernbert-base",
    "gpt-neox-20b",
    "pythia-6.9b",
]
CHAPTER_13 = [
    "llama-4-scout-17b-16e",
    "gemma-4-31b",
    "deepseek-v3.2",
    "kimi-linear-48b-a3b",
    "gpt-oss-20b",
    "qwen3-8b-yarn",
    "qwen3-next-80b-a3b",
    "qwen3-vl-8b",
]


def _report(key):
    return describe(SHIPPED[key]["config"], name=SHIPPED[key]["name"])


def _to_v5(config):
    """The same config in the transformers v5 schema, by hand: rope_theta moves into rope_parameters."""
    config = copy.deepcopy(config)
    text = config.get("text_config", config)
    parameters = dict(text.pop("rope_scaling", None) or {"rope_type": "default"})
    parameters["rope_theta"] = text.pop("rope_theta")
    text["rope_parameters"] = parameters
    return config


def test_every_entry_names_its_chapter():
    assert [key for key, entry in SHIPPED.items() if entry["chapter"] == 12] == CHAPTER_12
    assert [key for key, entry in SHIPPED.items() if entry["chapter"] == 13] == CHAPTER_13
    assert all(SHIPPED[key]["read_on"] == "2026-11-26" for key in CHAPTER_13)
    assert all(
        list(entry) == ["name", "config_url", "read_on", "chapter", "source", "notes", "config"]
        for entry in SHIPPED.values()
    )


def test_llama4_scout_by_hand():
    report = _report("llama-4-scout-17b-16e")
    # Meta's apply_scaling with factor 16, low = high = 1, L = 8192: keep a pair whose wavelength
    # 2 pi 500000**(i/64) is below 8192, divide the others by 16. 2 pi 500000**(i/64) < 8192
    # <=> i < 64 ln(8192 / 2 pi) / ln 500000 = 64 * 7.1731 / 13.1224 = 34.98: pairs 0..34 kept, 35..63 divided.
    assert (report.head_dim, report.rotary_dim, report.base, report.factor) == (128, 128, 500000.0, 16.0)
    assert report.kept.tolist() == list(range(35))
    assert report.interpolated.tolist() == list(range(35, 64))
    assert report.in_between.size == 0
    assert report.inv_freq[63] == pytest.approx(500000.0 ** (-63 / 64) / 16, rel=1e-14)
    assert (report.anchor_context, report.extended_context) == (8192, 262144)
    # nope_layer_interval 4 over 48 layers: layer i is NoPE when (i + 1) % 4 == 0
    assert report.nope_layers == (3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47)
    text = str(report)
    assert "chunks of 8192 tokens" in text and "1 + 0.1 ln(floor((t + 1) / 8192) + 1)" in text


def test_llama3_rule_with_equal_band_factors_is_a_step():
    # low_freq_factor == high_freq_factor (Llama 4 Scout): no blended band; wavelength > L / 1 is divided.
    inv, attention = scaled_rope_frequencies(
        8, base=10000.0, method="llama3", factor=16.0, original_max_len=64, low_freq_factor=1.0, high_freq_factor=1.0
    )
    # wavelengths 2 pi * 10000**(i/4): 6.28, 62.8, 628, 6283 tokens: the last two exceed 64
    expected = np.array([1.0, 0.1, 0.01 / 16, 0.001 / 16])
    np.testing.assert_allclose(inv, expected, rtol=1e-13)
    assert attention == 1.0
    with pytest.raises(ValueError, match="high_freq_factor"):
        scaled_rope_frequencies(
            8, base=1e4, method="llama3", factor=2.0, original_max_len=64, low_freq_factor=2.0, high_freq_factor=1.0
        )


def test_gemma4_global_layers_rotate_64_of_256_pairs():
    report = _report("gemma-4-31b")
    # global_head_dim 512, partial_rotary_factor 0.25: int(0.25 * 512 // 2) = 64 pairs turn, at 1e6**(-2i / 512)
    assert (report.head_dim, report.rotary_dim, report.method) == (512, 128, "proportional")
    i = np.arange(64)
    np.testing.assert_allclose(report.inv_freq, 1e6 ** (-2.0 * i / 512), rtol=1e-13)
    assert report.parameters_field == "rope_parameters.full_attention"
    assert (report.base, report.local_base, report.sliding_window) == (1e6, 1e4, 1024)
    assert report.layer_counts == {"sliding_attention": 50, "full_attention": 10}  # 5:1 over 60 layers
    assert "64 of 256 pairs turn" in str(report)


def test_deepseek_v32_has_v3s_rotary_slice():
    v32, v3 = _report("deepseek-v3.2"), _report("deepseek-v3")
    # qk_rope_head_dim 64 beside qk_nope_head_dim 128: 32 pairs rotate, 192 features per head
    assert (v32.head_dim, v32.rotary_dim) == (192, 64)
    np.testing.assert_array_equal(v32.inv_freq, v3.inv_freq)
    assert v32.softmax_scale == pytest.approx((0.1 * math.log(40) + 1) ** 2, rel=1e-15)
    assert SHIPPED["deepseek-v3.2"]["config"]["index_head_dim"] == 128


def test_kimi_linear_has_no_rope_layer():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no base stated, but none is used: no warning
        report = _report("kimi-linear-48b-a3b")
    assert report.rope_free and report.extended_context == 1048576
    text = str(report)
    assert text.splitlines()[0] == "Kimi Linear 48B-A3B: no attention layer applies a positional encoding (NoPE)."
    assert "RoPE base 10000" not in text and "rotated (qk_rope_head_dim)" not in text
    with pytest.raises(TypeError, match="mla_use_nope"):
        describe({"head_dim": 8, "max_position_embeddings": 16, "mla_use_nope": 1})


def test_gpt_oss_20b_shares_the_120bs_positions():
    small, large = _report("gpt-oss-20b"), _report("gpt-oss-120b")
    np.testing.assert_array_equal(small.inv_freq, large.inv_freq)
    assert small.attention_factor == pytest.approx(0.1 * math.log(32) + 1, rel=1e-12)  # YaRN's 1.3466
    assert small.sliding_window == 128 and small.layer_counts == {}  # depth not sourced: no layer list


@pytest.mark.parametrize("key", ["llama-4-scout-17b-16e", "deepseek-v3.2", "gpt-oss-20b"])
def test_both_schemas_read_alike(key):
    old, new = describe(SHIPPED[key]["config"]), describe(_to_v5(SHIPPED[key]["config"]))
    assert (old.parameters_field, new.parameters_field) == ("rope_scaling", "rope_parameters")
    np.testing.assert_array_equal(old.inv_freq, new.inv_freq)
    assert (old.base, old.factor, old.attention_factor, old.nope_layers) == (
        new.base,
        new.factor,
        new.attention_factor,
        new.nope_layers,
    )


def test_gemma4_from_a_file_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(SHIPPED["gemma-4-31b"]["config"]), encoding="utf-8")
    assert main([str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("gemma4_text: positions by rotary embedding (RoPE).")
    assert "128 of 512 features per head are rotated, in 64 frequency pairs" in out


def test_qwen3_8b_yarn_by_hand():
    report = _report("qwen3-8b-yarn")
    # Qwen3 report section 3.2: base 1,000,000 (ABF); head_dim 128 = 4096 / 32 heads: 64 pairs, all rotated
    assert (report.head_dim, report.rotary_dim, report.base, report.method, report.factor) == (
        128,
        128,
        1e6,
        "yarn",
        4.0,
    )
    assert (report.anchor_context, report.extended_context, report.parameters_field) == (32768, 131072, "rope_scaling")
    # YaRN ramp (beta_fast 32, beta_slow 1, rounded ends): the pair index where a pair makes r turns over L = 32768
    # is 128 ln(32768 / (2 pi r)) / (2 ln 1e6): r = 32 gives 128 * 5.0904 / 27.631 = 23.58 -> floor 23,
    # r = 1 gives 128 * 8.5561 / 27.631 = 39.63 -> ceil 40. Ramp (i - 23) / (40 - 23): pairs 0..23 kept,
    # 40..63 divided by 4, 24..39 blended.
    i = np.arange(64)
    low = math.floor(128 * math.log(32768 / (32 * 2 * math.pi)) / (2 * math.log(1e6)))
    high = math.ceil(128 * math.log(32768 / (1 * 2 * math.pi)) / (2 * math.log(1e6)))
    assert (low, high) == (23, 40)
    ramp = np.clip((i - low) / (high - low), 0, 1)
    plain = 1e6 ** (-2.0 * i / 128)
    expected = plain / 4 * ramp + plain * (1 - ramp)
    np.testing.assert_allclose(report.inv_freq, expected, rtol=1e-12)
    assert report.kept.tolist() == list(range(24)) and report.interpolated.tolist() == list(range(40, 64))
    assert report.attention_factor == pytest.approx(0.1 * math.log(4) + 1, rel=1e-12)  # 1.1386
    assert report.nope_layers == () and report.layer_counts == {}


def test_qwen3_next_partial_rotary_is_ordinary():
    report = _report("qwen3-next-80b-a3b")
    # head_dim 256, partial_rotary_factor 0.25: 64 rotated features, 32 pairs, exponent over the 64 rotated ones
    # (ordinary partial rotary), unlike Gemma 4's proportional rule with its full-width denominator
    assert (report.head_dim, report.rotary_dim, report.base, report.method) == (256, 64, 1e7, "default")
    i = np.arange(32)
    np.testing.assert_allclose(report.inv_freq, 1e7 ** (-2.0 * i / 64), rtol=1e-13)
    assert report.inv_freq[1] == pytest.approx(10 ** (-7 / 32), rel=1e-13)  # not 10**(-7/128), p-RoPE's
    assert report.extended_context == 262144 and report.factor is None
    # full_attention_interval 4 over 48 layers: layers 3, 7, ..., 47 attend, 36 Gated DeltaNet layers between
    assert report.layer_counts == {"linear_attention": 36, "full_attention": 12}
    assert "The 36 linear_attention layers (linear attention such as Gated DeltaNet) apply no RoPE" in str(report)


def test_qwen3_vl_interleaved_mrope():
    report = _report("qwen3-vl-8b")
    assert (report.head_dim, report.rotary_dim, report.base) == (128, 128, 5e6)
    assert report.parameters_field == "rope_parameters" and report.extended_context == 262144
    assert report.mrope_section == (24, 20, 20) and sum(report.mrope_section) == 128 // 2
    # HF's interleaving: height takes pairs 1, 4, ..., 58 (20 of them), width 2, 5, ..., 59 (20), time the rest:
    # 0, 3, ..., 57 (20) and 60..63 (4) = 24 pairs
    height, width = list(range(1, 60, 3)), list(range(2, 60, 3))
    time = [j for j in range(64) if j not in height + width]
    assert (len(time), len(height), len(width)) == (24, 20, 20) and time[-5:] == [57, 60, 61, 62, 63]
    assert "pair j follows height when j % 3 == 1 and j < 60, width when j % 3 == 2 and j < 60" in str(report)
    config = copy.deepcopy(SHIPPED["qwen3-vl-8b"]["config"])
    config["text_config"]["rope_parameters"]["mrope_interleaved"] = "yes"
    with pytest.raises(TypeError, match="mrope_interleaved"):
        describe(config)
    config["text_config"]["rope_parameters"].update(mrope_interleaved=True, mrope_section=[32, 32])
    with pytest.raises(ValueError, match="mrope_section must give 3 counts"):
        describe(config)
    # three counts that do not interleave over 64 pairs: 30 height pairs would need j < 90
    config["text_config"]["rope_parameters"].update(mrope_interleaved=True, mrope_section=[10, 30, 24])
    with pytest.raises(ValueError, match="mrope_section"):
        describe(config)
    config["text_config"]["rope_parameters"].update(mrope_interleaved=False, mrope_section=[24, 20, 20])
    assert "Interleaved" not in str(describe(config))


def test_qwen3_8b_reads_alike_in_the_v5_schema():
    old, new = describe(SHIPPED["qwen3-8b-yarn"]["config"]), describe(_to_v5(SHIPPED["qwen3-8b-yarn"]["config"]))
    assert (old.parameters_field, new.parameters_field) == ("rope_scaling", "rope_parameters")
    np.testing.assert_array_equal(old.inv_freq, new.inv_freq)
    assert (old.base, old.factor, old.attention_factor) == (new.base, new.factor, new.attention_factor)
