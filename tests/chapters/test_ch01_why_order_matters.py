"""Chapter 01 helpers: the exercise checks, the figures and the word-order explorer.

Expected values are worked out by hand in the comments, from set-ups chosen so that attention is
exact on paper: with W_Q = W_K = 0 every score is 0 and every weight 1/n, and with embeddings
20 I and identity projections the scores are 400 / sqrt(d) on the diagonal and 0 elsewhere, so
each token attends to itself (the other weights are below e^-200).
"""

import re

import matplotlib.pyplot as plt
import numpy as np
import pytest

from posenc_helpers.attention import scaled_dot_product_attention
from posenc_helpers.checks import (
    CheckFailed,
    check_equivariant_prediction,
    check_permutation_matrix,
    check_symmetry_preserving_signal,
)
from posenc_helpers.plotting import plot_attention_weights, plot_pooled_summaries
from posenc_helpers.widgets import WordOrderExplorer

SOURCE = ["dog", "bites", "man"]
TARGET = ["bites", "man", "dog"]
RIGHT_P = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=float)  # worked out by hand

# Each token attends to itself: output row i is row i of X W_V = X (see the module docstring).
SELF_X = 20.0 * np.eye(3)
IDENTITY = np.eye(3)
# No query-key interaction: every weight is 1/3 and every output row the mean of the V rows.
ZERO = np.zeros((3, 3))


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _setup(seed=0, n=4, d=5):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    w = rng.normal(size=(3, d, d)) / np.sqrt(d)
    return x, w


def _numbers(text):
    return {float(m) for m in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", text)}


# --------------------------------------------------------------------------- checks
def test_placeholders_are_not_attempted():
    x, (wq, wk, wv) = _setup(n=3)
    for result in (
        check_permutation_matrix(None, SOURCE, TARGET),
        check_permutation_matrix(..., SOURCE, TARGET),
        check_equivariant_prediction(None, x, [2, 1, 0], wq, wk, wv),
        check_symmetry_preserving_signal(None, x, wq, wk, wv),
    ):
        assert not result
        assert result.status == "not attempted"
        assert repr(result).startswith("Not attempted yet")


def test_permutation_matrix_right_and_wrong():
    result = check_permutation_matrix(RIGHT_P, SOURCE, TARGET)
    assert result and repr(result).startswith("Correct")
    with pytest.raises(CheckFailed, match="inverse permutation"):
        check_permutation_matrix(RIGHT_P.T, SOURCE, TARGET)
    with pytest.raises(CheckFailed, match="exactly one 1"):
        check_permutation_matrix(np.ones((3, 3)), SOURCE, TARGET)
    with pytest.raises(CheckFailed, match=r"shape \(3, 3\)"):
        check_permutation_matrix(np.eye(4), SOURCE, TARGET)
    with pytest.raises(CheckFailed, match="first is at row 0, column"):
        check_permutation_matrix(np.eye(3), SOURCE, TARGET)
    with pytest.raises(CheckFailed, match="numpy array of numbers"):
        check_permutation_matrix("P", SOURCE, TARGET)


def test_permutation_matrix_of_four_words_by_hand():
    # target "b d a c" from source "a b c d": row i of P picks the source index of target[i],
    # i.e. b -> 1, d -> 3, a -> 0, c -> 2.
    source, target = ["a", "b", "c", "d"], ["b", "d", "a", "c"]
    p = np.zeros((4, 4))
    p[[0, 1, 2, 3], [1, 3, 0, 2]] = 1.0
    x = np.array([[1.0], [2.0], [3.0], [4.0]])  # word a is 1, b is 2, ...
    assert (p @ x).ravel().tolist() == [2.0, 4.0, 1.0, 3.0]  # b d a c: the claim P @ X = X_target
    assert check_permutation_matrix(p, source, target)
    assert check_permutation_matrix(p.astype(np.float32), source, target)
    # P.T maps target back to source: (P.T @ x) is a c d b, the inverse permutation.
    with pytest.raises(CheckFailed, match="inverse permutation"):
        check_permutation_matrix(p.T, source, target)


def test_permutation_matrix_rejects_bad_word_lists():
    with pytest.raises(TypeError, match="source"):
        check_permutation_matrix(RIGHT_P, "dog bites man", TARGET)
    with pytest.raises(ValueError, match="target"):
        check_permutation_matrix(RIGHT_P, SOURCE, ["dog", "dog", "man"])
    with pytest.raises(ValueError, match="same words"):
        check_permutation_matrix(RIGHT_P, SOURCE, ["cat", "bites", "man"])


def test_equivariant_prediction():
    x, (wq, wk, wv) = _setup()
    out, _ = scaled_dot_product_attention(x @ wq, x @ wk, x @ wv)
    order = [3, 2, 1, 0]
    assert check_equivariant_prediction(out[order], x, order, wq, wk, wv)
    with pytest.raises(CheckFailed, match="original order"):
        check_equivariant_prediction(out, x, order, wq, wk, wv)
    order = [1, 2, 3, 0]
    with pytest.raises(CheckFailed, match="inverse reordering"):
        check_equivariant_prediction(out[np.argsort(order)], x, order, wq, wk, wv)
    with pytest.raises(ValueError, match="order"):
        check_equivariant_prediction(out, x, [0, 0, 1, 2], wq, wk, wv)


def test_equivariant_prediction_by_hand_when_each_token_attends_to_itself():
    # Output = X itself (module docstring), so the reordered sentence gives X[order]:
    # order [2, 0, 1] puts rows 2, 0, 1 first, i.e. 20 at (0, 2), (1, 0), (2, 1).
    order = [2, 0, 1]
    by_hand = np.array([[0.0, 0.0, 20.0], [20.0, 0.0, 0.0], [0.0, 20.0, 0.0]])
    assert check_equivariant_prediction(by_hand, SELF_X, order, IDENTITY, IDENTITY, IDENTITY)
    with pytest.raises(CheckFailed, match="original order"):
        check_equivariant_prediction(SELF_X, SELF_X, order, IDENTITY, IDENTITY, IDENTITY)
    # X[argsort(order)] = X[[1, 2, 0]]: the inverse reordering
    inverse = np.array([[0.0, 20.0, 0.0], [0.0, 0.0, 20.0], [20.0, 0.0, 0.0]])
    with pytest.raises(CheckFailed, match="inverse reordering"):
        check_equivariant_prediction(inverse, SELF_X, order, IDENTITY, IDENTITY, IDENTITY)


def test_equivariant_prediction_names_the_wrong_axis():
    # 4 words of width 5: the output has 4 rows (words) and 5 columns (features)
    x, (wq, wk, wv) = _setup(n=4, d=5)
    out, _ = scaled_dot_product_attention(x @ wq, x @ wk, x @ wv)
    reverse = [3, 2, 1, 0]
    assert check_equivariant_prediction(out[::-1], x, reverse, wq, wk, wv)
    with pytest.raises(CheckFailed, match="you reordered the columns"):
        check_equivariant_prediction(out[:, ::-1], x, reverse, wq, wk, wv)
    with pytest.raises(CheckFailed, match="you reversed both axes"):
        check_equivariant_prediction(np.flip(out), x, reverse, wq, wk, wv)
    with pytest.raises(CheckFailed, match=r"yours has shape \(4, 4\) because you indexed the columns"):
        check_equivariant_prediction(out[:, reverse], x, reverse, wq, wk, wv)
    # a square output (width 4 = 4 words): the columns permuted keep the shape
    x, (wq, wk, wv) = _setup(n=4, d=4)
    out, _ = scaled_dot_product_attention(x @ wq, x @ wk, x @ wv)
    with pytest.raises(CheckFailed, match="you reordered the columns"):
        check_equivariant_prediction(out[:, [1, 2, 3, 0]], x, [1, 2, 3, 0], wq, wk, wv)


def test_symmetry_preserving_signal():
    x, (wq, wk, wv) = _setup(n=3)
    constant_rows = np.tile(np.arange(5.0), (3, 1))
    assert check_symmetry_preserving_signal(constant_rows, x, wq, wk, wv)
    with pytest.raises(CheckFailed, match="all zeros"):
        check_symmetry_preserving_signal(np.zeros((3, 5)), x, wq, wk, wv)
    with pytest.raises(CheckFailed, match="tell the orders"):
        check_symmetry_preserving_signal(np.arange(15.0).reshape(3, 5), x, wq, wk, wv)
    with pytest.raises(CheckFailed, match="shape"):
        check_symmetry_preserving_signal(np.ones((5, 3)), x, wq, wk, wv)
    with pytest.raises(CheckFailed, match="non-finite"):
        check_symmetry_preserving_signal(np.full((3, 5), np.nan), x, wq, wk, wv)
    with pytest.raises(ValueError, match="embeddings"):
        check_symmetry_preserving_signal(constant_rows, np.ones((8, 5)), wq, wk, wv)


def test_any_signal_is_blind_to_order_when_attention_is_uniform():
    # With W_Q = W_K = 0 every output row is mean(X[order] + S) W_V, the same for every
    # order: even a signal that differs by position cannot break the symmetry.
    x = np.arange(9.0).reshape(3, 3)
    by_position = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0]])
    assert check_symmetry_preserving_signal(by_position, x, ZERO, ZERO, IDENTITY)
    # Each token attending to itself tells the orders apart as soon as S differs by row.
    with pytest.raises(CheckFailed, match="tell the orders"):
        check_symmetry_preserving_signal(by_position, SELF_X, IDENTITY, IDENTITY, IDENTITY)


def test_messages_never_reveal_the_expected_output():
    x, (wq, wk, wv) = _setup(n=3, d=4)
    out, _ = scaled_dot_product_attention(x @ wq, x @ wk, x @ wv)
    order = [1, 2, 0]
    expected = out[order]
    wrong = expected.copy()
    wrong[1, 2] += 0.5
    with pytest.raises(CheckFailed) as info:
        check_equivariant_prediction(wrong, x, order, wq, wk, wv)
    message = str(info.value)
    assert "token 1, feature 2" in message
    shown = {round(v, 3) for v in _numbers(message)}
    assert not shown & {round(float(v), 3) for v in expected.ravel()}
    with pytest.raises(CheckFailed) as info:
        check_permutation_matrix(np.eye(3), SOURCE, TARGET)
    assert str(RIGHT_P.tolist()) not in str(info.value) and "[[0" not in str(info.value)


# --------------------------------------------------------------------------- figures
def test_plot_functions_validate_and_draw():
    ax = plot_attention_weights(np.eye(3), ["a", "b", "c"], title="t")
    assert ax.get_title() == "t" and len(ax.texts) == 9
    with pytest.raises(ValueError, match="square"):
        plot_attention_weights(np.ones((2, 3)), ["a", "b"])
    with pytest.raises(ValueError, match="labels"):
        plot_attention_weights(np.eye(2), ["a"])
    with pytest.raises(ValueError, match="same length"):
        plot_pooled_summaries({"a": np.ones(2), "b": np.ones(3)})
    with pytest.raises(ValueError, match="at least one"):
        plot_pooled_summaries({})


def test_attention_weights_cells_by_hand():
    weights = np.array([[0.25, 0.75], [1.0, 0.0]])
    ax = plot_attention_weights(weights, ["x", "y"])
    # row by row, two decimals; dark text on the light cells (above 0.55), white on the dark
    assert [t.get_text() for t in ax.texts] == ["0.25", "0.75", "1.00", "0.00"]
    assert [t.get_color() for t in ax.texts] == ["white", "black", "black", "white"]
    assert [t.get_position() for t in ax.texts] == [(0, 0), (1, 0), (0, 1), (1, 1)]  # (key, query)
    (image,) = ax.images
    assert image.get_clim() == (0.0, 1.0)
    np.testing.assert_array_equal(image.get_array(), weights)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["x", "y"]
    assert ax.get_xlabel() == "key (attended-to token)" and ax.get_ylabel() == "query token"
    assert not plot_attention_weights(weights, ["x", "y"], annotate=False).texts


def test_pooled_summaries_bars_by_hand():
    ax = plot_pooled_summaries({"a": np.array([1.0, -2.0]), "b": np.array([3.0, 0.5])})
    # two sentences share 0.8 of each feature's slot: bars 0.4 wide, centred at feature -0.2 and +0.2,
    # so their left edges are at -0.4, 0.6 (sentence a) and 0.0, 1.0 (sentence b)
    bars = ax.patches
    assert [round(b.get_x(), 12) for b in bars] == [-0.4, 0.6, 0.0, 1.0]
    assert [round(b.get_width(), 12) for b in bars] == [0.4] * 4
    assert [b.get_height() for b in bars] == [1.0, -2.0, 3.0, 0.5]
    assert [b.get_hatch() for b in bars] == [None, None, "//", "//"]  # told apart by hatching too
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b"]


# --------------------------------------------------------------------------- explorer
def _explorer():
    return WordOrderExplorer.demo()[0]


def test_word_order_explorer_reacts_to_controls():
    explorer = _explorer()
    first_png = explorer.image.value
    assert first_png[:8] == b"\x89PNG\r\n\x1a\n"
    assert "(identical)" in explorer.status.value and "man bites dog" in explorer.status.value
    explorer.set(order=(1, 0, 2))
    assert "(identical)" in explorer.status.value and "bites dog man" in explorer.status.value
    explorer.set(strength=1.0)
    assert "(different)" in explorer.status.value
    assert explorer.render_count == 3
    assert explorer.image.value != first_png
    with pytest.raises(ValueError, match="unknown control"):
        explorer.set(speed=3)
    bundle = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_word_order_explorer_with_uniform_attention_by_hand():
    # W_Q = W_K = 0: every weight is 1/3, shown as 0.33, and the pooled output is
    # mean(X + s S) W_V whatever the order, so even a position signal changes nothing.
    x = np.arange(9.0).reshape(3, 3)
    explorer = WordOrderExplorer(["a", "b", "c"], x, ZERO, ZERO, IDENTITY, np.eye(3))
    explorer.set(strength=1.0)
    assert {t.get_text() for row in explorer.cell_text for t in row} == {"0.33"}
    assert explorer.status.value.endswith("largest difference 0 (identical)")
    # mean of the rows of X + S: columns (0+3+6+1)/3, (1+4+7+1)/3, (2+5+8+1)/3
    heights = [bar.get_height() for bar in explorer.bars_current]
    np.testing.assert_allclose(heights, [10 / 3, 13 / 3, 16 / 3], rtol=1e-12)


def test_word_order_explorer_with_self_attention_by_hand():
    # Each token attends to itself (module docstring): weights 1.00 on the diagonal, the pooled
    # output is the mean of the rows of 20 I, 20/3 in every feature, for every order.
    explorer = WordOrderExplorer(["a", "b", "c"], SELF_X, IDENTITY, IDENTITY, IDENTITY, np.eye(3))
    texts = [[t.get_text() for t in row] for row in explorer.cell_text]
    assert texts == [["1.00", "0.00", "0.00"], ["0.00", "1.00", "0.00"], ["0.00", "0.00", "1.00"]]
    np.testing.assert_allclose([b.get_height() for b in explorer.bars_current], [20 / 3] * 3, rtol=1e-12)
    assert "<b>c b a</b>" in explorer.status.value and "(identical)" in explorer.status.value
    # strength 1 adds I to the reversed sentence 20 I[[2, 1, 0]]: its rows are 20 e_2 + e_0,
    # 21 e_1, 20 e_0 + e_2, each still attending to itself, so the pooled output is
    # (21, 21, 21) / 3 = 7 in every feature; the original order gets 21 I, also 7: identical.
    explorer.set(strength=1.0)
    np.testing.assert_allclose([b.get_height() for b in explorer.bars_current], [7.0] * 3, rtol=1e-9)
    assert "(identical)" in explorer.status.value


def test_word_order_explorer_rejects_bad_sentences():
    with pytest.raises(ValueError, match="distinct"):
        WordOrderExplorer(["a", "a"], np.ones((2, 2)), np.eye(2), np.eye(2), np.eye(2), np.ones((2, 2)))
    with pytest.raises(ValueError, match="distinct"):
        WordOrderExplorer(list("abcdef"), np.ones((6, 2)), np.eye(2), np.eye(2), np.eye(2), np.ones((6, 2)))
    with pytest.raises(ValueError, match="one row per word"):
        WordOrderExplorer(["a", "b"], np.ones((2, 2)), np.eye(2), np.eye(2), np.eye(2), np.ones((3, 2)))
