"""Chapter 09 figures and explorer: what they draw, how they react, what they reject.

Reference numbers are derived by hand in the comments (head width 128, base 10000, L = 4096).
"""

import math
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

from posenc_helpers.plotting import plot_angle_errors, plot_stretch_factors
from posenc_helpers.widgets import RopeScalingExplorer


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_stretch_factors_draw_the_ratio_per_pair():
    theta = np.array([1.0, 0.1, 0.01])
    ax = plot_stretch_factors(theta, {"PI": theta / 4, "kept": theta}, factor=4.0, title="t")
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [4.0, 4.0, 4.0])
    np.testing.assert_allclose(ax.lines[1].get_ydata(), [1.0, 1.0, 1.0])
    assert [line.get_ydata()[0] for line in ax.lines[2:]] == [1.0, 4.0]  # reference lines
    assert ax.get_yscale() == "log" and ax.get_title() == "t" and "pair index" in ax.get_xlabel()


@pytest.mark.parametrize(
    "kwargs, exception, words",
    [
        ({"original": [1.0, -1.0], "scaled": {"a": [1.0, 1.0]}}, ValueError, ["original"]),
        ({"original": [1.0], "scaled": {}}, ValueError, ["scaled"]),
        ({"original": [1.0], "scaled": {"a": [1.0, 2.0]}}, ValueError, ["scaled['a']", "shape"]),
        ({"original": [1.0], "scaled": {"a": ["x"]}}, TypeError, ["curves['a']"]),
        ({"original": [1.0], "scaled": {"a": [1.0]}, "factor": 0.0}, ValueError, ["factor", "> 0"]),
        ({"original": [1.0], "scaled": {"a": [1.0]}, "factor": "2"}, TypeError, ["factor"]),
    ],
)
def test_stretch_factors_reject_bad_input(kwargs, exception, words):
    with pytest.raises(exception) as info:
        plot_stretch_factors(**kwargs)
    for word in words:
        assert word in str(info.value)


def test_angle_errors_leave_out_zero_and_overflow():
    t = np.array([1.0, 10.0, 100.0, 1000.0])
    ax = plot_angle_errors(
        t, {"a": [0.0, 1e-3, 1e-2, np.inf], "b": [1e-8, 1e-7, 1e-6, 1e-5]}, references={"pi": math.pi}, title="errors"
    )
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), [10.0, 100.0])
    np.testing.assert_array_equal(ax.lines[1].get_xdata(), t)
    assert ax.lines[2].get_ydata()[0] == math.pi
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert "tokens" in ax.get_xlabel() and "radians" in ax.get_ylabel()


@pytest.mark.parametrize(
    "kwargs, exception, words",
    [
        ({"positions": [0.0, 1.0], "errors": {"a": [1.0, 1.0]}}, ValueError, ["positions"]),
        ({"positions": [1.0], "errors": {}}, ValueError, ["errors"]),
        ({"positions": [1.0], "errors": {"a": [np.nan]}}, ValueError, ["errors['a']"]),
        ({"positions": [1.0], "errors": {"a": [-1.0]}}, ValueError, ["errors['a']"]),
        ({"positions": [1.0], "errors": {"a": [1.0]}, "references": {"r": 0.0}}, ValueError, ["references['r']"]),
        ({"positions": [1.0], "errors": {"a": [1.0]}, "references": {"r": "x"}}, TypeError, ["references['r']"]),
    ],
)
def test_angle_errors_reject_bad_input(kwargs, exception, words):
    with pytest.raises(exception) as info:
        plot_angle_errors(**kwargs)
    for word in words:
        assert word in str(info.value)


def test_explorer_counts_pairs_per_method():
    explorer, _ = RopeScalingExplorer.demo()
    png = explorer.image.value
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    # PI slows all 64 pairs by s
    assert "0 pairs kept, 64 pairs interpolated by s, 0 pairs in between" in explorer.status.value
    # YaRN, by hand: the pair that turns 32 times in 4096 tokens is 128 ln(4096/(64 pi)) / (2 ln 1e4) = 20.95
    # -> pairs 0..20 kept (21); the one that turns once is 45.03 -> pairs 46..63 interpolated (18);
    # 25 in between. Attention factor 0.1 ln 8 + 1 = 1.2079, squared 1.4591.
    explorer.set(method="yarn")
    assert "21 pairs kept, 18 pairs interpolated by s, 25 pairs in between" in explorer.status.value
    assert "attention factor 1.208 (logits x 1.459)" in explorer.status.value
    assert explorer.image.value != png
    # NTK keeps pair 0 and slows the last pair by exactly s; 17 slow pairs overshoot (see the core tests)
    explorer.set(method="ntk")
    assert "1 pair kept, 1 pair interpolated by s, 62 pairs in between" in explorer.status.value
    assert "17 of 64 pairs reach angles unseen" in explorer.status.value
    explorer.set(factor=1.0)
    assert "64 pairs kept, 0 pairs interpolated" in explorer.status.value
    # the curves moved: the rescaled wavelength of the last pair is the trained one again
    np.testing.assert_allclose(explorer.wave_line.get_ydata()[-1], 2 * math.pi * 1e4 ** (126 / 128))


def test_explorer_rejects_bad_arguments():
    with pytest.raises(ValueError, match="head_dim"):
        RopeScalingExplorer(head_dim=2)
    with pytest.raises(ValueError, match="head_dim"):
        RopeScalingExplorer(head_dim=7)
    with pytest.raises(ValueError, match="base"):
        RopeScalingExplorer(base=1.0)
    with pytest.raises(ValueError, match="original_max_len"):
        RopeScalingExplorer(original_max_len=1)
    with pytest.raises(ValueError, match="method"):
        RopeScalingExplorer(method="dynamic")
    with pytest.raises(ValueError, match="factor"):
        RopeScalingExplorer(factor=5.0)


def test_chapter_says_rescaling_is_followed_by_fine_tuning_and_what_perplexity_misses():
    # Issue 23: the takeaways used to read as if rescaling alone gave a long context.
    text = (Path(__file__).resolve().parents[2] / "notebooks" / "text" / "09_long_context.md").read_text()
    section = text[text.index("## 9.6 After rescaling") : text.index("## 9.7 ")]
    prose = " ".join(section.split())
    assert "within 1000 steps" in prose and "{cite}`chen2023interpolation`" in prose  # Chen et al., abstract
    assert "for 400 steps at $s = 16$" in prose and "{cite}`peng2024yarn`" in prose  # Peng et al., section 4
    for key in ("men2024base", "hsieh2024ruler", "grattafiori2024llama3", "deepseekai2024v3"):
        assert f"{{cite}}`{key}`" in prose
    takeaways = " ".join(text[text.index("## Key takeaways") :].split())
    assert "followed by a short fine-tune at the new length" in takeaways and "perplexity" in takeaways
