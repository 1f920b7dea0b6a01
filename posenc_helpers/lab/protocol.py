"""Chapter 11's experiment, in one place: its settings, the record it writes, and its verdicts.

:func:`record_lab` (``make record-lab``) runs the whole experiment, which does not fit
a live chapter: every position method at several training budgets and three seeds,
count-based baselines, controls for two configuration choices, three question tasks
(a content lookup; which came last, which order alone answers; after the marker, which
needs a distance) with their controls, and the rescue
of RoPE by interpolation. It writes the numbers, and the verdicts the rules of
:mod:`posenc_helpers.lab.statistics` draw from them (:mod:`.verdicts`), to a record in
the package. Chapters 10 and 11 read the record; chapter 11 also trains
the smallest budget live and asserts that its run agrees with the record within the
recorded spread (a reproduction check). The record carries a digest of the lab's source, the protocol and
the corpus (:func:`lab_digest`, by meaning: :mod:`.fingerprint`); a test fails when any of them changed since the
record was written, so the record cannot go stale silently.
"""

from __future__ import annotations

import dataclasses
import json
import platform
import time
from dataclasses import asdict, dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from ..measured import RECORD_PATH
from .corpus import SNAPSHOT_SHA256, stdlib_corpus
from .evaluation import length_losses, position_losses, rope_pair_norms, scored_byte_indices, sliding_window_losses
from .fingerprint import fingerprint, training_modules
from .model import METHODS, ModelConfig
from .ngram import ngram_byte_losses
from .question_scoring import answer_split, bag_of_tokens_accuracy, order_only_accuracy, question_accuracy
from .statistics import FLAT_MARGIN
from .tasks import QUESTION_TASKS
from .training import (
    DEFAULT_CONFIGS,
    TrainedModel,
    fine_tune,
    train_budgets,
    train_many,
    train_sweep,
    two_at_a_time,
    with_rope_scaling,
)
from .verdicts import extrapolation_verdicts, question_reach, summarise_text

__all__ = [
    "Protocol",
    "PROTOCOL",
    "lab_digest",
    "ngram_baselines",
    "length_curves",
    "record_lab",
]


@dataclass(frozen=True)
class Protocol:
    """Settings of the train-short, test-long experiment (chosen before the record was made).

    * ``train_len`` 64 bytes, ``batch_size`` 16: a step sees 1,024 bytes.
    * ``budgets`` 250 to 2,000 steps (8×): 0.26 M to 2 M training bytes; the training
      text has 2.7 M. The verdicts are stated at the largest.
    * ``learning_rate`` 3e-3 peak, ``warmup`` 50 steps, then constant and a linear
      decay over the last fifth of each budget (warmup-stable-decay).
    * ``seeds`` 0, 1, 2: each seed draws its own initial weights, training batches and
      held-out ``windows`` (256 per seed: the standard error of the mean loss at the
      training length, over the three seeds' 768 windows, is below 0.02 nats).
    * ``multiples`` of the training length evaluated at the largest budget, and
      ``sweep_multiples`` at every budget; at the largest budget, also the
      sliding-window reference at the training length, windows moved ``sliding_stride``
      bytes at a time.
    * ``ngram_orders``: the count baselines, up to 6-grams (the best of the family on
      these bytes is a 5-gram).
    * the question tasks: ``retrieval_steps``, ``marker_steps`` and ``order_steps``
      steps of ``question_batch_size`` sequences of ``train_len`` tokens (each enough for
      every method to answer at least 9 in 10 questions at ``train_len`` in trial runs,
      rope the slowest on the marker task), scored on ``question_windows`` sequences per
      length and placement.
    * RoPE's rescue: interpolation and YaRN for ``rescue_factor`` × ``train_len``,
      zero-shot and after ``rescue_steps`` steps of ``rescue_batch_size`` sequences at
      that length.
    * ``live_budget`` and ``live_windows``: what chapter 11 trains and scores in front
      of the reader (seed 0).
    """

    train_len: int = 64
    budgets: tuple[int, ...] = (250, 500, 1000, 2000)
    batch_size: int = 16
    learning_rate: float = 3e-3
    warmup: int = 50
    seeds: tuple[int, ...] = (0, 1, 2)
    multiples: tuple[int, ...] = (1, 2, 4, 8, 16)
    sweep_multiples: tuple[int, ...] = (1, 2, 4)
    windows: int = 256
    sliding_stride: int = 8
    ngram_orders: tuple[int, ...] = (1, 2, 3, 4, 5, 6)
    retrieval_steps: int = 400
    marker_steps: int = 1500
    order_steps: int = 800
    question_batch_size: int = 32
    question_windows: int = 128
    rescue_factor: int = 4
    rescue_steps: int = 100
    rescue_batch_size: int = 4
    live_budget: int = 250
    live_windows: int = 128
    margin: float = FLAT_MARGIN

    @property
    def lengths(self) -> list[int]:
        return [m * self.train_len for m in self.multiples]

    @property
    def largest(self) -> int:
        return max(self.budgets)

    def question_steps(self, task: str) -> int:
        """Training steps of a question task."""
        return {"retrieval": self.retrieval_steps, "marker": self.marker_steps, "order": self.order_steps}[task]


PROTOCOL = Protocol()

#: The configuration controls: the choices the lab's defaults make, undone one at a time.
CONTROLS: dict[str, dict] = {
    # T5's far buckets start at 128, beyond every distance a 64-token sequence holds:
    # buckets 27-31 never receive a gradient.
    "t5, max_distance 128": {"method": "t5", "config": {"t5_max_distance": 128}},
    # Untrained learned rows as large as sinusoidal rows (std sqrt(1/2)) instead of 0.02 (Hugging Face's GPT-2).
    "learned, rows N(0, 1/2)": {"method": "learned", "config": {"table_std": 0.5**0.5}},
}

#: The same learned-table control on the content lookup: past the training length, rows
#: near zero make a learned table act like no position at all.
QUESTION_CONTROLS: dict[str, dict] = {
    "learned, rows N(0, 1/2)": {"method": "learned", "task": "retrieval", "config": {"table_std": 0.5**0.5}},
}


def lab_digest(protocol: Protocol = PROTOCOL, *, package: Path | str | None = None) -> str:
    """The record's key: the protocol, the corpus snapshot's digest and the lab's code by meaning.

    :func:`~posenc_helpers.lab.fingerprint.fingerprint` of every module the lab runs
    (:func:`~posenc_helpers.lab.fingerprint.training_modules`, the package's numerics
    included), with the protocol and the corpus digest as settings. The record stores
    it; a test fails when the lab now computes a different one. A docstring or a
    comment changes nothing; a statement or a number anywhere on the path does.
    ``package`` is the package's root folder (default: this installation's).

    Examples
    --------
    >>> len(lab_digest()), lab_digest() == lab_digest(dataclasses.replace(PROTOCOL, windows=8))
    (64, False)
    """
    return fingerprint(
        training_modules(package=package), package=package, protocol=asdict(protocol), corpus=SNAPSHOT_SHA256
    )


def ngram_baselines(protocol: Protocol = PROTOCOL, seed: int = 0, windows: int | None = None) -> dict[int, float]:
    """Mean loss of each n-gram order on the bytes that seed ``seed``'s windows score at ``train_len``.

    The record's protocol scores orders 1 to 6 (about 20 s, most of it the 6-gram
    counts); the example keeps to two orders, so that the doctest lane stays fast.

    Examples
    --------
    >>> baselines = ngram_baselines(dataclasses.replace(PROTOCOL, ngram_orders=(1, 2)), seed=0, windows=4)
    >>> sorted(baselines), bool(baselines[1] > baselines[2])
    ([1, 2], True)
    """
    windows = protocol.windows if windows is None else windows
    indices = scored_byte_indices(protocol.train_len, ModelConfig().max_positions, windows=windows, seed=seed)
    return {order: float(_held_out_ngram_losses(order)[indices].mean()) for order in protocol.ngram_orders}


@lru_cache(maxsize=8)
def _held_out_ngram_losses(order: int) -> np.ndarray:
    corpus = stdlib_corpus()
    return ngram_byte_losses(corpus.train, corpus.held_out, order)


def length_curves(models: dict, lengths, *, windows: int = 16) -> dict:
    """:func:`~posenc_helpers.lab.length_curve` of every model of ``{key: TrainedModel}`` on the
    windows of its own seed, two at a time.

    Examples
    --------
    >>> from posenc_helpers.lab import ModelConfig, train
    >>> tiny = ModelConfig(d_model=16, n_layers=1, n_heads=2, d_ff=32, max_positions=64)
    >>> models = {("alibi", 0): train("alibi", train_len=8, steps=2, warmup=1, config=tiny, progress=False)}
    >>> {key: curve.shape for key, curve in length_curves(models, [8, 16], windows=2).items()}
    {('alibi', 0): (2,)}
    """
    curves = two_at_a_time(
        lambda model: length_losses(model, lengths, seed=model.seed, windows=windows).mean(axis=0), models.values()
    )
    return dict(zip(models, curves, strict=True))


def _rounded(value):
    if isinstance(value, dict):
        return {str(k): _rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(v) for v in value]
    if isinstance(value, float | np.floating):
        return round(float(value), 5)
    return value


def _common(protocol: Protocol, progress: bool) -> dict[str, Any]:
    """The training settings every text model of the record shares."""
    return {
        "train_len": protocol.train_len,
        "batch_size": protocol.batch_size,
        "learning_rate": protocol.learning_rate,
        "warmup": protocol.warmup,
        "progress": progress,
    }


def _train_text(protocol: Protocol, progress: bool) -> tuple[dict, dict]:
    """Every method, seed and budget trained (one run per method and seed): ``(models,
    training seconds at the largest budget)``."""
    models = train_sweep(METHODS, protocol.seeds, protocol.budgets, **_common(protocol, progress))
    seconds = {f"{m} {s}": models[(m, s, protocol.largest)].seconds for m in METHODS for s in protocol.seeds}
    return models, seconds


def _evaluate_text(protocol: Protocol, models: dict) -> dict:
    """Every text model scored at its lengths: ``{method: {seed: {budget: summary}}}``."""

    def evaluate(key):
        model = models[key]
        largest = key[2] == protocol.largest
        lengths = [m * protocol.train_len for m in (protocol.multiples if largest else protocol.sweep_multiples)]
        losses = length_losses(model, lengths, seed=model.seed, windows=protocol.windows)
        if not largest:
            return summarise_text(losses)
        sliding = sliding_window_losses(
            model, seed=model.seed, windows=protocol.windows, stride=protocol.sliding_stride
        )
        return summarise_text(losses, sliding)

    summaries = dict(zip(models, two_at_a_time(evaluate, list(models)), strict=True))
    text: dict = {m: {str(s): {} for s in protocol.seeds} for m in METHODS}
    for (m, s, b), summary in summaries.items():
        text[m][str(s)][str(b)] = summary
    return text


def _controls_part(protocol: Protocol, progress: bool) -> dict:
    """Each configuration control (:data:`CONTROLS`) trained at the largest budget, every seed."""
    controls: dict = {}
    for name, change in CONTROLS.items():
        config = dataclasses.replace(ModelConfig(), **change["config"])

        def train_control(seed: int, method: str = change["method"], config: ModelConfig = config) -> TrainedModel:
            runs = train_budgets(
                method, budgets=[protocol.largest], seed=seed, config=config, **_common(protocol, progress)
            )
            return runs[protocol.largest]

        runs = two_at_a_time(train_control, protocol.seeds)
        controls[name] = {
            str(model.seed): summarise_text(
                length_losses(model, protocol.lengths, seed=model.seed, windows=protocol.windows)
            )
            for model in runs
        }
    return controls


def _positions_part(protocol: Protocol, models: dict) -> tuple[dict, dict]:
    """The loss along the longest window (seed 0, largest budget) and RoPE's pair norms."""
    largest_seed0 = [models[(m, protocol.seeds[0], protocol.largest)] for m in METHODS]
    along = two_at_a_time(lambda model: position_losses(model, protocol.lengths[-1], windows=64), largest_seed0)
    positions = {m: np.round(v, 4).tolist() for m, v in zip(METHODS, along, strict=True)}
    norms = {
        str(b): {
            str(s): {k: v.mean(axis=1).tolist() for k, v in rope_pair_norms(models[("rope", s, b)]).items()}
            for s in protocol.seeds
        }
        for b in protocol.budgets
    }
    return positions, norms


def _score_question_model(protocol: Protocol, model: TrainedModel) -> dict:
    """A question model's accuracy far and near at every length, what it answered there
    (:func:`~posenc_helpers.lab.answer_split`), and its accuracy with the context shuffled."""
    seed, lengths, windows = model.seed, protocol.lengths, protocol.question_windows
    scores: dict = {}
    for placement in ("far", "near"):
        split = answer_split(model, lengths, placement=placement, seed=seed, windows=windows)
        scores[placement] = split["right"].tolist()
        scores[f"{placement} answers"] = {kind: fractions.tolist() for kind, fractions in split.items()}
    scores["shuffled"] = question_accuracy(
        model, lengths, placement="far", seed=seed, windows=windows, shuffled=True
    ).tolist()
    return scores


def _oracle(function, task: str, protocol: Protocol) -> dict:
    """An oracle's accuracy (the bag of tokens, order only), mean over the seeds' sequences, far and near."""
    return {
        placement: np.mean(
            [function(task, protocol.lengths, train_len=protocol.train_len, placement=placement, seed=seed,
                      windows=protocol.question_windows) for seed in protocol.seeds],
            axis=0,
        ).tolist()
        for placement in ("far", "near")
    }  # fmt: skip


def _questions_part(protocol: Protocol, progress: bool) -> tuple[dict, dict, dict]:
    """The question tasks: every method and seed trained on each and scored (far, near, shuffled;
    what it answered far and near) at every length; the oracles on the same sequences (the
    best from a bag of tokens, and from the order of the tokens only); the learned-table
    control on the content lookup."""
    common = dict(
        batch_size=protocol.question_batch_size, train_len=protocol.train_len, learning_rate=protocol.learning_rate,
        warmup=protocol.warmup, progress=progress,
    )  # fmt: skip
    questions: dict = {}
    bag: dict = {}
    order_only: dict = {}
    for task in QUESTION_TASKS:
        trained = train_many(METHODS, protocol.seeds, task=task, steps=protocol.question_steps(task), **common)
        scores = two_at_a_time(lambda model: _score_question_model(protocol, model), list(trained.values()))
        questions[task] = {m: {} for m in METHODS}
        for (m, s), score in zip(trained, scores, strict=True):
            questions[task][m][str(s)] = score
        bag[task] = _oracle(bag_of_tokens_accuracy, task, protocol)
        order_only[task] = _oracle(order_only_accuracy, task, protocol)
    controls: dict = {}
    for name, change in QUESTION_CONTROLS.items():
        config = dataclasses.replace(DEFAULT_CONFIGS[change["task"]], **change["config"])

        def train_control(seed: int, change: dict = change, config: ModelConfig = config) -> dict:
            model = train_many(
                [change["method"]], [seed], task=change["task"], steps=protocol.question_steps(change["task"]),
                config=config, **common,
            )[(change["method"], seed)]  # fmt: skip
            return _score_question_model(protocol, model)

        runs = two_at_a_time(train_control, protocol.seeds)
        controls[name] = {
            "task": change["task"],
            **{str(seed): run for seed, run in zip(protocol.seeds, runs, strict=True)},
        }
    return questions, {"bag_of_tokens": bag, "order_only": order_only}, controls


def _rescue_part(protocol: Protocol, models: dict, progress: bool) -> tuple[list[int], dict]:
    """RoPE as trained, with PI and with YaRN, zero-shot and fine-tuned at ``rescue_factor`` times L."""
    factor, L = protocol.rescue_factor, protocol.train_len
    rescue_lengths = [L, 2 * L, factor * L]
    rescue: dict = {}
    for seed in protocol.seeds:
        rope = models[("rope", seed, protocol.largest)]
        variants = {
            "as trained": rope,
            "PI": with_rope_scaling(rope, "linear", float(factor)),
            "YaRN": with_rope_scaling(rope, "yarn", float(factor)),
        }
        tuned = two_at_a_time(
            lambda model: fine_tune(
                model,
                length=factor * L,
                steps=protocol.rescue_steps,
                batch_size=protocol.rescue_batch_size,
                progress=progress,
            ),  # fmt: skip
            list(variants.values()),
        )
        for (name, model), tuned_model in zip(variants.items(), tuned, strict=True):
            rescue.setdefault(name, {})[str(seed)] = {
                "zero_shot": length_losses(model, rescue_lengths, seed=seed, windows=protocol.windows)
                .mean(axis=0)
                .tolist(),
                "fine_tuned": length_losses(tuned_model, rescue_lengths, seed=seed, windows=protocol.windows)
                .mean(axis=0)
                .tolist(),
            }
    return rescue_lengths, rescue


#: The record's keys that the question part writes; :func:`record_lab` with
#: ``questions_only=True`` recomputes these and keeps every other key.
QUESTION_KEYS: tuple[str, ...] = ("questions", "bag_of_tokens", "order_only", "question_controls")


def record_lab(
    path: Path | str = RECORD_PATH,
    *,
    protocol: Protocol = PROTOCOL,
    progress: bool = True,
    questions_only: bool = False,
) -> dict:
    """Run the whole experiment of :data:`PROTOCOL`, write its record to ``path`` and return it.

    The parts, in order: the n-gram baselines, the text models (every method, seed and
    budget), the configuration controls, the loss along positions and RoPE's pair norms,
    the question tasks with their controls, and the rescue of RoPE. The record keeps the seconds each part
    took (``"seconds"``; ``make bench`` prints them). ``make record-lab`` also sets
    ``POSENC_LAB_CACHE``, so that a rerun after an edit outside the lab's training path
    reuses the trained models.

    ``questions_only=True`` (``make record-lab-questions``) runs the question part alone and
    keeps every other part from the record at ``path`` (same protocol): for a change to how
    the question tasks are scored or judged alone. The record says so (``"kept"``: the parts,
    the digest of the record they come from, their seconds there); that the text part's code
    is unchanged is for the committer to show (``tools/lab_probe.py --text`` under both trees).
    """
    started = time.perf_counter()
    seconds: dict[str, float] = {}

    def timed(name: str, part, *args):
        begun = time.perf_counter()
        result = part(*args)
        seconds[name] = round(time.perf_counter() - begun, 1)
        print(f"record-lab: {name} done in {seconds[name]:.0f} s", flush=True)
        return result

    if not isinstance(questions_only, bool):
        raise TypeError(f"questions_only must be True or False, got {questions_only!r}")
    if questions_only:
        old = json.loads(Path(path).read_text(encoding="utf-8"))
        if old["protocol"] != json.loads(json.dumps(asdict(protocol))):
            raise ValueError(
                f"questions_only needs a record at {path} made with the same protocol; run make record-lab"
            )
        questions, oracles, question_controls = timed("question tasks", _questions_part, protocol, progress)
        kept_from = old.get("kept", {}).get("from_digest", old["digest"])
        kept_seconds = old.get("kept", {}).get("seconds", old["seconds"])
        record = {key: value for key, value in old.items() if key not in (*QUESTION_KEYS, "reach", "digest")}
        record.update(
            questions=questions, **oracles, question_controls=question_controls, seconds=seconds,
            kept={"parts": [key for key in record if key not in ("protocol", "machine", "seconds", "verdicts")],
                  "from_digest": kept_from, "seconds": kept_seconds},
        )  # fmt: skip
        record["machine"] = _machine()
        record = {"digest": lab_digest(protocol), **_rounded(record)}
        return _finish(record, protocol, path)
    baselines = timed("baselines", lambda: {str(seed): ngram_baselines(protocol, seed) for seed in protocol.seeds})
    models, training_seconds = timed("text training", _train_text, protocol, progress)
    text = timed("text evaluation", _evaluate_text, protocol, models)
    controls = timed("controls", _controls_part, protocol, progress)
    positions, norms = timed("positions and pair norms", _positions_part, protocol, models)
    questions, oracles, question_controls = timed("question tasks", _questions_part, protocol, progress)
    rescue_lengths, rescue = timed("rescue", _rescue_part, protocol, models, progress)
    seconds["total"] = round(time.perf_counter() - started, 1)
    record = {
        "digest": lab_digest(protocol),
        "protocol": asdict(protocol),
        "machine": _machine(),
        "seconds": seconds,
        "training_seconds": training_seconds,
        "baselines": baselines,
        "text": text,
        "controls": controls,
        "positions": positions,
        "pair_norms": norms,
        "questions": questions,
        **oracles,
        "question_controls": question_controls,
        "rescue_lengths": rescue_lengths,
        "rescue": rescue,
    }
    return _finish(_rounded(record), protocol, path)


def _machine() -> dict:
    return {
        "processor": platform.machine(),
        "python": platform.python_version(),
        **{name: metadata.version(name) for name in ("numpy", "jax", "jaxlib", "optax")},
    }


def _finish(record: dict, protocol: Protocol, path: Path | str) -> dict:
    """The verdicts and reach drawn from the record's numbers; the record written to ``path``."""
    record["verdicts"] = extrapolation_verdicts(record["text"], protocol.seeds, protocol.largest)
    record["reach"] = {
        task: _rounded(
            question_reach(
                record["questions"][task], protocol.seeds, protocol.lengths, windows=protocol.question_windows
            )
        )
        for task in QUESTION_TASKS
    }
    Path(path).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record
