"""Figures about encodings made of sines only (chapter 03).

One sine ``sin(omega * t)`` is bounded but periodic: integer positions never
repeat exactly, yet some come very close to the value of another position,
either on the same slope of the wave (a near-repeat) or on the opposite slope
(a mirror image, ``sin(x) = sin(pi - x)``). The functions here draw that, the
unit-circle view that tells the two kinds apart, and the columns of a sine-only
table next to the straight lines their slow columns follow.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from .._validation import as_real_array, require_finite, require_positive_real, require_real
from ..collisions import collision_scan
from ._style import OKABE_ITO

__all__ = ["plot_collision_scan", "plot_phase_circle", "plot_sine_columns"]

#: Colours and markers of the two kinds of near-collision, shared with the explorer.
SAME_SLOPE_STYLE = {"color": OKABE_ITO[1], "marker": "o", "label": "same slope (near-repeat)"}
OPPOSITE_SLOPE_STYLE = {"color": OKABE_ITO[0], "marker": "s", "label": "opposite slope (mirror image)"}
#: Gaps below this are drawn at this value on the logarithmic axis (0 has no logarithm).
GAP_FLOOR = 1e-9


def plot_collision_scan(
    omega: float,
    n_positions: int,
    reference: int,
    threshold: float,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    legend: bool = True,
) -> Axes:
    """How close every integer position comes to the value of a reference position.

    Plots ``|sin(omega t) - sin(omega r)|`` against ``t`` on a logarithmic
    axis, with the threshold as a horizontal line. Positions below it are
    near-collisions, marked by kind: same slope as ``r`` (a near-repeat: the
    wave has come round to almost the same phase) or opposite slope (a mirror
    image, ``sin(x) = sin(pi - x)``). The number of each kind is written in
    the lower right corner.

    Parameters
    ----------
    omega : float
        Angular frequency in radians per token, ``> 0``.
    n_positions : int
        Positions ``0 .. n_positions-1`` are scanned, ``>= 2``.
    reference : int
        The reference position ``r``.
    threshold : float
        Near-collision threshold, ``> 0``.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title. Default: the frequency, reference and threshold.
    legend : bool, optional
        Draw a legend. Default True.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    TypeError, ValueError
        As for :func:`posenc_helpers.collision_scan`.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017,
       section 3.5 (the sinusoids whose single-sine version this shows).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> ax = plot_collision_scan(1.0, 800, 0, 1e-3)
    >>> ax.get_yscale(), ax.get_xlabel()
    ('log', 'position t (tokens)')
    >>> plt.close("all")
    """
    scan = collision_scan(omega, n_positions, reference, threshold)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.0, 2.8))
    positions, gaps = scan["positions"], np.maximum(scan["gaps"], GAP_FLOOR)
    others = np.ones(positions.shape, dtype=bool)
    others[reference] = False
    ax.scatter(positions[others], gaps[others], s=4, color="0.65", linewidths=0, label="other positions")
    for key, style in (("same", SAME_SLOPE_STYLE), ("opposite", OPPOSITE_SLOPE_STYLE)):
        hits = scan[key]
        ax.scatter(
            positions[hits],
            gaps[hits],
            s=28,
            color=style["color"],
            marker=style["marker"],
            edgecolors="black",
            linewidths=0.4,
            zorder=3,
            label=style["label"],
        )
    ax.axhline(threshold, color="black", linestyle="--", linewidth=0.9, label=f"threshold {threshold:g}")
    ax.axvline(reference, color=OKABE_ITO[2], linewidth=1.0, label=f"reference r = {reference}")
    ax.text(
        0.98,
        0.03,
        f"same slope: {scan['same'].size}, opposite slope: {scan['opposite'].size}",
        transform=ax.transAxes,
        ha="right",
        va="bottom",
        fontsize=8,
    )
    ax.set_yscale("log")
    ax.set_ylim(GAP_FLOOR / 2, 4.0)
    ax.set_xlim(-0.01 * n_positions, 1.01 * (n_positions - 1))
    ax.set_xlabel("position t (tokens)")
    ax.set_ylabel(r"$|\sin\omega t - \sin\omega r|$")
    ax.set_title(title if title is not None else f"ω = {omega:.4g} rad/token, r = {reference}, threshold {threshold:g}")
    if legend:
        ax.legend(loc="lower left", fontsize=7, bbox_to_anchor=(0.0, 0.1))
    return ax


def plot_phase_circle(
    positions: Sequence[float] | np.ndarray,
    omega: float = 1.0,
    *,
    highlight: Sequence[int] = (),
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Positions as points ``(cos(omega t), sin(omega t))`` on the unit circle.

    A sine column only records the height of each point. Two positions with
    the same height but opposite slope sit at mirror points left and right of
    the vertical axis; a cosine column (the horizontal coordinate) tells them
    apart.

    Parameters
    ----------
    positions : array_like
        1-D array of finite positions, in tokens.
    omega : float, optional
        Angular frequency in radians per token, ``> 0``. Default 1.
    highlight : sequence of int, optional
        Positions (values in ``positions``) to mark, label and join to the
        centre.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title. Default "positions on the unit circle".

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    TypeError, ValueError
        If ``positions`` is not a 1-D array of finite reals, ``omega`` is not
        ``> 0`` or a highlighted position is not in ``positions``.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> ax = plot_phase_circle(range(20), highlight=[10, 12])
    >>> sorted(t.get_text() for t in ax.texts)
    ['t = 10', 't = 12']
    >>> plt.close("all")
    """
    t = as_real_array(positions, "positions")
    if t.ndim != 1:
        raise ValueError(f"positions must be 1-D, got shape {t.shape}")
    t = t.astype(np.float64)
    require_finite(t, "positions")
    omega = require_positive_real(omega, "omega")
    marked = [require_real(h, "highlight") for h in highlight]
    missing = [h for h in marked if not np.any(t == h)]
    if missing:
        raise ValueError(f"highlight must list positions that are in positions; not found: {missing}")
    if ax is None:
        _, ax = plt.subplots(figsize=(3.2, 3.2))
    circle = np.linspace(0.0, 2.0 * np.pi, 241)
    ax.plot(np.cos(circle), np.sin(circle), color="0.8", linewidth=1.0)
    ax.axhline(0.0, color="0.85", linewidth=0.6)
    ax.axvline(0.0, color="0.85", linewidth=0.6)
    ax.scatter(np.cos(omega * t), np.sin(omega * t), s=10, color="0.55", zorder=2)
    for index, h in enumerate(marked):
        x, y = np.cos(omega * h), np.sin(omega * h)
        colour = OKABE_ITO[(index + 1) % len(OKABE_ITO)]
        ax.plot([0.0, x], [0.0, y], color=colour, linewidth=1.2)
        ax.scatter([x], [y], s=45, color=colour, edgecolors="black", linewidths=0.5, zorder=3)
        ax.text(1.22 * x, 1.22 * y, f"t = {h:g}", ha="center", va="center", fontsize=8, color="black")
    ax.set_aspect("equal")
    ax.set_xlim(-1.45, 1.45)
    ax.set_ylim(-1.3, 1.3)
    ax.set_xlabel(r"$\cos\omega t$ (a cosine column)")
    ax.set_ylabel(r"$\sin\omega t$ (the sine column)")
    ax.set_title(title if title is not None else "positions on the unit circle")
    return ax


def plot_sine_columns(
    table: np.ndarray,
    omegas: Sequence[float] | np.ndarray,
    *,
    axes: Sequence[Axes] | None = None,
    linear_guide: bool = True,
) -> list[Axes]:
    """One small panel per column of a sine-only table, against position.

    Column ``j`` is drawn as dots over the positions ``0 .. n-1``; with
    ``linear_guide`` the straight line ``omega_j t`` (the small-angle
    approximation ``sin x ~ x``) is drawn dashed, so the slow columns show
    themselves as scaled copies of the raw index.

    Parameters
    ----------
    table : numpy.ndarray
        Shape ``(n, d)``, row ``t`` for position ``t``, finite values.
    omegas : array_like
        The ``d`` angular frequencies of the columns, radians per token, ``> 0``.
    axes : sequence of matplotlib.axes.Axes, optional
        ``d`` axes to draw on; a new figure with ``d`` stacked panels is made
        if omitted.
    linear_guide : bool, optional
        Draw the line ``omega_j t``. Default True.

    Returns
    -------
    list of matplotlib.axes.Axes

    Raises
    ------
    TypeError, ValueError
        If ``table`` is not a finite 2-D real array, ``omegas`` does not hold
        one positive frequency per column or ``axes`` has the wrong length.

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib.pyplot as plt
    >>> omegas = np.array([1.0, 0.01])
    >>> table = np.sin(np.arange(50)[:, None] * omegas)
    >>> axes = plot_sine_columns(table, omegas)
    >>> len(axes), axes[-1].get_xlabel()
    (2, 'position t (tokens)')
    >>> plt.close("all")
    """
    values = as_real_array(table, "table").astype(np.float64)
    if values.ndim != 2 or values.shape[1] < 1:
        raise ValueError(f"table must be 2-D (positions x columns), got shape {values.shape}")
    require_finite(values, "table")
    rates = as_real_array(omegas, "omegas").astype(np.float64).ravel()
    n, d = values.shape
    if rates.shape != (d,):
        raise ValueError(f"omegas must hold one frequency per column ({d}), got {rates.shape[0]}")
    if not np.all(np.isfinite(rates) & (rates > 0)):
        raise ValueError("omegas must all be finite and > 0")
    if axes is None:
        fig, made = plt.subplots(d, 1, figsize=(6.5, 1.25 * d + 0.6), sharex=True, constrained_layout=True)
        axes = list(np.atleast_1d(made))
    else:
        axes = list(axes)
        if len(axes) != d:
            raise ValueError(f"axes must hold one Axes per column ({d}), got {len(axes)}")
    t = np.arange(n, dtype=np.float64)
    for j, (ax, omega) in enumerate(zip(axes, rates, strict=True)):
        ax.plot(t, values[:, j], "o", markersize=2.5, color=OKABE_ITO[j % 5])
        if linear_guide:
            guide = omega * t
            inside = np.abs(guide) <= 1.15
            ax.plot(t[inside], guide[inside], "--", color="0.3", linewidth=0.9)
        ax.axhline(0.0, color="0.85", linewidth=0.6, zorder=0)
        ax.set_ylim(-1.15, 1.15)
        ax.set_yticks([-1.0, 0.0, 1.0])
        ax.set_ylabel(f"col {j}")
        ax.set_title(
            f"column {j}: ω = {omega:.3g} rad/token, wavelength {2 * np.pi / omega:.4g} tokens", fontsize=9, loc="left"
        )
    axes[-1].set_xlabel("position t (tokens)")
    return axes
