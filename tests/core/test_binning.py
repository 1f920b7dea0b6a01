"""Log-binned means (posenc_helpers.binning): bins and means worked out by hand."""

import math

import numpy as np

import posenc_helpers as ph

# Run by tests/core/test_bad_input.py, with every other module's cases.
BAD_INPUT_CASES = [
    # (call, exception, words the message must contain)
    (lambda: ph.log_binned(["a", "b"]), TypeError, ["values", "real numbers"]),
    (lambda: ph.log_binned(np.ones((2, 3))), ValueError, ["values", "1-D", "(2, 3)"]),
    (lambda: ph.log_binned([1.0]), ValueError, ["values", "at least 2"]),
    (lambda: ph.log_binned([1.0, np.nan, 2.0]), ValueError, ["values", "finite"]),
    (lambda: ph.log_binned(np.arange(9.0), 0), ValueError, ["bins_per_octave", ">= 1"]),
    (lambda: ph.log_binned(np.arange(9.0), 1.5), TypeError, ["bins_per_octave", "integer"]),
    (lambda: ph.log_binned(np.arange(9.0), True), TypeError, ["bins_per_octave"]),
]


def test_one_bin_per_octave():
    # 20 positions, one bin per octave: edges 1, 2, 4, 8, 16 and the end, 20, so the bins are
    # positions 1, 2-3, 4-7, 8-15 and 16-19; for values t the means are the middles of the bins.
    centres, means = ph.log_binned(np.arange(20.0), bins_per_octave=1)
    assert means.tolist() == [1.0, 2.5, 5.5, 11.5, 17.5]
    # the geometric middle of first and last position: sqrt(1*1), sqrt(2*3), sqrt(4*7), ...
    expected = [1.0, math.sqrt(6), math.sqrt(28), math.sqrt(120), math.sqrt(304)]
    np.testing.assert_allclose(centres, expected, rtol=1e-15)


def test_first_bins_are_single_positions_and_position_0_is_left_out():
    # 5 positions, two bins per octave: round(2**(k/2)) for k = 0..5 is 1, 1, 2, 3, 4, 6, so the
    # edges below 5 are 1, 2, 3, 4: every bin is one position, and position 0 (the 10) is in none.
    centres, means = ph.log_binned([10.0, 1.0, 2.0, 3.0, 4.0], bins_per_octave=2)
    assert centres.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert means.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_the_last_bin_stops_at_the_end():
    # 10 positions, one bin per octave: bins 1, 2-3, 4-7 and 8-9 (cut at the end, not at 15)
    centres, means = ph.log_binned([0.0, 1.0, 0.0, 2.0, 4.0, 4.0, 4.0, 8.0, 3.0, 5.0], bins_per_octave=1)
    assert means.tolist() == [1.0, 1.0, 5.0, 4.0]
    np.testing.assert_allclose(centres, [1.0, math.sqrt(6), math.sqrt(28), math.sqrt(72)], rtol=1e-15)


def test_the_plotting_package_exports_the_same_function():
    from posenc_helpers import plotting

    assert plotting.log_binned is ph.log_binned
