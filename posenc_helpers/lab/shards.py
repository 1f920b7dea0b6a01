"""The record's training runs spread over machines: shards, and the merge of their stores.

:func:`~posenc_helpers.lab.record_lab` trains every run of the experiment in one process
(about an hour on two cores) and then evaluates them. The training runs are independent
of one another, so they can be trained anywhere: :func:`training_units` lists them as
units of work (a RoPE text model goes with the three fine-tunes of its rescue, which
start from its weights), :func:`shard_units` deals them into ``count`` shards, balanced
by their expected cost, and :func:`train_shard` trains one shard into a store of runs
(:mod:`.cache`). :func:`merge_stores` joins the shards' stores into one; ``record_lab``
run with that store and ``POSENC_LAB_STORED_ONLY=1`` reads every run back, trains none,
and writes the record that one process would have written (``make record-lab SHARD=i/N``,
``make merge-lab-stores``, ``make record-lab STORE=...``; CONTRIBUTING has Slurm and
Kubernetes recipes).

The units call the training functions with the very arguments ``record_lab``'s parts
use, so each run has the same key (:func:`~posenc_helpers.lab.cache.run_key`) in both;
a test trains a miniature protocol both ways and compares the records and the stored
weights byte for byte.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .cache import CACHE_VARIABLE, entry_digest
from .model import METHODS, ModelConfig
from .optimiser import decay_steps
from .protocol import CONTROLS, PROTOCOL, QUESTION_CONTROLS, Protocol, lab_digest
from .tasks import QUESTION_TASKS
from .training import (
    DEFAULT_CONFIGS,
    fine_tune,
    train,
    train_budgets,
    two_at_a_time,
    with_rope_scaling,
)

__all__ = ["Unit", "parse_shard", "training_units", "shard_units", "train_shard", "merge_stores"]

_SHARD = re.compile(r"(\d+)/(\d+)")


@dataclass(frozen=True)
class Unit:
    """One piece of the record's training: a name, its expected cost, and what trains it.

    ``cost`` is the tokens its training steps read (steps times batch size times
    length). On the two-core CPU a token costs about the same at every size the record
    trains (its full run at commit a019198: 18.7 ms a step of 1,024 tokens for the text
    models, 23 for the controls, at most 36 a step of 2,048 for the question models,
    their scoring included), where their floating-point operations
    (:func:`~posenc_helpers.lab.train_step_flops`) would make a question model's step
    cost half a text model's instead of twice.
    """

    name: str
    cost: float
    train: Callable[[], object] = field(repr=False, compare=False)


def parse_shard(shard: str) -> tuple[int, int]:
    """``"i/N"`` as ``(i, N)``: shard ``i`` (counted from 0, as Slurm array and Kubernetes indices are) of ``N``.

    Examples
    --------
    >>> parse_shard("1/4")
    (1, 4)
    >>> parse_shard("4/4")
    Traceback (most recent call last):
    ...
    ValueError: SHARD must be i/N with 0 <= i < N (i counted from 0), got '4/4'
    """
    if not isinstance(shard, str):
        raise TypeError(f"SHARD must be a string i/N such as '0/4', got {type(shard).__name__}")
    match = _SHARD.fullmatch(shard.strip())
    if match is None:
        raise ValueError(f"SHARD must be i/N with whole numbers, such as 0/4 (shard 0 of 4), got {shard!r}")
    index, count = int(match[1]), int(match[2])
    if not 0 <= index < count:
        raise ValueError(f"SHARD must be i/N with 0 <= i < N (i counted from 0), got {shard!r}")
    return index, count


def _text_settings(protocol: Protocol, progress: bool) -> dict:
    """What every text model shares (``record_lab``'s ``_common``)."""
    return {
        "train_len": protocol.train_len,
        "batch_size": protocol.batch_size,
        "learning_rate": protocol.learning_rate,
        "warmup": protocol.warmup,
        "progress": progress,
    }


def _question_settings(protocol: Protocol, progress: bool) -> dict:
    """What every question model shares (``record_lab``'s question part)."""
    return {
        "batch_size": protocol.question_batch_size,
        "train_len": protocol.train_len,
        "learning_rate": protocol.learning_rate,
        "warmup": protocol.warmup,
        "progress": progress,
    }


def _text_and_rescue(protocol: Protocol, method: str, seed: int, progress: bool) -> None:
    """One text model's budgets; for RoPE, the rescue's three fine-tunes from its largest budget."""
    runs = train_budgets(method, seed=seed, budgets=protocol.budgets, **_text_settings(protocol, progress))
    if method != "rope":
        return
    rope, factor = runs[protocol.largest], float(protocol.rescue_factor)
    for model in (rope, with_rope_scaling(rope, "linear", factor), with_rope_scaling(rope, "yarn", factor)):
        fine_tune(
            model,
            length=protocol.rescue_factor * protocol.train_len,
            steps=protocol.rescue_steps,
            batch_size=protocol.rescue_batch_size,
            progress=progress,
        )


def _control(protocol: Protocol, method: str, config: ModelConfig, seed: int, progress: bool) -> None:
    """A configuration control at the largest budget (``record_lab``'s ``_controls_part``)."""
    train_budgets(method, budgets=[protocol.largest], seed=seed, config=config, **_text_settings(protocol, progress))


def _question(
    protocol: Protocol, task: str, method: str, config: ModelConfig | None, seed: int, progress: bool
) -> None:
    """A question model (``record_lab``'s question part; a control passes its ``config``)."""
    steps = protocol.question_steps(task)
    train(method, seed=seed, task=task, steps=steps, config=config, **_question_settings(protocol, progress))


def training_units(protocol: Protocol = PROTOCOL, *, progress: bool = False) -> list[Unit]:
    """Every training run of ``record_lab(protocol=protocol)``, as units of work, in a fixed order.

    The text models (a method and seed: every budget from one run; RoPE's with its
    rescue), the configuration controls, the question models and the question controls.

    Examples
    --------
    >>> units = training_units()
    >>> len(units), units[0].name
    (81, 'text nope 0')
    """
    if not isinstance(protocol, Protocol):
        raise TypeError(f"protocol must be a Protocol, got {type(protocol).__name__}")
    largest, L = protocol.largest, protocol.train_len
    text_steps = largest + sum(decay_steps(budget) for budget in protocol.budgets if budget != largest)
    text_cost = float(text_steps * protocol.batch_size * L)
    rescue_cost = float(3 * protocol.rescue_steps * protocol.rescue_batch_size * protocol.rescue_factor * L)
    units = [
        Unit(
            f"text {method} {seed}",
            text_cost + (rescue_cost if method == "rope" else 0.0),  # the rescue: as trained, PI and YaRN
            functools.partial(_text_and_rescue, protocol, method, seed, progress),
        )
        for method in METHODS
        for seed in protocol.seeds
    ]
    for name, change in CONTROLS.items():
        config = dataclasses.replace(ModelConfig(), **change["config"])
        units += [
            Unit(
                f"control {name} {seed}",
                float(largest * protocol.batch_size * L),
                functools.partial(_control, protocol, change["method"], config, seed, progress),
            )
            for seed in protocol.seeds
        ]
    questions: list[tuple[str, str, ModelConfig | None, str]] = [
        (task, method, None, f"question {task} {method}") for task in QUESTION_TASKS for method in METHODS
    ]
    for name, change in QUESTION_CONTROLS.items():
        config = dataclasses.replace(DEFAULT_CONFIGS[change["task"]], **change["config"])
        questions.append((change["task"], change["method"], config, f"question control {name}"))
    for task, method, question_config, label in questions:
        units += [
            Unit(
                f"{label} {seed}",
                float(protocol.question_steps(task) * protocol.question_batch_size * L),
                functools.partial(_question, protocol, task, method, question_config, seed, progress),
            )
            for seed in protocol.seeds
        ]
    return units


def shard_units(units: Iterable[Unit], count: int) -> list[list[Unit]]:
    """Deal ``units`` into ``count`` shards of about equal cost, the same way every time.

    The costliest unit first, each to the shard with the least cost so far (the lowest
    index on a tie); units of equal cost are taken by name. Within a shard, the units
    keep the order of ``units``.

    Examples
    --------
    >>> units = [Unit(name, cost, print) for name, cost in [("a", 4), ("b", 3), ("c", 2), ("d", 2), ("e", 1)]]
    >>> [[unit.name for unit in shard] for shard in shard_units(units, 2)]
    [['a', 'd'], ['b', 'c', 'e']]
    """
    units = list(units)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be a whole number of shards, at least 1, got {count!r}")
    loads = [0.0] * count
    shard_of: dict[str, int] = {}
    for unit in sorted(units, key=lambda unit: (-unit.cost, unit.name)):
        index = min(range(count), key=lambda i: (loads[i], i))
        shard_of[unit.name] = index
        loads[index] += unit.cost
    return [[unit for unit in units if shard_of[unit.name] == index] for index in range(count)]


def train_shard(shard: str, *, protocol: Protocol = PROTOCOL, progress: bool = True) -> dict:
    """Train shard ``shard`` (``"i/N"``) of ``protocol``'s runs into the store ``POSENC_LAB_CACHE`` names.

    Writes no record. The store also receives ``shard-i-of-N.json``: the shard, the
    record's key (:func:`~posenc_helpers.lab.lab_digest`), the units and their seconds.
    Runs already in the store are read back, so a shard that was stopped resumes.

    Returns
    -------
    dict
        What ``shard-i-of-N.json`` holds.

    Raises
    ------
    ValueError
        If ``shard`` is not ``i/N`` with ``0 <= i < N``, or ``POSENC_LAB_CACHE`` is unset
        (the runs would be trained and thrown away).
    """
    index, count = parse_shard(shard)
    folder = os.environ.get(CACHE_VARIABLE)
    if not folder:
        raise ValueError(f"{CACHE_VARIABLE} must name the store a shard trains into (make record-lab SHARD=i/N does)")
    units = shard_units(training_units(protocol, progress=progress), count)[index]
    print(f"record-lab: shard {index}/{count}: {len(units)} training runs into {folder}", flush=True)
    seconds: dict[str, float] = {}

    def run(unit: Unit) -> None:
        begun = time.perf_counter()
        unit.train()
        seconds[unit.name] = round(time.perf_counter() - begun, 1)
        print(f"record-lab: shard {index}/{count}: {unit.name} done in {seconds[unit.name]:.0f} s "
              f"({len(seconds)} of {len(units)})", flush=True)  # fmt: skip

    two_at_a_time(run, units)
    manifest = {
        "shard": f"{index}/{count}",
        "digest": lab_digest(protocol),
        "units": [unit.name for unit in units],
        "seconds": {unit.name: seconds[unit.name] for unit in units},
    }
    path = Path(folder) / f"shard-{index}-of-{count}.json"
    path.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def _entries(store: Path) -> dict[str, Path]:
    """The files of ``store`` a merge carries: stored runs (pickle and digest) and shard manifests."""
    if not store.is_dir():
        raise ValueError(f"stores must be folders of stored runs; {store} is not a folder")
    carried = [path for path in store.iterdir() if path.is_file() and path.suffix in (".pickle", ".sha256")]
    carried += store.glob("shard-*-of-*.json")
    return {path.name: path for path in carried}


def merge_stores(stores: Iterable[Path | str], out: Path | str) -> dict[str, int]:
    """Copy the runs of every store in ``stores`` into the store ``out``, checking each one.

    Each run's pickle must match the SHA-256 its ``.sha256`` file holds; two stores (or
    ``out``) holding different bytes under one name are refused (the same run trained
    twice: its weights agree on a CPU, its recorded training time does not; keep one).
    Shard manifests (``shard-i-of-N.json``) are carried too, and a set of shards with
    one missing is named. Nothing is written to ``out`` unless every check passes.

    Returns
    -------
    dict
        ``{"runs": runs in out, "copied": runs newly copied, "manifests": manifests in out}``.

    Raises
    ------
    ValueError
        If ``stores`` is empty, a store is not a folder, a run lacks its digest or does
        not match it, or two different files share a name.
    """
    folders = [Path(store) for store in ([stores] if isinstance(stores, str | Path) else stores)]
    if not folders:
        raise ValueError("stores must name at least one folder of stored runs")
    out_folder = Path(out)
    chosen: dict[str, Path] = _entries(out_folder) if out_folder.is_dir() else {}
    for store in folders:
        for name, path in sorted(_entries(store).items()):
            if name in chosen and chosen[name].read_bytes() != path.read_bytes():
                raise ValueError(
                    f"stores hold two different entries under {name}: {chosen[name]} and {path} "
                    "(the same run trained twice records two training times): keep one of them"
                )
            chosen.setdefault(name, path)
    for path in chosen.values():
        if path.suffix != ".pickle":
            continue
        digest = path.with_suffix(".sha256")
        if not digest.is_file():
            raise ValueError(f"stored run {path} has no digest {digest.name}: it cannot be checked")
        if digest.read_text().strip() != entry_digest(path.read_bytes()):
            raise ValueError(f"stored run {path} does not match its digest {digest}: train its shard again")
    out_folder.mkdir(parents=True, exist_ok=True)
    copied = 0
    for name, path in sorted(chosen.items()):
        if path.parent.resolve() != out_folder.resolve():
            shutil.copyfile(path, out_folder / f"{name}.part")
            os.replace(out_folder / f"{name}.part", out_folder / name)
            copied += path.suffix == ".pickle"
    manifests = sorted(name for name in chosen if name.startswith("shard-") and name.endswith(".json"))
    counts = {int(m.group(2)) for name in manifests if (m := re.fullmatch(r"shard-(\d+)-of-(\d+)\.json", name))}
    for count in sorted(counts):
        missing = [i for i in range(count) if f"shard-{i}-of-{count}.json" not in chosen]
        if missing:
            print(f"merge-lab-stores: of {count} shards, {', '.join(map(str, missing))} not merged yet", flush=True)
    runs = sum(name.endswith(".pickle") for name in chosen)
    return {"runs": runs, "copied": copied, "manifests": len(manifests)}
