"""Scoring the question tasks (:mod:`posenc_helpers.lab.tasks`): accuracy at unseen lengths, and
the controls that say whether a task needs positions at all.

A question task is scored at its query, the last token:
:func:`~posenc_helpers.lab.question_accuracy` for a trained model, with the context
optionally shuffled; :func:`~posenc_helpers.lab.bag_of_tokens_accuracy` for the best
predictor that sees each context as a bag of tokens, on the same sequences.
"""

from __future__ import annotations

import numpy as np

from .._validation import require_choice, require_count, require_lengths
from .evaluation import check_lengths, check_model, predicted_tokens, run_in_chunks
from .tasks import QUESTION_TASKS, question_sequences
from .training import TrainedModel

__all__ = ["question_accuracy", "retrieval_accuracy", "bag_of_tokens_accuracy"]


def _question_span(task: str, placement: str, length: int, train_len: int) -> tuple[int, int]:
    """Where the planted tokens lie, as distances before the query: the older half of the
    sequence (``"far"``) or the last ``train_len / 2`` tokens (``"near"``)."""
    smallest = 2 if task == "marker" else 1
    if placement == "far":
        return max(smallest, length // 2), length
    return smallest, max(smallest + 2, train_len // 2)


def _question_set(task, length, train_len, placement, seed, windows, alphabet, shuffled):
    """The evaluation sequences of one length and placement (the same for every model of a seed)."""
    rng = np.random.default_rng([seed, length, placement == "far"])
    span = _question_span(task, placement, length, train_len)
    tokens, answers = question_sequences(task, windows, length, span, alphabet, rng)
    if shuffled:  # the context in a random order; the queries stay last, the answers stay
        context = length - 1
        order = np.argsort(np.random.default_rng([seed, length, 7]).random((windows, context)), axis=1)
        tokens[:, :context] = np.take_along_axis(tokens[:, :context], order, axis=1)
    return tokens, answers


def question_accuracy(
    model: TrainedModel, lengths, *, placement: str = "far", seed: int = 0, windows: int = 64, shuffled: bool = False
) -> np.ndarray:
    """For a model of a question task: the fraction of sequences it answers, at each length.

    Each sequence of ``n`` tokens ends with the query; what the task plants (the key,
    the marker, both keys: :func:`~posenc_helpers.lab.question_sequences`) lies
    ``far`` back (uniformly ``n/2 .. n - 1`` tokens before the query: the older half
    of the sequence) or ``near`` (within ``train_len/2`` tokens of it). At ``n`` up
    to the training length both lie where training put them; past it, ``far`` asks
    whether the model still answers when what it needs lies further back than in any
    training sequence, ``near`` whether it still works at all at that length.
    ``shuffled=True`` puts each context in a random order first (the answer stays):
    a task that needs order then falls to what a bag of tokens allows
    (:func:`bag_of_tokens_accuracy`).

    Parameters
    ----------
    model : TrainedModel
        Trained with ``task`` ``"retrieval"``, ``"marker"`` or ``"order"``.
    lengths : sequence of int
        Sequence lengths, each ``>= model.train_len`` and at most ``config.max_positions``.
    placement : {"far", "near"}, optional
        Where the planted tokens lie, default ``"far"``.
    seed : int, optional
        Chooses the sequences (the same for every model).
    windows : int, optional
        Sequences per length, default 64.
    shuffled : bool, optional
        Shuffle each context first (the control), default False.

    Examples
    --------
    >>> from posenc_helpers.lab import ModelConfig, train
    >>> tiny = ModelConfig(d_model=16, n_layers=1, n_heads=2, d_ff=32, max_positions=64)
    >>> model = train("nope", task="order", train_len=8, steps=2, warmup=1, config=tiny, progress=False)
    >>> question_accuracy(model, [8, 16], windows=4).shape
    (2,)
    """
    model = check_model(model)
    if model.task not in QUESTION_TASKS:
        raise ValueError(f"question_accuracy needs a model trained on one of {QUESTION_TASKS}, got {model.task!r}")
    lengths = check_lengths(model, lengths)
    placement = require_choice(placement, "placement", ("far", "near"))
    windows = require_count(windows, "windows", minimum=1)
    seed = require_count(seed, "seed")
    if not isinstance(shuffled, bool):
        raise TypeError(f"shuffled must be True or False, got {shuffled!r}")
    out = []
    for length in lengths:
        tokens, answers = _question_set(
            model.task, length, model.train_len, placement, seed, windows, model.alphabet, shuffled
        )
        predicted = run_in_chunks(model, predicted_tokens, tokens)[:, -1]
        out.append(float((predicted == answers).mean()))
    return np.array(out)


def retrieval_accuracy(
    model: TrainedModel, lengths, *, placement: str = "far", seed: int = 0, windows: int = 64
) -> np.ndarray:
    """For a ``task="retrieval"`` model (the content lookup): the fraction of sequences whose
    key it names, at each length; :func:`question_accuracy` for that task. Chance is
    ``1 / model.alphabet``; a bag of tokens names every key
    (:func:`bag_of_tokens_accuracy`), since the key is the one symbol of its kind.

    Examples
    --------
    >>> from posenc_helpers.lab import ModelConfig, train
    >>> tiny = ModelConfig(d_model=16, n_layers=1, n_heads=2, d_ff=32, max_positions=64)
    >>> model = train("nope", task="retrieval", train_len=8, steps=2, warmup=1, config=tiny, progress=False)
    >>> retrieval_accuracy(model, [8, 16], windows=4).shape
    (2,)
    """
    model = check_model(model)
    if model.task != "retrieval":
        raise ValueError("retrieval_accuracy needs a model trained with task='retrieval'")
    return question_accuracy(model, lengths, placement=placement, seed=seed, windows=windows)


def bag_of_tokens_accuracy(
    task: str, lengths, *, train_len: int, placement: str = "far", seed: int = 0, windows: int = 64,
    alphabet: int = 32,
) -> np.ndarray:  # fmt: skip
    """The best accuracy any predictor that sees each context as a bag of tokens can expect, on
    the sequences :func:`question_accuracy` scores (same arguments, same sequences).

    The Bayes-optimal answer given the counts of the symbols before the query:

    * ``"retrieval"``: the one key symbol in the bag: always right (1.0): the content
      lookup needs no position;
    * ``"order"``: either of the two keys, which are equally likely to be the later
      one: 1/2;
    * ``"marker"``: the answer is a filler symbol, drawn like every other filler
      symbol (uniformly, independently), so each of the bag's ``N`` filler symbols is
      equally likely to be the one after the marker: a symbol seen ``n_s`` times is
      the answer with probability ``n_s / N``, and the best guess is the most frequent
      symbol (ties split evenly): a little above ``1 / alphabet``.

    Examples
    --------
    >>> [bag_of_tokens_accuracy(task, [64], train_len=64).tolist() for task in ("order", "retrieval")]
    [[0.5], [1.0]]
    >>> float(bag_of_tokens_accuracy("marker", [64], train_len=64, windows=512)[0]) < 0.25
    True
    """
    task = require_choice(task, "task", QUESTION_TASKS)
    train_len = require_count(train_len, "train_len", minimum=2)
    lengths = require_lengths(lengths, "lengths", minimum=train_len)
    placement = require_choice(placement, "placement", ("far", "near"))
    windows = require_count(windows, "windows", minimum=1)
    seed = require_count(seed, "seed")
    alphabet = require_count(alphabet, "alphabet", minimum=2)
    out = []
    for length in lengths:
        if task != "marker":
            out.append(1.0 if task == "retrieval" else 0.5)
            continue
        tokens, answers = _question_set(task, length, train_len, placement, seed, windows, alphabet, False)
        counts = np.stack([np.bincount(row[row < alphabet], minlength=alphabet) for row in tokens])
        best = counts == counts.max(axis=1, keepdims=True)
        out.append(float((best[np.arange(windows), answers] / best.sum(axis=1)).mean()))
    return np.array(out)
