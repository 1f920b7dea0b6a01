"""Chapter 08 (ALiBi): the m·j bias helper, the exercise checks, the figures and the explorer.

Expected values are worked out by hand or with plain Python loops, independently of the package.
"""

import math
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest

import posenc_helpers as ph
from posenc_helpers.checks import CheckFailed, check_alibi_head_bias, check_alibi_slopes

# Run by tests/core/test_bad_input.py, with every other module's cases.
BAD_INPUT_CASES = [
    # (call, exception, words the message must contain), as in tests/core/test_bad_input.py
    (lambda: ph.alibi_bias_shifted(0, 4), ValueError, ["n_heads", ">= 1"]),
    (lambda: ph.alibi_bias_shifted(2.0, 4), TypeError, ["n_heads", "integer"]),
    (lambda: ph.alibi_bias_shifted(8, -2), ValueError, ["seq_len", ">= 0"]),
    (lambda: ph.alibi_bias_shifted(8, "4"), TypeError, ["seq_len"]),
    (lambda: ph.alibi_bias_shifted(8, 4, causal=1), TypeError, ["causal", "True or False"]),
]


def _numbers(text):
    return [float(m) for m in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", text)]


def _softmax_rows(logits):
    """Row softmax by a plain loop, -inf entries get weight 0."""
    out = []
    for row in logits:
        top = max(x for x in row if x != -math.inf)
        exps = [0.0 if x == -math.inf else math.exp(x - top) for x in row]
        total = sum(exps)
        out.append([e / total for e in exps])
    return np.array(out)


# --------------------------------------------------------------------------- alibi_bias_shifted
def test_shifted_bias_by_hand():
    # 4 heads: slopes 2**(-2h) = 1/4, 1/16, 1/64, 1/256; bias[h, i, j] = m_h * j, future masked.
    bias = ph.alibi_bias_shifted(4, 3)
    assert bias.shape == (4, 3, 3) and bias.dtype == np.float64
    inf = -np.inf
    np.testing.assert_array_equal(bias[1], [[0.0, inf, inf], [0.0, 1 / 16, inf], [0.0, 1 / 16, 2 / 16]])
    np.testing.assert_array_equal(ph.alibi_bias_shifted(4, 3, causal=False)[3], [[0.0, 1 / 256, 2 / 256]] * 3)
    assert ph.alibi_bias_shifted(3, 0).shape == (3, 0, 0)
    assert ph.alibi_bias_shifted(np.int64(2), np.int32(2), causal=np.bool_(True)).shape == (2, 2, 2)


def test_shifted_bias_is_writable_and_independent():
    bias = ph.alibi_bias_shifted(2, 3, causal=False)
    bias[0, 0, 0] = 5.0  # a copy, not a read-only broadcast view
    assert ph.alibi_bias_shifted(2, 3, causal=False)[0, 0, 0] == 0.0


@pytest.mark.parametrize("n_heads, seq_len", [(1, 5), (4, 6), (12, 9)])
def test_shifted_bias_gives_alibi_attention_under_the_causal_mask(n_heads, seq_len):
    # By plain loops: logits = scores + bias, where ALiBi's bias is -m (i - j) and the shortcut's m j.
    rng = np.random.default_rng(seed=0)
    scores = rng.normal(size=(seq_len, seq_len)) * 3
    for h, m in enumerate(ph.alibi_slopes(n_heads)):
        alibi = [[scores[i][j] - m * (i - j) if j <= i else -math.inf for j in range(seq_len)] for i in range(seq_len)]
        shortcut = [[scores[i][j] + m * j if j <= i else -math.inf for j in range(seq_len)] for i in range(seq_len)]
        np.testing.assert_allclose(_softmax_rows(shortcut), _softmax_rows(alibi), rtol=0, atol=1e-13)
        helper = ph.softmax(scores + ph.alibi_bias_shifted(n_heads, seq_len)[h])
        np.testing.assert_allclose(helper, _softmax_rows(alibi), rtol=0, atol=1e-13)


def test_shifted_bias_without_mask_is_not_the_symmetric_bias():
    seq_len = 7
    shortcut = ph.alibi_bias_shifted(8, seq_len, causal=False)
    symmetric = ph.alibi_bias(8, seq_len, causal=False)
    i, j = np.arange(seq_len)[:, None], np.arange(seq_len)[None, :]
    unmasked = -ph.alibi_slopes(8)[:, None, None] * (i - j)
    # the shortcut is the unmasked -m (i - j) plus a constant per row ...
    assert np.allclose(np.ptp(shortcut - unmasked, axis=-1), 0.0)
    np.testing.assert_allclose(ph.softmax(shortcut), ph.softmax(unmasked), atol=1e-13)
    # ... which is not a row constant away from -m |i - j|, so the attention differs
    assert np.ptp(shortcut - symmetric, axis=-1).max() > 1.0
    assert not np.allclose(ph.softmax(shortcut), ph.softmax(symmetric), atol=1e-3)
    # and its weights grow towards the future: row 0 of head 1 favours the last key
    assert ph.softmax(shortcut)[0, 0].argmax() == seq_len - 1


# --------------------------------------------------------------------------- check_alibi_slopes
# 20 heads by hand: 16 slopes 2**(-8h/16) = 2**(-h/2), then 2**(-8h/32) = 2**(-h/4) for h = 1, 3, 5, 7.
SLOPES_20 = [2.0 ** (-h / 2) for h in range(1, 17)] + [2.0 ** (-h / 4) for h in (1, 3, 5, 7)]
# 3 heads by hand: 2 slopes 2**(-4h) = 1/16, 1/256, then 2**(-2h) for h = 1: 1/4.
SLOPES_3 = [1 / 16, 1 / 256, 1 / 4]


def test_slopes_placeholders_are_not_attempted():
    for result in (
        check_alibi_slopes(None, 20),
        check_alibi_slopes(..., 20),
        check_alibi_head_bias(None, 0.5, 4),
        check_alibi_head_bias(..., 0.5, 4, first_query=2),
    ):
        assert not result
        assert result.status == "not attempted"
        assert repr(result).startswith("Not attempted yet")


def test_slopes_right_answers():
    result = check_alibi_slopes(SLOPES_20, n_heads=20)
    assert result and repr(result).startswith("Correct")
    assert check_alibi_slopes(np.array(SLOPES_3), n_heads=3)
    assert check_alibi_slopes([2.0**-h for h in range(1, 9)], n_heads=8)
    assert check_alibi_slopes([2.0**-8], n_heads=1)
    assert check_alibi_slopes([x * (1 + 1e-12) for x in SLOPES_20], n_heads=20)


def _direct(n, start=1):
    return [2.0 ** (-8 * h / n) for h in range(start, start + n)]


@pytest.mark.parametrize(
    "answer, hint",
    [
        (sorted(SLOPES_20, reverse=True), "sorted"),
        (sorted(SLOPES_20), "sorted"),
        (_direct(20), "power of two only"),
        (_direct(20, start=0), "off by one"),
        ([2.0 ** (-h / 2) for h in range(1, 17)] + [2.0 ** (-h / 4) for h in (2, 4, 6, 8)], r"\[1::2\]"),
        ([2.0 ** (-h / 2) for h in range(1, 17)] + [2.0 ** (-h / 4) for h in (1, 2, 3, 4)], "without skipping"),
        ([2.0 ** (-h / 4) for h in range(1, 21)], "next power of two"),
        ([2.0 ** (-h / 4) for h in (1, 3, 5, 7)] + [2.0 ** (-h / 2) for h in range(1, 17)], "wrong order"),
        ([2.0 ** (-h / 2) for h in range(0, 16)] + [2.0 ** (-h / 4) for h in (0, 2, 4, 6)], "off by one"),
    ],
)
def test_slopes_typical_mistakes_get_hints(answer, hint):
    with pytest.raises(CheckFailed, match=hint) as info:
        check_alibi_slopes(answer, n_heads=20)
    message = str(info.value)
    for value in SLOPES_20:
        assert f"{value:.6g}" not in message and f"{value:.4g}" not in message


def test_slopes_power_of_two_mistakes():
    with pytest.raises(CheckFailed, match="sorted"):
        check_alibi_slopes([2.0**-h for h in range(8, 0, -1)], n_heads=8)
    with pytest.raises(CheckFailed, match="off by one"):
        check_alibi_slopes(_direct(8, start=0), n_heads=8)


def test_slopes_other_wrong_answers_name_the_entry_without_the_answer():
    wrong = list(SLOPES_20)
    wrong[17] = 0.123
    with pytest.raises(CheckFailed) as info:
        check_alibi_slopes(wrong, n_heads=20)
    message = str(info.value)
    assert "entry 17" in message and "0.123" in message and "1 of 20" in message
    assert not any(math.isclose(x, v, rel_tol=1e-4) for x in _numbers(message) for v in SLOPES_20)
    with pytest.raises(CheckFailed, match=r"shape \(20,\)"):
        check_alibi_slopes(SLOPES_20[:16], n_heads=20)
    with pytest.raises(CheckFailed, match="non-finite"):
        check_alibi_slopes([np.nan] * 20, n_heads=20)
    with pytest.raises(CheckFailed, match="numpy array of numbers"):
        check_alibi_slopes("slopes", n_heads=20)


@pytest.mark.parametrize(
    "n_heads, exception, words",
    [(0, ValueError, ["n_heads", ">= 1"]), (2.5, TypeError, ["n_heads", "integer"]), ("8", TypeError, ["n_heads"])],
)
def test_slopes_check_rejects_bad_arguments(n_heads, exception, words):
    with pytest.raises(exception) as info:
        check_alibi_slopes(SLOPES_20, n_heads=n_heads)
    for word in words:
        assert word in str(info.value)


# --------------------------------------------------------------------------- check_alibi_head_bias
def _bias_by_loops(m, seq_len, first_query=0, *, sign=-1.0, mask=True, distance=None):
    """Rows: queries first_query .. seq_len - 1; columns: keys 0 .. seq_len - 1."""
    distance = distance or (lambda i, j: i - j)
    rows = []
    for i in range(first_query, seq_len):
        row = []
        for j in range(seq_len):
            if mask and j > i:
                row.append(-math.inf)
            else:
                row.append(sign * m * distance(i, j))
        rows.append(row)
    return np.array(rows)


M9 = 2.0**-0.5


def _expected_values(m, seq_len, first_query=0):
    return [v for v in _bias_by_loops(m, seq_len, first_query).ravel() if np.isfinite(v) and v != 0]


def _assert_no_expected_values(message, m, seq_len, first_query=0):
    for value in _expected_values(m, seq_len, first_query):
        assert f"{value:.6g}" not in message and f"{value:.4g}" not in message, (value, message)


def test_head_bias_right_answers():
    result = check_alibi_head_bias(_bias_by_loops(M9, 6), slope=M9, seq_len=6)
    assert result and repr(result).startswith("Correct")
    assert check_alibi_head_bias(_bias_by_loops(M9, 10, 6), slope=M9, seq_len=10, first_query=6)
    assert check_alibi_head_bias([[0.0]], slope=0.25, seq_len=1)
    assert check_alibi_head_bias(_bias_by_loops(0.5, 4, 3), slope=0.5, seq_len=4, first_query=3)
    # -0.0 on the diagonal is as good as +0.0
    assert check_alibi_head_bias(-0.0 + _bias_by_loops(0.5, 3) * 1.0, slope=0.5, seq_len=3)


@pytest.mark.parametrize(
    "answer, hint",
    [
        (_bias_by_loops(M9, 6, sign=+1.0), "wrong sign"),
        (_bias_by_loops(M9, 6).T, "transposed"),
        (_bias_by_loops(M9, 6, mask=False), "mask is missing"),
        (_bias_by_loops(M9, 6, mask=False, distance=lambda i, j: abs(i - j)), "symmetric"),
        (np.where(np.isinf(_bias_by_loops(M9, 6)), -1e9, _bias_by_loops(M9, 6)), "-np.inf"),
        (_bias_by_loops(M9, 6, distance=lambda i, j: -j), "shortcut"),
        (_bias_by_loops(1.0, 6), "slope is missing"),
        (_bias_by_loops(M9, 6, distance=lambda i, j: i - j + 1), "off by one"),
        (_bias_by_loops(M9 * M9, 6), "twice"),
    ],
)
def test_head_bias_typical_mistakes_get_hints(answer, hint):
    with pytest.raises(CheckFailed, match=hint) as info:
        check_alibi_head_bias(answer, slope=M9, seq_len=6)
    _assert_no_expected_values(str(info.value), M9, 6)


def test_head_bias_j_minus_i_is_the_sign_mistake():
    # -m (j - i) on the visible keys is +m (i - j): the same numbers as the sign flip.
    answer = _bias_by_loops(M9, 6, distance=lambda i, j: j - i)
    with pytest.raises(CheckFailed, match="wrong sign"):
        check_alibi_head_bias(answer, slope=M9, seq_len=6)


def test_head_bias_cache_mistakes():
    right = _bias_by_loops(M9, 10, 6)
    rows_from_zero = np.array([[-M9 * (r - j) if j <= r else -math.inf for j in range(10)] for r in range(4)])
    with pytest.raises(CheckFailed, match="row r is the query at position 6") as info:
        check_alibi_head_bias(rows_from_zero, slope=M9, seq_len=10, first_query=6)
    _assert_no_expected_values(str(info.value), M9, 10, 6)
    with pytest.raises(CheckFailed, match="looks transposed"):
        check_alibi_head_bias(right.T, slope=M9, seq_len=10, first_query=6)
    with pytest.raises(CheckFailed, match=r"4 x 10"):
        check_alibi_head_bias(_bias_by_loops(M9, 10), slope=M9, seq_len=10, first_query=6)
    with pytest.raises(CheckFailed, match="wrong sign"):
        check_alibi_head_bias(_bias_by_loops(M9, 10, 6, sign=+1.0), slope=M9, seq_len=10, first_query=6)
    with pytest.raises(CheckFailed, match="mask is missing"):
        check_alibi_head_bias(_bias_by_loops(M9, 10, 6, mask=False), slope=M9, seq_len=10, first_query=6)
    with pytest.raises(CheckFailed, match="symmetric"):
        check_alibi_head_bias(
            _bias_by_loops(M9, 10, 6, mask=False, distance=lambda i, j: abs(i - j)), slope=M9, seq_len=10, first_query=6
        )


def test_head_bias_other_wrong_answers_point_at_an_entry_without_the_answer():
    wrong = _bias_by_loops(M9, 6)
    wrong[4, 1] = 0.123
    with pytest.raises(CheckFailed) as info:
        check_alibi_head_bias(wrong, slope=M9, seq_len=6)
    message = str(info.value)
    assert "the query at position 4 and the key at position 1" in message and "0.123" in message
    _assert_no_expected_values(message, M9, 6)
    assert not any(math.isclose(x, v, rel_tol=1e-4) for x in _numbers(message) for v in _expected_values(M9, 6))
    partly = _bias_by_loops(M9, 6)
    partly[3, 5] = 0.0  # one future key left unmasked
    with pytest.raises(CheckFailed, match="the query at position 3 and the key at position 5, which should be masked"):
        check_alibi_head_bias(partly, slope=M9, seq_len=6)
    extra = _bias_by_loops(M9, 6)
    extra[4, 2] = -np.inf  # one visible key masked
    with pytest.raises(
        CheckFailed, match="the query at position 4 and the key at position 2, which should not be masked"
    ):
        check_alibi_head_bias(extra, slope=M9, seq_len=6)
    nan = _bias_by_loops(M9, 6)
    nan[2, 0] = np.nan
    with pytest.raises(
        CheckFailed, match="NaN or \\+inf at the entry of the query at position 2 and the key at position 0"
    ):
        check_alibi_head_bias(nan, slope=M9, seq_len=6)
    with pytest.raises(CheckFailed, match=r"6 x 6"):
        check_alibi_head_bias(np.zeros(6), slope=M9, seq_len=6)
    with pytest.raises(CheckFailed, match="numpy array of numbers"):
        check_alibi_head_bias("bias", slope=M9, seq_len=6)


@pytest.mark.parametrize(
    "kwargs, exception, words",
    [
        ({"slope": 0.0, "seq_len": 4}, ValueError, ["slope", "> 0"]),
        ({"slope": "0.5", "seq_len": 4}, TypeError, ["slope"]),
        ({"slope": 0.5, "seq_len": 0}, ValueError, ["seq_len", ">= 1"]),
        ({"slope": 0.5, "seq_len": 4.0}, TypeError, ["seq_len"]),
        ({"slope": 0.5, "seq_len": 4, "first_query": 4}, ValueError, ["first_query", "0 .. 3"]),
        ({"slope": 0.5, "seq_len": 4, "first_query": -1}, ValueError, ["first_query"]),
        ({"slope": 0.5, "seq_len": 4, "first_query": 1.5}, TypeError, ["first_query"]),
    ],
)
def test_head_bias_check_rejects_bad_arguments(kwargs, exception, words):
    with pytest.raises(exception) as info:
        check_alibi_head_bias(np.zeros((4, 4)), **kwargs)
    for word in words:
        assert word in str(info.value)


# --------------------------------------------------------------------------- figures
def test_plot_alibi_slopes_marks_the_extra_heads():
    from posenc_helpers.plotting import plot_alibi_slopes

    ax = plot_alibi_slopes(ph.alibi_slopes(12), title="12")
    base, extra = ax.lines[1], ax.lines[2]
    np.testing.assert_allclose(base.get_ydata(), [-h for h in range(1, 9)])
    np.testing.assert_allclose(extra.get_ydata(), [-0.5, -1.5, -2.5, -3.5])
    assert len(plot_alibi_slopes(ph.alibi_slopes(8)).lines) == 2  # no extra heads
    plt.close("all")


def test_plot_bias_heatmaps_shares_one_scale_and_masks_the_future():
    from posenc_helpers.plotting import plot_bias_heatmaps

    fig, axes = plot_bias_heatmaps(ph.alibi_bias(12, 8), ph.alibi_slopes(12), ncols=5, title="t")
    assert axes.shape == (3, 5) and not axes[2, 4].get_visible()
    low = -(2.0**-0.5) * 7
    for ax in axes.flat[:12]:
        assert ax.images[0].get_clim() == pytest.approx((low, 0.0))
    image = axes[0, 0].images[0].get_array()
    assert image.mask[0, 1] and not image.mask[1, 0]
    assert axes[1, 3].get_title() == "head 9: $m = 2^{-0.5}$"
    plt.close(fig)


def test_plot_weights_by_distance_colours_by_slope():
    from posenc_helpers.plotting import plot_weights_by_distance

    d = np.arange(6)
    ax = plot_weights_by_distance(np.exp(-np.outer([0.5, 0.01], d)), [0.5, 0.01], exponent_range=(-8, 0))
    assert ax.get_yscale() == "log" and len(ax.lines) == 2
    assert ax.lines[0].get_color() != ax.lines[1].get_color()
    ax = plot_weights_by_distance(np.zeros((1, 3)), [0.25], log_scale=False, colorbar=False)
    assert ax.get_yscale() == "linear"
    fig, axes = plt.subplots(2, 1)
    for ax in axes:
        plot_weights_by_distance(
            np.ones((1, 3)), [0.5], ax=ax, colorbar=ax is axes[-1], colorbar_space=axes, exponent_range=(-8, 0)
        )
    assert len(fig.axes) == 3  # two panels and one shared colorbar
    plt.close("all")


@pytest.mark.parametrize(
    "call, exception, words",
    [
        (lambda p: p.plot_alibi_slopes([]), ValueError, ["slopes", "non-empty"]),
        (lambda p: p.plot_alibi_slopes([0.5, -0.1]), ValueError, ["slopes", "> 0"]),
        (lambda p: p.plot_alibi_slopes([0.5, np.nan]), ValueError, ["slopes", "finite"]),
        (lambda p: p.plot_alibi_slopes("abc"), TypeError, ["slopes"]),
        (lambda p: p.plot_bias_heatmaps(np.zeros((2, 3)), [0.5, 0.25]), ValueError, ["bias", "(heads, n, n)"]),
        (lambda p: p.plot_bias_heatmaps(np.zeros((2, 3, 4)), [0.5, 0.25]), ValueError, ["bias"]),
        (lambda p: p.plot_bias_heatmaps(np.full((1, 2, 2), np.nan), [0.5]), ValueError, ["bias", "NaN"]),
        (lambda p: p.plot_bias_heatmaps(np.zeros((2, 3, 3)), [0.5]), ValueError, ["slopes", "one slope per head"]),
        (lambda p: p.plot_bias_heatmaps(np.zeros((1, 3, 3)), [0.5], ncols=0), ValueError, ["ncols"]),
        (lambda p: p.plot_bias_heatmaps(np.zeros((1, 3, 3)), [0.5], panel_size=0), ValueError, ["panel_size"]),
        (lambda p: p.plot_weights_by_distance(np.ones(3), [0.5]), ValueError, ["weights", "2-D"]),
        (lambda p: p.plot_weights_by_distance(-np.ones((1, 3)), [0.5]), ValueError, ["weights", ">= 0"]),
        (lambda p: p.plot_weights_by_distance(np.ones((2, 3)), [0.5]), ValueError, ["slopes", "one slope per row"]),
        (
            lambda p: p.plot_weights_by_distance(np.ones((1, 3)), [0.5], exponent_range=(0, -8)),
            ValueError,
            ["exponent_range", "low < high"],
        ),
    ],
)
def test_plot_functions_reject_bad_input(call, exception, words):
    import posenc_helpers.plotting as plotting

    with pytest.raises(exception) as info:
        call(plotting)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    plt.close("all")


# --------------------------------------------------------------------------- explorer
def test_explorer_matches_independent_numbers():
    from posenc_helpers.widgets import AlibiExplorer

    explorer = AlibiExplorer()
    assert explorer.values == {"n_heads": 12, "head": 1, "seq_len": 128}
    explorer.set(head=9)
    assert explorer.slope == pytest.approx(2.0**-0.5, rel=1e-15)
    # span by the closed form: smallest D with (1 - r**D) / (1 - r**128) >= 0.9
    r = math.exp(-(2.0**-0.5))
    span = next(d for d in range(1, 129) if (1 - r**d) / (1 - r**128) >= 0.9)
    assert explorer.span == span
    assert explorer.shortcut_difference < 1e-12
    assert explorer.weights.shape == (128,) and explorer.weights.sum() == pytest.approx(1.0)
    assert "head 9 of 12" in explorer.status.value and "the 1st steepest" in explorer.status.value
    count = explorer.render_count
    explorer.set(n_heads=4)  # the head slider clamps to 4, with one redraw only
    assert explorer.values["head"] == 4 and explorer.controls["head"].max == 4
    assert explorer.render_count == count + 1
    assert explorer.slope == pytest.approx(2.0**-8)
    explorer.set(n_heads=20)
    assert explorer.controls["head"].max == 20 and explorer.values["head"] == 4
    plt.close("all")


@pytest.mark.parametrize(
    "kwargs, exception, words",
    [
        ({"max_heads": 0}, ValueError, ["max_heads"]),
        ({"max_len": 4}, ValueError, ["max_len", ">= 8"]),
        ({"n_heads": 40}, ValueError, ["n_heads", "max_heads"]),
        ({"seq_len": 2048}, ValueError, ["seq_len", "max_len"]),
        ({"seq_len": 12.0}, TypeError, ["seq_len"]),
    ],
)
def test_explorer_rejects_bad_arguments(kwargs, exception, words):
    from posenc_helpers.widgets import AlibiExplorer

    with pytest.raises(exception) as info:
        AlibiExplorer(**kwargs)
    for word in words:
        assert word in str(info.value)
