"""Chapter 12's figure: per-pair wavelengths of a configured model against its contexts."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from posenc_helpers.configs import describe, shipped_configs
from posenc_helpers.plotting import plot_report_wavelengths


def test_draws_wavelengths_before_and_after_with_both_contexts():
    report = describe(shipped_configs()["llama-3.1-8b"]["config"], name="Llama 3.1 8B")
    ax = plot_report_wavelengths(report)
    before, after = ax.lines[0].get_ydata(), ax.lines[1].get_ydata()
    np.testing.assert_allclose(before, 2 * np.pi * 500000.0 ** (np.arange(64) / 64), rtol=1e-12)
    np.testing.assert_allclose(after[35:], before[35:] * 8, rtol=1e-12)  # divided pairs: 8x longer
    levels = sorted(line.get_ydata()[0] for line in ax.lines[2:])
    assert levels == [8192, 131072]
    assert ax.get_title() == "Llama 3.1 8B" and "tokens" in ax.get_ylabel() and ax.get_xlabel()
    plt.close("all")


def test_plain_rope_draws_one_curve_and_one_context():
    report = describe({"rope_theta": 10000.0, "head_dim": 8, "max_position_embeddings": 64})
    fig, ax = plt.subplots()
    assert plot_report_wavelengths(report, ax=ax, title="plain") is ax
    assert len(ax.lines) == 2 and ax.get_title() == "plain"
    plt.close("all")


def test_rejects_anything_but_a_report():
    with pytest.raises(TypeError, match="report must be a PositionReport"):
        plot_report_wavelengths({"rope_theta": 1e4})
