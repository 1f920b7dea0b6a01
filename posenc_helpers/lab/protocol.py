"""Chapter 11's experiment, in one place: its settings, the record it writes, and its verdicts.

:func:`record_lab` (``make record-lab``) runs the whole experiment, which does not fit
a live chapter: every position method at several training budgets and three seeds,
count-based baselines, controls for two configuration choices, a retrieval task and
the rescue of RoPE by interpolation. It writes the numbers, and the verdicts the
pre-registered rules of :mod:`posenc_helpers.lab.statistics` draw from them, to a
record in the package. Chapters 10 and 11 read the record; chapter 11 also trains
the smallest budget live and asserts that its run agrees with the record within the
recorded spread. The record carries a digest of the lab's source, the protocol and
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

from .._validation import require_positive_real
from ..measured import RECORD_PATH
from .corpus import SNAPSHOT_SHA256, stdlib_corpus
from .evaluation import length_losses, position_losses, retrieval_accuracy, rope_pair_norms, scored_byte_indices
from .fingerprint import fingerprint, training_modules
from .model import METHODS, ModelConfig
from .ngram import ngram_byte_losses
from .statistics import FLAT_MARGIN, classify_rise, seed_interval
from .training import TrainedModel, fine_tune, train_budgets, train_many, train_sweep, two_at_a_time, with_rope_scaling

__all__ = [
    "Protocol",
    "PROTOCOL",
    "lab_digest",
    "ngram_baselines",
    "length_curves",
    "summarise_text",
    "extrapolation_verdicts",
    "retrieval_verdicts",
    "agrees_with_record",
    "works_past_training_length",
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
      ``sweep_multiples`` at every budget.
    * the retrieval task: ``retrieval_steps`` steps of ``retrieval_batch_size`` passkey
      sequences of ``train_len`` tokens, scored on ``retrieval_windows`` sequences per
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
    ngram_orders: tuple[int, ...] = (1, 2, 3, 4)
    retrieval_steps: int = 400
    retrieval_batch_size: int = 32
    retrieval_windows: int = 128
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


PROTOCOL = Protocol()

#: The configuration controls: the choices the lab's defaults make, undone one at a time.
CONTROLS: dict[str, dict] = {
    # T5's far buckets start at 128, beyond every distance a 64-token sequence holds:
    # buckets 27-31 never receive a gradient.
    "t5, max_distance 128": {"method": "t5", "config": {"t5_max_distance": 128}},
    # Untrained learned rows as large as sinusoidal rows (std sqrt(1/2)) instead of GPT-2's 0.02.
    "learned, rows N(0, 1/2)": {"method": "learned", "config": {"table_std": 0.5**0.5}},
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

    Examples
    --------
    >>> baselines = ngram_baselines(seed=0, windows=4)
    >>> sorted(baselines), bool(baselines[1] > baselines[4])
    ([1, 2, 3, 4], True)
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


def summarise_text(per_window: np.ndarray) -> dict[str, list[float]]:
    """Mean, standard error, and the paired rise over the first length with its standard
    error, from :func:`~posenc_helpers.lab.length_losses`' ``(windows, lengths)`` array.

    Examples
    --------
    >>> summary = summarise_text(np.array([[1.0, 1.5], [2.0, 2.5], [3.0, 3.5]]))
    >>> summary["mean"], summary["rise"], summary["rise_se"]
    ([2.0, 2.5], [0.0, 0.5], [0.0, 0.0])
    """
    per_window = np.asarray(per_window, dtype=float)
    count = per_window.shape[0]
    rises = per_window - per_window[:, :1]
    return {
        "mean": per_window.mean(axis=0).tolist(),
        "se": (per_window.std(axis=0, ddof=1) / np.sqrt(count)).tolist(),
        "rise": rises.mean(axis=0).tolist(),
        "rise_se": (rises.std(axis=0, ddof=1) / np.sqrt(count)).tolist(),
    }


def extrapolation_verdicts(text: dict, protocol: Protocol = PROTOCOL, budget: int | None = None) -> dict[str, str]:
    """Each method's verdict at ``budget`` (default the largest): ``"flat"`` when the loss at
    every longer length stays within the margin of the loss at the training length,
    ``"rises"`` when it exceeds it by more at some length (95 % seed intervals,
    :func:`~posenc_helpers.lab.classify_rise`), else ``"unresolved"``.

    ``text`` is the record's ``"text"`` part: ``{method: {seed: {budget: summary}}}``.

    Examples
    --------
    >>> fake = {"alibi": {str(s): {"8": {"rise": [0.0, r]}} for s, r in enumerate([0.01, 0.0, -0.01])}}
    >>> extrapolation_verdicts(fake, Protocol(seeds=(0, 1, 2), budgets=(8,)))
    {'alibi': 'flat'}
    """
    key = str(protocol.largest if budget is None else budget)
    verdicts = {}
    for method, by_seed in text.items():
        rises = np.array([by_seed[str(seed)][key]["rise"][1:] for seed in protocol.seeds])  # (seeds, lengths)
        kinds = [classify_rise(rises[:, k], protocol.margin) for k in range(rises.shape[1])]
        if all(kind in ("flat", "falls") for kind in kinds):
            verdicts[method] = "flat"
        elif "rises" in kinds:
            verdicts[method] = "rises"
        else:
            verdicts[method] = "unresolved"
    return verdicts


def retrieval_verdicts(retrieval: dict, protocol: Protocol = PROTOCOL) -> dict[str, int]:
    """For each method, the longest sequence length (a multiple of ``train_len``) up to which it
    names a key in the far half of the sequence: mean accuracy over seeds whose 95 % interval
    lies above one half at that length and every shorter one. 0 when not even at ``train_len``.

    Examples
    --------
    >>> fake = {"nope": {str(s): {"far": [1.0, 0.98, 0.3]} for s in range(3)}}
    >>> retrieval_verdicts(fake, Protocol(multiples=(1, 2, 4)))
    {'nope': 128}
    """
    out = {}
    for method, by_seed in retrieval.items():
        accuracy = np.array([by_seed[str(seed)]["far"] for seed in protocol.seeds])
        reach = 0
        for k, length in enumerate(protocol.lengths):
            mean, half = seed_interval(accuracy[:, k]) if accuracy[:, k].std() > 0 else (accuracy[0, k], 0.0)
            if mean - half <= 0.5:
                break
            reach = length
        out[method] = reach
    return out


def agrees_with_record(live: dict, record: dict, budget: int, *, widen: float = 3.0) -> dict[str, bool]:
    """Whether a live run agrees with the record: for each method, its mean loss and its rise
    at every length it was scored at lie within the range the recorded seeds span at
    ``budget``, widened on each side by ``widen`` standard errors of the live estimate and of
    the recorded one.

    ``live`` maps a method to :func:`summarise_text` of a live run (the record's first
    lengths); ``record`` is :func:`~posenc_helpers.measured.trained_extrapolation`'s.

    Examples
    --------
    >>> entry = {"mean": [2.0, 2.5], "se": [0.02, 0.02], "rise": [0.0, 0.5], "rise_se": [0.0, 0.01]}
    >>> record = {"protocol": {"seeds": [0, 1]}, "text": {"rope": {"0": {"250": entry}, "1": {"250": entry}}}}
    >>> live = {"rope": {"mean": [2.1, 2.6], "se": [0.03, 0.03], "rise": [0.0, 0.5], "rise_se": [0.0, 0.01]}}
    >>> agrees_with_record(live, record, 250)   # 2.1 is within 3 * (0.03 + 0.02) of 2.0
    {'rope': True}
    >>> live["rope"]["mean"][0] = 2.2
    >>> agrees_with_record(live, record, 250)
    {'rope': False}
    """
    widen = require_positive_real(widen, "widen")
    out = {}
    for method, summary in live.items():
        runs = [record["text"][method][str(seed)][str(budget)] for seed in record["protocol"]["seeds"]]
        ok = True
        for value_key, se_key in (("mean", "se"), ("rise", "rise_se")):
            for k, value in enumerate(summary[value_key]):
                recorded = [run[value_key][k] for run in runs]
                slack = widen * (summary[se_key][k] + max(run[se_key][k] for run in runs))
                ok &= min(recorded) - slack <= value <= max(recorded) + slack
        out[method] = bool(ok)
    return out


def works_past_training_length(curves: dict, threshold: float = FLAT_MARGIN) -> dict[str, bool]:
    """Whether each method's loss rises by at most ``threshold`` above its loss at the training length
    on every seed, from ``{(method, seed): losses at L, 2L, ...}`` (a quick look; the record's
    verdicts use seed intervals, :func:`extrapolation_verdicts`).

    Examples
    --------
    >>> curves = {("alibi", 0): [2.3, 2.31, 2.3], ("rope", 0): [2.2, 2.3, 3.0]}
    >>> works_past_training_length(curves)
    {'alibi': True, 'rope': False}
    """
    threshold = require_positive_real(threshold, "threshold")
    worst: dict[str, float] = {}
    for (method, _seed), losses in curves.items():
        losses = np.asarray(losses, dtype=float)
        worst[method] = max(worst.get(method, -np.inf), float((losses[1:] - losses[0]).max()))
    return {method: bool(rise <= threshold) for method, rise in worst.items()}


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
        multiples = protocol.multiples if key[2] == protocol.largest else protocol.sweep_multiples
        lengths = [m * protocol.train_len for m in multiples]
        return summarise_text(length_losses(model, lengths, seed=model.seed, windows=protocol.windows))

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


def _retrieval_part(protocol: Protocol, progress: bool) -> dict:
    """The retrieval task: every method and seed trained, then scored far and near at every length."""
    retrieval_models = train_many(
        METHODS, protocol.seeds, task="retrieval", steps=protocol.retrieval_steps,
        batch_size=protocol.retrieval_batch_size, train_len=protocol.train_len, learning_rate=protocol.learning_rate,
        warmup=protocol.warmup, progress=progress,
    )  # fmt: skip
    retrieval: dict = {m: {} for m in METHODS}
    for (m, s), model in retrieval_models.items():
        retrieval[m][str(s)] = {
            placement: retrieval_accuracy(
                model, protocol.lengths, placement=placement, seed=s, windows=protocol.retrieval_windows
            ).tolist()
            for placement in ("far", "near")
        }
    return retrieval


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


def record_lab(path: Path | str = RECORD_PATH, *, protocol: Protocol = PROTOCOL, progress: bool = True) -> dict:
    """Run the whole experiment of :data:`PROTOCOL`, write its record to ``path`` and return it.

    The parts, in order: the n-gram baselines, the text models (every method, seed and
    budget), the configuration controls, the loss along positions and RoPE's pair norms,
    the retrieval task, and the rescue of RoPE. The record keeps the seconds each part
    took (``"seconds"``; ``make bench`` prints them). ``make record-lab`` also sets
    ``POSENC_LAB_CACHE``, so that a rerun after an edit outside the lab's training path
    reuses the trained models.
    """
    started = time.perf_counter()
    seconds: dict[str, float] = {}

    def timed(name: str, part, *args):
        begun = time.perf_counter()
        result = part(*args)
        seconds[name] = round(time.perf_counter() - begun, 1)
        print(f"record-lab: {name} done in {seconds[name]:.0f} s", flush=True)
        return result

    baselines = timed("baselines", lambda: {str(seed): ngram_baselines(protocol, seed) for seed in protocol.seeds})
    models, training_seconds = timed("text training", _train_text, protocol, progress)
    text = timed("text evaluation", _evaluate_text, protocol, models)
    controls = timed("controls", _controls_part, protocol, progress)
    positions, norms = timed("positions and pair norms", _positions_part, protocol, models)
    retrieval = timed("retrieval", _retrieval_part, protocol, progress)
    rescue_lengths, rescue = timed("rescue", _rescue_part, protocol, models, progress)
    seconds["total"] = round(time.perf_counter() - started, 1)
    record = {
        "digest": lab_digest(protocol),
        "protocol": asdict(protocol),
        "machine": {
            "processor": platform.machine(),
            "python": platform.python_version(),
            **{name: metadata.version(name) for name in ("numpy", "jax", "jaxlib", "optax")},
        },
        "seconds": seconds,
        "training_seconds": training_seconds,
        "baselines": baselines,
        "text": text,
        "controls": controls,
        "positions": positions,
        "pair_norms": norms,
        "retrieval": retrieval,
        "rescue_lengths": rescue_lengths,
        "rescue": rescue,
    }
    record = _rounded(record)
    record["verdicts"] = extrapolation_verdicts(record["text"], protocol)
    record["retrieval_reach"] = retrieval_verdicts(record["retrieval"], protocol)
    Path(path).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record
