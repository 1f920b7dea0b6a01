"""Chapter 07 (RoPE): rotation matrix, layout permutation, decay bound, checks, figures, explorer.

Expected values are worked out by hand in the comments (bases and positions
chosen so that the angles are multiples of pi/2), or by a second method (plain
Python loops with ``math.cos``, or ``apply_rope`` for the matrix), never taken
from the code under test.
"""

import cmath
import math

import matplotlib.pyplot as plt
import numpy as np
import pytest

import posenc_helpers as ph
from posenc_helpers import apply_rope, rope_decay_bound, rope_layout_permutation, rope_rotation_matrix
from posenc_helpers.checks import CheckFailed, check_converted_projection, check_rotated_query

# Run by tests/core/test_bad_input.py, with every other module's cases.
BAD_INPUT_CASES = [
    # (call, exception, words the message must contain)
    (lambda: ph.rope_rotation_matrix(1.0, 5), ValueError, ["head_dim", "even"]),
    (lambda: ph.rope_rotation_matrix(1.0, 0), ValueError, ["head_dim", "positive"]),
    (lambda: ph.rope_rotation_matrix(1.0, 8.0), TypeError, ["head_dim"]),
    (lambda: ph.rope_rotation_matrix(np.nan, 8), ValueError, ["position", "finite"]),
    (lambda: ph.rope_rotation_matrix("3", 8), TypeError, ["position"]),
    (lambda: ph.rope_rotation_matrix([1.0, 2.0], 8), TypeError, ["position"]),
    (lambda: ph.rope_rotation_matrix(1.0, 8, base=0.0), ValueError, ["base", "> 0"]),
    (lambda: ph.rope_rotation_matrix(1.0, 8, layout="neox"), ValueError, ["layout", "'half'"]),
    (lambda: ph.rope_rotation_matrix(1.0, 8, layout=2), TypeError, ["layout"]),
    (lambda: ph.rope_layout_permutation(7), ValueError, ["head_dim", "even"]),
    (lambda: ph.rope_layout_permutation(-4), ValueError, ["head_dim"]),
    (lambda: ph.rope_layout_permutation(True), TypeError, ["head_dim"]),
    (lambda: ph.rope_layout_permutation("8"), TypeError, ["head_dim"]),
    (lambda: ph.rope_decay_bound(10, 9), ValueError, ["head_dim", "even"]),
    (lambda: ph.rope_decay_bound(10, 8, base=-1.0), ValueError, ["base"]),
    (lambda: ph.rope_decay_bound(-1, 8), ValueError, ["distances", ">= 0"]),
    (lambda: ph.rope_decay_bound(2.5, 8), TypeError, ["distances", "[t]"]),
    (lambda: ph.rope_decay_bound([0.0, np.inf], 8), ValueError, ["distances", "finite"]),
    (lambda: ph.rope_decay_bound(np.zeros((2, 2)), 8), ValueError, ["distances", "1-D"]),
    (lambda: ph.rope_decay_bound(["a"], 8), TypeError, ["distances"]),
    (lambda: ph.rope_decay_scores(10, 9, {}), ValueError, ["head_dim", "even"]),
    (lambda: ph.rope_decay_scores(10, 4, {}, base=0.0), ValueError, ["base", "> 0"]),
    (lambda: ph.rope_decay_scores(2.5, 4, {}), TypeError, ["distances", "[t]"]),
    (lambda: ph.rope_decay_scores(10, 4, {"v": np.zeros(4)}), ValueError, ["vectors['v']", "all zeros"]),
    (lambda: ph.rope_decay_scores(10, 4, {"v": np.ones(6)}), ValueError, ["vectors['v']", "shape (4,)"]),
    (lambda: ph.rope_decay_scores(10, 4, {"v": [1.0, np.nan, 0, 0]}), ValueError, ["vectors['v']", "finite"]),
    (lambda: ph.rope_decay_scores(10, 4, {"v": ["a"] * 4}), TypeError, ["vectors['v']", "real numbers"]),
    (lambda: ph.rope_slowest_pair_vector(7), ValueError, ["head_dim", "even"]),
    (lambda: ph.rope_slowest_pair_vector(8.0), TypeError, ["head_dim"]),
    (lambda: ph.rope_slowest_pair_vector(8, layout="neox"), ValueError, ["layout", "'half'"]),
    (lambda: ph.rope_slowest_pair_vector(8, layout=1), TypeError, ["layout"]),
]


# --------------------------------------------------------------------------- rotation matrix
# head_dim 4, base 4: theta = [4**0, 4**(-1/2)] = [1, 0.5]. At position pi, pair 0 turns by pi
# (the block is -I) and pair 1 by pi/2 (the block [[0, -1], [1, 0]]).
R_PI_INTERLEAVED = np.array(
    [
        [-1.0, 0.0, 0.0, 0.0],
        [0.0, -1.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, -1.0],
        [0.0, 0.0, 1.0, 0.0],
    ]
)
# Half-split: pair 0 is features (0, 2), pair 1 features (1, 3).
R_PI_HALF = np.array(
    [
        [-1.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, -1.0],
        [0.0, 0.0, -1.0, 0.0],
        [0.0, 1.0, 0.0, 0.0],
    ]
)


def test_rotation_matrix_by_hand():
    np.testing.assert_allclose(rope_rotation_matrix(math.pi, 4, base=4.0), R_PI_INTERLEAVED, atol=1e-15)
    np.testing.assert_allclose(rope_rotation_matrix(math.pi, 4, base=4.0, layout="half"), R_PI_HALF, atol=1e-15)
    np.testing.assert_array_equal(rope_rotation_matrix(0.0, 6), np.eye(6))
    r = rope_rotation_matrix(2.0, 2)  # theta_0 = 1: a turn by 2 radians
    np.testing.assert_allclose(r, [[math.cos(2), -math.sin(2)], [math.sin(2), math.cos(2)]], atol=1e-15)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_rotation_matrix_agrees_with_apply_rope_and_composes(layout):
    rng = np.random.default_rng(3)
    for head_dim in (2, 8, 64):
        x = rng.normal(size=head_dim)
        for m, n in [(0.0, 5.0), (-7.5, 300.0), (1234.0, 17.25)]:
            r_m = rope_rotation_matrix(m, head_dim, layout=layout)
            r_n = rope_rotation_matrix(n, head_dim, layout=layout)
            np.testing.assert_allclose(r_m @ x, apply_rope(x[None], [m], layout=layout)[0], atol=1e-12)
            np.testing.assert_allclose(r_m.T @ r_m, np.eye(head_dim), atol=1e-13)
            np.testing.assert_allclose(r_m.T @ r_n, rope_rotation_matrix(n - m, head_dim, layout=layout), atol=1e-11)


def test_rotation_matrix_shape_and_dtype():
    r = rope_rotation_matrix(np.int64(3), np.int32(8), base=500.0)
    assert r.shape == (8, 8) and r.dtype == np.float64


# --------------------------------------------------------------------------- permutation
def test_layout_permutation_by_hand():
    np.testing.assert_array_equal(rope_layout_permutation(8), [0, 2, 4, 6, 1, 3, 5, 7])
    np.testing.assert_array_equal(rope_layout_permutation(2), [0, 1])
    np.testing.assert_array_equal(rope_layout_permutation(4), [0, 2, 1, 3])
    assert rope_layout_permutation(8).dtype == np.int64


@pytest.mark.parametrize("head_dim", [2, 4, 8, 64, 128])
def test_layout_permutation_maps_one_layout_onto_the_other(head_dim):
    rng = np.random.default_rng(head_dim)
    perm = rope_layout_permutation(head_dim)
    assert sorted(perm.tolist()) == list(range(head_dim))
    x = rng.normal(size=(3, 10, head_dim))
    t = rng.uniform(-500.0, 500.0, size=10)
    np.testing.assert_allclose(
        apply_rope(x[..., perm], t, layout="half"), apply_rope(x, t, layout="interleaved")[..., perm], atol=1e-12
    )
    # And back with the inverse permutation.
    inverse = np.argsort(perm)
    np.testing.assert_allclose(
        apply_rope(x, t, layout="half")[..., inverse], apply_rope(x[..., inverse], t, layout="interleaved"), atol=1e-12
    )
    p = np.eye(head_dim)[perm]
    np.testing.assert_allclose(
        rope_rotation_matrix(3.0, head_dim, layout="half"), p @ rope_rotation_matrix(3.0, head_dim) @ p.T, atol=1e-15
    )


# --------------------------------------------------------------------------- decay bound
def _bound_by_loops(r, head_dim, base=10000.0):
    """(1/(d/2)) sum_j |S_j| with S_j = sum_{i<j} exp(i r theta_i), by plain loops."""
    half = head_dim // 2
    total = 0.0
    for j in range(1, half + 1):
        s = sum(cmath.exp(1j * r * base ** (-2 * i / head_dim)) for i in range(j))
        total += abs(s)
    return total / half


def test_decay_bound_by_hand():
    # r = 0: |S_j| = j, mean of 1..d/2 = (d/2 + 1) / 2.
    np.testing.assert_array_equal(rope_decay_bound([0.0], 8), [2.5])
    np.testing.assert_array_equal(rope_decay_bound([0.0], 128), [32.5])
    # head_dim 4, base 4: theta = [1, 0.5].
    # r = pi: S_1 = e^{i pi} = -1, S_2 = -1 + e^{i pi/2} = -1 + i; mean (1 + sqrt 2) / 2.
    # r = 2 pi: S_1 = 1, S_2 = 1 + e^{i pi} = 0; mean 1/2.
    np.testing.assert_allclose(
        rope_decay_bound([math.pi, 2 * math.pi], 4, base=4.0), [(1 + math.sqrt(2)) / 2, 0.5], atol=1e-15
    )


def test_decay_bound_matches_loops_and_is_symmetric():
    r = np.array([1.0, 7.0, 50.0, 333.0, 1000.0])
    expected = [_bound_by_loops(x, 16) for x in r]
    np.testing.assert_allclose(rope_decay_bound(r, 16), expected, rtol=1e-12)
    np.testing.assert_allclose(rope_decay_bound(-r, 16), expected, rtol=1e-12)
    np.testing.assert_array_equal(rope_decay_bound(3, 8), rope_decay_bound([0.0, 1.0, 2.0], 8))


def test_decay_bound_bounds_every_score():
    # eq. (37) of RoFormer: |sum h_i e^{i r theta_i}| <= max|h_{i+1} - h_i| * (d/2) * bound(r).
    rng = np.random.default_rng(11)
    head_dim = 32
    r = np.arange(0.0, 600.0, 7.0)
    bound = rope_decay_bound(r, head_dim)
    for _ in range(20):
        q, k = rng.normal(size=(2, head_dim))
        h = (q[0::2] + 1j * q[1::2]) * np.conj(k[0::2] + 1j * k[1::2])
        jump = np.abs(np.diff(np.append(h, 0.0))).max()
        scores = np.einsum("rd,d->r", apply_rope(np.tile(q, (r.size, 1)), r), k)  # query at r, key at 0
        assert np.all(np.abs(scores) <= jump * head_dim / 2 * bound + 1e-9)


def test_decay_bound_decays_on_average():
    bound = rope_decay_bound(1025, 128)
    assert bound[0] > bound[10] > bound[100] and bound[1000:].max() < 0.3 * bound[0]


# --------------------------------------------------------------------------- check_rotated_query
D_MODEL, N_HEADS, HEAD, POSITION = 32, 4, 2, 5
RNG = np.random.default_rng(21)
X = RNG.normal(size=D_MODEL)
W_Q = RNG.normal(size=(D_MODEL, D_MODEL)) / np.sqrt(D_MODEL)


def _rotate_by_loop(vector, m, thetas, layout="interleaved"):
    """Plain-Python RoPE: pair i turned by m * thetas[i]."""
    out = list(vector)
    half = len(vector) // 2
    for i, theta in enumerate(thetas):
        a_idx, b_idx = (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + half)
        a, b = vector[a_idx], vector[b_idx]
        c, s = math.cos(m * theta), math.sin(m * theta)
        out[a_idx] = a * c - b * s
        out[b_idx] = a * s + b * c
    return np.array(out)


def _head_query(head=HEAD, w=W_Q):
    q = [sum(X[r] * w[r, c] for r in range(D_MODEL)) for c in range(D_MODEL)]
    head_dim = D_MODEL // N_HEADS
    return np.array(q[head * head_dim : (head + 1) * head_dim])


def _thetas(width, count, sign=-2.0):
    return [10000.0 ** (sign * i / width) for i in range(count)]


RIGHT = _rotate_by_loop(_head_query(), POSITION, _thetas(8, 4))


def _check(answer, layout="interleaved"):
    return check_rotated_query(answer, X, W_Q, head=HEAD, n_heads=N_HEADS, position=POSITION, layout=layout)


def _assert_no_leak(message, expected):
    for value in expected:
        assert f"{value:.6g}" not in message, (value, message)


def test_rotated_query_placeholder_and_right_answer():
    for placeholder in (None, ...):
        result = _check(placeholder)
        assert not result and repr(result).startswith("Not attempted yet")
    result = _check(RIGHT)
    assert result and repr(result).startswith("Correct")
    assert _check(list(RIGHT))  # a list works too


def _whole_query_rotated():
    q = [sum(X[r] * W_Q[r, c] for r in range(D_MODEL)) for c in range(D_MODEL)]
    return _rotate_by_loop(np.array(q), POSITION, _thetas(D_MODEL, D_MODEL // 2))[16:24]


def _swapped_sin_cos():
    q = _head_query()
    out = q.copy()
    for i, theta in enumerate(_thetas(8, 4)):
        a, b = q[2 * i], q[2 * i + 1]
        out[2 * i] = a * math.sin(POSITION * theta) - b * math.cos(POSITION * theta)
        out[2 * i + 1] = a * math.cos(POSITION * theta) + b * math.sin(POSITION * theta)
    return out


WRONG_QUERIES = {
    "whole query": (_whole_query_rotated, "slice first, then rotate"),
    "d_model frequencies": (lambda: _rotate_by_loop(_head_query(), POSITION, _thetas(D_MODEL, 4)), "d_model = 32"),
    "off by one up": (lambda: _rotate_by_loop(_head_query(), POSITION + 1, _thetas(8, 4)), "m + 1"),
    "off by one down": (lambda: _rotate_by_loop(_head_query(), POSITION - 1, _thetas(8, 4)), "m - 1"),
    "half layout": (lambda: _rotate_by_loop(_head_query(), POSITION, _thetas(8, 4), "half"), "half layout"),
    "wrong sign": (lambda: _rotate_by_loop(_head_query(), -POSITION, _thetas(8, 4)), "wrong way"),
    "sin and cos swapped": (_swapped_sin_cos, "exchanged"),
    "dimension index": (lambda: _rotate_by_loop(_head_query(), POSITION, _thetas(8, 4, sign=-4.0)), "dimension index"),
    "no factor 2": (lambda: _rotate_by_loop(_head_query(), POSITION, _thetas(8, 4, sign=-1.0)), "factor 2"),
    "positive exponent": (lambda: _rotate_by_loop(_head_query(), POSITION, _thetas(8, 4, sign=2.0)), "minus sign"),
    "transposed w_q": (lambda: _rotate_by_loop(_head_query(w=W_Q.T), POSITION, _thetas(8, 4)), "transposed"),
    "neighbouring head": (lambda: _rotate_by_loop(_head_query(head=1), POSITION, _thetas(8, 4)), "this is head 1"),
    "unrotated": (_head_query, "before rotation"),
}


@pytest.mark.parametrize("name", list(WRONG_QUERIES))
def test_rotated_query_recognises_common_mistakes(name):
    make, hint = WRONG_QUERIES[name]
    with pytest.raises(CheckFailed) as info:
        _check(make())
    message = str(info.value)
    assert hint in message, message
    _assert_no_leak(message, RIGHT)


def test_rotated_query_says_where_an_unknown_answer_differs():
    wrong = RIGHT.copy()
    wrong[5] += 0.25
    with pytest.raises(CheckFailed) as info:
        _check(wrong)
    message = str(info.value)
    assert "feature 5" in message and "1 of 8 entries differ" in message
    _assert_no_leak(message, RIGHT)
    with pytest.raises(CheckFailed, match=r"shape \(8,\)"):
        _check(np.zeros(32))
    with pytest.raises(CheckFailed, match="non-finite"):
        _check(np.full(8, np.nan))


def test_rotated_query_half_layout_expected():
    right_half = _rotate_by_loop(_head_query(), POSITION, _thetas(8, 4), "half")
    assert _check(right_half, layout="half")
    with pytest.raises(CheckFailed, match="interleaved layout"):
        _check(RIGHT, layout="half")


@pytest.mark.parametrize(
    "kwargs, exception, words",
    [
        (dict(x=np.ones((2, 4))), ValueError, ["x", "1-D"]),
        (dict(x=[1.0, np.nan, 0.0, 0.0]), ValueError, ["x", "finite"]),
        (dict(w_q=np.eye(3)), ValueError, ["w_q", "(4, 4)"]),
        (dict(n_heads=3), ValueError, ["n_heads"]),
        (dict(n_heads=4), ValueError, ["n_heads", "even"]),
        (dict(n_heads=0), ValueError, ["n_heads", ">= 1"]),
        (dict(head=2), ValueError, ["head", "0 .. 1"]),
        (dict(head=1.0), TypeError, ["head"]),
        (dict(position=np.inf), ValueError, ["position", "finite"]),
        (dict(base=0.0), ValueError, ["base"]),
        (dict(layout="neox"), ValueError, ["layout"]),
    ],
)
def test_rotated_query_rejects_bad_arguments(kwargs, exception, words):
    arguments = dict(x=np.ones(4), w_q=np.eye(4), head=0, n_heads=2, position=1.0)
    arguments.update(kwargs)
    with pytest.raises(exception) as info:
        check_rotated_query(None, arguments.pop("x"), arguments.pop("w_q"), **arguments)
    for word in words:
        assert word in str(info.value), str(info.value)


# --------------------------------------------------------------------------- check_converted_projection
W_CKPT = np.random.default_rng(22).normal(size=(16, 8)) / 4.0
# Half-split order of 8 interleaved features, by hand: first elements 0, 2, 4, 6, then 1, 3, 5, 7.
HAND_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]
RIGHT_W = np.column_stack([W_CKPT[:, j] for j in HAND_ORDER])


def test_converted_projection_placeholder_right_and_scores():
    assert not check_converted_projection(None, W_CKPT)
    assert check_converted_projection(RIGHT_W, W_CKPT)
    # Second method: the converted checkpoint gives the original scores in half-split code.
    rng = np.random.default_rng(5)
    w_k = rng.normal(size=(16, 8))
    w_k_half = np.column_stack([w_k[:, j] for j in HAND_ORDER])
    x, t = rng.normal(size=(6, 16)), np.arange(6.0)
    original = apply_rope(x @ W_CKPT, t) @ apply_rope(x @ w_k, t).T
    converted = apply_rope(x @ RIGHT_W, t, layout="half") @ apply_rope(x @ w_k_half, t, layout="half").T
    np.testing.assert_allclose(converted, original, atol=1e-12)


@pytest.mark.parametrize(
    "answer, hint",
    [
        (W_CKPT, "original matrix"),
        (W_CKPT[:, [0, 4, 1, 5, 2, 6, 3, 7]], "inverse permutation"),  # argsort of HAND_ORDER
        (W_CKPT[:, [1, 3, 5, 7, 0, 2, 4, 6]], "swapped"),
    ],
)
def test_converted_projection_recognises_mistakes(answer, hint):
    with pytest.raises(CheckFailed) as info:
        check_converted_projection(answer, W_CKPT)
    assert hint in str(info.value)
    _assert_no_leak(str(info.value), RIGHT_W.ravel())


def test_converted_projection_rows_transposed_and_single_entry():
    square = np.arange(16.0).reshape(4, 4)
    with pytest.raises(CheckFailed, match="rows"):
        check_converted_projection(square[[0, 2, 1, 3], :], square)
    with pytest.raises(CheckFailed, match="transposed"):
        check_converted_projection(RIGHT_W.T, W_CKPT)
    wrong = RIGHT_W.copy()
    wrong[3, 6] += 1.0
    with pytest.raises(CheckFailed) as info:
        check_converted_projection(wrong, W_CKPT)
    assert "row 3, column 6" in str(info.value) and "1 of 128 entries differ" in str(info.value)
    _assert_no_leak(str(info.value), RIGHT_W.ravel())


@pytest.mark.parametrize(
    "w, exception, words",
    [
        (np.ones(4), ValueError, ["w_interleaved", "2-D"]),
        (np.ones((4, 3)), ValueError, ["w_interleaved", "even"]),
        (np.full((2, 2), np.nan), ValueError, ["w_interleaved", "finite"]),
        ([["a", "b"]], TypeError, ["w_interleaved"]),
    ],
)
def test_converted_projection_rejects_bad_arguments(w, exception, words):
    with pytest.raises(exception) as info:
        check_converted_projection(None, w)
    for word in words:
        assert word in str(info.value)


# --------------------------------------------------------------------------- plotting
def test_decay_scores_by_hand():
    # head_dim 4, base 100: theta = [1, 100**(-1/2)] = [1, 0.1]. v = (1, 0, 1, 0) puts |v_i|**2 = 1
    # in each pair, so the score divided by |v|**2 = 2 is (cos r + cos 0.1 r) / 2.
    r = [0.0, 1.0, math.pi, 10.0]
    scores = ph.rope_decay_scores(r, 4, {"both": [1.0, 0.0, 1.0, 0.0], "pair 0": [3.0, 4.0, 0.0, 0.0]}, base=100.0)
    assert list(scores) == ["both", "pair 0"]  # in the order given
    by_hand = [(math.cos(x) + math.cos(0.1 * x)) / 2 for x in r]
    np.testing.assert_allclose(scores["both"], by_hand, rtol=1e-14, atol=1e-15)
    # (3, 4) lies in pair 0 only, |v_0|**2 = 25: the score is cos r, whatever the length of v
    np.testing.assert_allclose(scores["pair 0"], [math.cos(x) for x in r], rtol=1e-14, atol=1e-15)
    assert ph.rope_decay_scores(3, 4, {}) == {}


def test_decay_scores_against_apply_rope():
    r = np.arange(0.0, 300.0)
    v = np.random.default_rng(1).normal(size=32)
    scores = ph.rope_decay_scores(r, 32, {"v": v}, base=500.0)
    direct = apply_rope(np.tile(v, (r.size, 1)), r, base=500.0) @ v / (v @ v)  # query at r, key at 0
    np.testing.assert_allclose(scores["v"], direct, atol=1e-12)


def test_slowest_pair_vector_by_hand():
    # head_dim 8: the last pair, i = 3, is features 6 and 7 interleaved, 3 and 7 half-split
    assert ph.rope_slowest_pair_vector(8).tolist() == [0, 0, 0, 0, 0, 0, 1, 0]
    assert ph.rope_slowest_pair_vector(8, layout="half").tolist() == [0, 0, 0, 1, 0, 0, 0, 0]
    # Its score is cos(r theta_31), theta_31 = 10000**(-62/64) for head_dim 64: at r = 256 it has
    # turned by about 0.034 rad, so the score is still above 0.999.
    (score,) = ph.rope_decay_scores([256.0], 64, {"slowest": ph.rope_slowest_pair_vector(64)}).values()
    assert math.isclose(score[0], math.cos(256 * 10000.0 ** (-62 / 64)), rel_tol=1e-13)
    assert score[0] > 0.999


def test_plot_decay_bound_and_scores():
    from posenc_helpers.plotting import plot_decay_bound, plot_decay_scores

    ax = plot_decay_bound(100, 16, base=100.0, title="b")
    np.testing.assert_allclose(ax.lines[-1].get_ydata(), rope_decay_bound(100, 16, base=100.0))
    assert ax.get_title() == "b" and "tokens" in ax.get_xlabel()
    assert ax.lines[-1].get_label() == "head_dim = 16, base = 100"
    # A unit vector in pair 0 (theta_0 = 1) gives the score cos(r).
    ax = plot_decay_scores([0.0, math.pi / 2, math.pi], 4, {"pair 0": [1.0, 0.0, 0.0, 0.0]})
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [1.0, 0.0, -1.0], atol=1e-15)
    assert [line.get_label() for line in ax.lines[:1]] == ["pair 0"]
    with pytest.raises(ValueError, match="all zeros"):
        plot_decay_scores(10, 4, {"zero": np.zeros(4)})
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        plot_decay_scores(10, 4, {"short": np.ones(2)})
    with pytest.raises(ValueError, match="empty"):
        plot_decay_bound([], 4)
    with pytest.raises(ValueError, match="head_dim"):
        plot_decay_bound(10, 3)
    plt.close("all")


def test_plot_rotation_matrix():
    from posenc_helpers.plotting import plot_rotation_matrix

    ax = plot_rotation_matrix(R_PI_HALF, title="R")
    assert ax.images[-1].get_clim() == (-1.0, 1.0) and ax.get_title() == "R"
    np.testing.assert_array_equal(ax.images[-1].get_array(), R_PI_HALF)
    with pytest.raises(ValueError, match="square"):
        plot_rotation_matrix(np.ones((2, 3)))
    with pytest.raises(ValueError, match="finite"):
        plot_rotation_matrix([[np.nan]])
    plt.close("all")


# --------------------------------------------------------------------------- explorer
def test_rope_decay_explorer_reports_what_it_draws():
    from posenc_helpers.widgets import RopeDecayExplorer

    explorer = RopeDecayExplorer(head_dim=32, base=1000.0, max_distance=200)
    bound = rope_decay_bound(201, 32, base=1000.0)
    np.testing.assert_allclose(explorer.bound_line.get_ydata(), bound, rtol=1e-12)
    assert explorer.bound_ratio == pytest.approx(bound[-1] / bound[0], rel=1e-12)
    # Slowest pair of head_dim 32, base 1000: theta = 1000**(-30/32); its score is cos(r theta).
    theta = 1000.0 ** (-30 / 32)
    assert explorer.slowest_min == pytest.approx(min(math.cos(r * theta) for r in range(201)), abs=1e-12)
    explorer.set(head_dim=64)
    assert explorer.ax_bound.get_ylim()[1] == pytest.approx(1.05 * 16.5)
    assert "head_dim = 64" in explorer.status.value
    plt.close("all")


@pytest.mark.parametrize(
    "kwargs, exception, words",
    [
        (dict(head_dim=48), ValueError, ["head_dim", "one of"]),
        (dict(head_dim=7), ValueError, ["head_dim"]),
        (dict(base=5.0), ValueError, ["base", "between"]),
        (dict(base=-1.0), ValueError, ["base"]),
        (dict(max_distance=0), ValueError, ["max_distance"]),
        (dict(seed=-1), ValueError, ["seed"]),
    ],
)
def test_rope_decay_explorer_rejects_bad_arguments(kwargs, exception, words):
    from posenc_helpers.widgets import RopeDecayExplorer

    with pytest.raises(exception) as info:
        RopeDecayExplorer(**kwargs)
    for word in words:
        assert word in str(info.value)


def test_rope_decay_explorer_blitted_frames_equal_full_redraws():
    import io

    from PIL import Image

    from posenc_helpers.widgets import RopeDecayExplorer

    explorer, changes = RopeDecayExplorer.demo()
    for change in changes + changes[:3]:  # the second visits reuse cached backgrounds
        explorer.set(**change)
        blitted = np.asarray(Image.open(io.BytesIO(explorer.image.value)).convert("RGB"))
        buffer = io.BytesIO()
        explorer.figure.savefig(buffer, format="png")  # a full redraw from scratch
        full = np.asarray(Image.open(io.BytesIO(buffer.getvalue())).convert("RGB"))
        np.testing.assert_array_equal(blitted, full, err_msg=str(change))
    assert explorer.render_count == 1 + len(changes) + 3
    plt.close("all")
