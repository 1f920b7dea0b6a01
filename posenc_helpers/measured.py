"""What trained models do, as measured by the training lab (chapter 11), for use without JAX.

Chapter 10 scores what each encoding *can* do by construction. Whether a *trained*
model works past its training length is measured by chapter 11, whose protocol
(:mod:`posenc_helpers.lab.protocol`) wrote its verdicts to a record in this package
(``make record-lab``). Chapter 11 asserts, every time it runs, that it still
reaches exactly these verdicts.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["RECORD_PATH", "trained_extrapolation"]

#: The record written by ``posenc_helpers.lab.record_verdicts`` (``make record-lab``).
RECORD_PATH = Path(__file__).resolve().parent / "data" / "train_short_test_long.json"


def trained_extrapolation() -> dict:
    """The record of chapter 11's experiment: criterion, protocol and verdicts.

    Returns
    -------
    dict
        ``{"criterion": str, "protocol": dict, "verdicts": {method: bool}}`` where
        the methods are the lab's: ``"nope"``, ``"sinusoidal"``, ``"learned"``,
        ``"t5"``, ``"rope"`` and ``"alibi"``.

    Raises
    ------
    FileNotFoundError
        If the record is missing (run ``make record-lab``).

    Examples
    --------
    >>> record = trained_extrapolation()
    >>> sorted(record["verdicts"])
    ['alibi', 'learned', 'nope', 'rope', 'sinusoidal', 't5']
    >>> record["verdicts"]["alibi"], record["verdicts"]["sinusoidal"]
    (True, False)
    """
    if not RECORD_PATH.is_file():
        raise FileNotFoundError(f"no record of chapter 11's experiment at {RECORD_PATH}: run `make record-lab`")
    return json.loads(RECORD_PATH.read_text(encoding="utf-8"))
