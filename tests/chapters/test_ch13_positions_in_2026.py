"""Chapter 13 (13_positions_in_2026): its checks, figure and explorer.

Expected values are worked out by hand (in the comments) or with the math module,
never with the package.
"""

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest

from posenc_helpers.checks import (
    CheckFailed,
    check_layer_bases,
    check_packed_documents,
    check_proportional_frequencies,
)
from posenc_helpers.plotting import plot_rotating_pairs
from posenc_helpers.widgets import RotaryFractionExplorer


def p_rope_by_hand(head_dim, base, share):
    """Pair i < int(share * head_dim // 2) turns at base**(-2i / head_dim); the rest are 0."""
    turning = int(share * head_dim // 2)
    return [base ** (-2 * i / head_dim) if i < turning else 0.0 for i in range(head_dim // 2)]


# head 8, base 10000, half of the 4 pairs turn: 10000**0 = 1, 10000**(-2/8) = 0.1, then 0, 0.
P_ROPE_8 = [1.0, 0.1, 0.0, 0.0]
# ordinary partial rotary over the rotated width 4: 10000**0 = 1, 10000**(-2/4) = 0.01.
PARTIAL_8 = [1.0, 0.01, 0.0, 0.0]

CONFIG = {
    "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"] * 2,
    "no_rope_layers": [1, 1, 1, 0, 1, 1, 1, 0],
    "rope_parameters": {
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        "full_attention": {"rope_type": "default", "rope_theta": 1000000.0},
    },
}
# the sliding layers rotate with 10000; the full layers 3 and 7 are NoPE.
BASES = [10000.0, 10000.0, 10000.0, 0.0, 10000.0, 10000.0, 10000.0, 0.0]


def test_proportional_check_accepts_p_rope_and_names_the_partial_rotary_mix_up():
    assert p_rope_by_hand(8, 10000.0, 0.5) == pytest.approx(P_ROPE_8)
    assert check_proportional_frequencies(P_ROPE_8, head_dim=8, base=10000.0, partial_rotary_factor=0.5)
    with pytest.raises(CheckFailed, match="full head width"):
        check_proportional_frequencies(PARTIAL_8, head_dim=8, base=10000.0, partial_rotary_factor=0.5)
    with pytest.raises(CheckFailed, match="must be 0"):
        check_proportional_frequencies([1.0, 0.1, 0.01, 0.001], head_dim=8, base=10000.0, partial_rotary_factor=0.5)
    with pytest.raises(CheckFailed, match="fast ones"):
        check_proportional_frequencies([0.0, 0.0, 0.01, 0.001], head_dim=8, base=10000.0, partial_rotary_factor=0.5)
    with pytest.raises(CheckFailed, match="shape"):
        check_proportional_frequencies([1.0, 0.1], head_dim=8, base=10000.0, partial_rotary_factor=0.5)
    assert not check_proportional_frequencies(None, head_dim=8, base=10000.0, partial_rotary_factor=0.5)


def test_proportional_check_on_a_gemma_4_sized_head():
    expected = p_rope_by_hand(512, 1e6, 0.25)
    assert sum(f > 0 for f in expected) == 64
    assert check_proportional_frequencies(expected, head_dim=512, base=1e6, partial_rotary_factor=0.25)


def test_proportional_check_never_reveals_the_frequencies():
    with pytest.raises(CheckFailed) as info:
        check_proportional_frequencies([1.0, 0.2, 0.0, 0.0], head_dim=8, base=10000.0, partial_rotary_factor=0.5)
    assert "0.1" not in str(info.value)


def test_layer_bases_check_names_the_backwards_flags_and_the_default_base():
    assert check_layer_bases(BASES, config=CONFIG)
    backwards = [0.0, 0.0, 0.0, 1e6, 0.0, 0.0, 0.0, 1e6]
    with pytest.raises(CheckFailed, match="reads backwards"):
        check_layer_bases(backwards, config=CONFIG)
    with pytest.raises(CheckFailed, match="NoPE layers apply no rotation"):
        check_layer_bases([10000.0, 10000.0, 10000.0, 1e6] * 2, config=CONFIG)
    with pytest.raises(CheckFailed, match="the same base"):
        check_layer_bases([1e6, 1e6, 1e6, 0.0] * 2, config=CONFIG)
    assert not check_layer_bases(..., config=CONFIG)


def test_layer_bases_check_names_the_default_of_code_that_reads_the_old_field():
    bases = {"sliding_attention": {"rope_theta": 5e5}, "full_attention": {"rope_theta": 1e6}}
    config = dict(CONFIG, rope_parameters=bases)
    config["no_rope_layers"] = [1] * 8
    with pytest.raises(CheckFailed, match="10000 is the default"):
        check_layer_bases([10000.0] * 8, config=config)
    with pytest.raises(CheckFailed, match="swapped"):
        check_layer_bases([1e6, 1e6, 1e6, 5e5] * 2, config=config)


# a packed row: documents of 4, 2, 3 and 1 tokens; zeros at 0, 4, 6, 9 and 10 ids in all
# A packed row: two tokens of a document cut from the previous row, a restart, a jump from 1 to 7.
ROW = [3, 4, 0, 1, 2, 0, 1, 7, 8]
# steps (the first against 3 - 1 = 2): +1 +1 -4 +1 +1 -2 +1 +6 +1 -> starts at 2, 5, 7
ROW_DOCUMENTS = [0, 0, 1, 1, 1, 2, 2, 3, 3]


def documents_by_hand(step=1):
    """A new document wherever an id does not follow the one before by ``step`` (1 is right)."""

    def documents(ids):
        out, current = [0], 0
        for before, after in zip(ids[:-1], ids[1:], strict=True):
            current += after - before != step
            out.append(current)
        return out

    return documents


def test_packed_documents_check_accepts_the_rule_and_names_the_usual_slips():
    assert documents_by_hand()(ROW) == ROW_DOCUMENTS
    assert check_packed_documents(documents_by_hand(), position_ids=ROW)
    assert not check_packed_documents(None, position_ids=ROW)
    # the FlashAttention rule, a document at every 0: [-1 -1 0 0 0 1 1 1 1] or [0 0 0 0 0 1 1 1 1]
    zeros = lambda ids: [sum(p == 0 for p in ids[: i + 1]) - 1 for i in range(len(ids))]  # noqa: E731
    with pytest.raises(CheckFailed, match="numbered the documents by the zeros"):
        check_packed_documents(zeros, position_ids=ROW)
    clipped = lambda ids: [max(v, 0) for v in zeros(ids)]  # noqa: E731
    with pytest.raises(CheckFailed, match="numbered the documents by the zeros"):
        check_packed_documents(clipped, position_ids=ROW)
    # starts only where the ids fall: misses the jump 1 -> 7 ([0 0 1 1 1 2 2 2 2])
    falls = lambda ids: [0] + [sum(ids[j] < ids[j - 1] for j in range(1, i + 1)) for i in range(1, len(ids))]  # noqa: E731
    with pytest.raises(CheckFailed, match="only where the ids fall back") as info:
        check_packed_documents(falls, position_ids=ROW)
    assert "a jump up starts one too" in str(info.value)
    with pytest.raises(CheckFailed, match="numbered from 0"):
        check_packed_documents(lambda ids: [d + 1 for d in documents_by_hand()(ids)], position_ids=ROW)
    flags = lambda ids: [1] + [int(ids[i] - ids[i - 1] != 1) for i in range(1, len(ids))]  # noqa: E731
    with pytest.raises(CheckFailed, match="flag where documents start"):
        check_packed_documents(flags, position_ids=ROW)
    with pytest.raises(CheckFailed, match="function"):
        check_packed_documents(ROW_DOCUMENTS, position_ids=ROW)
    with pytest.raises(CheckFailed, match="raised ZeroDivisionError"):
        check_packed_documents(lambda ids: 1 / 0, position_ids=ROW)


def test_packed_documents_check_runs_its_own_rows():
    # right wherever a row starts at 0 or is the exercise's, one document on the row that starts inside a
    # document ([5 6 7 0 1 2] -> 000111): named, with the row, as the FlashAttention path's reading
    right_from_zero = lambda ids: documents_by_hand()(ids) if ids[0] == 0 or len(ids) == len(ROW) else [0] * len(ids)  # noqa: E731
    with pytest.raises(CheckFailed, match="starts inside a document") as info:
        check_packed_documents(right_from_zero, position_ids=ROW)
    assert "numbered the documents by the zeros" in str(info.value)


def test_packed_documents_check_never_reveals_the_documents():
    with pytest.raises(CheckFailed) as info:
        check_packed_documents(lambda ids: [0, 0, 1, 1, 1, 2, 2, 2, 9], position_ids=ROW)
    message = str(info.value)
    assert "token 7" in message and "[0, 0, 1" not in message and " 3" not in message
    with pytest.raises(CheckFailed) as info:
        check_packed_documents(lambda ids: ROW_DOCUMENTS[:-1], position_ids=ROW)
    assert "(9,)" not in str(info.value)


def test_plot_marks_the_pairs_that_do_not_turn():
    ax = plot_rotating_pairs(8, 0.5, style="partial")
    # turning wavelengths 2 pi / 1 and 2 pi / 0.01; pairs 2 and 3 never turn
    np.testing.assert_allclose(ax.lines[0].get_ydata()[:2], [2 * math.pi, 200 * math.pi])
    assert np.isnan(ax.lines[0].get_ydata()[2:]).all()
    assert np.isfinite(ax.lines[1].get_ydata()).tolist() == [False, False, True, True]
    plt.close("all")


def test_explorer_counts_the_turning_pairs_for_both_schemes():
    explorer, changes = RotaryFractionExplorer.demo()
    for change in changes:
        explorer.set(**change)
        # both schemes turn int(p * 64) of 64 pairs of a 128-wide head
        assert f"{int(change['fraction'] * 64)} of 64 pairs turn" in explorer.status.value
    explorer.set(fraction=0.25, style="partial")
    # ordinary partial: 32 features, slowest pair 15 at 10000**(-30/32): 2 pi 10000**(30/32) tokens
    assert f"{2 * math.pi * 10000 ** (30 / 32):,.0f} tokens" in explorer.status.value
    assert "i + 16 paired" in explorer.status.value


# The checks' policy cases (tests/chapters/test_checks_policy.py runs them): the call, a
# right answer worked out by hand, and a clearly wrong one.
POLICY_CASES = {
    "check_proportional_frequencies": (
        lambda a: check_proportional_frequencies(a, head_dim=8, base=10000.0, partial_rotary_factor=0.5),
        P_ROPE_8,
        PARTIAL_8,
    ),
    "check_layer_bases": (lambda a: check_layer_bases(a, config=CONFIG), BASES, [10000.0] * 8),
    # the answer is a function: the parameter is the step that continues a document (1 is right)
    "check_packed_documents": (
        lambda a: check_packed_documents(documents_by_hand(step=a), position_ids=ROW),
        1.0,
        2.0,
    ),
}

# Bad input to the chapter's helpers (tests/core/test_bad_input.py runs them): the call,
# the exception, and words its message must contain.
BAD_INPUT_CASES = [
    (
        lambda: check_proportional_frequencies([0], head_dim=7, base=1e4, partial_rotary_factor=0.5),
        ValueError,
        ["head_dim", "even"],
    ),
    (
        lambda: check_proportional_frequencies([0], head_dim=8, base=1e4, partial_rotary_factor=1.5),
        ValueError,
        ["partial_rotary_factor", "(0, 1]"],
    ),
    (lambda: check_layer_bases([0], config=[1, 2]), TypeError, ["config", "mapping"]),
    (
        lambda: check_layer_bases([0], config=dict(CONFIG, no_rope_layers=[1, 0])),
        ValueError,
        ["no_rope_layers", "one entry per layer"],
    ),
    (
        lambda: check_layer_bases([0], config=dict(CONFIG, no_rope_layers=[2] * 8)),
        ValueError,
        ["no_rope_layers", "0 (NoPE) and 1 (RoPE)"],
    ),
    (
        lambda: check_layer_bases([0], config=dict(CONFIG, rope_parameters={"full_attention": {"rope_theta": 1e6}})),
        TypeError,
        ["sliding_attention", "mapping"],
    ),
    (lambda: check_packed_documents(None, position_ids=[[0, 1]]), ValueError, ["position_ids", "1-D"]),
    (lambda: check_packed_documents(None, position_ids=[0, -1]), ValueError, ["position_ids", ">= 0"]),
    (lambda: check_packed_documents(None, position_ids=["a"]), TypeError, ["position_ids"]),
    (lambda: plot_rotating_pairs(8, 0.5, style="diagonal"), ValueError, ["style", "partial"]),
    (lambda: plot_rotating_pairs(8, 0.0, style="partial"), ValueError, ["partial_rotary_factor"]),
    (lambda: RotaryFractionExplorer(head_dim=24), ValueError, ["head_dim", "multiple of 16"]),
    (lambda: RotaryFractionExplorer(base=-1.0), ValueError, ["base"]),
]
