"""What trained models do, as measured by the training lab (chapter 11), for use without JAX.

Chapter 10 scores what each encoding *can* do by construction. What *trained*
models do past their training length is measured by chapter 11's experiment
(:mod:`posenc_helpers.lab.protocol`), which ``make record-lab`` runs and writes to a
record in this package: the numbers, and the verdicts that rules fixed before the
record was made draw from them. Chapter 11 recomputes the verdicts from the numbers,
and its live run reproduces a part of them (seed 0, the smallest budget) every time it runs.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["RECORD_PATH", "trained_extrapolation"]

#: The record written by ``posenc_helpers.lab.record_lab`` (``make record-lab``).
RECORD_PATH = Path(__file__).resolve().parent / "data" / "train_short_test_long.json"


def trained_extrapolation() -> dict:
    """The record of chapter 11's experiment.

    Returns
    -------
    dict
        Among others ``"protocol"`` (the settings), ``"digest"`` (of the lab's
        source, protocol and corpus), ``"baselines"``, ``"text"`` (every model's
        losses and rises, by method, seed and budget; at the largest budget also
        the sliding-window reference and the early-token gain), ``"questions"``
        (accuracy on the three question tasks, by task, method and seed, far,
        near and with shuffled contexts, and what the models answered far and
        near), the oracles ``"bag_of_tokens"`` and ``"order_only"``,
        ``"rescue"``, ``"kept"`` when ``make record-lab-questions`` kept the text
        part of an earlier record, and the verdicts: ``"verdicts"``, ``{method:
        "does not rise" | "rises" | "unresolved"}`` for the held-out loss past the
        training length at the largest budget, and ``"reach"``, ``{task: {method:
        entry}}``, whether each method's answers keep, drop or are unresolved at
        each longer length (:func:`posenc_helpers.lab.question_reach`). The methods are the lab's: ``"nope"``,
        ``"sinusoidal"``, ``"learned"``, ``"t5"``, ``"rope"`` and ``"alibi"``.

    Raises
    ------
    FileNotFoundError
        If the record is missing (run ``make record-lab``).

    Examples
    --------
    >>> record = trained_extrapolation()
    >>> sorted(record["verdicts"])
    ['alibi', 'learned', 'nope', 'rope', 'sinusoidal', 't5']
    >>> record["verdicts"]["sinusoidal"], sorted(record["reach"])
    ('rises', ['marker', 'order', 'retrieval'])
    """
    if not RECORD_PATH.is_file():
        raise FileNotFoundError(f"no record of chapter 11's experiment at {RECORD_PATH}: run `make record-lab`")
    return json.loads(RECORD_PATH.read_text(encoding="utf-8"))
