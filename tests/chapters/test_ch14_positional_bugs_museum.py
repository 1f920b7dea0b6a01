"""Chapter 14 (14_positional_bugs_museum): its checks, figure and explorer.

The right answers are written here by hand, with the math module and plain
loops over the pairs (never with the package): RoPE's frequencies
base**(-2i/d), ALiBi's slopes by the recipe of Press et al.
"""

import json
import math
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest

from posenc_helpers.checks import CheckFailed, check_conforming_alibi, check_conforming_rope
from posenc_helpers.plotting import plot_score_errors
from posenc_helpers.widgets import BugSymptomExplorer


def rope_by_hand(base, layout="half", positions_from=0, dtype=np.float64):
    """RoPE whose pair i turns by t * base**(-2i/d); pairs (i, i + d/2) or (2i, 2i + 1)."""

    def rope(x, positions):
        x = np.asarray(x, dtype=np.float64)
        d = x.shape[-1]
        out = x.copy()
        for i in range(d // 2):
            a, b = (i, i + d // 2) if layout == "half" else (2 * i, 2 * i + 1)
            theta = float(base) ** (-2 * i / d)
            # positions and frequency held in dtype, their product computed in it (float16: a mixed-precision port)
            angle = np.array([dtype(t + positions_from) * dtype(theta) for t in positions], dtype=dtype).astype(float)
            c, s = np.cos(angle), np.sin(angle)
            out[..., a] = x[..., a] * c - x[..., b] * s
            out[..., b] = x[..., a] * s + x[..., b] * c
        return out

    return rope


def slopes_by_hand(n, max_bias=8.0):
    """Press et al.'s slopes: 2**(-max_bias h / n) for a power of two, else the lower power's and every
    other slope of the next one."""

    def power_of_two(m):
        return [2.0 ** (-max_bias * h / m) for h in range(1, m + 1)]

    if n & (n - 1) == 0:
        return power_of_two(n)
    lower = 2 ** int(math.floor(math.log2(n)))
    return power_of_two(lower) + power_of_two(2 * lower)[0::2][: n - lower]


def alibi_by_hand(max_bias=8.0, slopes=slopes_by_hand):
    def bias(n_heads, seq_len):
        m = slopes(n_heads, max_bias)
        return np.array([[[-m[h] * (i - j) for j in range(seq_len)] for i in range(seq_len)] for h in range(n_heads)])

    return bias


def mlx_slopes(n, max_bias=8.0):
    """The formula ml-explore/mlx used before PR #3071, for every head count."""
    return [2.0 ** (-max_bias * h / n) for h in range(1, n + 1)]


# --------------------------------------------------------------------------- check_conforming_rope
def test_rope_check_accepts_both_layouts_and_bases():
    assert check_conforming_rope(rope_by_hand(500000.0), head_dim=16, base=500000.0, layout="half")
    assert check_conforming_rope(rope_by_hand(10000.0, "interleaved"), head_dim=8, base=10000.0, layout="interleaved")
    result = check_conforming_rope(rope_by_hand(500000.0, dtype=np.float32), head_dim=16, base=500000.0, layout="half")
    assert repr(result).startswith("Correct")


@pytest.mark.parametrize(
    ("fn", "bug"),
    [
        (rope_by_hand(500000.0, "interleaved"), "'layout'"),
        (rope_by_hand(10000.0), "'base'"),
        (rope_by_hand(500000.0, positions_from=1), "'off-by-one'"),
        (rope_by_hand(500000.0, dtype=np.float16), "'low-precision-angles'"),
    ],
)
def test_rope_check_names_the_mistake(fn, bug):
    with pytest.raises(CheckFailed, match=bug):
        check_conforming_rope(fn, head_dim=16, base=500000.0, layout="half")


def partial_by_hand(rotary_dim, denominator, rows=False):
    """The first rotary_dim features rotate, half-split within them, pair i at base 10000**(-2i/denominator)."""

    def rope(x, positions):
        x = np.asarray(x, dtype=np.float64)
        out = x.copy()
        ts = np.arange(x.shape[-2]) if rows else positions
        half = rotary_dim // 2
        for i in range(half):
            theta = 10000.0 ** (-2 * i / denominator)
            angle = np.array([t * theta for t in ts], dtype=float)
            a, b = x[..., i], x[..., i + half]
            out[..., i] = a * np.cos(angle) - b * np.sin(angle)
            out[..., i + half] = a * np.sin(angle) + b * np.cos(angle)
        return out

    return rope


def test_rope_check_follows_partial_rotary():
    assert check_conforming_rope(partial_by_hand(8, 8), head_dim=16, base=1e4, layout="half", rotary_dim=8)
    with pytest.raises(CheckFailed, match="'model-dim-denominator' and 'positions-ignored'"):
        check_conforming_rope(partial_by_hand(8, 16, rows=True), head_dim=16, base=1e4, layout="half", rotary_dim=8)
    with pytest.raises(CheckFailed, match="'rotary-width'"):
        check_conforming_rope(partial_by_hand(16, 16), head_dim=16, base=1e4, layout="half", rotary_dim=8)


def test_rope_check_names_combined_mistakes_and_what_it_cannot_name():
    with pytest.raises(CheckFailed, match="several mistakes at once: 'layout' and 'base'"):
        check_conforming_rope(rope_by_hand(10000.0, "interleaved"), head_dim=16, base=500000.0, layout="half")
    with pytest.raises(CheckFailed, match="no named mistake"):
        check_conforming_rope(lambda x, positions: x, head_dim=16, base=500000.0, layout="half")


def test_rope_check_reports_a_function_that_raises_or_is_not_one():
    def broken(x, positions):
        raise RuntimeError("shape mismatch")

    with pytest.raises(CheckFailed, match="RuntimeError: shape mismatch"):
        check_conforming_rope(broken, head_dim=16, base=500000.0, layout="half")
    with pytest.raises(CheckFailed, match="should be a function"):
        check_conforming_rope(np.eye(16), head_dim=16, base=500000.0, layout="half")
    with pytest.raises(CheckFailed, match="could not use your function"):
        check_conforming_rope(lambda x: x, head_dim=16, base=500000.0, layout="half")
    assert not check_conforming_rope(None, head_dim=16, base=500000.0, layout="half")


def test_rope_check_messages_never_reveal_the_answer():
    """The message names the mistake and where, never a frequency or rotated value of the right code."""
    with pytest.raises(CheckFailed) as info:
        check_conforming_rope(rope_by_hand(10000.0), head_dim=16, base=500000.0, layout="half")
    message = str(info.value)
    right_frequencies = [500000.0 ** (-2 * i / 16) for i in range(8)]
    for theta in right_frequencies[1:]:
        assert f"{theta:.6g}" not in message and f"{theta:.4g}" not in message
    assert "cos(" not in message and "concatenate" not in message


def rotated_in(rotary_dim, rope):
    """A head whose first ``rotary_dim`` features are turned by ``rope`` and the rest passed through."""

    def fn(x, positions):
        x = np.asarray(x, dtype=np.float64)
        out = x.copy()
        out[..., :rotary_dim] = rope(x[..., :rotary_dim], positions)
        return out

    return fn


def scaled_by(factor, fn):
    return lambda x, positions: factor * fn(x, positions)


# Exercise 14.1's spec: 16 features, the first 8 rotated in the half layout, base 10000. Every named
# mistake the kit finds there, and one it cannot name (frequencies all halved).
EXERCISE_ROPE = {"head_dim": 16, "base": 10000.0, "layout": "half", "rotary_dim": 8}
ROPE_MISTAKES = {
    "'layout'": rotated_in(8, rope_by_hand(10000.0, "interleaved")),
    "'base'": rotated_in(8, rope_by_hand(500000.0)),
    "'off-by-one'": rotated_in(8, rope_by_hand(10000.0, positions_from=1)),
    "'low-precision-angles'": rotated_in(8, rope_by_hand(10000.0, dtype=np.float16)),
    "'model-dim-denominator'": partial_by_hand(8, 16),
    "'positions-ignored'": partial_by_hand(8, 8, rows=True),
    "'rotary-width'": partial_by_hand(16, 16),
    "'attention-factor'": scaled_by(1.25, partial_by_hand(8, 8)),
    "'rotation-direction'": rotated_in(8, lambda x, t: rope_by_hand(10000.0)(x, -np.asarray(t))),
    "no named mistake": rotated_in(8, lambda x, t: rope_by_hand(10000.0)(x, np.asarray(t) / 2)),
}


def _numbers_shown(message):
    return re.findall(r"\d+(?:\.\d+)?(?:e-?\d+)?", message)


def _shows(message, value):
    """Whether the message holds ``value`` written to 2 to 8 significant digits (or as it is, if whole)."""
    written = {f"{value:.{k}g}" for k in range(2, 9)} | (
        {f"{value:g}"} if value == int(value) and value >= 10 else set()
    )
    return any(number in written for number in _numbers_shown(message))


@pytest.mark.parametrize("bug", sorted(ROPE_MISTAKES))
def test_rope_check_names_each_mistake_without_an_expected_value(bug):
    """The message names the mistake and where; never what the spec implies, nor a tool that prints it."""
    fn = ROPE_MISTAKES[bug]
    with pytest.raises(CheckFailed) as info:
        check_conforming_rope(fn, **EXERCISE_ROPE)
    message = str(info.value)
    assert bug in message and "Where: " in message
    # pair i of the 8 rotated features turns at 10000**(-2i/8): 1, 0.1, 0.01, 0.001
    for theta in (10000.0 ** (-2 * i / 8) for i in range(1, 4)):
        assert not _shows(message, theta), message
    assert "expected" not in message and not re.search(r"\d+ (is|are) meant", message), message
    assert "attention factor is" not in message, message  # the spec's factor, 1
    assert "diagnose(" not in message and "whole report" not in message, message
    assert "reference numerics" not in message, message
    # every number the kit's own evidence holds as expected is absent too
    from posenc_helpers.conformance import diagnose

    for item in diagnose("rope", fn, **EXERCISE_ROPE).evidence:
        if item.expected is not None and item.expected != int(item.expected):
            assert not _shows(message, item.expected), (item, message)
    if bug == "no named mistake":
        assert 'chapter 07, "The rotation and the relative score"' in message


def test_rope_check_points_to_the_book_section_of_the_mistake():
    with pytest.raises(CheckFailed) as info:
        check_conforming_rope(ROPE_MISTAKES["'layout'"], **EXERCISE_ROPE)
    message = str(info.value)
    assert 'chapter 07, "Two layouts, one permutation apart"' in message
    assert "feature 0 turns into feature 1" in message  # what the function does, not what it should


def test_rope_check_points_p_rope_mistakes_to_chapter_13(monkeypatch):
    """The section named follows the spec's rescaling (explained_in's variant): under p-RoPE, chapter 13."""
    from posenc_helpers.checks import ch14_positional_bugs_museum as module
    from posenc_helpers.conformance import Report

    def report_for(scaling):
        spec = {"head_dim": 16, "base": 10000.0, "layout": "half"}
        if scaling is not None:
            spec["scaling"] = scaling
        return Report("rope", spec, ok=False, bug="rotary-width", bugs=("rotary-width",))

    for scaling, section in [
        ({"method": "proportional", "share": 0.25}, 'chapter 13, "Proportional p-RoPE'),
        (None, 'chapter 12, "Partial rotary"'),
    ]:
        monkeypatch.setattr(module, "diagnose", lambda kind, fn, _s=scaling, **spec: report_for(_s))
        with pytest.raises(CheckFailed) as info:
            check_conforming_rope(lambda x, t: x, head_dim=16, base=10000.0, layout="half")
        assert f"The book explains 'rotary-width' in {section}" in str(info.value)


# --------------------------------------------------------------------------- check_conforming_alibi
def test_alibi_check_accepts_the_paper_slopes():
    assert check_conforming_alibi(alibi_by_hand())


def test_alibi_check_names_the_non_power_of_two_slopes_the_head_index_and_the_sign():
    with pytest.raises(CheckFailed, match="'alibi-slopes-non-power-of-two'"):
        check_conforming_alibi(alibi_by_hand(slopes=mlx_slopes))
    with pytest.raises(CheckFailed, match="'off-by-one'.*a further difference it cannot name"):
        check_conforming_alibi(alibi_by_hand(slopes=lambda n, b: [2.0 ** (-b * h / n) for h in range(n)]))
    flipped = alibi_by_hand()
    with pytest.raises(CheckFailed, match="'alibi-sign'"):
        check_conforming_alibi(lambda n, s: -flipped(n, s))


def test_alibi_check_messages_never_reveal_the_slopes():
    with pytest.raises(CheckFailed) as info:
        check_conforming_alibi(alibi_by_hand(slopes=mlx_slopes))
    message = str(info.value)
    for n in (6, 12):
        for slope in slopes_by_hand(n):
            assert f"{slope:.6g}" not in message


ALIBI_MISTAKES = {
    "'alibi-slopes-non-power-of-two'": alibi_by_hand(slopes=mlx_slopes),
    "'off-by-one'": alibi_by_hand(slopes=lambda n, b: [2.0 ** (-b * h / n) for h in range(n)]),
    "'alibi-sign'": lambda n, s: -alibi_by_hand()(n, s),
    "no named mistake": alibi_by_hand(max_bias=4.0),
    "reordered": alibi_by_hand(slopes=lambda n, b: sorted(slopes_by_hand(n, b))),
}


@pytest.mark.parametrize("bug", sorted(ALIBI_MISTAKES))
def test_alibi_check_names_each_mistake_without_a_slope(bug):
    fn = ALIBI_MISTAKES[bug]
    with pytest.raises(CheckFailed) as info:
        check_conforming_alibi(fn)
    message = str(info.value)
    if bug.startswith("'"):
        assert bug in message
    for n in (4, 6, 8, 12):
        for slope in slopes_by_hand(n):
            assert not _shows(message, slope), (slope, message)
    assert "expected" not in message and "diagnose(" not in message and "whole report" not in message
    assert "reference numerics" not in message


def test_alibi_check_sends_what_it_cannot_name_to_the_slopes_section():
    for fn in (ALIBI_MISTAKES["no named mistake"], ALIBI_MISTAKES["'off-by-one'"]):
        with pytest.raises(CheckFailed) as info:
            check_conforming_alibi(fn)
        assert 'chapter 08, "The slopes" (notebooks/08_alibi.html#alibi-slopes)' in str(info.value)


def test_alibi_check_refuses_what_is_not_a_function():
    with pytest.raises(CheckFailed, match="should be a function"):
        check_conforming_alibi([0.5, 0.25])
    assert not check_conforming_alibi(Ellipsis)


# --------------------------------------------------------------------------- figure and explorer
def test_plot_draws_one_line_per_bug_and_rejects_bad_lines():
    ax = plot_score_errors(np.arange(3), {"a": [0.0, 1.0, 2.0], "b": [0.0, 0.5, 0.5]}, xlabel="offset (tokens)")
    assert [line.get_ydata().tolist() for line in ax.lines] == [[0.0, 1.0, 2.0], [0.0, 0.5, 0.5]]
    assert ax.lines[0].get_linestyle() != ax.lines[1].get_linestyle()
    assert ax.get_xlabel() == "offset (tokens)"
    plt.close("all")
    with pytest.raises(ValueError, match="shape of x"):
        plot_score_errors(np.arange(3), {"a": [0.0, 1.0]}, xlabel="t")
    with pytest.raises(ValueError, match=">= 0"):
        plot_score_errors(np.arange(2), {"a": [0.0, -1.0]}, xlabel="t")


def test_explorer_scores_by_hand():
    """The right score of q at m and k at n: over the pairs, (q.k) cos(phi theta_i) + (q x k) sin(phi theta_i),
    phi = m - n."""
    explorer = BugSymptomExplorer(bug="base", position=256)
    q, k = explorer.query, explorer.key
    right = explorer.right_line.get_ydata()
    for offset in (0, 1, 7, 32):
        score = 0.0
        for i in range(8):
            angle = offset * 500000.0 ** (-2 * i / 16)
            qa, qb, ka, kb = q[i], q[i + 8], k[i], k[i + 8]
            score += (qa * ka + qb * kb) * math.cos(angle) + (qa * kb - qb * ka) * math.sin(angle)
        assert right[offset] == pytest.approx(score, abs=1e-9)
    # a hard-coded base of 10000: the same formula with 10000, still a function of the offset alone
    bugged = explorer.bug_line.get_ydata()
    for offset in (0, 5):
        score = 0.0
        for i in range(8):
            angle = offset * 10000.0 ** (-2 * i / 16)
            qa, qb, ka, kb = q[i], q[i + 8], k[i], k[i + 8]
            score += (qa * ka + qb * kb) * math.cos(angle) + (qa * kb - qb * ka) * math.sin(angle)
        assert bugged[offset] == pytest.approx(score, abs=1e-9)


def test_explorer_status_follows_the_controls():
    explorer, changes = BugSymptomExplorer.demo()
    for change in changes:
        explorer.set(**change)
        values = explorer.values
        assert f"query at position {values['position']:,}" in explorer.status.value
        assert "exact at offset 0" in explorer.status.value  # every bug here is shared by queries and keys


# The checks' policy cases (tests/chapters/test_checks_policy.py runs them): the call, a
# right answer worked out by hand, and a clearly wrong one.
POLICY_CASES = {
    "check_conforming_rope": (
        lambda a: check_conforming_rope(
            rope_by_hand(500000.0, positions_from=a), head_dim=8, base=500000.0, layout="half"
        ),
        0.0,  # positions as given
        1.0,  # counted from 1
    ),
    "check_conforming_alibi": (
        lambda a: check_conforming_alibi(alibi_by_hand(max_bias=a)),
        8.0,  # the paper's 2**(-8h/n)
        4.0,
    ),
}

# Bad input to the chapter's helpers (tests/core/test_bad_input.py runs them): the call,
# the exception, and words its message must contain.
BAD_INPUT_CASES = [
    (lambda: check_conforming_rope(None, head_dim=7, base=1e4, layout="half"), ValueError, ["head_dim"]),
    (lambda: check_conforming_rope(None, head_dim=8, base=-1.0, layout="half"), ValueError, ["base"]),
    (lambda: check_conforming_rope(None, head_dim=8, base=1e4, layout="split"), ValueError, ["layout"]),
    (
        lambda: check_conforming_rope(None, head_dim=8, base=1e4, layout="half", rotary_dim=12),
        ValueError,
        ["rotary_dim"],
    ),
    (lambda: plot_score_errors(np.zeros((2, 2)), {"a": [0.0]}, xlabel="t"), ValueError, ["x", "1-D"]),
    (lambda: plot_score_errors(np.arange(2), [0.0, 1.0], xlabel="t"), TypeError, ["errors", "mapping"]),
    (lambda: BugSymptomExplorer(bug="typo"), ValueError, ["bug"]),
    (lambda: BugSymptomExplorer(position=100), ValueError, ["position"]),
]


# --------------------------------------------------------------------------- issue 46: hints that teach
def _slopes_taking(start):
    """The slope mistakes of exercise 14.2 by hand: the extra heads take every other slope of the next
    power of two from ``start`` (1: the lower power's slopes again); None: 2**(-8h/n) as it is."""

    def slopes(n, max_bias=8.0):
        if start is None or n & (n - 1) == 0:
            return [2.0 ** (-max_bias * h / n) for h in range(1, n + 1)]
        lower = 2 ** int(math.floor(math.log2(n)))
        twice = [2.0 ** (-max_bias * h / (2 * lower)) for h in range(1, 2 * lower + 1)]
        return [2.0 ** (-max_bias * h / lower) for h in range(1, lower + 1)] + twice[start::2][: n - lower]

    return slopes


# Words that would give the fix away: which slice of the 2p-head list, or which of its slopes.
_FIX_WORDS = re.compile(r"\[\s*-?\d*\s*:|::|every other|odd-numbered|even-numbered|from the first|1st, 3rd")


@pytest.mark.parametrize("start", [1, None], ids=["from-the-second", "formula-as-it-is"])
def test_alibi_hint_teaches_without_naming_the_slice(start):
    """Issue 46: exercise 14.2's message listed every variant of the slope mistake, "[1::2] instead of
    [0::2]" among them, which is the answer. Now it says what the paper's list is made of and where the
    book explains it, and not which slopes to take."""
    with pytest.raises(CheckFailed) as info:
        check_conforming_alibi(alibi_by_hand(slopes=_slopes_taking(start)))
    message = str(info.value)
    assert "'alibi-slopes-non-power-of-two'" in message
    assert "it builds the list from the p-head slopes and some of the 2p-head slopes" in message
    assert not _FIX_WORDS.search(message), message
    for n in (6, 12):
        for slope in slopes_by_hand(n):
            assert not _shows(message, slope), (slope, message)
    if start == 1:
        assert "Where: n_heads=6, seq_len=6: the extra heads repeat the lower power of two's slopes (head 4)." in (
            message
        )


def test_explained_in_names_the_working_copy_in_jupyterlab(tmp_path, monkeypatch):
    """Issue 46: in JupyterLab the check said "notebooks/08_alibi.html#alibi-slopes", a page that does not
    exist there. In a folder of working copies (a kernel runs in its notebook's folder) it names the
    chapter, the section's number as the copy's heading shows it, and the notebook beside."""
    from posenc_helpers.conformance import WORKING_COPIES_MARKER

    (tmp_path / WORKING_COPIES_MARKER).write_text("")
    heading = {"cell_type": "markdown", "metadata": {}, "source": ["## 8.2 The slopes\n", "\n", "Each head h ..."]}
    notebook = {"cells": [heading], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "08_alibi.ipynb").write_text(json.dumps(notebook))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CheckFailed) as info:
        check_conforming_alibi(ALIBI_MISTAKES["'alibi-slopes-non-power-of-two'"])
    message = str(info.value)
    assert message.endswith(
        "The book explains 'alibi-slopes-non-power-of-two' in chapter 8, section 8.2, \"The slopes\" "
        "(08_alibi.ipynb, in this folder)."
    ), message
    assert ".html" not in message and not _FIX_WORDS.search(message)
    for slope in slopes_by_hand(6):
        assert not _shows(message, slope)
    # without the marker (the website's stored outputs, nbval, a folder of other notebooks): the page
    (tmp_path / WORKING_COPIES_MARKER).unlink()
    with pytest.raises(CheckFailed, match=re.escape('chapter 08, "The slopes" (notebooks/08_alibi.html#alibi-slopes)')):
        check_conforming_alibi(ALIBI_MISTAKES["'alibi-slopes-non-power-of-two'"])
