"""The training lab (chapter 11): position hooks, model, training, evaluation, record.

The model's position code is checked against a second implementation written
here in plain numpy with the book's helpers (apply_rope, sinusoidal_encoding,
alibi_bias, t5_relative_bucket), on the same weights and inputs.
"""

from __future__ import annotations

import dataclasses
import json
import math

import jax
import numpy as np
import pytest

import posenc_helpers.lab as lab
from posenc_helpers import (
    alibi_bias,
    apply_rope,
    rope_frequencies,
    scaled_rope_frequencies,
    sinusoidal_encoding,
    t5_relative_bucket,
)
from posenc_helpers.lab.corpus import HELD_OUT_EVERY, sample_windows, window_ends
from posenc_helpers.lab.evaluation import _windows
from posenc_helpers.lab.training import _batch, _schedule
from posenc_helpers.measured import RECORD_PATH, trained_extrapolation

TINY = lab.ModelConfig(
    d_model=16, n_layers=2, n_heads=2, d_ff=32, vocab=256, max_positions=64, t5_buckets=8, t5_max_distance=16
)


# --------------------------------------------------------------------------- a second implementation
def _layer_norm(x, scale):
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5) * scale


def _gelu(x):  # the tanh approximation, jax.nn.gelu's default
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def reference_logits(params, tokens, method, config, *, inv_freq=None, attention_factor=1.0):
    """The lab's model, written again in numpy: one sequence, positions from the book's helpers."""
    p = jax.tree_util.tree_map(lambda a: np.asarray(a, dtype=np.float64), params)
    n = len(tokens)
    x = p["embed"][tokens]
    if method == "sinusoidal":
        x = x + sinusoidal_encoding(n, config.d_model)
    if method == "learned":
        x = x + p["table"][:n]
    bias = np.zeros((config.n_heads, n, n))
    if method == "alibi":
        bias = alibi_bias(config.n_heads, n)
    if method == "t5":
        relative = np.arange(n)[None, :] - np.arange(n)[:, None]
        buckets = t5_relative_bucket(
            relative, bidirectional=False, num_buckets=config.t5_buckets, max_distance=config.t5_max_distance
        )
        bias = p["buckets"][buckets].transpose(2, 0, 1)
    bias = np.where(np.arange(n)[None, :] > np.arange(n)[:, None], -np.inf, bias)
    for layer in p["layers"]:
        q, k, v = np.split(_layer_norm(x, layer["norm1"]) @ layer["qkv"], 3, axis=-1)
        heads = []
        for h in range(config.n_heads):
            cut = slice(h * config.head_dim, (h + 1) * config.head_dim)
            qh, kh = q[:, cut], k[:, cut]
            if method == "rope":
                qh = attention_factor * apply_rope(qh, n, inv_freq=inv_freq)
                kh = attention_factor * apply_rope(kh, n, inv_freq=inv_freq)
            scores = qh @ kh.T / math.sqrt(config.head_dim) + bias[h]
            weights = np.exp(scores - scores.max(axis=1, keepdims=True))
            heads.append((weights / weights.sum(axis=1, keepdims=True)) @ v[:, cut])
        x = x + np.concatenate(heads, axis=1) @ layer["out"]
        x = x + _gelu(_layer_norm(x, layer["norm2"]) @ layer["up"]) @ layer["down"]
    return _layer_norm(x, p["norm"]) @ p["unembed"]


@pytest.fixture(scope="module")
def params():
    p = lab.init_params(jax.random.PRNGKey(3), TINY)
    rng = np.random.default_rng(4)
    p["buckets"] = rng.normal(size=p["buckets"].shape).astype(np.float32)  # non-zero, to be seen
    return p


@pytest.mark.parametrize("method", lab.METHODS)
def test_forward_equals_the_numpy_reference_built_on_the_book_helpers(params, method):
    tokens = np.random.default_rng(5).integers(0, 256, size=20)
    hooks = lab.position_hooks(method, 20, TINY)
    ours = np.asarray(lab.forward(params, tokens[None], hooks, TINY.n_heads))[0]
    np.testing.assert_allclose(ours, reference_logits(params, tokens, method, TINY), rtol=2e-4, atol=2e-4)


def test_rescaled_rope_equals_apply_rope_with_the_rescaled_frequencies(params):
    tokens = np.random.default_rng(6).integers(0, 256, size=24)
    inv_freq, factor = scaled_rope_frequencies(TINY.head_dim, method="yarn", factor=4.0, original_max_len=8)
    hooks = lab.position_hooks("rope", 24, TINY, inv_freq=inv_freq, attention_factor=factor)
    ours = np.asarray(lab.forward(params, tokens[None], hooks, TINY.n_heads))[0]
    expected = reference_logits(params, tokens, "rope", TINY, inv_freq=inv_freq, attention_factor=factor)
    np.testing.assert_allclose(ours, expected, rtol=2e-4, atol=2e-4)


def test_rotate_pairs_is_apply_rope_interleaved():
    x = np.random.default_rng(7).normal(size=(3, 10, 8)).astype(np.float32)
    angles = np.arange(10)[:, None] * rope_frequencies(8)[None, :]
    ours = lab.rotate_pairs(x, np.cos(angles), np.sin(angles))
    np.testing.assert_allclose(ours, apply_rope(x, 10), rtol=0, atol=1e-5)


@pytest.mark.parametrize("method", lab.METHODS)
def test_the_model_is_causal(params, method):
    tokens = np.random.default_rng(8).integers(0, 256, size=(1, 16))
    changed = tokens.copy()
    changed[0, 10:] = (changed[0, 10:] + 1) % 256
    hooks = lab.position_hooks(method, 16, TINY)
    a = np.asarray(lab.forward(params, tokens, hooks, TINY.n_heads))
    b = np.asarray(lab.forward(params, changed, hooks, TINY.n_heads))
    np.testing.assert_array_equal(a[0, :10], b[0, :10])
    assert not np.allclose(a[0, 10:], b[0, 10:])


def test_hooks_are_neutral_for_the_methods_that_do_not_use_them():
    for method in lab.METHODS:
        h = lab.position_hooks(method, 5, TINY)
        assert (h.add != 0).any() == (method == "sinusoidal")
        assert bool(h.use_table) == (method == "learned") and bool(h.use_buckets) == (method == "t5")
        assert (h.sin != 0).any() == (method == "rope")
        finite = h.bias[:, np.tril_indices(5)[0], np.tril_indices(5)[1]]
        assert (finite != 0).any() == (method == "alibi")
        assert np.isneginf(h.bias[:, 0, 1:]).all()


# --------------------------------------------------------------------------- corpus and batches
def test_corpus_split_by_file_every_fifth_held_out():
    corpus = lab.stdlib_corpus()
    assert not set(corpus.train_files) & set(corpus.held_out_files)
    ordered = [f for f in lab.STDLIB_FILES if f not in corpus.missing_files]
    assert list(corpus.held_out_files) == [
        f for i, f in enumerate(lab.STDLIB_FILES) if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1 and f in ordered
    ]
    assert list(lab.STDLIB_FILES) == sorted(lab.STDLIB_FILES)
    assert lab.stdlib_corpus() is corpus  # read once


def test_windows_of_every_length_end_at_the_same_bytes():
    model = lab.TrainedModel("nope", "text", TINY, {}, 8, 0, 1, np.zeros(1), 0.0)
    long_in, long_target = _windows(model, 64, 64, 5, seed=2)
    short_in, short_target = _windows(model, 16, 64, 5, seed=2)
    np.testing.assert_array_equal(long_target[:, -16:], short_target)
    np.testing.assert_array_equal(long_in[:, 1:], long_target[:, :-1])  # targets are the next bytes
    ends = window_ends(np.zeros(1000, np.uint8), 100, 50, seed=1)
    assert ends.min() >= 100 and ends.max() <= 1000 and len(set(ends)) == 50


def test_offset_batches_ask_for_the_symbol_phi_back():
    inputs, targets, weights = _batch("offset", 12, 4, np.random.default_rng(0), phi=3, alphabet=5)
    np.testing.assert_array_equal(targets[:, 3:], inputs[:, :-3])
    np.testing.assert_array_equal(weights[0], [0, 0, 0] + [1] * 9)
    assert inputs.max() < 5


def test_learning_rate_schedule_by_hand():
    assert _schedule(0, 100, 1.0) == pytest.approx(0.1)  # warm-up over 10 steps
    assert _schedule(9, 100, 1.0) == pytest.approx(1.0)
    assert _schedule(10, 100, 1.0) == pytest.approx(1.0)  # the cosine starts at the peak
    assert _schedule(100, 100, 1.0) == pytest.approx(0.1)  # and ends at a tenth


# --------------------------------------------------------------------------- training and evaluation
@pytest.fixture(scope="module")
def tiny_models():
    kwargs = dict(train_len=8, steps=30, batch_size=4, config=TINY, progress=False)
    return {method: lab.train(method, **kwargs) for method in ("learned", "t5", "rope")}


def test_training_lowers_the_loss_and_is_deterministic(tiny_models):
    model = tiny_models["rope"]
    assert model.losses[-5:].mean() < model.losses[:5].mean() - 0.5
    again = lab.train("rope", train_len=8, steps=30, batch_size=4, config=TINY, progress=False)
    np.testing.assert_array_equal(again.losses, model.losses)
    other = lab.train("rope", train_len=8, steps=30, batch_size=4, config=TINY, progress=False, seed=1)
    assert not np.array_equal(other.losses, model.losses)


def test_untrained_rows_and_buckets_keep_their_initial_values(tiny_models):
    initial = lab.init_params(jax.random.PRNGKey(0), TINY)
    learned = tiny_models["learned"].params
    np.testing.assert_array_equal(learned["table"][8:], initial["table"][8:])
    assert not np.array_equal(learned["table"][:8], initial["table"][:8])
    used = np.unique(lab.position_hooks("t5", 8, TINY).bucket)
    unused = np.setdiff1d(np.arange(TINY.t5_buckets), used)
    assert unused.size and (np.asarray(tiny_models["t5"].params["buckets"])[unused] == 0).all()


def test_length_curve_shape_and_validation(tiny_models):
    model = tiny_models["rope"]
    curve = lab.length_curve(model, [8, 16, 32], windows=3)
    assert curve.shape == (3,) and np.isfinite(curve).all() and (curve > 0).all()
    for bad, error in (([4], ValueError), ([8, 128], ValueError), (8, TypeError), ([8.0], TypeError)):
        with pytest.raises(error):
            lab.length_curve(model, bad)
    with pytest.raises(TypeError, match="model must be a TrainedModel"):
        lab.length_curve("model", [8])
    assert lab.position_losses(model, 32, windows=2).shape == (32,)


def test_rope_scaling_and_fine_tuning(tiny_models):
    model = tiny_models["rope"]
    scaled = lab.with_rope_scaling(model, "linear", 4.0)
    np.testing.assert_array_equal(scaled.inv_freq, rope_frequencies(TINY.head_dim) / 4)
    assert scaled.attention_factor == 1.0 and scaled.scaling == "linear x4"
    yarn = lab.with_rope_scaling(model, "yarn", 4.0)
    expected, factor = scaled_rope_frequencies(TINY.head_dim, method="yarn", factor=4.0, original_max_len=8)
    np.testing.assert_array_equal(yarn.inv_freq, expected)
    assert yarn.attention_factor == factor
    tuned = lab.fine_tune(yarn, length=16, steps=3, progress=False)
    assert tuned.train_len == 8 and tuned.fine_tune_len == 16 and tuned.inv_freq is yarn.inv_freq
    with pytest.raises(ValueError, match="'rope'"):
        lab.with_rope_scaling(tiny_models["t5"], "linear", 2.0)
    with pytest.raises(ValueError, match="scaling"):
        lab.with_rope_scaling(model, "ntk-by-parts", 2.0)


def test_stored_runs_are_reused_only_for_the_same_inputs(tiny_models, tmp_path, monkeypatch):
    """With POSENC_LAB_CACHE set, a second identical run is read back (it does not train),
    with the weights, losses and time of the first; any changed input trains anew."""
    import posenc_helpers.lab.training as training

    kwargs = dict(train_len=8, steps=30, batch_size=4, config=TINY, progress=False)
    monkeypatch.setenv(lab.CACHE_VARIABLE, str(tmp_path))
    first = lab.train("rope", **kwargs)
    np.testing.assert_array_equal(first.losses, tiny_models["rope"].losses)  # stored runs train as usual
    tuned = lab.fine_tune(first, length=16, steps=3, progress=False)
    assert len(list(tmp_path.glob("*.pickle"))) == 2 and not list(tmp_path.glob("*.part"))

    def no_training(*args, **kwargs):
        raise AssertionError("trained although the run was stored")

    with monkeypatch.context() as patch:
        patch.setattr(training, "_run", no_training)
        again = lab.train("rope", **kwargs)
        tuned_again = lab.fine_tune(again, length=16, steps=3, progress=False)
        for changed in (dict(seed=1), dict(steps=29), dict(train_len=7), dict(batch_size=3)):
            with pytest.raises(AssertionError, match="trained although"):
                lab.train("rope", **{**kwargs, **changed})
        with pytest.raises(AssertionError, match="trained although"):
            lab.train("alibi", **kwargs)
        with pytest.raises(AssertionError, match="trained although"):
            lab.fine_tune(lab.with_rope_scaling(again, "linear", 2.0), length=16, steps=3, progress=False)
    for stored, trained in ((again, first), (tuned_again, tuned)):
        assert (stored.seconds, stored.steps) == (trained.seconds, trained.steps)
        np.testing.assert_array_equal(stored.losses, trained.losses)
        stored_leaves = jax.tree_util.tree_leaves(stored.params)
        trained_leaves = jax.tree_util.tree_leaves(trained.params)
        assert len(stored_leaves) == len(trained_leaves) > 0
        for stored_leaf, trained_leaf in zip(stored_leaves, trained_leaves, strict=True):
            np.testing.assert_array_equal(np.asarray(stored_leaf), np.asarray(trained_leaf))
    monkeypatch.delenv(lab.CACHE_VARIABLE)
    lab.train("rope", **{**kwargs, "seed": 2})
    assert len(list(tmp_path.glob("*.pickle"))) == 2  # unset: nothing stored


def test_offset_task_measurements():
    model = lab.train(
        "rope", task="offset", train_len=8, steps=5, batch_size=4, phi=2, alphabet=4, config=TINY, progress=False
    )
    accuracy = lab.offset_accuracy(model, [8, 16], windows=3)
    assert accuracy.shape == (2,) and ((accuracy >= 0) & (accuracy <= 1)).all()
    weights = lab.offset_attention(model, 16, windows=2)
    assert np.isnan(weights[:2]).all() and ((weights[2:] >= 0) & (weights[2:] <= 1)).all()
    with pytest.raises(ValueError, match="task='offset'"):
        lab.offset_accuracy(lab.train("rope", train_len=8, steps=1, config=TINY, progress=False), [8])


def test_rope_pair_norms_are_rotation_invariant_norms(tiny_models):
    model = tiny_models["rope"]
    norms = lab.rope_pair_norms(model, windows=2)
    assert norms["q"].shape == norms["k"].shape == (TINY.n_layers, TINY.n_heads, TINY.head_dim // 2)
    assert (norms["q"] > 0).all()


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda: lab.train("xpos", train_len=8, steps=1), ValueError, ["method", "rope"]),
        (lambda: lab.train("rope", train_len=1, steps=1), ValueError, ["train_len", ">= 2"]),
        (lambda: lab.train("rope", train_len=8, steps=0), ValueError, ["steps"]),
        (lambda: lab.train("rope", train_len=8, steps=1, task="copy"), ValueError, ["task"]),
        (lambda: lab.train("rope", train_len=2048, steps=1), ValueError, ["max_positions"]),
        (lambda: lab.train("rope", train_len=8, steps=1, task="offset", phi=8), ValueError, ["phi"]),
        (lambda: lab.train("rope", train_len=8, steps=1, config={"d_model": 8}), TypeError, ["ModelConfig"]),
        (lambda: lab.train("rope", train_len=8, steps=1, learning_rate=0), ValueError, ["learning_rate"]),
        (lambda: lab.ModelConfig(d_model=10, n_heads=4), ValueError, ["n_heads"]),
        (lambda: lab.position_hooks("rope", 0), ValueError, ["length"]),
        (lambda: lab.position_hooks("rope", 4, inv_freq=np.ones(3)), ValueError, ["inv_freq"]),
        (lambda: lab.works_past_training_length({("a", 0): [1, 2]}, threshold=-1), ValueError, ["threshold"]),
        (lambda: sample_windows(np.zeros(10, np.uint8), 20, 1, np.random.default_rng(0)), ValueError, ["length"]),
    ],
)
def test_bad_input(call, error, words):
    with pytest.raises(error) as info:
        call()
    assert all(word in str(info.value) for word in words), str(info.value)


# --------------------------------------------------------------------------- verdicts and their record
def test_verdicts_by_hand():
    curves = {
        ("flat", 0): [2.0, 2.05, 2.08],
        ("flat", 1): [2.0, 1.9, 2.0],
        ("jumps", 0): [2.0, 2.05, 2.1],
        ("jumps", 1): [2.0, 2.3, 2.1],
    }
    assert lab.works_past_training_length(curves, 0.1) == {"flat": True, "jumps": False}
    assert lab.works_past_training_length(curves, 0.3) == {"flat": True, "jumps": True}


def test_the_record_matches_the_protocol_and_names_every_method():
    record = trained_extrapolation()
    assert set(record["verdicts"]) == set(lab.METHODS)
    recorded = {k: tuple(v) if isinstance(v, list) else v for k, v in record["protocol"].items()}
    assert recorded == dataclasses.asdict(lab.PROTOCOL)
    assert json.loads(RECORD_PATH.read_text())["verdicts"] == record["verdicts"]
