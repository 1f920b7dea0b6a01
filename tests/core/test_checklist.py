"""Softmax, attention, pairwise distances and the checklist scorer."""

import math

import numpy as np
import pytest

from posenc_helpers import (
    CHECKLIST,
    checklist_markdown,
    integer_positions,
    min_pairwise_distance,
    normalized_positions,
    scaled_dot_product_attention,
    score_encoding,
    sine_only_encoding,
    sinusoidal_encoding,
    softmax,
)


def test_softmax_by_hand():
    np.testing.assert_allclose(softmax([0.0, math.log(3.0)]), [0.25, 0.75], rtol=1e-15)
    np.testing.assert_allclose(softmax([[1.0, 1.0], [0.0, -np.inf]]), [[0.5, 0.5], [1.0, 0.0]])
    # stable for huge logits, where a naive exp overflows
    np.testing.assert_allclose(softmax([1000.0, 1000.0 + math.log(3.0)]), [0.25, 0.75], rtol=1e-12)
    np.testing.assert_allclose(softmax([[0.0, math.log(3.0)]], axis=0), [[1.0, 1.0]])


def test_softmax_all_masked_row_is_nan():
    out = softmax([[-np.inf, -np.inf], [0.0, 0.0]])
    assert np.isnan(out[0]).all()
    np.testing.assert_allclose(out[1], [0.5, 0.5])


def test_attention_by_hand():
    # One query, two keys with scores 0 and ln 3 after scaling by 1/sqrt(2).
    q = np.array([[1.0, 1.0]])
    k = np.array([[0.0, 0.0], [math.log(3.0) / math.sqrt(2), math.log(3.0) / math.sqrt(2)]])
    v = np.array([[4.0], [8.0]])
    out, weights = scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(weights, [[0.25, 0.75]], rtol=1e-14)
    np.testing.assert_allclose(out, [[4.0 * 0.25 + 8.0 * 0.75]], rtol=1e-14)


def test_attention_bias_and_heads():
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(3, 5, 4))
    causal = np.triu(np.full((5, 5), -np.inf), 1)
    out, weights = scaled_dot_product_attention(q, k, v, bias=causal)
    assert np.all(weights[np.triu_indices(5, 1)] == 0.0)
    np.testing.assert_allclose(out[0], v[0])  # the first query only sees the first key
    per_head = np.stack([causal, causal])
    out_h, w_h = scaled_dot_product_attention(q, k, v, bias=per_head)
    assert out_h.shape == (2, 5, 4) and w_h.shape == (2, 5, 5)


def test_min_pairwise_distance_against_brute_force():
    rng = np.random.default_rng(3)
    table = rng.normal(size=(700, 6))  # more than one block of rows
    diffs = table[:, None, :] - table[None, :, :]
    brute = np.sqrt((diffs**2).sum(-1))
    brute[np.diag_indices(700)] = np.inf
    assert min_pairwise_distance(table) == pytest.approx(brute.min(), rel=1e-12)


def test_min_pairwise_distance_accurate_for_nearly_equal_rows():
    # Large rows 1e-9 apart: the Gram identity alone loses this in rounding (error ~1e-7).
    rng = np.random.default_rng(4)
    table = rng.normal(size=(50, 64)) * 100.0
    table[37] = table[12]
    table[37, 5] += 1e-9
    assert min_pairwise_distance(table) == pytest.approx(1e-9, rel=1e-6)


def test_min_pairwise_distance_sinusoidal_neighbours():
    # For the sinusoidal table the closest pair among 0..n-1 are neighbours, at distance
    # sqrt(sum_k 4 sin^2(omega_k / 2)) (chord length on each pair's circle).
    d = 16
    omega = 10000.0 ** (-2 * np.arange(d // 2) / d)
    expected = math.sqrt(sum(4 * math.sin(w / 2) ** 2 for w in omega))
    assert min_pairwise_distance(sinusoidal_encoding(300, d)) == pytest.approx(expected, rel=1e-12)


def test_linear_shift_fit_recovers_the_rotation_and_rejects_sines():
    # A second route to M(phi): fitted by least squares, it must equal the closed form.
    from posenc_helpers import linear_shift_fit, shift_matrix

    # base 100: even the slowest pair turns 5 radians over 300 positions, so the rows span
    # R^16 comfortably and the least-squares matrix is well determined.
    matrix, residual = linear_shift_fit(sinusoidal_encoding(300, 16, base=100.0), 5)
    np.testing.assert_allclose(matrix, shift_matrix(5, 16, base=100.0), atol=1e-9)
    assert residual < 1e-12
    _, sine_residual = linear_shift_fit(sine_only_encoding(300, 16), 5)
    assert sine_residual > 1e-2
    zeros_matrix, zero_residual = linear_shift_fit(np.zeros((10, 3)), 2)
    assert zero_residual == 0.0 and zeros_matrix.shape == (3, 3)


ENCODERS = {
    "index": lambda pos, n: integer_positions(n)[pos][:, None],
    "normalised": lambda pos, n: normalized_positions(n)[pos][:, None],
    "sinusoidal": lambda pos, n: sinusoidal_encoding(pos, 32),
    "sine only": lambda pos, n: sine_only_encoding(pos, 32),
    "zero": lambda pos, n: np.zeros((len(pos), 4)),
}

# Worked out from the definitions, property by property.
EXPECTED = {
    "index": dict(
        unique=True, bounded=False, consistent=True, deterministic=True, defined_unseen=True, linear_offset=False
    ),
    "normalised": dict(
        unique=True, bounded=True, consistent=False, deterministic=True, defined_unseen=True, linear_offset=False
    ),
    "sinusoidal": dict(
        unique=True, bounded=True, consistent=True, deterministic=True, defined_unseen=True, linear_offset=True
    ),
    "sine only": dict(
        unique=True, bounded=True, consistent=True, deterministic=True, defined_unseen=True, linear_offset=False
    ),
    "zero": dict(
        unique=False, bounded=True, consistent=True, deterministic=True, defined_unseen=True, linear_offset=True
    ),
}


@pytest.mark.parametrize("name", sorted(ENCODERS))
def test_checklist_scores(name):
    scores = score_encoding(ENCODERS[name])
    assert list(scores) == [c.key for c in CHECKLIST]
    assert {key: r.passed for key, r in scores.items()} == EXPECTED[name]


def test_checklist_learned_table_fails_beyond_its_length():
    table = np.random.default_rng(0).uniform(-1.0, 1.0, size=(64, 8))
    scores = score_encoding(lambda pos, n: table[pos], short_length=10, long_length=60, offsets=(1,))
    assert scores["unique"].passed and scores["bounded"].passed
    assert not scores["defined_unseen"].passed
    assert "IndexError" in scores["defined_unseen"].evidence


def test_checklist_markdown():
    plain = checklist_markdown().splitlines()
    assert len(plain) == 2 + len(CHECKLIST)
    scored = checklist_markdown({"zero": score_encoding(ENCODERS["zero"])}).splitlines()
    assert scored[0] == "| property | zero |"
    assert scored[2] == "| Unique | no |"
    with pytest.raises(ValueError, match="lacks the criteria"):
        checklist_markdown({"broken": {}})


# --------------------------------------------------------------------------- the bounded heuristic
def test_bounded_is_right_on_the_counterexamples_of_the_old_check():
    """sin(t / 1000) is bounded but takes 1571 positions to reach its bound; sqrt(log(1 + t))
    is unbounded but grows so slowly that 1000 positions barely show it."""
    slow_sine = score_encoding(lambda positions, n: np.sin(np.asarray(positions, float) / 1000.0))
    slow_growth = score_encoding(lambda positions, n: np.sqrt(np.log1p(np.asarray(positions, float))))
    assert slow_sine["bounded"].passed
    assert not slow_growth["bounded"].passed
    assert "heuristic" in slow_growth["bounded"].evidence and "256,000" in slow_growth["bounded"].evidence


def test_bounded_for_a_finite_table_and_for_growth_slower_than_the_heuristic_sees():
    table = np.random.default_rng(0).normal(size=(1500, 4))
    finite = score_encoding(lambda positions, n: table[np.asarray(positions)])
    assert finite["bounded"].passed and "finitely many" in finite["bounded"].evidence
    # 1 + log(1 + t) / 1000 grows without bound, but by 0.3 % from 16 000 to 256 000
    # positions: a finite check cannot see every growth, which is why it says "heuristic".
    creeping = score_encoding(lambda positions, n: 1 + np.log1p(np.asarray(positions, float)) / 1000)
    assert creeping["bounded"].passed and "heuristic" in creeping["bounded"].evidence
