"""Property tests: statements of the book that must hold for every input, checked with hypothesis."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from posenc_helpers import (
    alibi_slopes,
    apply_rope,
    shift_matrix,
    sinusoidal_encoding,
    t5_relative_bucket,
)

even_width = st.integers(min_value=1, max_value=64).map(lambda h: 2 * h)
bases = st.floats(min_value=2.0, max_value=1e6)
finite_positions = st.floats(min_value=-1e5, max_value=1e5, allow_nan=False)
position_lists = st.lists(finite_positions, min_size=1, max_size=20)


@given(position_lists, even_width, bases, st.sampled_from(["interleaved", "concat"]))
def test_values_bounded_and_norm_constant(positions, d, base, layout):
    table = sinusoidal_encoding(positions, d, base=base, layout=layout)
    assert np.all(np.abs(table) <= 1.0)
    np.testing.assert_allclose(np.linalg.norm(table, axis=1), np.sqrt(d / 2), rtol=1e-12)


@given(
    st.floats(min_value=-1e4, max_value=1e4),
    st.floats(min_value=-1e4, max_value=1e4),
    even_width,
    bases,
)
def test_shift_identity(t, phi, d, base):
    shifted = shift_matrix(phi, d, base=base) @ sinusoidal_encoding([t], d, base=base)[0]
    direct = sinusoidal_encoding([t + phi], d, base=base)[0]
    # Angles up to 2e4 rad carry float64 rounding of about 2e4 * 2**-52 ~ 4e-12 each.
    np.testing.assert_allclose(shifted, direct, rtol=0, atol=1e-10)


@given(st.floats(min_value=-1e3, max_value=1e3), even_width)
def test_shift_matrix_orthogonal(phi, d):
    m = shift_matrix(phi, d)
    np.testing.assert_allclose(m @ m.T, np.eye(d), atol=1e-14)
    np.testing.assert_allclose(shift_matrix(-phi, d), m.T, atol=0)


head_dims = st.integers(min_value=1, max_value=32).map(lambda h: 2 * h)


def _vectors(head_dim, count):
    return arrays(np.float64, (count, head_dim), elements=st.floats(-10, 10))


@given(st.data(), head_dims, st.sampled_from(["interleaved", "half"]))
def test_rope_preserves_norms(data, head_dim, layout):
    x = data.draw(_vectors(head_dim, 5))
    positions = data.draw(st.lists(finite_positions, min_size=5, max_size=5))
    out = apply_rope(x, positions, layout=layout)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), np.linalg.norm(x, axis=1), rtol=1e-12, atol=1e-12)


@given(
    st.data(),
    head_dims,
    st.sampled_from(["interleaved", "half"]),
    st.integers(-2000, 2000),
    st.integers(-2000, 2000),
    st.integers(-2000, 2000),
)
def test_rope_scores_depend_on_offset_only(data, head_dim, layout, m, n, shift):
    q, k = data.draw(_vectors(head_dim, 2))
    score = apply_rope(q[None], [m], layout=layout)[0] @ apply_rope(k[None], [n], layout=layout)[0]
    shifted = apply_rope(q[None], [m + shift], layout=layout)[0] @ apply_rope(k[None], [n + shift], layout=layout)[0]
    scale = np.linalg.norm(q) * np.linalg.norm(k)
    assert abs(score - shifted) <= 1e-9 * max(scale, 1.0)


@given(st.data(), head_dims)
def test_rope_layouts_agree_after_permutation(data, head_dim):
    x = data.draw(_vectors(head_dim, 4))
    positions = data.draw(st.lists(finite_positions, min_size=4, max_size=4))
    half = head_dim // 2
    # Feature j of the half layout is feature perm[j] of the interleaved layout.
    perm = np.concatenate([np.arange(0, head_dim, 2), np.arange(1, head_dim, 2)])
    assert sorted(perm) == list(range(head_dim)) and perm[half] == 1
    interleaved = apply_rope(x, positions, layout="interleaved")
    split = apply_rope(x[:, perm], positions, layout="half")
    np.testing.assert_allclose(split, interleaved[:, perm], rtol=0, atol=1e-12)


@given(st.integers(min_value=0, max_value=10))
def test_alibi_slopes_geometric_for_powers_of_two(exponent):
    n = 2**exponent
    slopes = alibi_slopes(n)
    np.testing.assert_allclose(slopes[1:] / slopes[:-1], slopes[0], rtol=1e-12)
    assert slopes[0] == 2.0 ** (-8.0 / n)


@given(
    st.booleans(),
    st.integers(min_value=2, max_value=64),
    st.integers(min_value=1, max_value=1000),
    st.sampled_from([-1, 1]),
)
def test_t5_buckets_monotone_in_distance(bidirectional, half_buckets, max_distance, sign):
    num_buckets = 2 * half_buckets
    exact = (half_buckets if bidirectional else num_buckets) // 2
    max_distance = max(max_distance, exact + 1)
    distances = np.arange(0, 3 * max_distance)
    buckets = t5_relative_bucket(
        sign * distances, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    assert np.all(np.diff(buckets) >= 0)
    assert buckets.min() >= 0 and buckets.max() < num_buckets
