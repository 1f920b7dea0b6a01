"""A behavioural fingerprint of the training lab: what its code computes, on a few small runs.

``python tools/lab_probe.py`` prints one SHA-256 over everything the probe computes
with the ``posenc_helpers`` it imports (``PYTHONPATH`` picks the tree). It is run by
:mod:`tools.rekey_lab_record` under two trees, an old one whose record was valid and
the working tree, to show that a refactor of the lab changed no number before the
record is given the new code's key. It uses only the lab's public functions, with the
settings the record uses (``PROTOCOL``, ``DEFAULT_CONFIGS`` per task, ``CONTROLS``):

* the protocol, the controls and every method's configuration, as data;
* every position hook (each method, at the training length and 16 times it);
* five steps of text training of every method, and of each control; their losses
  and weights; the held-out loss at L and 2L and per position; RoPE's pair norms;
* the sliding-window reference of every method's text model;
* the offset task (training, accuracy, attention) and the question tasks (the content
  lookup, the marker and the order task: training, accuracy far, near and with the
  context shuffled, and the bag-of-tokens control);
* two budgets from one run; a fine-tune with YaRN at 2L and a linear rescaling;
* the n-gram baselines on a few windows; the summaries, the statistical rules and the
  verdict functions applied to the record's own numbers;
* ``record_lab`` itself on a miniature protocol (two seeds, budgets of 2 and 4 steps),
  so that a change in how the record is put together shows too.

Bitwise equality of two probes on one machine says the code computes the same
numbers on these inputs; it says nothing about inputs the probe does not reach
(a branch taken only at other sizes), which is why numerics changes still need
``make record-lab``. The probe calls the lab's public API as it is now (issue 43's
answer splits, oracles and three-valued reach): under a base commit older than that API it
fails, and the change has to be re-recorded instead of re-keyed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from typing import Any

import jax
import numpy as np


def _feed(digest: Any, value: object) -> None:
    """Add ``value`` to ``digest``: arrays by dtype, shape and bytes; containers item by item.

    Like the store's own ``_feed`` (``posenc_helpers/lab/cache.py``), written again on
    purpose: the probe runs under old packages too, and must not depend on the code it
    compares.
    """
    if isinstance(value, np.ndarray | jax.Array):
        array = np.asarray(jax.device_get(value))
        digest.update(f"array {array.dtype.str} {array.shape}".encode())
        digest.update(np.ascontiguousarray(array).tobytes())
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        _feed(digest, (type(value).__name__, dataclasses.asdict(value)))
    elif isinstance(value, dict):
        digest.update(f"dict {len(value)}".encode())
        for key in sorted(value, key=repr):
            _feed(digest, key)
            _feed(digest, value[key])
    elif isinstance(value, tuple | list):
        digest.update(f"{type(value).__name__} {len(value)}".encode())
        for item in value:
            _feed(digest, item)
    else:
        digest.update(f"{type(value).__name__} {value!r}".encode())


def _model_numbers(model: Any) -> list:
    """What a trained model holds: its weights and losses (not its training time)."""
    return [jax.tree_util.tree_leaves(model.params), model.losses, model.steps, model.train_len]


def _miniature_record(protocol: Any) -> dict:
    """``record_lab`` itself, end to end, on a protocol small enough for seconds (two seeds,
    budgets of 2 and 4 steps, two windows): what its orchestration computes, without the
    times and the machine it ran on."""
    import tempfile

    from posenc_helpers import lab

    small = dataclasses.replace(
        protocol, budgets=(2, 4), seeds=(0, 1), batch_size=2, warmup=1, multiples=(1, 2), sweep_multiples=(1, 2),
        windows=2, ngram_orders=(1, 2), retrieval_steps=2, marker_steps=2, order_steps=2, question_batch_size=2,
        question_windows=2, rescue_steps=1, rescue_batch_size=1,
    )  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        record = lab.record_lab(f"{folder}/record.json", protocol=small, progress=False)
    varying = ("seconds", "training_seconds", "machine", "digest")
    return {key: value for key, value in record.items() if key not in varying}


def probe(text_only: bool = False) -> dict[str, object]:
    """Everything the probe computes, by name (see the module docstring). ``text_only``
    leaves out the question tasks and the miniature record: what a record's text part
    depends on, to show that ``make record-lab-questions`` may keep it."""
    from posenc_helpers import lab
    from posenc_helpers.measured import trained_extrapolation

    protocol = lab.PROTOCOL
    length = protocol.train_len
    common = {"progress": False, "batch_size": 4, "warmup": 2}
    out: dict[str, object] = {
        "protocol": dataclasses.asdict(protocol),
        "controls": lab.CONTROLS,
        "configs": lab.DEFAULT_CONFIGS,
        "methods": list(lab.METHODS),
    }
    for method in lab.METHODS:
        for n in (length, 16 * length):
            out[f"hooks {method} {n}"] = lab.position_hooks(method, n, lab.DEFAULT_CONFIGS["text"])._asdict()
        model = lab.train(method, train_len=length, steps=5, seed=1, **common)
        out[f"text {method}"] = _model_numbers(model)
        out[f"length losses {method}"] = lab.length_losses(model, [length, 2 * length], windows=2)
        out[f"position losses {method}"] = lab.position_losses(model, 2 * length, windows=2)
        out[f"sliding {method}"] = lab.sliding_window_losses(model, windows=2, stride=protocol.sliding_stride)
        if method == "rope":
            out["pair norms"] = lab.rope_pair_norms(model, windows=2)
            tuned = lab.fine_tune(
                lab.with_rope_scaling(model, "yarn", 2.0), length=2 * length, steps=2, batch_size=2, progress=False
            )
            out["yarn fine-tune"] = [_model_numbers(tuned), lab.length_losses(tuned, [2 * length], windows=2)]
            linear = lab.with_rope_scaling(model, "linear", 2.0)
            out["linear x2"] = lab.length_losses(linear, [2 * length], windows=2)
    for name, control in lab.CONTROLS.items():
        config = dataclasses.replace(lab.DEFAULT_CONFIGS["text"], **control["config"])
        model = lab.train(control["method"], train_len=length, steps=3, config=config, **common)
        out[f"control {name}"] = _model_numbers(model)
    budgets = lab.train_budgets("alibi", train_len=length, budgets=[2, 4], **common)
    out["budgets"] = {budget: _model_numbers(model) for budget, model in budgets.items()}
    offset = lab.train("rope", task="offset", train_len=16, steps=4, phi=3, alphabet=8, **common)
    out["offset"] = [
        _model_numbers(offset),
        lab.offset_accuracy(offset, [16, 32], windows=2),
        lab.offset_attention(offset, 32, windows=2),
    ]
    question_lengths = [16, 32]
    for method, task in () if text_only else (("t5", "retrieval"), ("rope", "marker"), ("alibi", "order")):
        model = lab.train(method, task=task, train_len=16, steps=4, **common)
        scores = {
            placement: lab.question_accuracy(model, question_lengths, placement=placement, windows=4)
            for placement in ("far", "near")
        }
        scores["shuffled"] = lab.question_accuracy(model, question_lengths, windows=4, shuffled=True)
        scores["answers"] = lab.answer_split(model, [16, 48], windows=4)
        out[task] = [_model_numbers(model), scores, protocol.question_steps(task)]
        for oracle in (lab.bag_of_tokens_accuracy, lab.order_only_accuracy):
            out[f"{oracle.__name__} {task}"] = {
                placement: oracle(task, [16, 32, 48], train_len=16, placement=placement, windows=8)
                for placement in ("far", "near")
            }
        if task == "retrieval":
            out["retrieval accuracy"] = lab.retrieval_accuracy(model, [32], placement="near", windows=4)
    out["ngram"] = lab.ngram_baselines(dataclasses.replace(protocol, ngram_orders=(1, 3)), seed=0, windows=4)
    if not text_only:
        out["miniature record"] = _miniature_record(protocol)
    record = trained_extrapolation()
    seeds, largest = protocol.seeds, protocol.largest
    out["verdicts"] = {
        "sliding": lab.extrapolation_verdicts(record["text"], seeds, largest),
        "over L": lab.extrapolation_verdicts(record["text"], seeds, largest, rise="rise"),
    }
    if not text_only:
        out["verdicts"]["reach"] = {
            task: lab.question_reach(
                record["questions"][task], seeds, protocol.lengths, windows=protocol.question_windows
            )
            for task in lab.QUESTION_TASKS
        }
    live = {method: record["text"][method][str(seeds[0])][str(largest)] for method in lab.METHODS}
    out["reproduces"] = lab.reproduces_record(live, record, largest)
    rises = np.array([record["text"]["rope"][str(seed)][str(largest)]["rise_sliding"] for seed in seeds])
    out["rules"] = [
        lab.rise_verdict(rises[:, 1:], protocol.margin),
        [lab.one_sided_bound(rises[:, k], side) for k in range(rises.shape[1]) for side in ("upper", "lower")],
        lab.summarise_text(np.arange(12.0).reshape(4, 3) ** 0.5, np.linspace(0.5, 2.0, 4)),
    ]
    return out


def probe_digest(text_only: bool = False) -> str:
    """SHA-256 of :func:`probe`'s results."""
    digest = hashlib.sha256()
    _feed(digest, probe(text_only))
    return digest.hexdigest()


if __name__ == "__main__":
    import posenc_helpers

    text_only = sys.argv[1:] == ["--text"]
    print(json.dumps({"package": posenc_helpers.__file__, "probe": probe_digest(text_only), "text_only": text_only}))
    sys.exit(0)
