"""Sinusoidal encoding, frequencies and the shift matrix, against values worked out by hand."""

import math

import numpy as np
import pytest

from posenc_helpers import (
    frequencies,
    integer_positions,
    normalized_positions,
    shift_matrix,
    sine_only_encoding,
    sinusoidal_encoding,
    wavelengths,
)


def test_worked_example_d4():
    # d = 4: omega_0 = 10000**0 = 1, omega_1 = 10000**(-2/4) = 1/100.
    table = sinusoidal_encoding(3, 4)
    expected = np.array([[math.sin(t), math.cos(t), math.sin(t / 100), math.cos(t / 100)] for t in range(3)])
    np.testing.assert_allclose(table, expected, rtol=0, atol=1e-15)
    # The rounded row quoted in the book: [0.909, -0.416, 0.020, 1.000].
    np.testing.assert_array_equal(np.round(table[2], 3), [0.909, -0.416, 0.020, 1.000])


def test_dimension_index_mistake_differs_from_pair_index():
    # The classic mistake puts the dimension index i (not the pair index k = i // 2) into
    # the exponent: omega = 10000**(-2i/d). For d = 4 that gives PE(2, 1) = cos(2 * 10000**(-1/2))
    # = cos(0.02), where the pair index gives cos(2).
    table = sinusoidal_encoding([2.0], 4)[0]
    assert table[1] == pytest.approx(math.cos(2.0), abs=1e-15)
    assert table[1] != pytest.approx(math.cos(0.02), abs=1e-3)
    assert table[3] == pytest.approx(math.cos(0.02), abs=1e-15)  # the second pair's cosine


def test_frequencies_and_wavelengths_by_hand():
    np.testing.assert_allclose(frequencies(4), [1.0, 0.01], rtol=1e-15)
    np.testing.assert_allclose(frequencies(8, base=16.0), [1.0, 0.5, 0.25, 0.125], rtol=1e-15)
    lam = wavelengths(512)
    assert lam[0] == pytest.approx(2 * math.pi, rel=1e-15)
    assert lam[-1] == pytest.approx(2 * math.pi * 10000 ** (510 / 512), rel=1e-12)
    assert lam[-1] < 2 * math.pi * 10000
    ratios = lam[1:] / lam[:-1]
    np.testing.assert_allclose(ratios, 10000 ** (2 / 512), rtol=1e-12)


def test_concat_layout_is_a_column_permutation():
    d = 6
    interleaved = sinusoidal_encoding(7, d)
    concat = sinusoidal_encoding(7, d, layout="concat")
    perm = [0, 2, 4, 1, 3, 5]  # concat column j holds interleaved column perm[j]
    np.testing.assert_array_equal(concat, interleaved[:, perm])


def test_positions_count_and_list_agree():
    np.testing.assert_array_equal(sinusoidal_encoding(5, 8), sinusoidal_encoding([0, 1, 2, 3, 4], 8))
    np.testing.assert_array_equal(sinusoidal_encoding(np.int64(5), 8), sinusoidal_encoding(np.arange(5), 8))


def test_empty_and_edge_cases():
    assert sinusoidal_encoding(0, 4).shape == (0, 4)
    assert sinusoidal_encoding([], 4).shape == (0, 4)
    assert integer_positions(0).shape == (0,)
    np.testing.assert_array_equal(normalized_positions(5), [0.0, 0.25, 0.5, 0.75, 1.0])
    np.testing.assert_array_equal(normalized_positions(1), [0.0])
    assert normalized_positions(0).shape == (0,)
    np.testing.assert_array_equal(integer_positions(3), [0.0, 1.0, 2.0])
    assert integer_positions(3).dtype == np.float64


def test_float32_dtype_is_honoured_and_loses_precision_far_out():
    t = 54_321.0  # exactly representable in float32, so only the angle computation can err
    single = sinusoidal_encoding([t], 8, dtype=np.float32)[0]
    double = sinusoidal_encoding([t], 8)[0]
    assert single.dtype == np.float32
    omega_1 = 10000.0 ** (-2 / 8)  # 0.1
    reference = math.sin(t * omega_1)  # angle 5432.1 rad, computed in double precision
    assert double[2] == pytest.approx(reference, abs=1e-10)
    # In float32, 0.1 carries a relative error of 1.5e-8 (an angle error of 8e-5 rad here) and the
    # product is rounded to a spacing of 2**-11 ~ 5e-4, so the sine is off by far more than 1e-6.
    assert abs(float(single[2]) - reference) > 1e-6


def test_shift_matrix_explicit_blocks():
    phi = 0.7
    m = shift_matrix(phi, 4)
    w1 = 0.01
    expected = np.array(
        [
            [math.cos(phi), math.sin(phi), 0, 0],
            [-math.sin(phi), math.cos(phi), 0, 0],
            [0, 0, math.cos(w1 * phi), math.sin(w1 * phi)],
            [0, 0, -math.sin(w1 * phi), math.cos(w1 * phi)],
        ]
    )
    np.testing.assert_allclose(m, expected, rtol=0, atol=1e-15)


def test_shift_matrix_group_properties():
    a, b = 3.25, -11.5
    np.testing.assert_allclose(shift_matrix(a, 16) @ shift_matrix(b, 16), shift_matrix(a + b, 16), atol=1e-14)
    np.testing.assert_allclose(shift_matrix(-a, 16), shift_matrix(a, 16).T, atol=0)
    np.testing.assert_allclose(shift_matrix(0.0, 16), np.eye(16), atol=0)


def test_sine_only_columns_by_hand():
    table = sine_only_encoding(4, 3, base=1000.0)
    # column j has frequency 1000**(-j/3): 1, 0.1, 0.01
    expected = np.array([[math.sin(t), math.sin(0.1 * t), math.sin(0.01 * t)] for t in range(4)])
    np.testing.assert_allclose(table, expected, rtol=0, atol=1e-15)
    assert sine_only_encoding(100, 5).shape == (100, 5)  # odd width allowed: no pairs
