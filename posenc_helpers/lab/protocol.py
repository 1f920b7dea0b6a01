"""Chapter 11's experiment, in one place: its settings, its verdicts, and their record.

Chapter 10 shows, beside the checklist it scores by construction, whether each method
*works* past its training length. It cannot train models itself (that is chapter 11's
two minutes), so it reads the verdicts from a record that :func:`record_verdicts`
writes (``make record-lab``) by running exactly this protocol; chapter 11 runs the
protocol in front of the reader and asserts that its verdicts equal the record.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .._validation import check_positive_real
from ..measured import RECORD_PATH
from .evaluation import length_curve
from .model import METHODS
from .training import TrainedModel, train_many, two_at_a_time

__all__ = ["Protocol", "PROTOCOL", "length_curves", "works_past_training_length", "record_verdicts"]


@dataclass(frozen=True)
class Protocol:
    """Settings of the train-short, test-long experiment."""

    train_len: int = 64
    steps: int = 300
    batch_size: int = 8
    learning_rate: float = 1e-2
    seeds: tuple[int, ...] = (0, 1)
    multiples: tuple[int, ...] = (1, 2, 4, 8, 16)
    windows: int = 16
    threshold: float = 0.1  # nats: "works" = within this of the loss at the training length

    @property
    def lengths(self) -> list[int]:
        return [m * self.train_len for m in self.multiples]


PROTOCOL = Protocol()


def length_curves(models: dict, lengths, *, windows: int = PROTOCOL.windows) -> dict:
    """:func:`length_curve` of every model of ``{key: TrainedModel}``, two at a time.
    Examples
    --------
    >>> from posenc_helpers.lab import ModelConfig, train
    >>> tiny = ModelConfig(d_model=16, n_layers=1, n_heads=2, d_ff=32, max_positions=64)
    >>> models = {("alibi", 0): train("alibi", train_len=8, steps=2, config=tiny, progress=False)}
    >>> {key: curve.shape for key, curve in length_curves(models, [8, 16], windows=2).items()}
    {('alibi', 0): (2,)}
    """
    curves = two_at_a_time(lambda model: length_curve(model, lengths, windows=windows), models.values())
    return dict(zip(models, curves, strict=True))


def works_past_training_length(curves: dict, threshold: float = PROTOCOL.threshold) -> dict[str, bool]:
    """Whether each method works past its training length, from its length curves.

    ``curves`` maps ``(method, seed)`` to losses at the protocol's lengths, the
    first being the training length. A method works if, for every seed, the loss
    at every longer length exceeds the loss at the training length by at most
    ``threshold`` nats.

    Examples
    --------
    >>> curves = {("alibi", 0): [2.3, 2.31, 2.3], ("rope", 0): [2.2, 2.3, 3.0]}
    >>> works_past_training_length(curves)
    {'alibi': True, 'rope': False}
    """
    threshold = check_positive_real(threshold, "threshold")
    worst: dict[str, float] = {}
    for (method, _seed), losses in curves.items():
        losses = np.asarray(losses, dtype=float)
        worst[method] = max(worst.get(method, -np.inf), float((losses[1:] - losses[0]).max()))
    return {method: bool(rise <= threshold) for method, rise in worst.items()}


def record_verdicts(path: Path | str = RECORD_PATH, *, progress: bool = True) -> dict:
    """Run :data:`PROTOCOL` for every method, write the verdicts to ``path`` and return the record.
    Examples
    --------
    The run takes about a minute; the record it writes is what
    :func:`posenc_helpers.measured.trained_extrapolation` reads:

    >>> from posenc_helpers.measured import trained_extrapolation
    >>> trained_extrapolation()["protocol"]["train_len"] == PROTOCOL.train_len
    True
    """
    protocol = PROTOCOL
    models: dict[tuple[str, int], TrainedModel] = train_many(
        METHODS,
        protocol.seeds,
        train_len=protocol.train_len,
        steps=protocol.steps,
        batch_size=protocol.batch_size,
        learning_rate=protocol.learning_rate,
        progress=progress,
    )
    curves = length_curves(models, protocol.lengths, windows=protocol.windows)
    record = {
        "criterion": (
            f"held-out loss at {', '.join(f'{m}x' for m in protocol.multiples[1:])} the training "
            f"length within {protocol.threshold:g} nats of the loss at the training length, "
            f"on every seed"
        ),
        "protocol": asdict(protocol),
        "verdicts": works_past_training_length(curves, protocol.threshold),
    }
    Path(path).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record
