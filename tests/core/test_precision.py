"""Chapter 09 numerics: bfloat16 emulation, angles in low precision, colliding positions and
pairs that reach unseen angles.

Reference values are worked out by hand in the comments, or by a second method that does not
share code with the function under test (enumerating every value of a 16-bit format and picking
the nearest one, ties to even).
"""

import math

import numpy as np
import pytest

import posenc_helpers as ph
from posenc_helpers import (
    angle_errors,
    colliding_positions,
    rope_angles,
    rope_frequencies,
    round_to_bfloat16,
    round_to_precision,
    scaled_rope_frequencies,
    unseen_angle_pairs,
)

# Run by tests/core/test_bad_input.py, with every other module's cases.
BAD_INPUT_CASES = [
    # (call, exception, words the message must contain)
    (lambda: ph.round_to_bfloat16("abc"), TypeError, ["x"]),
    (lambda: ph.round_to_bfloat16([True, False]), TypeError, ["x", "booleans"]),
    (lambda: ph.round_to_bfloat16(np.array([1 + 2j])), TypeError, ["x", "real"]),
    (lambda: ph.round_to_precision([1.0], "float8"), ValueError, ["dtype", "'bfloat16'"]),
    (lambda: ph.round_to_precision([1.0], np.int32), ValueError, ["dtype", "int32"]),
    (lambda: ph.round_to_precision([1.0], 16), TypeError, ["dtype"]),
    (lambda: ph.round_to_precision([1.0], None), TypeError, ["dtype"]),
    (lambda: ph.round_to_precision("x", "float16"), TypeError, ["x"]),
    (lambda: ph.rope_angles(4, [1.0, -1.0], "float32"), ValueError, ["inv_freq", "> 0"]),
    (lambda: ph.rope_angles(4, [[1.0]], "float32"), ValueError, ["inv_freq", "1-D"]),
    (lambda: ph.rope_angles(4, [], "float32"), ValueError, ["inv_freq", "non-empty"]),
    (lambda: ph.rope_angles(4, [np.inf], "float32"), ValueError, ["inv_freq", "finite"]),
    (lambda: ph.rope_angles([0.0, np.nan], [1.0], "float32"), ValueError, ["positions", "finite"]),
    (lambda: ph.rope_angles(2.5, [1.0], "float32"), TypeError, ["positions"]),
    (lambda: ph.rope_angles(4, [1.0], "half"), ValueError, ["dtype", "'float16'"]),
    (lambda: ph.angle_errors(4, [1.0], np.complex64), ValueError, ["dtype", "complex64"]),
    (lambda: ph.angle_errors(-1, [1.0], "float16"), ValueError, ["positions", ">= 0"]),
    (lambda: ph.angle_errors(4, ["a"], "float16"), TypeError, ["inv_freq"]),
    (lambda: ph.colliding_positions(np.zeros((2, 2)), "float16"), ValueError, ["positions", "1-D"]),
    (lambda: ph.colliding_positions(10, "int8"), ValueError, ["dtype"]),
    (lambda: ph.colliding_positions(10, object()), TypeError, ["dtype"]),
    (lambda: ph.unseen_angle_pairs([1.0], [1.0, 2.0], 10, 20), ValueError, ["scaled_inv_freq", "shape"]),
    (lambda: ph.unseen_angle_pairs([1.0], [0.0], 10, 20), ValueError, ["scaled_inv_freq", "> 0"]),
    (lambda: ph.unseen_angle_pairs([1.0], [1.0], 0, 20), ValueError, ["original_max_len", ">= 1"]),
    (lambda: ph.unseen_angle_pairs([1.0], [1.0], 10, 2.5), TypeError, ["new_max_len", "integer"]),
    (lambda: ph.unseen_angle_pairs("a", [1.0], 10, 20), TypeError, ["inv_freq"]),
]


# --------------------------------------------------------------------------- bfloat16 emulation
def _all_bfloat16_values():
    """Every bfloat16 bit pattern as float32: the top 16 bits set, the low 16 bits zero."""
    return (np.arange(2**16, dtype=np.uint32) << np.uint32(16)).view(np.float32)


def _nearest_ties_to_even(x, grid_values, grid_bits):
    """Round each x to the nearest value of a sorted finite grid; ties go to the even bit pattern."""
    idx = np.clip(np.searchsorted(grid_values, x), 1, grid_values.size - 1)
    lo, hi = grid_values[idx - 1], grid_values[idx]
    d_lo, d_hi = x - lo, hi - x
    pick_hi = (d_hi < d_lo) | ((d_hi == d_lo) & (grid_bits[idx] % 2 == 0))
    return np.where(pick_hi, hi, lo)


def test_bfloat16_hand_worked_values():
    # Between 256 and 512 the spacing is 2**(8 - 7) = 2; 257 and 259 are ties.
    # 257: neighbours 256 (last bit 0) and 258 (last bit 1) -> 256.  259: 258 (odd), 260 (even) -> 260.
    np.testing.assert_array_equal(round_to_bfloat16([257, 258, 259]), [256, 258, 260])
    np.testing.assert_array_equal(round_to_bfloat16([-257.0, -259.0]), [-256, -260])
    # 1 + 2**-8 is halfway between 1 (even) and 1 + 2**-7 (odd): ties to even give 1.
    assert round_to_bfloat16(1 + 2**-8) == 1.0
    # Just above the tie it rounds up; 1 + 3 * 2**-8 is a tie between 1 + 2**-7 (odd) and 1 + 2**-6 (even).
    assert round_to_bfloat16(1 + 2**-8 + 2**-20) == 1 + 2**-7
    assert round_to_bfloat16(1 + 3 * 2**-8) == 1 + 2**-6
    out = round_to_bfloat16(np.arange(6).reshape(2, 3))
    assert out.shape == (2, 3) and out.dtype == np.float32


def test_bfloat16_spacing_is_two_between_256_and_512():
    values = _all_bfloat16_values()
    inside = np.sort(values[np.isfinite(values) & (values >= 256) & (values <= 512)])
    assert inside[0] == 256 and inside[-1] == 512
    np.testing.assert_array_equal(np.diff(inside), 2.0)
    # every integer up to 256 is a bfloat16 value, 257 is not
    ints = np.arange(257, dtype=np.float32)
    np.testing.assert_array_equal(round_to_bfloat16(ints), ints)
    assert round_to_bfloat16(257) != 257


def test_every_bfloat16_value_is_a_fixed_point():
    values = _all_bfloat16_values()
    finite = np.isfinite(values)
    np.testing.assert_array_equal(round_to_bfloat16(values[finite]), values[finite])
    np.testing.assert_array_equal(round_to_bfloat16([np.inf, -np.inf]), [np.inf, -np.inf])
    assert np.all(np.isnan(round_to_bfloat16(values[np.isnan(values)])))


def test_bfloat16_rounds_to_nearest_with_ties_to_even():
    values = _all_bfloat16_values()
    positive = np.isfinite(values) & (values > 0)
    grid = values[positive].astype(np.float64)
    bits = (np.arange(2**16, dtype=np.uint32))[positive]
    order = np.argsort(grid)
    grid, bits = grid[order], bits[order]
    rng = np.random.default_rng(0)
    x = np.exp(rng.uniform(np.log(1e-30), np.log(1e30), size=20000)).astype(np.float32)
    # include exact ties: midpoints between neighbouring bfloat16 values (exact in float32)
    ties = ((grid[1000:3000] + grid[1001:3001]) / 2).astype(np.float32)
    for sample in (x, ties):
        expected = _nearest_ties_to_even(sample.astype(np.float64), grid, bits)
        np.testing.assert_array_equal(round_to_bfloat16(sample), expected)


def test_bfloat16_nan_infinity_and_overflow():
    largest = (2 - 2**-7) * 2.0**127  # 0x7F7F0000
    assert round_to_bfloat16(largest) == np.float32(largest)
    assert round_to_bfloat16(np.finfo(np.float32).max) == np.inf  # beyond the midpoint to 2**128
    assert round_to_bfloat16(-3.4e38) == -np.inf
    assert round_to_bfloat16(1e39) == np.inf  # float64 beyond float32's range
    out = round_to_bfloat16([np.nan, -np.nan])
    assert np.all(np.isnan(out))
    assert not np.signbit(out[0]) and np.signbit(out[1])
    # a NaN whose payload lives only in the low bits must stay a NaN
    low_payload_nan = np.array([0x7F800001], dtype=np.uint32).view(np.float32)
    assert np.isnan(round_to_bfloat16(low_payload_nan))[0]


# --------------------------------------------------------------------------- other formats
def test_round_to_precision_float16_against_enumeration():
    values = np.arange(2**16, dtype=np.uint16).view(np.float16).astype(np.float64)
    bits = np.arange(2**16, dtype=np.uint16)
    positive = np.isfinite(values) & (values > 0)
    grid, gbits = values[positive], bits[positive]
    order = np.argsort(grid)
    grid, gbits = grid[order], gbits[order]
    rng = np.random.default_rng(1)
    x = np.exp(rng.uniform(np.log(1e-4), np.log(6.5e4), size=20000))
    ties = (grid[5000:7000] + grid[5001:7001]) / 2
    for sample in (x, ties):
        np.testing.assert_array_equal(round_to_precision(sample, "float16"), _nearest_ties_to_even(sample, grid, gbits))


def test_round_to_precision_limits_from_finfo():
    f16 = np.finfo(np.float16)
    exact_up_to = 2 ** (f16.nmant + 1)  # 11-bit significand: 2048
    assert exact_up_to == 2048
    ints = np.arange(exact_up_to + 1)
    np.testing.assert_array_equal(round_to_precision(ints, np.float16), ints)
    assert round_to_precision([exact_up_to + 1], "float16")[0] == exact_up_to
    assert f16.max == 65504
    # the midpoint between 65504 and the next step 65536 is 65520: ties go to "even" 65536 = inf
    np.testing.assert_array_equal(round_to_precision([65519, 65520, 70000], "float16"), [65504, np.inf, np.inf])
    assert round_to_precision([2**24 + 1], np.dtype("float32"))[0] == 2**24
    np.testing.assert_array_equal(round_to_precision([0.1, 1 / 3], "float64"), [0.1, 1 / 3])
    np.testing.assert_array_equal(round_to_precision([259.0], "bfloat16"), [260.0])
    assert round_to_precision([1.0], "float32").dtype == np.float64


# --------------------------------------------------------------------------- angles
def test_rope_angles_by_hand():
    # float64: the plain outer product
    np.testing.assert_array_equal(rope_angles([2.0, 3.0], [1.0, 0.5], "float64"), [[2.0, 1.0], [3.0, 1.5]])
    # bfloat16: 257 is stored as 256
    np.testing.assert_array_equal(rope_angles([256, 257, 258], [1.0], "bfloat16").ravel(), [256, 256, 258])
    # bfloat16(1/3) = 0x3EAB0000 = 171/512; 1000 * 171/512 = 333.984375, on the spacing-2 grid -> 334
    assert round_to_bfloat16(1 / 3) == 171 / 512
    assert rope_angles([1000], [1 / 3], "bfloat16")[0, 0] == 334.0
    # float16: 2049 -> 2048; 70000 overflows
    angles = rope_angles([2049, 70000], [1.0], "float16")
    assert angles[0, 0] == 2048 and angles[1, 0] == np.inf
    assert rope_angles(3, [1.0, 0.1], "float32").shape == (3, 2)


def test_rope_angles_products_are_correctly_rounded():
    # a second method: multiply in float32 directly (IEEE: one correctly rounded product)
    rng = np.random.default_rng(2)
    t = rng.integers(0, 2**20, size=500).astype(np.float32)
    theta = rope_frequencies(64).astype(np.float32)
    expected = (t[:, None] * theta[None, :]).astype(np.float64)
    np.testing.assert_array_equal(rope_angles(t, theta.astype(np.float64), "float32"), expected)
    t16 = rng.integers(0, 60000, size=500).astype(np.float16)
    theta16 = theta.astype(np.float16)
    with np.errstate(over="ignore"):
        expected16 = (t16[:, None] * theta16[None, :]).astype(np.float64)
    np.testing.assert_array_equal(
        rope_angles(t16.astype(np.float64), theta16.astype(np.float64), "float16"), expected16
    )


@pytest.mark.parametrize("dtype, bits", [("float16", 11), ("bfloat16", 8), ("float32", 24)])
def test_angle_errors_stay_under_three_roundings(dtype, bits):
    # t, theta and the product are each rounded once: relative error at most (1 + u)**3 - 1, u = 2**-p
    u = 2.0**-bits
    positions = np.arange(1, 60000, 7)
    theta = rope_frequencies(128)
    errors = angle_errors(positions, theta, dtype)
    exact = positions[:, None] * theta[None, :]
    assert np.all(errors <= ((1 + u) ** 3 - 1) * exact)
    assert errors.max() > 0.1 * u * exact.max()  # and they are not all zero


def test_angle_errors_float64_is_zero_and_overflow_is_infinite():
    assert not angle_errors(100, rope_frequencies(8), "float64").any()
    errors = angle_errors([65519, 65520], [1.0], np.float16)
    assert errors[0, 0] == 15 and errors[1, 0] == np.inf  # 65519 -> 65504


# --------------------------------------------------------------------------- collisions
def test_colliding_positions_by_hand():
    # bfloat16: 257 -> 256; 259, 261 -> 260 (ties to even); 258 stays alone
    np.testing.assert_array_equal(colliding_positions(np.arange(250, 262), "bfloat16"), [256, 257, 259, 260, 261])
    # float32: 2**24 + 1 -> 2**24
    np.testing.assert_array_equal(colliding_positions(np.arange(2**24 - 2, 2**24 + 3), "float32"), [2**24, 2**24 + 1])
    # overflow: 65520 and 70000 both become inf in float16
    np.testing.assert_array_equal(colliding_positions([65519, 65520, 70000], "float16"), [65520, 70000])
    assert colliding_positions([5, 5, 5], "float16").size == 0  # repeats are one position
    assert colliding_positions([], "bfloat16").size == 0
    assert colliding_positions(100000, "float64").size == 0


@pytest.mark.parametrize(
    "dtype, nmant",
    [
        ("float16", np.finfo(np.float16).nmant),
        ("bfloat16", np.finfo(np.float32).nmant - 16),
        ("float32", np.finfo(np.float32).nmant),
    ],
)
def test_first_collision_is_two_to_the_significand_bits(dtype, nmant):
    limit = 2 ** (nmant + 1)
    start = max(limit - 1000, 0)
    first = colliding_positions(np.arange(start, limit + 1000), dtype)[0]
    assert first == limit


# --------------------------------------------------------------------------- unseen angles
def test_unseen_angle_pairs_by_hand():
    theta = np.array([1.0, 0.001])
    # trained on 100 tokens: pair 0 covers 100 rad (> 2 pi), pair 1 only 0.1 rad
    np.testing.assert_array_equal(unseen_angle_pairs(theta, theta, 100, 400), [False, True])
    np.testing.assert_array_equal(unseen_angle_pairs(theta, theta / 4, 100, 400), [False, False])
    # the edge itself: largest angle 399 * theta' equal to 100 * theta is not beyond it
    np.testing.assert_array_equal(unseen_angle_pairs([0.001], [0.001 * 100 / 399], 100, 400), [False])
    # exactly one full turn in training counts as the whole circle
    np.testing.assert_array_equal(unseen_angle_pairs([2 * math.pi / 100], [1.0], 100, 10**6), [False])


def test_unseen_angle_pairs_for_the_three_methods():
    d, base, length, s = 128, 10000.0, 4096, 8.0
    theta = rope_frequencies(d, base=base)
    new = int(s * length)
    # plain RoPE: exactly the pairs whose wavelength is longer than the training context
    slow = np.array([2 * math.pi * base ** (2 * i / d) > length for i in range(d // 2)])
    np.testing.assert_array_equal(unseen_angle_pairs(theta, theta, length, new), slow)
    for method in ("linear", "yarn"):
        scaled, _ = scaled_rope_frequencies(d, base=base, method=method, factor=s, original_max_len=length)
        assert not unseen_angle_pairs(theta, scaled, length, new).any(), method
    # NTK: pair i is slowed by s**(2i/(d-2)) only, so every slow pair but the last overshoots:
    # (s L - 1) / (L s**(2i/(d-2))) > 1 for i < (d-2)/2, checked pair by pair here
    scaled, _ = scaled_rope_frequencies(d, base=base, method="ntk", factor=s)
    expected = [slow[i] and (new - 1) / (length * s ** (2 * i / (d - 2))) > 1 for i in range(d // 2)]
    np.testing.assert_array_equal(unseen_angle_pairs(theta, scaled, length, new), expected)
    assert sum(expected) == int(slow.sum()) - 1
