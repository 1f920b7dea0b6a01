"""Checks of chapter 11's exercises: values worked out by hand, named mistakes, no leaks."""

from __future__ import annotations

import re

import numpy as np
import pytest

from posenc_helpers.checks import CheckFailed, check_length_jumps, check_unseen_pairs

# Two methods, two seeds, three lengths. By hand: a rises by 0.5 (seed 0) and 0.3 (seed 1),
# worst 0.5, mean 0.4, at the longest length by 0.9; b rises by 0.1 and 0.2, worst 0.2.
CURVES = {("a", 0): [2.0, 2.5, 2.9], ("a", 1): [2.1, 2.4, 2.5], ("b", 0): [2.2, 2.3, 2.3], ("b", 1): [2.0, 2.2, 2.4]}
RIGHT = {"a": 0.5, "b": 0.2}


def test_jumps_right_and_not_attempted():
    assert check_length_jumps({"a": 0.5 + 1e-12, "b": 0.2}, CURVES)
    result = check_length_jumps(None, CURVES)
    assert not result and "Not attempted" in str(result)
    assert not check_length_jumps(..., CURVES)


@pytest.mark.parametrize(
    "answer, hint",
    [
        ({"a": -0.5, "b": 0.2}, "sign flipped"),
        ({"a": 0.4, "b": 0.2}, "mean over the seeds"),
        ({"a": 0.9, "b": 0.2}, "longest length"),
        ({"a": 0.45, "b": 0.2}, "not the largest"),
        ({"a": 0.5}, "missing: ['b']"),
        ({"a": 0.5, "b": 0.2, "c": 0.0}, "not a method: ['c']"),
        ({"a": "lots", "b": 0.2}, "should be a number"),
        ([0.5, 0.2], "should be a dict"),
    ],
)
def test_jumps_mistakes_are_named_and_never_revealed(answer, hint):
    with pytest.raises(CheckFailed) as info:
        check_length_jumps(answer, CURVES)
    message = str(info.value)
    assert hint in message
    assert "0.5" not in message and "0.2" not in message  # the expected values are not in message


def test_jumps_rejects_bad_curves():
    with pytest.raises(TypeError, match="curves"):
        check_length_jumps(RIGHT, {})
    with pytest.raises(TypeError, match="method, seed"):
        check_length_jumps(RIGHT, {"a": [1.0, 2.0]})
    with pytest.raises(ValueError, match="two or more"):
        check_length_jumps(RIGHT, {("a", 0): [1.0]})


# head_dim 16, base 10000: theta_i = 10000**(-i/8); trained at 64 tokens a pair has turned a
# full circle when 64 theta_i >= 2 pi, i.e. for pairs 0, 1, 2 (wavelengths 6.3, 19.9, 62.8);
# pairs 3..7 (199 tokens and longer) have not, and at 256 tokens they reach 255 theta_i > 64 theta_i.
BY_HAND = np.array([False, False, False, True, True, True, True, True])


def test_unseen_pairs_by_hand():
    assert check_unseen_pairs(BY_HAND, head_dim=16, train_len=64, length=256)
    assert not check_unseen_pairs(None, head_dim=16, train_len=64, length=256)
    # at the training length itself nothing is new
    assert check_unseen_pairs(np.zeros(8, bool), head_dim=16, train_len=64, length=64)
    # the book's one dtype policy: a mask of zeros and ones, in any number type, is read as False/True
    assert check_unseen_pairs(BY_HAND.astype(int), head_dim=16, train_len=64, length=256)
    assert check_unseen_pairs(BY_HAND.astype(np.float32), head_dim=16, train_len=64, length=256)


@pytest.mark.parametrize(
    "answer, hint",
    [
        (np.repeat(BY_HAND, 2), "one entry per feature"),
        (~BY_HAND, "opposite"),
        (np.array([3, 4, 5, 6, 7, 0, 0, 0]), "boolean"),  # pair indices, not a mask
        (BY_HAND[:4], "shape (8,)"),
        (np.array([False, False, True, True, True, True, True, True]), "marks True a pair that turned a full circle"),
        (np.array([False, False, False, False, True, True, True, True]), "marks False a pair that meets new angles"),
    ],
)
def test_unseen_pairs_mistakes_never_reveal_the_mask(answer, hint):
    with pytest.raises(CheckFailed) as info:
        check_unseen_pairs(answer, head_dim=16, train_len=64, length=256)
    message = str(info.value)
    assert hint in message
    for shown in (str(BY_HAND), str(BY_HAND.tolist()), str(np.flatnonzero(BY_HAND).tolist()), "3, 4, 5"):
        assert shown not in message  # neither the mask nor the unseen pairs are in message
    # nor which pair is wrong: for a mask of booleans, the pair's index would give its entry away
    assert not re.search(r"\bpair \d", message), message


def test_unseen_pairs_flagging_every_slow_pair_is_recognised():
    # at length 65 no pair can reach past its trained arc (64 theta < 64 theta), yet pairs 3..7 are slow
    with pytest.raises(CheckFailed, match="turns less than once"):
        check_unseen_pairs(BY_HAND, head_dim=16, train_len=64, length=65)


def test_unseen_pairs_bad_arguments():
    with pytest.raises(ValueError, match="head_dim"):
        check_unseen_pairs(BY_HAND, head_dim=15, train_len=64, length=256)
    with pytest.raises(ValueError, match="train_len"):
        check_unseen_pairs(BY_HAND, head_dim=16, train_len=0, length=256)


def test_jumps_of_the_recorded_curves_typed_to_three_decimals():
    """Exercise 11.1 on the chapter's own record: each worst rise rounded to three decimals, as the
    question asks, passes; two decimals is close, four units off is not; the mean over seeds, rounded,
    is still named."""
    from posenc_helpers.lab import PROTOCOL
    from posenc_helpers.measured import trained_extrapolation

    record = trained_extrapolation()["text"]
    largest = str(PROTOCOL.largest)
    curves = {(m, s): list(record[m][str(s)][largest]["mean"]) for m in record for s in PROTOCOL.seeds}
    rises = {m: [c[1] - c[0] for (n, _), c in curves.items() if n == m] for m in record}
    worst = {m: max(r) for m, r in rises.items()}
    assert check_length_jumps({m: round(v, 3) for m, v in worst.items()}, curves)
    assert check_length_jumps({m: np.float32(v) for m, v in worst.items()}, curves)
    for method, values in rises.items():
        mean = sum(values) / len(values)
        assert abs(mean - worst[method]) > 0.002  # three decimals tell the two apart for every method
        with pytest.raises(CheckFailed, match="mean over the seeds") as info:
            check_length_jumps({**worst, method: round(mean, 3)}, curves)
        assert f"{worst[method]:.3f}" not in str(info.value) and f"{worst[method]:.2f}" not in str(info.value)
    method = max(worst, key=lambda m: abs(worst[m]))
    with pytest.raises(CheckFailed, match=r"close: it is right to the digits it has; give more digits \(the question"):
        check_length_jumps({**worst, method: round(worst[method], 2)}, curves)  # two decimals of three
    with pytest.raises(CheckFailed, match=r"is not yet the worst rise") as info:
        check_length_jumps({**worst, method: round(worst[method] + 0.004, 3)}, curves)  # four units off
    assert "close" not in str(info.value)
