"""Chapter 03 explorer: which integer positions nearly collide under one sine column."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.ticker import FixedLocator, MaxNLocator, NullLocator

from .._validation import require_count, require_positive_real
from ..collisions import collision_scan
from ..plotting._style import OKABE_ITO
from ..plotting.ch03_sine_only import GAP_FLOOR, OPPOSITE_SLOPE_STYLE, SAME_SLOPE_STYLE
from ._explorer import FigureExplorer

__all__ = ["SineCollisionExplorer"]

_SHOWN = 8  # positions listed per kind in the status line


def _marker_line(ax: Any, style: dict[str, str], label: str | None = None) -> Any:
    (line,) = ax.plot(
        [],
        [],
        linestyle="none",
        marker=style["marker"],
        markersize=5,
        color=style["color"],
        markeredgecolor="black",
        markeredgewidth=0.4,
        zorder=3,
        label=label,
    )
    return line


def _listing(hits: np.ndarray) -> str:
    if hits.size == 0:
        return "none"
    listed = ", ".join(str(int(h)) for h in hits[:_SHOWN])
    return listed + (f", ... ({hits.size - _SHOWN} more)" if hits.size > _SHOWN else "")


class SineCollisionExplorer(FigureExplorer):
    """Near-collisions of integer positions under one sine column ``sin(omega t)``.

    Pick a column of the sine-only table (its frequency ``omega``), a reference
    position ``r`` and a threshold. The left panel shows, for every position
    ``t``, how close ``sin(omega t)`` comes to ``sin(omega r)``; positions
    below the threshold are marked by kind: the same slope as ``r`` (a
    near-repeat, or a crowded neighbour for slow columns) or the opposite slope
    (a mirror image, ``sin(x) = sin(pi - x)``). The right panel puts the same
    positions on the unit circle, where a cosine column would tell the mirror
    images apart.

    Parameters
    ----------
    n_positions : int, optional
        Positions ``0 .. n_positions-1`` are scanned, ``2 .. 5000``. Default 1000.
    d_model : int, optional
        Number of columns of the sine-only table offered, ``>= 1``. Default 5
        (the chapter's 100 x 5 study).
    base : float, optional
        Base of the frequency progression, ``> 0``. Default 10000.

    Raises
    ------
    TypeError, ValueError
        If an argument is not of the kind or in the range above.

    Examples
    --------
    >>> explorer = SineCollisionExplorer(n_positions=800)
    >>> explorer.set(threshold=1e-3)
    >>> "Same slope: 710." in explorer.status.value
    True
    >>> "Opposite slope: 355." in explorer.status.value
    True
    """

    def __init__(self, n_positions: int = 1000, *, d_model: int = 5, base: float = 10000.0) -> None:
        self.n_positions = require_count(n_positions, "n_positions", minimum=2)
        if self.n_positions > 5000:
            raise ValueError(f"n_positions must be at most 5000 (to stay interactive), got {self.n_positions}")
        d_model = require_count(d_model, "d_model", minimum=1)
        base = require_positive_real(base, "base")
        omegas = base ** (-np.arange(d_model, dtype=np.float64) / d_model)
        options = [(f"column {j}: ω = {w:.3g}", float(w)) for j, w in enumerate(omegas)]
        controls = {
            "omega": widgets.Dropdown(options=options, value=options[0][1], description="frequency"),
            "reference": widgets.IntSlider(
                value=0,
                min=0,
                max=self.n_positions - 1,
                step=1,
                description="reference r",
                style={"description_width": "initial"},
                continuous_update=False,
            ),
            "threshold": widgets.FloatLogSlider(
                value=1e-2,
                base=10,
                min=-5,
                max=-1,
                step=0.25,
                description="threshold",
                readout_format=".0e",
                continuous_update=False,
            ),
        }
        super().__init__(controls, figsize=(9.0, 3.3))

    @classmethod
    def demo(cls) -> tuple[SineCollisionExplorer, list[dict[str, Any]]]:
        """The chapter 03 set-up (1000 positions, the five columns) and changes to replay."""
        explorer = cls()
        changes: list[dict[str, Any]] = [{"threshold": float(v)} for v in (1e-1, 1e-3, 1e-4, 1e-5, 1e-2)]
        changes += [{"reference": r} for r in (11, 22, 100, 500, 999, 0)]
        changes += [{"omega": value} for _, value in explorer.controls["omega"].options]
        return explorer, changes

    def _setup(self) -> None:
        n = self.n_positions
        t = np.arange(n, dtype=np.float64)
        self.ax_scan = self.figure.add_axes((0.075, 0.16, 0.56, 0.72))
        self.ax_circle = self.figure.add_axes((0.70, 0.16, 0.28, 0.72))
        ax = self.ax_scan
        (self.scan_all,) = ax.plot(t, np.ones(n), ".", markersize=2, color="0.65")
        self.scan_same = _marker_line(ax, SAME_SLOPE_STYLE, label=SAME_SLOPE_STYLE["label"])
        self.scan_opposite = _marker_line(ax, OPPOSITE_SLOPE_STYLE, label=OPPOSITE_SLOPE_STYLE["label"])
        self.threshold_line = ax.axhline(1e-2, color="black", linestyle="--", linewidth=0.9, label="threshold")
        self.reference_line = ax.axvline(0.0, color=OKABE_ITO[2], linewidth=1.0, label="reference r")
        ax.set_yscale("log")
        ax.set_ylim(GAP_FLOOR / 2, 4.0)
        # Fixed ticks: recomputing log tick locations on every redraw would dominate the update time.
        ax.yaxis.set_major_locator(FixedLocator([1e-8, 1e-6, 1e-4, 1e-2, 1.0]))
        ax.yaxis.set_minor_locator(NullLocator())
        ax.set_xlim(-0.01 * n, 1.01 * (n - 1))
        ax.xaxis.set_major_locator(FixedLocator(MaxNLocator(6, integer=True).tick_values(0, n - 1)))
        ax.set_xlabel("position t (tokens)")
        ax.set_ylabel(r"$|\sin\omega t - \sin\omega r|$")
        ax.set_title("how close each position comes to the reference")
        ax.legend(loc="lower right", fontsize=7, ncol=2)

        circle = np.linspace(0.0, 2.0 * np.pi, 241)
        cx = self.ax_circle
        cx.plot(np.cos(circle), np.sin(circle), color="0.8", linewidth=1.0)
        cx.axhline(0.0, color="0.85", linewidth=0.6)
        cx.axvline(0.0, color="0.85", linewidth=0.6)
        (self.circle_all,) = cx.plot(np.ones(n), np.zeros(n), ".", markersize=2, color="0.65")
        self.circle_same = _marker_line(cx, SAME_SLOPE_STYLE)
        self.circle_opposite = _marker_line(cx, OPPOSITE_SLOPE_STYLE)
        (self.circle_reference,) = cx.plot(
            [0.0, 1.0], [0.0, 0.0], color=OKABE_ITO[2], linewidth=1.5, zorder=4, marker="D", markevery=[1], markersize=5
        )
        self.height_line = cx.axhline(0.0, color="black", linestyle=":", linewidth=0.8)
        cx.set_aspect("equal")
        cx.set_xlim(-1.3, 1.3)
        cx.set_ylim(-1.3, 1.3)
        cx.xaxis.set_major_locator(FixedLocator([-1.0, 0.0, 1.0]))
        cx.yaxis.set_major_locator(FixedLocator([-1.0, 0.0, 1.0]))
        cx.set_xlabel(r"$\cos\omega t$")
        cx.set_ylabel(r"$\sin\omega t$")
        cx.set_title("on the unit circle")

    def _dynamic_artists(self) -> tuple:
        # Everything the controls move (the axes limits are fixed): blitting, see FigureExplorer.
        scan = (self.scan_all, self.scan_same, self.scan_opposite, self.threshold_line, self.reference_line)
        circle = (self.circle_all, self.circle_same, self.circle_opposite, self.circle_reference, self.height_line)
        return (*scan, *circle)

    def _update(self, omega: float, reference: int, threshold: float) -> str:
        scan = collision_scan(omega, self.n_positions, reference, threshold)
        t, gaps = scan["positions"], np.maximum(scan["gaps"], GAP_FLOOR)
        same, opposite = scan["same"], scan["opposite"]
        self.scan_all.set_ydata(gaps)
        self.scan_same.set_data(t[same], gaps[same])
        self.scan_opposite.set_data(t[opposite], gaps[opposite])
        self.threshold_line.set_ydata([threshold, threshold])
        self.reference_line.set_xdata([reference, reference])

        angles = omega * t
        points = np.column_stack([np.cos(angles), np.sin(angles)])
        self.circle_all.set_data(points[:, 0], points[:, 1])
        self.circle_same.set_data(points[same, 0], points[same, 1])
        self.circle_opposite.set_data(points[opposite, 0], points[opposite, 1])
        self.circle_reference.set_data([0.0, points[reference, 0]], [0.0, points[reference, 1]])
        self.height_line.set_ydata([points[reference, 1]] * 2)

        total = same.size + opposite.size
        return (
            f"ω = {omega:.4g} rad/token (wavelength {2 * np.pi / omega:.4g} tokens), reference r = {reference}: "
            f"<b>{total}</b> of the other {self.n_positions - 1} positions within {threshold:.1e} of "
            f"sin(ω r). Same slope: {_listing(same)}. Opposite slope: {_listing(opposite)}."
        )
