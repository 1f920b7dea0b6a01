"""2-D axial RoPE and M-RoPE against values worked out independently: a hand-worked 2x2 case,
composition of two 1-D rotations written out with cos and sin, and the relative property."""

import math

import numpy as np
import pytest

from posenc_helpers import apply_rope, axial_rope, multimodal_rope

BAD_INPUT_CASES = [
    (lambda: axial_rope(np.ones((2, 6)), [0, 1], [0, 1]), ValueError, ["head_dim", "multiple of 4"]),
    (lambda: axial_rope(np.ones(8), [0], [0]), ValueError, ["x", "2 dimensions"]),
    (lambda: axial_rope(np.ones((2, 8)), [0, 1, 2], [0, 1]), ValueError, ["rows", "x.shape[-2] = 2"]),
    (lambda: axial_rope(np.ones((2, 8)), [0, 1], [0, np.nan]), ValueError, ["cols", "finite"]),
    (lambda: axial_rope(np.ones((2, 8)), [0, 1], [0, 1], base=0.0), ValueError, ["base", "> 0"]),
    (lambda: axial_rope(np.ones((2, 8)), [0, 1], [0, 1], layout="split"), ValueError, ["layout"]),
    (lambda: axial_rope("ab", [0, 1], [0, 1]), TypeError, ["x"]),
    (lambda: multimodal_rope(np.ones((2, 8)), np.zeros((3, 2)), (1, 1, 1)), ValueError, ["sections", "4"]),
    (lambda: multimodal_rope(np.ones((2, 8)), np.zeros((3, 2)), (2, 2.0, 0)), TypeError, ["sections"]),
    (lambda: multimodal_rope(np.ones((2, 8)), np.zeros((3, 2)), "123"), TypeError, ["sections"]),
    (lambda: multimodal_rope(np.ones((2, 8)), np.zeros((3, 2)), (5, -1, 0)), ValueError, ["sections", ">= 0"]),
    (lambda: multimodal_rope(np.ones((2, 8)), np.zeros((2, 2)), (2, 1, 1)), ValueError, ["positions", "(3, 2)"]),
    (lambda: multimodal_rope(np.ones((2, 8)), np.full((3, 2), np.inf), (2, 1, 1)), ValueError, ["positions", "finite"]),
    (lambda: multimodal_rope(np.ones((2, 7)), np.zeros((3, 2)), (2, 1, 1)), ValueError, ["head_dim", "even"]),
    (lambda: multimodal_rope(np.ones(8), np.zeros((3, 1)), (2, 1, 1)), ValueError, ["x", "2 dimensions"]),
    (lambda: multimodal_rope(np.ones((2, 8)), np.zeros((3, 2)), (2, 1, 1), base=-1.0), ValueError, ["base"]),
]


def _rotate(a, b, angle):
    return a * math.cos(angle) - b * math.sin(angle), a * math.sin(angle) + b * math.cos(angle)


def test_hand_worked_four_feature_head():
    # head_dim 4: each half is one pair with frequency base**0 = 1, so the angles are the row and the column
    x = np.array([[0.5, -2.0, 3.0, 1.0]])
    out = axial_rope(x, [2.0], [-1.0], base=7.0)
    expected = [*_rotate(0.5, -2.0, 2.0), *_rotate(3.0, 1.0, -1.0)]
    np.testing.assert_allclose(out[0], expected, rtol=0, atol=1e-15)


def test_two_by_two_grid_by_hand_with_eight_features():
    # head_dim 8, base 100: each half has width 4, frequencies 1 and 100**(-2/4) = 0.1
    x = np.arange(1.0, 9.0)[None].repeat(4, axis=0)
    rows, cols = [0, 0, 1, 1], [0, 1, 0, 1]
    out = axial_rope(x, rows, cols, base=100.0)
    for n, (r, c) in enumerate(zip(rows, cols, strict=True)):
        expected = [
            *_rotate(1.0, 2.0, r * 1.0),
            *_rotate(3.0, 4.0, r * 0.1),
            *_rotate(5.0, 6.0, c * 1.0),
            *_rotate(7.0, 8.0, c * 0.1),
        ]
        np.testing.assert_allclose(out[n], expected, rtol=0, atol=1e-13)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_equals_two_one_dimensional_ropes_on_the_halves(layout):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 5, 16))
    rows, cols = rng.integers(0, 30, size=(2, 5)).astype(float)
    out = axial_rope(x, rows, cols, base=50.0, layout=layout)
    np.testing.assert_array_equal(out[..., :8], apply_rope(x[..., :8], rows, base=50.0, layout=layout))
    np.testing.assert_array_equal(out[..., 8:], apply_rope(x[..., 8:], cols, base=50.0, layout=layout))


def test_scores_depend_on_row_and_column_offsets_only():
    rng = np.random.default_rng(4)
    q, k = rng.normal(size=(2, 1, 32))
    for dr, dc in [(0, 0), (3, -2), (-5, 7)]:
        scores = []
        for r2, c2 in [(0, 0), (4, 9), (20, 1)]:
            qr = axial_rope(q, [r2 + dr], [c2 + dc])[0]
            kr = axial_rope(k, [r2], [c2])[0]
            scores.append(qr @ kr)
        np.testing.assert_allclose(scores, scores[0], rtol=0, atol=1e-12)


def test_raster_index_is_not_relative_in_two_dimensions():
    # The usual mistake: 1-D RoPE at the raster index r * W + c. Moving both tokens one row down
    # keeps the 2-D offset but the score with axial RoPE stays, and the raster score must stay too
    # (it is 1-D relative); it is moving across a row end that breaks it: (0, 3)->(1, 0) is one
    # raster step, (0, 0)->(0, 1) too, yet they are different 2-D offsets.
    rng = np.random.default_rng(5)
    q, k = rng.normal(size=(2, 1, 16))
    width = 4
    a = apply_rope(q, [1 * width + 0])[0] @ apply_rope(k, [0 * width + 3])[0]
    b = apply_rope(q, [0 * width + 1])[0] @ apply_rope(k, [0 * width + 0])[0]
    assert math.isclose(a, b, rel_tol=1e-12)  # raster RoPE cannot tell them apart
    a2 = axial_rope(q, [1], [0])[0] @ axial_rope(k, [0], [3])[0]
    b2 = axial_rope(q, [0], [1])[0] @ axial_rope(k, [0], [0])[0]
    assert abs(a2 - b2) > 1e-3


def test_multimodal_rope_sections_by_hand():
    # head_dim 6, half layout: pairs (x0, x3), (x1, x4), (x2, x5); base 64: frequencies 1, 1/4, 1/16
    x = np.array([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]])
    positions = np.array([[2.0], [8.0], [32.0]])  # temporal, height, width
    out = multimodal_rope(x, positions, (1, 1, 1), base=64.0)[0]
    a0, b0 = _rotate(1.0, 4.0, 2.0 * 1.0)
    a1, b1 = _rotate(2.0, 5.0, 8.0 / 4)
    a2, b2 = _rotate(3.0, 6.0, 32.0 / 16)
    np.testing.assert_allclose(out, [a0, a1, a2, b0, b1, b2], rtol=0, atol=1e-14)


def test_multimodal_rope_of_text_tokens_is_one_dimensional_rope():
    rng = np.random.default_rng(6)
    x = rng.normal(size=(3, 7, 16))
    t = np.arange(7.0) + 10
    out = multimodal_rope(x, np.stack([t, t, t]), (2, 3, 3))
    np.testing.assert_allclose(out, apply_rope(x, t, layout="half"), rtol=0, atol=1e-13)


def test_multimodal_rope_scores_depend_on_the_three_offsets_only():
    """The relative property in 3-D: moving query and key by the same (time, row, column)
    leaves the score; changing the offset on any one axis changes it."""
    rng = np.random.default_rng(7)
    q, k = rng.normal(size=(2, 1, 32))
    sections = (4, 6, 6)

    def score(query_at, key_at):
        return (
            multimodal_rope(q, np.array(query_at, float)[:, None], sections)[0]
            @ multimodal_rope(k, np.array(key_at, float)[:, None], sections)[0]
        )

    for offset in [(0, 0, 0), (2, -3, 5), (-1, 7, 0)]:
        scores = [score(np.add(key_at, offset), key_at) for key_at in [(0, 0, 0), (5, 2, 9), (40, 13, 1)]]
        np.testing.assert_allclose(scores, scores[0], rtol=0, atol=1e-12)
    base = score((3, 4, 5), (1, 1, 1))
    for moved in [(4, 4, 5), (3, 5, 5), (3, 4, 6)]:  # one more step on one axis
        assert abs(score(moved, (1, 1, 1)) - base) > 1e-3


def test_multimodal_rope_empty_section_and_integer_input():
    x = np.arange(8).reshape(1, 8)
    out = multimodal_rope(x, np.array([[3.0], [0.0], [5.0]]), (4, 0, 0), layout="interleaved")
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, apply_rope(x, [3.0]), atol=1e-13)
