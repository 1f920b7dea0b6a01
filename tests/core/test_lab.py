"""The training lab (chapter 11): position hooks, model, training, evaluation, record.

The model's position code is checked against a second implementation written
here in plain numpy with the book's helpers (apply_rope, sinusoidal_encoding,
alibi_bias, t5_relative_bucket), on the same weights and inputs.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

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
from posenc_helpers.lab.corpus import HELD_OUT_EVERY, SNAPSHOT_SHA256, read_snapshot, sample_windows, window_ends
from posenc_helpers.lab.evaluation import _windows
from posenc_helpers.measured import RECORD_PATH, trained_extrapolation

TINY = lab.ModelConfig(
    d_model=16, n_layers=2, n_heads=2, d_ff=32, vocab=256, max_positions=64, t5_buckets=8, t5_max_distance=16
)


# --------------------------------------------------------------------------- a second implementation
def _layer_norm(x, scale):
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5) * scale


def _relu(x):
    return np.maximum(x, 0.0)


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
        x = x + _relu(_layer_norm(x, layer["norm2"]) @ layer["up"]) @ layer["down"]
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
    assert list(corpus.held_out_files) == [
        f for i, f in enumerate(lab.STDLIB_FILES) if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1
    ]
    assert len(corpus.held_out_files) == len(lab.STDLIB_FILES) // 5 == 23
    assert list(lab.STDLIB_FILES) == sorted(lab.STDLIB_FILES)
    assert lab.stdlib_corpus() is corpus  # read once
    files = read_snapshot()
    held = b"".join(files[name] + b"\n\n" for name in corpus.held_out_files)
    assert corpus.held_out.tobytes() == held
    assert corpus.train.size + corpus.held_out.size == sum(len(files[n]) + 2 for n in lab.STDLIB_FILES)


def test_the_corpus_is_the_snapshot_and_nothing_else(tmp_path):
    """The same bytes on every machine: the snapshot's digest is checked, and it carries its licence."""
    import hashlib

    raw = lab.SNAPSHOT_PATH.read_bytes()
    assert hashlib.sha256(raw).hexdigest() == SNAPSHOT_SHA256
    files = read_snapshot()
    assert "PYTHON SOFTWARE FOUNDATION LICENSE VERSION 2" in files["LICENSE.txt"].decode()
    assert set(files) == {*lab.STDLIB_FILES, "LICENSE.txt"}
    tampered = tmp_path / "corpus.tar.xz"
    tampered.write_bytes(raw[:-1] + bytes([raw[-1] ^ 1]))
    with pytest.raises(ValueError, match="SHA-256"):
        read_snapshot(tampered)
    with pytest.raises(FileNotFoundError):
        read_snapshot(tmp_path / "missing.tar.xz")


def test_windows_of_every_length_end_at_the_same_bytes():
    model = lab.TrainedModel("nope", "text", TINY, {}, 8, 0, 1, np.zeros(1), 0.0)
    long_in, long_target = _windows(model, 64, 64, 5, seed=2)
    short_in, short_target = _windows(model, 16, 64, 5, seed=2)
    np.testing.assert_array_equal(long_target[:, -16:], short_target)
    np.testing.assert_array_equal(long_in[:, 1:], long_target[:, :-1])  # targets are the next bytes
    ends = window_ends(np.zeros(1000, np.uint8), 100, 50, seed=1)
    assert ends.min() >= 100 and ends.max() <= 1000 and len(set(ends)) == 50
    indices = lab.scored_byte_indices(8, TINY.max_positions, windows=5, seed=2)
    np.testing.assert_array_equal(lab.stdlib_corpus().held_out[indices], short_target[:, -8:])


def test_offset_batches_ask_for_the_symbol_phi_back():
    inputs, targets, weights = lab.training_batch("offset", 12, 4, seed=0, step=0, phi=3, alphabet=5)
    np.testing.assert_array_equal(targets[:, 3:], inputs[:, :-3])
    np.testing.assert_array_equal(weights[0], [0, 0, 0] + [1] * 9)
    assert inputs.max() < 5


def test_retrieval_batches_plant_one_key_and_score_only_the_query():
    inputs, targets, weights = lab.training_batch("retrieval", 16, 200, seed=3, step=7, alphabet=5)
    keys = targets[:, -1]
    assert ((keys >= 5) & (keys < 10)).all() and (inputs[:, -1] == 10).all()
    planted = (inputs[:, :-1] >= 5).sum(axis=1)
    np.testing.assert_array_equal(planted, 1)  # exactly one key symbol per sequence
    rows, where = np.nonzero(inputs[:, :-1] >= 5)
    np.testing.assert_array_equal(inputs[rows, where], keys[rows])
    distances = 15 - where
    assert distances.min() == 1 and distances.max() == 15  # every distance a training sequence can hold
    np.testing.assert_array_equal(weights.sum(axis=1), 1) and np.testing.assert_array_equal(weights[:, -1], 1)


def test_batches_depend_on_seed_and_step_only():
    a = lab.training_batch("text", 8, 3, seed=1, step=4)
    b = lab.training_batch("text", 8, 3, seed=1, step=4)
    c = lab.training_batch("text", 8, 3, seed=1, step=5)
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.array_equal(a[0], c[0])


def test_learning_rate_schedule_by_hand():
    rate = lab.learning_rate_at
    assert rate(0, 100, 1.0, 10) == pytest.approx(0.1)  # warm-up over 10 steps
    assert rate(9, 100, 1.0, 10) == pytest.approx(1.0)
    assert rate(79, 100, 1.0, 10) == pytest.approx(1.0)  # stable until the last fifth
    assert rate(80, 100, 1.0, 10) == pytest.approx(20 / 21)  # then linear towards 0
    assert rate(99, 100, 1.0, 10) == pytest.approx(1 / 21)
    # a smaller budget is the same run up to its own decay
    assert [rate(s, 50, 1.0, 10) for s in range(40)] == [rate(s, 100, 1.0, 10) for s in range(40)]


# --------------------------------------------------------------------------- training and evaluation
@pytest.fixture(scope="module")
def tiny_models():
    kwargs = dict(train_len=8, steps=30, batch_size=4, warmup=3, config=TINY, progress=False)
    return {method: lab.train(method, **kwargs) for method in ("learned", "t5", "rope")}


@pytest.mark.slow
def test_training_lowers_the_loss_and_is_deterministic(tiny_models):
    model = tiny_models["rope"]
    assert model.losses[-5:].mean() < model.losses[:5].mean() - 0.5
    again = lab.train("rope", train_len=8, steps=30, batch_size=4, warmup=3, config=TINY, progress=False)
    np.testing.assert_array_equal(again.losses, model.losses)
    other = lab.train("rope", train_len=8, steps=30, batch_size=4, warmup=3, config=TINY, progress=False, seed=1)
    assert not np.array_equal(other.losses, model.losses)


def test_budgets_sharing_one_run_equal_separate_runs():
    """Each budget of train_budgets is the model train(steps=budget) gives: same batches,
    same schedule (a second method: the separate runs)."""
    kwargs = dict(train_len=8, batch_size=4, warmup=3, config=TINY, progress=False)
    shared = lab.train_budgets("alibi", budgets=[10, 20, 40], **kwargs)
    for budget in (10, 20, 40):
        alone = lab.train("alibi", steps=budget, **kwargs)
        np.testing.assert_allclose(shared[budget].losses, alone.losses, rtol=1e-5, atol=1e-6)
        leaves = zip(
            jax.tree_util.tree_leaves(shared[budget].params), jax.tree_util.tree_leaves(alone.params), strict=True
        )
        for a, b in leaves:
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)
    assert not np.allclose(np.asarray(shared[10].params["unembed"]), np.asarray(shared[20].params["unembed"]))


def test_untrained_rows_and_buckets_keep_their_initial_values(tiny_models):
    initial = lab.init_params(jax.random.PRNGKey(0), TINY)
    learned = tiny_models["learned"].params
    np.testing.assert_array_equal(learned["table"][8:], initial["table"][8:])
    assert not np.array_equal(learned["table"][:8], initial["table"][:8])
    used = np.unique(lab.position_hooks("t5", 8, TINY).bucket)
    unused = np.setdiff1d(np.arange(TINY.t5_buckets), used)
    assert unused.size and (np.asarray(tiny_models["t5"].params["buckets"])[unused] == 0).all()


@pytest.mark.slow
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


@pytest.mark.slow
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

    kwargs = dict(train_len=8, steps=30, batch_size=4, warmup=3, config=TINY, progress=False)
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
        for changed in (dict(seed=1), dict(steps=29), dict(train_len=7), dict(batch_size=3), dict(warmup=4)):
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


def _constant_model(task, **fields):
    """A NoPE model whose weights are all zero but its last norm: every query and key is 0,
    so attention is uniform over the causal keys, and every logit is equal, so the most
    likely output is always symbol 0."""
    params = jax.tree_util.tree_map(np.zeros_like, lab.init_params(jax.random.PRNGKey(0), TINY))
    params["norm"] = np.ones(TINY.d_model, np.float32)
    return lab.TrainedModel("nope", task, TINY, params, 8, 0, 1, np.zeros(1), 0.0, **fields)


def test_offset_task_measurements_by_hand():
    """Worked out without the model: a constant model is right exactly where the symbol phi
    back is 0, so its accuracy is the share of zeros among the scored targets (drawn here as
    the evaluation draws them: one generator per seed, windows cut from the longest row);
    its attention on the key phi back from query i is 1 / (i + 1)."""
    phi, alphabet, train_len, windows = 2, 4, 8, 6
    model = _constant_model("offset", phi=phi, alphabet=alphabet)
    longest = TINY.max_positions
    symbols = np.random.default_rng(0).integers(0, alphabet, size=(windows, longest))
    expected = []
    for length in (8, 16):
        window = symbols[:, -length:]
        first = max(length - train_len, phi)  # at L itself the first phi positions have nothing phi back
        expected.append((window[:, first - phi : length - phi] == 0).mean())
    np.testing.assert_allclose(lab.offset_accuracy(model, [8, 16], windows=windows), expected, rtol=0, atol=1e-12)
    assert min(expected) > 0 and max(expected) < 1  # the hand count is not trivially 0 or 1
    weights = lab.offset_attention(model, 16, windows=2)
    assert np.isnan(weights[:phi]).all()
    queries = np.arange(phi, 16)
    np.testing.assert_allclose(weights[phi:], 1.0 / (queries + 1), rtol=1e-5)
    text_model = _constant_model("text")
    with pytest.raises(ValueError, match="task='offset'"):
        lab.offset_accuracy(text_model, [8])
    with pytest.raises(ValueError, match="task='offset'"):
        lab.offset_attention(text_model, 16)


@pytest.mark.slow
def test_retrieval_accuracy_places_the_key_and_counts_right_answers():
    model = lab.train(
        "nope", task="retrieval", train_len=8, steps=3, batch_size=4, alphabet=5, warmup=1, config=TINY,
        progress=False,
    )  # fmt: skip
    for placement in ("far", "near"):
        accuracy = lab.retrieval_accuracy(model, [8, 16, 32], placement=placement, windows=6)
        assert accuracy.shape == (3,) and ((accuracy >= 0) & (accuracy <= 1)).all()
    with pytest.raises(ValueError, match="placement"):
        lab.retrieval_accuracy(model, [8], placement="middle")
    with pytest.raises(ValueError, match="task='retrieval'"):
        lab.retrieval_accuracy(lab.train("rope", train_len=8, steps=1, warmup=1, config=TINY, progress=False), [8])
    with pytest.raises(ValueError, match="retrieval_accuracy"):
        lab.length_curve(model, [8])


def test_retrieval_accuracy_by_hand_on_a_model_that_always_answers_one_symbol():
    """A model whose logits ignore the input names the key exactly when the key is that symbol:
    accuracy = the share of keys equal to it (counted here from the same sequences)."""
    params = lab.init_params(jax.random.PRNGKey(0), TINY)
    params = jax.tree_util.tree_map(np.zeros_like, params)
    params["norm"] = np.ones(TINY.d_model, np.float32)
    bias_row = np.zeros((TINY.d_model, 256), np.float32)
    params["unembed"] = bias_row
    model = lab.TrainedModel("nope", "retrieval", TINY, params, 8, 0, 1, np.zeros(1), 0.0, alphabet=5)
    # all logits equal: argmax is symbol 0, never a key (keys are 5..9)
    np.testing.assert_array_equal(lab.retrieval_accuracy(model, [8, 16], windows=10), [0.0, 0.0])


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
        (lambda: lab.train_budgets("rope", train_len=8, budgets=[4, 4]), ValueError, ["budgets", "distinct"]),
        (lambda: lab.train_budgets("rope", train_len=8, budgets=[0]), ValueError, ["budgets"]),
        (lambda: lab.train("rope", train_len=8, steps=1, warmup=0), ValueError, ["warmup"]),
        (lambda: lab.train("rope", train_len=8, steps=1, task="retrieval", alphabet=200), ValueError, ["alphabet"]),
        (lambda: lab.ModelConfig(table_std=0), ValueError, ["table_std"]),
        (lambda: lab.ngram_byte_losses(np.zeros(5, np.uint8), np.zeros(3, np.uint8), 0), ValueError, ["order"]),
        (lambda: lab.ngram_byte_losses(np.zeros(5), np.zeros(3, np.uint8), 2), TypeError, ["train"]),
        (lambda: lab.ngram_byte_losses(np.zeros(5, int), np.full(3, 300), 2), ValueError, ["held_out", "0..255"]),
        (lambda: lab.ngram_byte_losses(np.zeros(5, int), np.zeros(3, int), 2, discount=2), ValueError, ["discount"]),
        (lambda: lab.seed_interval([1.0]), ValueError, ["values"]),
        (lambda: lab.seed_interval([1.0, 2.0], confidence=1.5), ValueError, ["confidence"]),
        (lambda: sample_windows(np.zeros(10, np.uint8), 20, 1, np.random.default_rng(0)), ValueError, ["length"]),
    ],
)
def test_bad_input(call, error, words):
    with pytest.raises(error) as info:
        call()
    assert all(word in str(info.value) for word in words), str(info.value)


# --------------------------------------------------------------------------- baselines and statistics
def test_ngram_losses_by_hand():
    """Training text "abcab", held-out "ab": counts worked out by hand, discount 0.5."""
    train = np.frombuffer(b"abcab", dtype=np.uint8)
    held = np.frombuffer(b"ab", dtype=np.uint8)
    D = 0.5
    # unigram: N = 5, c(a) = 2, c(b) = 2, c(c) = 1, three distinct bytes
    p1 = {ch: (c - D) / 5 + D * 3 / 5 / 256 for ch, c in (("a", 2), ("b", 2), ("c", 1))}
    np.testing.assert_allclose(lab.ngram_byte_losses(train, held, 1, discount=D), -np.log([p1["a"], p1["b"]]))
    # bigram: after "a" always "b" (twice): c(a.) = 2, one distinct follower.
    # The first held-out byte has no context and keeps the unigram.
    p2_b = (2 - D) / 2 + D * 1 / 2 * p1["b"]
    np.testing.assert_allclose(lab.ngram_byte_losses(train, held, 2, discount=D), -np.log([p1["a"], p2_b]))
    # "b" was followed once, by "c" (the last "b" ends the text): "bb" unseen gets only the
    # discounted mass, D * N1+(b.) / c(b.) = 0.5, times the unigram
    p2_bb = lab.ngram_byte_losses(train, np.frombuffer(b"bb", dtype=np.uint8), 2, discount=D)[1]
    np.testing.assert_allclose(p2_bb, -np.log(D * 1 / 1 * p1["b"]))
    # a context never seen in training ("d" followed by anything) falls back to the unigram whole
    p2_db = lab.ngram_byte_losses(train, np.frombuffer(b"db", dtype=np.uint8), 2, discount=D)[1]
    np.testing.assert_allclose(p2_db, -np.log(p1["b"]))


def test_ngram_losses_equal_a_direct_count_on_random_text():
    """A second implementation, with Python dictionaries, of the same interpolated model."""
    from collections import Counter

    rng = np.random.default_rng(0)
    train, held = rng.integers(0, 4, size=300), rng.integers(0, 4, size=40)
    D, order = 0.75, 3
    counts = [Counter(tuple(train[i - n + 1 : i + 1]) for i in range(n - 1, train.size)) for n in range(1, order + 1)]
    expected = []
    for t in range(held.size):
        p = 1 / 256
        for n in range(1, min(order, t + 1) + 1):
            h = tuple(held[t - n + 1 : t])
            pairs = counts[n - 1]
            c_h = sum(c for key, c in pairs.items() if key[:-1] == h)
            if c_h:
                followers = sum(1 for key in pairs if key[:-1] == h)
                p = (max(pairs.get((*h, held[t]), 0) - D, 0) + D * followers * p) / c_h
        expected.append(-np.log(p))
    np.testing.assert_allclose(lab.ngram_byte_losses(train, held, order, discount=D), expected, rtol=1e-12)


def test_seed_interval_and_verdict_rules_by_hand():
    mean, half = lab.seed_interval([1.0, 2.0, 3.0])
    assert mean == 2.0 and half == pytest.approx(4.302653 / math.sqrt(3), rel=1e-6)  # t(0.975, 2) from a table
    margin = lab.FLAT_MARGIN
    assert lab.classify_rise([0.5, 0.6, 0.55]) == "rises"
    assert lab.classify_rise([0.0, 0.01, -0.01]) == "flat"
    assert lab.classify_rise([-0.5, -0.6, -0.55]) == "falls"
    assert lab.classify_rise([margin, margin, margin + 1e-3]) == "unresolved"  # on the margin: not a rise


# --------------------------------------------------------------------------- verdicts and their record
def test_quick_verdicts_by_hand():
    curves = {
        ("flat", 0): [2.0, 2.05, 2.08],
        ("flat", 1): [2.0, 1.9, 2.0],
        ("jumps", 0): [2.0, 2.05, 2.1],
        ("jumps", 1): [2.0, 2.3, 2.1],
    }
    assert lab.works_past_training_length(curves, 0.1) == {"flat": True, "jumps": False}
    assert lab.works_past_training_length(curves, 0.3) == {"flat": True, "jumps": True}


def test_the_record_is_not_stale():
    """The record was written by this lab: the same source files, protocol and corpus.
    Any edit to posenc_helpers/lab, to PROTOCOL or to the snapshot fails here until
    `make record-lab` writes a new record."""
    record = trained_extrapolation()
    assert record["digest"] == lab.lab_digest(), "the lab changed since its record was written: make record-lab"
    recorded = {k: tuple(v) if isinstance(v, list) else v for k, v in record["protocol"].items()}
    assert recorded == dataclasses.asdict(lab.PROTOCOL)


def test_the_records_verdicts_follow_from_its_numbers():
    record = trained_extrapolation()
    assert set(record["verdicts"]) == set(lab.METHODS) == set(record["retrieval_reach"])
    assert record["verdicts"] == lab.extrapolation_verdicts(record["text"])
    assert record["retrieval_reach"] == lab.retrieval_verdicts(record["retrieval"])
    assert json.loads(RECORD_PATH.read_text())["verdicts"] == record["verdicts"]
    protocol = lab.PROTOCOL
    for method in lab.METHODS:
        for seed in protocol.seeds:
            runs = record["text"][method][str(seed)]
            assert sorted(map(int, runs)) == sorted(protocol.budgets)
            assert len(runs[str(protocol.largest)]["mean"]) == len(protocol.multiples)
    # the standard error of the mean loss at L over all seeds' windows is at most 0.02 nats
    for method in lab.METHODS:
        ses = [record["text"][method][str(s)][str(protocol.largest)]["se"][0] for s in protocol.seeds]
        assert math.sqrt(sum(se**2 for se in ses)) / len(ses) <= 0.02


def test_the_digest_keys_on_meaning_not_bytes(tmp_path):
    """A copy of the package has the same digest; a docstring or comment edit anywhere on
    the lab's path keeps it, and so does an edit outside the path; a new statement in the
    numerics the model runs on, or another protocol, changes it (issue 35)."""
    import shutil
    from pathlib import Path

    import posenc_helpers

    assert lab.lab_digest() != lab.lab_digest(dataclasses.replace(lab.PROTOCOL, seeds=(0, 1)))
    copy = tmp_path / "posenc_helpers"
    shutil.copytree(Path(posenc_helpers.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert lab.lab_digest(package=copy) == lab.lab_digest()

    def edit(name, old, new):
        path = copy / name
        text = path.read_text()
        assert old in text, (name, old)
        path.write_text(text.replace(old, new, 1))

    def append(name, code):
        path = copy / name
        path.write_text(path.read_text() + code)

    # prose: the lab's module docstring, a numerics function's docstring, a comment
    edit("lab/evaluation.py", '"""', '"""Reworded. ')
    edit("alibi.py", "    Parameters\n", "    A new sentence of the docstring.\n\n    Parameters\n")
    append("lab/training.py", "# a comment\n")
    assert lab.lab_digest(package=copy) == lab.lab_digest()
    # a module off the lab's path (the plots) changes nothing either
    append("plotting/__init__.py", "EDITED = 1\n")
    assert lab.lab_digest(package=copy) == lab.lab_digest()
    # numerics: a statement added to alibi.py, which model.py imports (alibi_bias)
    append("alibi.py", "_SCALE = 2.0\n")
    assert lab.lab_digest(package=copy) != lab.lab_digest()
    # numerics: one number, RoPE's default base, in a fresh copy
    fresh = tmp_path / "fresh" / "posenc_helpers"
    shutil.copytree(Path(posenc_helpers.__file__).parent, fresh, ignore=shutil.ignore_patterns("__pycache__"))
    rope_source = (fresh / "rope.py").read_text()
    assert "base: float = 10000.0" in rope_source
    (fresh / "rope.py").write_text(rope_source.replace("base: float = 10000.0", "base: float = 10001.0", 1))
    assert lab.lab_digest(package=fresh) != lab.lab_digest()


def test_the_code_fingerprint_ignores_prose_only():
    from posenc_helpers.lab.fingerprint import code_fingerprint

    plain = "import math\n\ndef area(r):\n    return math.pi * r ** 2\n"
    prose = (
        '"""Areas."""\nimport math  # the constant\n\n\ndef area(r):\n    """Of a disc."""\n'
        "    return math.pi * r**2  # pi r squared\n"
    )
    assert code_fingerprint(plain) == code_fingerprint(prose)
    for changed in (plain.replace("2", "3"), plain.replace("r ** 2", "r * r"), plain.replace("area", "disc")):
        assert code_fingerprint(changed) != code_fingerprint(plain)
    # a body that is only a docstring counts as an empty body
    assert code_fingerprint('def f():\n    """Nothing."""\n') == code_fingerprint("def f():\n    pass\n")
    with pytest.raises(TypeError, match="source must be a string"):
        code_fingerprint(b"x = 1")


def test_the_training_path_is_what_the_lab_imports():
    """Worked out by reading the imports: model.py imports the validation helpers and four
    numerics modules; the whole lab adds long_context (scaled_rope_frequencies) and
    leaves out measured.py (where the record lives) and every __init__."""
    import posenc_helpers
    from posenc_helpers.lab.fingerprint import training_modules

    root = Path(posenc_helpers.__file__).parent

    def names(start):
        return [path.relative_to(root).as_posix() for path in training_modules(start)]

    assert names(["lab/model.py"]) == [
        "_validation.py",
        "alibi.py",
        "lab/model.py",
        "relative.py",
        "rope.py",
        "sinusoidal.py",
    ]
    whole = names(None)
    assert {"long_context.py", "lab/training.py", "lab/protocol.py", "lab/cache.py"} <= set(whole)
    assert not {"measured.py", "plotting/__init__.py", "lab/__init__.py", "__init__.py"} & set(whole)
    with pytest.raises(ValueError, match="start must name module files"):
        training_modules(["lab/nothing.py"])
    with pytest.raises(TypeError, match="start must be an iterable"):
        training_modules("lab/model.py")


def test_a_stored_run_keys_on_the_training_path_by_meaning(tmp_path, monkeypatch):
    """The store of training runs (POSENC_LAB_CACHE) keeps a run through a docstring edit
    and through an edit of the evaluation code, and drops it when the model's numerics change."""
    import shutil

    import posenc_helpers
    from posenc_helpers.lab import cache, fingerprint

    def key():  # the training path is read once per process: read it again after each edit
        cache._training_path_digest.cache_clear()
        return cache.run_key(inputs)

    inputs = {"method": "rope", "seed": 0, "steps": 5}
    before = key()
    copy = tmp_path / "posenc_helpers"
    shutil.copytree(Path(posenc_helpers.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(fingerprint, "PACKAGE", copy)
    assert key() == before
    rope = copy / "rope.py"
    rope.write_text(rope.read_text().replace('"""', '"""Reworded. ', 1))
    evaluation = copy / "lab" / "evaluation.py"
    evaluation.write_text(evaluation.read_text() + "_EVALUATION_ONLY = 1\n")
    assert key() == before
    rope.write_text(rope.read_text() + "_SCALE = 2.0\n")
    assert key() != before
    monkeypatch.undo()
    cache._training_path_digest.cache_clear()  # the installed package's again, for the tests after this one


def test_keying_runs_from_several_threads_at_once():
    """The lab trains two models at a time in threads, and each keys its run: CPython 3.11's
    ast.parse raised SystemError when two threads parsed at once (seen in make test's nbval lane)."""
    from concurrent.futures import ThreadPoolExecutor

    from posenc_helpers.lab import cache
    from posenc_helpers.lab.fingerprint import code_fingerprint, training_modules

    sources = [path.read_text() for path in training_modules()] * 4
    with ThreadPoolExecutor(8) as pool:
        fingerprints = list(pool.map(code_fingerprint, sources))
    assert fingerprints == [code_fingerprint(source) for source in sources]
    cache._training_path_digest.cache_clear()
    with ThreadPoolExecutor(4) as pool:
        keys = set(pool.map(cache.run_key, [{"seed": 0}] * 8))
    assert len(keys) == 1
