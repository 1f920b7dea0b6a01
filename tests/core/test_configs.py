"""describe(): a model config's position story, against values worked out by hand."""

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
    assert entry["read_on"] == "2026-11-23" and entry["source"]
    report = describe(entry["config"], name=entry["name"])
    assert report.inv_freq.shape == (report.rotary_dim // 2,)
    assert np.all(np.isfinite(report.inv_freq)) and np.all(report.inv_freq > 0)
    assert report.kept.size + report.in_between.size + report.interpolated.size == report.rotary_dim // 2
    text = str(report)
    assert text.startswith(entry["name"]) and "float32" in text and "bfloat16" in text


def test_llama31_report_by_hand():
    report = describe(SHIPPED["llama-3.1-8b"]["config"])
    # head_dim = 4096 / 32 = 128; the band edges 8192 / 4 = 2048 and 8192 / 1 = 8192 tokens put pairs 0..28 below
    # 2048 (kept), 35..63 above 8192 (divided by 8) and 29..34 between (see test_scaling_recipes for the arithmetic).
    assert (report.head_dim, report.rotary_dim, report.base) == (128, 128, 500000.0)
    assert (report.method, report.factor, report.trained_context, report.extended_context) == (
        "llama3",
        8.0,
        8192,
        131072,
    )
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


def test_deepseek_v3_rope_part_and_reference_rounding():
    report = describe(SHIPPED["deepseek-v3"]["config"])
    assert (report.head_dim, report.rotary_dim, report.extended_context) == (192, 64, 163840)
    # DeepSeek's reference rounds the ramp ends; HF floors/ceils. Here both give 10 and 23:
    # c(32) = 64 ln(4096 / (64 pi)) / (2 ln 1e4) = 10.47, c(1) = 64 ln(4096 / (2 pi)) / (2 ln 1e4) = 22.51.
    c_fast = 64 * math.log(4096 / (64 * math.pi)) / (2 * math.log(10000))
    c_slow = 64 * math.log(4096 / (2 * math.pi)) / (2 * math.log(10000))
    assert (round(c_fast), round(c_slow)) == (math.floor(c_fast), math.ceil(c_slow)) == (10, 23)
    assert report.kept.tolist() == list(range(11))
    assert report.interpolated.tolist() == list(range(23, 32))
    # logits scaled by (0.1 ln 40 + 1)**2 in DeepSeek's MLA: queries and keys each by 0.1 ln 40 + 1 = 1.3689
    assert report.attention_factor == pytest.approx(1.3689, abs=1e-4)


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
    assert a.interpolated.tolist() == [0, 1, 2, 3] and a.trained_context is None


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
    assert report.factor == 32.0 and report.trained_context == 4096
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
    (lambda: ph.describe({"head_dim": 8, "max_position_embeddings": 64}), ValueError, ["rope_theta"]),
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
    (lambda: ph.shipped_configs()["no-such-model"], KeyError, ["no-such-model"]),
]
