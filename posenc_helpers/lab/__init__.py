"""The training lab of chapter 11: tiny transformers trained short and tested long.

Imported only by chapter 11 and its tests (it needs JAX and optax, which the rest
of the package does not). The pieces, one module each:

==========================  =====================================================
module                      idea
==========================  =====================================================
:mod:`.corpus`              the text: standard-library source files, train/held-out by file
:mod:`.model`               the transformer; position methods as three hooks
:mod:`.training`            ``train``, ``fine_tune``, RoPE rescaling for evaluation
:mod:`.evaluation`          ``length_curve`` and the other measurements
:mod:`.protocol`            chapter 11's settings and verdicts, and their record for chapter 10
:mod:`.cache`               an opt-in store of training runs (``POSENC_LAB_CACHE``), for repeated test runs
==========================  =====================================================
"""

from .cache import CACHE_VARIABLE
from .corpus import STDLIB_FILES, Corpus, stdlib_corpus
from .evaluation import length_curve, offset_accuracy, offset_attention, position_losses, rope_pair_norms
from .model import METHODS, Hooks, ModelConfig, forward, init_params, position_hooks, rotate_pairs
from .protocol import PROTOCOL, Protocol, length_curves, record_verdicts, works_past_training_length
from .training import (
    TASKS,
    TrainedModel,
    fine_tune,
    hooks_for,
    train,
    train_many,
    train_step_flops,
    two_at_a_time,
    with_rope_scaling,
)

__all__ = [
    "CACHE_VARIABLE",
    "STDLIB_FILES",
    "Corpus",
    "stdlib_corpus",
    "METHODS",
    "ModelConfig",
    "Hooks",
    "position_hooks",
    "init_params",
    "forward",
    "rotate_pairs",
    "TASKS",
    "TrainedModel",
    "train",
    "train_many",
    "fine_tune",
    "with_rope_scaling",
    "hooks_for",
    "two_at_a_time",
    "train_step_flops",
    "length_curve",
    "position_losses",
    "offset_accuracy",
    "offset_attention",
    "rope_pair_norms",
    "Protocol",
    "PROTOCOL",
    "length_curves",
    "works_past_training_length",
    "record_verdicts",
]
