"""Chapter 05 explorer: one sine/cosine pair as a point turning on the unit circle."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from .._validation import require_even_width, require_positive_real
from ..plotting._style import OKABE_ITO
from ..plotting.ch05_rotation_proof import SHIFTED_COLOUR, START_COLOUR, arc_points, prepare_circle_axes
from ..sinusoidal import frequencies, shift_matrix, sinusoidal_encoding
from ._explorer import FigureExplorer

__all__ = ["UnitCircleExplorer"]


class UnitCircleExplorer(FigureExplorer):
    """Pair ``k`` of ``PE(t)`` on the unit circle, and its shift by ``phi`` tokens.

    Left: the point ``(sin(omega_k t), cos(omega_k t))`` (filled), the integer
    positions ``0 .. t`` it has passed (faint dots), and the point at
    ``t + phi`` (hollow) reached by turning through ``omega_k * phi`` radians
    (the arc). Right: the same two coordinates as waves against the position,
    with markers at ``t`` and ``t + phi``. The status line reports the angle
    and the largest difference between ``M(phi) @ PE(t)`` and ``PE(t + phi)``
    over all ``d_model`` dimensions, which stays at rounding level.

    Parameters
    ----------
    d_model : int, optional
        Width of the encoding, a positive even integer. Default 8 (pairs
        ``k = 0 .. 3`` with ``omega = 1, 0.1, 0.01, 0.001``).
    base : float, optional
        Base of the frequencies, ``> 0``. Default 10000.
    max_position : float, optional
        Upper end of the position slider, ``> 0``. Default 40.
    max_offset : float, optional
        The offset slider runs from ``-max_offset`` to ``max_offset``, ``> 0``.
        Default 10.

    Attributes
    ----------
    rotation_angle : float
        ``omega_k * phi`` for the current controls, in radians.
    shift_error : float
        ``max |M(phi) @ PE(t) - PE(t + phi)|`` for the current controls.

    Raises
    ------
    TypeError, ValueError
        If an argument is not of the allowed kind or range.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017, section 3.5.

    Examples
    --------
    >>> import numpy as np
    >>> explorer = UnitCircleExplorer()
    >>> explorer.set(k=1, phi=3.0)
    >>> bool(np.isclose(explorer.rotation_angle, 0.3)), explorer.shift_error < 1e-12
    (True, True)
    """

    def __init__(
        self,
        d_model: int = 8,
        *,
        base: float = 10000.0,
        max_position: float = 40.0,
        max_offset: float = 10.0,
    ) -> None:
        self.d_model = require_even_width(d_model, "d_model")
        self.base = require_positive_real(base, "base")
        self.max_position = require_positive_real(max_position, "max_position")
        self.max_offset = require_positive_real(max_offset, "max_offset")
        self.omegas = frequencies(self.d_model, base=self.base)
        self.rotation_angle = 0.0
        self.shift_error = 0.0
        controls = {
            "t": widgets.FloatSlider(
                value=3.0 if self.max_position >= 3.0 else 0.0,
                min=0.0,
                max=self.max_position,
                step=0.5,
                description="position t",
                readout_format=".1f",
                style={"description_width": "initial"},
            ),
            "k": widgets.IntSlider(
                value=0,
                min=0,
                max=self.d_model // 2 - 1,
                step=1,
                description="pair k",
                style={"description_width": "initial"},
            ),
            "phi": widgets.FloatSlider(
                value=min(2.0, self.max_offset),
                min=-self.max_offset,
                max=self.max_offset,
                step=0.5,
                description="offset φ",
                readout_format=".1f",
                style={"description_width": "initial"},
            ),
        }
        super().__init__(controls, figsize=(8.6, 3.5))

    @classmethod
    def demo(cls) -> tuple[UnitCircleExplorer, list[dict]]:
        """The chapter 05 set-up (``d_model = 8``) and a sweep of every control."""
        explorer = cls()
        changes = [{"t": float(t)} for t in np.linspace(0.0, 40.0, 9)]
        changes += [{"k": k} for k in (1, 2, 3, 0)]
        changes += [{"phi": float(p)} for p in (-10.0, -3.5, 0.0, 0.5, 4.0, 10.0)]
        return explorer, changes

    def _setup(self) -> None:
        fig = self.figure
        self.ax_circle = fig.add_axes((0.07, 0.15, 0.33, 0.75))
        self.ax_waves = fig.add_axes((0.52, 0.15, 0.45, 0.72))
        prepare_circle_axes(self.ax_circle)
        ax = self.ax_circle
        self.trail = ax.scatter([], [], s=10, color=START_COLOUR, alpha=0.3, linewidths=0, zorder=1)
        (self.arc,) = ax.plot([], [], color=SHIFTED_COLOUR, linewidth=1.8, zorder=2)
        (self.hand_shifted,) = ax.plot([], [], color=SHIFTED_COLOUR, linewidth=1.0, linestyle="--", zorder=2)
        (self.hand,) = ax.plot([], [], color=START_COLOUR, linewidth=1.6, zorder=3)
        (self.point_shifted,) = ax.plot(
            [],
            [],
            marker="o",
            markersize=9,
            markerfacecolor="white",
            markeredgecolor=SHIFTED_COLOUR,
            markeredgewidth=2.0,
            linestyle="none",
            zorder=4,
        )
        (self.point,) = ax.plot([], [], marker="o", markersize=7, color=START_COLOUR, linestyle="none", zorder=5)
        self.angle_text = ax.text(
            0.02, 0.02, "", ha="left", va="bottom", fontsize=9, color=SHIFTED_COLOUR, transform=ax.transAxes
        )
        # Titles as figure texts: a fixed position avoids re-laying out the axes titles on every draw.
        self.circle_title = fig.text(0.235, 0.95, "", ha="center", va="center", fontsize=11)

        lo = min(0.0, -self.max_offset)
        hi = self.max_position + self.max_offset
        self.grid = np.linspace(lo, hi, 600)
        waves = self.ax_waves
        (self.sin_line,) = waves.plot(
            self.grid, np.zeros_like(self.grid), color=OKABE_ITO[2], label=r"$\sin(\omega_k t)$"
        )
        (self.cos_line,) = waves.plot(
            self.grid, np.zeros_like(self.grid), color=OKABE_ITO[4], linestyle="--", label=r"$\cos(\omega_k t)$"
        )
        self.marker_t = waves.axvline(0.0, color=START_COLOUR, linewidth=1.2)
        self.marker_shifted = waves.axvline(0.0, color=SHIFTED_COLOUR, linewidth=1.2, linestyle="--")
        (self.dots_t,) = waves.plot([], [], marker="o", color=START_COLOUR, linestyle="none", markersize=6)
        (self.dots_shifted,) = waves.plot(
            [],
            [],
            marker="o",
            markerfacecolor="white",
            markeredgecolor=SHIFTED_COLOUR,
            markeredgewidth=1.8,
            linestyle="none",
            markersize=7,
        )
        waves.set_xlim(lo, hi)
        waves.set_ylim(-1.15, 1.35)
        waves.set_xlabel("position (tokens)")
        waves.set_ylabel("value")
        waves.axhline(0.0, color="0.85", linewidth=0.8, zorder=0)
        waves.legend(loc="upper right", ncol=2, fontsize=8)
        self.waves_title = fig.text(0.745, 0.95, "", ha="center", va="center", fontsize=11)

    def _dynamic_artists(self) -> tuple:
        # Everything the controls move; the circle, axes, ticks and legend stay (blitting).
        circle = (self.trail, self.arc, self.hand, self.hand_shifted, self.point, self.point_shifted)
        waves = (self.sin_line, self.cos_line, self.marker_t, self.marker_shifted, self.dots_t, self.dots_shifted)
        return (*circle, self.angle_text, self.circle_title, *waves, self.waves_title)

    def _update(self, t: float, k: int, phi: float) -> str:
        omega = float(self.omegas[k])
        start, stop = omega * t, omega * (t + phi)
        self.rotation_angle = omega * phi
        passed = omega * np.arange(0.0, np.floor(t) + 1.0)
        self.trail.set_offsets(np.column_stack([np.sin(passed), np.cos(passed)]))
        self.arc.set_data(*arc_points(start, stop, radius=0.82))
        self.hand.set_data([0.0, np.sin(start)], [0.0, np.cos(start)])
        self.hand_shifted.set_data([0.0, np.sin(stop)], [0.0, np.cos(stop)])
        self.point.set_data([np.sin(start)], [np.cos(start)])
        self.point_shifted.set_data([np.sin(stop)], [np.cos(stop)])
        self.angle_text.set_text(rf"turned by $\omega_k \varphi$ = {self.rotation_angle:.3f} rad")
        self.circle_title.set_text(rf"pair $k$ = {k}: $\omega_k$ = {omega:.4g} rad/token")

        self.sin_line.set_ydata(np.sin(omega * self.grid))
        self.cos_line.set_ydata(np.cos(omega * self.grid))
        self.marker_t.set_xdata([t, t])
        self.marker_shifted.set_xdata([t + phi, t + phi])
        self.dots_t.set_data([t, t], [np.sin(start), np.cos(start)])
        self.dots_shifted.set_data([t + phi, t + phi], [np.sin(stop), np.cos(stop)])
        self.waves_title.set_text(rf"the same pair against position: $t$ = {t:g}, $t + \varphi$ = {t + phi:g}")

        pe = sinusoidal_encoding([t, t + phi], self.d_model, base=self.base)
        moved = shift_matrix(phi, self.d_model, base=self.base) @ pe[0]
        self.shift_error = float(np.abs(moved - pe[1]).max())
        wavelength = 2.0 * np.pi / omega
        return (
            f"pair k = {k}: ω<sub>k</sub> = {omega:.4g} rad/token (wavelength {wavelength:.1f} tokens). "
            f"Turning PE(t) at t = {t:g} by ω<sub>k</sub> φ = {self.rotation_angle:.3f} rad gives "
            f"PE(t + φ) = PE({t + phi:g}); largest |M(φ) PE(t) − PE(t + φ)| over all "
            f"{self.d_model} dimensions: {self.shift_error:.1e}"
        )
