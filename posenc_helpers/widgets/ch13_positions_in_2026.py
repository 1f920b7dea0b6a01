"""Chapter 13 explorer: positions in 2026 models (a scaffold to replace)."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import numpy as np

from ..plotting._style import OKABE_ITO
from ._explorer import FigureExplorer

__all__ = ["RotaryFractionExplorer"]


class RotaryFractionExplorer(FigureExplorer):
    """The positions ``0 .. n - 1`` for a length ``n`` set by a slider (a scaffold).

    TODO(author): the chapter's key parameter as a control, and what the figure
    and the status line show for it.

    Parameters
    ----------
    max_positions : int, optional
        Upper end of the length slider. Default 64.

    Examples
    --------
    >>> explorer = RotaryFractionExplorer()
    >>> explorer.set(n_positions=10)
    >>> explorer.status.value
    'last position: 9'
    """

    def __init__(self, *, max_positions: int = 64) -> None:
        self._max_positions = max_positions
        controls = {
            "n_positions": widgets.IntSlider(
                value=16, min=1, max=max_positions, description="length n", continuous_update=True
            )
        }
        super().__init__(controls, figsize=(6.0, 3.0))

    def _setup(self) -> None:
        self._ax = self.figure.add_subplot()
        (self._line,) = self._ax.plot([], [], color=OKABE_ITO[0], marker="o", markersize=3)
        self._ax.set_xlim(-1, self._max_positions)
        self._ax.set_ylim(-1, self._max_positions)
        self._ax.set_xlabel("position t (tokens)")
        self._ax.set_ylabel("value")
        self._ax.set_title("Positions of a sequence")
        self.figure.set_layout_engine("constrained")

    def _update(self, **values: Any) -> str:
        n = int(values["n_positions"])
        self._line.set_data(np.arange(n), np.arange(n))
        return f"last position: {n - 1}"

    @classmethod
    def demo(cls) -> tuple[RotaryFractionExplorer, list[dict[str, Any]]]:
        """An explorer at the chapter's default size and control changes to replay."""
        return cls(), [{"n_positions": n} for n in (1, 8, 32, 64)]
