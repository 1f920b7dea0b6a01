"""The settings each chapter's explorer is drawn at for the website: one :class:`Grid` per explorer.

:mod:`tools.site.explorers` draws every setting of a grid into frames (cached per grid)
and :mod:`tools.site.explorer_player` plays them on the page.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import product
from typing import Any

__all__ = ["Grid", "GRIDS"]


def _demo(name: str) -> Callable[[], Any]:
    """The explorer as the chapter builds it, when that is its ``demo()`` set-up."""

    def build() -> Any:
        from posenc_helpers import widgets

        return getattr(widgets, name).demo()[0]

    return build


def _naive_positions() -> Any:
    """Chapter 02's explorer: its own embeddings (seed 2, 1000 x 64, sigma 1), divided by sigma."""
    import numpy as np

    from posenc_helpers.widgets import NaivePositionsExplorer

    sigma, d = 1.0, 64
    embeddings = sigma * np.random.default_rng(seed=2).normal(size=(1000, d))
    return NaivePositionsExplorer(embeddings / sigma, length=50)


def _train_short_test_long() -> Any:
    """Chapter 11's explorer: the recorded loss at each position of every method, RoPE shown."""
    import numpy as np

    from posenc_helpers.measured import trained_extrapolation
    from posenc_helpers.widgets import LengthExplorer

    # The record holds the methods (in the lab's order) and the protocol the chapter reads from
    # posenc_helpers.lab; the site build reads them from the record, without importing the
    # lab (JAX, optax, tqdm and scipy are not in the site-build layer, requirements-book.txt).
    record = trained_extrapolation()
    along = {m: np.array(curve) for m, curve in record["positions"].items()}
    return LengthExplorer(along, record["protocol"]["train_len"], method="rope")


@dataclass(frozen=True)
class Grid:
    """The settings an explorer is rendered at for the website.

    Attributes
    ----------
    values : mapping of str to tuple
        For each control the player offers, the values it steps through (every
        combination is rendered). Controls left out keep the chapter's setting.
    why : str
        Why these controls and values show what the chapter's explorer is for.
    cell : str
        The line of the chapter's explorer cell that builds it; a test fails when the
        notebook's line changes, so that :attr:`build` is checked again.
    build : callable
        Builds the explorer as the chapter does (by default its ``demo()``, which for
        these chapters is the notebook's own set-up, frame for frame).
    reads : tuple of str
        Files of the package, relative to its root, that :attr:`build` reads beyond the
        modules the explorer's own module imports (chapter 11: the record and the module
        that reads it); part of the frames' key.
    """

    values: Mapping[str, tuple[Any, ...]]
    why: str
    cell: str
    build: Callable[[], Any]
    reads: tuple[str, ...] = ()

    @property
    def settings(self) -> list[dict[str, Any]]:
        """Every setting of the grid, the last control varying fastest."""
        names = list(self.values)
        return [dict(zip(names, combo, strict=True)) for combo in product(*self.values.values())]


#: One grid per explorer class of :mod:`posenc_helpers.widgets` (a test keeps it complete).
GRIDS: dict[str, Grid] = {
    "WordOrderExplorer": Grid(
        {"order": ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)), "strength": (0.0, 0.5, 1.0, 2.0)},
        "Every word order (the point: without a position signal all six give the same pooled output) at "
        "no, weak, equal and strong position signal; 24 frames.",
        "explorer = WordOrderExplorer(sentence_a, x_a, w_q, w_k, w_v, sinusoid)",
        _demo("WordOrderExplorer"),
    ),
    "NaivePositionsExplorer": Grid(
        {"length": (2, 5, 10, 20, 50, 100, 200, 500), "scale": (0.1, 1.0, 10.0)},
        "Lengths on a roughly logarithmic ladder up to the slider's 500 show where raw indices swamp the "
        "embeddings; three embedding scales a decade apart show the crossing move; 24 frames.",
        "explorer = NaivePositionsExplorer(embeddings / sigma, length=long)",
        _naive_positions,
    ),
    "SineCollisionExplorer": Grid(
        {
            "omega": (1.0, 0.15848931924611134, 0.025118864315095794, 0.003981071705534973, 0.000630957344480193),
            "reference": (0, 11, 22, 100, 999),
            "threshold": (1e-4, 1e-2, 1e-1),
        },
        "All five frequency columns; references at the start, near the first near-collisions (11, 22), in "
        "the middle and at the end; a small, the chapter's and a large threshold (the text asks for the fast "
        "column at small thresholds and a slow column at larger ones); 75 frames of about 10 kB.",
        "explorer = SineCollisionExplorer(n_positions=n_positions)",
        _demo("SineCollisionExplorer"),
    ),
    "SinusoidalExplorer": Grid(
        {"d_model": (8, 16, 32, 64, 128, 256, 512), "base": (10.0, 100.0, 1000.0, 10000.0, 100000.0, 1e6)},
        "The explorer's own two selection sliders, every stop of both (the control is discrete): 42 frames.",
        "explorer = SinusoidalExplorer(n_positions=n_show, d_model=d, base=base)",
        _demo("SinusoidalExplorer"),
    ),
    "UnitCircleExplorer": Grid(
        {"t": (0.0, 1.0, 3.0, 6.0, 10.0, 20.0, 40.0), "phi": (-6.0, 0.0, 2.0, 6.0)},
        "Position t from 0 to the slider's 40 and offsets of both signs: the point of the chapter is that "
        "the rotation by phi looks the same at every t; pair k stays 0 (the fastest pair); 28 frames "
        "(42 frames took 1.4 MB).",
        "explorer = UnitCircleExplorer(d_model=d_small)",
        _demo("UnitCircleExplorer"),
    ),
    "T5BucketExplorer": Grid(
        {"num_buckets": (8, 16, 32, 64), "max_distance": (40, 64, 128, 256), "bidirectional": (True, False)},
        "Bucket counts and maximum distances doubling across the sliders' ranges, encoder and decoder: 32 frames.",
        "explorer = T5BucketExplorer()",
        _demo("T5BucketExplorer"),
    ),
    "RopeDecayExplorer": Grid(
        {"head_dim": (16, 32, 64, 128, 256), "base": (10.0, 100.0, 1000.0, 10000.0, 100000.0, 1e6)},
        "Every head width of the dropdown and one base per decade of the slider: 30 frames.",
        "explorer = RopeDecayExplorer(head_dim=d_bound, max_distance=int(distances[-1]))",
        _demo("RopeDecayExplorer"),
    ),
    "AlibiExplorer": Grid(
        {"head": tuple(range(1, 13)), "seq_len": (32, 128, 512, 1024)},
        "Every head of the chapter's 12, from the steepest to the gentlest slope, at four lengths up to the "
        "slider's 1024; the head count stays 12 (a head slider that follows it cannot be a fixed grid); "
        "48 frames.",
        "explorer = AlibiExplorer(n_heads=12, seq_len=128)",
        _demo("AlibiExplorer"),
    ),
    "RopeScalingExplorer": Grid(
        {
            "method": ("linear", "ntk", "yarn"),
            "factor": (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 64.0),
        },
        "Every method and every stop of the scale slider (both controls are discrete): 36 frames.",
        "explorer = RopeScalingExplorer(head_dim=d_head, base=base, original_max_len=L)",
        _demo("RopeScalingExplorer"),
    ),
    "OffsetHeadExplorer": Grid(
        {"offset": (0, 1, 3, 6, 12), "d_model": (8, 16, 32, 64, 128), "temperature": (0.0625, 0.25, 1.0)},
        "Every width (the text asks for d = 8 at any temperature and d = 16 at 1), offsets from 0 to the "
        "slider's 12, at a sharp, the chapter's and a soft temperature; 75 frames of about 10 kB.",
        "explorer = OffsetHeadExplorer(design_length, long_length)",
        _demo("OffsetHeadExplorer"),
    ),
    "LengthExplorer": Grid(
        {"method": ("nope", "sinusoidal", "learned", "t5", "rope", "alibi"), "multiple": (1, 2, 4, 8, 16)},
        "Every method and every evaluation length (both controls are discrete): 30 frames.",
        'explorer = LengthExplorer(along, L, method="rope")',
        _train_short_test_long,
        reads=("measured.py", "data/train_short_test_long.json"),
    ),
    "RopeBaseExplorer": Grid(
        {
            "base": (10000.0, 50000.0, 150000.0, 500000.0, 1e6, 5e6, 1e7),
            "context": (2048, 4096, 8192, 32768, 131072, 1048576),
        },
        "Every stop of both selection sliders (the controls are discrete): 42 frames.",
        "explorer = RopeBaseExplorer(head_dim=d_head)",
        _demo("RopeBaseExplorer"),
    ),
    "RotaryFractionExplorer": Grid(
        {"fraction": (0.125, 0.25, 0.5, 0.75, 1.0), "style": ("partial", "proportional")},
        "Every fraction and both schemes (the controls are discrete): 10 frames.",
        "explorer = RotaryFractionExplorer(head_dim=128)",
        _demo("RotaryFractionExplorer"),
    ),
    "BugSymptomExplorer": Grid(
        {"bug": ("layout", "base", "bfloat16", "positions"), "position": (32, 256, 1024, 4096, 16384)},
        "Every bug and every query position (the controls are discrete): 20 frames.",
        "explorer = BugSymptomExplorer()",
        _demo("BugSymptomExplorer"),
    ),
}
