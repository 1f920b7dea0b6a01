"""The conformance kit on practitioners' code (issue 45): dtypes and conventions the spec declares are not
accused, probes reach where long contexts break, each slip gets its own name, and the attention kind sees
what a rotary function alone cannot.

Every implementation is written here in plain numpy from the source it cites (repository, path, commit),
or from the formula; none uses the package's numerics. Low-precision arithmetic is emulated by rounding
after each operation, as a bfloat16 or float16 tensor does.
"""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from posenc_helpers.conformance import BUGS, diagnose, explained_in

DTYPES = ("float32", "bfloat16", "float16")


def cast(x, dtype):
    """Round to a dtype: bfloat16 by its bits (nearest, ties to even), the others through numpy."""
    x = np.asarray(x, dtype=np.float64)
    if dtype == "bfloat16":
        bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
        bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
    with np.errstate(over="ignore"):
        return x.astype({"float16": np.float16, "float32": np.float32}[dtype]).astype(np.float64)


# --- 1. Hugging Face's Llama RoPE in a bfloat16 or float16 model ----------------------------------


# Follows huggingface/transformers, src/transformers/models/llama/modeling_llama.py at commit
# 002272831fba584eb30dca9729c1be456836960a. LlamaRotaryEmbedding.__init__: inv_freq = 1.0 / (base **
# (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim)), a float32 buffer. forward(x, position_ids), with
# autocast off: freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()), emb = cat((freqs, freqs)),
# cos = emb.cos(), sin = emb.sin(), returned as cos.to(dtype=x.dtype), sin.to(dtype=x.dtype). rotate_half:
# cat((-x2, x1)); apply_rotary_pos_emb: q_embed = (q * cos) + (rotate_half(q) * sin), every operation in the
# model's dtype. buffers_cast=True is the path before that forward (PR 29285, cited in its comment): the
# inv_freq buffer and the positions cast with the model, the product in the model's dtype.
def hf_llama_rope(dtype, base=10000.0, *, buffers_cast=False):
    def fn(x, position_ids):
        dim = x.shape[-1]
        inv_freq = (1.0 / (base ** (np.arange(0, dim, 2, dtype=np.int64).astype(np.float32) / dim))).astype(np.float32)
        t = np.asarray(position_ids).astype(np.float32)
        if buffers_cast:
            inv_freq, t = cast(inv_freq, dtype), cast(t, dtype)
        freqs = np.asarray(t, np.float32)[:, None] * np.asarray(inv_freq, np.float32)[None, :]
        if buffers_cast:
            freqs = cast(freqs, dtype)
        emb = np.concatenate((freqs, freqs), axis=-1).astype(np.float32)
        cos, sin = cast(np.cos(emb), dtype), cast(np.sin(emb), dtype)
        q = cast(x, dtype)
        rotated = np.concatenate((-q[..., dim // 2 :], q[..., : dim // 2]), axis=-1)
        return cast(cast(q * cos, dtype) + cast(rotated * sin, dtype), dtype)

    return fn


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_hugging_faces_llama_rope_conforms_in_its_dtype_with_a_note(dtype):
    report = diagnose("rope", hf_llama_rope(dtype), head_dim=64, dtype=dtype)
    assert report.ok, str(report)
    text = str(report)
    assert "conforms on every probe up to position 131073" in text
    assert f"Note: the cos/sin tables are rounded to {dtype}" in text and "bounded" in text


def test_the_same_path_without_the_dtype_is_low_precision_tables_and_says_what_to_declare():
    report = diagnose("rope", hf_llama_rope("bfloat16"), head_dim=64)
    assert report.bug == "low-precision-tables"
    assert "dtype='bfloat16'" in str(report)


def test_tables_coarser_than_the_declared_dtype_are_still_named():
    assert diagnose("rope", hf_llama_rope("bfloat16"), head_dim=64, dtype="float16").bug == "low-precision-tables"
    assert diagnose("rope", hf_llama_rope("float16"), head_dim=64, dtype="bfloat16").ok  # finer than declared


@pytest.mark.parametrize("declared", DTYPES)
@pytest.mark.parametrize("fmt", ["bfloat16", "float16"])
def test_rounded_angles_are_named_at_every_dtype(fmt, declared):
    report = diagnose("rope", hf_llama_rope(fmt, buffers_cast=True), head_dim=64, dtype=declared)
    assert report.bug == "low-precision-angles", str(report)


def rope_by_formula(layout, base=10000.0, table_dtype="float32"):
    """RoPE from Su et al. (2021), eq. 34: pair i turns by t * base**(-2i/d); cos and sin rounded to a dtype."""

    def fn(x, positions):
        d = x.shape[-1]
        angles = np.asarray(positions, dtype=np.float64)[:, None] * base ** (-2 * np.arange(d // 2) / d)
        cos, sin = cast(np.cos(angles), table_dtype), cast(np.sin(angles), table_dtype)
        if layout == "half":
            a, b = x[..., : d // 2], x[..., d // 2 :]
            return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)
        out = np.empty(x.shape)
        out[..., 0::2] = x[..., 0::2] * cos - x[..., 1::2] * sin
        out[..., 1::2] = x[..., 0::2] * sin + x[..., 1::2] * cos
        return out

    return fn


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_correct_rope_conforms_in_both_layouts_at_each_dtype(layout, dtype):
    report = diagnose("rope", rope_by_formula(layout, table_dtype=dtype), head_dim=32, layout=layout, dtype=dtype)
    assert report.ok, str(report)


# --- 2. diffusers' sinusoidal timestep embedding -------------------------------------------------


# Follows huggingface/diffusers, src/diffusers/models/embeddings.py at commit
# 0002117e9fa1351a3c0ee988d9c13e683cfb273b, get_timestep_embedding: exponent = -log(max_period) * arange(0,
# half_dim, float32) / (half_dim - downscale_freq_shift); emb = timesteps[:, None].float() * exp(exponent);
# cat([sin(emb), cos(emb)]); if flip_sin_to_cos: cat([emb[:, half_dim:], emb[:, :half_dim]]).
def get_timestep_embedding(flip_sin_to_cos, downscale_freq_shift, max_period=10000):
    def fn(timesteps, embedding_dim):
        half_dim = embedding_dim // 2
        exponent = -math.log(max_period) * np.arange(0, half_dim, dtype=np.float32)
        exponent = exponent / (half_dim - downscale_freq_shift)
        emb = np.exp(exponent).astype(np.float32)
        emb = np.asarray(timesteps, dtype=np.float32)[:, None] * emb[None, :]
        emb = np.concatenate([np.sin(emb), np.cos(emb)], axis=-1)
        if flip_sin_to_cos:
            emb = np.concatenate([emb[:, half_dim:], emb[:, :half_dim]], axis=-1)
        return emb

    return fn


DIFFUSERS = [
    (True, 0, {"layout": "concat-cos-first"}),
    (True, 0, {"layout": "concat-cos-first", "downscale_freq_shift": 0}),
    (True, 1, {"layout": "concat-cos-first", "downscale_freq_shift": 1}),
    (True, 1, {"layout": "concat-cos-first", "convention": "tensor2tensor"}),
    (False, 1, {"convention": "tensor2tensor"}),
    (False, 0, {"layout": "concat"}),
]


@pytest.mark.parametrize("flip, shift, spec", DIFFUSERS)
def test_diffusers_conforms_when_its_convention_is_declared(flip, shift, spec):
    assert diagnose("sinusoidal", get_timestep_embedding(flip, shift), d_model=64, **spec).ok


@pytest.mark.parametrize("layout", [None, "interleaved", "concat"])
def test_undeclared_cos_first_is_named_a_layout_with_the_option_to_give(layout):
    spec = {} if layout is None else {"layout": layout}
    report = diagnose("sinusoidal", get_timestep_embedding(True, 0), d_model=64, **spec)
    assert report.bug == "layout" and "sin-cos-swapped" not in report.bugs, str(report)
    assert "layout='concat-cos-first'" in str(report) and "flip_sin_to_cos" in str(report)


def test_undeclared_shift_is_named_a_convention():
    report = diagnose("sinusoidal", get_timestep_embedding(True, 1), d_model=64, layout="concat-cos-first")
    assert report.bug == "convention" and "convention='tensor2tensor'" in str(report)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["interleaved", "concat", "concat-cos-first"])
def test_correct_sinusoidal_tables_conform_in_every_layout_at_each_dtype(layout, dtype):
    def table(positions, d_model):  # Vaswani et al. (2017), section 3.5, rounded to the model's dtype
        angles = np.asarray(positions, dtype=np.float64)[:, None] / 10000.0 ** (2 * np.arange(d_model // 2) / d_model)
        sines, cosines = cast(np.sin(angles), dtype), cast(np.cos(angles), dtype)
        if layout == "interleaved":
            out = np.empty((angles.shape[0], d_model))
            out[:, 0::2], out[:, 1::2] = sines, cosines
            return out
        return np.concatenate([sines, cosines] if layout == "concat" else [cosines, sines], axis=1)

    assert diagnose("sinusoidal", table, d_model=32, layout=layout, dtype=dtype).ok


# --- 3. probes where long context breaks -----------------------------------------------------------


def rope_table_of(rows, base=10000.0):
    """A cos/sin cache of ``rows`` positions, indexed modulo its length (a cache built once and never grown)."""

    def fn(x, positions):
        d = x.shape[-1]
        angles = np.arange(rows)[:, None] * base ** (-2 * np.arange(d // 2) / d)
        index = np.asarray(positions) % rows
        cos, sin = np.cos(angles)[index], np.sin(angles)[index]
        a, b = x[..., : d // 2], x[..., d // 2 :]
        return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)

    return fn


@pytest.mark.parametrize("rows", [8192, 32768])
def test_a_table_indexed_modulo_its_length_fails_past_it(rows):
    report = diagnose("rope", rope_table_of(rows), head_dim=64)
    assert not report.ok
    assert f"wrap around at {rows}" in str(report) and f"position {rows + 1}" in str(report)


def test_conforming_reports_say_how_far_they_probed():
    good = rope_by_formula("half")
    assert "conforms on every probe up to position 131073." in str(diagnose("rope", good, head_dim=16))
    longer = diagnose("rope", good, head_dim=16, max_position_embeddings=262144)
    assert "up to position 262143." in str(longer) and longer.reach == 262143
    assert diagnose("rope", rope_table_of(1 << 20), head_dim=16, max_position_embeddings=1 << 20).ok


# --- 4. the right name for each slip ------------------------------------------------------------


def rope_with(theta_of):
    def fn(x, positions):
        d = x.shape[-1]
        angles = np.asarray(positions, dtype=np.float64)[:, None] * theta_of(d)
        a, b = x[..., : d // 2], x[..., d // 2 :]
        return np.concatenate([a * np.cos(angles) - b * np.sin(angles), a * np.sin(angles) + b * np.cos(angles)], -1)

    return fn


SLIPS = {
    # the factor 2 lost: base**(-i/d) for pair i
    "half-exponent": rope_with(lambda d: 10000.0 ** (-np.arange(d // 2) / d)),
    # torch.linspace(0, 1, d // 2) as the exponent: d/2 - 1 steps
    "denominator-minus-one": rope_with(lambda d: 10000.0 ** (-np.linspace(0, 1, d // 2))),
}


@pytest.mark.parametrize("bug", sorted(SLIPS))
@pytest.mark.parametrize("head_dim", [16, 64, 128])
def test_exponent_slips_get_their_own_names(bug, head_dim):
    report = diagnose("rope", SLIPS[bug], head_dim=head_dim)
    assert report.bug == bug and "base 100 " not in str(report), str(report)
    assert "14_positional_bugs_museum.html#museum-exponent-slips" in str(report)


def test_a_sinusoidal_table_in_float16_is_low_precision_angles():
    def float16_table(positions, d_model):  # every step in float16, as a half-precision model computes it
        k = np.arange(d_model // 2)
        angles = cast(cast(positions, "float16")[:, None] * cast(10000.0 ** (-2 * k / d_model), "float16"), "float16")
        out = np.empty((len(positions), d_model))
        out[:, 0::2], out[:, 1::2] = cast(np.sin(angles), "float16"), cast(np.cos(angles), "float16")
        return out

    for dtype in DTYPES:
        report = diagnose("sinusoidal", float16_table, d_model=64, dtype=dtype)
        assert report.bug == "low-precision-angles" and "base" not in report.bugs, str(report)


def test_a_sinusoidal_table_rounded_to_bfloat16_is_low_precision_tables_unless_declared():
    def rounded(positions, d_model):
        angles = np.asarray(positions, float)[:, None] / 10000.0 ** (2 * np.arange(d_model // 2) / d_model)
        out = np.empty((len(positions), d_model))
        out[:, 0::2], out[:, 1::2] = cast(np.sin(angles), "bfloat16"), cast(np.cos(angles), "bfloat16")
        return out

    assert diagnose("sinusoidal", rounded, d_model=32).bug == "low-precision-tables"
    assert diagnose("sinusoidal", rounded, d_model=32, dtype="bfloat16").ok


# Follows ofirpress/attention_with_linear_biases, fairseq/models/transformer.py, get_slopes, at commit
# 4b92f28a005ead2567abe2359f633e73e08f3833 (start = 2**(-2**-(log2(n) - 3)), ratio = start; other head counts:
# the closest lower power of two, then get_slopes(2 * closest)[0::2]).
def get_slopes(n):
    def power_of_two(m):
        start = 2 ** (-(2 ** -(math.log2(m) - 3)))
        return [start * start**i for i in range(m)]

    if math.log2(n).is_integer():
        return power_of_two(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_two(closest) + get_slopes(2 * closest)[0::2][: n - closest]


def alibi_ordered(order):
    def fn(n_heads, seq_len):
        m = np.asarray(get_slopes(n_heads))
        m = m[::-1] if order == "reversed" else np.sort(m)
        i = np.arange(seq_len)
        return -m[:, None, None] * np.abs(i[:, None] - i[None, :])

    return fn


@pytest.mark.parametrize("heads", [None, [4, 8], [4], [6], [12], [16]])
@pytest.mark.parametrize("order", ["reversed", "ascending"])
def test_slopes_in_the_wrong_head_order_are_named_at_every_head_count(order, heads):
    report = diagnose("alibi", alibi_ordered(order), n_heads=heads)
    assert report.bug == "alibi-head-order" and not report.unrecognised, str(report)
    assert "08_alibi.html#alibi-slopes" in str(report)


# --- 5. the attention kind ------------------------------------------------------------------------


def softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def rotate(x, positions, layout="half", sign=1):
    return rope_by_formula(layout)(x, sign * np.asarray(positions))


def attention_impl(
    method="rope",
    *,
    layout="half",
    values=False,
    queries_from_zero=False,
    q_rotation=None,
    mask="causal",
    bias_inside=False,
    dtype=None,
):
    """Causal attention, softmax(q k^T / sqrt(d) + bias) v (Vaswani et al. 2017, eq. 1; ALiBi's bias after the
    scale, Press et al. 2022, section 3), with the position code applied inside, and optional slips."""

    def fn(q, k, v, positions):
        d, n_q = q.shape[-1], q.shape[-2]
        positions = np.asarray(positions)
        q_pos = np.arange(n_q) if queries_from_zero else positions[-n_q:]
        if dtype is not None:
            q, k, v = cast(q, dtype), cast(k, dtype), cast(v, dtype)
        if method == "rope":
            q_layout, q_sign = {None: (layout, 1), "other-layout": ("interleaved", 1), "backwards": (layout, -1)}.get(
                q_rotation, (layout, 1)
            )
            q = q if q_rotation == "none" else rotate(q, q_pos, q_layout, q_sign)
            k = rotate(k, positions, layout)
            v = rotate(v, positions, layout) if values else v
        scores = q @ np.swapaxes(k, -1, -2)
        distance = positions[-n_q:][:, None] - positions[None, :]
        if method == "alibi":
            bias = -np.asarray(get_slopes(q.shape[1]))[None, :, None, None] * distance
            scores = (scores + bias) / np.sqrt(d) if bias_inside else scores / np.sqrt(d) + bias
        else:
            scores = scores / np.sqrt(d)
        if mask == "causal":
            scores = np.where(distance >= 0, scores, -np.inf)
        elif mask == "next":  # torch.triu(..., diagonal=2): one later key left visible
            index = np.arange(k.shape[-2])
            scores = np.where(index[None, :] <= index[-n_q:][:, None] + 1, scores, -np.inf)
        elif mask == "leaky":  # a finite penalty where -inf is meant
            scores = np.where(distance >= 0, scores, scores - 3.0)
        elif mask == "top-left":
            # PyTorch's scaled_dot_product_attention(is_causal=True) documents its mask as
            # torch.ones(L, S).tril(diagonal=0): aligned to the top left, so with a KV cache (L < S) a query
            # reads only the first keys
            scores = np.where(np.tril(np.ones(scores.shape[-2:], dtype=bool)), scores, -np.inf)
        return softmax(scores) @ v

    return fn


@pytest.mark.parametrize(
    "method, spec",
    [
        ("rope", {"layout": "half"}),
        ("rope", {"layout": "interleaved"}),
        ("alibi", {}),
        ("nope", {}),
    ],
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_correct_attention_conforms(method, spec, dtype):
    fn = attention_impl(method, layout=spec.get("layout", "half"), dtype=None if dtype == "float32" else dtype)
    report = diagnose("attention", fn, method=method, head_dim=16, dtype=dtype, **spec)
    assert report.ok, str(report)


ATTENTION_SLIPS = [
    ("rope-on-values", "rope", {"values": True}),
    ("offset-keys-only", "rope", {"queries_from_zero": True}),
    ("qk-rotated-differently", "rope", {"q_rotation": "none"}),
    ("qk-rotated-differently", "rope", {"q_rotation": "other-layout"}),
    ("qk-rotated-differently", "rope", {"q_rotation": "backwards"}),
    ("bias-outside-scale", "alibi", {"bias_inside": True}),
    ("causal-mask", "rope", {"mask": "none"}),
    ("causal-mask", "rope", {"mask": "next"}),
    ("causal-mask", "rope", {"mask": "leaky"}),
    ("causal-mask", "rope", {"mask": "top-left"}),
    ("causal-mask", "alibi", {"mask": "none"}),
    ("causal-mask", "nope", {"mask": "leaky"}),
]


@pytest.mark.parametrize(
    "bug, method, slip", ATTENTION_SLIPS, ids=[f"{b}-{m}-{next(iter(s.values()))}" for b, m, s in ATTENTION_SLIPS]
)
def test_attention_level_slips_are_named(bug, method, slip):
    report = diagnose("attention", attention_impl(method, **slip), method=method, head_dim=16)
    assert report.bug == bug and not report.unrecognised, str(report)
    assert explained_in(bug, "attention") in str(report)


def test_attention_level_slips_are_invisible_to_the_rope_kind():
    # the rotary code the buggy attention uses conforms on its own: only the attention kind sees the slips
    assert diagnose("rope", rope_by_formula("half"), head_dim=16).ok
    assert diagnose("attention", attention_impl(values=True), head_dim=16).bug == "rope-on-values"


def test_a_shared_rotation_bug_is_left_to_the_rope_kind():
    def wrong_base(q, k, v, positions):
        n_q = q.shape[-2]
        positions = np.asarray(positions)
        q, k = (
            rope_with(lambda d: 500.0 ** (-2 * np.arange(d // 2) / d))(q, positions[-n_q:]),
            rope_with(lambda d: 500.0 ** (-2 * np.arange(d // 2) / d))(k, positions),
        )
        scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
        scores = np.where(positions[-n_q:][:, None] >= positions[None, :], scores, -np.inf)
        return softmax(scores) @ v

    report = diagnose("attention", wrong_base, head_dim=16)
    assert not report.ok and report.unrecognised and "rope kind" in str(report)


def test_every_new_name_points_to_a_section():
    for bug in (
        "half-exponent",
        "denominator-minus-one",
        "alibi-head-order",
        "rope-on-values",
        "qk-rotated-differently",
        "offset-keys-only",
        "bias-outside-scale",
        "causal-mask",
    ):
        assert bug in BUGS and explained_in(bug).startswith("chapter ")


# --- bad input ----------------------------------------------------------------------------------

BAD = [
    ("rope", {"head_dim": 8, "dtype": "float8"}, ValueError, "dtype"),
    ("rope", {"head_dim": 8, "dtype": np.float16}, TypeError, "dtype"),
    ("rope", {"head_dim": 8, "max_position_embeddings": 0}, ValueError, "max_position_embeddings"),
    ("rope_frequencies", {"head_dim": 8, "dtype": "bfloat16"}, TypeError, "dtype"),
    ("sinusoidal", {"d_model": 8, "layout": "cos-first"}, ValueError, "layout"),
    ("sinusoidal", {"d_model": 8, "downscale_freq_shift": 4}, ValueError, "downscale_freq_shift"),
    ("sinusoidal", {"d_model": 8, "downscale_freq_shift": "1"}, TypeError, "downscale_freq_shift"),
    ("attention", {"head_dim": 8, "method": "t5"}, ValueError, "method"),
    ("attention", {"head_dim": 8, "n_heads": [4, 8]}, ValueError, "n_heads"),
    ("attention", {"head_dim": 8, "method": "alibi", "base": 500000.0}, ValueError, "base"),
    ("attention", {}, TypeError, "head_dim"),
]


@pytest.mark.parametrize("kind, spec, error, words", BAD, ids=[f"{b[0]}-{b[3]}" for b in BAD])
def test_bad_spec_is_refused_by_name(kind, spec, error, words):
    fn = {"rope": lambda x, t: x, "rope_frequencies": lambda: None, "sinusoidal": lambda t, d: None}.get(
        kind, lambda q, k, v, positions: q
    )
    with pytest.raises(error, match=words):
        diagnose(kind, fn, **spec)


# --- the command line ---------------------------------------------------------------------------


def _cli(tmp_path, *args):
    (tmp_path / "usercode.py").write_text(
        textwrap.dedent("""
        import math
        import numpy as np

        def _bf16(x):
            bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
            bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
            return bits.astype(np.uint32).view(np.float32).astype(np.float64)

        def rope_bf16_tables(x, positions):
            d = x.shape[-1]
            inv_freq = (1.0 / 10000.0 ** (np.arange(0, d, 2, dtype=np.float32) / d)).astype(np.float32)
            freqs = np.asarray(positions, np.float32)[:, None] * inv_freq
            emb = np.concatenate((freqs, freqs), axis=-1)
            cos, sin = _bf16(np.cos(emb)), _bf16(np.sin(emb))
            return x * cos + np.concatenate((-x[..., d // 2:], x[..., : d // 2]), axis=-1) * sin

        def timesteps(t, dim):
            half = dim // 2
            emb = np.asarray(t, float)[:, None] * np.exp(-math.log(10000) * np.arange(half) / half)
            return np.concatenate([np.cos(emb), np.sin(emb)], axis=-1)

        def attention(q, k, v, positions):
            n_q = q.shape[-2]
            p = np.asarray(positions)
            s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
            s = np.where(p[-n_q:][:, None] >= p[None, :], s, -np.inf)
            w = np.exp(s - s.max(-1, keepdims=True))
            return (w / w.sum(-1, keepdims=True)) @ v

        def attention_no_mask(q, k, v, positions):
            s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
            w = np.exp(s - s.max(-1, keepdims=True))
            return (w / w.sum(-1, keepdims=True)) @ v
    """)
    )
    return subprocess.run(
        [sys.executable, "-m", "posenc_helpers.conformance", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_command_line_takes_the_dtype(tmp_path):
    plain = _cli(tmp_path, "rope", "usercode:rope_bf16_tables", "--head-dim", "64")
    assert plain.returncode == 1 and "Bug: low-precision-tables" in plain.stdout
    declared = _cli(tmp_path, "rope", "usercode:rope_bf16_tables", "--head-dim", "64", "--dtype", "bfloat16")
    assert declared.returncode == 0, declared.stdout + declared.stderr
    assert "up to position 131073" in declared.stdout and "Note: " in declared.stdout


def test_command_line_takes_diffusers_conventions(tmp_path):
    args = ("sinusoidal", "usercode:timesteps", "--d-model", "32")
    assert _cli(tmp_path, *args).returncode == 1
    run = _cli(tmp_path, *args, "--layout", "concat-cos-first", "--downscale-freq-shift", "0")
    assert run.returncode == 0, run.stdout + run.stderr


def test_command_line_runs_the_attention_kind(tmp_path):
    good = _cli(tmp_path, "attention", "usercode:attention", "--method", "nope", "--head-dim", "16")
    assert good.returncode == 0, good.stdout + good.stderr
    bad = _cli(tmp_path, "attention", "usercode:attention_no_mask", "--method", "nope", "--head-dim", "16")
    assert bad.returncode == 1 and "Bug: causal-mask" in bad.stdout
    usage = _cli(tmp_path, "attention", "usercode:attention", "--method", "t5", "--head-dim", "16")
    assert usage.returncode == 2


def test_help_lists_every_convention_dtype_and_the_attention_contract(tmp_path):
    done = _cli(tmp_path, "--help")
    assert done.returncode == 0
    for words in (
        "fn(q, k, v, positions)",
        "(batch, n_heads, n_q, head_dim)",
        "concat-cos-first",
        "flip_sin_to_cos",
        "--downscale-freq-shift",
        "tensor2tensor",
        "fairseq",
        "vaswani",
        "bfloat16",
        "float16",
        "interleaved",
        "131073",
        "What each kind can see",
    ):
        assert words in done.stdout, words
