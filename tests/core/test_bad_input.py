"""Every public function rejects bad input with a TypeError or ValueError naming the argument."""

import importlib.util
import inspect
import traceback
from pathlib import Path

import numpy as np
import pytest

import posenc_helpers as ph

X = np.ones((4, 8))

CASES = [
    # (call, exception, words the message must contain)
    (lambda: ph.integer_positions(-1), ValueError, ["n", ">= 0"]),
    (lambda: ph.integer_positions(2.5), TypeError, ["n", "integer"]),
    (lambda: ph.integer_positions(3.0), TypeError, ["n", "integer"]),
    (lambda: ph.integer_positions(True), TypeError, ["n"]),
    (lambda: ph.normalized_positions(-3), ValueError, ["n"]),
    (lambda: ph.normalized_positions("5"), TypeError, ["n"]),
    (lambda: ph.frequencies(7), ValueError, ["d_model", "even"]),
    (lambda: ph.frequencies(0), ValueError, ["d_model", "positive"]),
    (lambda: ph.frequencies(-4), ValueError, ["d_model"]),
    (lambda: ph.frequencies(8.0), TypeError, ["d_model"]),
    (lambda: ph.frequencies(8, base=0.0), ValueError, ["base", "> 0"]),
    (lambda: ph.frequencies(8, base=-2.0), ValueError, ["base"]),
    (lambda: ph.frequencies(8, base=float("inf")), ValueError, ["base"]),
    (lambda: ph.frequencies(8, base="10000"), TypeError, ["base"]),
    (lambda: ph.wavelengths(5), ValueError, ["d_model"]),
    (lambda: ph.sine_only_encoding(5, 0), ValueError, ["d_model"]),
    (lambda: ph.sine_only_encoding(5, 2.5), TypeError, ["d_model"]),
    (lambda: ph.sine_only_encoding([[1, 2]], 4), ValueError, ["positions", "1-D"]),
    (lambda: ph.sinusoidal_encoding(5, 7), ValueError, ["d_model", "even"]),
    (lambda: ph.sinusoidal_encoding(-1, 8), ValueError, ["positions"]),
    (lambda: ph.sinusoidal_encoding(2.5, 8), TypeError, ["positions", "[t]"]),
    (lambda: ph.sinusoidal_encoding([0.0, np.nan], 8), ValueError, ["positions", "finite"]),
    (lambda: ph.sinusoidal_encoding([0.0, np.inf], 8), ValueError, ["positions", "finite"]),
    (lambda: ph.sinusoidal_encoding(np.zeros((2, 2)), 8), ValueError, ["positions", "1-D"]),
    (lambda: ph.sinusoidal_encoding(["a", "b"], 8), TypeError, ["positions"]),
    (lambda: ph.sinusoidal_encoding([True, False], 8), TypeError, ["positions"]),
    (lambda: ph.sinusoidal_encoding("abc", 8), TypeError, ["positions"]),
    (lambda: ph.sinusoidal_encoding(5, 8, layout="split"), ValueError, ["layout", "'interleaved'", "'concat'"]),
    (lambda: ph.sinusoidal_encoding(5, 8, layout=1), TypeError, ["layout"]),
    (lambda: ph.sinusoidal_encoding(5, 8, dtype=np.int32), ValueError, ["dtype", "floating"]),
    (lambda: ph.sinusoidal_encoding(5, 8, dtype="not a dtype"), TypeError, ["dtype"]),
    (lambda: ph.sinusoidal_encoding(5, 8, base=0), ValueError, ["base"]),
    (lambda: ph.shift_matrix(np.nan, 8), ValueError, ["offset", "finite"]),
    (lambda: ph.shift_matrix("1", 8), TypeError, ["offset"]),
    (lambda: ph.shift_matrix(1.0, 9), ValueError, ["d_model"]),
    (lambda: ph.shift_matrix(1.0, 8, base=-1.0), ValueError, ["base"]),
    (lambda: ph.rope_frequencies(5), ValueError, ["head_dim", "even"]),
    (lambda: ph.rope_frequencies(0), ValueError, ["head_dim"]),
    (lambda: ph.rope_frequencies(8, base=0), ValueError, ["base"]),
    (lambda: ph.apply_rope(np.ones((4, 7)), 4), ValueError, ["head_dim", "even"]),
    (lambda: ph.apply_rope(np.ones(8), 1), ValueError, ["x", "2 dimensions"]),
    (lambda: ph.apply_rope(X, 3), ValueError, ["positions", "x.shape[-2] = 4"]),
    (lambda: ph.apply_rope(X, [0, 1, 2]), ValueError, ["positions", "sequence axis"]),
    (lambda: ph.apply_rope(X, [0, 1, 2, np.nan]), ValueError, ["positions", "finite"]),
    (lambda: ph.apply_rope(np.where(np.eye(4, 8) > 0, np.nan, X), 4), ValueError, ["x", "finite"]),
    (lambda: ph.apply_rope(np.where(np.eye(4, 8) > 0, -np.inf, X), 4), ValueError, ["x", "finite"]),
    (lambda: ph.apply_rope(X, np.zeros((4, 1))), ValueError, ["positions", "1-D"]),
    (lambda: ph.apply_rope(X, 4, layout="neox"), ValueError, ["layout", "'half'"]),
    (lambda: ph.apply_rope(X, 4, base=-5), ValueError, ["base"]),
    (lambda: ph.apply_rope(X, 4, inv_freq=[1.0, 2.0]), ValueError, ["inv_freq", "4 entries"]),
    (lambda: ph.apply_rope(X, 4, inv_freq=[1.0, 2.0, np.nan, 1.0]), ValueError, ["inv_freq", "finite"]),
    (lambda: ph.apply_rope(np.array([["a"] * 8] * 4), 4), TypeError, ["x"]),
    (lambda: ph.apply_rope(X, 4, rotary_dim=3), ValueError, ["rotary_dim", "even"]),
    (lambda: ph.apply_rope(X, 4, rotary_dim=0), ValueError, ["rotary_dim", "positive"]),
    (lambda: ph.apply_rope(X, 4, rotary_dim=10), ValueError, ["rotary_dim", "<= head_dim", "8"]),
    (lambda: ph.apply_rope(X, 4, rotary_dim=4.0), TypeError, ["rotary_dim", "integer"]),
    (lambda: ph.apply_rope(X, 4, rotary_dim=True), TypeError, ["rotary_dim"]),
    (lambda: ph.apply_rope(X, 4, rotary_dim=4, inv_freq=[1.0] * 4), ValueError, ["inv_freq", "2 entries"]),
    (lambda: ph.scaled_rope_frequencies(8, method="linear", factor=0.0), ValueError, ["factor", "> 0"]),
    (lambda: ph.scaled_rope_frequencies(8, method="linear", factor=-2.0), ValueError, ["factor"]),
    (lambda: ph.scaled_rope_frequencies(8, method="ntk-by-parts", factor=2.0), ValueError, ["method", "'llama3'"]),
    (lambda: ph.scaled_rope_frequencies(8, method="yarn", factor=2.0), ValueError, ["original_max_len", "yarn"]),
    (
        lambda: ph.scaled_rope_frequencies(8, method="yarn", factor=2.0, original_max_len=0),
        ValueError,
        ["original_max_len"],
    ),
    (lambda: ph.scaled_rope_frequencies(7, method="ntk", factor=2.0), ValueError, ["head_dim"]),
    (
        lambda: ph.scaled_rope_frequencies(
            8, method="yarn", factor=2.0, original_max_len=512, beta_fast=1, beta_slow=32
        ),
        ValueError,
        ["beta_fast", "beta_slow"],
    ),
    (lambda: ph.scaled_rope_frequencies(8, base=0.0, method="ntk", factor=2.0), ValueError, ["base"]),
    (lambda: ph.alibi_slopes(0), ValueError, ["n_heads", ">= 1"]),
    (lambda: ph.alibi_slopes(2.5), TypeError, ["n_heads", "integer"]),
    (lambda: ph.alibi_slopes(-8), ValueError, ["n_heads"]),
    (lambda: ph.alibi_bias(0, 4), ValueError, ["n_heads"]),
    (lambda: ph.alibi_bias(8, -1), ValueError, ["seq_len", ">= 0"]),
    (lambda: ph.alibi_bias(8, 3.5), TypeError, ["seq_len"]),
    (lambda: ph.alibi_bias(8, 4, causal="yes"), TypeError, ["causal"]),
    (lambda: ph.t5_relative_bucket(3, num_buckets=0), ValueError, ["num_buckets", ">= 1"]),
    (lambda: ph.t5_relative_bucket(3, num_buckets=2), ValueError, ["num_buckets", ">= 4"]),
    (lambda: ph.t5_relative_bucket(3, num_buckets=1, bidirectional=False), ValueError, ["num_buckets", ">= 2"]),
    (lambda: ph.t5_relative_bucket(3, max_distance=4), ValueError, ["max_distance"]),
    (lambda: ph.t5_relative_bucket(np.array([1.5])), ValueError, ["relative_position", "whole numbers"]),
    (lambda: ph.t5_relative_bucket(1.5), ValueError, ["relative_position", "whole numbers", "1.5"]),
    (lambda: ph.t5_relative_bucket("3"), TypeError, ["relative_position"]),
    (lambda: ph.learned_encoding([0.5], np.zeros((4, 2))), ValueError, ["positions", "whole numbers"]),
    (lambda: ph.t5_relative_bucket(3, bidirectional=1), TypeError, ["bidirectional"]),
    (lambda: ph.softmax(np.float64(1.0)), ValueError, ["x", "0-d"]),
    (lambda: ph.softmax([1.0, np.nan]), ValueError, ["x", "NaN"]),
    (lambda: ph.softmax([1.0, np.inf]), ValueError, ["x", "+inf"]),
    (lambda: ph.softmax([1.0, 2.0], axis=1), ValueError, ["axis"]),
    (lambda: ph.softmax([1.0, 2.0], axis=0.5), TypeError, ["axis"]),
    (lambda: ph.softmax("abc"), TypeError, ["x"]),
    (lambda: ph.scaled_dot_product_attention(np.ones(3), X, X), ValueError, ["q", "2 dimensions"]),
    (lambda: ph.scaled_dot_product_attention(np.ones((2, 3)), X, X), ValueError, ["q and k", "feature width"]),
    (lambda: ph.scaled_dot_product_attention(X, X, np.ones((3, 8))), ValueError, ["k and v", "rows"]),
    (lambda: ph.scaled_dot_product_attention(X, X, X, bias=np.ones((3, 3))), ValueError, ["bias", "broadcast"]),
    (lambda: ph.min_pairwise_distance(np.ones(5)), ValueError, ["encodings", "2-D"]),
    (lambda: ph.min_pairwise_distance(np.ones((1, 5))), ValueError, ["encodings", "at least 2 rows"]),
    (lambda: ph.min_pairwise_distance([[0.0, np.nan], [1.0, 1.0]]), ValueError, ["encodings", "finite"]),
    (lambda: ph.min_pairwise_distance([["a"], ["b"]]), TypeError, ["encodings"]),
    (lambda: ph.linear_shift_fit(np.ones(5), 1), ValueError, ["encodings", "2-D"]),
    (lambda: ph.linear_shift_fit(np.ones((5, 2)), 0), ValueError, ["offset", ">= 1"]),
    (lambda: ph.linear_shift_fit(np.ones((5, 2)), 5), ValueError, ["offset", "smaller"]),
    (lambda: ph.linear_shift_fit(np.ones((5, 2)), 1.5), TypeError, ["offset"]),
    (lambda: ph.collision_scan(0.0, 10, 0, 0.1), ValueError, ["omega", "> 0"]),
    (lambda: ph.collision_scan(1.0, 1, 0, 0.1), ValueError, ["n_positions", ">= 2"]),
    (lambda: ph.collision_scan(1.0, 10, 10, 0.1), ValueError, ["reference", "0 .. 9"]),
    (lambda: ph.collision_scan(1.0, 10, 0, -1.0), ValueError, ["threshold"]),
    (lambda: ph.checklist_markdown("x"), TypeError, ["scores", "dict"]),
    (lambda: ph.checklist_markdown({"a": {}}), ValueError, ["scores['a']", "criteria"]),
    (lambda: ph.score_encoding("not callable"), TypeError, ["encode", "callable"]),
    (lambda: ph.score_encoding(lambda p, n: p, short_length=1), ValueError, ["short_length"]),
    (lambda: ph.score_encoding(lambda p, n: p, short_length=50, long_length=50), ValueError, ["long_length"]),
    (lambda: ph.score_encoding(lambda p, n: p, offsets=(0,)), ValueError, ["offsets"]),
    (lambda: ph.score_encoding(lambda p, n: p, tolerance=0.0), ValueError, ["tolerance"]),
]


def _cases_from_other_test_modules():
    """Chapter test modules keep their own ``BAD_INPUT_CASES`` lists (same format); all run here."""
    cases = []
    for path in sorted(Path(__file__).parents[1].rglob("test_*.py")):
        if path.name == Path(__file__).name or "BAD_INPUT_CASES" not in path.read_text():
            continue
        spec = importlib.util.spec_from_file_location(f"_bad_input_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        cases.extend(getattr(module, "BAD_INPUT_CASES", []))
    return cases


# The package-wide cases above, then each chapter's (kept next to its other tests).
ALL_CASES = CASES + _cases_from_other_test_modules()


@pytest.mark.parametrize("call, exception, words", ALL_CASES)
def test_bad_input_is_rejected_with_a_helpful_message(call, exception, words):
    with pytest.raises(exception) as info:
        call()
    message = str(info.value)
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"


_PUBLIC_FUNCTIONS = {name: getattr(ph, name) for name in ph.__all__ if inspect.isfunction(getattr(ph, name))}
_NAME_OF_CODE = {inspect.unwrap(function).__code__: name for name, function in _PUBLIC_FUNCTIONS.items()}


def _function_that_refused(call, exception: type[Exception]) -> str | None:
    """The public function the case called and that raised: the frame right after the case's own."""
    try:
        call()
    except exception as error:
        codes = [frame.f_code for frame, _ in traceback.walk_tb(error.__traceback__)]
        callee = codes.index(call.__code__) + 1
        return _NAME_OF_CODE.get(codes[callee]) if callee < len(codes) else None
    return None


def test_every_public_function_is_covered():
    """Every public function refuses at least one bad input itself (found from where the
    error was raised, not from the names a case mentions)."""
    covered = {_function_that_refused(call, exception) for call, exception, _ in ALL_CASES}
    # a function without parameters (shipped_configs) has nothing to refuse
    functions = {name for name, function in _PUBLIC_FUNCTIONS.items() if inspect.signature(function).parameters}
    assert functions <= covered, sorted(functions - covered)


@pytest.mark.parametrize(
    "call",
    [
        lambda: ph.sinusoidal_encoding(np.int32(4), np.int64(8)),
        lambda: ph.sinusoidal_encoding((0, 1.5, -2), 4),
        lambda: ph.sine_only_encoding(0, 3),
        lambda: ph.alibi_bias(np.int16(4), np.int8(3)),
        lambda: ph.apply_rope(np.ones((0, 4)), []),
        lambda: ph.apply_rope(np.full((4, 8), 1e308), 4),  # finite, though its sum overflows
        lambda: ph.softmax(np.zeros((0, 3))),
        lambda: ph.t5_relative_bucket([]),
        lambda: ph.scaled_rope_frequencies(2, method="ntk", factor=3.0),
        lambda: ph.scaled_rope_frequencies(8, method="yarn", factor=0.5, original_max_len=64),
    ],
)
def test_valid_edge_cases_work(call):
    call()
