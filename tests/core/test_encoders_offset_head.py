"""Chapter 10's numerics: the eight method encoders, the n/a rule, the scored grid and the offset
head (its plots and its explorer are tested in ``tests/chapters/test_ch10_comparison.py``).

Expected values are worked out independently of the code under test: by hand, with the math
module, or by a plain Python loop.
"""

import math

import numpy as np
import pytest

import posenc_helpers as ph
from posenc_helpers.checklist import CriterionResult

NAMES = ["integer", "normalised", "sine-only", "sinusoidal", "learned", "T5 buckets", "RoPE", "ALiBi"]
ENC = ph.method_encoders(d_model=4, n_heads=2, learned_max_len=16)


def _result(passed_keys):
    return {c.key: CriterionResult(c.key in passed_keys, "evidence") for c in ph.CHECKLIST}


# Run by tests/core/test_bad_input.py, with every other module's cases.
BAD_INPUT_CASES = [
    # (call, exception, words the message must contain)
    (lambda: ph.method_encoders(d_model=7), ValueError, ["d_model", "even"]),
    (lambda: ph.method_encoders(d_model=8.0), TypeError, ["d_model"]),
    (lambda: ph.method_encoders(base=0.0), ValueError, ["base", "> 0"]),
    (lambda: ph.method_encoders(learned_max_len=0), ValueError, ["learned_max_len", ">= 1"]),
    (lambda: ph.method_encoders(n_heads=0), ValueError, ["n_heads", ">= 1"]),
    (lambda: ph.method_encoders(seed=-1), ValueError, ["seed", ">= 0"]),
    (lambda: ph.method_encoders(t5_bidirectional="no"), TypeError, ["t5_bidirectional"]),
    (lambda: ph.method_encoders(t5_num_buckets=1), ValueError, ["t5_num_buckets", ">= 2"]),
    (lambda: ph.method_encoders(t5_max_distance=2), ValueError, ["t5_max_distance"]),
    (lambda: ph.method_encoders()["integer"]([0, 5], 3), ValueError, ["positions", "[0, 2]"]),
    (lambda: ph.method_encoders()["sinusoidal"]([0.5], 3), ValueError, ["positions", "whole numbers"]),
    (lambda: ph.method_encoders()["RoPE"](3, 3), TypeError, ["positions", "1-D"]),
    (lambda: ph.method_encoders()["ALiBi"]([[0, 1]], 3), ValueError, ["positions", "1-D"]),
    (lambda: ph.method_encoders()["T5 buckets"]([0], 0), ValueError, ["seq_len", ">= 1"]),
    (lambda: ph.criterion_applies("bogus", "added to the input"), ValueError, ["criterion", "'bounded'"]),
    (lambda: ph.criterion_applies("bounded", "magic"), ValueError, ["mechanism", "'bias on the logits'"]),
    (lambda: ph.criterion_applies(1, "added to the input"), TypeError, ["criterion"]),
    (lambda: ph.checklist_grid({}), TypeError, ["scores", "non-empty"]),
    (lambda: ph.checklist_grid({"a": {}}), ValueError, ["scores['a']", "lacks"]),
    (lambda: ph.checklist_grid({"a": {c.key: True for c in ph.CHECKLIST}}), TypeError, ["CriterionResult"]),
    (lambda: ph.checklist_grid({"a": _result(())}, {"b": "added to the input"}), ValueError, ["mechanisms", "'a'"]),
    (lambda: ph.checklist_grid({"a": _result(())}, {"a": "magic"}), ValueError, ["mechanisms['a']"]),
    (lambda: ph.checklist_grid({"a": _result(())}, "added"), TypeError, ["mechanisms"]),
    (lambda: ph.comparison_markdown([]), TypeError, ["scores"]),
    (lambda: ph.offset_score([np.nan], 4), ValueError, ["delta", "finite"]),
    (lambda: ph.offset_score(["a"], 4), TypeError, ["delta"]),
    (lambda: ph.offset_score([1.0], 5), ValueError, ["d_model", "even"]),
    (lambda: ph.offset_score([1.0], 4, kind="alibi"), ValueError, ["kind", "'rope'"]),
    (lambda: ph.offset_score([1.0], 4, probe=np.ones(4)), ValueError, ["probe", "kind='rope'"]),
    (lambda: ph.offset_score([1.0], 4, kind="rope", probe=np.ones(3)), ValueError, ["probe", "d_model = 4"]),
    (lambda: ph.offset_score([1.0], 4, kind="rope", probe=np.zeros(4)), ValueError, ["probe", "zeros"]),
    (lambda: ph.offset_score([1.0], 4, base=-1.0), ValueError, ["base"]),
    (lambda: ph.offset_head_weights(0, 1, 4), ValueError, ["seq_len", ">= 1"]),
    (lambda: ph.offset_head_weights(5000, 1, 4), ValueError, ["seq_len", "offset_head_profile"]),
    (lambda: ph.offset_head_weights(5, -1, 4), ValueError, ["offset", ">= 0"]),
    (lambda: ph.offset_head_weights(5, 1.5, 4), TypeError, ["offset"]),
    (lambda: ph.offset_head_weights(5, 1, 4, temperature=0.0), ValueError, ["temperature", "> 0"]),
    (lambda: ph.offset_head_weights(5, 1, 6, kind="learned"), ValueError, ["kind"]),
    (lambda: ph.offset_head_profile(0, 1, 4), ValueError, ["seq_len"]),
    (lambda: ph.offset_head_closed_form([1.0, 2.0], 2, 1.0), ValueError, ["scores_by_delta", "offset = 2"]),
    (lambda: ph.offset_head_closed_form([[1.0, 2.0]], 0, 1.0), ValueError, ["scores_by_delta", "1-D"]),
    (lambda: ph.offset_head_closed_form([1.0, np.nan], 0, 1.0), ValueError, ["scores_by_delta", "finite"]),
    (lambda: ph.offset_head_closed_form([1.0, 2.0], 0, 0.0), ValueError, ["temperature"]),
    (lambda: ph.offset_head_closed_form([1.0, 2.0], -1, 1.0), ValueError, ["offset"]),
    (lambda: ph.offset_head_profile(10, 1, 4, queries=[3, 2]), ValueError, ["queries", "increasing"]),
    (lambda: ph.offset_head_profile(10, 1, 4, queries=[10]), ValueError, ["queries", "[0, 9]"]),
    (lambda: ph.offset_head_profile(10, 1, 4, queries=[1.5]), ValueError, ["queries", "whole"]),
    (lambda: ph.offset_head_profile(10, 1, 4, queries=3), TypeError, ["queries"]),
    (lambda: ph.offset_head_profile(10, 1, 4, queries=[]), ValueError, ["queries", "non-empty"]),
    (lambda: ph.offset_head_profile(10, 1, 4, block_size=1), ValueError, ["block_size", ">= 2"]),
    (lambda: ph.offset_head_profile(10, 1, 4, temperature=-1.0), ValueError, ["temperature"]),
    (lambda: ph.offset_head_profile(1_000_000, 1, 4), ValueError, ["queries", "pairs"]),
]


# --------------------------------------------------------------------------- encoders
def test_encoders_names_and_mechanisms():
    assert list(ENC) == NAMES
    assert [ENC[n].mechanism for n in NAMES] == ["added to the input"] * 5 + [
        "bias on the logits",
        "rotates queries and keys",
        "bias on the logits",
    ]
    for name in NAMES:
        assert ENC[name].name == name and ENC[name].adapter


def test_integer_and_normalised_rows():
    np.testing.assert_array_equal(ENC["integer"]([0, 3, 7], 8), [[0.0], [3.0], [7.0]])
    np.testing.assert_array_equal(ENC["normalised"]([0, 1, 4], 5), [[0.0], [0.25], [1.0]])
    np.testing.assert_array_equal(ENC["normalised"]([0], 1), [[0.0]])


def test_sinusoidal_and_sine_only_rows_by_hand():
    # d = 4: omega = [1, 0.01]; sine-only columns: 10000**(-j/4) = 1, 0.1, 0.01, 0.001
    row = ENC["sinusoidal"]([5], 6)[0]
    np.testing.assert_allclose(row, [math.sin(5), math.cos(5), math.sin(0.05), math.cos(0.05)], atol=1e-15)
    row = ENC["sine-only"]([5], 6)[0]
    np.testing.assert_allclose(row, [math.sin(5 * 10.0 ** (-j)) for j in range(4)], atol=1e-15)


def test_learned_rows_and_missing_rows():
    table = np.random.default_rng(0).normal(0.0, 0.02, size=(16, 4))
    np.testing.assert_array_equal(ENC["learned"]([0, 15], 16), table[[0, 15]])
    with pytest.raises(IndexError, match="16"):
        ENC["learned"]([16], 17)


def test_t5_rows_are_one_hot_buckets():
    rows = ENC["T5 buckets"]([0, 5, 15, 1000], 1001)
    assert rows.shape == (4, 32)
    np.testing.assert_array_equal(rows.sum(axis=1), 1.0)
    # decoder bucketing: distances 0..15 exact, 1000 beyond max_distance is the last bucket
    assert list(rows.argmax(axis=1)) == [0, 5, 15, 31]
    bidirectional = ph.method_encoders(d_model=4, t5_bidirectional=True)["T5 buckets"]([5, 100], 101)
    # keys before the query use the first half: 16 buckets, 8 exact; 100 -> 8 + int(ln(12.5)/ln(16)*8) = 15
    assert list(bidirectional.argmax(axis=1)) == [5, 8 + int(math.log(12.5) / math.log(16) * 8)]


def test_rope_rows_rotate_the_probe():
    rows = ENC["RoPE"](np.arange(4), 4)
    u = rows[0]
    theta = [1.0, 0.01]  # head_dim 4
    for t in range(4):
        expected = []
        for p, th in enumerate(theta):
            a, b = u[2 * p], u[2 * p + 1]
            c, s = math.cos(t * th), math.sin(t * th)
            expected += [a * c - b * s, a * s + b * c]
        np.testing.assert_allclose(rows[t], expected, atol=1e-14)
    assert np.any(u != 0)
    # the probe does not repeat the learned table's draws
    assert not np.allclose(u * 0.02, np.random.default_rng(0).normal(0.0, 0.02, size=(16, 4))[0])


def test_alibi_rows_by_hand():
    # two heads: slopes 2**(-8 * 1 / 2) = 1/16 and 2**(-8 * 2 / 2) = 1/256
    np.testing.assert_allclose(ENC["ALiBi"]([0, 3], 4), [[0.0, 0.0], [-3 / 16, -3 / 256]], atol=0)


def test_encoders_are_deterministic_and_seeded():
    other = ph.method_encoders(d_model=4, n_heads=2, learned_max_len=16)
    for name in NAMES:
        np.testing.assert_array_equal(ENC[name](np.arange(10), 16), other[name](np.arange(10), 16))
    reseeded = ph.method_encoders(d_model=4, n_heads=2, learned_max_len=16, seed=1)
    assert not np.allclose(reseeded["learned"](np.arange(10), 16), ENC["learned"](np.arange(10), 16))


def test_the_scored_checklist_of_chapter_10():
    encoders = ph.method_encoders()
    scores = {name: ph.score_encoding(enc) for name, enc in encoders.items()}
    grid = ph.checklist_grid(scores, {n: e.mechanism for n, e in encoders.items()})
    nan = np.nan
    #                 int  norm sine  sin  learn  T5  RoPE ALiBi
    expected = np.array(
        [
            [1, 1, 1, 1, 1, 0, 1, 1],  # unique: T5 buckets 16 and 17 coincide
            [0, 1, 1, 1, 1, nan, nan, nan],  # bounded: the index grows; n/a unless added to the input
            [1, 0, 1, 1, 1, 1, 1, 1],  # consistent: the normalised step depends on n
            [1, 1, 1, 1, 1, 1, 1, 1],  # deterministic
            [1, 1, 1, 1, 0, 1, 1, 1],  # defined at unseen positions: no row 1024
            [0, 0, 0, 1, 0, 1, 1, 1],  # linear offset: rotations; biases by construction
        ]
    )
    np.testing.assert_array_equal(grid, expected)


# --------------------------------------------------------------------------- n/a rule and tables
def test_one_rule_for_not_applicable_and_one_for_by_construction():
    for criterion in ph.CHECKLIST:
        for mechanism in ph.MECHANISMS:
            expected = not (criterion.key == "bounded" and mechanism != "added to the input")
            assert ph.criterion_applies(criterion.key, mechanism) is expected
    assert {
        "bias on the logits": {"linear_offset": ph.BY_CONSTRUCTION["bias on the logits"]["linear_offset"]}
    } == ph.BY_CONSTRUCTION
    assert "j - i" in ph.BY_CONSTRUCTION["bias on the logits"]["linear_offset"]


def test_checklist_grid_and_markdown_from_hand_made_scores():
    scores = {"x": _result({"unique", "bounded"}), "y": _result({"bounded", "linear_offset"})}
    grid = ph.checklist_grid(scores, {"x": "added to the input", "y": "bias on the logits"})
    np.testing.assert_array_equal(grid[:, 0], [1, 1, 0, 0, 0, 0])
    np.testing.assert_array_equal(grid[:, 1], [0, np.nan, 0, 0, 0, 1])
    np.testing.assert_array_equal(ph.checklist_grid(scores)[:, 1], [0, 1, 0, 0, 0, 1])
    table = ph.comparison_markdown(scores, {"x": "added to the input", "y": "bias on the logits"})
    lines = table.splitlines()
    assert lines[0] == "| property | x | y |"
    assert lines[2] == "| *mechanism* | *added to the input* | *bias on the logits* |"
    assert lines[3] == "| Unique | yes | no |"
    assert lines[4] == "| Bounded (heuristic) | yes | n/a |"  # a finite check only suggests a bound
    assert lines[-1] == "| Offsets are a fixed map | no | yes (by construction) |"
    assert "mechanism" not in ph.comparison_markdown(scores)
    extra = ph.comparison_markdown(scores, extra_rows={"measured": {"y": "yes"}}).splitlines()[-1]
    assert extra == "| measured | — | yes |"
    with pytest.raises(TypeError, match="extra_rows"):
        ph.comparison_markdown(scores, extra_rows={"measured": "yes"})


# --------------------------------------------------------------------------- the offset head
def test_offset_score_by_hand():
    np.testing.assert_allclose(ph.offset_score([0.0, 1.0, 2.5], 2), [1.0, math.cos(1.0), math.cos(2.5)])
    np.testing.assert_allclose(ph.offset_score([3.0], 4), [math.cos(3.0) + math.cos(0.03)])
    probe = np.array([1.0, 2.0, 0.0, 3.0])  # pair weights 1 + 4 = 5 and 0 + 9 = 9
    np.testing.assert_allclose(
        ph.offset_score([3.0], 4, kind="rope", probe=probe), [5 * math.cos(3.0) + 9 * math.cos(0.03)]
    )
    assert ph.offset_score(np.zeros((2, 3)), 4).shape == (2, 3)


def test_offset_score_has_its_unique_maximum_at_zero():
    delta = np.arange(-500, 501)
    scores = ph.offset_score(delta, 32)
    assert scores.argmax() == 500 and np.sum(scores >= scores.max() - 1e-9) == 1


def test_offset_head_weights_by_hand():
    # seq_len 3, offset 1, d 2 (omega 1), tau 1: logit(i, j) = cos(i - j - 1) for j <= i
    weights = ph.offset_head_weights(3, 1, 2, temperature=1.0)
    expected = np.zeros((3, 3))
    for i in range(3):
        row = [math.exp(math.cos(i - j - 1)) for j in range(i + 1)]
        expected[i, : i + 1] = [value / sum(row) for value in row]
    np.testing.assert_allclose(weights, expected, atol=1e-15)


def test_offset_head_attends_phi_back_and_rope_with_unit_pairs_matches():
    weights = ph.offset_head_weights(80, 4, 64, temperature=0.25)
    rows = np.arange(4, 80)
    assert np.all(weights[rows].argmax(axis=1) == rows - 4)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0)
    assert np.all(np.triu(weights, k=1) == 0.0)
    rope = ph.offset_head_weights(80, 4, 64, temperature=0.25, kind="rope", probe=np.tile([1.0, 0.0], 32))
    np.testing.assert_allclose(rope, weights, atol=1e-12)
    probe = np.random.default_rng(5).normal(size=64)
    rope = ph.offset_head_weights(80, 4, 64, temperature=0.1, kind="rope", probe=probe)
    assert np.all(rope[rows].argmax(axis=1) == rows - 4)


@pytest.mark.parametrize("block_size", [2, 7, 64, 1024])
@pytest.mark.parametrize("kind", ["sinusoidal", "rope"])
def test_offset_head_profile_matches_the_full_matrix(block_size, kind):
    probe = np.random.default_rng(2).normal(size=16) if kind == "rope" else None
    weights = ph.offset_head_weights(70, 5, 16, temperature=0.5, kind=kind, probe=probe)
    profile = ph.offset_head_profile(70, 5, 16, temperature=0.5, kind=kind, probe=probe, block_size=block_size)
    rows = np.arange(70)
    np.testing.assert_array_equal(profile.queries, rows)
    np.testing.assert_array_equal(profile.argmax, weights.argmax(axis=1))
    assert np.all(np.isnan(profile.target_weight[:5]))
    np.testing.assert_allclose(profile.target_weight[5:], weights[rows[5:], rows[5:] - 5], atol=1e-13)
    second = np.sort(weights, axis=1)[:, -2]
    np.testing.assert_allclose(profile.runner_up_weight, second, atol=1e-13)
    assert profile.runner_up_weight[0] == 0.0  # query 0 sees one key
    subset = ph.offset_head_profile(
        70, 5, 16, temperature=0.5, kind=kind, probe=probe, block_size=block_size, queries=[0, 6, 33, 69]
    )
    np.testing.assert_array_equal(subset.argmax, profile.argmax[[0, 6, 33, 69]])
    np.testing.assert_allclose(subset.target_weight, profile.target_weight[[0, 6, 33, 69]], atol=1e-13)
    np.testing.assert_allclose(subset.runner_up_weight, profile.runner_up_weight[[0, 6, 33, 69]], atol=1e-13)


def test_offset_head_profile_on_a_long_sequence_against_a_plain_loop():
    # query 2999 of 3000 tokens, by a plain loop over the keys
    d, phi, tau = 16, 2, 0.125
    omega = [10000.0 ** (-2 * k / d) for k in range(d // 2)]
    logits = [sum(math.cos(w * (2999 - j - phi)) for w in omega) / tau for j in range(3000)]
    peak = max(logits)
    total = sum(math.exp(x - peak) for x in logits)
    profile = ph.offset_head_profile(3000, phi, d, temperature=tau, queries=[2999], block_size=500)
    assert profile.argmax[0] == 2999 - phi
    assert math.isclose(profile.target_weight[0], math.exp(logits[2999 - phi] - peak) / total, rel_tol=1e-9)


def test_closed_form_by_hand():
    # scores 0, 1 (the target, offset 1), 0 at temperature 1: factors e^-1, 1, e^-1
    target, runner = ph.offset_head_closed_form([0.0, 1.0, 0.0], 1, 1.0)
    e = math.exp(-1.0)
    np.testing.assert_allclose(target, [1 / (e + 1), 1 / (2 * e + 1)], rtol=1e-15)
    np.testing.assert_allclose(runner, [e / (e + 1), e / (2 * e + 1)], rtol=1e-15)


def test_closed_form_matches_the_profile():
    phi, d, tau, n = 3, 16, 0.5, 2000
    scores = ph.offset_score(np.arange(-phi, n - phi), d)
    target, runner = ph.offset_head_closed_form(scores, phi, tau)
    profile = ph.offset_head_profile(n, phi, d, temperature=tau)
    np.testing.assert_allclose(target, profile.target_weight[phi:], rtol=1e-9)
    np.testing.assert_allclose(runner, profile.runner_up_weight[phi:], rtol=1e-9)
