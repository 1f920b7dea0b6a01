"""The conformance kit after issue 36: conventions pass, and each new name is injected and named.

Every implementation here is written in plain numpy from the reference code it cites, not
with the package's numerics: tensor2tensor's and fairseq's sinusoidal tables, Hugging Face's
rotary embedding (with its cos/sin tables cast to the model's dtype), and ALiBi's get_slopes.
"""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from posenc_helpers.checks import CheckFailed, check_conforming_alibi, check_conforming_rope
from posenc_helpers.conformance import BUGS, describe, diagnose


def rounded(x, fmt):
    """Round to bfloat16 (ties to even, written out on the bits) or to numpy's float16."""
    if fmt == "float16":
        return np.asarray(x, dtype=np.float64).astype(np.float16).astype(np.float64)
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


# --- sinusoidal conventions ---------------------------------------------------------------------


# Follows tensorflow/tensor2tensor, tensor2tensor/layers/common_attention.py, get_timing_signal_1d, at commit
# bafdc1b67730430d38d6ab802cbd51f9d053ba2e: float32 throughout (tf.to_float), min_timescale times the exponentials,
# the denominator tf.maximum(num_timescales - 1, 1), then concat([sin, cos], axis=1).
def tensor2tensor_table(positions, d_model, min_timescale=1.0, max_timescale=1.0e4):
    """tensor2tensor's get_timing_signal_1d for the given positions (start_index folded into them)."""
    position = np.asarray(positions, dtype=np.float32)
    num_timescales = d_model // 2
    log_timescale_increment = np.float32(math.log(float(max_timescale) / float(min_timescale))) / np.maximum(
        np.float32(num_timescales) - 1, np.float32(1)
    )
    inv_timescales = np.float32(min_timescale) * np.exp(
        np.arange(num_timescales, dtype=np.float32) * -log_timescale_increment
    )
    scaled_time = position[:, None] * inv_timescales[None, :]
    return np.concatenate([np.sin(scaled_time), np.cos(scaled_time)], axis=1)


# Follows facebookresearch/fairseq, fairseq/modules/sinusoidal_positional_embedding.py,
# SinusoidalPositionalEmbedding.get_embedding, at commit 0491f2696114f5e35e14b6c133fc55c2e60d8077 (its docstring:
# "matches the implementation in tensor2tensor"): float32 (torch.float), rows for the given positions.
def fairseq_table(positions, d_model):
    """emb = log(10000) / (half_dim - 1); exp(arange(half_dim) * -emb); cat([sin, cos], dim=1)."""
    half_dim = d_model // 2
    emb = math.log(10000) / (half_dim - 1)
    emb = np.exp(np.arange(half_dim, dtype=np.float32) * -emb)
    emb = np.asarray(positions, dtype=np.float32)[:, None] * emb[None, :]
    return np.concatenate([np.sin(emb), np.cos(emb)], axis=1)


def paper_table(positions, d_model):
    """Vaswani et al. (2017), section 3.5: PE(t, 2k) = sin(t / 10000**(2k/d)), PE(t, 2k+1) = cos(...)."""
    k = np.arange(d_model // 2)
    angles = np.asarray(positions, dtype=np.float64)[:, None] / 10000.0 ** (2 * k / d_model)
    table = np.empty((angles.shape[0], d_model))
    table[:, 0::2], table[:, 1::2] = np.sin(angles), np.cos(angles)
    return table


@pytest.mark.parametrize("fn", [tensor2tensor_table, fairseq_table], ids=["tensor2tensor", "fairseq"])
@pytest.mark.parametrize("d_model", [16, 64, 512])
def test_tensor2tensor_and_fairseq_conform_under_their_convention(fn, d_model):
    assert diagnose("sinusoidal", fn, d_model=d_model, convention="tensor2tensor").ok
    assert diagnose("sinusoidal", fn, d_model=d_model, convention="fairseq").ok


@pytest.mark.parametrize("layout", [None, "interleaved", "concat"])
def test_tensor2tensor_under_the_papers_spec_is_named_a_convention(layout):
    spec = {"d_model": 16} if layout is None else {"d_model": 16, "layout": layout}
    report = diagnose("sinusoidal", tensor2tensor_table, **spec)
    assert not report.ok and report.bug == "convention" and not report.unrecognised
    text = str(report)
    assert "q/k weights" not in text and "convention='tensor2tensor'" in text
    assert "04_sine_cosine_pairs" in text and "partial" not in text.lower()


def test_the_paper_under_the_tensor2tensor_spec_is_named_a_convention():
    assert diagnose("sinusoidal", paper_table, d_model=32, convention="tensor2tensor").bug == "convention"
    assert diagnose("sinusoidal", paper_table, d_model=32).ok


def test_sinusoidal_layout_text_is_about_columns():
    def concat_paper(positions, d_model):
        table = paper_table(positions, d_model)
        return np.concatenate([table[:, 0::2], table[:, 1::2]], axis=1)

    report = diagnose("sinusoidal", concat_paper, d_model=16)
    assert report.bug == "layout"
    assert "q/k weights" not in str(report) and "columns" in str(report)
    assert "q/k weights" in describe("layout", "rope")


def test_bad_convention_is_refused_by_name():
    with pytest.raises(ValueError, match="convention"):
        diagnose("sinusoidal", paper_table, d_model=16, convention="t5")
    with pytest.raises(TypeError, match="convention"):
        diagnose("rope", lambda x, t: x, head_dim=8, convention="tensor2tensor")


# --- RoPE as Hugging Face writes it, with the mistakes injected -------------------------------


# Follows huggingface/transformers, src/transformers/models/llama/modeling_llama.py at commit
# 002272831fba584eb30dca9729c1be456836960a: LlamaRotaryEmbedding (inv_freq = 1.0 / (base ** (arange(0, dim, 2,
# int64).float() / dim)), float32; forward computes freqs = inv_freq @ position_ids in float32 with autocast off,
# emb = cat((freqs, freqs)), and returns cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)), rotate_half
# (cat((-x2, x1))) and apply_rotary_pos_emb ((q * cos) + (rotate_half(q) * sin)). Partial rotary as
# apply_rotary_pos_emb does it where cos is narrower than the head (models/gpt_neox and others: rotary_dim =
# cos.shape[-1]; rotate q[..., :rotary_dim], pass q[..., rotary_dim:] through), inv_freq over rotary_dim.
# The keyword arguments inject the mistakes; cast_tables stands for x.dtype being bfloat16 or float16.
def hf_rope(
    head_dim,
    base=10000.0,
    *,
    rotary_dim=None,
    last=False,
    pass_through=1.0,
    cast_positions=None,
    cast_freqs=None,
    cast_product=None,
    cast_tables=None,
    offset_twice=False,
):
    """Hugging Face's Llama rotary embedding in numpy, float32 as there, with optional mistakes."""
    r = head_dim if rotary_dim is None else rotary_dim
    inv_freq = (1.0 / (base ** (np.arange(0, r, 2, dtype=np.int64).astype(np.float32) / r))).astype(np.float32)

    def rotate_half(x):
        x1 = x[..., : x.shape[-1] // 2]
        x2 = x[..., x.shape[-1] // 2 :]
        return np.concatenate((-x2, x1), axis=-1)

    def fn(x, position_ids):
        x = np.asarray(x, dtype=np.float64)
        t = np.asarray(position_ids, dtype=np.float64)
        if offset_twice:
            t = t + t[0]  # a cache offset added to positions that already hold it
        t = rounded(t, cast_positions) if cast_positions else t
        f = rounded(inv_freq, cast_freqs) if cast_freqs else inv_freq
        freqs = t.astype(np.float32)[:, None] * f.astype(np.float32)[None, :]  # float32, as with autocast off
        freqs = rounded(freqs, cast_product) if cast_product else freqs
        emb = np.concatenate((freqs, freqs), axis=-1)
        cos, sin = np.cos(emb).astype(np.float64), np.sin(emb).astype(np.float64)
        if cast_tables:  # cos.to(dtype=x.dtype) for a bfloat16 or float16 model
            cos, sin = rounded(cos, cast_tables), rounded(sin, cast_tables)
        lo = head_dim - r if last else 0
        rot, rest = x[..., lo : lo + r], np.concatenate([x[..., :lo], x[..., lo + r :]], axis=-1)
        rot = (rot * cos) + (rotate_half(rot) * sin)
        if last:
            return np.concatenate([rest, rot], axis=-1)
        return np.concatenate([rot, pass_through * rest], axis=-1)

    return fn


@pytest.mark.parametrize("head_dim, rotary_dim", [(64, None), (64, 32), (16, 8), (128, 32)])
def test_hugging_face_rope_conforms(head_dim, rotary_dim):
    spec = {"head_dim": head_dim} if rotary_dim is None else {"head_dim": head_dim, "rotary_dim": rotary_dim}
    assert diagnose("rope", hf_rope(head_dim, rotary_dim=rotary_dim), **spec).ok


@pytest.mark.parametrize("fmt", ["bfloat16", "float16"])
def test_rounded_tables_are_low_precision_tables(fmt):
    report = diagnose("rope", hf_rope(64, cast_tables=fmt), head_dim=64)
    assert report.bug == "low-precision-tables", str(report)
    assert "bounded" in str(report) and "grow" not in BUGS["low-precision-tables"].split(":")[0]


ANGLE_VARIANTS = {
    "everything bfloat16": {"cast_positions": "bfloat16", "cast_freqs": "bfloat16", "cast_product": "bfloat16"},
    "only the product": {"cast_product": "bfloat16"},
    "only the positions": {"cast_positions": "bfloat16"},
    "bfloat16 frequencies and product": {"cast_freqs": "bfloat16", "cast_product": "bfloat16"},
    "positions cast to float16 alone": {"cast_positions": "float16"},
    "only the frequencies": {"cast_freqs": "bfloat16"},
}


@pytest.mark.parametrize("variant", sorted(ANGLE_VARIANTS))
def test_every_rounded_angle_variant_is_low_precision_angles(variant):
    report = diagnose("rope", hf_rope(64, **ANGLE_VARIANTS[variant]), head_dim=64)
    assert report.bug == "low-precision-angles", str(report)
    assert "grow" in str(report) and "times the meant one" not in str(report)


@pytest.mark.parametrize("factor, how", [(0.0, "zeros"), (-1.0, "negated"), (2.0, "times 2")])
def test_pass_through_must_be_identity(factor, how):
    report = diagnose("rope", hf_rope(64, rotary_dim=32, pass_through=factor), head_dim=64, rotary_dim=32)
    assert not report.ok and report.bug == "pass-through-changed", str(report)
    assert how in str(report)


def test_a_unit_vector_in_a_pass_through_feature_comes_back_unchanged_or_fails():
    def drops_feature_12(x, positions):
        out = hf_rope(16, rotary_dim=8)(x, positions)
        out[..., 12] = 0.0
        return out

    report = diagnose("rope", drops_feature_12, head_dim=16, rotary_dim=8)
    assert report.bug == "pass-through-changed" and "feature 12" in str(report)


def test_partial_rotary_on_the_last_features_is_rotary_width():
    report = diagnose("rope", hf_rope(64, rotary_dim=32, last=True), head_dim=64, rotary_dim=32)
    assert report.bug == "rotary-width" and "last 32 features" in str(report)


def test_cache_offset_applied_twice_is_named():
    report = diagnose("rope", hf_rope(64, offset_twice=True), head_dim=64)
    assert report.bug == "offset-applied-twice", str(report)
    assert "prefill" in str(report) or "decode" in str(report)


# --- ALiBi: wrong rules for head counts that are not powers of two ----------------------------


# Follows ofirpress/attention_with_linear_biases, fairseq/models/transformer.py, TransformerDecoder.__init__'s
# get_slopes, at commit 4b92f28a005ead2567abe2359f633e73e08f3833 (start = 2**(-2**-(log2(n) - 3)), ratio = start;
# other head counts: the closest lower power of two, then get_slopes(2 * closest)[0::2]). The repository turns
# the list into a float32 torch.Tensor; alibi_from_the_repository below keeps that and its bias, slope * j.
def get_slopes(n):
    """The slopes of ALiBi's reference code, as a list of Python floats."""

    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (
        get_slopes_power_of_2(closest_power_of_2) + get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]
    )


def alibi_from_the_repository(n_heads, seq_len):
    """The repository's bias: float32 slopes times arange(maxpos), every row alike (softmax is shift-invariant
    per row, so under the causal mask this is the paper's -m (i - j))."""
    slopes = np.asarray(get_slopes(n_heads), dtype=np.float32)
    row = slopes[:, None] * np.arange(seq_len, dtype=np.float32)[None, :]
    return np.broadcast_to(row[:, None, :], (n_heads, seq_len, seq_len)).astype(np.float64)


def alibi_with(slopes_of):
    """The paper's bias -m (i - j) (Press et al. 2022, section 3) for the slopes slopes_of(n_heads)."""

    def fn(n_heads, seq_len):
        m = np.asarray(slopes_of(n_heads), dtype=np.float64)
        i = np.arange(seq_len)
        return -m[:, None, None] * np.abs(i[:, None] - i[None, :])

    return fn


def _power(n):
    return get_slopes(n) if n & (n - 1) == 0 else None


WRONG_RULES = {
    "next power truncated": lambda n: _power(n) or get_slopes(2 ** math.ceil(math.log2(n)))[:n],
    "lower power repeated": lambda n: _power(n) or (get_slopes(2 ** math.floor(math.log2(n))) * 2)[:n],
    "[1::2] for [0::2]": lambda n: (
        _power(n)
        or get_slopes(2 ** math.floor(math.log2(n)))
        + get_slopes(2 ** math.ceil(math.log2(n)))[1::2][: n - 2 ** math.floor(math.log2(n))]
    ),
    "a rule no one wrote": lambda n: _power(n) or [0.3] * n,
}


def test_paper_slopes_conform():
    assert diagnose("alibi", alibi_with(get_slopes)).ok


def test_the_repositorys_own_bias_conforms_under_the_causal_mask():
    assert diagnose("alibi", alibi_from_the_repository).ok


@pytest.mark.parametrize("rule", sorted(WRONG_RULES))
def test_wrong_non_power_of_two_rules_are_named(rule):
    report = diagnose("alibi", alibi_with(WRONG_RULES[rule]))
    assert report.bug == "alibi-slopes-non-power-of-two" and not report.unrecognised, str(report)
    assert "08_alibi.html#alibi-slopes" in str(report)


def test_unrecognised_slopes_point_to_the_slopes_section():
    report = diagnose("alibi", alibi_with(lambda n: [0.3] * n))  # powers of two fail too: no signature
    assert report.unrecognised and report.bug is None
    assert "08_alibi.html#alibi-slopes" in str(report) and "reference numerics" not in str(report)


# --- the contract -------------------------------------------------------------------------------


def test_positions_first_is_refused_with_the_contract():
    def rope(positions, x):
        return x

    with pytest.raises(TypeError, match=r"fn\(x, positions\).*positions"):
        diagnose("rope", rope, head_dim=8)


def test_a_raw_broadcasting_error_is_reported_with_the_contract():
    def single_row(x, positions):  # written for x of shape (seq, head_dim) and one angle per row
        return np.asarray(x) * np.cos(np.asarray(positions))[:, None, None][:2]

    report = diagnose("rope", single_row, head_dim=8)
    assert report.error is not None
    assert "fn(x, positions) with x of shape (8, 13, 8)" in report.error and "(batch, seq, head_dim)" in report.error


def test_help_states_what_the_function_must_look_like():
    done = subprocess.run(
        [sys.executable, "-m", "posenc_helpers.conformance", "--help"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0
    for words in ("fn(x, positions)", "(batch, seq, head_dim)", "fn(positions, d_model)", "fn(n_heads, seq_len)"):
        assert words in done.stdout, words


def test_command_line_takes_the_convention(tmp_path):
    (tmp_path / "t2t.py").write_text(
        textwrap.dedent("""
        import math
        import numpy as np

        def table(positions, d_model):
            inc = math.log(1.0e4) / max(d_model // 2 - 1, 1)
            t = np.asarray(positions, dtype=float)[:, None] * np.exp(-inc * np.arange(d_model // 2))
            return np.concatenate([np.sin(t), np.cos(t)], axis=1)
    """)
    )
    run = [sys.executable, "-m", "posenc_helpers.conformance", "sinusoidal", "t2t:table", "--d-model", "16"]
    plain = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert plain.returncode == 1 and "Bug: convention" in plain.stdout
    meant = subprocess.run([*run, "--convention", "tensor2tensor"], cwd=tmp_path, capture_output=True, text=True)
    assert meant.returncode == 0, meant.stdout + meant.stderr


# --- inside exercises: the mistake and where, no value ------------------------------------------

NUMBER = r"\d+\.\d+"


@pytest.mark.parametrize("factor", [0.0, -1.0, 2.0])
def test_exercise_check_fails_a_changed_pass_through(factor):
    with pytest.raises(CheckFailed) as failed:
        check_conforming_rope(
            hf_rope(16, rotary_dim=8, pass_through=factor), head_dim=16, base=10000.0, layout="half", rotary_dim=8
        )
    message = str(failed.value)
    assert "pass-through-changed" in message and "expected" not in message and "diagnose(" not in message


@pytest.mark.parametrize(
    "fn",
    [hf_rope(16, cast_tables="bfloat16"), hf_rope(16, cast_positions="float16"), hf_rope(16, offset_twice=True)],
    ids=["tables", "positions float16", "offset twice"],
)
def test_exercise_check_names_new_mistakes_without_values(fn):
    with pytest.raises(CheckFailed) as failed:
        check_conforming_rope(fn, head_dim=16, base=10000.0, layout="half")
    message = str(failed.value)
    assert "The kit names the mistake" in message and "expected" not in message
    assert "got" not in message.split("Where:")[1]


@pytest.mark.parametrize("rule", sorted(WRONG_RULES))
def test_exercise_alibi_check_names_the_rule_without_slopes(rule):
    with pytest.raises(CheckFailed) as failed:
        check_conforming_alibi(alibi_with(WRONG_RULES[rule]))
    message = str(failed.value)
    assert "alibi-slopes-non-power-of-two" in message and "expected" not in message
    assert not any(f"{s:.4g}" in message for n in (6, 12) for s in get_slopes(n) if s < 0.9)
