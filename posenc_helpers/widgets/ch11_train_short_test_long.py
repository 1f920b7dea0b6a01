"""Chapter 11 explorer: a trained model's loss along a window, for any evaluation length."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ipywidgets as widgets
import numpy as np

from .._validation import require_count
from ..binning import log_binned
from ..plotting.ch11_train_short_test_long import METHOD_STYLES, log2_axis, method_label
from ._explorer import FigureExplorer

__all__ = ["LengthExplorer"]

#: Evaluation lengths offered, as multiples of the training length.
MULTIPLES = (1, 2, 4, 8, 16)


class LengthExplorer(FigureExplorer):
    """Per-position held-out loss of trained models, cut at a chosen evaluation length.

    A causal model's loss at position ``t`` depends only on the tokens up to
    ``t``, so one long evaluation gives the loss at every position of every
    shorter window. The explorer shows, for the chosen method, the loss at each
    position up to the chosen length ``L'`` (the other methods faint), shades the
    last ``train_len`` positions (what :func:`~posenc_helpers.lab.length_curve`
    scores) and reports their mean against the same at ``L' = train_len``.

    Parameters
    ----------
    losses : mapping of str to array_like
        Method (``"nope"``, ``"sinusoidal"``, ...) to the mean loss at positions
        ``0 .. n - 1`` of long held-out windows (``position_losses``), all of
        the same length ``n >= 16 * train_len``.
    train_len : int
        The training length, ``>= 16``.
    method : str, optional
        The method shown first; default the first key of ``losses``.

    Raises
    ------
    TypeError, ValueError
        If ``losses`` is empty or its curves are not 1-D, of one length, finite and
        at least ``16 * train_len`` long, or ``method`` is not one of its keys.

    Examples
    --------
    >>> import numpy as np
    >>> curves = {"alibi": np.full(1024, 2.3), "sinusoidal": np.r_[np.full(64, 2.3), np.full(960, 3.0)]}
    >>> explorer = LengthExplorer(curves, 64)
    >>> explorer.set(method="sinusoidal", multiple=4)
    >>> print(explorer.status.value)
    sinusoidal at L' = 256 (4 x the training length): mean loss over the last 64 positions 3.00 nats, against 2.30 at L' = 64 (+0.70)
    """

    def __init__(self, losses: Mapping[str, object], train_len: int, method: str | None = None) -> None:
        self.train_len = require_count(train_len, "train_len", minimum=16)
        if not isinstance(losses, Mapping) or not losses:
            raise TypeError("losses must be a non-empty mapping of method name to per-position losses")
        curves = {}
        for name, values in losses.items():
            array = np.asarray(values, dtype=float)
            if array.ndim != 1 or not np.all(np.isfinite(array)):
                raise ValueError(f"losses[{name!r}] must be a 1-D array of finite numbers")
            curves[str(name)] = array
        sizes = {array.size for array in curves.values()}
        if len(sizes) != 1 or sizes.pop() < MULTIPLES[-1] * self.train_len:
            raise ValueError(
                f"every curve in losses must have the same length, at least "
                f"{MULTIPLES[-1]} * train_len = {MULTIPLES[-1] * self.train_len}"
            )
        self.losses = curves
        method = next(iter(curves)) if method is None else method
        if method not in curves:
            raise ValueError(f"method must be one of {tuple(curves)}, got {method!r}")
        controls = {
            "method": widgets.ToggleButtons(
                options=[(method_label(m), m) for m in curves], value=method, description="method"
            ),
            "multiple": widgets.SelectionSlider(
                options=[(f"{m} x", m) for m in MULTIPLES], value=4, description="length L'", continuous_update=True
            ),
        }
        super().__init__(controls, figsize=(9.0, 3.6))

    @classmethod
    def demo(cls) -> tuple[LengthExplorer, list[dict]]:
        """Synthetic curves of the chapter's shape (64-token training, six methods) and every control."""
        position = np.arange(1024)
        past = np.clip((position - 63) / 64, 0, 1)
        shapes = {
            "nope": 0.15 * past,
            "sinusoidal": 0.7 * past,
            "learned": 0.3 * past,
            "t5": 0.5 * np.log2(1 + position / 64) / 4,
            "rope": 0.9 * np.clip((position - 127) / 128, 0, 1),
            "alibi": 0 * past,
        }
        explorer = cls({name: 2.3 + shape for name, shape in shapes.items()}, 64)
        changes: list[dict[str, Any]] = [{"method": name} for name in shapes] + [{"multiple": m} for m in MULTIPLES]
        changes += [{"method": "rope", "multiple": 16}, {"multiple": 2}]
        return explorer, changes

    def _setup(self) -> None:
        ax = self.ax = self.figure.add_axes((0.08, 0.16, 0.62, 0.72))
        longest = MULTIPLES[-1] * self.train_len
        for values in self.losses.values():
            ax.plot(*log_binned(values[:longest]), color="0.78", linewidth=1.0)
        (self.line,) = ax.plot([], [], linewidth=2.2)
        self.shade = ax.axvspan(1, 2, color="0.85", alpha=0.6, zorder=0)
        self.cut = ax.axvline(1, color="0.2", linewidth=1.0)
        ax.axvline(self.train_len, color="0.4", linewidth=1.0, linestyle=(0, (1, 2)))
        log2_axis(ax, longest)
        every = np.concatenate([log_binned(values[:longest])[1] for values in self.losses.values()])
        ax.set_ylim(every.min() - 0.1, every.max() + 0.1)
        ax.set_xlabel("position in the window (tokens, log scale)")
        ax.set_ylabel("loss (nats per byte)")
        ax.set_title("Held-out loss along the window")
        self.legend_ax = self.figure.add_axes((0.73, 0.16, 0.26, 0.72))
        self.legend_ax.axis("off")
        self.legend_text = self.legend_ax.text(0.0, 0.95, "", va="top", fontsize=9, family="monospace")

    def _dynamic_artists(self):
        return [self.shade, self.line, self.cut, self.legend_text]

    def _update(self, *, method: str, multiple: int) -> str:
        length = multiple * self.train_len
        values = self.losses[method]
        self.line.set_data(*log_binned(values[:length]))
        style = METHOD_STYLES.get(method, {"color": "0.2", "linestyle": "-"})
        self.line.set_color(style["color"])
        self.line.set_linestyle(style["linestyle"])
        self.shade.set_x(length - self.train_len)
        self.shade.set_width(self.train_len)
        self.cut.set_xdata([length, length])
        rows = [
            f"{method_label(name):<10} {curve[length - self.train_len : length].mean():.2f}"
            for name, curve in self.losses.items()
        ]
        self.legend_text.set_text(f"last {self.train_len} of L' = {length}\n" + "\n".join(rows))
        scored = values[length - self.train_len : length].mean()
        reference = values[: self.train_len].mean()
        return (
            f"{method_label(method)} at L' = {length} ({multiple} x the training length): mean loss over the last "
            f"{self.train_len} positions {scored:.2f} nats, against {reference:.2f} at L' = {self.train_len} "
            f"({scored - reference:+.2f})"
        )
