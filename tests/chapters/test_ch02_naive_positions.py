"""Chapter 02 helpers: figures, explorer and exercise checks for the naive encodings.

Expected values are worked out by hand in the comments, not printed by the code under test.
"""

import math
import re
import statistics

import matplotlib.pyplot as plt
import numpy as np
import pytest

from posenc_helpers.checks import CheckFailed, check_first_dominant_position, check_step_table
from posenc_helpers.plotting import plot_norm_ratio, plot_normalized_strips, plot_step_against_length


def _norm_table():
    """Three tokens in width 4 with norms 3, 4, 5: median 4, mean 4, sqrt(d) = 2."""
    x = np.zeros((3, 4))
    x[:, 0] = [3.0, 4.0, 5.0]
    return x


def _skewed_table():
    """Norms 1, 2 and 9 in width 4: median 2, mean 4, sqrt(d) = 2."""
    x = np.zeros((3, 4))
    x[:, 1] = [1.0, 2.0, 9.0]
    return x


# ----------------------------------------------------------------------------- plotting
def test_norm_ratio_marks_first_crossings():
    t = np.arange(1.0, 101.0)
    ax = plot_norm_ratio(t, {"index": t / 4, "scaled": t / 400}, thresholds=(1, 10), title="r")
    # "index" = t/4 reaches 1 at t = 4 and 10 at t = 40; "scaled" never reaches 1 (max 0.25).
    marker_lines = [line for line in ax.lines if line.get_linestyle() == "None"]
    assert len(marker_lines) == 1
    np.testing.assert_array_equal(marker_lines[0].get_xdata(), [4.0, 40.0])
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert "tokens" in ax.get_xlabel()
    plt.close("all")


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: plot_norm_ratio(np.arange(0.0, 5.0), {"a": np.ones(5)}), "positive"),
        (lambda: plot_norm_ratio(np.array([3.0, 2.0]), {"a": np.ones(2)}), "increasing"),
        (lambda: plot_norm_ratio(np.ones((2, 2)), {"a": np.ones(2)}), "positions"),
        (lambda: plot_norm_ratio(np.arange(1.0, 4.0), {}), "ratios"),
        (lambda: plot_norm_ratio(np.arange(1.0, 4.0), {"a": np.ones(2)}), r"ratios\['a'\]"),
        (lambda: plot_norm_ratio(np.arange(1.0, 4.0), {"a": -np.ones(3)}), "positive"),
        (lambda: plot_norm_ratio(np.arange(1.0, 4.0), {"a": np.ones(3)}, thresholds=(0,)), "thresholds"),
        (lambda: plot_normalized_strips([]), "lengths"),
        (lambda: plot_normalized_strips([1, 5]), "lengths"),
        (lambda: plot_step_against_length([5, 3]), "increasing"),
        (lambda: plot_step_against_length([5, 10], highlight=[1]), "highlight"),
    ],
)
def test_plot_functions_reject_bad_values(call, match):
    with pytest.raises(ValueError, match=match):
        call()
    plt.close("all")


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: plot_normalized_strips(5), "lengths"),
        (lambda: plot_normalized_strips("55"), "lengths"),
        (lambda: plot_normalized_strips([5.0, 50.0]), "integers"),
        (lambda: plot_normalized_strips([True, 5]), "integers"),
        (lambda: plot_step_against_length([5, 10], highlight=[2.5]), "highlight"),
    ],
)
def test_plot_functions_reject_bad_types(call, match):
    with pytest.raises(TypeError, match=match):
        call()


def test_normalized_strips_place_dots_and_steps():
    ax = plot_normalized_strips([5, 50])
    top, bottom = ax.collections  # one scatter per length, first row at the top
    np.testing.assert_allclose(top.get_offsets()[:, 0], [0.0, 0.25, 0.5, 0.75, 1.0])
    assert bottom.get_offsets().shape == (50, 2)
    assert top.get_offsets()[0, 1] > bottom.get_offsets()[0, 1]
    texts = [t.get_text() for t in ax.texts]
    assert texts == ["one step = 1/4 = 0.25", "one step = 1/49 = 0.0204"]  # 1/49 = 0.020408...
    plt.close("all")


def test_step_against_length_curve():
    ax = plot_step_against_length([2, 3, 5], highlight=[5])
    curve, marks = ax.lines
    np.testing.assert_allclose(curve.get_ydata(), [1.0, 0.5, 0.25])
    np.testing.assert_allclose(marks.get_ydata(), [0.25])
    plt.close("all")


# ----------------------------------------------------------------------------- explorer
def test_explorer_status_and_crossing_by_hand():
    from posenc_helpers.widgets import NaivePositionsExplorer

    # Every row has norm 1 (four entries of 0.5), sqrt(d) = 2: the index vector of
    # position t has norm 2t, so it reaches a typical embedding of scale s at t = ceil(s / 2).
    explorer = NaivePositionsExplorer(np.full((3, 4), 0.5), max_length=30, length=10)
    assert explorer.first_dominant_position() == 1
    explorer.set(length=5)
    assert "one step = 1/4 = 0.25 " in explorer.status.value
    assert "(1 x the step at n = 5)" in explorer.status.value
    explorer.set(scale=10.0)
    assert explorer.first_dominant_position() == 5
    # n = 5: last position 4 < 5, so the index never outgrows the embedding here.
    assert "stays below" in explorer.status.value
    explorer.set(length=21)
    # position 20: ratio 2 * 20 / 10 = 4
    assert "from position 5" in explorer.status.value and "t = 20, it is 4 x" in explorer.status.value
    np.testing.assert_allclose(explorer.dots.get_offsets()[:, 0], np.arange(21) / 20)
    plt.close("all")


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"embeddings": np.ones(4)}, ValueError, "embeddings"),
        ({"embeddings": np.zeros((3, 4))}, ValueError, "median"),
        ({"embeddings": np.array([[1.0, np.nan]])}, ValueError, "finite"),
        ({"embeddings": np.ones((2, 2)), "max_length": 2}, ValueError, "max_length"),
        ({"embeddings": np.ones((2, 2)), "max_length": 10.0}, TypeError, "max_length"),
        ({"embeddings": np.ones((2, 2)), "reference_length": 1}, ValueError, "reference_length"),
        ({"embeddings": np.ones((2, 2)), "length": 600}, ValueError, "length"),
        ({"embeddings": np.ones((2, 2)), "length": "5"}, TypeError, "length"),
    ],
)
def test_explorer_rejects_bad_input(kwargs, error, match):
    from posenc_helpers.widgets import NaivePositionsExplorer

    with pytest.raises(error, match=match):
        NaivePositionsExplorer(**kwargs)


# ----------------------------------------------------------------------------- checks
def test_checks_placeholders_are_not_attempted():
    for result in (
        check_step_table(None, [2, 5]),
        check_step_table(..., [2, 5]),
        check_first_dominant_position(None, _norm_table(), 10),
    ):
        assert not result and result.status == "not attempted"
        assert repr(result).startswith("Not attempted yet")


def test_step_table_right_and_common_mistakes():
    lengths = [2, 5, 50]
    assert check_step_table([1.0, 0.25, 1 / 49], lengths)  # 1/(n-1) by hand
    assert check_step_table(np.array([1.0, 0.25, 1 / 49]), np.array(lengths))
    with pytest.raises(CheckFailed, match="divided by n"):
        check_step_table([0.5, 0.2, 0.02], lengths)
    with pytest.raises(CheckFailed, match="number of steps"):
        check_step_table([1.0, 4.0, 49.0], lengths)
    with pytest.raises(CheckFailed, match="entry 2"):
        check_step_table([1.0, 0.25, 0.03], lengths)
    with pytest.raises(CheckFailed, match=r"shape \(3,\)"):
        check_step_table([1.0, 0.25], lengths)


def test_first_dominant_position_right_and_wrong():
    x = _norm_table()
    # factor 10: 10 * 4 = 40 = 2t  ->  t = 20
    assert check_first_dominant_position(20, x, 10)
    assert check_first_dominant_position(np.int64(20), x, 10.0)
    assert check_first_dominant_position(20.0, x, 10)
    with pytest.raises(CheckFailed, match="round up"):
        check_first_dominant_position(19, x, 10)
    with pytest.raises(CheckFailed, match="is not the first position whose index vector") as info:
        check_first_dominant_position(21, x, 10)
    assert "earlier" not in str(info.value) and "too" not in str(info.value)  # no direction to search by
    with pytest.raises(CheckFailed, match=r"sqrt\(d\)"):
        check_first_dominant_position(40, x, 10)  # forgot that the index fills all 4 features
    with pytest.raises(CheckFailed, match="whole number"):
        check_first_dominant_position(20.5, x, 10)
    with pytest.raises(CheckFailed, match="boolean"):
        check_first_dominant_position(True, x, 10)
    with pytest.raises(CheckFailed, match="single position"):
        check_first_dominant_position("twenty", x, 10)
    # median 2 but mean 4: factor 3 -> 3 * 2 = 6 = 2t -> t = 3; with the mean, 3 * 4 / 2 = 6.
    skewed = _skewed_table()
    assert check_first_dominant_position(3, skewed, 3)
    with pytest.raises(CheckFailed, match="median"):
        check_first_dominant_position(6, skewed, 3)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: check_step_table([1.0], [1]), ValueError, "lengths"),
        (lambda: check_step_table([1.0], []), ValueError, "lengths"),
        (lambda: check_step_table([1.0], 5), TypeError, "lengths"),
        (lambda: check_step_table([1.0], [5.0]), TypeError, "lengths"),
        (lambda: check_first_dominant_position(3, np.ones(4), 10), ValueError, "embeddings"),
        (lambda: check_first_dominant_position(3, np.ones((2, 2)), 0), ValueError, "factor"),
        (lambda: check_first_dominant_position(3, np.ones((2, 2)), "10"), TypeError, "factor"),
    ],
)
def test_checks_reject_bad_context(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_check_messages_never_reveal_the_answer():
    with pytest.raises(CheckFailed) as info:
        check_step_table([1.0, 0.3, 0.03], [2, 5, 50])
    numbers = {float(m) for m in re.findall(r"\d+\.\d+", str(info.value))}
    assert not numbers & {0.25, round(1 / 49, 6), 0.0204}
    for wrong in (15, 19, 21, 40):
        with pytest.raises(CheckFailed) as info:
            check_first_dominant_position(wrong, _norm_table(), 10)
        assert "20" not in str(info.value)


# ----------------------------------------------------------------------------- the exercise's own data
def _exercise_table():
    """small_embeddings of ex-02-dominant: 500 rows of 32 features drawn with standard deviation 0.1."""
    return np.random.default_rng(seed=5).normal(scale=0.1, size=(500, 32))


def _first_position_by_hand(embeddings, factor, typical=statistics.median):
    """The smallest t with t * sqrt(d) >= factor * typical row norm (the norm of (t, ..., t) is t sqrt(d))."""
    norms = [math.sqrt(sum(v * v for v in row)) for row in np.asarray(embeddings).tolist()]
    return math.ceil(factor * typical(norms) / math.sqrt(len(embeddings[0])))


def test_first_dominant_position_names_the_width_of_section_2_1():
    # width 16 (sqrt 4), norms 3, 4, 5 (median 4), factor 10: t = 40 / 4 = 10; with d = 64: 40 / 8 = 5
    x = np.zeros((3, 16))
    x[:, 0] = [3.0, 4.0, 5.0]
    assert check_first_dominant_position(10, x, 10)
    with pytest.raises(CheckFailed, match="you used d = 64, the width of section 2.1; these embeddings have 16"):
        check_first_dominant_position(5, x, 10)
    # the exercise: factor 100, median norm just under 0.56, so 100 * 0.56 / sqrt(64) is just under 7
    table = _exercise_table()
    assert _first_position_by_hand(table, 100) == 10
    with pytest.raises(CheckFailed, match="d = 64, the width of section 2.1; these embeddings have 32 columns"):
        check_first_dominant_position(7, table, 100)


def test_first_dominant_position_as_a_function_rejects_the_mean():
    table = _exercise_table()
    result = check_first_dominant_position(_first_position_by_hand, table, 100)
    assert result and "for other tables and factors too" in repr(result)
    # On the exercise's data the mean gives the same position as the median (so the integer form cannot
    # tell them apart); the function form is also run on tables whose mean and median differ.
    assert _first_position_by_hand(table, 100, statistics.mean) == 10
    with pytest.raises(CheckFailed, match="use the median row norm as the typical norm, not the mean"):
        check_first_dominant_position(lambda e, f: _first_position_by_hand(e, f, statistics.mean), table, 100)


def test_first_dominant_position_as_a_function_must_read_its_arguments():
    table = _exercise_table()

    def fixed_width(embeddings, factor):  # the width of the exercise's table typed in
        norms = np.linalg.norm(embeddings, axis=1)
        return math.ceil(factor * float(np.median(norms)) / math.sqrt(32))

    with pytest.raises(CheckFailed, match="must work for any table and factor"):
        check_first_dominant_position(fixed_width, table, 100)
    with pytest.raises(CheckFailed, match="raised KeyError"):
        check_first_dominant_position(lambda e, f: {}["t"], table, 100)
    with pytest.raises(CheckFailed, match="returns 9, which is not the first position.*round up"):
        check_first_dominant_position(lambda e, f: _first_position_by_hand(e, f) - 1, table, 100)


def test_first_dominant_position_cannot_be_found_by_looping_over_the_check():
    table = _exercise_table()
    for guess in range(0, 60):
        with pytest.raises(CheckFailed):
            check_first_dominant_position(lambda e, f, g=guess: g, table, 100)
