"""The kit's rescaling spec: DeepSeek-style YaRN (mscale, mscale_all_dim) and p-RoPE (method="proportional").

The implementations here are written in plain numpy from Hugging Face's formulas
(``_compute_yarn_parameters`` with its ``get_mscale`` branch; Gemma 4's
``_compute_proportional_rope_parameters``; ``apply_rotary_pos_emb`` with
``rotate_half`` and the attention factor on cos and sin), independently of the
package's numerics: correct ones must conform, and each injected mistake must be
named (or at the least reported as not conforming).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from posenc_helpers.conformance import diagnose, explained_in

# --- independent implementations -----------------------------------------------------------


def hf_yarn(head_dim, base, factor, original, *, mscale=None, mscale_all_dim=None, beta_fast=32, beta_slow=1):
    """inv_freq and attention factor as transformers' _compute_yarn_parameters computes them (float64)."""

    def get_mscale(scale, m=1):
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

    if mscale and mscale_all_dim:
        attention = get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim)
    else:
        attention = get_mscale(factor)

    def correction_dim(rotations):
        return head_dim * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(base))

    low = max(math.floor(correction_dim(beta_fast)), 0)
    high = min(math.ceil(correction_dim(beta_slow)), head_dim - 1)
    if low == high:
        high += 0.001
    pos_freqs = base ** (np.arange(0, head_dim, 2) / head_dim)
    extrapolation, interpolation = 1.0 / pos_freqs, 1.0 / (factor * pos_freqs)
    keep = 1 - np.clip((np.arange(head_dim // 2) - low) / (high - low), 0, 1)
    return interpolation * (1 - keep) + extrapolation * keep, attention


def hf_proportional(head_dim, base, share, factor=1.0):
    """Gemma 4's p-RoPE frequencies: the first int(share * head_dim // 2) pairs over the whole head, zeros after."""
    angles = int(share * head_dim // 2)
    inv = np.zeros(head_dim // 2)
    inv[:angles] = 1.0 / base ** (np.arange(0, 2 * angles, 2) / head_dim)
    return inv / factor


# Follows huggingface/transformers, src/transformers/models/llama/modeling_llama.py at commit
# 002272831fba584eb30dca9729c1be456836960a (rotate_half: cat((-x2, x1)); apply_rotary_pos_emb:
# (q * cos) + (rotate_half(q) * sin); freqs = inv_freq @ position_ids in float32, emb = cat((freqs, freqs))), with
# cos and sin multiplied by the attention factor as the later rotary embeddings do (emb.cos() * attention_scaling).
def hf_rope(inv_freq, attention=1.0, *, layout="half", cos_sin_scale=None, zero_still=False):
    """apply_rotary_pos_emb with cos and sin times the attention factor (rotate_half, or interleaved pairs)."""
    inv_freq = np.asarray(inv_freq, dtype=np.float32)  # a float32 buffer, as in transformers
    scale = attention if cos_sin_scale is None else cos_sin_scale
    half = inv_freq.size

    def fn(x, positions):
        x = np.asarray(x, dtype=np.float64)
        freqs = np.asarray(positions, dtype=np.float32)[:, None] * inv_freq[None, :]  # float32, autocast off
        cos = (np.cos(freqs) * np.float32(scale)).astype(np.float64)
        sin = (np.sin(freqs) * np.float32(scale)).astype(np.float64)
        if layout == "interleaved":
            a, b = x[..., 0::2], x[..., 1::2]
            out = np.empty_like(x)
            out[..., 0::2], out[..., 1::2] = a * cos - b * sin, a * sin + b * cos
        else:
            cos2, sin2 = np.concatenate([cos, cos], -1), np.concatenate([sin, sin], -1)
            rotated = np.concatenate([-x[..., half:], x[..., :half]], -1)
            out = x * cos2 + rotated * sin2
        if zero_still:  # a port that drops the features whose pair does not turn
            still = np.flatnonzero(inv_freq == 0)
            out[..., still] = 0.0
            out[..., still + half] = 0.0
        return out

    return fn


def ordinary_partial(head_dim, base, share, *, layout="half"):
    """Ordinary partial rotary (GPT-NeoX): the first r = head_dim * share features, frequencies over r."""
    r = int(head_dim * share)
    inv = 1.0 / base ** (np.arange(0, r, 2) / r)
    inner = hf_rope(inv, layout=layout)

    def fn(x, positions):
        x = np.asarray(x, dtype=np.float64)
        out = x.copy()
        out[..., :r] = inner(x[..., :r], positions)
        return out

    return fn


# --- DeepSeek-style YaRN --------------------------------------------------------------------

V3 = {"method": "yarn", "factor": 40, "original_max_len": 4096, "mscale": 1.0, "mscale_all_dim": 1.0}
RATIO = {"method": "yarn", "factor": 40, "original_max_len": 4096, "mscale": 1.0, "mscale_all_dim": 0.707}
YARN_SPECS = [V3, RATIO, {**RATIO, "mscale": 0.707, "mscale_all_dim": 0}, {**RATIO, "mscale_all_dim": None}]


def _keys(scaling):
    return {key: value for key, value in scaling.items() if key != "method" and value is not None}


@pytest.mark.parametrize("scaling", YARN_SPECS, ids=["v3", "ratio", "all-dim-0", "mscale-alone"])
@pytest.mark.parametrize("head_dim", [16, 64])
def test_hf_yarn_with_mscale_conforms(scaling, head_dim):
    keys = _keys(scaling)
    scaling = {"method": "yarn", **keys}
    inv, attention = hf_yarn(head_dim, 10000.0, keys["factor"], keys["original_max_len"], **_mscales(keys))
    rope = diagnose("rope", hf_rope(inv, attention), head_dim=head_dim, scaling=scaling)
    assert rope.ok, str(rope)
    frequencies = diagnose("rope_frequencies", lambda: (inv, attention), head_dim=head_dim, scaling=scaling)
    assert frequencies.ok, str(frequencies)


def _mscales(keys):
    return {name: keys[name] for name in ("mscale", "mscale_all_dim") if name in keys}


def test_deepseek_v3_keys_mean_an_attention_factor_of_one():
    # get_mscale(40, 1) / get_mscale(40, 1) = 1: a YaRN that scales cos/sin by 0.1 ln 40 + 1 = 1.3689 misses it.
    inv, _ = hf_yarn(64, 10000.0, 40, 4096)
    paper = 0.1 * math.log(40) + 1
    report = diagnose("rope", hf_rope(inv, paper), head_dim=64, scaling=V3)
    assert not report.ok and report.bug == "attention-factor", str(report)
    assert diagnose("rope", hf_rope(inv, 1.0), head_dim=64, scaling=V3).ok


def test_attention_factor_applied_twice_is_named():
    inv, attention = hf_yarn(64, 10000.0, 40, 4096, mscale=1.0, mscale_all_dim=0.707)
    assert attention == pytest.approx(1.0857264, rel=1e-7)  # (0.1 ln 40 + 1) / (0.0707 ln 40 + 1)
    rope = diagnose("rope", hf_rope(inv, cos_sin_scale=attention**2), head_dim=64, scaling=RATIO)
    assert rope.bug == "scaling-applied-twice", str(rope)
    frequencies = diagnose("rope_frequencies", lambda: (inv, attention**2), head_dim=64, scaling=RATIO)
    assert frequencies.bug == "scaling-applied-twice", str(frequencies)


def test_ratio_upside_down_is_reported():
    inv, attention = hf_yarn(64, 10000.0, 40, 4096, mscale=1.0, mscale_all_dim=0.707)
    report = diagnose("rope", hf_rope(inv, 1.0 / attention), head_dim=64, scaling=RATIO)
    assert not report.ok and report.bug == "attention-factor", str(report)


def test_mscale_ignored_by_the_frequency_function_is_named():
    inv, _ = hf_yarn(64, 10000.0, 40, 4096)
    report = diagnose("rope_frequencies", lambda: (inv, 0.1 * math.log(40) + 1), head_dim=64, scaling=RATIO)
    assert report.bug == "attention-factor", str(report)


# --- p-RoPE ---------------------------------------------------------------------------------

PROPORTIONAL = [(16, 0.5, 1.0), (32, 0.25, 1.0), (64, 0.25, 8.0), (64, 0.75, 1.0), (32, 1.0, 1.0)]


def _p(share, factor):
    spec = {"method": "proportional", "partial_rotary_factor": share}
    return spec if factor == 1.0 else {**spec, "factor": factor}


@pytest.mark.parametrize("head_dim, share, factor", PROPORTIONAL)
@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_hf_proportional_conforms(head_dim, share, factor, layout):
    inv = hf_proportional(head_dim, 10000.0, share, factor)
    rope = diagnose("rope", hf_rope(inv, layout=layout), head_dim=head_dim, layout=layout, scaling=_p(share, factor))
    assert rope.ok, str(rope)
    frequencies = diagnose("rope_frequencies", lambda: inv, head_dim=head_dim, scaling=_p(share, factor))
    assert frequencies.ok, str(frequencies)


def test_gemma4_global_layers_conform():
    # Gemma 4's global layers: head_dim 512, partial_rotary_factor 0.25: 64 of 256 pairs turn, base 1e6.
    inv = hf_proportional(512, 1e6, 0.25)
    assert np.count_nonzero(inv) == 64
    report = diagnose("rope_frequencies", lambda: inv, head_dim=512, base=1e6, scaling=_p(0.25, 1.0))
    assert report.ok, str(report)


@pytest.mark.parametrize("head_dim, share", [(16, 0.5), (32, 0.25), (64, 0.75)])
def test_p_rope_rotating_every_pair_is_rotary_width_and_points_to_chapter_13(head_dim, share):
    every = 1.0 / 10000.0 ** (np.arange(0, head_dim, 2) / head_dim)  # the zeros forgotten
    for kind, fn in (("rope", hf_rope(every)), ("rope_frequencies", lambda: every)):
        report = diagnose(kind, fn, head_dim=head_dim, scaling=_p(share, 1.0))
        assert report.bug == "rotary-width", str(report)
        assert "p-RoPE" in str(report)
        assert explained_in("rotary-width", kind, "proportional") in str(report)
        assert "notebooks/13_positions_in_2026.html#positions-2026-proportional" in str(report)


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_ordinary_partial_rotary_where_p_rope_is_meant_is_named(layout):
    # head 32, share 0.25: p-RoPE turns pairs 0..3 at 1e4**(-2i/32); ordinary partial rotary turns
    # the first 8 features at 1e4**(-2i/8), pairing (i, i + 4) in the half layout.
    fn = ordinary_partial(32, 10000.0, 0.25, layout=layout)
    report = diagnose("rope", fn, head_dim=32, layout=layout, scaling=_p(0.25, 1.0))
    assert report.bug == "model-dim-denominator", str(report)
    assert "13_positions_in_2026" in str(report)


def test_ordinary_partial_frequencies_where_p_rope_is_meant_are_named():
    inv = np.zeros(16)
    inv[:4] = 1.0 / 10000.0 ** (np.arange(0, 8, 2) / 8)  # over the rotated width 8, not the head's 32
    report = diagnose("rope_frequencies", lambda: inv, head_dim=32, scaling=_p(0.25, 1.0))
    assert report.bug == "model-dim-denominator", str(report)


@pytest.mark.parametrize("share, meant", [(0.25, 0.5), (0.5, 0.25)])
def test_p_rope_with_another_share_is_rotary_width(share, meant):
    inv = hf_proportional(32, 10000.0, share)
    for kind, fn in (("rope", hf_rope(inv)), ("rope_frequencies", lambda: inv)):
        report = diagnose(kind, fn, head_dim=32, scaling=_p(meant, 1.0))
        assert report.bug == "rotary-width", str(report)


def test_p_rope_that_zeroes_the_still_pairs_is_named():
    inv = hf_proportional(32, 10000.0, 0.25)
    report = diagnose("rope", hf_rope(inv, zero_still=True), head_dim=32, scaling=_p(0.25, 1.0))
    assert report.bug == "pass-through-changed", str(report)


def test_p_rope_factor_ignored_is_named():
    inv = hf_proportional(64, 10000.0, 0.25)  # factor 8 left out
    for kind, fn in (("rope", hf_rope(inv)), ("rope_frequencies", lambda: inv)):
        report = diagnose(kind, fn, head_dim=64, scaling=_p(0.25, 8.0))
        assert report.bug == "scaling-ignored", str(report)


def test_p_rope_in_the_other_layout_is_named():
    inv = hf_proportional(32, 10000.0, 0.25)
    report = diagnose("rope", hf_rope(inv, layout="interleaved"), head_dim=32, layout="half", scaling=_p(0.25, 1.0))
    assert report.bug == "layout", str(report)


# --- the spec refuses by name ---------------------------------------------------------------

BAD = [
    ({"scaling": {**V3, "msacle": 1.0}}, ValueError, ["msacle", "yarn"]),
    ({"scaling": {"method": "linear", "factor": 2, "mscale": 1.0}}, ValueError, ["mscale", "linear"]),
    (
        {"scaling": {**V3, "original_max_position_embeddings": 4096}},
        ValueError,
        ["original_max_position_embeddings", "original_max_len"],
    ),
    ({"scaling": {**V3, "mscale": -1.0}}, ValueError, ["scaling", "mscale", ">= 0"]),
    ({"scaling": {**V3, "mscale_all_dim": "one"}}, TypeError, ["scaling", "mscale_all_dim"]),
    ({"scaling": {"method": "proportional", "partial_rotary_factor": 1.5}}, ValueError, ["partial_rotary_factor"]),
    ({"scaling": {"method": "proportional", "partial_rotary_factor": 0.05}}, ValueError, ["no pair turning"]),
    ({"scaling": {"method": "proportional", "beta_fast": 32}}, ValueError, ["beta_fast", "proportional"]),
    ({"scaling": {"method": "proportional"}, "rotary_fraction": 0.5}, ValueError, ["proportional", "rotary_fraction"]),
    ({"scaling": {"method": "p-rope"}}, ValueError, ["method", "'proportional'"]),
]


@pytest.mark.parametrize("spec, error, words", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_scaling_is_refused_by_name(spec, error, words):
    with pytest.raises(error) as caught:
        diagnose("rope", lambda x, t: x, head_dim=16, **spec)
    for word in words:
        assert word in str(caught.value)


def test_every_scaling_key_is_an_argument_of_scaled_rope_frequencies():
    import inspect

    from posenc_helpers import scaled_rope_frequencies
    from posenc_helpers.conformance.spec import SCALING_KEYS
    from posenc_helpers.long_context import SCALING_METHODS

    arguments = set(inspect.signature(scaled_rope_frequencies).parameters) - {"head_dim", "base", "method"}
    assert set(SCALING_KEYS) == set(SCALING_METHODS)
    for keys in SCALING_KEYS.values():
        assert set(keys) <= arguments


# --- the command line -----------------------------------------------------------------------


def _cli(tmp_path, *args):
    (tmp_path / "userscaled.py").write_text(
        textwrap.dedent("""
        import math
        import numpy as np

        def _half(x, positions, inv_freq, scale):
            freqs = np.asarray(positions, dtype=np.float64)[:, None] * inv_freq[None, :]
            cos = np.concatenate([np.cos(freqs), np.cos(freqs)], -1) * scale
            sin = np.concatenate([np.sin(freqs), np.sin(freqs)], -1) * scale
            half = inv_freq.size
            return x * cos + np.concatenate([-x[..., half:], x[..., :half]], -1) * sin

        def v3(x, positions):
            # DeepSeek-V3's YaRN at head_dim 16 (factor 40, L 4096): ramp from pair 2 to pair 6, factor 1
            c = lambda r: 16 * math.log(4096 / (r * 2 * math.pi)) / (2 * math.log(10000.0))
            low, high = max(math.floor(c(32)), 0), min(math.ceil(c(1)), 15)
            theta = 10000.0 ** (-np.arange(0, 16, 2) / 16)
            ramp = np.clip((np.arange(8) - low) / (high - low), 0, 1)
            return _half(np.asarray(x, dtype=np.float64), positions, theta * (1 - ramp) + theta / 40 * ramp, 1.0)

        def p_rope(x, positions):
            # p-RoPE, head 16, partial_rotary_factor 0.25: pairs 0 and 1 turn, over the whole head
            inv = np.zeros(8)
            inv[:2] = 10000.0 ** (-np.arange(0, 4, 2) / 16)
            return _half(np.asarray(x, dtype=np.float64), positions, inv, 1.0)
    """)
    )
    return subprocess.run(
        [sys.executable, "-m", "posenc_helpers.conformance", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_command_line_takes_mscale_and_proportional(tmp_path):
    v3 = _cli(tmp_path, "rope", "userscaled:v3", "--head-dim", "16", "--scaling", json.dumps(V3))
    assert v3.returncode == 0, v3.stdout + v3.stderr
    assert "'mscale': 1.0" in v3.stdout
    p_rope = _cli(tmp_path, "rope", "userscaled:p_rope", "--head-dim", "16", "--scaling", json.dumps(_p(0.25, 1.0)))
    assert p_rope.returncode == 0, p_rope.stdout + p_rope.stderr
    fewer = _cli(tmp_path, "rope", "userscaled:p_rope", "--head-dim", "16", "--scaling", json.dumps(_p(0.5, 1.0)))
    assert fewer.returncode == 1 and "Bug: rotary-width" in fewer.stdout, fewer.stdout
    paper = json.dumps({"method": "yarn", "factor": 40, "original_max_len": 4096})  # 0.1 ln 40 + 1 meant; v3 gives 1
    plain = _cli(tmp_path, "rope", "userscaled:v3", "--head-dim", "16", "--scaling", paper)
    assert plain.returncode == 1 and "Bug: attention-factor" in plain.stdout, plain.stdout
    typo = _cli(tmp_path, "rope", "userscaled:v3", "--head-dim", "16", "--scaling", json.dumps({**V3, "mscal": 1}))
    assert typo.returncode == 2 and "mscal" in typo.stderr
    broken = _cli(tmp_path, "rope", "userscaled:v3", "--head-dim", "16", "--scaling", "{method: yarn}")
    assert broken.returncode == 2 and "--scaling" in broken.stderr
