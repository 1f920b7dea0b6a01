"""Policies every exercise check follows, tested across all of them.

1. A failed check shows its message only: in IPython the traceback through the check's
   source (which computes the answer) is replaced by one line, ``CheckFailed: <message>``.
2. No public check's docstring or signature gives an answer away, and no docstring example
   shows a right answer.
3. One precision policy: a float32 version of every right answer passes, a clearly wrong
   float32 answer fails.
4. Failure messages read as sentences.
5. An answer that is one number and could be typed is accepted at the precision its question
   states, is told "close: give more digits" when right to fewer digits, and otherwise gets one message
   whichever side of the answer it lies on: no direction, no expected value.

Right answers here are worked out with the math module and plain loops (or by hand, in the
comments), never with the package.
"""

from __future__ import annotations

import contextlib
import doctest
import inspect
import io
import math
import re
from pathlib import Path

import numpy as np
import pytest

import posenc_helpers.checks as checks
from posenc_helpers.checks import CheckFailed
from tools.chapters import chapter_notebooks

CHECKS = sorted(name for name in checks.__all__ if name.startswith("check_"))
F32 = np.float32


# --------------------------------------------------------------------------- references
def pe_row(t, d, base=10000.0, layout="interleaved"):
    """Row t of the sinusoidal encoding: pair k turns at base**(-2k/d)."""
    sines = [math.sin(t * base ** (-2 * k / d)) for k in range(d // 2)]
    cosines = [math.cos(t * base ** (-2 * k / d)) for k in range(d // 2)]
    if layout == "concat":
        return sines + cosines
    return [v for pair in zip(sines, cosines, strict=True) for v in pair]


def shift_by_hand(phi, d, base=10000.0):
    """M(phi) entry by entry: [sin, cos] of pair k -> [[c, s], [-s, c]] at the angle omega_k phi."""
    m = np.zeros((d, d))
    for k in range(d // 2):
        angle = base ** (-2 * k / d) * phi
        c, s = math.cos(angle), math.sin(angle)
        m[2 * k, 2 * k], m[2 * k, 2 * k + 1], m[2 * k + 1, 2 * k], m[2 * k + 1, 2 * k + 1] = c, s, -s, c
    return m


def concat_shift_by_hand(phi, d, base=10000.0):
    """The same rotations with the sine of pair k in column k and its cosine in column d/2 + k."""
    m = np.zeros((d, d))
    half = d // 2
    for k in range(half):
        angle = base ** (-2 * k / d) * phi
        c, s = math.cos(angle), math.sin(angle)
        m[k, k], m[k, half + k], m[half + k, k], m[half + k, half + k] = c, s, -s, c
    return m


def attention_by_loops(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    out = np.zeros((x.shape[0], w_v.shape[1]))
    for i in range(x.shape[0]):
        scores = [sum(q[i, c] * k[j, c] for c in range(q.shape[1])) / math.sqrt(q.shape[1]) for j in range(x.shape[0])]
        top = max(scores)
        weights = [math.exp(s - top) for s in scores]
        total = sum(weights)
        for j in range(x.shape[0]):
            out[i] += weights[j] / total * v[j]
    return out


def rotate_pairs(values, position, base, pairs_of):
    """RoPE by hand: pair i (features pairs_of[i]) turns by position * base**(-2i/len(values))."""
    out = list(values)
    for i, (a, b) in enumerate(pairs_of):
        angle = position * base ** (-2 * i / len(values))
        out[a] = values[a] * math.cos(angle) - values[b] * math.sin(angle)
        out[b] = values[a] * math.sin(angle) + values[b] * math.cos(angle)
    return out


def interleaved_pairs(width):
    return [(2 * i, 2 * i + 1) for i in range(width // 2)]


def first_near_repeat(omega, tolerance):
    t = 1
    while True:
        turns = omega * t / (2 * math.pi)
        if abs(turns - round(turns)) * 2 * math.pi < tolerance:
            return t
        t += 1


RNG = np.random.default_rng(12)
X_ATT = RNG.normal(size=(3, 4))
W_ATT = RNG.normal(size=(3, 4, 4)) / 2.0
READOUT = RNG.normal(size=(8, 3))
W_INTERLEAVED = RNG.normal(size=(16, 8)) / 4.0
X_ROPE, W_ROPE = RNG.normal(size=8), RNG.normal(size=(8, 8)) / 3.0
SINE_TABLE = np.array([[math.sin(w * t) for w in (1.0, 0.3, 0.05)] for t in range(40)])
CURVES = {("a", 0): [2.0, 2.5, 2.9], ("a", 1): [2.0, 2.3, 2.4], ("b", 0): [2.1, 2.1, 2.1]}
SLOPES_8 = [2.0**-h for h in range(1, 9)]  # 2**(-8h/8)
QUERY_AXIAL = np.array([0.5, -1.0, 0.25, 2.0, 1.5, 0.0, -0.75, 1.0])


def residual_by_normal_equations(table, offset):
    source, target = table[:-offset], table[offset:]
    solution = np.linalg.solve(source.T @ source, source.T @ target)
    return float(np.linalg.norm(source @ solution - target) / np.linalg.norm(target))


def rotated_query_by_hand():
    q = X_ROPE @ W_ROPE  # d_model 8, two heads of width 4; head 1 is features 4..7, at position 3
    return rotate_pairs(list(q[4:]), 3, 10000.0, interleaved_pairs(4))


def slopes_20_by_hand():
    # largest power of two below 20 is 16: 2**(-8h/16) = 2**(-h/2); then the 1st, 3rd, 5th, 7th of 32 heads
    return [2.0 ** (-h / 2) for h in range(1, 17)] + [2.0 ** (-h / 4) for h in (1, 3, 5, 7)]


def cache_bias_by_hand(slope):
    return [[-slope * (i - j) if j <= i else -math.inf for j in range(10)] for i in range(6, 10)]


def llama3_by_hand():
    # head_dim 8, base 10000: theta = 1, 0.1, 0.01, 0.001; wavelengths 6.28, 62.8, 628, 6283 tokens.
    # L = 64, edges L/4 = 16 and L/1 = 64: pair 0 kept, pair 1 blended, pairs 2 and 3 divided by 4.
    out = []
    for theta in (1.0, 0.1, 0.01, 0.001):
        wavelength = 2 * math.pi / theta
        if wavelength < 16:
            out.append(theta)
        elif wavelength > 64:
            out.append(theta / 4)
        else:
            smooth = (64 / wavelength - 1) / 3
            out.append((1 - smooth) * theta / 4 + smooth * theta)
    return out


def axial_by_hand(row, col):
    first = rotate_pairs(list(QUERY_AXIAL[:4]), row, 100.0, interleaved_pairs(4))
    second = rotate_pairs(list(QUERY_AXIAL[4:]), col, 100.0, interleaved_pairs(4))
    return first + second


def factor_function(sign, dtype):
    def encode(positions, seq_len):
        return np.array([[math.exp(sign * m * t) for m in SLOPES_8] for t in positions], dtype=dtype)

    return encode


BY_HAND_MASK = np.array([False, False, False, True, True, True, True, True])  # see test_ch11_train_short_test_long.py

# name: (call, right answer, clearly wrong answer). The answers are converted to float32 below.
CASES = {
    "check_permutation_matrix": (
        lambda a: checks.check_permutation_matrix(a, ["a", "b", "c"], ["c", "a", "b"]),
        [[0, 0, 1], [1, 0, 0], [0, 1, 0]],  # row 0 is c (source column 2), row 1 a, row 2 b
        np.eye(3),
    ),
    "check_equivariant_prediction": (
        lambda a: checks.check_equivariant_prediction(a, X_ATT, [2, 0, 1], *W_ATT),
        attention_by_loops(X_ATT[[2, 0, 1]], *W_ATT),
        attention_by_loops(X_ATT, *W_ATT),
    ),
    "check_symmetry_preserving_signal": (
        lambda a: checks.check_symmetry_preserving_signal(a, X_ATT, *W_ATT),
        np.tile([0.1, -0.2, 0.3, 0.4], (3, 1)),
        np.arange(12.0).reshape(3, 4),
    ),
    "check_step_table": (
        lambda a: checks.check_step_table(a, [2, 5, 50]),
        [1.0, 0.25, 1 / 49],
        [0.5, 0.2, 0.02],
    ),
    "check_first_dominant_position": (
        # rows of norm 3, 4, 5 in width 4: median 4, sqrt(d) = 2, so 10 * 4 = 2t at t = 20
        lambda a: checks.check_first_dominant_position(a, np.diag([3.0, 4.0, 5.0, 0.0])[:3], 10),
        20,
        19,
    ),
    "check_period_and_first_repeat": (
        lambda a: checks.check_period_and_first_repeat(a[0], a[1], omega=1.0, tolerance=0.05),
        [2 * math.pi, first_near_repeat(1.0, 0.05)],
        [1.0, first_near_repeat(1.0, 0.05)],
    ),
    "check_shift_residual": (
        lambda a: checks.check_shift_residual(a, SINE_TABLE, 2),
        residual_by_normal_equations(SINE_TABLE, 2),
        residual_by_normal_equations(SINE_TABLE, 2) * 2,
    ),
    "check_encoding_row": (
        lambda a: checks.check_encoding_row(a, 7, 6),
        pe_row(7, 6),
        pe_row(7, 6)[1:] + pe_row(7, 6)[:1],
    ),
    "check_dimension_wavelength": (
        lambda a: checks.check_dimension_wavelength(a, 301, 512),
        2 * math.pi * 10000.0 ** (300 / 512),  # dimension 301 is the cosine of pair 150
        2 * math.pi * 10000.0 ** (301 / 512),
    ),
    "check_concat_readout": (
        lambda a: checks.check_concat_readout(a, READOUT),
        READOUT[[0, 2, 4, 6, 1, 3, 5, 7]],  # the sines (even dimensions) first, then the cosines
        READOUT,
    ),
    "check_swapped_rotation_block": (
        # [cos, sin] at a + b with b = omega phi = 1: cos(a+b) = cos b cos a - sin b sin a, sin(a+b) = ...
        lambda a: checks.check_swapped_rotation_block(a, omega=0.5, offset=2.0),
        [[math.cos(1.0), -math.sin(1.0)], [math.sin(1.0), math.cos(1.0)]],
        [[math.cos(1.0), math.sin(1.0)], [-math.sin(1.0), math.cos(1.0)]],
    ),
    "check_concat_shift_matrix": (
        lambda a: checks.check_concat_shift_matrix(a, offset=2.5, d_model=6),
        concat_shift_by_hand(2.5, 6),
        concat_shift_by_hand(-2.5, 6),
    ),
    "check_shift_matrix": (
        lambda a: checks.check_shift_matrix(a, offset=-3, d_model=8),
        shift_by_hand(-3.0, 8),
        shift_by_hand(3.0, 8),
    ),
    "check_clipped_distances": (
        lambda a: checks.check_clipped_distances(a, query_len=5, key_len=8, max_distance=2),
        [[max(-2, min(2, j - i)) for j in range(8)] for i in range(5)],
        [[j - i for j in range(8)] for i in range(5)],
    ),
    "check_t5_buckets": (
        lambda a: checks.check_t5_buckets(a, 300, np.array([300, 299, 292, 284, 280, 250, 200, 188, 187, 172, 0, 301])),
        [0, 1, 8, 16, 17, 24, 30, 30, 31, 31, 31, 0],  # worked out in test_ch06_learned_and_relative.py
        [0, 1, 8, 16, 17, 24, 30, 30, 31, 31, 31, 31],
    ),
    "check_rotated_query": (
        lambda a: checks.check_rotated_query(a, X_ROPE, W_ROPE, head=1, n_heads=2, position=3),
        rotated_query_by_hand(),
        list((X_ROPE @ W_ROPE)[4:]),
    ),
    "check_converted_projection": (
        lambda a: checks.check_converted_projection(a, W_INTERLEAVED),
        W_INTERLEAVED[:, [0, 2, 4, 6, 1, 3, 5, 7]],  # first features of the pairs, then the second ones
        W_INTERLEAVED,
    ),
    "check_alibi_slopes": (
        lambda a: checks.check_alibi_slopes(a, n_heads=20),
        slopes_20_by_hand(),
        sorted(slopes_20_by_hand(), reverse=True),
    ),
    "check_alibi_head_bias": (
        # head 9 of 12 has the slope 2**-0.5 (the first extra slope of 16 heads), not a float32 number
        lambda a: checks.check_alibi_head_bias(a, slope=2**-0.5, seq_len=10, first_query=6),
        cache_bias_by_hand(2**-0.5),
        cache_bias_by_hand(-(2**-0.5)),
    ),
    "check_rescaled_frequencies": (
        # head width 4, base 100, s = 2: theta = 1, 0.1; PI halves them; NTK base 100 * 2**2 = 400
        lambda a: checks.check_rescaled_frequencies(a, d_model=8, n_heads=2, base=100.0, factor=2.0),
        [[0.5, 0.05], [1.0, 0.05]],
        [[1.0, 0.05], [0.5, 0.05]],
    ),
    "check_first_interpolated_collision": (
        lambda a: checks.check_first_interpolated_collision(a, factor=5.0),
        162,  # worked out in test_ch09_long_context.py
        163,
    ),
    "check_offset_keys": (
        lambda a: checks.check_offset_keys(a, offset=5, d_model=8, seq_len=12),
        [pe_row(j + 5, 8) for j in range(12)],
        [pe_row(j, 8) for j in range(12)],
    ),
    "check_alibi_weight_factor": (
        lambda a: checks.check_alibi_weight_factor(factor_function(a, F32), n_heads=8),
        -1.0,  # the sign of the exponent: the factor of the bias -m t
        1.0,
    ),
    "check_length_jumps": (
        lambda a: checks.check_length_jumps({"a": a[0], "b": a[1]}, CURVES),
        [0.5, 0.0],  # a: max(2.5 - 2.0, 2.3 - 2.0); b: 2.1 - 2.1
        [0.4, 0.0],  # a: the mean over the seeds
    ),
    "check_unseen_pairs": (
        lambda a: checks.check_unseen_pairs(a, head_dim=16, train_len=64, length=256),
        BY_HAND_MASK,
        ~BY_HAND_MASK,
    ),
    "check_position_ids": (
        lambda a: checks.check_position_ids(a, [[0, 0, 1, 1], [1, 1, 1, 1]]),
        [[0, 0, 0, 1], [0, 1, 2, 3]],
        [[0, 1, 2, 3], [0, 1, 2, 3]],
    ),
    "check_llama3_frequencies": (
        lambda a: checks.check_llama3_frequencies(
            a, head_dim=8, base=10000.0, factor=4.0, original_max_len=64, low_freq_factor=1.0, high_freq_factor=4.0
        ),
        llama3_by_hand(),
        [1.0 / 4, 0.1 / 4, 0.01 / 4, 0.001 / 4],
    ),
    "check_axial_query": (
        lambda a: checks.check_axial_query(a, query=QUERY_AXIAL, row=2, col=5, width=7, base=100.0),
        axial_by_hand(2, 5),
        axial_by_hand(5, 2),
    ),
}


def _cases_from_chapter_modules() -> dict:
    """A chapter's test module may keep its checks' cases next to its other tests, as a
    ``POLICY_CASES`` dict of the same form (``make chapter`` writes one)."""
    import importlib.util
    from pathlib import Path

    found = {}
    for path in sorted(Path(__file__).parent.glob("test_ch[0-9][0-9]_*.py")):
        if "POLICY_CASES" not in path.read_text():
            continue
        spec = importlib.util.spec_from_file_location(f"_policy_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found.update(module.POLICY_CASES)
    return found


CASES.update(_cases_from_chapter_modules())


def _as_float32(answer):
    if isinstance(answer, bool | float | int) and not isinstance(answer, bool):
        return F32(answer)
    if isinstance(answer, list) and answer and np.ndim(answer[0]) == 0 and len(answer) == 2:
        return [F32(v) for v in answer]  # the two scalars of a two-part answer
    return np.asarray(answer, dtype=F32)


def test_every_check_has_a_case():
    assert set(CASES) == set(CHECKS)


@pytest.mark.parametrize("name", CHECKS)
def test_right_answers_pass_in_float64_and_float32(name):
    call, right, _ = CASES[name]
    if name != "check_alibi_weight_factor":  # there the float32 is in the function
        assert call(right), "the float64 reference is wrong"
    result = call(_as_float32(right))
    assert result and repr(result).startswith("Correct"), repr(result)


@pytest.mark.parametrize("name", CHECKS)
def test_clearly_wrong_float32_answers_fail(name):
    call, _, wrong = CASES[name]
    with pytest.raises(CheckFailed):
        call(_as_float32(wrong))


# The five checks that rejected a right float32 answer, now with answers computed in float32.
def test_answers_computed_in_float32_pass():
    lengths = np.array([2, 3, 5, 10, 50, 512], dtype=F32)
    assert checks.check_step_table(F32(1) / (lengths - F32(1)), [2, 3, 5, 10, 50, 512])
    w32 = W_INTERLEAVED.astype(F32)
    assert checks.check_converted_projection(w32[:, [0, 2, 4, 6, 1, 3, 5, 7]], w32)
    heads16 = np.arange(1, 17, dtype=F32)
    slopes32 = np.concatenate([F32(2) ** (-heads16 / F32(2)), F32(2) ** (-np.array([1, 3, 5, 7], dtype=F32) / F32(4))])
    assert slopes32.dtype == F32 and checks.check_alibi_slopes(slopes32, n_heads=20)
    query, key = np.arange(6, 10, dtype=F32)[:, None], np.arange(10, dtype=F32)[None, :]
    slope = F32(2) ** F32(-0.5)
    bias32 = np.where(key > query, F32(-np.inf), -slope * (query - key))
    assert bias32.dtype == F32 and checks.check_alibi_head_bias(bias32, slope=2**-0.5, seq_len=10, first_query=6)

    def factor32(positions, seq_len):
        t = np.asarray(positions, dtype=F32)[:, None]
        return np.exp(-t * np.array(SLOPES_8, dtype=F32)[None, :])

    assert checks.check_alibi_weight_factor(factor32, n_heads=8)


def test_the_tolerance_policy():
    from posenc_helpers.checks._compare import SINGLE_PRECISION_RTOL, answer_eps, tolerances

    assert answer_eps(1.5) == answer_eps([1.0, 2.0]) == np.finfo(np.float64).eps
    assert answer_eps(np.float32(1.5)) == answer_eps([F32(1.0), F32(2.0)]) == np.finfo(F32).eps
    assert answer_eps(np.arange(3)) == answer_eps(True) == 0.0
    assert answer_eps(np.ones(2, np.float16)) == 2.0**-10
    assert tolerances([1.0], atol=1e-9, rtol=1e-9, scale=10.0) == (1e-9, 1e-9)
    assert tolerances(F32(1.0), atol=1e-9, rtol=1e-9, scale=10.0) == (
        SINGLE_PRECISION_RTOL * 10.0,
        SINGLE_PRECISION_RTOL,
    )
    # a check that compares relatively only stays relative only
    assert tolerances(F32(1.0), atol=0.0, rtol=1e-6, scale=10.0) == (0.0, SINGLE_PRECISION_RTOL)


def test_narrower_than_float32_answers_are_told_to_use_float32():
    steps16 = np.array([1.0, 0.25, 1 / 49], dtype=np.float16)  # 1/49 keeps only about 3 digits
    with pytest.raises(CheckFailed, match="float16, which keeps only about 3 significant digits"):
        checks.check_step_table(steps16, [2, 5, 50])


# --------------------------------------------------------------------------- 1. no traceback
@pytest.fixture(scope="module")
def shell(tmp_path_factory):
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    patch = pytest.MonkeyPatch()
    patch.setenv("IPYTHONDIR", str(tmp_path_factory.mktemp("ipython")))
    config = Config()
    config.HistoryManager.enabled = False
    instance = InteractiveShell.instance(config=config)
    yield instance
    InteractiveShell.clear_instance()
    patch.undo()


def _shown(shell, code):
    """What a notebook cell running ``code`` shows, without colours."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        result = shell.run_cell(code)
    assert isinstance(result.error_in_exec, CheckFailed)
    return re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue()), str(result.error_in_exec)


# exercise: (cell, hint the student must see, source text that computes the answer)
FAILING_CELLS = {
    "ex-02-steps": (
        "check_step_table([0.5, 1 / 3, 0.2], [2, 3, 5])",
        "you divided by n",
        "(n - 1.0)",
    ),
    "ex-04-layout": ("check_concat_readout(np.eye(8, 3), np.eye(8, 3))", "unchanged", "[perm]"),
    "ex-06-clipped": (
        "check_clipped_distances(np.arange(8) - np.arange(5)[:, None], query_len=5, key_len=8, max_distance=2)",
        "not clipped",
        "clipped_relative_positions(",
    ),
    "ex-05-swapped-block": (
        "check_swapped_rotation_block([[np.cos(1), np.sin(1)], [-np.sin(1), np.cos(1)]], omega=0.5, offset=2.0)",
        "[sin, cos]",
        "swap @ sin_first @ swap",
    ),
    "ex-08-slopes": ("check_alibi_slopes(np.ones(20), n_heads=20)", "slopes are not yet", "alibi_slopes(n)"),
}


@pytest.mark.parametrize("label", sorted(FAILING_CELLS))
def test_failed_check_in_ipython_shows_the_message_only(shell, label):
    cell, hint, giveaway = FAILING_CELLS[label]
    shell.run_cell("import numpy as np\nfrom posenc_helpers.checks import *")
    shown, message = _shown(shell, cell)
    assert hint in shown
    assert giveaway not in shown
    assert [line for line in shown.splitlines() if line.strip()] == [f"CheckFailed: {message}"]
    # no line of any check's source, and no trace of a traceback
    for module in (
        checks.ch02_naive_positions,
        checks.ch04_sine_cosine_pairs,
        checks.ch05_rotation_proof,
        checks._core,
        checks._compare,
    ):
        for line in inspect.getsource(module).splitlines():
            line = line.strip()
            if len(line) > 12 and line.strip("\"'f") not in message:
                assert line not in shown, line
    for word in ("Traceback", "File ", "---->", "compare_arrays"):
        assert word not in shown


def test_outside_ipython_a_failed_check_is_an_assertion_error():
    assert issubclass(CheckFailed, AssertionError)
    with pytest.raises(AssertionError, match="divided by n"):
        checks.check_step_table([0.5, 1 / 3, 0.2], [2, 3, 5])


# --------------------------------------------------------------------------- 2. docs and signatures
# Expressions and formulas that answer an exercise (the audit's findings, and their relatives).
GIVEAWAYS = {
    "ex-07-convert": [r"\[:,\s*perm\]", r"w\[:,\s*\[0,\s*2,\s*1,\s*3\]\]"],
    "ex-04-layout": [r"\w\[perm\]", r"\w\[\[0,\s*2,\s*1,\s*3\]\]"],
    "ex-10-alibi-factor": [r"exp\(\s*-\s*m_h", r"np\.exp\(-np\.outer", r"exp\(-t\s*\*"],
    "ex-01-useless-signal": [r"np\.ones\(\(3,\s*3\)\)", r"np\.tile\("],
    "ex-01-predict": [r"out\[\[", r"out\[order\]"],
    "ex-02-steps": [r"1\s*/\s*\(n\s*-\s*1\)", r"t\s*/\s*\(n\s*-\s*1\)"],
    "ex-02-dominant": [r"t\s*\*\s*sqrt\(d\)", r"sqrt\(d\)\s*=\s*2", r"ceil\("],
    "ex-03-residual": [r"linear_shift_fit\("],
    "ex-04-row": [r"base\s*\*\*\s*\(-2k", r"math\.sin\(2\)"],
    "ex-04-wavelength": [r"2\s*\*\s*pi\s*/\s*omega", r"2\s*\*\s*pi\s*\*\s*base", r"2 \* math\.pi \* 100"],
    "ex-05-swapped-block": [r"\[\[0\.0,\s*-1\.0\],\s*\[1\.0,\s*0\.0\]\]", r"swap\s*@"],
    "ex-05-compose": [r"shift_matrix\(-"],
    "ex-06-clipped": [r"clip\(j\s*-\s*i"],
    "ex-07-head-query": [r"theta_i\s*=\s*base", r"slice first"],
    "ex-08-slopes": [r"2\.0\s*\*\*\s*-h", r"2\^\(-8h/n\)", r"\[0::2\]"],
    "ex-08-cache": [r"-m\s*\(i\s*-\s*j\)\s*for"],
    "ex-09-rescale": [r"s\s*\*\*\s*\(head_dim", r"d\s*/\s*\(d\s*-\s*2\)", r"theta_i\s*/\s*s"],
    "ex-10-keys": [r"np\.arange\(\d+\)\s*\+\s*\d", r"PE\(j \+ 2\)"],
    "ex-11-unseen": [r"\(length - 1\) theta_i"],
    "ex-12-position-ids": [r"cumsum"],
    "ex-12-llama3": [r"smooth\s*=", r"scaled_rope_frequencies\("],
    "ex-12-axial": [r"axial_rope\("],
    "ex-13-packing": [r"np\.diff\(", r"!=\s*1\b", r"mask_path_document_ids\("],
}


@pytest.mark.parametrize("name", CHECKS)
def test_docstrings_and_signatures_never_give_an_answer_away(name):
    check = getattr(checks, name)
    shown = f"{name}{inspect.signature(check)}\n{inspect.getdoc(check)}"  # what ? and Shift-Tab show
    for label, patterns in GIVEAWAYS.items():
        for pattern in patterns:
            assert not re.search(pattern, shown), f"{name}'s help shows {pattern!r}, an answer to {label}"


@pytest.mark.parametrize("name", CHECKS)
def test_docstring_examples_never_show_a_right_answer(name):
    examples = doctest.DocTestParser().get_examples(inspect.getdoc(getattr(checks, name)))
    assert examples, f"{name} has no examples"
    shown = [example.want for example in examples]
    assert not any(want.startswith("Correct") for want in shown), f"{name} shows a right answer in its examples"
    assert any("CheckFailed" in (example.exc_msg or "") for example in examples), f"{name} shows no named mistake"


# --------------------------------------------------------------------------- 4. sentences
PLURAL_NAMES = ("steps", "weights", "slopes", "buckets", "keys", "frequencies", "ids")


def _failure(call, answer):
    with pytest.raises(CheckFailed) as info:
        call(answer)
    return str(info.value)


@pytest.mark.parametrize("name", CHECKS)
def test_failure_messages_read_as_sentences(name):
    call, right, wrong = CASES[name]
    messages = [_failure(call, _as_float32(wrong))]
    if name not in (
        "check_alibi_weight_factor",  # the answer is a function
        "check_length_jumps",  # the answer is a dict
        "check_period_and_first_repeat",  # the answer is two numbers
        "check_symmetry_preserving_signal",  # a constant added to every row still preserves the symmetry
    ):
        messages.append(_failure(call, np.asarray(right, dtype=float) + 0.375))
    for message in messages:
        assert message[:1].isalpha() or message[:1] in "[(", message
        assert message.rstrip()[-1] in ".)]", message
        assert not re.search(r" ,|(?<!\.) \.(?!\.)|  |\bat [,.]", message), message  # "6 .. 9" is fine
        for plural in PLURAL_NAMES:
            assert not re.search(rf"\b{plural} is\b", message), message


def test_scalar_answers_get_a_sentence_not_an_empty_index():
    message = _failure(lambda a: checks.check_period_and_first_repeat(a, None, omega=1.0, tolerance=0.05), 5.0)
    assert "The first is at ," not in message and "at ," not in message
    assert message == "period is not yet the number of tokens after which ω t has grown by one full turn."
    message = _failure(lambda a: checks.check_shift_residual(a, SINE_TABLE, 2), 0.75)
    assert message == "residual is not yet the relative residual of the best matrix mapping PE(t) to PE(t + 2)."


def test_plural_names_take_a_plural_verb():
    assert "your weights are not yet" in _failure(lambda a: checks.check_concat_readout(a, READOUT), READOUT)
    assert "slopes are not yet" in _failure(lambda a: checks.check_alibi_slopes(a, n_heads=20), np.ones(20))


def test_entries_are_named_by_position_not_by_index():
    keys = np.array([300, 299, 292, 284, 280, 250])
    right = np.array([0, 1, 8, 16, 17, 24])  # causal buckets, worked out in test_ch06_learned_and_relative.py
    wrong = right.copy()
    wrong[4] = 3
    message = _failure(lambda a: checks.check_t5_buckets(a, 300, keys), wrong)
    assert "The first is the key at position 280 (entry 4 of key_positions), where yours is 3." in message
    # the cache exercise: row 1 is the query at position 7
    bias = np.array(cache_bias_by_hand(0.25))
    bias[1, 2] = 0.5
    message = _failure(lambda a: checks.check_alibi_head_bias(a, slope=0.25, seq_len=10, first_query=6), bias)
    assert "The first is the entry of the query at position 7 and the key at position 2, where yours is 0.5." in message
    bias[1, 2] = math.nan
    message = _failure(lambda a: checks.check_alibi_head_bias(a, slope=0.25, seq_len=10, first_query=6), bias)
    assert "the query at position 7 and the key at position 2" in message


# --------------------------------------------------------------------------- visible check vs graded course


def test_the_shortcut_table_is_what_the_grader_reads():
    """The checks' table of refused helpers equals every check cell's ``answer`` and
    ``forbid`` metadata, which the graded course reads (issue 25: the visible check
    said "Correct" to an answer the grader gave no points)."""
    import nbformat

    from posenc_helpers.checks._core import GRADED_SHORTCUTS

    found = {}
    for path in chapter_notebooks():
        for cell in nbformat.read(path, as_version=4).cells:
            spec = cell.metadata.get("exercise", {})
            if spec.get("part") == "check" and spec.get("forbid"):
                name = re.search(r"\b(check_\w+)\(", cell.source).group(1)
                found[name] = (tuple(spec["answer"]), tuple(spec["forbid"]))
    assert found, "some exercise forbids a helper"
    assert found == GRADED_SHORTCUTS, "run make sync-setup: it writes posenc_helpers/data/graded_shortcuts.json"


def test_each_check_in_the_shortcut_table_passes_its_own_name():
    """A check names itself to passed() (check=...), rather than passed() finding it by walking
    the call stack: every passed() call inside a listed check gives exactly that check's name."""
    import ast
    import inspect

    from posenc_helpers import checks
    from posenc_helpers.checks._core import GRADED_SHORTCUTS

    for name in GRADED_SHORTCUTS:
        tree = ast.parse(inspect.getsource(getattr(checks, name)))
        calls = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "passed"
        ]
        assert calls, name
        for call in calls:
            given = {keyword.arg: keyword.value for keyword in call.keywords}
            assert isinstance(given.get("check"), ast.Constant) and given["check"].value == name, name


def test_a_shortcut_the_grader_refuses_is_named_by_the_visible_check(shell):
    setup = "import numpy as np\nfrom posenc_helpers import sinusoidal_encoding\nfrom posenc_helpers.checks import *"
    shell.run_cell(setup, store_history=True)
    shell.run_cell("pe_7 = sinusoidal_encoding(8, 6)[7]", store_history=True)  # the shortcut
    shortcut = shell.run_cell("check_encoding_row(pe_7, position=7, d_model=6)", store_history=True).result
    assert shortcut  # the value is right ...
    assert "earns no points" in repr(shortcut) and "`sinusoidal_encoding`" in repr(shortcut)  # ... graded, it is not
    assert "0.65" not in repr(shortcut)  # no entry of PE(7) (sin 7 = 0.657), only the helper's name
    # PE(7, 2k) = sin(7 w_k), PE(7, 2k+1) = cos(7 w_k), w_k = 10000^(-2k/6), written out.
    own = (
        "k = np.arange(3)\nw = 10000.0 ** (-2 * k / 6)\n"
        "pe_7 = np.ravel(np.column_stack([np.sin(7 * w), np.cos(7 * w)]))"
    )
    shell.run_cell(own, store_history=True)
    result = shell.run_cell("check_encoding_row(pe_7, position=7, d_model=6)", store_history=True).result
    assert result and "earns no points" not in repr(result)


def test_graded_shortcuts_reads_the_answer_cell_as_the_grader_does():
    from posenc_helpers.checks._core import graded_shortcuts

    history = ["pe_7 = None", "pe_7 = sinusoidal_encoding(8, 6)[7]", "x = sinusoidal_encoding(2, 2)"]
    assert graded_shortcuts("check_encoding_row", history) == ["sinusoidal_encoding"]
    assert graded_shortcuts("check_encoding_row", history[:1]) == []
    assert graded_shortcuts("check_dimension_wavelength", history) == []  # forbids nothing
    with pytest.raises(TypeError, match="check"):
        graded_shortcuts(None, history)
    with pytest.raises(TypeError, match="history"):
        graded_shortcuts("check_encoding_row", "pe_7 = 1")


# --------------------------------------------------------------------------- 5. numbers a student types
# Answers that are one real number: the exact value worked out here with math (and, for the
# residual, a QR projection instead of the check's lstsq), the precision the exercise's question
# states, in its words, and named mistakes worked out by hand with the hint each must get.
OMEGA_1 = 10000.0 ** (-1 / 5)  # column 1 of chapter 03's 100 x 5 study
EXERCISE_03_TABLE = np.array([[math.sin(t * 10000.0 ** (-j / 8)) for j in range(8)] for t in range(200)])


def residual_by_projection(table, offset):
    """|target - Q Q^T target| / |target|: the least-squares residual, Q an orthonormal basis of the sources."""
    source, target = table[:-offset], table[offset:]
    q, _ = np.linalg.qr(source)
    return float(np.linalg.norm(target - q @ (q.T @ target)) / np.linalg.norm(target))


def unfitted_residual(table, offset):
    source, target = table[:-offset], table[offset:]
    return float(np.linalg.norm(target - source) / np.linalg.norm(target))


RESIDUAL_03 = residual_by_projection(EXERCISE_03_TABLE, 3)
NUMERIC_CASES = {
    # ex-04-wavelength: dimension 301 is the cosine of pair 150, omega = 10000**(-300/512)
    "ex-04-wavelength": (
        lambda a: checks.check_dimension_wavelength(a, dimension=301, d_model=512),
        2 * math.pi * 10000.0 ** (300 / 512),
        2,
        "two decimal places",
        [
            (10000.0 ** (300 / 512), "a full turn is 2*pi radians, not 1"),
            (10000.0 ** (-300 / 512), "angular frequency"),
            (360 * 10000.0 ** (300 / 512), "not 360"),
            (2 * math.pi * 10000.0 ** (602 / 512), "dimension index"),
        ],
    ),
    # ex-03-period: a full turn, 2 pi, over omega_1 radians per token (first_repeat given right)
    "ex-03-period": (
        lambda a: checks.check_period_and_first_repeat(
            a, first_near_repeat(OMEGA_1, 0.05), omega=OMEGA_1, tolerance=0.05
        ),
        2 * math.pi / OMEGA_1,
        2,
        "two decimal places",
        [(1 / OMEGA_1, "this is 1/ω"), (math.pi / OMEGA_1, "half a turn"), (360 / OMEGA_1, "360")],
    ),
    # ex-03-residual: the sine-only table of 200 positions and width 8, offset 3
    "ex-03-residual": (
        lambda a: checks.check_shift_residual(a, EXERCISE_03_TABLE, 3),
        RESIDUAL_03,
        4,
        "four decimal places",
        [
            (RESIDUAL_03**2, "looks squared"),
            (residual_by_projection(EXERCISE_03_TABLE[::-1], 3), "other direction"),
            (unfitted_residual(EXERCISE_03_TABLE, 3), "M = identity"),
        ],
    ),
    # ex-11-jumps: in CURVES, method a rises by 0.5 and 0.3 (worst 0.5, mean 0.4, 0.9 at the longest)
    "ex-11-jumps": (
        lambda a: checks.check_length_jumps({"a": a, "b": 0.0}, CURVES),
        0.5,
        3,
        "three decimal places",
        [(-0.5, "sign flipped"), (0.4, "mean over the seeds"), (0.9, "longest length")],
    ),
}
DIRECTION_WORDS = re.compile(
    r"\b(too|higher|lower|earlier|later|larger|smaller|bigger|shorter|longer|above|below|increase|decrease|"
    r"overshoot|undershoot|exceeds?)\b",
    re.I,
)


def _shows_value(message, value):
    """Whether the message holds ``value`` written at any precision from 1 to 6 decimals or 2 to 8 digits."""
    written = {f"{value:.{k}f}" for k in range(1, 7)} | {f"{value:.{k}g}" for k in range(2, 9)}
    written |= {f"{value:.0f}"} if abs(value) >= 10 else set()
    return any(re.search(rf"(?<![\d.]){re.escape(w)}(?![\d])", message) for w in written)


@pytest.mark.parametrize("label", sorted(NUMERIC_CASES))
def test_a_number_typed_at_the_stated_precision_passes(label):
    call, exact, decimals, _, _ = NUMERIC_CASES[label]
    unit = 10.0**-decimals
    typed = [
        exact,
        round(exact, decimals),  # rounded as the question asks
        round(exact, decimals + 2),  # more digits than asked
        round(exact, decimals) + 0.4 * unit,  # digits beyond those asked for, rounding the same
        round(exact, decimals) - 0.4 * unit,
        F32(round(exact, decimals)),
        F32(exact),
        np.array([round(exact, decimals)]),
    ]
    for answer in typed:
        result = call(answer)
        assert result and repr(result).startswith("Correct"), (answer, repr(result))


@pytest.mark.parametrize("label", sorted(NUMERIC_CASES))
def test_a_number_that_does_not_round_to_the_value_is_refused(label):
    """Issue 46: 1386.54 passed for 1386.5319... (within one unit of the last decimal). A number
    passes only when it rounds to the value at the stated precision: one unit off the rounding,
    on either side, or a truncation that is not the rounding, gets the one message, no "close"."""
    call, exact, decimals, _, _ = NUMERIC_CASES[label]
    unit = 10.0**-decimals
    near = [round(round(exact, decimals) + step * unit, decimals) for step in (1, -1, 2, -2)]
    truncated = round(math.floor(exact / unit) * unit, decimals)
    if abs(truncated - round(exact, decimals)) > unit / 2:
        near.append(truncated)
    # a neighbour that reads with fewer decimals (0.3700 is 0.37) is right to its digits: "close" is its message
    messages = {_failure(call, typed) for typed in near if checks._compare.typed_decimals(typed) == decimals}
    assert len(messages) == 1, messages
    (message,) = messages
    assert "close" not in message and not DIRECTION_WORDS.search(message) and not _shows_value(message, exact)


# (ex-11-jumps reads a dict and names an entry that is not a number itself: "should be a number (nats)".)
@pytest.mark.parametrize("label", sorted(set(NUMERIC_CASES) - {"ex-11-jumps"}))
def test_a_number_typed_as_a_string_is_told_it_is_a_string(label):
    call, exact, decimals, _, _ = NUMERIC_CASES[label]
    message = _failure(call, f"{round(exact, decimals)}")
    assert "not a string: write the number" in message and "without quotes" in message, message
    assert not _shows_value(message, exact), message


@pytest.mark.parametrize("label", sorted(NUMERIC_CASES))
def test_a_number_right_to_fewer_digits_is_told_to_give_more(label):
    """Rounded or truncated to fewer decimals than asked for: "close", with no direction."""
    call, exact, decimals, words, _ = NUMERIC_CASES[label]
    unit = 10.0**-decimals
    fewer = [round(exact, decimals - 1), math.trunc(exact * 10 ** (decimals - 1)) / 10 ** (decimals - 1)]
    if decimals >= 2:
        fewer.append(round(exact, decimals - 2))
    for answer in fewer:
        if abs(answer - exact) <= unit:
            continue  # rounded to fewer decimals, it happens to be right to the precision asked for
        message = _failure(call, answer)
        assert f"is close: it is right to the digits it has; give more digits (the question asks for {words})" in (
            message
        ), message
        assert not DIRECTION_WORDS.search(message), message
        assert not _shows_value(message, exact), message


@pytest.mark.parametrize("label", sorted(NUMERIC_CASES))
def test_a_number_just_outside_the_precision_is_not_close_and_gives_no_side(label):
    """Two units of the last decimal off, above or below: one message, no "close" (a "close" for
    a band around the answer would give the answer away as the middle of the band's edges)."""
    call, exact, decimals, _, _ = NUMERIC_CASES[label]
    unit = 10.0**-decimals
    above, below = _failure(call, round(exact + 2 * unit, decimals)), _failure(call, round(exact - 2 * unit, decimals))
    assert above == below and "close" not in above, (above, below)
    assert not DIRECTION_WORDS.search(above) and not _shows_value(above, exact), above


@pytest.mark.parametrize("label", sorted(NUMERIC_CASES))
def test_wrong_numbers_above_and_below_get_one_message_without_direction_or_answer(label):
    call, exact, decimals, _, _ = NUMERIC_CASES[label]
    above, below = _failure(call, exact * 1.25 + 0.1), _failure(call, exact * 0.75 - 0.1)
    assert above == below, (above, below)
    for message in (above, below):
        assert "close" not in message and "Hint" not in message, message
        assert not DIRECTION_WORDS.search(message), message
        assert not _shows_value(message, exact), message


@pytest.mark.parametrize("label", sorted(NUMERIC_CASES))
def test_named_mistakes_are_named_only_at_the_stated_precision(label):
    call, exact, decimals, _, mistakes = NUMERIC_CASES[label]
    unit = 10.0**-decimals
    for mistake, hint in mistakes:
        assert abs(mistake - exact) > 2 * unit, f"{label}: the precision cannot tell {hint!r} from the answer"
        for typed in (mistake, round(mistake, decimals)):
            message = _failure(call, typed)
            assert "Hint:" in message and hint in message, (typed, message)
            assert not _shows_value(message, exact), message
        # three units of the last decimal off the mistake is not that mistake at this precision
        message = _failure(call, mistake + 3 * unit)
        assert hint not in message, message


def test_the_exercises_state_the_precision_their_checks_accept():
    """The question a student reads says what the check accepts (issue: 1386.53 was rejected)."""
    import nbformat

    wanted = {
        "04_sine_cosine_pairs": ("ex-04-wavelength", "to two decimal places"),
        "03_sine_only": ("ex-03-residual", "to four decimal places"),
        "11_train_short_test_long": ("ex-11-jumps", "to three decimal places"),
    }
    period = ("ex-03-period", "its period in tokens, to two decimal places")
    root = Path(__file__).resolve().parents[2] / "notebooks"
    for stem, (label, words) in wanted.items():
        cells = nbformat.read(root / f"{stem}.ipynb", as_version=4).cells
        questions = [c.source for c in cells if c.cell_type == "markdown" and f":label: {label}" in c.source]
        assert len(questions) == 1 and words in questions[0], (stem, label)
        if stem == "03_sine_only":
            period_question = [c.source for c in cells if f":label: {period[0]}" in c.source]
            assert period[1] in period_question[0]
    assert checks.ch04_sine_cosine_pairs.WAVELENGTH_PRECISION.words == "two decimal places"
    assert checks.ch03_sine_only.PERIOD_PRECISION.words == "two decimal places"
    assert checks.ch03_sine_only.RESIDUAL_PRECISION.words == "four decimal places"
    assert checks.ch11_train_short_test_long.JUMP_PRECISION.words == "three decimal places"


# Answers that are one whole number (a position): compared exactly, and a wrong one gets the same
# message whichever side of the answer it lies on (numbers masked: the message may repeat the answer
# given). Right positions worked out by hand in each chapter's tests: 20 (chapter 02's 3-row table,
# factor 10), 79 (omega_1, tolerance 0.05: first_near_repeat above), 162 (s = 5, bfloat16).
_NORM_TABLE = np.diag([3.0, 4.0, 5.0, 0.0])[:3]  # row norms 3, 4, 5 in width 4: 10 * 4 = 2t at t = 20
WHOLE_NUMBER_CASES = {
    "ex-02-dominant": (lambda a: checks.check_first_dominant_position(a, _NORM_TABLE, 10), 20, (12, 27)),
    "ex-03-period (first_repeat)": (
        lambda a: checks.check_period_and_first_repeat(2 * math.pi / OMEGA_1, a, omega=OMEGA_1, tolerance=0.05),
        first_near_repeat(OMEGA_1, 0.05),
        (30, 100),  # neither is within 0.05 rad of a whole turn
    ),
    "ex-09-interpolated-collision": (
        lambda a: checks.check_first_interpolated_collision(a, factor=5.0),
        162,
        (100, 200),
    ),
}


def _masked(message):
    return re.sub(r"\d+(?:\.\d+)?", "#", message)


@pytest.mark.parametrize("label", sorted(WHOLE_NUMBER_CASES))
def test_whole_number_answers_are_exact_and_never_say_which_way(label):
    call, right, (below, above) = WHOLE_NUMBER_CASES[label]
    assert below < right < above
    assert call(right) and call(float(right))
    for answer in (right - 1e-3, right + 0.5):
        with pytest.raises(CheckFailed, match="whole number"):
            call(answer)
    for form in (lambda v: v, lambda v: lambda *args: v):  # the position, and a function returning it
        messages = [_failure(call, form(v)) for v in (below, above)]
        assert _masked(messages[0]) == _masked(messages[1]), messages
        for message in messages:
            assert not DIRECTION_WORDS.search(message), message
            assert not re.search(rf"\b{right}\b", message), message
