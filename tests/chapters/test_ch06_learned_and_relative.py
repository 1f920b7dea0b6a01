"""Chapter 06 helpers: learned tables, Shaw's clipped distances, the exercise checks, figures, explorer.

Expected values come from hand-worked examples (written out in the comments),
from plain Python loops over (i, j), or from a second method (for instance
logits built from the explicit vectors a_ij), never from the code under test.
"""

import math
import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

import posenc_helpers as ph
from posenc_helpers import (
    clipped_relative_positions,
    learned_encoding,
    learned_position_table,
    shaw_attention_logits,
    shaw_relative_index,
)
from posenc_helpers.checks import CheckFailed, check_clipped_distances, check_t5_buckets

X4 = np.ones((4, 4))

# Same format as CASES in tests/core/test_bad_input.py (collected there by the coverage test).
# Run by tests/core/test_bad_input.py, with every other module's cases.
BAD_INPUT_CASES = [
    (lambda: ph.learned_position_table(0, 8), ValueError, ["max_len", ">= 1"]),
    (lambda: ph.learned_position_table(512.0, 8), TypeError, ["max_len", "integer"]),
    (lambda: ph.learned_position_table(8, 0), ValueError, ["d_model", ">= 1"]),
    (lambda: ph.learned_position_table(8, True), TypeError, ["d_model"]),
    (lambda: ph.learned_position_table(8, 4, seed=-1), ValueError, ["seed", ">= 0"]),
    (lambda: ph.learned_position_table(8, 4, seed=1.5), TypeError, ["seed"]),
    (lambda: ph.learned_position_table(8, 4, scale=0.0), ValueError, ["scale", "> 0"]),
    (lambda: ph.learned_position_table(8, 4, scale=np.inf), ValueError, ["scale"]),
    (lambda: ph.learned_position_table(8, 4, scale="0.02"), TypeError, ["scale"]),
    (lambda: ph.learned_encoding([0, 1], np.ones(4)), ValueError, ["table", "2-D"]),
    (lambda: ph.learned_encoding([0], np.ones((0, 4))), ValueError, ["table", "at least one row"]),
    (lambda: ph.learned_encoding([0], [[1.0, np.nan]]), ValueError, ["table", "finite"]),
    (lambda: ph.learned_encoding([0], [["a", "b"]]), TypeError, ["table"]),
    (lambda: ph.learned_encoding([0.5], X4), ValueError, ["positions", "whole numbers"]),
    (lambda: ph.learned_encoding([np.nan], X4), ValueError, ["positions", "finite"]),
    (lambda: ph.learned_encoding([True], X4), TypeError, ["positions"]),
    (lambda: ph.learned_encoding(True, X4), TypeError, ["positions"]),
    (lambda: ph.learned_encoding("0", X4), TypeError, ["positions"]),
    (lambda: ph.clipped_relative_positions(-1, 3, 2), ValueError, ["query_len", ">= 0"]),
    (lambda: ph.clipped_relative_positions(3, 2.0, 2), TypeError, ["key_len", "integer"]),
    (lambda: ph.clipped_relative_positions(3, 3, 0), ValueError, ["max_distance", ">= 1"]),
    (lambda: ph.shaw_relative_index(3, 3, 0), ValueError, ["max_distance", ">= 1"]),
    (lambda: ph.shaw_relative_index(3, -3, 1), ValueError, ["key_len"]),
    (lambda: ph.shaw_relative_index(3, 3, "2"), TypeError, ["max_distance"]),
    (lambda: ph.shaw_attention_logits(np.ones(4), X4, np.ones((3, 4))), ValueError, ["queries", "2-D"]),
    (lambda: ph.shaw_attention_logits(X4, np.ones((4, 3)), np.ones((3, 4))), ValueError, ["same width"]),
    (lambda: ph.shaw_attention_logits(X4, X4, np.ones((4, 4))), ValueError, ["relative_keys", "odd"]),
    (lambda: ph.shaw_attention_logits(X4, X4, np.ones((1, 4))), ValueError, ["relative_keys", "at least 3"]),
    (lambda: ph.shaw_attention_logits(X4, X4 * np.nan, np.ones((3, 4))), ValueError, ["keys", "finite"]),
    (lambda: ph.shaw_attention_logits(X4, [["a"] * 4] * 4, np.ones((3, 4))), TypeError, ["keys"]),
    (lambda: ph.shaw_attention_logits(np.ones((2, 0)), np.ones((2, 0)), np.ones((3, 0))), ValueError, ["d >= 1"]),
]


# --------------------------------------------------------------------------- learned tables
def test_learned_table_shape_seed_and_spread():
    table = learned_position_table(512, 64)
    assert table.shape == (512, 64) and table.dtype == np.float64
    np.testing.assert_array_equal(table, learned_position_table(512, 64, seed=0))
    assert not np.array_equal(table, learned_position_table(512, 64, seed=1))
    # 32 768 draws of N(0, 0.02^2): the sample std is within 1 % of 0.02 (its own std is ~0.4 %).
    assert abs(table.std() - 0.02) < 2e-4 and abs(table.mean()) < 1e-3
    wide = learned_position_table(200, 50, scale=1.5, seed=3)
    assert abs(wide.std() - 1.5) < 0.03


def test_learned_encoding_looks_rows_up():
    table = np.arange(12.0).reshape(4, 3)  # row t is [3t, 3t + 1, 3t + 2]
    np.testing.assert_array_equal(learned_encoding([2, 0], table), [[6.0, 7.0, 8.0], [0.0, 1.0, 2.0]])
    np.testing.assert_array_equal(learned_encoding(3, table), [9.0, 10.0, 11.0])
    # whole-number floats (as from integer_positions) and numpy integers are accepted
    np.testing.assert_array_equal(learned_encoding(np.array([1.0, 3.0]), table), table[[1, 3]])
    np.testing.assert_array_equal(learned_encoding(np.int32(1), table), table[1])
    # any shape of positions: (2, 2) positions give (2, 2, 3)
    assert learned_encoding([[0, 1], [2, 3]], table).shape == (2, 2, 3)
    assert learned_encoding(np.array([], dtype=int), table).shape == (0, 3)
    out = learned_encoding([0], table)
    out[0, 0] = 99.0
    assert table[0, 0] == 0.0  # a copy, not a view


@pytest.mark.parametrize("bad", [4, 100, -1, -4])
def test_learned_encoding_index_error_names_positions_value_and_max_len(bad):
    table = np.zeros((4, 2))
    with pytest.raises(IndexError) as info:
        learned_encoding([0, bad, 1], table)
    message = str(info.value)
    assert "positions" in message and f"position {bad} " in message and "max_len = 4" in message
    # plain numpy wraps -1 to the last row without complaint; the helper refuses
    if bad == -1:
        assert "negative" in message


def test_learned_table_fails_the_extrapolation_and_shift_checks():
    table = learned_position_table(512, 64)
    scores = ph.score_encoding(lambda p, n: learned_encoding(p, table), long_length=512)
    failed = [key for key, result in scores.items() if not result.passed]
    assert failed == ["defined_unseen", "linear_offset"]
    assert "IndexError" in scores["defined_unseen"].evidence and "512" in scores["defined_unseen"].evidence


# --------------------------------------------------------------------------- Shaw
def _clipped_by_loops(query_len, key_len, k):
    return np.array([[max(-k, min(k, j - i)) for j in range(key_len)] for i in range(query_len)])


@pytest.mark.parametrize("query_len, key_len, k", [(3, 5, 2), (6, 6, 1), (5, 2, 3), (1, 7, 4), (9, 9, 20)])
def test_clipped_distances_match_loops(query_len, key_len, k):
    got = clipped_relative_positions(query_len, key_len, k)
    assert got.dtype == np.int64 and got.shape == (query_len, key_len)
    np.testing.assert_array_equal(got, _clipped_by_loops(query_len, key_len, k))
    np.testing.assert_array_equal(
        shaw_relative_index(query_len, key_len, k), _clipped_by_loops(query_len, key_len, k) + k
    )


def test_clipped_distances_by_hand_and_structure():
    # 4 queries, 4 keys, k = 1: distance j - i clipped to [-1, 1].
    np.testing.assert_array_equal(
        clipped_relative_positions(4, 4, 1),
        [[0, 1, 1, 1], [-1, 0, 1, 1], [-1, -1, 0, 1], [-1, -1, -1, 0]],
    )
    big = clipped_relative_positions(300, 300, 5)
    np.testing.assert_array_equal(big[1:, 1:], big[:-1, :-1])  # Toeplitz
    np.testing.assert_array_equal(np.unique(big), np.arange(-5, 6))  # 2k + 1 values only
    assert clipped_relative_positions(0, 3, 2).shape == (0, 3)


def _shaw_logits_by_loops(q, keys, table):
    k = (len(table) - 1) // 2
    d = q.shape[1]
    out = np.empty((len(q), len(keys)))
    for i in range(len(q)):
        for j in range(len(keys)):
            a_ij = table[max(-k, min(k, j - i)) + k]
            out[i, j] = q[i] @ (keys[j] + a_ij) / math.sqrt(d)
    return out


def test_shaw_logits_match_the_definition():
    rng = np.random.default_rng(5)
    q, keys, table = rng.normal(size=(5, 6)), rng.normal(size=(7, 6)), rng.normal(size=(5, 6))
    np.testing.assert_allclose(shaw_attention_logits(q, keys, table), _shaw_logits_by_loops(q, keys, table), atol=1e-12)
    np.testing.assert_allclose(shaw_attention_logits(q, keys, np.zeros((5, 6))), q @ keys.T / math.sqrt(6), atol=1e-12)
    assert shaw_attention_logits(np.ones((0, 6)), keys, table).shape == (0, 7)


def test_shaw_logits_do_not_depend_on_where_the_tokens_sit():
    rng = np.random.default_rng(8)
    x = rng.normal(size=(4, 8))
    table = rng.normal(size=(7, 8))
    longer = rng.normal(size=(20, 8))
    longer[9:13] = x
    block = shaw_attention_logits(longer, longer, table)[9:13, 9:13]
    np.testing.assert_allclose(block, shaw_attention_logits(x, x, table), atol=1e-12)


# --------------------------------------------------------------------------- checks
def _numbers(text):
    return [float(m) for m in re.findall(r"-?\d+(?:\.\d+)?", text)]


# query_len 3, key_len 5, k = 2 (the docstring example of clipped_relative_positions, by hand):
CLIPPED_3_5_2 = np.array([[0, 1, 2, 2, 2], [-1, 0, 1, 2, 2], [-2, -1, 0, 1, 2]])


def test_clipped_check_placeholder_and_right_answers():
    for placeholder in (None, ...):
        result = check_clipped_distances(placeholder, 3, 5, 2)
        assert not result and repr(result).startswith("Not attempted yet")
    result = check_clipped_distances(CLIPPED_3_5_2, 3, 5, 2)
    assert result and repr(result).startswith("Correct")
    assert check_clipped_distances(_clipped_by_loops(5, 8, 2), 5, 8, 2)
    assert check_clipped_distances(CLIPPED_3_5_2.tolist(), 3, 5, 2)


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (-CLIPPED_3_5_2, "i - j"),
        (np.subtract.outer(np.arange(5), np.arange(3)).T, "not clipped"),
        (np.subtract.outer(np.arange(3), np.arange(5)), "did not clip"),
        (CLIPPED_3_5_2 + 2, "row index"),
        (np.clip(np.subtract.outer(np.arange(5), np.arange(3)).T, -1, 1), "k - 1"),
        (np.clip(np.subtract.outer(np.arange(5), np.arange(3)).T, -3, 3), "k + 1"),
        (CLIPPED_3_5_2.T, "transposed"),
        (CLIPPED_3_5_2[:, :4], "shape (3, 5)"),
    ],
)
def test_clipped_check_recognises_mistakes(wrong, hint):
    with pytest.raises(CheckFailed) as info:
        check_clipped_distances(wrong, 3, 5, 2)
    assert hint in str(info.value)


def test_clipped_check_points_at_the_entry_and_hides_the_answer():
    wrong = CLIPPED_3_5_2.copy()
    wrong[1, 3] = 7
    with pytest.raises(CheckFailed) as info:
        check_clipped_distances(wrong, 3, 5, 2)
    message = str(info.value)
    assert "query i 1, key j 3" in message and "yours is 7" in message
    # the right value there is 2; the message states only sizes (3, 5), k = 2 and the count of
    # differing entries (1 of 15), never the expected matrix
    assert "[[" not in message and "0, 1, 2" not in message


# T5 causal mode, 32 buckets, max_distance 128: 16 exact buckets, then
# 16 + floor(16 ln(n/16) / ln 8), capped at 31 (n = query - key, keys after the query -> 0).
#   n = 20: 16 ln(1.25)/ln 8 = 1.72 -> 17;  n = 50: 8.77 -> 24;  n = 100: 14.10 -> 30;
#   n = 112: 14.97 -> 30;  n = 113: 15.04 -> 31;  n = 128, 300: capped at 31.
QUERY = 300
KEYS = np.array([300, 299, 292, 284, 280, 250, 200, 188, 187, 172, 0, 301])
CAUSAL = np.array([0, 1, 8, 16, 17, 24, 30, 30, 31, 31, 31, 0])


def test_t5_check_placeholder_and_right_answer():
    for placeholder in (None, ...):
        result = check_t5_buckets(placeholder, QUERY, KEYS)
        assert not result and repr(result).startswith("Not attempted yet")
    result = check_t5_buckets(CAUSAL, QUERY, KEYS)
    assert result and "causal" in repr(result)
    assert check_t5_buckets(CAUSAL.astype(float).tolist(), QUERY, list(KEYS))
    # bidirectional, 32 buckets: 8 exact per direction; n = 1 -> 1, key after (n = -1) -> 16 + 1
    assert check_t5_buckets([1, 17, 0], 10, [9, 11, 10], bidirectional=True)


@pytest.mark.parametrize(
    "wrong, hint",
    [
        # query - key as the relative position: every earlier key lands in bucket 0
        (np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]), "key - query"),
        # distances one too large (n + 1): 0 -> 1, 1 -> 2, ..., 112 -> 31
        (np.array([1, 2, 9, 16, 18, 24, 30, 31, 31, 31, 31, 0]), "one token too large"),
        (np.array([0, 0, 7, 15, 17, 24, 30, 30, 30, 31, 31, 0]), "one token too small"),
        # bidirectional rules: 8 exact, 16 per direction, key after -> 16 + 1
        (np.array([0, 1, 8, 10, 10, 13, 15, 15, 15, 15, 15, 17]), "bidirectional buckets"),
        # no cap: n = 128 -> 16 + 16 = 32, n = 300 -> 16 + floor(22.5) = 38
        (np.array([0, 1, 8, 16, 17, 24, 30, 30, 31, 32, 38, 0]), "capped"),
        # rounding to nearest: 1.72 -> 18, 8.77 -> 25, 14.97 -> 31
        (np.array([0, 1, 8, 16, 18, 25, 30, 31, 31, 31, 31, 0]), "rounded down"),
    ],
)
def test_t5_check_recognises_mistakes(wrong, hint):
    with pytest.raises(CheckFailed) as info:
        check_t5_buckets(wrong, QUERY, KEYS)
    assert hint in str(info.value)


def test_t5_check_other_mistakes_and_secrecy():
    wrong = CAUSAL.copy()
    wrong[5] = 5
    with pytest.raises(CheckFailed) as info:
        check_t5_buckets(wrong, QUERY, KEYS)
    message = str(info.value)
    # entry 5 of KEYS is the key at position 250: the message names the position, not just the index
    assert "the key at position 250 (entry 5 of key_positions)" in message and "yours is 5" in message
    numbers = set(_numbers(message))
    # only the settings (32, 128), the count (1 of 12), the key (250, entry 5) and the student's value appear
    assert numbers <= {32.0, 128.0, 1.0, 12.0, 250.0, 5.0}, numbers
    with pytest.raises(CheckFailed, match=r"shape \(12,\)"):
        check_t5_buckets(CAUSAL[:-1], QUERY, KEYS)
    # the wrong mode in bidirectional exercises is also named
    with pytest.raises(CheckFailed, match="causal buckets"):
        check_t5_buckets([1, 0, 0], 10, [9, 11, 10], bidirectional=True)


@pytest.mark.parametrize(
    "call, exception, words",
    [
        (lambda: check_clipped_distances(None, 0, 3, 1), ValueError, ["query_len", ">= 1"]),
        (lambda: check_clipped_distances(None, 3, 3.0, 1), TypeError, ["key_len"]),
        (lambda: check_clipped_distances(None, 3, 3, 0), ValueError, ["max_distance"]),
        (lambda: check_t5_buckets(None, -1, [0]), ValueError, ["query_position", ">= 0"]),
        (lambda: check_t5_buckets(None, 1, 0), TypeError, ["key_positions"]),
        (lambda: check_t5_buckets(None, 1, [0.5]), TypeError, ["key_positions", "integers"]),
        (lambda: check_t5_buckets(None, 1, []), ValueError, ["key_positions", "non-empty"]),
        (lambda: check_t5_buckets(None, 1, [-2]), ValueError, ["key_positions", ">= 0"]),
        (lambda: check_t5_buckets(None, 1, [0], bidirectional="no"), TypeError, ["bidirectional"]),
        (lambda: check_t5_buckets(None, 1, [0], num_buckets=1), ValueError, ["num_buckets"]),
        (lambda: check_t5_buckets(None, 1, [0], max_distance=4), ValueError, ["max_distance"]),
    ],
)
def test_checks_reject_bad_arguments(call, exception, words):
    with pytest.raises(exception) as info:
        call()
    for word in words:
        assert word in str(info.value)


# --------------------------------------------------------------------------- figures
def test_learned_table_plot_marks_the_missing_rows():
    from posenc_helpers.plotting import plot_learned_table

    ax = plot_learned_table(np.full((5, 3), 0.5), show_until=8, title="t")
    assert ax.get_title() == "t" and ax.get_ylim() == (7.5, -0.5)
    assert ax.images[0].get_clim() == (-1.0, 1.0)  # zero spread: the default range is [-1, 1]
    assert any("no row for t ≥ 5" in text.get_text() for text in ax.texts)
    ax = plot_learned_table(np.ones((5, 3)), colorbar=False, limit=2.0)
    assert not ax.texts and ax.images[0].get_clim() == (-2.0, 2.0)
    plt.close("all")


def test_relative_matrix_plot():
    from posenc_helpers.plotting import plot_relative_matrix

    ax = plot_relative_matrix(CLIPPED_3_5_2, title="clip")
    assert ax.images[0].get_clim() == (-2.0, 2.0) and len(ax.texts) == 15
    ax = plot_relative_matrix(np.arange(400).reshape(20, 20), diverging=False)
    assert ax.images[0].get_clim() == (0.0, 399.0) and not ax.texts
    plt.close("all")


def test_t5_bucket_plot_shades_regions():
    from posenc_helpers.plotting import plot_t5_buckets

    rel = np.arange(-200, 201)
    ax = plot_t5_buckets(rel, bidirectional=False, title="causal")
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), ph.t5_relative_bucket(rel, bidirectional=False))
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert "keys after the query (bucket 0)" in labels and "exact (one distance each)" in labels
    ax = plot_t5_buckets(rel, legend=False, shade=False)
    assert ax.get_legend() is None and not ax.patches
    plt.close("all")


@pytest.mark.parametrize(
    "call, exception, words",
    [
        ("plot_learned_table(np.ones(3))", ValueError, ["table", "2-D"]),
        ("plot_learned_table([[np.nan]])", ValueError, ["table", "finite"]),
        ("plot_learned_table('abc')", TypeError, ["table"]),
        ("plot_learned_table(np.ones((4, 2)), show_until=3)", ValueError, ["show_until", ">= max_len"]),
        ("plot_learned_table(np.ones((4, 2)), show_until=5.0)", TypeError, ["show_until"]),
        ("plot_learned_table(np.ones((4, 2)), limit=-1.0)", ValueError, ["limit"]),
        ("plot_relative_matrix(np.ones((0, 2)))", ValueError, ["matrix", "non-empty"]),
        ("plot_relative_matrix([['a']])", TypeError, ["matrix"]),
        ("plot_t5_buckets(np.arange(5.0))", TypeError, ["relative_positions", "integers"]),
        ("plot_t5_buckets(np.array([3, 1]))", ValueError, ["increasing"]),
        ("plot_t5_buckets(np.array([3]))", ValueError, ["at least 2"]),
        ("plot_t5_buckets(np.arange(5), num_buckets=2)", ValueError, ["num_buckets"]),
    ],
)
def test_plotting_rejects_bad_input(call, exception, words):
    from posenc_helpers import plotting

    with pytest.raises(exception) as info:
        eval(call, {"np": np, **{name: getattr(plotting, name) for name in plotting.__all__}})
    for word in words:
        assert word in str(info.value)
    plt.close("all")


# --------------------------------------------------------------------------- explorer
def test_t5_explorer_updates_artists_in_place():
    from posenc_helpers.widgets import T5BucketExplorer

    explorer = T5BucketExplorer()
    axes_before = list(explorer.figure.axes)
    lines_before = list(explorer.ax_curve.lines)
    first_png = explorer.image.value
    # defaults (bidirectional, 32, 128): 8 exact; bucket 15 starts at 8 * 16**(7/8) = 90.5 -> 91
    assert explorer.max_exact == 8 and explorer.last_bucket_start == 91
    np.testing.assert_array_equal(explorer.curve.get_ydata(), ph.t5_relative_bucket(np.arange(-300, 301)))
    explorer.set(bidirectional=False)
    # causal: 16 exact; bucket 31 starts at 16 * 8**(15/16) = 112.4 -> 113
    assert explorer.max_exact == 16 and explorer.last_bucket_start == 113
    assert "causal" in explorer.status.value and "113" in explorer.status.value
    assert explorer.figure.axes == axes_before and list(explorer.ax_curve.lines) == lines_before
    assert explorer.image.value != first_png
    # the future region is shown in causal mode only
    assert explorer.spans["future"][0].get_visible()
    explorer.set(bidirectional=True)
    assert not explorer.spans["future"][0].get_visible()
    # exact region of 8 buckets, bidirectional: x from -7.5 to 7.5
    exact = explorer.spans["exact"][0]
    assert exact.get_x() == -7.5 and exact.get_width() == 15.0
    # widths of the "before" direction: 8 exact buckets of width 1, then bucket 8 covers 8 .. 11
    widths = explorer.width_line.get_ydata()
    np.testing.assert_array_equal(widths[:9], [1, 1, 1, 1, 1, 1, 1, 1, 4])
    plt.close("all")


def test_t5_explorer_rejects_bad_span():
    from posenc_helpers.widgets import T5BucketExplorer

    with pytest.raises(ValueError, match="span"):
        T5BucketExplorer(span=10)
    with pytest.raises(TypeError, match="span"):
        T5BucketExplorer(span=100.0)


def test_relative_schemes_are_said_to_be_defined_not_to_work_at_any_length():
    # Issue 23: being defined at every length does not make a trained model work there (chapter 11).
    text = (Path(__file__).resolve().parents[2] / "notebooks" / "text" / "06_learned_and_relative.md").read_text()
    prose = " ".join(text.split())
    assert "so relative schemes work at any sequence length" not in prose
    assert "can be used at any length" not in prose and "can be run on sequences of any length" not in prose
    assert "so relative schemes are *defined* at any sequence length" in prose
    assert "does not make a trained model work there" in prose
