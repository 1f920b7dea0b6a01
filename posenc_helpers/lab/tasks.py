"""What the lab's models learn: the training batches of each task.

``"text"``
    Next-byte prediction on windows of the training text (:func:`~posenc_helpers.lab.stdlib_corpus`).
``"offset"``
    Random symbols from ``range(alphabet)``; the target at position ``i >= phi`` is
    the symbol at ``i - phi`` (chapter 10's "look φ tokens back" head, learned).
``"retrieval"``
    A passkey: filler symbols from ``range(alphabet)``, one *key* symbol from
    ``alphabet .. 2 alphabet - 1`` planted somewhere, and a *query* symbol
    (``2 alphabet``) last; the only scored target, at the query, is the key. The key
    is the one symbol of its kind, so a model finds it by content; what the position
    method decides is whether attention can still reach it when it lies further back
    than any training sequence put it.

Batch ``step`` of a run with seed ``seed`` is drawn from its own generator,
``numpy.random.default_rng([seed, step])``, so a run cut short, or continued from a
saved point, sees exactly the batches of the full run up to there.
"""

from __future__ import annotations

import numpy as np

from .corpus import sample_windows, stdlib_corpus

__all__ = ["TASKS", "training_batch", "retrieval_sequences"]

#: The training tasks (see the module docstring).
TASKS: tuple[str, ...] = ("text", "offset", "retrieval")


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
    distances = rng.integers(1, length, size=batch_size)  # every distance a training sequence can hold
    tokens, keys = retrieval_sequences(batch_size, length, distances, alphabet, rng)
    targets = np.zeros_like(tokens)
    targets[:, -1] = keys
    weights = np.zeros((batch_size, length), np.float32)
    weights[:, -1] = 1.0
    return tokens, targets, weights
