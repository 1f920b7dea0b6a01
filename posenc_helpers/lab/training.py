"""Training the lab's models on one of its tasks (:mod:`posenc_helpers.lab.tasks`).

One compiled training step serves every method and every model of the same batch
shape: the method lives in the hooks (data), and the learning rate is an input of
the optimiser (``optax.inject_hyperparams``), so a new model costs no compilation.
Several training budgets of one model share one run (:func:`train_budgets`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

import jax
import jax.numpy as jnp
import numpy as np

from .._validation import require_choice, require_count, require_lengths, require_positive_real
from ..long_context import scaled_rope_frequencies
from .cache import cached_run
from .model import METHODS, Hooks, ModelConfig, init_params, position_hooks
from .optimiser import DECAY_FRACTION, OPTIMIZER, decay_steps, learning_rate_at, train_step
from .tasks import TASKS, training_batch

__all__ = [
    "TASKS",
    "TrainedModel",
    "DEFAULT_CONFIGS",
    "learning_rate_at",  # re-exported from .optimiser
    "DECAY_FRACTION",  # re-exported from .optimiser
    "train",
    "train_budgets",
    "train_many",
    "train_sweep",
    "fine_tune",
    "with_rope_scaling",
    "hooks_for",
    "two_at_a_time",
    "train_step_flops",
]

#: The model each task trains by default: the text model (about 0.59 M weights),
#: and smaller ones for the symbol tasks (one layer for "offset", whose answer one
#: attention layer can find; two for "retrieval").
DEFAULT_CONFIGS: dict[str, ModelConfig] = {
    "text": ModelConfig(),
    "offset": ModelConfig(d_model=64, n_layers=1, d_ff=256),
    "retrieval": ModelConfig(d_model=64, n_layers=2, d_ff=256),
    "marker": ModelConfig(d_model=64, n_layers=2, d_ff=256),
    "order": ModelConfig(d_model=64, n_layers=2, d_ff=256),
}


@dataclass(frozen=True)
class TrainedModel:
    """A trained lab model and how it was made.

    ``train_len`` is the length it was trained at (for a fine-tuned model: the
    length of the original training, which evaluations keep using as the span of
    positions they score). ``inv_freq`` and ``attention_factor`` are the RoPE
    frequencies and YaRN factor its evaluations use (None: the original
    ``rope_frequencies(head_dim)``).
    """

    method: str
    task: str
    config: ModelConfig
    params: dict = field(repr=False)
    train_len: int
    seed: int
    steps: int
    losses: np.ndarray = field(repr=False)
    seconds: float
    phi: int = 3
    alphabet: int = 32
    inv_freq: np.ndarray | None = field(default=None, repr=False)
    attention_factor: float = 1.0
    scaling: str = "none"
    fine_tune_len: int | None = None


def hooks_for(model: TrainedModel, length: int) -> Hooks:
    """The position hooks ``model`` uses at ``length`` (with its RoPE rescaling, if any).
    Examples
    --------
    >>> model = train("rope", train_len=8, steps=2, warmup=1, config=TINY, progress=False)
    >>> hooks_for(model, 16).cos.shape
    (16, 4)
    """
    return position_hooks(
        model.method, length, model.config, inv_freq=model.inv_freq, attention_factor=model.attention_factor
    )


#: A tiny configuration for examples and quick tests.
TINY = ModelConfig(d_model=16, n_layers=1, n_heads=2, d_ff=32, max_positions=64)


def _progress(total: int, description: str, enabled: bool):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=description, leave=False, mininterval=0.5)


def _run(
    params,
    *,
    method,
    task,
    config,
    length,
    budgets,
    batch_size,
    learning_rate,
    warmup,
    seed,
    phi,
    alphabet,
    hooks,
    progress,
    description,
):
    """Train one trajectory to the largest budget, branching off each smaller budget's decay.

    Returns ``{budget: (params, losses, seconds)}``; a branch's losses are the shared
    steps' followed by its own decay's.
    """
    budgets = sorted(budgets)
    largest = budgets[-1]
    branch_at = {budget - decay_steps(budget): budget for budget in budgets[:-1]}
    total = largest + sum(decay_steps(b) for b in budgets[:-1])
    bar = _progress(total, description, progress)
    results = {}
    state = (params, OPTIMIZER.init(params))
    losses: list = []
    start = time.perf_counter()

    def advance(state, step, budget):
        inputs, targets, weights = training_batch(task, length, batch_size, seed, step, phi=phi, alphabet=alphabet)
        lr = np.float32(learning_rate_at(step, budget, learning_rate, warmup))
        params, opt_state, loss = train_step(*state, lr, inputs, targets, weights, hooks, n_heads=config.n_heads)
        if bar is not None:
            bar.update(1)
            if bar.n % 10 == 0:
                loss.block_until_ready()  # JAX runs ahead of Python; the bar should not
        return (params, opt_state), loss

    def finish(state, losses):
        values = np.asarray(jax.device_get(jnp.stack(losses)), dtype=np.float64)
        return state[0], values, time.perf_counter() - start

    for step in range(largest):
        if step in branch_at:  # a smaller budget starts its decay here: follow it to its end
            budget = branch_at[step]
            branch, branch_losses = state, list(losses)
            for branch_step in range(step, budget):
                branch, loss = advance(branch, branch_step, budget)
                branch_losses.append(loss)
            results[budget] = finish(branch, branch_losses)
        state, loss = advance(state, step, largest)
        losses.append(loss)
    results[largest] = finish(state, losses)
    if bar is not None:
        bar.close()
    return results


def _check_training(method, task, train_len, seed, batch_size, learning_rate, warmup, phi, alphabet, config):
    method = require_choice(method, "method", METHODS)
    task = require_choice(task, "task", TASKS)
    train_len = require_count(train_len, "train_len", minimum=2)
    seed = require_count(seed, "seed")
    batch_size = require_count(batch_size, "batch_size", minimum=1)
    learning_rate = require_positive_real(learning_rate, "learning_rate")
    warmup = require_count(warmup, "warmup", minimum=1)
    phi = require_count(phi, "phi", minimum=1)
    alphabet = require_count(alphabet, "alphabet", minimum=2)
    if config is None:
        config = DEFAULT_CONFIGS[task]
    if not isinstance(config, ModelConfig):
        raise TypeError(f"config must be a ModelConfig, got {type(config).__name__}")
    if train_len > config.max_positions:
        raise ValueError(f"train_len must be at most config.max_positions = {config.max_positions}, got {train_len}")
    if task == "offset" and phi >= train_len:
        raise ValueError(f"phi must be smaller than train_len = {train_len}, got {phi}")
    if task in ("retrieval", "marker", "order") and 2 * alphabet + 2 > config.vocab:
        raise ValueError(
            f"alphabet must be at most (config.vocab - 2) // 2 = {(config.vocab - 2) // 2}, got {alphabet}"
        )
    return method, task, train_len, seed, batch_size, learning_rate, warmup, phi, alphabet, config


def train_budgets(
    method: str,
    *,
    train_len: int,
    budgets,
    seed: int = 0,
    task: str = "text",
    batch_size: int = 16,
    learning_rate: float = 3e-3,
    warmup: int = 50,
    config: ModelConfig | None = None,
    phi: int = 3,
    alphabet: int = 32,
    progress: bool = True,
) -> dict[int, TrainedModel]:
    """Train one method for several budgets of steps at once: ``{budget: TrainedModel}``.

    Each budget's model is what :func:`train` with ``steps=budget`` would give (the
    same batches, the same schedule, up to rounding): the runs share their
    stable-learning-rate part, and each smaller budget branches off for its own
    decay (:func:`learning_rate_at`). The cost is the largest budget plus the
    decays of the others.

    Examples
    --------
    >>> models = train_budgets("rope", train_len=8, budgets=[4, 8], config=TINY, warmup=2, progress=False)
    >>> sorted(models), models[4].steps, models[4].losses.shape
    ([4, 8], 4, (4,))
    """
    method, task, train_len, seed, batch_size, learning_rate, warmup, phi, alphabet, config = _check_training(
        method, task, train_len, seed, batch_size, learning_rate, warmup, phi, alphabet, config
    )
    budgets = require_lengths(budgets, "budgets", minimum=1)
    if len(set(budgets)) != len(budgets):
        raise ValueError(f"budgets must be distinct, got {budgets}")
    inputs = dict(
        params=init_params(jax.random.PRNGKey(seed), config),
        method=method,
        task=task,
        config=config,
        length=train_len,
        budgets=tuple(sorted(budgets)),
        batch_size=batch_size,
        learning_rate=learning_rate,
        warmup=warmup,
        seed=seed,
        phi=phi,
        alphabet=alphabet,
        hooks=position_hooks(method, train_len, config),
    )
    results = cached_run(_run, inputs, progress=progress, description=f"{method}, seed {seed}")
    return {
        budget: TrainedModel(method, task, config, params, train_len, seed, budget, losses, seconds, phi, alphabet)
        for budget, (params, losses, seconds) in sorted(results.items())
    }


def train(
    method: str,
    *,
    train_len: int,
    steps: int,
    seed: int = 0,
    task: str = "text",
    batch_size: int = 16,
    learning_rate: float = 3e-3,
    warmup: int = 50,
    config: ModelConfig | None = None,
    phi: int = 3,
    alphabet: int = 32,
    progress: bool = True,
) -> TrainedModel:
    """Train a lab model with one position method at one length.

    Parameters
    ----------
    method : {"nope", "sinusoidal", "learned", "t5", "rope", "alibi"}
        The position method (:data:`~posenc_helpers.lab.METHODS`).
    train_len : int
        Sequence length of every training example, ``>= 2``.
    steps : int
        Optimiser steps (AdamW with gradient clipping at 1; the learning rate
        warms up, stays, and decays over the last fifth: :func:`learning_rate_at`).
    seed : int, optional
        Seeds the initial weights and the training batches. Default 0.
    task : {"text", "offset", "retrieval", "marker", "order"}, optional
        ``"text"`` (default): next-byte prediction on the training files of
        :func:`~posenc_helpers.lab.stdlib_corpus`. ``"offset"``: the target at
        position ``i >= phi`` is the symbol at ``i - phi``. ``"retrieval"``: find
        the one key symbol planted among ``alphabet`` filler symbols (a lookup by
        content); ``"marker"``: name the symbol after the marker; ``"order"``: name
        the later of two keys (:mod:`posenc_helpers.lab.tasks`).
    batch_size : int, optional
        Sequences per step, default 16.
    learning_rate : float, optional
        Peak learning rate, default 3e-3.
    warmup : int, optional
        Steps of linear warm-up, default 50.
    config : ModelConfig, optional
        The model's sizes; default :data:`DEFAULT_CONFIGS` of the task. Its
        ``max_positions`` must be at least ``train_len``.
    phi, alphabet : int, optional
        The offset task's look-back distance (default 3); the number of symbols of
        the offset task and of the retrieval task's filler and keys (default 32).
    progress : bool, optional
        Show a progress bar (``tqdm.auto``: a widget in Jupyter). Default True.

    Returns
    -------
    TrainedModel

    Raises
    ------
    TypeError, ValueError
        For an unknown method or task, non-positive sizes, or ``train_len``
        beyond ``config.max_positions``.

    Examples
    --------
    A tiny model for a few steps (``TINY`` is ``ModelConfig(d_model=16, n_layers=1,
    n_heads=2, d_ff=32, max_positions=64)``):

    >>> model = train("alibi", train_len=8, steps=5, warmup=1, config=TINY, progress=False)
    >>> model.method, model.train_len, model.losses.shape
    ('alibi', 8, (5,))
    >>> bool(model.losses[-1] < model.losses[0])
    True
    """
    steps = require_count(steps, "steps", minimum=1)
    return train_budgets(
        method,
        train_len=train_len,
        budgets=[steps],
        seed=seed,
        task=task,
        batch_size=batch_size,
        learning_rate=learning_rate,
        warmup=warmup,
        config=config,
        phi=phi,
        alphabet=alphabet,
        progress=progress,
    )[steps]


_Item = TypeVar("_Item")
_Result = TypeVar("_Result")


def two_at_a_time(function: Callable[[_Item], _Result], items: Iterable[_Item]) -> list[_Result]:
    """``[function(item) for item in items]``, two calls at a time in threads.

    XLA releases Python's lock while it computes, and one small model keeps a
    two-core CPU only two-thirds busy, so two at a time is about 1.3 times faster.
    Each call's result is the same as when run alone.

    Examples
    --------
    >>> two_at_a_time(lambda x: x * x, [1, 2, 3])
    [1, 4, 9]
    """
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(function, items))


def train_many(methods: Iterable[str], seeds: Iterable[int], **kwargs) -> dict[tuple[str, int], TrainedModel]:
    """:func:`train` every method with every seed (same keyword arguments), two at a time.

    Returns ``{(method, seed): TrainedModel}`` in the order of ``methods`` then ``seeds``.

    Examples
    --------
    >>> models = train_many(["nope", "rope"], [0, 1], train_len=8, steps=2, warmup=1, config=TINY, progress=False)
    >>> list(models)
    [('nope', 0), ('nope', 1), ('rope', 0), ('rope', 1)]
    """
    pairs = [(method, seed) for method in methods for seed in seeds]
    models = two_at_a_time(lambda pair: train(pair[0], seed=pair[1], **kwargs), pairs)
    return dict(zip(pairs, models, strict=True))


def train_sweep(
    methods: Iterable[str], seeds: Iterable[int], budgets, **kwargs
) -> dict[tuple[str, int, int], TrainedModel]:
    """:func:`train_budgets` every method with every seed, two at a time.

    Returns ``{(method, seed, budget): TrainedModel}``.

    Examples
    --------
    >>> models = train_sweep(["alibi"], [0], [2, 4], train_len=8, warmup=1, config=TINY, progress=False)
    >>> list(models)
    [('alibi', 0, 2), ('alibi', 0, 4)]
    """
    pairs = [(method, seed) for method in methods for seed in seeds]
    runs = two_at_a_time(lambda pair: train_budgets(pair[0], seed=pair[1], budgets=budgets, **kwargs), pairs)
    return {(m, s, b): model for (m, s), run in zip(pairs, runs, strict=True) for b, model in run.items()}


def with_rope_scaling(model: TrainedModel, scaling: str, factor: float) -> TrainedModel:
    """The same RoPE model, evaluated with frequencies rescaled for ``factor`` times its training length.

    ``scaling`` is ``"linear"`` (position interpolation) or ``"yarn"`` (with its
    attention factor), as :func:`~posenc_helpers.scaled_rope_frequencies` computes
    them with ``original_max_len = model.train_len``.

    Examples
    --------
    >>> model = train("rope", train_len=8, steps=2, warmup=1, config=TINY, progress=False)
    >>> from posenc_helpers import rope_frequencies
    >>> scaled = with_rope_scaling(model, "linear", 4.0)
    >>> scaled.scaling, bool((scaled.inv_freq * 4 == rope_frequencies(8)).all())
    ('linear x4', True)
    """
    if not isinstance(model, TrainedModel) or model.method != "rope":
        raise ValueError("model must be a TrainedModel whose method is 'rope'")
    scaling = require_choice(scaling, "scaling", ("linear", "yarn"))
    factor = require_positive_real(factor, "factor")
    inv_freq, attention_factor = scaled_rope_frequencies(
        model.config.head_dim, method=scaling, factor=factor, original_max_len=model.train_len
    )
    return dataclasses.replace(
        model, inv_freq=inv_freq, attention_factor=attention_factor, scaling=f"{scaling} x{factor:g}"
    )


def fine_tune(
    model: TrainedModel,
    *,
    length: int,
    steps: int,
    batch_size: int = 4,
    learning_rate: float = 1e-3,
    seed: int | None = None,
    progress: bool = True,
) -> TrainedModel:
    """Continue training ``model`` (with its RoPE rescaling, if any) on sequences of ``length``.

    The learning rate warms up over a tenth of ``steps`` and decays over the last
    fifth (:func:`learning_rate_at`). The batches come from ``seed`` (default
    ``10_000 + model.seed``: other batches than the original training's). The
    result keeps ``train_len`` (evaluations keep scoring the same span of
    positions) and records ``fine_tune_len``.

    Examples
    --------
    >>> model = train("rope", train_len=8, steps=2, warmup=1, config=TINY, progress=False)
    >>> tuned = fine_tune(model, length=16, steps=2, progress=False)
    >>> tuned.train_len, tuned.fine_tune_len
    (8, 16)
    """
    if not isinstance(model, TrainedModel):
        raise TypeError(f"model must be a TrainedModel, got {type(model).__name__}")
    length = require_count(length, "length", minimum=2)
    steps = require_count(steps, "steps", minimum=1)
    if length > model.config.max_positions:
        raise ValueError(f"length must be at most config.max_positions = {model.config.max_positions}")
    inputs = dict(
        params=model.params,
        method=model.method,
        task=model.task,
        config=model.config,
        length=length,
        budgets=(steps,),
        batch_size=require_count(batch_size, "batch_size", minimum=1),
        learning_rate=require_positive_real(learning_rate, "learning_rate"),
        warmup=max(1, steps // 10),
        seed=10_000 + model.seed if seed is None else require_count(seed, "seed"),
        phi=model.phi,
        alphabet=model.alphabet,
        hooks=hooks_for(model, length),
    )
    description = f"{model.method} ({model.scaling}), fine-tune at {length}"
    params, losses, seconds = cached_run(_run, inputs, progress=progress, description=description)[steps]
    return dataclasses.replace(model, params=params, losses=losses, seconds=seconds, steps=steps, fine_tune_len=length)


def train_step_flops(config: ModelConfig, batch_size: int, length: int) -> float:
    """Floating-point operations of one training step, counted from the matrix products.

    Per token and layer the forward pass multiplies by ``W_qkv``, ``W_out``, ``W_up`` and
    ``W_down`` (``2 d (3d + d + 2 d_ff)`` operations) and computes ``L`` scores and ``L``
    weighted values per head (``4 L d``, the full ``L x L`` matrix, as the model does);
    the unembedding adds ``2 d vocab``. The backward pass costs about twice the forward
    pass, so a step is three forward passes. Element-wise work (norms, softmax, ReLU,
    the optimiser) is left out, so this is a lower bound.

    Examples
    --------
    By hand for d = 2, d_ff = 4, vocab 3, one layer, one token: 2·2·(6 + 2 + 8) + 4·1·2 + 2·2·3 = 84
    operations forward, 252 for the step.

    >>> train_step_flops(ModelConfig(d_model=2, n_layers=1, n_heads=1, d_ff=4, vocab=3), 1, 1)
    252.0
    """
    d, f, v = config.d_model, config.d_ff, config.vocab
    per_token = config.n_layers * (2 * d * (3 * d + d + 2 * f) + 4 * length * d) + 2 * d * v
    return 3.0 * per_token * batch_size * length
