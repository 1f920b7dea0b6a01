"""Chapter 04 figures and explorer: what they draw, how they react, what they reject.

Reference numbers are derived here by hand (see the comments), not printed by the code under test.
"""

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest

from posenc_helpers.plotting import DIVERGING_CMAP, plot_encoding_heatmap, plot_wavelengths


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
