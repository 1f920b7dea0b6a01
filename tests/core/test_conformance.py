"""The conformance kit: every bug of BUGS, injected into a plain reference, is named exactly;
correct code in every layout, base, width and rotary fraction passes; combined bugs are never
given one wrong name; bad input is refused by name; the command line runs in a subprocess.

The implementations below are written here in plain numpy, independently of the package's
numerics, so that the kit is tested against code it did not write.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from posenc_helpers import scaled_rope_frequencies
from posenc_helpers.conformance import BUGS, EXPLAINED_IN, Report, diagnose, explained_in


def bf16(x):
    """Round to bfloat16 (nearest, ties to even), written out independently."""
    x32 = np.asarray(x, dtype=np.float32)
    bits = x32.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return rounded.astype(np.uint32).view(np.float32).astype(np.float64)


def rope_impl(
    head_dim,
    *,
    base=10000.0,
    layout="half",
    rotary_dim=None,
    exponent_width=None,
    pair_shift=0,
    index_factor=2,
    direction=1,
    swap=False,
    offset=0,
    ignore_positions=False,
    precision=None,
    scale=1.0,
    freq_scale=1.0,
    turns=1,
    theta=None,
):
    """A RoPE written from the formula, with optional injected mistakes."""
    r = head_dim if rotary_dim is None else rotary_dim
    width = r if exponent_width is None else exponent_width
    i = np.arange(r // 2) + pair_shift
    theta = freq_scale * base ** (-index_factor * i / width) if theta is None else np.asarray(theta)
    if precision == "bf16-freq":
        theta = bf16(theta)

    def fn(x, positions):
        x = np.asarray(x, dtype=np.float64)
        t = np.arange(x.shape[-2], dtype=np.float64) if ignore_positions else np.asarray(positions, float)
        t = t + offset
        if precision == "bf16-all":
            angles = bf16(bf16(t)[:, None] * bf16(theta)[None, :])
        else:
            angles = t[:, None] * theta[None, :]
        angles = turns * direction * angles
        cos, sin = np.cos(angles), np.sin(angles)
        if swap:
            cos, sin = np.sin(-angles) * direction, np.cos(angles)
            cos, sin = np.sin(direction * angles), np.cos(direction * angles)
        cos, sin = scale**turns * cos, scale**turns * sin
        out = x.copy()
        if layout == "interleaved":
            a, b = x[..., 0:r:2], x[..., 1:r:2]
            out[..., 0:r:2] = a * cos - b * sin
            out[..., 1:r:2] = a * sin + b * cos
        else:
            a, b = x[..., : r // 2], x[..., r // 2 : r]
            out[..., : r // 2] = a * cos - b * sin
            out[..., r // 2 : r] = a * sin + b * cos
        return out

    return fn


def sinusoidal_impl(
    *,
    base=10000.0,
    layout="interleaved",
    dimension_index=False,
    swap=False,
    offset=0,
    direction=1,
    cos_index_shift=False,
    dtype=np.float64,
):
    def fn(positions, d_model):
        t = np.asarray(positions, dtype=np.float64)[:, None] + offset
        j = np.arange(d_model)
        if dimension_index:
            exponent = 2 * j / d_model
        elif cos_index_shift:
            exponent = j / d_model
        else:
            exponent = 2 * (j // 2) / d_model
        angles = (direction * t / base**exponent).astype(dtype)
        sines, cosines = np.sin(angles), np.cos(angles)
        if swap:
            sines, cosines = cosines, sines
        table = np.where(j % 2 == 0, sines, cosines)
        if layout == "concat":
            table = np.concatenate([table[:, 0::2], table[:, 1::2]], axis=1)
        return table

    return fn


# Follows ofirpress/attention_with_linear_biases, fairseq/models/transformer.py, get_slopes, at commit
# 4b92f28a005ead2567abe2359f633e73e08f3833 (there ratio = start, so start * ratio**k is start * start**k).
def reference_slopes(n):
    """The paper's get_slopes, written out."""

    def power_of_two(m):
        start = 2 ** (-(2 ** -(np.log2(m) - 3)))
        return [start * start**k for k in range(m)]

    if np.log2(n).is_integer():
        return power_of_two(n)
    closest = 2 ** int(np.floor(np.log2(n)))
    return power_of_two(closest) + reference_slopes(2 * closest)[0::2][: n - closest]


def alibi_impl(*, sign=1, naive=False, heads_from_zero=False, sorted_slopes=False, shortcut=False):
    def fn(n_heads, seq_len):
        if naive or heads_from_zero:
            h = np.arange(n_heads) + (0 if heads_from_zero else 1)
            slopes = 2.0 ** (-8.0 * h / n_heads)
        else:
            slopes = np.array(reference_slopes(n_heads))
        if sorted_slopes:
            slopes = np.sort(slopes)[::-1]
        i = np.arange(seq_len)[:, None]
        j = np.arange(seq_len)[None, :]
        distance = (j + 0.0) if shortcut else (j - i + 0.0)
        bias = sign * slopes[:, None, None] * distance[None]
        return np.where(j <= i, bias, -np.inf)

    return fn


# --- correct implementations pass -----------------------------------------------------------


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("head_dim, base", [(2, 10000.0), (8, 10000.0), (64, 500000.0), (128, 1e6), (96, 10.0)])
def test_correct_rope_passes(layout, head_dim, base):
    report = diagnose(
        "rope", rope_impl(head_dim, base=base, layout=layout), head_dim=head_dim, base=base, layout=layout
    )
    assert report.ok and report.bug is None and report.bugs == ()


@pytest.mark.parametrize("fraction, rotary_dim", [(0.25, 16), (0.5, 32)])
@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_correct_partial_rotary_passes(fraction, rotary_dim, layout):
    fn = rope_impl(64, layout=layout, rotary_dim=rotary_dim)
    assert diagnose("rope", fn, head_dim=64, layout=layout, rotary_fraction=fraction).ok
    assert diagnose("rope", fn, head_dim=64, layout=layout, rotary_dim=rotary_dim).ok


def test_float32_rope_passes():
    exact = rope_impl(64, base=500000.0)

    def single(x, positions):
        return exact(np.asarray(x, np.float32), np.asarray(positions, np.float32)).astype(np.float32)

    assert diagnose("rope", single, head_dim=64, base=500000.0).ok


@pytest.mark.parametrize("layout", ["interleaved", "concat"])
@pytest.mark.parametrize("d_model, base", [(2, 10000.0), (16, 10000.0), (128, 10000.0), (64, 100.0)])
def test_correct_sinusoidal_passes(layout, d_model, base):
    assert diagnose(
        "sinusoidal", sinusoidal_impl(base=base, layout=layout), d_model=d_model, base=base, layout=layout
    ).ok


def test_float32_sinusoidal_passes():
    assert diagnose("sinusoidal", sinusoidal_impl(dtype=np.float32), d_model=128).ok


def test_correct_alibi_and_shortcut_pass_under_a_causal_mask():
    assert diagnose("alibi", alibi_impl()).ok
    assert diagnose("alibi", alibi_impl(shortcut=True)).ok  # m * j differs by a constant per row


def test_shortcut_fails_without_a_causal_mask():
    def symmetric(n_heads, seq_len):
        i, j = np.arange(seq_len)[:, None], np.arange(seq_len)[None, :]
        return np.array(reference_slopes(n_heads))[:, None, None] * (j + 0.0 * i)[None]

    report = diagnose("alibi", symmetric, causal=False)
    assert not report.ok and report.bug is None and report.unrecognised


@pytest.mark.parametrize("method, factor", [("linear", 4.0), ("ntk", 2.0)])
def test_correct_scaled_rope_frequencies_pass(method, factor):
    theta = 10000.0 ** (-np.arange(32) / 32)
    ntk = (10000.0 * factor ** (64 / 62)) ** (-np.arange(32) / 32)  # base * s**(d/(d-2)), bloc97
    expected = theta / factor if method == "linear" else ntk
    assert diagnose("rope_frequencies", lambda: expected, head_dim=64, scaling={"method": method, "factor": factor}).ok


# --- every bug, injected, is named exactly --------------------------------------------------

YARN = {"method": "yarn", "factor": 16.0, "original_max_len": 4096}

RoPE_BUGS = {
    "layout": (rope_impl(64, layout="interleaved"), {"layout": "half"}),
    "dimension-index-exponent": (rope_impl(64, index_factor=4), {}),
    "model-dim-denominator": (rope_impl(64, exponent_width=4096), {"d_model": 4096}),
    "base": (rope_impl(64, base=10000.0), {"base": 500000.0}),
    "off-by-one": (rope_impl(64, offset=1), {}),
    "rotation-direction": (rope_impl(64, direction=-1), {}),
    "sin-cos-swapped": (rope_impl(64, swap=True), {}),
    "low-precision-angles": (rope_impl(64, precision="bf16-all"), {}),
    "positions-ignored": (rope_impl(64, ignore_positions=True), {}),
    "rotary-width": (rope_impl(64, rotary_dim=64), {"rotary_fraction": 0.5}),
    "rotation-applied-twice": (rope_impl(64, turns=2), {}),
    # YaRN's frequencies (the package's: the bug under test is the missing factor), without its factor
    "attention-factor": (rope_impl(64, theta=scaled_rope_frequencies(64, **YARN)[0]), {"scaling": YARN}),
}


@pytest.mark.parametrize("bug", sorted(RoPE_BUGS))
def test_rope_bug_is_named(bug):
    fn, spec = RoPE_BUGS[bug]
    report = diagnose("rope", fn, head_dim=64, **{"layout": "half", **spec})
    assert not report.ok
    assert report.bug == bug, str(report)
    assert report.bugs == (bug,)
    assert report.evidence and not report.unrecognised


def test_off_by_one_pair_index_is_named():
    # theta = base ** (-2 (i - 1) / d): pair i gets the frequency of pair i - 1 (bkitano/llama-from-scratch#8)
    report = diagnose("rope", rope_impl(64, pair_shift=-1), head_dim=64)
    assert report.bug == "off-by-one"
    assert "pair index" in str(report)


def test_bf16_frequencies_only_are_low_precision():
    report = diagnose("rope", rope_impl(64, precision="bf16-freq"), head_dim=64)
    assert report.bug == "low-precision-angles"


def test_ordinary_partial_rotary_with_the_head_as_denominator():
    fn = rope_impl(64, rotary_dim=32, exponent_width=64)  # proportional-style exponent over the whole head
    report = diagnose("rope", fn, head_dim=64, rotary_fraction=0.5)
    assert report.bug == "model-dim-denominator"


SCALING = {"method": "linear", "factor": 4.0}


def test_scaling_bugs_in_frequencies():
    theta = 10000.0 ** (-np.arange(32) / 32)
    twice = diagnose("rope_frequencies", lambda: theta / 16, head_dim=64, scaling=SCALING)
    ignored = diagnose("rope_frequencies", lambda: theta, head_dim=64, scaling=SCALING)
    assert twice.bug == "scaling-applied-twice"
    assert ignored.bug == "scaling-ignored"


def test_attention_factor_squared_is_scaling_applied_twice():
    yarn = {"method": "yarn", "factor": 16.0, "original_max_len": 4096}
    factor = 0.1 * np.log(16.0) + 1.0  # YaRN's attention factor, from the paper

    def returns_pair():
        from posenc_helpers import scaled_rope_frequencies

        inv, _ = scaled_rope_frequencies(64, method="yarn", factor=16.0, original_max_len=4096)
        return inv, factor**2

    assert diagnose("rope_frequencies", returns_pair, head_dim=64, scaling=yarn).bug == "scaling-applied-twice"


SINUSOIDAL_BUGS = {
    "dimension-index-exponent": sinusoidal_impl(dimension_index=True),
    "sin-cos-swapped": sinusoidal_impl(swap=True),
    "layout": sinusoidal_impl(layout="concat"),
    "off-by-one": sinusoidal_impl(offset=1),
    "base": sinusoidal_impl(base=1000.0),
    "rotation-direction": sinusoidal_impl(direction=-1),
}


@pytest.mark.parametrize("bug", sorted(SINUSOIDAL_BUGS))
def test_sinusoidal_bug_is_named(bug):
    report = diagnose("sinusoidal", SINUSOIDAL_BUGS[bug], d_model=32)
    assert report.bug == bug, str(report)


# The dimension index in the exponent, by hand: column j turns at 10000**(-2j/d), where the spec
# gives both columns of pair k = j // 2 the frequency 10000**(-2k/d). Column 0 is right (1 = 1);
# the first column that differs is dimension 1, the cosine of pair 0: the spec means 1, the table
# turns at 10000**(-2/d): 10**(-1/2) = 0.316228 at d = 16, 10**(-1) = 0.1 at d = 8.
# (Issue 46: the report said "pair 0; expected 0.316228, got 0.1" at d = 16, pair 1's numbers.)
@pytest.mark.parametrize("d_model, got", [(16, 0.31622776601683794), (8, 0.1)], ids=["d16", "d8"])
def test_the_dimension_index_evidence_names_the_pair_it_measured(d_model, got):
    report = diagnose("sinusoidal", sinusoidal_impl(dimension_index=True), d_model=d_model)
    assert report.bug == "dimension-index-exponent", str(report)
    (evidence,) = report.evidence
    assert evidence.pair == 0
    assert evidence.expected == pytest.approx(1.0, rel=1e-9)
    assert evidence.got == pytest.approx(got, rel=1e-6)
    assert "dimension 1, the cosine of pair 0" in evidence.note
    where = next(line for line in str(report).splitlines() if line.startswith("Where: "))
    assert where.endswith(f"(pair 0; expected 1, got {got:.6g})"), where


ALIBI_BUGS = {
    "alibi-sign": alibi_impl(sign=-1),
    "alibi-slopes-non-power-of-two": alibi_impl(naive=True),
    "off-by-one": alibi_impl(heads_from_zero=True),
}


@pytest.mark.parametrize("bug", sorted(ALIBI_BUGS))
def test_alibi_bug_is_named(bug):
    n_heads = [8, 16] if bug == "off-by-one" else None  # counted from 0, 12 heads are also not the paper's
    report = diagnose("alibi", ALIBI_BUGS[bug], n_heads=n_heads)
    assert report.bug == bug, str(report)


def test_alibi_sorted_slopes_are_named():
    # issue 45: the paper's slopes in another order are an order slip, named so at every head count
    assert diagnose("alibi", alibi_impl(sorted_slopes=True)).bug == "alibi-head-order"


def test_every_bug_in_bugs_is_injected_somewhere():
    # the names issue 36 added are injected in test_conformance_conventions.py, issue 45's in
    # test_conformance_practice.py
    added = {"convention", "low-precision-tables", "pass-through-changed", "offset-applied-twice"}
    added |= {"half-exponent", "denominator-minus-one", "alibi-head-order"}
    added |= {"rope-on-values", "qk-rotated-differently", "offset-keys-only", "bias-outside-scale", "causal-mask"}
    injected = set(RoPE_BUGS) | set(SINUSOIDAL_BUGS) | set(ALIBI_BUGS) | {"scaling-applied-twice", "scaling-ignored"}
    injected |= added
    assert injected == set(BUGS)


# --- combined bugs are never given one wrong name -------------------------------------------

COMBINED = [
    ("rope", rope_impl(64, layout="interleaved", base=10000.0), {"base": 500000.0}, {"layout", "base"}),
    ("rope", rope_impl(64, direction=-1, offset=1), {}, {"rotation-direction", "off-by-one"}),
    ("rope", rope_impl(64, swap=True, offset=1), {}, {"sin-cos-swapped", "off-by-one"}),
    (
        "sinusoidal",
        sinusoidal_impl(base=1000.0, cos_index_shift=True),
        {"d_model": 32},
        {"dimension-index-exponent", "base"},
    ),
    ("alibi", alibi_impl(sign=-1, naive=True), {}, {"alibi-sign", "alibi-slopes-non-power-of-two"}),
]


@pytest.mark.parametrize("kind, fn, spec, bugs", COMBINED, ids=[" + ".join(sorted(c[3])) for c in COMBINED])
def test_combined_bugs_are_named_together_or_unrecognised(kind, fn, spec, bugs):
    spec = {"head_dim": 64, **spec} if kind == "rope" else spec
    report = diagnose(kind, fn, **spec)
    assert not report.ok and report.bug is None
    assert set(report.bugs) <= bugs  # never a name that is not there
    assert set(report.bugs) == bugs or report.unrecognised
    assert "Combined bugs" in str(report) or "Unrecognised" in str(report)


def test_unknown_mistake_is_unrecognised_with_evidence():
    def wobbly(x, positions):
        out = rope_impl(8)(x, positions)
        out[..., 0] += 0.1 * np.asarray(x)[..., 1]  # not a rotation of pairs
        return out

    report = diagnose("rope", wobbly, head_dim=8)
    assert not report.ok and report.bug is None and report.unrecognised and report.evidence


# --- the report -----------------------------------------------------------------------------


def test_report_names_where_and_the_book_section():
    report = diagnose("rope", rope_impl(64, layout="interleaved"), head_dim=64, layout="half")
    text = str(report)
    assert text.splitlines()[0].endswith("does not conform.")
    assert text.splitlines()[-1] == f"Explained in the book: {explained_in('layout')}."
    assert "notebooks/07_rope.html#rope-layouts-permutation-apart" in text
    assert report.evidence[0].position is None or report.evidence[0].position >= 0


def test_every_bug_has_a_section_that_exists():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    assert set(EXPLAINED_IN) == set(BUGS)
    for stem, label, title in EXPLAINED_IN.values():
        text = (root / "notebooks" / "text" / f"{stem}.md").read_text(encoding="utf-8")
        assert f"({label})=" in text, label
        assert title.replace("k indexing", "$k$ indexing") in text or title in text, title


def test_exceptions_are_reported_not_swallowed():
    def broken(x, positions):
        raise RuntimeError("cache too short")

    report = diagnose("rope", broken, head_dim=8)
    assert not report.ok and report.error is not None
    assert "RuntimeError: cache too short" in report.error and "RuntimeError" in str(report)


# --- bad input ------------------------------------------------------------------------------

BAD = [
    (("spline", lambda: None), {}, ValueError, "kind"),
    ((3, lambda: None), {}, TypeError, "kind"),
    (("rope", "not callable"), {"head_dim": 8}, TypeError, "fn"),
    (("rope", lambda x: x), {"head_dim": 8}, TypeError, "fn"),
    (("rope", lambda x, t: x), {}, TypeError, "head_dim"),
    (("rope", lambda x, t: x), {"head_dim": 7}, ValueError, "head_dim"),
    (("rope", lambda x, t: x), {"head_dim": 8, "layout": "zigzag"}, ValueError, "layout"),
    (("rope", lambda x, t: x), {"head_dim": 8, "colour": 1}, TypeError, "colour"),
    (("rope", lambda x, t: x), {"head_dim": 64, "rotary_dim": 16, "rotary_fraction": 0.5}, ValueError, "contradict"),
    (("rope", lambda x, t: x), {"head_dim": 8, "scaling": {"factor": 2}}, TypeError, "scaling"),
    (("rope", lambda x, t: x), {"head_dim": 8, "scaling": {"method": "linear"}}, ValueError, "scaling"),
    (("rope", lambda x, t: np.zeros(3)), {"head_dim": 8}, ValueError, "fn returned shape"),
    (("rope", lambda x, t: np.full(np.shape(x), np.nan)), {"head_dim": 8}, ValueError, "finite"),
    (("sinusoidal", lambda t, d: "table"), {"d_model": 8}, TypeError, "fn must return"),
    (("alibi", alibi_impl()), {"causal": "yes"}, TypeError, "causal"),
    (("alibi", alibi_impl()), {"n_heads": 0}, ValueError, "n_heads"),
]


@pytest.mark.parametrize("args, spec, error, words", BAD, ids=[b[3] for b in BAD])
def test_bad_input_is_refused_by_name(args, spec, error, words):
    with pytest.raises(error, match=words):
        diagnose(*args, **spec)


def test_report_refuses_unknown_bug_names():
    with pytest.raises(ValueError, match="BUGS"):
        Report("rope", {}, ok=False, bug="typo")


# --- the command line -----------------------------------------------------------------------


def _run(tmp_path, *args):
    module = tmp_path / "userrope.py"
    module.write_text(
        textwrap.dedent("""
        import numpy as np
        from posenc_helpers import apply_rope

        def good(x, positions):
            return apply_rope(x, positions, layout="half")

        def interleaved(x, positions):
            return apply_rope(x, positions, layout="interleaved")
    """)
    )
    return subprocess.run(
        [sys.executable, "-m", "posenc_helpers.conformance", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_command_line_exit_status(tmp_path):
    good = _run(tmp_path, "rope", "userrope:good", "--head-dim", "64", "--base", "10000", "--layout", "half")
    assert good.returncode == 0, good.stderr
    assert "conforms on every probe" in good.stdout
    bad = _run(tmp_path, "rope", "userrope:interleaved", "--head-dim", "64", "--layout", "half")
    assert bad.returncode == 1
    assert "Bug: layout" in bad.stdout and "Explained in the book" in bad.stdout
    missing = _run(tmp_path, "rope", "userrope:nothing", "--head-dim", "64")
    assert missing.returncode == 2 and "nothing" in missing.stderr
