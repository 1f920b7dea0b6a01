"""Chapter 05 helpers: exercise checks, circle figures and the unit-circle explorer.

Expected values are worked out by hand in the comments (angles chosen so the
sines and cosines are 0 or +-1), or by a second method (applying the matrix to
encoding rows), never taken from the code under test.
"""

import re

import matplotlib.pyplot as plt
import numpy as np
import pytest

from posenc_helpers import shift_matrix, sinusoidal_encoding
from posenc_helpers.checks import (
    CheckFailed,
    check_concat_shift_matrix,
    check_shift_matrix,
    check_swapped_rotation_block,
)


def _numbers(text):
    return {round(float(m), 6) for m in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", text)}


# --------------------------------------------------------------------------- checks
# omega = 0.5, phi = pi: the pair turns by pi/2. [cos a, sin a] -> [cos(a + pi/2), sin(a + pi/2)]
# = [-sin a, cos a], so B = [[0, -1], [1, 0]].
SWAPPED_RIGHT = np.array([[0.0, -1.0], [1.0, 0.0]])


def test_swapped_block_placeholder_right_and_wrong():
    for placeholder in (None, ...):
        result = check_swapped_rotation_block(placeholder, omega=0.5, offset=np.pi)
        assert not result and repr(result).startswith("Not attempted yet")
    result = check_swapped_rotation_block(SWAPPED_RIGHT, omega=0.5, offset=np.pi)
    assert result and repr(result).startswith("Correct")
    # The paper's [sin, cos] block at pi/2 is [[0, 1], [-1, 0]].
    with pytest.raises(CheckFailed, match=r"paper's order \[sin, cos\]"):
        check_swapped_rotation_block([[0.0, 1.0], [-1.0, 0.0]], omega=0.5, offset=np.pi)
    # omega = 0.5, phi = 1: right angle 0.5 rad; using phi = 1 rad as the angle is a known slip.
    slip = np.array([[np.cos(1.0), -np.sin(1.0)], [np.sin(1.0), np.cos(1.0)]])
    with pytest.raises(CheckFailed, match="not φ"):
        check_swapped_rotation_block(slip, omega=0.5, offset=1.0)
    with pytest.raises(CheckFailed, match=r"shape \(2, 2\)"):
        check_swapped_rotation_block(np.eye(3), omega=0.5, offset=1.0)
    with pytest.raises(CheckFailed, match="row 0, column 0"):
        check_swapped_rotation_block(np.eye(2), omega=0.5, offset=np.pi)


def test_swapped_block_works_on_encoding_rows():
    # Second method: the right block maps [cos, sin] at t to [cos, sin] at t + phi.
    omega, phi = 0.3, -4.25
    c, s = np.cos(omega * phi), np.sin(omega * phi)
    block = np.array([[c, -s], [s, c]])
    t = np.linspace(-20.0, 20.0, 9)
    pairs = np.stack([np.cos(omega * t), np.sin(omega * t)])
    shifted = np.stack([np.cos(omega * (t + phi)), np.sin(omega * (t + phi))])
    np.testing.assert_allclose(block @ pairs, shifted, atol=1e-12)
    assert check_swapped_rotation_block(block, omega=omega, offset=phi)


# d = 4, base = 4: omega = [1, 4**(-1/2)] = [1, 0.5]. phi = pi turns pair 0 by pi and pair 1
# by pi/2. Concat columns are [sin0, sin1, cos0, cos1].
#   sin0' = -sin0, cos0' = -cos0               (turn by pi)
#   sin1' = cos1,  cos1' = -sin1               (turn by pi/2: sin' = c sin + s cos, cos' = -s sin + c cos)
CONCAT_RIGHT = np.array(
    [
        [-1.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
        [0.0, 0.0, -1.0, 0.0],
        [0.0, -1.0, 0.0, 0.0],
    ]
)


def test_concat_shift_matrix_hand_worked():
    assert not check_concat_shift_matrix(None, offset=np.pi, d_model=4, base=4.0)
    assert check_concat_shift_matrix(CONCAT_RIGHT, offset=np.pi, d_model=4, base=4.0)
    # Second method: it shifts the concat table.
    t = np.array([-3.5, 0.0, 2.0, 11.25])
    table = sinusoidal_encoding(t, 4, base=4.0, layout="concat")
    target = sinusoidal_encoding(t + np.pi, 4, base=4.0, layout="concat")
    np.testing.assert_allclose(table @ CONCAT_RIGHT.T, target, atol=1e-12)


def test_concat_shift_matrix_wrong_answers():
    # The interleaved M(pi) at d=4, base=4: blocks [[-1, 0], [0, -1]] and [[0, 1], [-1, 0]].
    interleaved = np.array(
        [
            [-1.0, 0.0, 0.0, 0.0],
            [0.0, -1.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
            [0.0, 0.0, -1.0, 0.0],
        ]
    )
    with pytest.raises(CheckFailed, match="interleaved layout"):
        check_concat_shift_matrix(interleaved, offset=np.pi, d_model=4, base=4.0)
    with pytest.raises(CheckFailed, match="shifts by -φ"):
        check_concat_shift_matrix(CONCAT_RIGHT.T, offset=np.pi, d_model=4, base=4.0)
    with pytest.raises(CheckFailed, match=r"shape \(4, 4\)"):
        check_concat_shift_matrix(np.eye(6), offset=np.pi, d_model=4, base=4.0)
    wrong = CONCAT_RIGHT.copy()
    wrong[2, 3] = 0.5
    with pytest.raises(CheckFailed, match="row 2, column 3") as info:
        check_concat_shift_matrix(wrong, offset=np.pi, d_model=4, base=4.0)
    assert "1 of 16 entries differ" in str(info.value)


def test_shift_matrix_check_names_the_shift_performed():
    # Second method for the right answer: three backward steps of M(1)^T shift rows back by 3.
    m1 = shift_matrix(1.0, 8)
    answer = np.linalg.matrix_power(m1.T, 3)
    table = sinusoidal_encoding(np.arange(3.0, 12.0), 8)
    np.testing.assert_allclose(table @ answer.T, sinusoidal_encoding(np.arange(0.0, 9.0), 8), atol=1e-12)
    assert not check_shift_matrix(None, offset=-3, d_model=8)
    assert check_shift_matrix(answer, offset=-3, d_model=8)
    with pytest.raises(CheckFailed, match=r"your matrix is M\(3\)"):
        check_shift_matrix(np.linalg.matrix_power(m1, 3), offset=-3, d_model=8)
    with pytest.raises(CheckFailed, match=r"your matrix is M\(-1\)"):
        check_shift_matrix(m1.T, offset=-3, d_model=8)
    with pytest.raises(CheckFailed, match="entries differ"):
        check_shift_matrix(np.eye(8) * 2.0, offset=-3, d_model=8)
    with pytest.raises(CheckFailed, match="non-finite"):
        check_shift_matrix(np.full((8, 8), np.nan), offset=-3, d_model=8)


def test_check_messages_never_reveal_the_expected_matrix():
    expected = shift_matrix(-2.5, 6)
    answer = expected.copy()
    answer[3, 2] += 0.3
    with pytest.raises(CheckFailed) as info:
        check_shift_matrix(answer, offset=-2.5, d_model=6)
    leaked = _numbers(str(info.value)) & {round(float(v), 6) for v in expected.ravel() if v not in (0.0, 1.0)}
    assert not leaked
    answer = np.array([[0.1, 0.2], [0.3, 0.4]])
    with pytest.raises(CheckFailed) as info:
        check_swapped_rotation_block(answer, omega=0.3, offset=2.0)
    right = {round(v, 6) for v in (np.cos(0.6), np.sin(0.6), -np.sin(0.6))}
    assert not _numbers(str(info.value)) & right


@pytest.mark.parametrize(
    "call, exception, words",
    [
        (lambda: check_swapped_rotation_block(None, omega=0.0, offset=1.0), ValueError, ["omega", "> 0"]),
        (lambda: check_swapped_rotation_block(None, omega="1", offset=1.0), TypeError, ["omega"]),
        (lambda: check_swapped_rotation_block(None, omega=1.0, offset=np.inf), ValueError, ["offset", "finite"]),
        (lambda: check_concat_shift_matrix(None, offset=1.0, d_model=5), ValueError, ["d_model", "even"]),
        (lambda: check_concat_shift_matrix(None, offset="1", d_model=4), TypeError, ["offset"]),
        (lambda: check_concat_shift_matrix(None, offset=1.0, d_model=4, base=-1.0), ValueError, ["base"]),
        (lambda: check_shift_matrix(None, offset=1.0, d_model=4.0), TypeError, ["d_model"]),
        (lambda: check_shift_matrix(None, offset=np.nan, d_model=4), ValueError, ["offset"]),
        (lambda: check_shift_matrix(None, offset=1.0, d_model=4, base=0), ValueError, ["base"]),
    ],
)
def test_checks_reject_bad_arguments(call, exception, words):
    with pytest.raises(exception) as info:
        call()
    for word in words:
        assert word in str(info.value)


# --------------------------------------------------------------------------- plotting
def test_pair_on_circle_draws_points_and_shift():
    from posenc_helpers.plotting import plot_pair_on_circle

    # omega = pi/2, positions 0 and 1: points (0, 1) (top) and (1, 0) (right, clockwise).
    ax = plot_pair_on_circle(np.pi / 2, [0, 1], offset=1.0, title="quarter turns", pair_index=2)
    assert ax.get_title() == "quarter turns"
    assert "PE$(t, 4)$" in ax.get_xlabel() and "PE$(t, 5)$" in ax.get_ylabel()
    assert [t.get_text() for t in ax.texts] == ["0", "1"]
    points = [line for line in ax.lines if line.get_marker() == "o"]
    filled = [line for line in points if line.get_markerfacecolor() != "white"]
    hollow = [line for line in points if line.get_markerfacecolor() == "white"]
    np.testing.assert_allclose(filled[0].get_xydata(), [[0.0, 1.0], [1.0, 0.0]], atol=1e-12)
    # Shifted by one token: the points at 1 (right) and 2 (bottom).
    np.testing.assert_allclose(np.vstack([h.get_xydata() for h in hollow]), [[1.0, 0.0], [0.0, -1.0]], atol=1e-12)
    plt.close("all")


def test_rotation_frames_layout():
    from posenc_helpers.plotting import plot_rotation_frames

    fig, axes = plot_rotation_frames([1.0, 0.1], [0.0, 2.0, 4.5], 3.0, row_labels=["pair 0", "pair 1"])
    assert axes.shape == (2, 3)
    assert [ax.get_title() for ax in axes[0]] == ["t = 0", "t = 2", "t = 4.5"]
    assert axes[1, 0].get_ylabel() == "pair 1"
    # Every panel of a row states the same turn: 3 rad for omega = 1, 0.3 rad for omega = 0.1.
    assert {ax.texts[0].get_text() for ax in axes[0]} == {"turn 3.00 rad"}
    assert {ax.texts[0].get_text() for ax in axes[1]} == {"turn 0.30 rad"}
    plt.close(fig)


def test_position_scores_heatmap():
    from posenc_helpers.plotting import plot_position_scores

    scores = np.array([[1.0, -2.0], [0.5, 1.0]])
    ax = plot_position_scores(scores, title="s")
    image = ax.images[-1]
    assert image.get_clim() == (-2.0, 2.0)
    assert ax.get_title() == "s" and "key position" in ax.get_xlabel()
    ax = plot_position_scores(scores, limit=4.0)
    assert ax.images[-1].get_clim() == (-4.0, 4.0)
    plt.close("all")


@pytest.mark.parametrize(
    "call, exception, words",
    [
        ("plot_pair_on_circle(0.0, [0, 1])", ValueError, ["omega", "> 0"]),
        ("plot_pair_on_circle('1', [0, 1])", TypeError, ["omega"]),
        ("plot_pair_on_circle(1.0, [])", ValueError, ["positions", "at least one"]),
        ("plot_pair_on_circle(1.0, [[0, 1]])", ValueError, ["positions", "1-D"]),
        ("plot_pair_on_circle(1.0, [0, 1], offset=np.nan)", ValueError, ["offset", "finite"]),
        ("plot_pair_on_circle(1.0, [0, 1], pair_index=-1)", ValueError, ["pair_index"]),
        ("plot_pair_on_circle(1.0, [0, 1], pair_index=1.5)", TypeError, ["pair_index"]),
        ("plot_rotation_frames([[1.0]], [0], 1.0)", ValueError, ["omegas", "1-D"]),
        ("plot_rotation_frames([], [0], 1.0)", ValueError, ["omegas"]),
        ("plot_rotation_frames([1.0, -0.1], [0], 1.0)", ValueError, ["omegas", "> 0"]),
        ("plot_rotation_frames([1.0, np.inf], [0], 1.0)", ValueError, ["omegas", "finite"]),
        ("plot_rotation_frames(['a'], [0], 1.0)", TypeError, ["omegas"]),
        ("plot_rotation_frames([1.0], [], 1.0)", ValueError, ["positions"]),
        ("plot_rotation_frames([1.0], [0], '1')", TypeError, ["offset"]),
        ("plot_rotation_frames([1.0], [0], 1.0, row_labels=['a', 'b'])", ValueError, ["row_labels"]),
        ("plot_position_scores(np.ones((2, 3)))", ValueError, ["scores", "square"]),
        ("plot_position_scores(np.ones(3))", ValueError, ["scores", "square"]),
        ("plot_position_scores([[1.0, np.nan], [0.0, 1.0]])", ValueError, ["scores", "finite"]),
        ("plot_position_scores([['a']])", TypeError, ["scores"]),
        ("plot_position_scores(np.eye(2), limit=0.0)", ValueError, ["limit", "> 0"]),
    ],
)
def test_plotting_rejects_bad_input(call, exception, words):
    from posenc_helpers import plotting

    with pytest.raises(exception) as info:
        eval(call, {"np": np, **{name: getattr(plotting, name) for name in plotting.__all__}})
    for word in words:
        assert word in str(info.value)
    plt.close("all")


# --------------------------------------------------------------------------- explorer
def test_unit_circle_explorer_updates_artists_in_place():
    from posenc_helpers.widgets import UnitCircleExplorer

    explorer = UnitCircleExplorer()
    lines_before = list(explorer.ax_circle.lines) + list(explorer.ax_waves.lines)
    axes_before = list(explorer.figure.axes)
    first_png = explorer.image.value
    # d = 8: omega_1 = 10000**(-2/8) = 0.1. Pair 1 at t = 10: angle 1 rad; phi = 3 adds 0.3 rad.
    explorer.set(k=1, t=10.0, phi=3.0)
    assert explorer.figure.axes == axes_before
    assert list(explorer.ax_circle.lines) + list(explorer.ax_waves.lines) == lines_before
    np.testing.assert_allclose(explorer.point.get_xydata(), [[np.sin(1.0), np.cos(1.0)]], atol=1e-12)
    np.testing.assert_allclose(explorer.point_shifted.get_xydata(), [[np.sin(1.3), np.cos(1.3)]], atol=1e-12)
    assert np.isclose(explorer.rotation_angle, 0.3)
    assert explorer.shift_error < 1e-12
    # Integer positions passed so far: 0 .. 10, eleven faint dots.
    assert explorer.trail.get_offsets().shape == (11, 2)
    assert "PE(13)" in explorer.status.value and "ω<sub>k</sub> = 0.1 rad/token" in explorer.status.value
    assert explorer.render_count == 4  # initial draw plus one per changed control
    assert explorer.image.value != first_png
    explorer.set(phi=-3.0)
    assert np.isclose(explorer.rotation_angle, -0.3) and "PE(7)" in explorer.status.value
    plt.close("all")


@pytest.mark.parametrize(
    "kwargs, exception, word",
    [
        ({"d_model": 7}, ValueError, "d_model"),
        ({"d_model": 8.0}, TypeError, "d_model"),
        ({"base": "e"}, TypeError, "base"),
        ({"max_position": 0.0}, ValueError, "max_position"),
        ({"max_offset": -1.0}, ValueError, "max_offset"),
    ],
)
def test_unit_circle_explorer_rejects_bad_arguments(kwargs, exception, word):
    from posenc_helpers.widgets import UnitCircleExplorer

    with pytest.raises(exception, match=word):
        UnitCircleExplorer(**kwargs)
