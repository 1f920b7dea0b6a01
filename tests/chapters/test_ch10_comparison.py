"""Chapter 10 helpers: the exercise checks, the figures and the explorer.

The checks: right answers pass, placeholders are not failures, the typical wrong answers get a
hint that names the mistake, and no message reveals the expected values. The figures and the
offset-head explorer: what they draw and report, and what they reject.

Expected values are computed here with the math module and plain loops, independently of the
package.
"""

import math
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest

import posenc_helpers as ph
from posenc_helpers.checks import CheckFailed, check_alibi_weight_factor, check_offset_keys

PHI, D, N = 5, 8, 12
OMEGA = [10000.0 ** (-2 * k / D) for k in range(D // 2)]


def pe_row(t, layout="interleaved"):
    sines = [math.sin(w * t) for w in OMEGA]
    cosines = [math.cos(w * t) for w in OMEGA]
    if layout == "concat":
        return sines + cosines
    return [v for pair in zip(sines, cosines, strict=True) for v in pair]


def keys_shifted_by(shift, layout="interleaved"):
    return np.array([pe_row(j + shift, layout) for j in range(N)])


EXPECTED_KEYS = keys_shifted_by(PHI)


def rotation(phi):
    """M(phi) built entry by entry: 2x2 blocks [[c, s], [-s, c]] with angle omega_k * phi."""
    m = np.zeros((D, D))
    for k, w in enumerate(OMEGA):
        c, s = math.cos(w * phi), math.sin(w * phi)
        m[2 * k, 2 * k], m[2 * k, 2 * k + 1] = c, s
        m[2 * k + 1, 2 * k], m[2 * k + 1, 2 * k + 1] = -s, c
    return m


PE = keys_shifted_by(0)


def _assert_hides(message, expected):
    formatted = {f"{value:.6g}" for value in np.ravel(expected)}
    shown = set(re.findall(r"-?\d+\.\d+(?:e-?\d+)?", message))
    leaked = {text for text in formatted if "." in text} & shown
    assert not leaked, f"message reveals expected values {leaked}: {message}"


def _fails(call, expected, *words):
    with pytest.raises(CheckFailed) as info:
        call()
    message = str(info.value)
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"
    _assert_hides(message, expected)
    return message


# --------------------------------------------------------------------------- offset keys
def test_offset_keys_placeholders():
    for placeholder in (None, ...):
        result = check_offset_keys(placeholder, offset=PHI, d_model=D, seq_len=N)
        assert not result and result.status == "not attempted"
        assert repr(result).startswith("Not attempted yet")


def test_offset_keys_right_answers():
    result = check_offset_keys(EXPECTED_KEYS, offset=PHI, d_model=D, seq_len=N)
    assert result and repr(result).startswith("Correct")
    assert check_offset_keys(PE @ rotation(PHI).T, offset=PHI, d_model=D, seq_len=N)
    assert check_offset_keys(keys_shifted_by(0), offset=0, d_model=D, seq_len=N)


def test_offset_keys_wrong_sign_and_untransposed_matrix():
    for wrong in (PE @ rotation(-PHI).T, PE @ rotation(PHI)):
        _fails(
            lambda: check_offset_keys(wrong, offset=PHI, d_model=D, seq_len=N),
            EXPECTED_KEYS,
            "wrong way",
            "PE(j - 5)",
            "PE @ M(φ).T",
        )


def test_offset_keys_off_by_one():
    for shift in (PHI + 1, PHI - 1):
        _fails(
            lambda: check_offset_keys(keys_shifted_by(shift), offset=PHI, d_model=D, seq_len=N),
            EXPECTED_KEYS,
            "one token off",
            f"PE(j + {shift})",
        )
    # positions counted from 1 instead of 0
    from_one = np.array([pe_row(j + 1) for j in range(N)]) @ rotation(PHI).T
    _fails(lambda: check_offset_keys(from_one, offset=PHI, d_model=D, seq_len=N), EXPECTED_KEYS, "one token off")


def test_offset_keys_no_shift_other_shift_and_layout():
    _fails(lambda: check_offset_keys(PE, offset=PHI, d_model=D, seq_len=N), EXPECTED_KEYS, "PE(j) itself")
    _fails(
        lambda: check_offset_keys(keys_shifted_by(2 * PHI), offset=PHI, d_model=D, seq_len=N),
        EXPECTED_KEYS,
        "PE(j + 10)",
        "M(10)",
    )
    _fails(
        lambda: check_offset_keys(keys_shifted_by(PHI, "concat"), offset=PHI, d_model=D, seq_len=N),
        EXPECTED_KEYS,
        "concat",
    )


def test_offset_keys_shape_and_transposed_array():
    _fails(
        lambda: check_offset_keys(EXPECTED_KEYS.T, offset=PHI, d_model=D, seq_len=N),
        EXPECTED_KEYS,
        "transposed",
        "(12, 8)",
    )
    _fails(
        lambda: check_offset_keys(EXPECTED_KEYS[:-1], offset=PHI, d_model=D, seq_len=N),
        EXPECTED_KEYS,
        "shape",
        "(11, 8)",
    )
    _fails(lambda: check_offset_keys("keys", offset=PHI, d_model=D, seq_len=N), EXPECTED_KEYS, "array")


def test_offset_keys_other_mistakes_point_at_an_entry():
    wrong = EXPECTED_KEYS.copy()
    wrong[3, 2] = 0.123456
    message = _fails(
        lambda: check_offset_keys(wrong, offset=PHI, d_model=D, seq_len=N),
        EXPECTED_KEYS,
        "key position j 3, dimension 2",
        "0.123456",
    )
    assert "1 of 96" in message


def test_offset_keys_validates_its_arguments():
    with pytest.raises(ValueError, match="offset"):
        check_offset_keys(None, offset=-1, d_model=D, seq_len=N)
    with pytest.raises(ValueError, match="d_model"):
        check_offset_keys(None, offset=1, d_model=7, seq_len=N)
    with pytest.raises(ValueError, match="seq_len"):
        check_offset_keys(None, offset=1, d_model=D, seq_len=0)


# --------------------------------------------------------------------------- ALiBi weight factor
SLOPES_8 = [2.0 ** (-h) for h in range(1, 9)]  # 2**(-8h/8)
EXPECTED_FACTORS = np.array([[math.exp(-m * t) for m in SLOPES_8] for t in range(40)])


def loop_factor(positions, seq_len):
    return np.array([[math.exp(-m * t) for m in SLOPES_8] for t in positions])


def test_alibi_factor_placeholders():
    for placeholder in (None, ...):
        result = check_alibi_weight_factor(placeholder, n_heads=8)
        assert not result and result.status == "not attempted"


def test_alibi_factor_right_answer():
    result = check_alibi_weight_factor(loop_factor, n_heads=8)
    assert result and repr(result).startswith("Correct")


@pytest.mark.parametrize(
    "wrong, words",
    [
        (lambda p, n: np.array([[math.exp(m * t) for m in SLOPES_8] for t in p]), ["grow", "penalty"]),
        (lambda p, n: np.array([[-m * t for m in SLOPES_8] for t in p]), ["bias -m_h t itself"]),
        (lambda p, n: np.array([[math.exp(-m * t) for m in SLOPES_8[::-1]] for t in p]), ["reverse order"]),
        (lambda p, n: np.array([[math.exp(-t / m) for m in SLOPES_8] for t in p]), ["divided by the slope"]),
        (lambda p, n: loop_factor(p, n).T, ["transposed", "(40, 8)"]),
        (lambda p, n: loop_factor(p, n)[:, :4], ["shape", "(40, 4)"]),
    ],
)
def test_alibi_factor_typical_mistakes(wrong, words):
    _fails(lambda: check_alibi_weight_factor(wrong, n_heads=8), EXPECTED_FACTORS, *words)


def test_alibi_factor_not_a_function_or_failing():
    _fails(lambda: check_alibi_weight_factor(np.ones((40, 8)), n_heads=8), EXPECTED_FACTORS, "function")

    def broken(positions, seq_len):
        raise KeyError("oops")

    _fails(lambda: check_alibi_weight_factor(broken, n_heads=8), EXPECTED_FACTORS, "raised KeyError")


def test_alibi_factor_other_mistake_points_at_an_entry():
    def almost(positions, seq_len):
        out = loop_factor(positions, seq_len)
        out[7, 2] = 0.5
        return out

    _fails(lambda: check_alibi_weight_factor(almost, n_heads=8), EXPECTED_FACTORS, "position t 7, head 2", "0.5")


def test_alibi_factor_validates_n_heads():
    with pytest.raises(ValueError, match="n_heads"):
        check_alibi_weight_factor(None, n_heads=0)


# --------------------------------------------------------------------------- no leaks
def test_messages_never_reveal_the_expected_values():
    """Every failure message above goes through _assert_hides; here the worst cases at once:
    answers that differ in one entry (the message shows the answer's value there)."""
    for row, column in ((0, 0), (11, 7), (5, 4)):
        wrong = EXPECTED_KEYS.copy()
        wrong[row, column] += 0.25
        _fails(
            lambda: check_offset_keys(wrong, offset=PHI, d_model=D, seq_len=N),
            EXPECTED_KEYS,
            f"key position j {row}, dimension {column}",
        )

    for row, head in ((0, 0), (39, 7), (20, 3)):

        def off(positions, seq_len, row=row, head=head):
            out = loop_factor(positions, seq_len)
            out[row, head] *= 1.5
            return out

        _fails(lambda: check_alibi_weight_factor(off, n_heads=8), EXPECTED_FACTORS, f"position t {row}, head {head}")


def test_alibi_factor_that_ignores_positions_is_rejected():
    def from_seq_len(positions, seq_len):  # one row per token of seq_len, whatever the positions
        return loop_factor(range(seq_len), seq_len)

    def counting_rows(positions, seq_len):  # one row per position, but numbered 0, 1, 2, ...
        return loop_factor(range(len(positions)), seq_len)

    _fails(
        lambda: check_alibi_weight_factor(from_seq_len, n_heads=8),
        EXPECTED_FACTORS,
        "one row per position (6 rows); yours has 31",
        "ignores positions",
    )
    _fails(lambda: check_alibi_weight_factor(counting_rows, n_heads=8), EXPECTED_FACTORS, "counts rows instead")
    # positions in any order, not starting at 0: the right adapter follows them
    assert check_alibi_weight_factor(loop_factor, n_heads=8)


# --------------------------------------------------------------------------- plots and explorer
def test_plot_checklist_grid_marks_every_cell_in_words():
    from posenc_helpers.plotting import plot_checklist_grid

    grid = np.array([[1.0, 0.0, np.nan]] * 6)
    ax = plot_checklist_grid(grid, ["a", "b", "c"], title="t")
    assert [t.get_text() for t in ax.texts] == ["yes", "no", "n/a"] * 6
    assert ax.get_title() == "t"
    assert [t.get_text() for t in ax.get_yticklabels()] == [c.name for c in ph.CHECKLIST]
    with pytest.raises(ValueError, match="only 1"):
        plot_checklist_grid(np.full((6, 1), 0.5), ["a"])
    with pytest.raises(ValueError, match="methods"):
        plot_checklist_grid(grid, ["a"])
    with pytest.raises(ValueError, match="criteria"):
        plot_checklist_grid(grid, ["a", "b", "c"], criteria=["x"])
    with pytest.raises(ValueError, match="2-D"):
        plot_checklist_grid(np.ones(3), ["a"])
    plt.close("all")


def test_plot_head_weights():
    from posenc_helpers.plotting import plot_head_weights

    image = plot_head_weights(ph.offset_head_weights(10, 2, 8, temperature=0.1), offset=2, title="h")
    assert image.axes.get_title() == "h" and image.get_clim() == (0.0, 1.0)
    assert image.axes.get_ylabel() == "query position i (tokens)"
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        plot_head_weights(np.full((2, 2), 2.0))
    with pytest.raises(ValueError, match="offset"):
        plot_head_weights(np.eye(2), offset=-1)
    with pytest.raises(ValueError, match="2-D"):
        plot_head_weights(np.ones(3))
    plt.close("all")


def test_offset_head_explorer_reports_the_chapter_numbers():
    from posenc_helpers.widgets import OffsetHeadExplorer

    explorer = OffsetHeadExplorer(design_length=32, long_length=3000)
    explorer.set(offset=3, d_model=64, temperature=0.25)
    profile = ph.offset_head_profile(3000, 3, 64, temperature=0.25)
    assert math.isclose(explorer.min_weight_long, np.nanmin(profile.target_weight), rel_tol=1e-9)
    assert explorer.argmax_on_target
    assert "for every query: yes" in explorer.status.value
    # the margin is f(0) - f(1) = sum(1 - cos(omega_k)) for d = 64
    omega = [10000.0 ** (-2 * k / 64) for k in range(32)]
    assert math.isclose(explorer.margin, sum(1 - math.cos(w) for w in omega), rel_tol=1e-9)
    explorer.set(d_model=16, temperature=1.0)
    assert explorer.min_weight_long < explorer.min_weight_design
    with pytest.raises(ValueError, match="design_length"):
        OffsetHeadExplorer(design_length=512)
    with pytest.raises(ValueError, match="long_length"):
        OffsetHeadExplorer(long_length=20)
    plt.close("all")
