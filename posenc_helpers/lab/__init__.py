"""The training lab of chapter 11: tiny transformers trained short and tested long.

Imported only by chapter 11 and its tests (it needs JAX and optax, which the rest
of the package does not). The pieces, one module each:

==========================  =====================================================
module                      idea
==========================  =====================================================
:mod:`.corpus`              the text: a shipped snapshot of standard-library source, train/held-out by file
:mod:`.ngram`               count-based n-gram baselines, scored on the models' bytes
:mod:`.model`               the transformer; position methods as three hooks
:mod:`.tasks`               the training batches: text, "look φ back", content lookup, marker, order
:mod:`.optimiser`           one compiled optimisation step and the warmup-stable-decay schedule
:mod:`.training`            ``train``, several budgets in one run, ``fine_tune``, RoPE rescaling
:mod:`.evaluation`          ``length_curve``, the sliding-window reference and the other measurements of a model
:mod:`.question_scoring`    accuracy and answers on the question tasks; the bag and order-only oracles
:mod:`.statistics`          seed intervals and the rules for verdicts (one-sided for the loss)
:mod:`.protocol`            chapter 11's settings and the record ``make record-lab`` writes
:mod:`.verdicts`            the record's summaries and the verdicts the rules allow
:mod:`.cache`               an opt-in store of training runs (``POSENC_LAB_CACHE``), for repeated test runs
:mod:`.shards`              the record's training runs in shards (``make record-lab SHARD=i/N``), their stores merged
:mod:`.fingerprint`         what a record or a stored run depends on: the code by meaning, versions, settings
==========================  =====================================================
"""

from .cache import CACHE_VARIABLE
from .corpus import SNAPSHOT_PATH, SNAPSHOT_SHA256, STDLIB_FILES, Corpus, read_snapshot, stdlib_corpus
from .evaluation import (
    length_curve,
    length_losses,
    offset_accuracy,
    offset_attention,
    position_losses,
    rope_pair_norms,
    scored_byte_indices,
    sliding_window_losses,
)
from .model import METHODS, Hooks, ModelConfig, forward, init_params, position_hooks, rotate_pairs
from .ngram import ngram_byte_losses
from .optimiser import DECAY_FRACTION, learning_rate_at
from .protocol import (
    CONTROLS,
    PROTOCOL,
    QUESTION_CONTROLS,
    Protocol,
    lab_digest,
    length_curves,
    ngram_baselines,
    record_lab,
)
from .question_scoring import (
    ANSWER_KINDS,
    answer_kinds,
    answer_split,
    bag_of_tokens_accuracy,
    order_only_accuracy,
    question_accuracy,
    retrieval_accuracy,
)
from .statistics import (
    DROP_MARGIN,
    FLAT_MARGIN,
    accuracy_interval,
    accuracy_standard_error,
    drop_verdicts,
    one_sided_bound,
    rise_verdict,
    seed_interval,
)
from .tasks import QUESTION_TASKS, TASKS, question_sequences, retrieval_sequences, training_batch
from .training import (
    DEFAULT_CONFIGS,
    TrainedModel,
    fine_tune,
    hooks_for,
    train,
    train_budgets,
    train_many,
    train_step_flops,
    train_sweep,
    two_at_a_time,
    with_rope_scaling,
)
from .verdicts import (
    LEARNED_AT,
    extrapolation_verdicts,
    question_reach,
    reach_label,
    reproduces_record,
    summarise_text,
    works_past_training_length,
)

__all__ = [
    "CACHE_VARIABLE",
    "SNAPSHOT_PATH",
    "SNAPSHOT_SHA256",
    "STDLIB_FILES",
    "Corpus",
    "read_snapshot",
    "stdlib_corpus",
    "ngram_byte_losses",
    "METHODS",
    "ModelConfig",
    "Hooks",
    "position_hooks",
    "init_params",
    "forward",
    "rotate_pairs",
    "TASKS",
    "training_batch",
    "retrieval_sequences",
    "QUESTION_TASKS",
    "question_sequences",
    "DEFAULT_CONFIGS",
    "DECAY_FRACTION",
    "TrainedModel",
    "learning_rate_at",
    "train",
    "train_budgets",
    "train_many",
    "train_sweep",
    "fine_tune",
    "with_rope_scaling",
    "hooks_for",
    "two_at_a_time",
    "train_step_flops",
    "scored_byte_indices",
    "length_losses",
    "length_curve",
    "position_losses",
    "retrieval_accuracy",
    "question_accuracy",
    "ANSWER_KINDS",
    "answer_kinds",
    "answer_split",
    "bag_of_tokens_accuracy",
    "order_only_accuracy",
    "sliding_window_losses",
    "offset_accuracy",
    "offset_attention",
    "rope_pair_norms",
    "FLAT_MARGIN",
    "DROP_MARGIN",
    "accuracy_standard_error",
    "accuracy_interval",
    "drop_verdicts",
    "seed_interval",
    "one_sided_bound",
    "rise_verdict",
    "Protocol",
    "PROTOCOL",
    "CONTROLS",
    "QUESTION_CONTROLS",
    "lab_digest",
    "ngram_baselines",
    "length_curves",
    "summarise_text",
    "extrapolation_verdicts",
    "LEARNED_AT",
    "question_reach",
    "reach_label",
    "reproduces_record",
    "works_past_training_length",
    "record_lab",
]
