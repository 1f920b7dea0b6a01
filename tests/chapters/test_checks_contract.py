"""Exercise checks: right answers pass, placeholders are not failures, wrong answers get
helpful messages that never contain the answer."""

import re

import numpy as np
import pytest

from posenc_helpers.attention import scaled_dot_product_attention
from posenc_helpers.checks import (
    CheckFailed,
    check_equivariant_prediction,
    check_permutation_matrix,
    check_symmetry_preserving_signal,
)
from posenc_helpers.checks._core import compare_arrays

SOURCE = ["dog", "bites", "man"]
TARGET = ["bites", "man", "dog"]
RIGHT_P = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=float)  # worked out by hand


def _setup(seed=0, n=4, d=5):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    w = rng.normal(size=(3, d, d)) / np.sqrt(d)
    return x, w


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


def _numbers(text):
    return {float(m) for m in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", text)}


def test_messages_never_reveal_expected_values():
    expected = np.array([[0.123456, 0.654321], [0.5, 0.25]])
    answer = expected.copy()
    answer[1, 0] = 0.7
    with pytest.raises(CheckFailed) as info:
        compare_arrays(answer, expected, name="A", description="the matrix", axes=("row", "column"))
    message = str(info.value)
    assert "row 1, column 0" in message and "0.7" in message
    assert not _numbers(message) & {0.123456, 0.654321, 0.5, 0.25}


def test_non_finite_answers_are_pointed_at():
    with pytest.raises(CheckFailed, match="non-finite value .* position 1, dimension 0"):
        compare_arrays(
            np.array([[0.0], [np.nan]]),
            np.zeros((2, 1)),
            name="PE",
            description="x",
            axes=("position", "dimension"),
        )


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
