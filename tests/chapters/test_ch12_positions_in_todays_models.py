"""Chapter 12 helpers: the exercise checks, the figure and the chapter's statements.

The checks: right answers (worked out here with plain loops and the math module) pass, typical
wrong answers get the right hint, and no message reveals the answer. The figure: per-pair
wavelengths of a configured model against its contexts. The statements: what the chapter's prose
must and must not say.
"""

import math
import re
from pathlib import Path

import matplotlib.pyplot as plt
import nbformat
import numpy as np
import pytest

from posenc_helpers.checks import CheckFailed, check_axial_query, check_llama3_frequencies, check_position_ids
from posenc_helpers.configs import describe, shipped_configs
from posenc_helpers.plotting import plot_report_wavelengths

MASK = np.array([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1], [0, 0, 0, 0, 1]])
RIGHT_IDS = np.array([[-1, -1, 0, 1, 2], [0, 1, 2, 3, 4], [-1, -1, -1, -1, 0]])  # by hand; pads free

LLAMA = dict(head_dim=64, base=500000.0, factor=32.0, original_max_len=8192, low_freq_factor=1.0, high_freq_factor=4.0)


def _llama_by_loop(head_dim, base, factor, original_max_len, low_freq_factor, high_freq_factor):
    out = []
    for i in range(head_dim // 2):
        theta = base ** (-2 * i / head_dim)
        wavelength = 2 * math.pi / theta
        if wavelength < original_max_len / high_freq_factor:
            out.append(theta)
        elif wavelength > original_max_len / low_freq_factor:
            out.append(theta / factor)
        else:
            smooth = (original_max_len / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)
            out.append((1 - smooth) * theta / factor + smooth * theta)
    return np.array(out)


RIGHT_LLAMA = _llama_by_loop(**LLAMA)
QUERY = np.array([0.3, -1.2, 0.8, 0.5, -0.7, 1.1, 0.2, -0.4])
ROW, COL, WIDTH = 2, 3, 5


def _rot(a, b, angle):
    return [a * math.cos(angle) - b * math.sin(angle), a * math.sin(angle) + b * math.cos(angle)]


def _axial_by_hand(q, row, col, base=10000.0):
    # halves of width 4: frequencies 1 and base**(-1/2)
    f = [1.0, base**-0.5]
    return np.array(
        _rot(q[0], q[1], row * f[0])
        + _rot(q[2], q[3], row * f[1])
        + _rot(q[4], q[5], col * f[0])
        + _rot(q[6], q[7], col * f[1])
    )


RIGHT_AXIAL = _axial_by_hand(QUERY, ROW, COL)


def _numbers(text):
    return [float(m) for m in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", text)]


def _reveals(message, values):
    found = _numbers(message)
    return any(math.isclose(x, v, rel_tol=1e-3) for x in found for v in values if v != round(v))


def test_placeholders_are_not_attempted():
    for result in (
        check_position_ids(None, MASK),
        check_llama3_frequencies(..., **LLAMA),
        check_axial_query(None, query=QUERY, row=ROW, col=COL, width=WIDTH),
    ):
        assert not result and repr(result).startswith("Not attempted yet")


def test_right_answers_pass():
    assert repr(check_position_ids(RIGHT_IDS, MASK)).startswith("Correct")
    other_pads = np.where(MASK == 1, RIGHT_IDS, 1)  # Hugging Face fills pads with 1: not compared
    assert check_position_ids(other_pads, MASK)
    assert repr(check_llama3_frequencies(RIGHT_LLAMA, **LLAMA)).startswith("Correct")
    assert check_llama3_frequencies(RIGHT_LLAMA.tolist(), **LLAMA)
    assert repr(check_axial_query(RIGHT_AXIAL, query=QUERY, row=ROW, col=COL, width=WIDTH)).startswith("Correct")


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (np.tile(np.arange(5), (3, 1)), "counted the pad tokens"),
        (RIGHT_IDS + 1, "start at 1"),
        (np.tile(np.arange(5), (3, 1)) * MASK, "counted the pad tokens"),
    ],
)
def test_position_id_mistakes_get_a_hint_never_revealing(wrong, hint):
    with pytest.raises(CheckFailed) as info:
        check_position_ids(wrong, MASK)
    message = str(info.value)
    assert hint in message
    assert "cumsum" not in message and "- 1" not in message  # never the formula (no_leak)


def test_position_ids_other_errors_say_where():
    wrong = RIGHT_IDS.copy()
    wrong[2, 4] = 3
    with pytest.raises(CheckFailed, match="sequence 2, column 4"):
        check_position_ids(wrong, MASK)
    with pytest.raises(CheckFailed, match=r"shape \(3, 5\)"):
        check_position_ids(RIGHT_IDS[:2], MASK)
    with pytest.raises(ValueError, match="attention_mask"):
        check_position_ids(RIGHT_IDS, [[0, 0]])
    with pytest.raises(ValueError, match="attention_mask"):
        check_position_ids(RIGHT_IDS, [[0, 2]])


def _theta():
    return np.array([LLAMA["base"] ** (-2 * i / LLAMA["head_dim"]) for i in range(LLAMA["head_dim"] // 2)])


@pytest.mark.parametrize(
    "make, hint",
    [
        (lambda t: t / LLAMA["factor"], "every pair is divided"),
        (lambda t: t * LLAMA["factor"], "multiplied"),
        (lambda t: t, "unscaled"),
        (lambda t: np.where(2 * np.pi / t > (8192 + 2048) / 2, t / 32, t), "one wavelength"),
        (lambda t: np.where(2 * np.pi / t > 2048, t / 32, t), "swapped"),
    ],
)
def test_llama3_mistakes_get_a_hint(make, hint):
    with pytest.raises(CheckFailed) as info:
        check_llama3_frequencies(make(_theta()), **LLAMA)
    message = str(info.value)
    assert hint in message
    assert not _reveals(message, RIGHT_LLAMA)


def test_llama3_reversed_blend_and_missing_two_pi():
    theta = _theta()
    wavelength = 2 * np.pi / theta
    smooth = (8192 / wavelength - 1) / 3
    between = (wavelength >= 2048) & (wavelength <= 8192)
    reversed_blend = np.where(between, smooth * theta / 32 + (1 - smooth) * theta, RIGHT_LLAMA)
    with pytest.raises(CheckFailed, match="wrong way"):
        check_llama3_frequencies(reversed_blend, **LLAMA)
    smooth1 = np.clip((8192 * theta - 1) / 3, 0, 1)  # wavelength taken as 1 / theta
    with pytest.raises(CheckFailed, match="not 1 / theta_i"):
        check_llama3_frequencies((1 - smooth1) * theta / 32 + smooth1 * theta, **LLAMA)


def test_llama3_other_errors_say_where_without_the_answer():
    wrong = RIGHT_LLAMA.copy()
    wrong[20] *= 1.05
    with pytest.raises(CheckFailed) as info:
        check_llama3_frequencies(wrong, **LLAMA)
    message = str(info.value)
    assert "pair 20" in message and not _reveals(message, RIGHT_LLAMA)
    with pytest.raises(CheckFailed, match=r"shape \(32,\)"):
        check_llama3_frequencies(RIGHT_LLAMA[:10], **LLAMA)
    with pytest.raises(ValueError, match="factor"):
        check_llama3_frequencies(RIGHT_LLAMA, **(LLAMA | {"factor": 1.0}))
    with pytest.raises(ValueError, match="high_freq_factor"):
        check_llama3_frequencies(RIGHT_LLAMA, **(LLAMA | {"high_freq_factor": 0.5}))


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (_axial_by_hand(QUERY, COL, ROW), "swapped"),
        (_axial_by_hand(QUERY, ROW, ROW), "both halves"),
    ],
)
def test_axial_mistakes_get_a_hint(wrong, hint):
    with pytest.raises(CheckFailed) as info:
        check_axial_query(wrong, query=QUERY, row=ROW, col=COL, width=WIDTH)
    message = str(info.value)
    assert hint in message and not _reveals(message, RIGHT_AXIAL)


def test_axial_raster_index_and_one_dimensional_mistakes():
    t = ROW * WIDTH + COL
    freqs = [10000.0 ** (-2 * i / 8) for i in range(4)]
    raster = sum((_rot(QUERY[2 * i], QUERY[2 * i + 1], t * f) for i, f in enumerate(freqs)), [])
    with pytest.raises(CheckFailed, match="raster index"):
        check_axial_query(raster, query=QUERY, row=ROW, col=COL, width=WIDTH)
    by_row = sum((_rot(QUERY[2 * i], QUERY[2 * i + 1], ROW * f) for i, f in enumerate(freqs)), [])
    with pytest.raises(CheckFailed, match="whole head"):
        check_axial_query(by_row, query=QUERY, row=ROW, col=COL, width=WIDTH)
    wrong = RIGHT_AXIAL.copy()
    wrong[6] += 0.5
    with pytest.raises(CheckFailed) as info:
        check_axial_query(wrong, query=QUERY, row=ROW, col=COL, width=WIDTH)
    assert "feature 6" in str(info.value) and not _reveals(str(info.value), RIGHT_AXIAL)


def test_axial_check_rejects_bad_context():
    with pytest.raises(ValueError, match="query"):
        check_axial_query(RIGHT_AXIAL, query=np.ones(6), row=ROW, col=COL, width=WIDTH)
    with pytest.raises(TypeError, match="width"):
        check_axial_query(RIGHT_AXIAL, query=QUERY, row=ROW, col=COL, width=2.5)
    with pytest.raises(ValueError, match="row"):
        check_axial_query(RIGHT_AXIAL, query=QUERY, row=np.nan, col=COL, width=WIDTH)


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
# line breaks do not split a phrase; a caption in mystnb's figure metadata is a single-quoted YAML
# string, which writes ' as ''
PROSE = " ".join(CHAPTER.replace("''", "'").split())


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
