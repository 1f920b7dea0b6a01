"""What the lab's models learn: the training batches of each task.

``"text"``
    Next-byte prediction on windows of the training text (:func:`~posenc_helpers.lab.stdlib_corpus`).
``"offset"``
    Random symbols from ``range(alphabet)``; the target at position ``i >= phi`` is
    the symbol at ``i - phi`` (chapter 10's "look φ tokens back" head, learned).
``"retrieval"``
    The *content lookup*: filler symbols from ``range(alphabet)``, one *key* symbol
    from ``alphabet .. 2 alphabet - 1`` planted somewhere, and a *query* symbol
    (``2 alphabet``) last; the only scored target, at the query, is the key. The key
    is the one symbol of its kind, so a model finds it by content alone, with no
    position at all; what it measures is whether a position method *disturbs* a
    lookup by content when the key lies further back than any training sequence put it.
``"marker"``
    Recall by place: filler symbols, one *marker* symbol (``2 alphabet``) planted
    somewhere, and the query (``2 alphabet + 1``) last; the target at the query is the
    symbol right *after* the marker. That value is an ordinary filler symbol, so
    content alone cannot tell it from the rest, and neither can order alone (every
    token after the marker follows it): the model has to know how far a token lies
    from the marker, a position signal. Left alone, the lab's small models take thousands of steps to
    discover that (the one scored token per sequence carries little signal), so every
    other position is also asked for the token right before it (chapter 10's
    look-back task with φ = 1), with a total weight equal to the query's. That teaches
    the previous-token head; whether the model can *use* it for the marker at places
    and distances training never showed is what the query's accuracy measures.
``"order"``
    Which of two keys came last: filler symbols, two different key symbols planted
    at two places, and the query (``2 alphabet``) last; the target is the later key.
    Both keys are in the context whichever came last, so a model that sees the
    context as a bag of tokens is at chance (one half); but order alone answers it,
    and a causal decoder has order without positions (the later key can attend to
    the earlier one, not the reverse), so it is no test of a position method.

Batch ``step`` of a run with seed ``seed`` is drawn from its own generator,
``numpy.random.default_rng([seed, step])``, so a run cut short, or continued from a
saved point, sees exactly the batches of the full run up to there.
"""

from __future__ import annotations

import numpy as np

from .corpus import sample_windows, stdlib_corpus

__all__ = ["TASKS", "QUESTION_TASKS", "training_batch", "retrieval_sequences", "question_sequences"]

#: The training tasks (see the module docstring).
TASKS: tuple[str, ...] = ("text", "offset", "retrieval", "marker", "order")

#: The tasks scored by the answer at the query, the last token.
QUESTION_TASKS: tuple[str, ...] = ("retrieval", "marker", "order")


def retrieval_sequences(
    count: int, length: int, distances: np.ndarray, alphabet: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``count`` passkey sequences of ``length`` tokens and their keys.

    The key of sequence ``b`` sits ``distances[b]`` positions before the query (the
    last token), at position ``length - 1 - distances[b]``.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        ``int32`` tokens ``(count, length)`` and keys ``(count,)``.

    Examples
    --------
    >>> import numpy as np
    >>> tokens, keys = retrieval_sequences(1, 6, np.array([2]), 4, np.random.default_rng(0))
    >>> int(tokens[0, 3]) == int(keys[0]) and 4 <= int(keys[0]) < 8, int(tokens[0, -1])
    (True, 8)
    """
    distances = np.asarray(distances)
    if distances.shape != (count,) or distances.min() < 1 or distances.max() > length - 1:
        raise ValueError(f"distances must be {count} integers in 1..{length - 1}")
    tokens = rng.integers(0, alphabet, size=(count, length)).astype(np.int32)
    keys = rng.integers(alphabet, 2 * alphabet, size=count).astype(np.int32)
    tokens[np.arange(count), length - 1 - distances] = keys
    tokens[:, -1] = 2 * alphabet
    return tokens, keys


def question_sequences(
    task: str, count: int, length: int, span: tuple[int, int], alphabet: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``count`` sequences of a question task, each ending with its query, and their answers.

    Every planted token lies ``span[0] .. span[1] - 1`` positions before the query
    (the last token): the key (``"retrieval"``); the marker, whose successor, the
    answer, is one position nearer (``"marker"``; the marker is never right before
    the query); both keys, at two different places (``"order"``).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        ``int32`` tokens ``(count, length)`` and answers ``(count,)``.

    Examples
    --------
    >>> import numpy as np
    >>> tokens, answers = question_sequences("marker", 2, 8, (2, 7), 4, np.random.default_rng(0))
    >>> where = (tokens == 8).argmax(axis=1)   # the marker
    >>> bool((tokens[[0, 1], where + 1] == answers).all()), tokens[:, -1].tolist(), bool((answers < 4).all())
    (True, [9, 9], True)
    >>> tokens, answers = question_sequences("order", 1, 8, (1, 7), 4, np.random.default_rng(0))
    >>> keys = np.flatnonzero(tokens[0] >= 4)[:-1]
    >>> len(keys), int(tokens[0, keys[-1]]) == int(answers[0])
    (2, True)
    """
    low, high = span
    if task not in QUESTION_TASKS:
        raise ValueError(f"task must be one of {QUESTION_TASKS}, got {task!r}")
    smallest = 2 if task == "marker" else 1
    if not smallest <= low < high <= length or (task == "order" and high - low < 2):
        raise ValueError(f"span must satisfy {smallest} <= span[0] < span[1] <= length = {length}, got {span}")
    if task == "retrieval":
        return retrieval_sequences(count, length, rng.integers(low, high, size=count), alphabet, rng)
    tokens = rng.integers(0, alphabet, size=(count, length)).astype(np.int32)
    rows = np.arange(count)
    if task == "marker":
        distances = rng.integers(low, high, size=count)
        tokens[rows, length - 1 - distances] = 2 * alphabet
        answers = tokens[rows, length - distances].copy()
        tokens[:, -1] = 2 * alphabet + 1
        return tokens, answers
    # "order": two different places and two different keys; the answer is the key nearer the query
    first = rng.integers(low, high, size=count)
    second = rng.integers(low, high - 1, size=count)
    second = second + (second >= first)  # a different place, uniform over the rest of the span
    keys = alphabet + np.stack([rng.integers(0, alphabet, size=count), rng.integers(0, alphabet - 1, size=count)], 1)
    keys[:, 1] += keys[:, 1] >= keys[:, 0]  # a different key
    tokens[rows, length - 1 - first] = keys[:, 0]
    tokens[rows, length - 1 - second] = keys[:, 1]
    tokens[:, -1] = 2 * alphabet
    answers = np.where(first < second, keys[:, 0], keys[:, 1]).astype(np.int32)
    return tokens, answers


def training_batch(
    task: str, length: int, batch_size: int, seed: int, step: int, *, phi: int = 3, alphabet: int = 32
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Inputs, targets and loss weights of training step ``step``, each ``(batch_size, length)``.

    Examples
    --------
    >>> inputs, targets, weights = training_batch("retrieval", 8, 2, seed=0, step=0)
    >>> weights.tolist()[0], inputs[:, -1].tolist(), bool(((targets[:, -1] >= 32) & (targets[:, -1] < 64)).all())
    ([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], [64, 64], True)
    >>> a, _, _ = training_batch("text", 8, 2, seed=0, step=5)
    >>> b, _, _ = training_batch("text", 8, 2, seed=0, step=5)
    >>> bool((a == b).all())
    True
    """
    rng = np.random.default_rng([seed, step])
    if task == "text":
        windows = sample_windows(stdlib_corpus().train, length + 1, batch_size, rng)
        return windows[:, :-1], windows[:, 1:], np.ones((batch_size, length), np.float32)
    if task == "offset":
        symbols = rng.integers(0, alphabet, size=(batch_size, length)).astype(np.int32)
        targets = np.roll(symbols, phi, axis=1)  # target at i: the symbol at i - phi
        weights = (np.arange(length) >= phi).astype(np.float32)[None, :].repeat(batch_size, axis=0)
        return symbols, targets, weights
    if task == "retrieval":
        distances = rng.integers(1, length, size=batch_size)  # every distance a training sequence can hold
        tokens, answers = retrieval_sequences(batch_size, length, distances, alphabet, rng)
    else:  # every place a training sequence can hold
        tokens, answers = question_sequences(
            task, batch_size, length, (2 if task == "marker" else 1, length), alphabet, rng
        )
    targets = np.zeros_like(tokens)
    weights = np.zeros((batch_size, length), np.float32)
    if (
        task == "marker" and length > 2
    ):  # every other position: the token right before it, in total as much as the query
        targets[:, 1:-1] = tokens[:, :-2]
        weights[:, 1:-1] = 1.0 / (length - 2)
    targets[:, -1] = answers
    weights[:, -1] = 1.0
    return tokens, targets, weights
