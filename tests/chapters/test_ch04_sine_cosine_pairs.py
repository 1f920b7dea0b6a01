"""Chapter 04 helpers: the exercise checks, the figures and the explorer.

Right answers pass, placeholders are not failures, wrong answers get hints for the common
mistakes and never reveal the expected values; the figures and the explorer are tested for what
they draw, how they react and what they reject. Expected values are worked out here by hand (see
the comments) or with the math module, independently of the package.
"""

import math
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest

from posenc_helpers.checks import (
    CheckFailed,
    check_concat_readout,
    check_dimension_wavelength,
    check_encoding_row,
)
from posenc_helpers.plotting import DIVERGING_CMAP, plot_encoding_heatmap, plot_wavelengths

# PE(7) for d = 6: omega_k = 10000**(-2k/6) for k = 0, 1, 2, i.e. 1, 10000**(-1/3), 10000**(-2/3).
OMEGA_6 = [1.0, 10000.0 ** (-1 / 3), 10000.0 ** (-2 / 3)]
PE_7 = [f(7 * w) for w in OMEGA_6 for f in (math.sin, math.cos)]


def _numbers(text):
    return [float(m) for m in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", text)]


def test_placeholders_are_not_attempted():
    for result in (
        check_encoding_row(None, 7, 6),
        check_encoding_row(..., 7, 6),
        check_dimension_wavelength(None, 301, 512),
        check_concat_readout(None, np.ones(4)),
    ):
        assert not result
        assert result.status == "not attempted"
        assert repr(result).startswith("Not attempted yet")


def test_encoding_row_right_answer():
    result = check_encoding_row(PE_7, 7, 6)
    assert result and repr(result).startswith("Correct")
    # the worked example of the chapter, d = 4, t = 2
    assert check_encoding_row([math.sin(2), math.cos(2), math.sin(0.02), math.cos(0.02)], 2, 4)
    # another base: d = 4, base 100 gives omega = [1, 0.1]
    assert check_encoding_row([math.sin(3), math.cos(3), math.sin(0.3), math.cos(0.3)], 3, 4, base=100.0)


def test_encoding_row_recognises_the_dimension_index_mistake():
    by_dimension = [10000.0 ** (-2 * i / 6) for i in range(6)]
    wrong = [math.sin(7 * by_dimension[i]) if i % 2 == 0 else math.cos(7 * by_dimension[i]) for i in range(6)]
    with pytest.raises(CheckFailed, match="dimension index"):
        check_encoding_row(wrong, 7, 6)
    # the variant without the factor 2 in the exponent: omega_i = 10000**(-i/d)
    no_two = [10000.0 ** (-i / 6) for i in range(6)]
    wrong = [math.sin(7 * no_two[i]) if i % 2 == 0 else math.cos(7 * no_two[i]) for i in range(6)]
    with pytest.raises(CheckFailed, match="k = i // 2"):
        check_encoding_row(wrong, 7, 6)


def test_encoding_row_recognises_swap_layout_and_sign():
    swapped = [f(7 * w) for w in OMEGA_6 for f in (math.cos, math.sin)]
    with pytest.raises(CheckFailed, match="swapped"):
        check_encoding_row(swapped, 7, 6)
    concat = [math.sin(7 * w) for w in OMEGA_6] + [math.cos(7 * w) for w in OMEGA_6]
    with pytest.raises(CheckFailed, match="interleaves"):
        check_encoding_row(concat, 7, 6)
    growing = [f(7 / w) for w in OMEGA_6 for f in (math.sin, math.cos)]
    with pytest.raises(CheckFailed, match="minus sign"):
        check_encoding_row(growing, 7, 6)


def test_encoding_row_other_wrong_answers_point_at_a_dimension_without_the_answer():
    wrong = list(PE_7)
    wrong[3] = 0.5
    with pytest.raises(CheckFailed) as info:
        check_encoding_row(wrong, 7, 6)
    message = str(info.value)
    assert "dimension 3" in message and "0.5" in message
    assert not any(math.isclose(x, v, rel_tol=1e-4) for x in _numbers(message) for v in PE_7 if abs(v) > 1e-3)
    with pytest.raises(CheckFailed, match=r"shape \(6,\)"):
        check_encoding_row(PE_7[:4], 7, 6)
    with pytest.raises(CheckFailed, match="non-finite"):
        check_encoding_row([np.nan] * 6, 7, 6)


@pytest.mark.parametrize(
    "kwargs, exception, words",
    [
        ({"position": float("nan"), "d_model": 6}, ValueError, ["position", "finite"]),
        ({"position": "7", "d_model": 6}, TypeError, ["position"]),
        ({"position": 7, "d_model": 5}, ValueError, ["d_model", "even"]),
        ({"position": 7, "d_model": 6.0}, TypeError, ["d_model"]),
        ({"position": 7, "d_model": 6, "base": 0.0}, ValueError, ["base", "> 0"]),
    ],
)
def test_encoding_row_rejects_bad_arguments(kwargs, exception, words):
    with pytest.raises(exception) as info:
        check_encoding_row(PE_7, **kwargs)
    for word in words:
        assert word in str(info.value)


# Dimension 301 of d = 512 is the cosine of pair 150: wavelength 2*pi * 10000**(300/512).
WAVELENGTH_301 = 2 * math.pi * 10000.0 ** (300 / 512)


def test_dimension_wavelength_right_answer():
    result = check_dimension_wavelength(WAVELENGTH_301, 301, 512)
    assert result and "pair 150" in repr(result)
    assert check_dimension_wavelength(np.float64(WAVELENGTH_301 * (1 + 1e-8)), 301, 512)
    assert check_dimension_wavelength(np.array([WAVELENGTH_301]), 301, 512)
    # dimension 0 and 1 share pair 0: wavelength 2*pi for every width and base
    assert check_dimension_wavelength(2 * math.pi, 1, 8, base=50.0)
    # d = 4, dimension 3: omega_1 = 0.01, wavelength 200*pi
    assert check_dimension_wavelength(200 * math.pi, 3, 4)


def test_dimension_wavelength_accepts_two_decimals_and_calls_fewer_close():
    """The reviewers' answers: 2 pi 10000**(300/512) = 1386.5319..., asked for to two decimal places."""
    assert f"{WAVELENGTH_301:.4f}" == "1386.5319"
    for typed in (1386.53, 1386.532, 1386.5319, np.float32(1386.53)):  # round to 1386.53
        assert check_dimension_wavelength(typed, 301, 512)
    close = "your wavelength is close: it is right to the digits it has; give more digits (the question asks for two"
    for typed in (1387, 1386, 1386.5, 1386.0):  # rounded or truncated to fewer decimals
        with pytest.raises(CheckFailed) as info:
            check_dimension_wavelength(typed, 301, 512)
        message = str(info.value)
        assert message.startswith(close), message
        assert "pair k" not in message  # not a concept error the student did not make
        assert "1386.53" not in message and "1386.5" not in message and "1387" not in message
    for typed in (1386.7, 1386.51, 1390):  # not right to the digits they have: no "close", no side
        with pytest.raises(CheckFailed, match="your wavelength is not yet"):
            check_dimension_wavelength(typed, 301, 512)
    # a float16 answer holds 1386.53 as 1387: told close, and why
    with pytest.raises(CheckFailed, match="close.*stored in float16"):
        check_dimension_wavelength(np.float16(1386.53), 301, 512)


def test_dimension_wavelength_is_accepted_only_when_it_rounds_right():
    """Issue 46: 1386.54 (within 0.01 of 1386.5319..., but not its rounding) was accepted. Two
    decimals asked for: only a number that rounds to 1386.53 at two decimals passes; the
    neighbours on either side get one message, with no "close", no side and no digits of it."""
    refused = {}
    for typed in (1386.54, 1386.52, np.float32(1386.54), 1386.5351, 1386.5249):
        with pytest.raises(CheckFailed) as info:
            check_dimension_wavelength(typed, 301, 512)
        refused[float(typed)] = str(info.value)
    assert len(set(refused.values())) == 1, refused
    message = next(iter(refused.values()))
    assert message.startswith("your wavelength is not yet that of dimension 301"), message
    assert "close" not in message and not re.search(r"138\d", message)
    for typed in (1386.5349, 1386.5251):  # round to 1386.53
        assert check_dimension_wavelength(typed, 301, 512)


def test_a_number_typed_as_a_string_is_told_so():
    """Issue 46: '1386.53' was accepted (numpy converts the string). Numbers, not strings."""
    for typed in ("1386.53", np.str_("1386.53"), "1386.54"):
        with pytest.raises(CheckFailed) as info:
            check_dimension_wavelength(typed, 301, 512)
        message = str(info.value)
        assert message == "your wavelength should be a number, not a string: write the number without quotes."
        assert not re.search(r"138\d", message)
    with pytest.raises(CheckFailed) as info:
        check_encoding_row([str(v) for v in PE_7], 7, 6)
    assert str(info.value) == (
        "your PE should be a numpy array of numbers, not strings: write the numbers without quotes."
    )


@pytest.mark.parametrize("decimals", [2, 3, 4])
def test_a_rounded_row_is_told_how_many_decimals_are_right(decimals):
    """Issue 46: PE(7) typed rounded to 3 decimals read "6 of 6 entries differ ... yours is 0.657",
    the same as the right value to the digits shown. Now: right to N decimals; give more digits,
    and no entry of the row, to any number of digits."""
    for typed in (np.round(PE_7, decimals), np.trunc(np.array(PE_7) * 10**decimals) / 10**decimals):
        with pytest.raises(CheckFailed) as info:
            check_encoding_row(typed, 7, 6)
        message = str(info.value)
        assert message == (
            f"your PE is not yet PE(7) for d = 6: it is right to {decimals} decimals; give more digits "
            "(compute the values in numpy instead of typing them rounded)."
        )
        assert _numbers(message) == []  # no entry of PE(7), rounded or not
    # one entry off by more than its rounding: not "right to N decimals"
    wrong = np.round(PE_7, 3)
    wrong[2] += 0.01
    with pytest.raises(CheckFailed, match="of 6 entries differ") as info:
        check_encoding_row(wrong, 7, 6)
    assert "decimals" not in str(info.value)


@pytest.mark.parametrize(
    "answer, hint",
    [
        (2 * math.pi * 10000.0 ** (602 / 512), "dimension index"),
        (2 * math.pi * 10000.0 ** (301 / 512), "dimension index"),
        (10000.0 ** (-300 / 512), "angular frequency"),
        (10000.0 ** (300 / 512), "2\\*pi radians, not 1"),
        (360 * 10000.0 ** (300 / 512), "radians"),
    ],
)
def test_dimension_wavelength_recognises_mistakes(answer, hint):
    with pytest.raises(CheckFailed, match=hint):
        check_dimension_wavelength(answer, 301, 512)


def test_dimension_wavelength_other_wrong_answers():
    with pytest.raises(CheckFailed, match="not yet that of dimension 301") as info:
        check_dimension_wavelength(WAVELENGTH_301 * 3, 301, 512)
    assert not any(math.isclose(x, WAVELENGTH_301, rel_tol=1e-3) for x in _numbers(str(info.value)))
    with pytest.raises(CheckFailed, match="not yet that of dimension 301") as below:
        check_dimension_wavelength(1.0, 301, 512)
    assert str(below.value) == str(info.value)  # the same words below the answer as above it
    with pytest.raises(CheckFailed, match="single number"):
        check_dimension_wavelength([1.0, 2.0], 301, 512)
    with pytest.raises(CheckFailed, match="finite"):
        check_dimension_wavelength(float("inf"), 301, 512)
    with pytest.raises(CheckFailed, match="a number, not a string"):
        check_dimension_wavelength("long", 301, 512)
    with pytest.raises(CheckFailed, match="numpy array of numbers"):
        check_dimension_wavelength({"wavelength": 1386.53}, 301, 512)
    with pytest.raises(CheckFailed, match="not a boolean"):
        check_dimension_wavelength(True, 301, 512)


@pytest.mark.parametrize(
    "args, exception, words",
    [
        ((301, 300), ValueError, ["dimension", "[0, 299]"]),
        ((-1, 512), ValueError, ["dimension", ">= 0"]),
        ((1.5, 512), TypeError, ["dimension", "integer"]),
        ((3, 7), ValueError, ["d_model", "even"]),
    ],
)
def test_dimension_wavelength_rejects_bad_arguments(args, exception, words):
    with pytest.raises(exception) as info:
        check_dimension_wavelength(1.0, *args)
    for word in words:
        assert word in str(info.value)
    with pytest.raises(ValueError, match="base"):
        check_dimension_wavelength(1.0, 3, 8, base=-1.0)


def test_concat_readout():
    w = np.arange(8.0)
    # sines of pairs 0..3 are interleaved dimensions 0, 2, 4, 6; cosines are 1, 3, 5, 7
    assert check_concat_readout([0.0, 2.0, 4.0, 6.0, 1.0, 3.0, 5.0, 7.0], w)
    matrix = np.arange(12.0).reshape(4, 3)
    assert check_concat_readout(matrix[[0, 2, 1, 3]], matrix)
    with pytest.raises(CheckFailed, match="unchanged"):
        check_concat_readout(w, w)
    with pytest.raises(CheckFailed, match="wrong way round"):
        # the inverse permutation: column j of the interleaved table from column inv[j] of concat
        check_concat_readout(w[[0, 4, 1, 5, 2, 6, 3, 7]], w)
    with pytest.raises(CheckFailed, match="transposed"):
        check_concat_readout(matrix[[0, 2, 1, 3]].T, matrix)


def test_concat_readout_agrees_with_the_tables():
    from posenc_helpers import sinusoidal_encoding

    rng = np.random.default_rng(0)
    w = rng.normal(size=(8, 2))
    interleaved = sinusoidal_encoding(20, 8)
    concat = sinusoidal_encoding(20, 8, layout="concat")
    answer = np.linalg.lstsq(concat, interleaved @ w, rcond=None)[0]  # solved, not permuted
    assert check_concat_readout(answer, w)


@pytest.mark.parametrize(
    "readout, exception",
    [(np.ones(5), ValueError), (np.ones((2, 2, 2)), ValueError), (np.ones(0), ValueError), (["a", "b"], TypeError)],
)
def test_concat_readout_rejects_bad_readouts(readout, exception):
    with pytest.raises(exception, match="readout"):
        check_concat_readout(None, readout)


def _row(t, omegas):
    return [f(t * w) for w in omegas for f in (math.sin, math.cos)]


def test_encoding_row_names_a_position_off_by_one():
    with pytest.raises(CheckFailed, match=r"this is PE\(6\), the row of the position before") as info:
        check_encoding_row(_row(6, OMEGA_6), 7, 6)
    assert not set(_numbers(str(info.value))) & {round(v, 6) for v in PE_7}
    with pytest.raises(CheckFailed, match=r"this is PE\(8\), the row of the position after"):
        check_encoding_row(_row(8, OMEGA_6), 7, 6)


@pytest.mark.parametrize("base, shown", [(1000.0, "1000"), (100000.0, "100000"), (math.e, "e \\(np.exp\\)")])
def test_encoding_row_names_a_wrong_base(base, shown):
    omegas = [base ** (-2 * k / 6) for k in range(3)]
    with pytest.raises(CheckFailed, match=f"frequencies of base {shown}; the exercise uses base 10000"):
        check_encoding_row(_row(7, omegas), 7, 6)


def test_encoding_row_recognises_any_other_base_by_its_fastest_pair():
    # pair 0 turns at 1 rad per token whatever the base; base 20000 changes only pairs 1 and 2
    omegas = [20000.0 ** (-2 * k / 6) for k in range(3)]
    with pytest.raises(CheckFailed, match="the slower pairs turn at the wrong speed: check the base"):
        check_encoding_row(_row(7, omegas), 7, 6)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_heatmap_draws_the_table_on_a_fixed_symmetric_range():
    table = np.array([[0.0, 0.5], [-0.5, 1.0], [1.0, -1.0]])
    ax = plot_encoding_heatmap(table, title="t", colorbar=False)
    image = ax.images[0]
    np.testing.assert_array_equal(image.get_array(), table)
    assert image.get_clim() == (-1.0, 1.0)
    assert image.get_cmap().name == DIVERGING_CMAP
    assert ax.get_title() == "t"
    assert ax.get_xlabel() == "dimension i" and "tokens" in ax.get_ylabel()
    assert len(ax.figure.axes) == 1


def test_heatmap_options():
    fig, ax = plt.subplots()
    returned = plot_encoding_heatmap(np.zeros((2, 2)), ax=ax, limit=2.0, xlabel="bit", ylabel="row")
    assert returned is ax
    assert ax.images[0].get_clim() == (-2.0, 2.0)
    assert ax.get_xlabel() == "bit" and ax.get_ylabel() == "row"
    assert len(fig.axes) == 2  # the colour bar


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"table": np.zeros(4)}, ["table", "2-D"]),
        ({"table": [[0.0, np.nan]]}, ["table", "finite"]),
        ({"table": np.zeros((2, 2)), "limit": 0.0}, ["limit", "> 0"]),
        ({"table": np.zeros((2, 2)), "limit": float("inf")}, ["limit"]),
    ],
)
def test_heatmap_rejects_bad_input(kwargs, words):
    with pytest.raises(ValueError) as info:
        plot_encoding_heatmap(**kwargs)
    for word in words:
        assert word in str(info.value)


def test_plots_reject_non_numbers_with_a_type_error():
    with pytest.raises(TypeError, match="table"):
        plot_encoding_heatmap([["a", "b"]])
    with pytest.raises(TypeError, match="curves"):
        plot_wavelengths({"a": ["x"]})
    with pytest.raises(TypeError, match="references"):
        plot_wavelengths({"a": [1.0]}, references={"r": "10"})


def test_wavelength_plot_is_logarithmic_with_references():
    lam = 2 * np.pi * 10.0 ** np.arange(4)
    ax = plot_wavelengths({"a": lam, "b": lam * 2}, references={"2 pi": 2 * np.pi, "top": 1e5}, title="w")
    assert ax.get_yscale() == "log" and ax.get_title() == "w"
    assert len(ax.lines) == 4
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), lam)
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), np.arange(4))
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b", "2 pi", "top"]
    ax = plot_wavelengths({"a": lam}, legend_loc=None)
    assert ax.get_legend() is None


@pytest.mark.parametrize(
    "curves, references, words",
    [
        ({}, None, ["curves"]),
        ({"a": [1.0, -2.0]}, None, ["curves['a']", "positive"]),
        ({"a": [[1.0]]}, None, ["curves['a']", "1-D"]),
        ({"a": []}, None, ["curves['a']"]),
        ({"a": [1.0]}, {"r": 0.0}, ["references['r']", "positive"]),
    ],
)
def test_wavelength_plot_rejects_bad_input(curves, references, words):
    with pytest.raises(ValueError) as info:
        plot_wavelengths(curves, references=references)
    for word in words:
        assert word in str(info.value)


def _turning_pairs(d, base, n):
    # lambda_k = 2 pi base**(2k/d) <= n - 1  <=>  k <= d/2 * log((n - 1) / (2 pi)) / log(base)
    return math.floor(d / 2 * math.log((n - 1) / (2 * math.pi)) / math.log(base)) + 1


def test_explorer_status_and_artists_follow_the_controls():
    from posenc_helpers.widgets import SinusoidalExplorer

    explorer = SinusoidalExplorer()
    assert explorer.render_count == 1
    assert f"{_turning_pairs(128, 1e4, 50)} of 64 pairs" in explorer.status.value
    assert explorer.heatmap.get_array().shape == (50, 128)
    first_png = explorer.image.value
    explorer.set(d_model=16, base=100.0)
    assert explorer.render_count == 3
    # d = 16, base 100: lambda_k = 2 pi * 10**(k/4); ratio 10**0.25 = 1.778; the last is 2 pi * 10**1.75
    status = explorer.status.value
    assert "8 pairs" in status and "1.778 times" in status and "to 353 tokens" in status
    assert f"{_turning_pairs(16, 100.0, 50)} of 8 pairs" in status
    assert explorer.heatmap.get_array().shape == (50, 16)
    np.testing.assert_allclose(explorer.wave_line.get_ydata(), 2 * np.pi * 10 ** (np.arange(8) / 4))
    np.testing.assert_allclose(explorer.limit_line.get_ydata(), 2 * np.pi * 100)
    assert explorer.image.value != first_png
    assert explorer.image.value[:8] == b"\x89PNG\r\n\x1a\n"


def test_explorer_with_other_positions():
    from posenc_helpers.widgets import SinusoidalExplorer

    explorer = SinusoidalExplorer(n_positions=200, d_model=64, base=1e3)
    assert explorer.heatmap.get_array().shape == (200, 64)
    assert f"{_turning_pairs(64, 1e3, 200)} of 32 pairs" in explorer.status.value
    assert "t = 199" in explorer.status.value


@pytest.mark.parametrize(
    "kwargs, exception, word",
    [
        ({"n_positions": 1}, ValueError, "n_positions"),
        ({"n_positions": 1001}, ValueError, "n_positions"),
        ({"n_positions": 2.5}, TypeError, "n_positions"),
        ({"d_model": 100}, ValueError, "d_model"),
        ({"base": 5.0}, ValueError, "base"),
    ],
)
def test_explorer_rejects_bad_settings(kwargs, exception, word):
    from posenc_helpers.widgets import SinusoidalExplorer

    with pytest.raises(exception, match=word):
        SinusoidalExplorer(**kwargs)
