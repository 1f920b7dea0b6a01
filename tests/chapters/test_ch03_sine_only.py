"""Chapter 03 helpers: collision scan, figures, explorer and exercise checks.

Expected values are worked out by hand in the comments, not printed by the code under test.
"""

import re

import matplotlib.pyplot as plt
import numpy as np
import pytest

from posenc_helpers import collision_scan
from posenc_helpers.checks import CheckFailed, check_period_and_first_repeat, check_shift_residual
from posenc_helpers.plotting import plot_collision_scan, plot_phase_circle, plot_sine_columns
from posenc_helpers.widgets import SineCollisionExplorer


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# ---------------------------------------------------------------- collision_scan


def test_collision_scan_quarter_turn_by_hand():
    # omega = pi/2: sin takes 0, 1, 0, -1, 0, 1, 0, -1 at t = 0..7 and the slope cos
    # takes 1, 0, -1, 0, 1, 0, -1, 0. Against position 0 (value 0, rising) the
    # positions 2, 4, 6 collide; 4 is rising (same slope), 2 and 6 are falling.
    scan = collision_scan(np.pi / 2, 8, 0, 1e-9)
    assert scan["same"].tolist() == [4]
    assert scan["opposite"].tolist() == [2, 6]
    np.testing.assert_allclose(scan["gaps"], [0, 1, 0, 1, 0, 1, 0, 1], atol=1e-12)


def test_collision_scan_finds_the_pi_approximations():
    # 355/113 approximates pi to 2.7e-7, so 355 is almost 113 half turns (falling, sin ~ 0)
    # and 710 almost 113 whole turns (rising). 22 and 44 (22/7) miss by ~0.009 and 0.018.
    scan = collision_scan(1.0, 1000, 0, 1e-3)
    assert scan["same"].tolist() == [710]
    assert scan["opposite"].tolist() == [355]
    wider = collision_scan(1.0, 100, 0, 0.02)
    assert wider["opposite"].tolist() == [22] and wider["same"].tolist() == [44]


def test_collision_scan_never_lists_the_reference():
    scan = collision_scan(1e-4, 50, 10, 1.0)  # everything is close under a very slow wave
    listed = np.concatenate([scan["same"], scan["opposite"]])
    assert 10 not in listed and listed.size == 49


@pytest.mark.parametrize(
    "kwargs, exception, words",
    [
        ({"omega": 0.0}, ValueError, ["omega", "> 0"]),
        ({"omega": "1"}, TypeError, ["omega"]),
        ({"n_positions": 1}, ValueError, ["n_positions", ">= 2"]),
        ({"n_positions": 10.0}, TypeError, ["n_positions", "integer"]),
        ({"reference": 10}, ValueError, ["reference", "0 .. 9"]),
        ({"reference": -1}, ValueError, ["reference"]),
        ({"threshold": 0.0}, ValueError, ["threshold", "> 0"]),
        ({"threshold": np.nan}, ValueError, ["threshold"]),
    ],
)
def test_collision_scan_rejects_bad_input(kwargs, exception, words):
    arguments = {"omega": 1.0, "n_positions": 10, "reference": 0, "threshold": 0.1, **kwargs}
    for function in (collision_scan, plot_collision_scan):
        with pytest.raises(exception) as info:
            function(**arguments)
        for word in words:
            assert word in str(info.value)


# ---------------------------------------------------------------- figures


def test_plot_collision_scan_draws_and_counts():
    ax = plot_collision_scan(1.0, 1000, 0, 1e-3, title="scan")
    assert ax.get_title() == "scan" and ax.get_yscale() == "log"
    assert any(text.get_text() == "same slope: 1, opposite slope: 1" for text in ax.texts)
    assert ax.get_legend() is not None
    ax = plot_collision_scan(1.0, 50, 3, 1e-2, legend=False)
    assert ax.get_legend() is None


def test_plot_phase_circle_marks_highlights():
    ax = plot_phase_circle(np.arange(30), highlight=[10, 12], title="circle")
    assert ax.get_title() == "circle"
    assert sorted(t.get_text() for t in ax.texts) == ["t = 10", "t = 12"]
    with pytest.raises(ValueError, match="highlight"):
        plot_phase_circle(np.arange(5), highlight=[7])
    with pytest.raises(TypeError, match="highlight"):
        plot_phase_circle(np.arange(5), highlight=["a"])
    with pytest.raises(ValueError, match="positions"):
        plot_phase_circle(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="positions"):
        plot_phase_circle([0.0, np.inf])
    with pytest.raises(TypeError, match="positions"):
        plot_phase_circle("abc")
    with pytest.raises(ValueError, match="omega"):
        plot_phase_circle(np.arange(5), omega=-1.0)


def test_plot_sine_columns_one_panel_per_column():
    omegas = np.array([1.0, 0.1, 0.01])
    table = np.sin(np.arange(20)[:, None] * omegas)
    axes = plot_sine_columns(table, omegas)
    assert len(axes) == 3 and axes[-1].get_xlabel() == "position t (tokens)"
    assert "wavelength 62.83 tokens" in axes[1].get_title(loc="left")  # 2*pi / 0.1
    fig, given = plt.subplots(3, 1)
    assert plot_sine_columns(table, omegas, axes=given, linear_guide=False) == list(given)
    with pytest.raises(ValueError, match="omegas"):
        plot_sine_columns(table, omegas[:2])
    with pytest.raises(ValueError, match="omegas"):
        plot_sine_columns(table, [1.0, 0.0, 0.1])
    with pytest.raises(ValueError, match="table"):
        plot_sine_columns(np.ones(5), [1.0])
    with pytest.raises(ValueError, match="table"):
        plot_sine_columns(np.full((3, 1), np.nan), [1.0])
    with pytest.raises(ValueError, match="axes"):
        plot_sine_columns(table, omegas, axes=given[:2])


# ---------------------------------------------------------------- explorer


def test_explorer_reacts_to_controls():
    explorer = SineCollisionExplorer(n_positions=1000)
    first_png = explorer.image.value
    assert first_png[:8] == b"\x89PNG\r\n\x1a\n"
    explorer.set(threshold=1e-3)
    assert "Same slope: 710." in explorer.status.value
    assert "Opposite slope: 355." in explorer.status.value
    assert "<b>2</b>" in explorer.status.value
    slowest = explorer.controls["omega"].options[-1][1]
    np.testing.assert_allclose(slowest, 10000.0 ** (-4 / 5))
    explorer.set(omega=slowest, reference=500, threshold=1e-3)
    # one token moves the slowest column by about omega = 6.3e-4: only 499 and 501 are within 1e-3
    assert "Same slope: 499, 501." in explorer.status.value
    assert explorer.render_count == 4  # initial, threshold, omega, reference (threshold unchanged)
    assert explorer.image.value != first_png
    with pytest.raises(ValueError, match="unknown control"):
        explorer.set(speed=1)


@pytest.mark.parametrize(
    "kwargs, exception, word",
    [
        ({"n_positions": 1}, ValueError, "n_positions"),
        ({"n_positions": 6000}, ValueError, "n_positions"),
        ({"n_positions": 10.5}, TypeError, "n_positions"),
        ({"d_model": 0}, ValueError, "d_model"),
        ({"base": -1.0}, ValueError, "base"),
    ],
)
def test_explorer_rejects_bad_input(kwargs, exception, word):
    with pytest.raises(exception, match=word):
        SineCollisionExplorer(**kwargs)


# ---------------------------------------------------------------- check: period and first repeat

OMEGA_1 = 10000.0 ** (-1 / 5)  # column 1 of the 100 x 5 study; period 2*pi/omega = 39.64 tokens


def test_period_check_placeholders():
    assert not check_period_and_first_repeat(None, None, omega=1.0, tolerance=0.05)
    result = check_period_and_first_repeat(2 * np.pi, ..., omega=1.0, tolerance=0.05)
    assert not result and repr(result).startswith("Not attempted yet")


def test_period_check_right_answers():
    # omega = 1: 44 tokens are 7.0028 turns (22/7 ~ pi), 0.0177 rad past a whole turn;
    # 6, 19 and 25 miss by 0.283, 0.150 and 0.133 rad, and no other t < 44 comes closer than 0.13.
    assert check_period_and_first_repeat(2 * np.pi, 44, omega=1.0, tolerance=0.05)
    # omega = pi/2: period 4 tokens, and t = 4 is exactly one turn.
    assert check_period_and_first_repeat(4.0, 4, omega=np.pi / 2, tolerance=1e-6)
    # column 1: 40 tokens are 1.009 turns (0.057 rad off); 79 tokens are 1.9927 turns (0.046 rad off).
    result = check_period_and_first_repeat(2 * np.pi / OMEGA_1, np.int64(79), omega=OMEGA_1, tolerance=0.05)
    assert result and repr(result).startswith("Correct")


@pytest.mark.parametrize(
    "period, hint",
    [
        (1 / OMEGA_1, "full turn is 2π radians"),
        (np.pi / OMEGA_1, "half a turn"),
        (2 * np.pi * OMEGA_1, "2π·ω"),
        (360 / OMEGA_1, "radians"),
    ],
)
def test_period_check_known_mistakes(period, hint):
    with pytest.raises(CheckFailed, match=hint):
        check_period_and_first_repeat(period, 79, omega=OMEGA_1, tolerance=0.05)


def test_period_check_wrong_positions():
    period = 2 * np.pi / OMEGA_1
    with pytest.raises(CheckFailed, match="Rounding the period is not enough"):
        check_period_and_first_repeat(period, 40, omega=OMEGA_1, tolerance=0.05)
    with pytest.raises(CheckFailed, match="not the first"):
        check_period_and_first_repeat(2 * np.pi, 333, omega=1.0, tolerance=0.05)  # 53.0 turns, after 44
    with pytest.raises(CheckFailed, match="t >= 1"):
        check_period_and_first_repeat(2 * np.pi, 0, omega=1.0, tolerance=0.05)
    with pytest.raises(CheckFailed, match="whole number"):
        check_period_and_first_repeat(2 * np.pi, 44.5, omega=1.0, tolerance=0.05)
    with pytest.raises(CheckFailed, match="single"):
        check_period_and_first_repeat([1.0, 2.0], 44, omega=1.0, tolerance=0.05)
    with pytest.raises(CheckFailed, match="one position"):
        check_period_and_first_repeat(2 * np.pi, [44, 45], omega=1.0, tolerance=0.05)
    with pytest.raises(CheckFailed, match="a number, not a string"):
        check_period_and_first_repeat("six", 44, omega=1.0, tolerance=0.05)


def test_period_typed_to_two_decimals():
    # 2 pi / 10000**(-1/5) = 2 pi * 6.30957... = 39.6442...
    assert check_period_and_first_repeat(39.64, 79, omega=OMEGA_1, tolerance=0.05)
    assert check_period_and_first_repeat(39.644, 79, omega=OMEGA_1, tolerance=0.05)  # rounds to 39.64
    with pytest.raises(CheckFailed, match=r"period is not yet"):  # within 0.01 tokens, but not the rounding
        check_period_and_first_repeat(39.65, 79, omega=OMEGA_1, tolerance=0.05)
    for typed in (39.6, 40):  # right to the digits typed
        with pytest.raises(CheckFailed, match=r"period is close: it is right to the digits it has; give more digits"):
            check_period_and_first_repeat(typed, 79, omega=OMEGA_1, tolerance=0.05)
    for typed in (39.62, 39.67, 39.7):  # not right to their digits: the one message, no "close"
        with pytest.raises(CheckFailed, match=r"period is not yet"):
            check_period_and_first_repeat(typed, 79, omega=OMEGA_1, tolerance=0.05)
    with pytest.raises(CheckFailed, match="this is 1/ω"):
        check_period_and_first_repeat(6.31, 79, omega=OMEGA_1, tolerance=0.05)  # 1/omega = 6.3096 typed


def test_residual_typed_to_four_decimals():
    # the exercise's table: sin(t 10000**(-j/8)), 200 positions, offset 3; its residual is 0.37007
    table = np.sin(np.arange(200.0)[:, None] * 10000.0 ** (-np.arange(8) / 8))
    source, target = table[:-3], table[3:]
    q, _ = np.linalg.qr(source)
    residual = np.linalg.norm(target - q @ (q.T @ target)) / np.linalg.norm(target)
    assert f"{residual:.4f}" == "0.3701"
    assert check_shift_residual(0.3701, table, 3) and check_shift_residual(0.37007, table, 3)
    for typed in (0.4, 0.37):  # 0.37007 to one and two decimals: four are asked for
        with pytest.raises(CheckFailed, match=r"residual is close: it is right to the digits it has"):
            check_shift_residual(typed, table, 3)
    with pytest.raises(CheckFailed, match=r"residual is not yet"):
        check_shift_residual(0.3704, table, 3)
    # the fit in the other direction differs only in the fourth decimal: still named, not passed
    back_q, _ = np.linalg.qr(table[::-1][:-3])
    back_target = table[::-1][3:]
    backwards = np.linalg.norm(back_target - back_q @ (back_q.T @ back_target)) / np.linalg.norm(back_target)
    assert f"{backwards:.4f}" == "0.3709"
    with pytest.raises(CheckFailed, match="other direction"):
        check_shift_residual(0.3709, table, 3)


def test_period_check_never_reveals_the_answer():
    with pytest.raises(CheckFailed) as info:
        check_period_and_first_repeat(30.0, 79, omega=OMEGA_1, tolerance=0.05)
    assert "39.6" not in str(info.value)
    with pytest.raises(CheckFailed) as info:
        check_period_and_first_repeat(2 * np.pi / OMEGA_1, 119, omega=OMEGA_1, tolerance=0.05)
    assert "79" not in str(info.value)


@pytest.mark.parametrize(
    "kwargs, exception, word",
    [
        ({"omega": 0.0}, ValueError, "omega"),
        ({"omega": "1"}, TypeError, "omega"),
        ({"tolerance": 0.0}, ValueError, "tolerance"),
        ({"tolerance": 4.0}, ValueError, "tolerance"),
    ],
)
def test_period_check_rejects_bad_settings(kwargs, exception, word):
    arguments = {"omega": 1.0, "tolerance": 0.05, **kwargs}
    with pytest.raises(exception, match=word):
        check_period_and_first_repeat(1.0, 3, **arguments)


# ---------------------------------------------------------------- check: shift residual

# One column [1, 2, 4, 7], offset 1: source s = [1, 2, 4], target g = [2, 4, 7].
# Best scalar m = s.g / s.s = 38/21; |m s - g|^2 = |g|^2 - (s.g)^2 / s.s = 69 - 1444/21 = 5/21.
RAMP = np.array([[1.0], [2.0], [4.0], [7.0]])
RAMP_RELATIVE = np.sqrt(5 / 21) / np.sqrt(69)
RAMP_ABSOLUTE = np.sqrt(5 / 21)
RAMP_UNFITTED = np.sqrt(1 + 4 + 9) / np.sqrt(69)  # |g - s| / |g|


def test_shift_residual_right_answers():
    assert not check_shift_residual(None, RAMP, 1)
    assert check_shift_residual(RAMP_RELATIVE, RAMP, 1)
    assert check_shift_residual(np.array([RAMP_RELATIVE]), RAMP, 1)
    # [sin t, cos t] is rotated exactly: the residual is 0.
    t = np.arange(20.0)
    assert check_shift_residual(0.0, np.column_stack([np.sin(t), np.cos(t)]), 3)


@pytest.mark.parametrize(
    "answer, hint",
    [
        (RAMP_ABSOLUTE, "absolute residual"),
        (RAMP_RELATIVE**2, "squared"),
        (RAMP_UNFITTED, "M = identity"),
    ],
)
def test_shift_residual_known_mistakes(answer, hint):
    with pytest.raises(CheckFailed, match=hint):
        check_shift_residual(answer, RAMP, 1)


def test_shift_residual_backwards_fit_is_recognised():
    t = np.arange(40.0)
    table = np.sin(t[:, None] * np.array([1.0, 0.3, 0.05]))
    source, target = table[3:], table[:-3]  # the wrong direction: PE(t + 3) -> PE(t)
    solution, *_ = np.linalg.lstsq(source, target, rcond=None)
    backwards = np.linalg.norm(source @ solution - target) / np.linalg.norm(target)
    with pytest.raises(CheckFailed, match="other direction"):
        check_shift_residual(backwards, table, 3)


def test_shift_residual_wrong_shapes_and_signs():
    with pytest.raises(CheckFailed, match="negative"):
        check_shift_residual(-0.1, RAMP, 1)
    with pytest.raises(CheckFailed, match="single number"):
        check_shift_residual([0.1, 0.2], RAMP, 1)
    with pytest.raises(CheckFailed) as info:
        check_shift_residual(0.5, RAMP, 1)
    numbers = {float(x) for x in re.findall(r"\d+\.\d+", str(info.value))}
    assert not any(abs(x - RAMP_RELATIVE) < 1e-3 for x in numbers)


@pytest.mark.parametrize(
    "table, offset, exception, word",
    [
        (np.ones(4), 1, ValueError, "table"),
        ([[0.0], [np.nan]], 1, ValueError, "table"),
        ([["a"], ["b"]], 1, TypeError, "table"),
        (RAMP, 0, ValueError, "offset"),
        (RAMP, 4, ValueError, "offset"),
        (RAMP, 1.0, TypeError, "offset"),
    ],
)
def test_shift_residual_rejects_bad_settings(table, offset, exception, word):
    with pytest.raises(exception, match=word):
        check_shift_residual(0.1, table, offset)


def test_shift_residual_names_lstsq_own_residual_output():
    """np.linalg.lstsq returns, as its second output, the sum of squared residuals of each column."""
    t = np.arange(60.0)
    table = np.sin(t[:, None] * np.array([1.0, 0.3, 0.05, 0.011]))
    source, target = table[:-3], table[3:]
    _, per_column, rank, _ = np.linalg.lstsq(source, target, rcond=None)
    assert rank == 4 and per_column.shape == (4,)
    target_norm = np.linalg.norm(target)
    # the right way to use it: the square root of the total, relative to the target rows
    assert check_shift_residual(np.sqrt(per_column.sum()) / target_norm, table, 3)
    with pytest.raises(CheckFailed, match="shape \\(4,\\). It looks like np.linalg.lstsq's second output"):
        check_shift_residual(per_column, table, 3)
    with pytest.raises(CheckFailed, match="sum of squared residuals, as lstsq reports it"):
        check_shift_residual(per_column.sum(), table, 3)
    with pytest.raises(CheckFailed, match="divided lstsq's squared residuals by the target norm"):
        check_shift_residual(per_column.sum() / target_norm, table, 3)
    with pytest.raises(CheckFailed, match="added up the residual norms of the columns"):
        check_shift_residual(np.sqrt(per_column).sum() / target_norm, table, 3)


def _first_repeat_by_loop(omega, tolerance):
    t = 1
    while abs(omega * t / (2 * np.pi) - round(omega * t / (2 * np.pi))) * 2 * np.pi >= tolerance:
        t += 1
    return t


def test_first_repeat_as_a_function_is_tried_on_other_frequencies():
    period = 2 * np.pi / OMEGA_1
    result = check_period_and_first_repeat(period, _first_repeat_by_loop, omega=OMEGA_1, tolerance=0.05)
    assert result and "your function finds it" in repr(result)
    # right for the exercise (79, see above) and nowhere else: omega = 1 first repeats at 44
    with pytest.raises(CheckFailed, match=r"first_repeat\(omega=1, tolerance=0.05\) returns 79") as info:
        check_period_and_first_repeat(period, lambda omega, tolerance: 79, omega=OMEGA_1, tolerance=0.05)
    assert "44" not in str(info.value)
    with pytest.raises(CheckFailed, match="raised ZeroDivisionError"):
        check_period_and_first_repeat(period, lambda omega, tolerance: 1 // 0, omega=OMEGA_1, tolerance=0.05)
    with pytest.raises(CheckFailed, match="whole number"):
        check_period_and_first_repeat(period, lambda omega, tolerance: 79.5, omega=OMEGA_1, tolerance=0.05)


def test_first_repeat_cannot_be_found_by_looping_over_the_check():
    period = 2 * np.pi / OMEGA_1
    for guess in range(1, 200):
        with pytest.raises(CheckFailed):
            check_period_and_first_repeat(period, lambda omega, tolerance, g=guess: g, omega=OMEGA_1, tolerance=0.05)
