"""Chapter 12's figure (per-pair wavelengths of a configured model against its contexts) and its statements."""

import math
from pathlib import Path

import matplotlib.pyplot as plt
import nbformat
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


def test_the_anchor_line_is_labelled_as_the_anchor():
    report = describe(shipped_configs()["llama-3.1-8b"]["config"], name="Llama 3.1 8B")
    ax = plot_report_wavelengths(report)
    labels = [line.get_label() for line in ax.lines]
    assert "anchor length L" in labels and "trained context" not in labels
    plt.close("all")


# What chapter 12 says, against the statements a review (issue 23) found false. Each old statement fails here.
ROOT = Path(__file__).resolve().parents[2]
CHAPTER = (ROOT / "notebooks" / "text" / "12_positions_in_todays_models.md").read_text(encoding="utf-8")
PROSE = " ".join(CHAPTER.split())  # line breaks do not split a phrase


@pytest.mark.parametrize(
    "old",
    [
        "the others would ask for more",  # Men et al.: the criterion is not monotone in the base
        "eq-12-men`, over the rotated width",  # Men et al.: unrotated features count
        "against the trained context $L$",  # original_max_position_embeddings is an anchor, not a trained length
        "against its trained context",
        "trained context L = ",
        "trained on L =",
        "static rules (llama3, YaRN, LongRoPE's fixed lists)",  # LongRoPE switches at run time
        "LongRoPE's fixed lists) uses the same frequencies",
        "**dynamic NTK** {cite}`bloc97ntk2023`",  # dynamic NTK is emozilla's
        "Checkpoints released since add three more rules",  # dynamic NTK predates YaRN
        "YaRN's ramp starts later",  # Figure 12.1's alt text: it starts earlier
        "so that the longest context covers no more of their circle",  # false for Llama 3.1 (L' = 16 L, s = 8)
    ],
)
def test_old_statements_are_gone(old):
    assert old not in PROSE


@pytest.mark.parametrize(
    "new",
    [
        "{cite}`emozilla2023dynamic`",
        "not the length Llama 3.1 was trained on",
        "LongRoPE has the same problem, once",
        "A larger base does not always allow a longer context",
        "`transformers` release 4.56",
        "$L' = 16L$, so pairs 35 to 63 turn through twice the arc",
    ],
)
def test_new_statements_are_there(new):
    assert new in PROSE


def test_figure_12_1_alt_text_says_yarn_starts_earlier():
    notebook = nbformat.read(ROOT / "notebooks" / "12_positions_in_todays_models.ipynb", as_version=4)
    cell = next(c for c in notebook.cells if c.cell_type == "code" and "Six rescaling rules" in c.source)
    alt = cell.metadata["mystnb"]["image"]["alt"]
    # base 5e5, L = 8192, d = 128: YaRN's ramp ends floor(64 ln(8192 / 64 pi) / ln 5e5) = floor(18.09) = 18 and
    # ceil(64 ln(8192 / 2 pi) / ln 5e5) = ceil(34.98) = 35; llama3 keeps wavelengths below 8192 / 4 = 2048, i.e.
    # pairs i < 64 ln(2048 / 2 pi) / ln 5e5 = 28.3, and divides those above 8192, i.e. from 64 ln(8192 / 2 pi) /
    # ln 5e5 = 34.98 on.
    assert math.floor(64 * math.log(8192 / (64 * math.pi)) / math.log(5e5)) == 18
    assert math.ceil(64 * math.log(8192 / (2 * math.pi)) / math.log(5e5)) == 35
    assert math.floor(64 * math.log(2048 / (2 * math.pi)) / math.log(5e5)) == 28
    assert "ramp starts earlier" in alt and "keeps pairs 0 to 18" in alt and "from pair 35" in alt
    assert "keeps pairs 0 to 28" in alt and "29 to 34" in alt
