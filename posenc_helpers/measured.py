"""What trained models do, as measured by the training lab (chapter 11), for use without JAX.

Chapter 10 scores what each encoding *can* do by construction. What *trained*
models do past their training length is measured by chapter 11's experiment
(:mod:`posenc_helpers.lab.protocol`), which ``make record-lab`` runs and writes to a
record in this package: the numbers, and the verdicts that rules fixed in advance
draw from them. Chapter 11 recomputes the verdicts from the numbers and checks its
own live run against them every time it runs.
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
        losses and rises, by method, seed and budget), ``"retrieval"``,
        ``"rescue"``, and the verdicts: ``"verdicts"``, ``{method: "flat" |
        "rises" | "unresolved"}`` for the held-out loss past the training length
        at the largest budget, and ``"retrieval_reach"``, ``{method: tokens}``, the
        longest sequence up to which the method's models name a key planted in its
        older half. The methods are the lab's: ``"nope"``, ``"sinusoidal"``,
        ``"learned"``, ``"t5"``, ``"rope"`` and ``"alibi"``.

    Raises
    ------
    FileNotFoundError
        If the record is missing (run ``make record-lab``).

    Examples
    --------
    >>> record = trained_extrapolation()
    >>> sorted(record["verdicts"])
    ['alibi', 'learned', 'nope', 'rope', 'sinusoidal', 't5']
    >>> record["verdicts"]["sinusoidal"], record["retrieval_reach"]["t5"]
    ('rises', 1024)
    """
    if not RECORD_PATH.is_file():
        raise FileNotFoundError(f"no record of chapter 11's experiment at {RECORD_PATH}: run `make record-lab`")
    return json.loads(RECORD_PATH.read_text(encoding="utf-8"))
