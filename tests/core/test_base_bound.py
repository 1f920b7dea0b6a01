"""Men et al.'s base criterion, against values worked out by hand, from the paper, and by a second method."""

import math

import numpy as np
import pytest

import posenc_helpers as ph
from posenc_helpers import first_negative_distance, men_criterion, rope_frequencies, smallest_passing_base


def _direct(base, context, rotary_dim=128, unrotated=0):
    """A second method: the sum of Men et al.'s B(m), one cosine per (distance, pair), as the paper writes it."""
    theta = base ** (-np.arange(0, rotary_dim, 2) / rotary_dim)
    return np.cos(np.outer(np.arange(context), theta)).sum(axis=1) + unrotated / 2


def test_by_hand():
    # theta = (1, 1/2): B(0) = 2, B(1) = cos 1 + cos 0.5 = 0.5403 + 0.8776 = 1.418,
    # B(2) = cos 2 + cos 1 = -0.4161 + 0.5403 = 0.124, B(3) = cos 3 + cos 1.5 = -0.9900 + 0.0707 = -0.919.
    np.testing.assert_allclose(men_criterion([1.0, 0.5], 4), [2.0, 1.4179, 0.1242, -0.9193], atol=1e-4)
    assert first_negative_distance([1.0, 0.5]) == 3
    assert first_negative_distance([1.0]) == 2  # cos 2 < 0 < cos 1
    assert first_negative_distance([1.0], limit=2) is None  # only m = 0, 1 searched
    # every unrotated feature adds 1/2 (a pair of them, cos 0 = 1): 1 + cos m >= 0 always
    np.testing.assert_allclose(men_criterion([1.0], 5, unrotated_features=2), 1 + np.cos(np.arange(5)), atol=1e-14)
    assert first_negative_distance([1.0], unrotated_features=2) is None
    # a zero frequency (a pair p-RoPE stopped) is an unrotated pair too
    assert first_negative_distance([1.0, 0.0]) is None


def test_agrees_with_the_direct_sum():
    rng = np.random.default_rng(seed=23)
    theta = rng.uniform(0, 1, size=40) ** 4
    direct = np.cos(np.outer(np.arange(50000), theta)).sum(axis=1) + 3.5
    np.testing.assert_allclose(men_criterion(theta, 50000, unrotated_features=7), direct, atol=1e-9)
    first = int(np.flatnonzero(direct < 0)[0]) if (direct < 0).any() else None
    assert first_negative_distance(theta, unrotated_features=7, limit=50000) == first


@pytest.mark.parametrize(
    "name, rotated_pairs, unrotated_features",
    [("GPT-NeoX-20B", 12, 72), ("Pythia-6.9B", 16, 96), ("DeepSeek-V3", 32, 128)],
)
def test_unrotated_features_count(name, rotated_pairs, unrotated_features):
    # By the criterion's own derivation every unrotated pair adds cos 0 = 1, so B(m) >= 36 - 12 = 24 (NeoX-20B),
    # 48 - 16 = 32 (Pythia) and 64 - 32 = 32 (DeepSeek-V3) at every distance: the criterion holds for every context.
    # Over the rotated pairs alone it fails within 2,048 (NeoX, Pythia) and 4,096 tokens (DeepSeek-V3), as the
    # chapter used to report.
    floor = unrotated_features // 2 - rotated_pairs
    theta = rope_frequencies(2 * rotated_pairs, base=10000.0)
    b = men_criterion(theta, 4096, unrotated_features=unrotated_features)
    assert b.min() >= floor and floor in (24, 32)
    assert first_negative_distance(theta, unrotated_features=unrotated_features) is None
    rotated_only = _direct(10000.0, 4096, 2 * rotated_pairs)
    assert rotated_only.min() < 0, name


def test_shipped_partial_rotary_configs_never_cross():
    for key in ("gpt-neox-20b", "pythia-6.9b", "deepseek-v3"):
        report = ph.describe(ph.shipped_configs()[key]["config"])
        unrotated = report.head_dim - report.rotary_dim
        assert first_negative_distance(report.original_inv_freq, unrotated_features=unrotated) is None, key


def test_not_monotone_in_the_base():
    # The old chapter's 81-point grid 10**(3 + k/20): over 32,768 tokens 10**5.80 passes, 10**5.85 fails,
    # 10**5.90 passes, and 10**5.95 .. 10**6.10 fail (second method: the direct sum).
    context = 32768
    verdicts = {k: bool(_direct(10 ** (k / 20), context).min() >= 0) for k in range(116, 123)}
    assert verdicts == {116: True, 117: False, 118: True, 119: False, 120: False, 121: False, 122: False}
    for k, passes in verdicts.items():
        theta = rope_frequencies(128, base=10 ** (k / 20))
        assert (first_negative_distance(theta, limit=context) is None) == passes


def test_qwen_base_fails_only_barely():
    # Qwen2.5's base 1e6 over its 32,768-token context: B first negative at m = 27,115, and its minimum is
    # -1.2 % of B(0) = 64 (second method).
    direct = _direct(1e6, 32768)
    assert int(np.flatnonzero(direct < 0)[0]) == 27115
    assert -0.013 < direct.min() / 64 < -0.011
    assert first_negative_distance(rope_frequencies(128, base=1e6)) == 27115


@pytest.mark.slow
def test_smallest_passing_base_against_men_et_al_figure_1():
    # Men et al., Figure 1 (a 128-wide head): about 3e4 at 4K and 8e4 at 8K (read off the log-log plot).
    # The old chapter's 81-point grid gave 4.47e4 and 1.41e5, 1.5 and 1.7 times more.
    for context, read_off in ((4096, 3e4), (8192, 8e4)):
        found = smallest_passing_base(context, 128)
        assert found == pytest.approx(read_off, rel=0.1)
        assert _direct(found, context).min() >= 0  # it passes (second method)
        grid = np.geomspace(1e3, 1e7, 81)
        coarse = next(b for b in grid if _direct(b, context).min() >= 0)
        assert coarse / found > 1.4
    # 8.4e4 passes at 8K (the example), although 9e4 and 1e5 do not
    assert _direct(8.4e4, 8192).min() >= 0 and _direct(9e4, 8192).min() < 0 and _direct(1e5, 8192).min() < 0


def test_smallest_passing_base_grid_and_bisection():
    # A finer, nested grid can only find a passing grid base as low or lower.
    coarse = smallest_passing_base(8192, 128, points_per_decade=100, rtol=1e-6)
    fine = smallest_passing_base(8192, 128, points_per_decade=1000, rtol=1e-6)
    assert fine <= coarse * (1 + 1e-12)
    assert _direct(coarse, 8192).min() >= 0 and _direct(fine, 8192).min() >= 0
    # partial rotary: B >= 0 at every base once unrotated pairs outnumber rotated ones, so low already passes
    with pytest.raises(ValueError, match="low"):
        smallest_passing_base(2048, 24, unrotated_features=72)


BAD_INPUT_CASES = [
    (lambda: ph.men_criterion([], 4), ValueError, ["inv_freq", "non-empty"]),
    (lambda: ph.men_criterion([[1.0]], 4), ValueError, ["inv_freq", "1-D"]),
    (lambda: ph.men_criterion([1.0, -0.5], 4), ValueError, ["inv_freq", ">= 0"]),
    (lambda: ph.men_criterion([1.0, math.nan], 4), ValueError, ["inv_freq", "finite"]),
    (lambda: ph.men_criterion(["a"], 4), TypeError, ["inv_freq"]),
    (lambda: ph.men_criterion([1.0], 0), ValueError, ["context", ">= 1"]),
    (lambda: ph.men_criterion([1.0], 4.0), TypeError, ["context"]),
    (lambda: ph.men_criterion([1.0], 4, unrotated_features=-2), ValueError, ["unrotated_features"]),
    (lambda: ph.first_negative_distance([1.0], limit=0), ValueError, ["limit"]),
    (lambda: ph.first_negative_distance([1.0], unrotated_features=1.5), TypeError, ["unrotated_features"]),
    (lambda: ph.first_negative_distance([-1.0]), ValueError, ["inv_freq"]),
    (lambda: ph.smallest_passing_base(1, 128), ValueError, ["context", ">= 2"]),
    (lambda: ph.smallest_passing_base(4096, 7), ValueError, ["rotary_dim", "even"]),
    (lambda: ph.smallest_passing_base(4096, 128, low=0.0), ValueError, ["low", "> 0"]),
    (lambda: ph.smallest_passing_base(4096, 128, low=1e4, high=1e3), ValueError, ["high", "larger than low"]),
    (lambda: ph.smallest_passing_base(4096, 128, high=1e3), ValueError, ["high", "no base"]),
    (lambda: ph.smallest_passing_base(4096, 128, points_per_decade=0), ValueError, ["points_per_decade"]),
    (lambda: ph.smallest_passing_base(4096, 128, rtol=0.0), ValueError, ["rtol", "> 0"]),
    (lambda: ph.smallest_passing_base(4096, 128, unrotated_features=-1), ValueError, ["unrotated_features"]),
]
