"""Chapter 09 helpers: the exercise checks, the figures and the explorer.

Placeholders are not failures, right answers (computed here by plain loops with the math module)
pass, the typical wrong answers are rejected with a hint, and no message contains the expected
values; the figures and the explorer are tested for what they draw, how they react and what they
reject. Reference numbers are derived by hand in the comments (head width 128, base 10000,
L = 4096).
"""

import math
import re
from fractions import Fraction
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

from posenc_helpers.checks import CheckFailed, check_first_interpolated_collision, check_rescaled_frequencies
from posenc_helpers.plotting import plot_angle_errors, plot_stretch_factors
from posenc_helpers.widgets import RopeScalingExplorer

# The exercise: d_model 4096, 32 heads (head width 128), base 500000, s = 4.
D_MODEL, HEADS, BASE, S = 4096, 32, 500000.0, 4.0
HEAD = D_MODEL // HEADS


def _freqs(base, width, pairs=None):
    return [base ** (-2 * i / width) for i in range(pairs if pairs is not None else width // 2)]


THETA = _freqs(BASE, HEAD)
PI = [t / S for t in THETA]
NTK = _freqs(BASE * S ** (HEAD / (HEAD - 2)), HEAD)
RIGHT = np.array([PI, NTK])


def _check(answer):
    return check_rescaled_frequencies(answer, d_model=D_MODEL, n_heads=HEADS, base=BASE, factor=S)


def _numbers(text):
    return [float(m) for m in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", text)]


def _reveals(message, values):
    """True if the message holds any of the values (to 3 significant digits).

    Whole numbers are left out: pair 0 keeps the frequency 1 under NTK scaling, and messages name
    rows and pairs by small integers; the 62 other values are what must not leak.
    """
    found = _numbers(message)
    return any(math.isclose(x, v, rel_tol=1e-3) for x in found for v in values if v != round(v))


def test_placeholders_are_not_attempted():
    for result in (_check(None), _check(...), check_first_interpolated_collision(None, factor=5.0)):
        assert not result and result.status == "not attempted"
        assert repr(result).startswith("Not attempted yet")


def test_right_answers_pass():
    result = _check(RIGHT)
    assert result and repr(result).startswith("Correct")
    assert _check(RIGHT.tolist())
    assert _check(RIGHT * (1 + 1e-9))
    # a tiny model by hand: head width 4, base 100, s = 2: theta = [1, 0.1]; NTK base 100 * 2**2 = 400
    assert check_rescaled_frequencies([[0.5, 0.05], [1.0, 0.05]], d_model=8, n_heads=2, base=100.0, factor=2.0)


@pytest.mark.parametrize(
    "row, wrong, hint",
    [
        (0, [t * S for t in THETA], "multiplied"),
        (0, THETA, "original frequencies"),
        (0, [t / S for t in _freqs(10000.0, HEAD)], "base 10000"),
        (0, NTK, "NTK-aware row"),
        (1, PI, "position-interpolation row"),
        (1, THETA, "original frequencies"),
        (1, _freqs(BASE / S ** (HEAD / (HEAD - 2)), HEAD), "divided the base"),
        (1, _freqs(BASE * S ** (HEAD / 2), HEAD), "not d/2"),
        (1, _freqs(BASE * S, HEAD), "not 1"),
        (1, _freqs(BASE * S ** ((HEAD - 2) / HEAD), HEAD), "not (d-2)/d"),
        (1, _freqs(10000.0 * S ** (HEAD / (HEAD - 2)), HEAD), "base 10000"),
        (1, _freqs(BASE * S ** (D_MODEL / (D_MODEL - 2)), HEAD), "d_model"),
        (1, _freqs(BASE * S ** (D_MODEL / (D_MODEL - 2)), D_MODEL, HEAD // 2), "d_model"),
    ],
)
def test_typical_mistakes_get_a_hint(row, wrong, hint):
    answer = RIGHT.copy()
    answer[row] = wrong
    with pytest.raises(CheckFailed) as info:
        _check(answer)
    message = str(info.value)
    assert hint in message and f"row {row}" in message
    assert not _reveals(message, RIGHT.ravel())


def test_d_model_instead_of_head_width_changes_the_shape():
    theta = _freqs(BASE, D_MODEL)
    answer = np.array([[t / S for t in theta], _freqs(BASE * S ** (D_MODEL / (D_MODEL - 2)), D_MODEL)])
    with pytest.raises(CheckFailed, match="head width d_model / n_heads"):
        _check(answer)


def test_shape_and_other_wrong_answers_say_where():
    with pytest.raises(CheckFailed, match=r"shape \(2, 64\)"):
        _check(RIGHT[0])
    with pytest.raises(CheckFailed, match="transposed"):
        _check(RIGHT.T)
    wrong = RIGHT.copy()
    wrong[1, 17] *= 1.01
    with pytest.raises(CheckFailed) as info:
        _check(wrong)
    message = str(info.value)
    assert "row 1" in message and "pair 17" in message and "1 of 64" in message
    assert not _reveals(message, [RIGHT[1, 17]])
    with pytest.raises(CheckFailed, match="non-finite"):
        _check(np.full((2, 64), np.nan))
    with pytest.raises(CheckFailed, match="numpy array"):
        _check("theta")


@pytest.mark.parametrize(
    "kwargs, exception, words",
    [
        ({"d_model": 4096, "n_heads": 3, "base": 1e4, "factor": 2.0}, ValueError, ["n_heads", "d_model"]),
        ({"d_model": 4096.0, "n_heads": 32, "base": 1e4, "factor": 2.0}, TypeError, ["d_model"]),
        ({"d_model": 4096, "n_heads": 32, "base": 0.0, "factor": 2.0}, ValueError, ["base", "> 0"]),
        ({"d_model": 4096, "n_heads": 32, "base": 1e4, "factor": 1.0}, ValueError, ["factor", "> 1"]),
        ({"d_model": 4096, "n_heads": 32, "base": 1e4, "factor": "2"}, TypeError, ["factor"]),
    ],
)
def test_rescaled_frequencies_rejects_bad_arguments(kwargs, exception, words):
    with pytest.raises(exception) as info:
        check_rescaled_frequencies(RIGHT, **kwargs)
    for word in words:
        assert word in str(info.value)


# --------------------------------------------------------------------------- colliding t/s
def _first_collision_by_loop(s, bits):
    """Round t/s to `bits` significant bits, ties to even, with exact rational arithmetic."""

    def round_bits(x):
        exponent = math.floor(math.log2(x)) if x > 0 else 0
        while x > 0 and Fraction(2) ** exponent > x:  # guard against float rounding in log2
            exponent -= 1
        while x > 0 and Fraction(2) ** (exponent + 1) <= x:
            exponent += 1
        step = Fraction(2) ** (exponent - bits + 1)
        q, r = divmod(x, step)
        if r * 2 > step or (r * 2 == step and q % 2 == 1):
            q += 1
        return q * step

    previous = round_bits(Fraction(0))
    t = 0
    while True:
        current = round_bits(Fraction(t + 1) / Fraction(s))
        if current == previous:
            return t
        previous, t = current, t + 1


# By hand for s = 5 in bfloat16: t/5 climbs in steps of 0.2; from 32 up the spacing of bfloat16 is
# 2**(5 - 7) = 0.25 > 0.2, so neighbours can share a value: 162/5 = 32.4 and 163/5 = 32.6 both round
# to 32.5. Below 32 the spacing is at most 0.125 < 0.2, so no earlier collision.
FIRST_S5_BF16 = 162


def test_collision_reference_by_loop_agrees_with_hand_value():
    assert _first_collision_by_loop(5, 8) == FIRST_S5_BF16
    assert _first_collision_by_loop(1, 8) == 256


@pytest.mark.parametrize(
    "factor, dtype, bits",
    [(5.0, "bfloat16", 8), (3.0, "bfloat16", 8), (1.0, "bfloat16", 8), (5.0, "float16", 11), (2.5, "float16", 11)],
)
def test_first_collision_right_answers(factor, dtype, bits):
    expected = _first_collision_by_loop(Fraction(factor).limit_denominator(1000), bits)
    assert check_first_interpolated_collision(expected, factor=factor, dtype=dtype)
    assert check_first_interpolated_collision(np.int64(expected), factor=factor, dtype=dtype)
    assert check_first_interpolated_collision(float(expected), factor=factor, dtype=dtype)


@pytest.mark.parametrize(
    "answer, hint",
    [
        (FIRST_S5_BF16 + 1, "second position"),
        (FIRST_S5_BF16 / 5, "interpolated position t/s"),
        (256, "integer positions collide"),
        (_first_collision_by_loop(5, 11), "answer for float16"),
        (1, "not stored exactly"),
    ],
)
def test_first_collision_typical_mistakes(answer, hint):
    with pytest.raises(CheckFailed) as info:
        check_first_interpolated_collision(answer, factor=5.0)
    message = str(info.value)
    assert hint in message
    assert str(FIRST_S5_BF16) not in message


def test_first_collision_multiplying_by_s_is_recognised():
    # t * 5 in bfloat16: the loop above with s = 1/5 finds where 5t and 5(t+1) first share a value
    wrong = _first_collision_by_loop(Fraction(1, 5), 8)
    with pytest.raises(CheckFailed, match="multiplied by s"):
        check_first_interpolated_collision(wrong, factor=5.0)


def test_first_collision_before_and_after_get_one_message_and_malformed():
    with pytest.raises(CheckFailed, match="is not the first t at which") as before:
        check_first_interpolated_collision(100, factor=5.0)
    assert str(FIRST_S5_BF16) not in str(before.value)
    with pytest.raises(CheckFailed, match="is not the first t at which") as after:
        check_first_interpolated_collision(200, factor=5.0)
    assert str(FIRST_S5_BF16) not in str(after.value)
    # no "comes later" or "too late": one message whichever side, so the check cannot be bisected
    assert str(before.value) == str(after.value)
    with pytest.raises(CheckFailed, match="whole number"):
        check_first_interpolated_collision(161.5, factor=5.0)
    with pytest.raises(CheckFailed, match="single integer"):
        check_first_interpolated_collision([162, 163], factor=5.0)
    with pytest.raises(CheckFailed, match="finite"):
        check_first_interpolated_collision(np.nan, factor=5.0)


@pytest.mark.parametrize(
    "kwargs, exception, words",
    [
        ({"factor": 0.5}, ValueError, ["factor", ">= 1"]),
        ({"factor": 5000.0}, ValueError, ["factor", "1024"]),
        ({"factor": "5"}, TypeError, ["factor"]),
        ({"factor": 5.0, "dtype": "float32"}, ValueError, ["dtype", "'bfloat16'"]),
        ({"factor": 5.0, "dtype": np.float16}, TypeError, ["dtype"]),
    ],
)
def test_first_collision_rejects_bad_arguments(kwargs, exception, words):
    with pytest.raises(exception) as info:
        check_first_interpolated_collision(162, **kwargs)
    for word in words:
        assert word in str(info.value)


# --------------------------------------------------------------------------- never reveal
def _messages(check, answers):
    out = []
    for answer in answers:
        with pytest.raises(CheckFailed) as info:
            check(answer)
        out.append(str(info.value))
    return out


def test_rescaled_frequencies_messages_never_reveal_the_answer():
    rng = np.random.default_rng(3)
    wrong = [
        RIGHT * 1.5,
        RIGHT[::-1],
        RIGHT + rng.normal(scale=1e-3, size=RIGHT.shape),
        RIGHT[:, :10],
        np.zeros((2, 64)),
        RIGHT.T,
    ]
    for row in (0, 1):
        for pair in (0, 5, 63):
            answer = RIGHT.copy()
            answer[row, pair] *= 1.1
            wrong.append(answer)
    for message in _messages(_check, wrong):
        assert not _reveals(message, RIGHT.ravel()), message
        # the expected values formatted the way the messages format numbers (6 significant digits)
        tokens = set(re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", message))
        assert not any(f"{v:.6g}" in tokens for v in RIGHT.ravel() if v != round(v)), message


def test_first_collision_messages_never_reveal_the_answer():
    answers = [0, 1, 2, 50, 100, 161, 163, 164, 200, 256, 257, 1000, 32.4, 161.5, -3]
    messages = _messages(lambda a: check_first_interpolated_collision(a, factor=5.0), answers)
    for message in messages:
        assert not re.search(rf"(?<![\d.]){FIRST_S5_BF16}(?![\d])", message), message


# --------------------------------------------------------------------------- the graded form: a function
def _loop_for(dtype):
    bits = {"bfloat16": 8, "float16": 11}[dtype]
    return lambda s: _first_collision_by_loop(Fraction(s).limit_denominator(1000), bits)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_first_collision_function_is_run_on_other_scales(dtype):
    result = check_first_interpolated_collision(_loop_for(dtype), factor=5.0, dtype=dtype)
    assert result and "your function finds the first collision for s = 3, 4, 7 too" in repr(result)


def test_first_collision_function_that_only_knows_the_exercise_fails():
    # right for s = 5 (162) only; for s = 3 the first collision is elsewhere
    expected_s3 = _first_collision_by_loop(3, 8)
    with pytest.raises(CheckFailed) as info:
        check_first_interpolated_collision(lambda s: FIRST_S5_BF16, factor=5.0)
    message = str(info.value)
    assert "not for every scale" in message and "s = 3" in message and "does it use its argument s?" in message
    assert str(expected_s3) not in message
    with pytest.raises(CheckFailed) as info:
        check_first_interpolated_collision(lambda s: FIRST_S5_BF16 if s == 5 else 0, factor=5.0)
    assert "s = 3" in str(info.value) and str(expected_s3) not in str(info.value)


def test_first_collision_function_mistakes_are_named():
    with pytest.raises(CheckFailed, match="second position"):
        check_first_interpolated_collision(lambda s: _loop_for("bfloat16")(s) + 1, factor=5.0)
    with pytest.raises(CheckFailed, match="raised IndexError"):
        check_first_interpolated_collision(lambda s: [][0], factor=5.0)
    with pytest.raises(CheckFailed, match="single integer"):
        check_first_interpolated_collision(lambda s: [1, 2], factor=5.0)

    # right at s = 5, but multiplies by s elsewhere: named at the other scale, without its answer
    def multiplied(s):
        return FIRST_S5_BF16 if s == 5 else _first_collision_by_loop(1 / Fraction(s).limit_denominator(1000), 8)

    with pytest.raises(CheckFailed, match="s = 3.*multiplied by s"):
        check_first_interpolated_collision(multiplied, factor=5.0)


def test_first_collision_cannot_be_found_by_looping_over_the_check():
    """A function must be right for every scale, so no constant passes (the integer form still can)."""
    for guess in range(0, 400):
        with pytest.raises(CheckFailed):
            check_first_interpolated_collision(lambda s, g=guess: g, factor=5.0)


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
    start = text.index("## After rescaling")
    section = text[start : text.index("\n## ", start + 1)]
    prose = " ".join(section.split())
    assert "within 1000 steps" in prose and "{cite}`chen2023interpolation`" in prose  # Chen et al., abstract
    assert "for 400 steps at $s = 16$" in prose and "{cite}`peng2024yarn`" in prose  # Peng et al., section 4
    for key in ("men2024base", "hsieh2024ruler", "grattafiori2024llama3", "deepseekai2024v3"):
        assert f"{{cite}}`{key}`" in prose
    takeaways = " ".join(text[text.index("## Key takeaways") :].split())
    assert "followed by a short fine-tune at the new length" in takeaways and "perplexity" in takeaways
