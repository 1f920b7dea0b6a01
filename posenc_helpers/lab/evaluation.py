"""Evaluating lab models on held-out text at lengths up to and past their training length."""

from __future__ import annotations

from functools import partial

import jax
import numpy as np
import optax

from .._validation import require_count, require_lengths
from .corpus import stdlib_corpus, window_ends
from .model import forward
from .training import TrainedModel, hooks_for

__all__ = [
    "scored_byte_indices",
    "length_losses",
    "length_curve",
    "sliding_window_losses",
    "position_losses",
    "offset_accuracy",
    "offset_attention",
    "rope_pair_norms",
]

#: Attention weights are held for at most this many (query, key) pairs per head at
#: once; longer evaluations are split into chunks of windows.
_PAIRS_PER_CHUNK = 2**23


@partial(jax.jit, static_argnames="n_heads")
def _token_losses(params, inputs, targets, hooks, n_heads):
    logits = forward(params, inputs, hooks, n_heads)
    return optax.softmax_cross_entropy_with_integer_labels(logits, targets)


@partial(jax.jit, static_argnames="n_heads")
def predicted_tokens(params, inputs, hooks, n_heads):
    """The most likely next token at every position (for :func:`run_in_chunks`)."""
    return forward(params, inputs, hooks, n_heads).argmax(-1)


@partial(jax.jit, static_argnames="n_heads")
def _traced(params, inputs, hooks, n_heads):
    return forward(params, inputs, hooks, n_heads, trace=True)


def check_model(model: object) -> TrainedModel:
    """``model``, or a ``TypeError`` naming the argument when it is not a :class:`TrainedModel`."""
    if not isinstance(model, TrainedModel):
        raise TypeError(f"model must be a TrainedModel (from posenc_helpers.lab.train), got {type(model).__name__}")
    return model


def _windows(model: TrainedModel, length: int, longest: int, count: int, seed: int):
    """Inputs and targets ``(count, length)``: held-out text windows that end at the same
    places for every length (text), or random symbols (offset task).

    The places depend on ``seed`` and ``model.config.max_positions`` only (every
    window could be extended to the longest length the model accepts), so that an
    evaluation at some lengths scores the same bytes as one at others."""
    longest = max(longest, model.config.max_positions)
    if model.task == "text":
        text = stdlib_corpus().held_out
        ends = window_ends(text, longest + 1, count, seed)
        windows = text[ends[:, None] - length - 1 + np.arange(length + 1)[None, :]].astype(np.int32)
        return windows[:, :-1], windows[:, 1:]
    rng = np.random.default_rng(seed)
    symbols = rng.integers(0, model.alphabet, size=(count, longest)).astype(np.int32)[:, -length:]
    return symbols, np.roll(symbols, model.phi, axis=1)


def scored_byte_indices(train_len: int, max_positions: int, *, windows: int, seed: int) -> np.ndarray:
    """Indices into the held-out text of the bytes that :func:`length_losses` scores, ``(windows, train_len)``.

    The same for every evaluation length (the windows end at the same places); a
    baseline scored on these bytes is scored on exactly what the models are.

    Examples
    --------
    >>> indices = scored_byte_indices(64, 1024, windows=3, seed=0)
    >>> indices.shape, bool((np.diff(indices, axis=1) == 1).all())
    ((3, 64), True)
    """
    train_len = require_count(train_len, "train_len", minimum=1)
    max_positions = require_count(max_positions, "max_positions", minimum=train_len)
    ends = window_ends(stdlib_corpus().held_out, max_positions + 1, require_count(windows, "windows", minimum=1), seed)
    return ends[:, None] - train_len + np.arange(train_len)[None, :]


def check_lengths(model: TrainedModel, lengths) -> list[int]:
    """``lengths`` as a list of ints, or an error naming the argument: each length at least the
    model's ``train_len`` and at most its ``config.max_positions`` (for :func:`run_in_chunks`' callers)."""
    lengths = require_lengths(lengths, "lengths", minimum=model.train_len)
    if max(lengths) > model.config.max_positions:
        raise ValueError(f"lengths must be at most config.max_positions = {model.config.max_positions}")
    return lengths


def run_in_chunks(model: TrainedModel, function, inputs: np.ndarray, *extra: np.ndarray) -> np.ndarray:
    """``function(params, inputs, *extra, hooks)`` over chunks of windows, concatenated.

    A chunk holds at most ``_PAIRS_PER_CHUNK`` attention weights per head; the last
    chunk is padded, so that each length compiles one shape.
    """
    count, length = inputs.shape
    hooks = hooks_for(model, length)
    chunk = max(1, min(count, _PAIRS_PER_CHUNK // (model.config.n_heads * length * length)))
    parts = []
    for start in range(0, count, chunk):
        stop = min(count, start + chunk)
        arrays = [a[start:stop] for a in (inputs, *extra)]
        if stop - start < chunk:
            arrays = [np.concatenate([a, a[: chunk - (stop - start)]]) for a in arrays]
        out = function(model.params, *arrays, hooks, n_heads=model.config.n_heads)
        parts.append(np.asarray(out)[: stop - start])
    return np.concatenate(parts)


def _per_token(model: TrainedModel, length: int, longest: int, count: int, seed: int) -> np.ndarray:
    """Loss of every token of ``count`` windows of ``length``, shape ``(count, length)``."""
    inputs, targets = _windows(model, length, longest, count, seed)
    return run_in_chunks(model, _token_losses, inputs, targets).astype(np.float64)


def length_losses(model: TrainedModel, lengths, *, seed: int = 0, windows: int = 16) -> np.ndarray:
    """Mean loss of each held-out window at each evaluation length, shape ``(windows, len(lengths))``.

    The windows of every length end at the same places in the held-out text
    (chosen by ``seed``), and only each window's last ``model.train_len`` positions
    are scored, so that every length predicts the same bytes and only the context
    before them, and the positions they sit at, change. Rows are windows: their
    spread gives the standard error of :func:`length_curve`, and the difference of
    two columns the paired rise from one length to another.

    Parameters
    ----------
    model : TrainedModel
        From :func:`~posenc_helpers.lab.train` (task ``"text"`` or ``"offset"``).
    lengths : sequence of int
        Evaluation lengths, each ``>= model.train_len`` and at most
        ``model.config.max_positions``.
    seed : int, optional
        Chooses the held-out windows (text) or the random symbols (offset task).
    windows : int, optional
        Windows per length, default 16.

    Examples
    --------
    >>> from posenc_helpers.lab import ModelConfig, train
    >>> tiny = ModelConfig(d_model=16, n_layers=1, n_heads=2, d_ff=32, max_positions=64)
    >>> model = train("alibi", train_len=8, steps=2, warmup=1, config=tiny, progress=False)
    >>> length_losses(model, [8, 16, 32], windows=5).shape
    (5, 3)
    """
    model = check_model(model)
    if model.task not in ("text", "offset"):
        raise ValueError(f"length_losses scores text or offset models; use question_accuracy for task={model.task!r}")
    lengths = check_lengths(model, lengths)
    windows = require_count(windows, "windows", minimum=1)
    seed = require_count(seed, "seed")
    longest = max(lengths)
    scored = model.train_len
    columns = [_per_token(model, length, longest, windows, seed)[:, -scored:].mean(axis=1) for length in lengths]
    return np.stack(columns, axis=1)


def sliding_window_losses(model: TrainedModel, *, seed: int = 0, windows: int = 16, stride: int = 8) -> np.ndarray:
    """Mean loss of each held-out window's scored bytes when each is predicted from (nearly) a full
    training length of context, shape ``(windows,)``: the reference a model that never looked
    further back than ``train_len`` tokens would reach (Press et al.'s sliding-window evaluation).

    The bytes are those :func:`length_losses` scores (each window's last ``train_len``).
    Windows of ``train_len`` tokens slide over them ``stride`` bytes at a time, and each
    scores only its last ``stride`` bytes, so every byte sees at least ``train_len -
    stride`` bytes before it and sits where training put the last positions. At the
    training length itself, :func:`length_losses` also scores early bytes that see little
    context; the difference between the two is the *early-token gain* a longer
    evaluation collects for free.

    Examples
    --------
    >>> from posenc_helpers.lab import ModelConfig, train
    >>> tiny = ModelConfig(d_model=16, n_layers=1, n_heads=2, d_ff=32, max_positions=64)
    >>> model = train("alibi", train_len=8, steps=2, warmup=1, config=tiny, progress=False)
    >>> sliding_window_losses(model, windows=3, stride=4).shape
    (3,)
    """
    model = check_model(model)
    if model.task != "text":
        raise ValueError(f"sliding_window_losses scores text models, got task={model.task!r}")
    windows = require_count(windows, "windows", minimum=1)
    seed = require_count(seed, "seed")
    length = model.train_len
    stride = require_count(stride, "stride", minimum=1)
    if length % stride:
        raise ValueError(f"stride must divide train_len = {length}, got {stride}")
    if 2 * length > model.config.max_positions + 1:
        raise ValueError(
            f"sliding_window_losses needs config.max_positions >= 2 * train_len - 1 = {2 * length - 1}, "
            f"got {model.config.max_positions}"
        )
    inputs, targets = _windows(model, 2 * length, 2 * length, windows, seed)  # the scored bytes are the last half
    losses = [
        run_in_chunks(model, _token_losses, inputs[:, start : start + length], targets[:, start : start + length])[
            :, -stride:
        ]
        for start in range(stride, length + 1, stride)
    ]
    return np.concatenate(losses, axis=1).astype(np.float64).mean(axis=1)


def length_curve(model: TrainedModel, lengths, *, seed: int = 0, windows: int = 16) -> np.ndarray:
    """Mean next-token loss (nats) on held-out data at each evaluation length.

    The mean over windows of :func:`length_losses` (see there for how a length is
    scored): every length predicts the same bytes; only the context before them,
    and the positions they sit at, change.

    Parameters
    ----------
    model : TrainedModel
        From :func:`~posenc_helpers.lab.train` (task ``"text"`` or ``"offset"``).
    lengths : sequence of int
        Evaluation lengths, each ``>= model.train_len`` and at most
        ``model.config.max_positions``.
    seed : int, optional
        Chooses the held-out windows (text) or the random symbols (offset task).
    windows : int, optional
        Windows per length, default 16.

    Returns
    -------
    numpy.ndarray
        Shape ``(len(lengths),)``, float64.

    Examples
    --------
    >>> from posenc_helpers.lab import ModelConfig, train
    >>> tiny = ModelConfig(d_model=16, n_layers=1, n_heads=2, d_ff=32, max_positions=64)
    >>> model = train("alibi", train_len=8, steps=2, warmup=1, config=tiny, progress=False)
    >>> length_curve(model, [8, 16, 32], windows=2).shape
    (3,)
    """
    return length_losses(model, lengths, seed=seed, windows=windows).mean(axis=0)


def position_losses(model: TrainedModel, length: int, *, seed: int = 0, windows: int = 16) -> np.ndarray:
    """Mean loss (nats) at every position ``0 .. length - 1`` of held-out windows of ``length``.
    Examples
    --------
    >>> from posenc_helpers.lab import ModelConfig, train
    >>> tiny = ModelConfig(d_model=16, n_layers=1, n_heads=2, d_ff=32, max_positions=64)
    >>> model = train("alibi", train_len=8, steps=2, warmup=1, config=tiny, progress=False)
    >>> position_losses(model, 16, windows=2).shape
    (16,)
    """
    model = check_model(model)
    if model.task not in ("text", "offset"):
        raise ValueError(f"position_losses scores text or offset models, got task={model.task!r}")
    length = require_count(length, "length", minimum=2)
    if length > model.config.max_positions:
        raise ValueError(f"length must be at most config.max_positions = {model.config.max_positions}")
    return _per_token(
        model, length, length, require_count(windows, "windows", minimum=1), require_count(seed, "seed")
    ).mean(axis=0)


def offset_accuracy(model: TrainedModel, lengths, *, seed: int = 0, windows: int = 16) -> np.ndarray:
    """For an ``task="offset"`` model: the fraction of the last ``train_len`` positions at which
    the most likely output is the symbol ``phi`` positions back, at each length.
    Examples
    --------
    >>> from posenc_helpers.lab import ModelConfig, train
    >>> tiny = ModelConfig(d_model=16, n_layers=1, n_heads=2, d_ff=32, max_positions=64)
    >>> model = train("rope", task="offset", train_len=8, steps=2, warmup=1, config=tiny, progress=False)
    >>> offset_accuracy(model, [8, 16], windows=2).shape
    (2,)
    """
    model = check_model(model)
    if model.task != "offset":
        raise ValueError("offset_accuracy needs a model trained with task='offset'")
    lengths = check_lengths(model, lengths)
    windows = require_count(windows, "windows", minimum=1)
    seed = require_count(seed, "seed")
    longest = max(lengths)
    out = []
    for length in lengths:
        inputs, targets = _windows(model, length, longest, windows, seed)
        right = run_in_chunks(model, predicted_tokens, inputs) == targets
        scored = right[:, -model.train_len :]
        if length == model.train_len:  # the first phi positions have nothing phi back
            scored = scored[:, model.phi :]
        out.append(scored.mean())
    return np.array(out)


def offset_attention(model: TrainedModel, length: int, *, seed: int = 0, windows: int = 8) -> np.ndarray:
    """For an ``task="offset"`` model: the attention weight each query ``i >= phi`` puts on the
    key ``i - phi``, in the head that puts the most on it (mean over windows), shape ``(length,)``
    (``nan`` for ``i < phi``).
    Examples
    --------
    >>> from posenc_helpers.lab import ModelConfig, train
    >>> tiny = ModelConfig(d_model=16, n_layers=1, n_heads=2, d_ff=32, max_positions=64)
    >>> model = train("rope", task="offset", train_len=8, steps=2, warmup=1, config=tiny, progress=False)
    >>> offset_attention(model, 16, windows=2).shape
    (16,)
    """
    model = check_model(model)
    if model.task != "offset":
        raise ValueError("offset_attention needs a model trained with task='offset'")
    length = require_count(length, "length", minimum=model.phi + 1)
    inputs, _ = _windows(model, length, length, windows, seed)
    _, traced = _traced(model.params, inputs, hooks_for(model, length), n_heads=model.config.n_heads)
    attention = np.asarray(traced[0]["attention"]).mean(axis=0)  # (heads, L, L)
    queries = np.arange(model.phi, length)
    on_target = attention[:, queries, queries - model.phi]  # (heads, L - phi)
    best = on_target[:, : model.train_len].mean(axis=1).argmax()  # the head that does the job
    out = np.full(length, np.nan)
    out[queries] = on_target[best]
    return out


def rope_pair_norms(model: TrainedModel, *, seed: int = 0, windows: int = 16) -> dict[str, np.ndarray]:
    """Mean norm of each RoPE frequency pair of the queries and keys, on held-out text.

    Returns ``{"q": ..., "k": ...}``, each of shape ``(n_layers, n_heads, head_dim // 2)``:
    the mean over tokens of ``sqrt(x[2i]**2 + x[2i+1]**2)`` (the rotation does not change
    it). A pair with a small norm contributes little to any score, whatever its angle.

    References
    ----------
    .. [1] F. Barbero, A. Vitvitskyi, C. Perivolaropoulos, R. Pascanu, P. Veličković,
       "Round and Round We Go! What makes Rotary Positional Encodings useful?",
       arXiv:2410.06205, 2024 (ICLR 2025).

    Examples
    --------
    >>> from posenc_helpers.lab import ModelConfig, train
    >>> tiny = ModelConfig(d_model=16, n_layers=1, n_heads=2, d_ff=32, max_positions=64)
    >>> model = train("rope", train_len=8, steps=2, warmup=1, config=tiny, progress=False)
    >>> rope_pair_norms(model, windows=2)["q"].shape
    (1, 2, 4)
    """
    model = check_model(model)
    length = model.train_len
    inputs, _ = _windows(
        model, length, length, require_count(windows, "windows", minimum=1), require_count(seed, "seed")
    )
    _, traced = _traced(model.params, inputs, hooks_for(model, length), n_heads=model.config.n_heads)
    norms = {}
    for name in ("q", "k"):
        stacked = np.stack([np.asarray(layer[name]) for layer in traced])  # (layers, batch, heads, L, dh)
        pairs = np.sqrt(stacked[..., 0::2] ** 2 + stacked[..., 1::2] ** 2)
        norms[name] = pairs.mean(axis=(1, 3))
    return norms
