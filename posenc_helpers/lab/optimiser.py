"""One optimisation step of the lab's models and its learning-rate schedule.

The loss is the mean cross-entropy over the weighted (scored) positions; the
optimiser is AdamW with gradient clipping (:data:`OPTIMIZER`), its learning rate
an input of the compiled step (:func:`train_step`), so that one compilation serves
every method, model and schedule of the same batch shape; the schedule is
warmup-stable-decay (:func:`learning_rate_at`). The loop that runs the steps is
:mod:`.training`'s.
"""

from __future__ import annotations

from functools import partial

import jax
import optax

from .model import Hooks, forward

__all__ = ["DECAY_FRACTION", "OPTIMIZER", "decay_steps", "learning_rate_at", "train_step"]


def _decay_mask(params: dict) -> dict:
    """Weight decay on the layers' matrices and the unembedding only."""
    mask = jax.tree_util.tree_map(lambda _: False, params)
    mask["layers"] = [{name: name in ("qkv", "out", "up", "down") for name in layer} for layer in params["layers"]]
    mask["unembed"] = True
    return mask


#: AdamW (weight decay 0.1 on the matrices only) after clipping the gradient's norm to 1;
#: the learning rate is injected at every step (:func:`train_step`).
OPTIMIZER = optax.chain(
    optax.clip_by_global_norm(1.0),
    optax.inject_hyperparams(optax.adamw, static_args=("mask",))(
        learning_rate=1e-3, b1=0.9, b2=0.99, weight_decay=0.1, mask=_decay_mask
    ),
)


def _loss(
    params: dict, inputs: jax.Array, targets: jax.Array, weights: jax.Array, hooks: Hooks, n_heads: int
) -> jax.Array:
    logits = forward(params, inputs, hooks, n_heads)
    losses = optax.softmax_cross_entropy_with_integer_labels(logits, targets)
    return (losses * weights).sum() / weights.sum()


@partial(jax.jit, static_argnames="n_heads")
def train_step(params, opt_state, learning_rate, inputs, targets, weights, hooks, n_heads):
    """One compiled step: the loss and its gradient, then :data:`OPTIMIZER` at ``learning_rate``.

    Called by the training loop of :mod:`.training` on batches it has built and
    checked; returns ``(params, opt_state, loss)``. The learning rate is an input
    (``optax.inject_hyperparams``), so every budget and schedule shares one
    compilation.
    """
    loss, grads = jax.value_and_grad(_loss)(params, inputs, targets, weights, hooks, n_heads)
    opt_state[1].hyperparams["learning_rate"] = learning_rate
    updates, opt_state = OPTIMIZER.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


def learning_rate_at(step: int, budget: int, peak: float, warmup: int) -> float:
    """The learning rate of step ``step`` of a run of ``budget`` steps: warm-up, stable, decay.

    Linear warm-up over the first ``warmup`` steps, then ``peak`` until the last
    :data:`DECAY_FRACTION` of the budget, then a linear decay to zero: the
    warmup-stable-decay schedule. A run of a smaller budget is the same run as a
    larger one up to the start of its own decay, which is what lets
    :func:`train_budgets` train several budgets for little more than the largest.

    References
    ----------
    .. [1] A. Hägele, E. Bakouch, A. Kosson, L. Ben Allal, L. von Werra, M. Jaggi,
       "Scaling Laws and Compute-Optimal Training beyond Fixed Training Durations",
       NeurIPS 2024, arXiv:2405.18392 (a decay of the last 20 % matches a cosine).

    Examples
    --------
    A budget of 10 steps decays over its last 2, to a third of the peak at the end:

    >>> [round(learning_rate_at(s, 10, 1.0, 2), 3) for s in (0, 1, 5, 7, 8, 9)]
    [0.5, 1.0, 1.0, 1.0, 0.667, 0.333]
    """
    if step < warmup:
        return peak * (step + 1) / warmup
    decay_start = budget - decay_steps(budget)
    if step < decay_start:
        return peak
    return peak * (budget - step) / (budget - decay_start + 1)


#: The share of a budget spent decaying the learning rate (:func:`learning_rate_at`).
DECAY_FRACTION = 0.2


def decay_steps(budget: int) -> int:
    """How many of ``budget`` steps decay the learning rate: :data:`DECAY_FRACTION` of them, at least one.

    Examples
    --------
    >>> decay_steps(10), decay_steps(2)
    (2, 1)
    """
    return max(1, round(DECAY_FRACTION * budget))
