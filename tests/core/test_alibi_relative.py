"""ALiBi slopes and biases, T5 buckets: hand values and scalar re-implementations of the originals."""

import math

import numpy as np
import pytest

from posenc_helpers import alibi_bias, alibi_slopes, t5_relative_bucket


def test_alibi_slopes_8_heads():
    np.testing.assert_array_equal(alibi_slopes(8), [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256])


def test_alibi_slopes_12_heads_by_hand():
    # 8 slopes of 2**(-h) then every other slope of 16 heads, 2**(-h/2) for h = 1, 3, 5, 7.
    expected = [2.0**-h for h in range(1, 9)] + [2.0**-0.5, 2.0**-1.5, 2.0**-2.5, 2.0**-3.5]
    np.testing.assert_allclose(alibi_slopes(12), expected, rtol=1e-15)
    assert not np.all(np.diff(alibi_slopes(12)) < 0)  # not sorted


def test_alibi_slopes_small_counts():
    np.testing.assert_array_equal(alibi_slopes(1), [1 / 256])
    np.testing.assert_array_equal(alibi_slopes(2), [1 / 16, 1 / 256])
    np.testing.assert_allclose(alibi_slopes(6), [1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8], rtol=1e-15)


def _reference_get_slopes(n):
    """Transliteration of get_slopes from the ALiBi reference code (Press et al. 2022)."""

    def power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + _reference_get_slopes(2 * closest)[0::2][: n - closest]


@pytest.mark.parametrize("n", range(1, 65))
def test_alibi_slopes_match_reference_code(n):
    np.testing.assert_allclose(alibi_slopes(n), _reference_get_slopes(n), rtol=1e-12)


def test_alibi_bias_by_hand():
    bias = alibi_bias(8, 4)  # head 0 has slope 1/2
    expected = np.array(
        [
            [0.0, -np.inf, -np.inf, -np.inf],
            [-0.5, 0.0, -np.inf, -np.inf],
            [-1.0, -0.5, 0.0, -np.inf],
            [-1.5, -1.0, -0.5, 0.0],
        ]
    )
    np.testing.assert_array_equal(bias[0], expected)
    assert bias.shape == (8, 4, 4)
    sym = alibi_bias(8, 4, causal=False)[7]  # slope 1/256
    np.testing.assert_array_equal(sym, -np.abs(np.subtract.outer(range(4), range(4))) / 256)
    assert not np.signbit(sym.diagonal()).any()  # +0.0, not -0.0, on the diagonal
    assert alibi_bias(3, 0).shape == (3, 0, 0)


# T5: hand-worked buckets for the defaults (32 buckets, max_distance 128).
# Bidirectional: 16 buckets per direction, 8 exact; n = query - key = -relative_position.
#   n in 0..7 -> n;  n >= 8 -> 8 + floor(ln(n/8) / ln(16) * 8) = 8 + floor(2 log2(n/8)), capped
#   at 15; keys after the query +16. E.g. n = 22: 2 log2(2.75) = 2.92 -> 10; n = 23: 3.05 -> 11.
@pytest.mark.parametrize(
    "relative_position, bucket",
    [
        (0, 0),
        (-1, 1),
        (-7, 7),
        (-8, 8),
        (-11, 8),
        (-12, 9),
        (-16, 10),
        (-22, 10),
        (-23, 11),
        (-32, 12),
        (-64, 14),
        (-90, 14),
        (-91, 15),
        (-127, 15),
        (-128, 15),
        (-10_000, 15),
        (1, 17),
        (7, 23),
        (8, 24),
        (16, 26),
        (128, 31),
        (5000, 31),
    ],
)
def test_t5_bidirectional_by_hand(relative_position, bucket):
    assert int(t5_relative_bucket(relative_position)) == bucket


# Unidirectional: 32 buckets, 16 exact; keys after the query -> 0;
#   n >= 16 -> 16 + floor(ln(n/16) / ln(8) * 16), capped at 31.
@pytest.mark.parametrize(
    "relative_position, bucket",
    [(5, 0), (0, 0), (-1, 1), (-15, 15), (-16, 16), (-32, 21), (-64, 26), (-127, 31), (-128, 31), (-999, 31)],
)
def test_t5_unidirectional_by_hand(relative_position, bucket):
    assert int(t5_relative_bucket(relative_position, bidirectional=False)) == bucket


def _mesh_tf_bucket(relative_position, bidirectional, num_buckets, max_distance):
    """Scalar transliteration of Mesh TensorFlow's _relative_position_bucket (float32 log)."""
    ret = 0
    n = -relative_position
    if bidirectional:
        num_buckets //= 2
        ret += int(n < 0) * num_buckets
        n = abs(n)
    else:
        n = max(n, 0)
    max_exact = num_buckets // 2
    if n < max_exact:
        return ret + n
    ratio = np.float32(n) / np.float32(max_exact)
    val = np.log(ratio) / np.float32(math.log(max_distance / max_exact)) * np.float32(num_buckets - max_exact)
    val_if_large = max_exact + int(val)
    return ret + min(val_if_large, num_buckets - 1)


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("num_buckets, max_distance", [(32, 128), (64, 256), (8, 20), (33, 100)])
def test_t5_matches_mesh_tf_transliteration(bidirectional, num_buckets, max_distance):
    offsets = np.arange(-3 * max_distance, 3 * max_distance + 1)
    got = t5_relative_bucket(offsets, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    expected = [_mesh_tf_bucket(int(o), bidirectional, num_buckets, max_distance) for o in offsets]
    np.testing.assert_array_equal(got, expected)
    assert got.min() >= 0 and got.max() < num_buckets


def test_t5_float32_and_float64_agree_for_defaults():
    # A second method: the same formula in float64. For the default configuration the two
    # precisions give the same bucket for every distance up to 100 000.
    n = np.arange(8, 100_001)
    exact = np.minimum(8 + np.floor(np.log(n / 8) / np.log(16) * 8).astype(int), 15)
    np.testing.assert_array_equal(t5_relative_bucket(-n), exact)


def test_t5_shapes():
    grid = np.subtract.outer(np.arange(5), np.arange(4))  # key - query, any shape
    assert t5_relative_bucket(grid).shape == (5, 4)
    assert t5_relative_bucket(np.int32(3)).shape == ()
