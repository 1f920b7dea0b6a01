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

__all__ = [
    "ANSWER_KINDS",
    "question_accuracy",
    "retrieval_accuracy",
    "answer_kinds",
    "answer_split",
    "bag_of_tokens_accuracy",
    "order_only_accuracy",
]

#: What a model's answer to a question can be (:func:`answer_kinds`), in the order of precedence.
ANSWER_KINDS: tuple[str, ...] = ("right", "other planted", "neighbour", "other key", "filler", "other")


def _question_span(task: str, placement: str, length: int, train_len: int) -> tuple[int, int]:
    """Where the planted tokens lie, as distances before the query.

    ``"far"``: the older half of the sequence, and past the training length too
    (distances ``n/2 .. n - L - 1``, so every planted token sits at a position ``>= L``)
    wherever the length leaves room for that (``n > 2L``); at ``n <= 2L`` the older
    half, ``n/2 .. n - 1``. ``"near"``: the last ``L / 2`` tokens."""
    smallest = 2 if task == "marker" else 1
    if placement == "far":
        low = max(smallest, length // 2)
        past = length - train_len  # distances below this put a token at a position >= train_len
        return (low, past) if past >= low + 2 else (low, length)
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
    ``far`` back or ``near`` (within ``train_len/2`` tokens of the query). ``far`` is
    the older half of the sequence (uniformly ``n/2 ..`` tokens before the query) and,
    wherever ``n > 2 train_len`` leaves room, also past the training length (at most
    ``n - train_len - 1`` back, so at a position no training sequence had): it asks
    whether the model still answers when what it needs lies both further back and at
    later positions than training ever put it. At ``n = 2 train_len`` the older half
    is positions ``0 .. train_len - 1``, where training put tokens: there ``far`` tests
    distance only, and ``near`` (positions past ``train_len``, distances seen in
    training) tests position only; the verdicts take the worse of the two
    (:func:`~posenc_helpers.lab.question_reach`).
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
    return np.array([float((predicted == answers).mean()) for _, answers, predicted in
                     _answered(model, lengths, placement, seed, windows, shuffled)])  # fmt: skip


def _answered(model, lengths, placement, seed, windows, shuffled):
    """``(tokens, answers, predicted)`` at each length: the sequences and the model's answer at each query."""
    for length in lengths:
        tokens, answers = _question_set(
            model.task, length, model.train_len, placement, seed, windows, model.alphabet, shuffled
        )
        yield tokens, answers, run_in_chunks(model, predicted_tokens, tokens)[:, -1]


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


def answer_kinds(task: str, tokens: np.ndarray, answers: np.ndarray, predicted: np.ndarray, alphabet: int = 32):
    """What each answer ``predicted`` to a question of ``task`` is: an index into :data:`ANSWER_KINDS`.

    Taken in this order, the first that applies:

    ``"right"``
        the answer;
    ``"other planted"``
        another token the task planted: the earlier key (``"order"``), the marker
        itself (``"marker"``); the content lookup plants only its key;
    ``"neighbour"``
        the symbol right before or right after the answer's place in the context (the
        query excepted): for the marker task, the symbol two after the marker;
    ``"other key"``
        a key symbol (``alphabet .. 2 alphabet - 1``) that is none of the above: in the
        content lookup and the order task, a key *absent* from the sequence;
    ``"filler"``
        any other filler symbol (``0 .. alphabet - 1``);
    ``"other"``
        anything else (a query or marker symbol where none belongs).

    Parameters
    ----------
    task : {"retrieval", "marker", "order"}
    tokens : numpy.ndarray
        The sequences, ``(count, length)``, in their original order (not shuffled).
    answers, predicted : numpy.ndarray
        The right answers and the model's, ``(count,)``.
    alphabet : int, optional
        Filler symbols, default 32.

    Examples
    --------
    An order question: keys 5 (earlier) and 6 (later, the answer) among filler 0-3:

    >>> tokens = np.array([[1, 5, 2, 6, 3, 8]])
    >>> kind = lambda p: ANSWER_KINDS[int(answer_kinds("order", tokens, np.array([6]), np.array([p]), 4)[0])]
    >>> [kind(p) for p in (6, 5, 3, 7, 0, 8)]
    ['right', 'other planted', 'neighbour', 'other key', 'filler', 'other']
    """
    task = require_choice(task, "task", QUESTION_TASKS)
    tokens, answers, predicted = (np.asarray(a) for a in (tokens, answers, predicted))
    count, length = tokens.shape
    context = tokens[:, :-1]
    rows = np.arange(count)
    if task == "marker":
        marker = (context == 2 * alphabet).argmax(axis=1)
        place, other = marker + 1, np.full(count, 2 * alphabet)
    else:
        place = (context == answers[:, None]).argmax(axis=1)
        keys = (context >= alphabet) & (context < 2 * alphabet) & (context != answers[:, None])
        other = np.where(keys.any(axis=1), context[rows, keys.argmax(axis=1)], -1)  # type: ignore[assignment]  # no other key: never matched
    before = np.where(place >= 1, context[rows, np.maximum(place - 1, 0)], -1)
    after = np.where(place + 1 < length - 1, context[rows, np.minimum(place + 1, length - 2)], -1)
    conditions = [
        predicted == answers,
        predicted == other,
        (predicted == before) | (predicted == after),
        (predicted >= alphabet) & (predicted < 2 * alphabet),
        (predicted >= 0) & (predicted < alphabet),
    ]
    return np.select(conditions, np.arange(len(conditions)), default=len(conditions))  # type: ignore[arg-type]


def answer_split(model: TrainedModel, lengths, *, placement: str = "far", seed: int = 0, windows: int = 64):
    """What a question model answers, at each length: ``{kind: fraction of sequences}`` over
    :data:`ANSWER_KINDS` (:func:`answer_kinds`), on the sequences :func:`question_accuracy`
    scores (same arguments; ``"right"`` is its accuracy).

    Examples
    --------
    >>> from posenc_helpers.lab import ModelConfig, train
    >>> tiny = ModelConfig(d_model=16, n_layers=1, n_heads=2, d_ff=32, max_positions=64)
    >>> model = train("nope", task="order", train_len=8, steps=2, warmup=1, config=tiny, progress=False)
    >>> split = answer_split(model, [8, 16], windows=4)
    >>> list(split) == list(ANSWER_KINDS), bool(np.allclose(sum(split.values()), 1.0))
    (True, True)
    """
    model = check_model(model)
    if model.task not in QUESTION_TASKS:
        raise ValueError(f"answer_split needs a model trained on one of {QUESTION_TASKS}, got {model.task!r}")
    lengths = check_lengths(model, lengths)
    placement = require_choice(placement, "placement", ("far", "near"))
    windows = require_count(windows, "windows", minimum=1)
    seed = require_count(seed, "seed")
    columns = [
        np.bincount(answer_kinds(model.task, tokens, answers, predicted, model.alphabet), minlength=len(ANSWER_KINDS))
        / windows
        for tokens, answers, predicted in _answered(model, lengths, placement, seed, windows, False)
    ]
    return {kind: np.array([column[k] for column in columns]) for k, kind in enumerate(ANSWER_KINDS)}


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


def order_only_accuracy(
    task: str, lengths, *, train_len: int, placement: str = "far", seed: int = 0, windows: int = 64,
    alphabet: int = 32,
) -> np.ndarray:  # fmt: skip
    """The best accuracy a predictor can expect that knows which tokens come after each planted
    token, but not how far after: what the causal mask tells, with no count of the tokens
    between. Same arguments and sequences as :func:`question_accuracy`.

    * ``"retrieval"`` and ``"order"``: always right (1.0): the key is the one key symbol,
      and the later of two keys is the one that comes after the other. The causal mask
      alone solves both: the later key can attend to the earlier one, not the reverse;
    * ``"marker"``: the answer is one of the tokens after the marker, each drawn like
      every filler symbol, so the best guess is the most frequent symbol among them
      (ties split evenly): right every time when the marker is two before the query,
      close to ``1 / alphabet`` when it is far back. A model that answers better
      far back knows *how far* a token lies from the marker: a position signal.

    Examples
    --------
    >>> [order_only_accuracy(task, [64], train_len=64).tolist() for task in ("order", "retrieval")]
    [[1.0], [1.0]]
    >>> float(order_only_accuracy("marker", [256], train_len=64, windows=256)[0]) < 0.2
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
            out.append(1.0)
            continue
        tokens, answers = _question_set(task, length, train_len, placement, seed, windows, alphabet, False)
        after = np.arange(length)[None, :] > (tokens == 2 * alphabet).argmax(axis=1)[:, None]
        after[:, -1] = False  # the query
        counts = np.stack([np.bincount(row[keep], minlength=alphabet) for row, keep in zip(tokens, after, strict=True)])
        best = counts == counts.max(axis=1, keepdims=True)
        out.append(float((best[np.arange(windows), answers] / best.sum(axis=1)).mean()))
    return np.array(out)
