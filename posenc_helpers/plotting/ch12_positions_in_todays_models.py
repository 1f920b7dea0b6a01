"""Figures for chapter 12: a production model's per-pair wavelengths against its contexts."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from ..configs import PositionReport
from ._style import OKABE_ITO

__all__ = ["plot_report_wavelengths"]


def plot_report_wavelengths(report: PositionReport, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Wavelength of every pair, before and after rescaling, against the anchor length and the longest context.

    Pairs whose wavelength lies below a context line turn at least once within
    it; pairs above it never complete a turn there. Rescaling moves the slow
    pairs up. The anchor length is the one the rescaling formula is anchored to
    (``original_max_position_embeddings``), drawn where the config states one;
    it is not necessarily the length the model was trained on.

    Parameters
    ----------
    report : PositionReport
        What :func:`~posenc_helpers.describe` returned for a config.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title; default the model's name.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    TypeError
        If ``report`` is not a :class:`~posenc_helpers.PositionReport`.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from posenc_helpers.configs import describe, shipped_configs
    >>> report = describe(shipped_configs()["llama-3.1-8b"]["config"], name="Llama 3.1 8B")
    >>> ax = plot_report_wavelengths(report)
    >>> ax.get_yscale(), len(ax.lines[0].get_ydata())
    ('log', 64)
    >>> plt.close("all")
    """
    if not isinstance(report, PositionReport):
        raise TypeError(
            f"report must be a PositionReport (from posenc_helpers.configs.describe), got {type(report).__name__}"
        )
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 3.4), constrained_layout=True)
    pairs = np.arange(report.rotary_dim // 2)
    original = 2.0 * np.pi / report.original_inv_freq
    ax.plot(pairs, original, color=OKABE_ITO[0], linestyle="--", linewidth=1.2, label="before rescaling")
    if report.method != "default":
        ax.plot(
            pairs,
            report.wavelengths,
            color=OKABE_ITO[1],
            marker="o",
            markersize=2.5,
            linewidth=1.2,
            label=f"{report.method} (factor {report.factor:g})",
        )
    if report.anchor_context is not None and report.anchor_context != report.extended_context:
        ax.axhline(report.anchor_context, color="0.35", linestyle=":", linewidth=1.0, label="anchor length L")
    ax.axhline(report.extended_context, color="0.2", linestyle="-.", linewidth=1.0, label="longest context")
    ax.set_yscale("log")
    ax.set_xlabel("pair index i")
    ax.set_ylabel("wavelength $2\\pi / \\theta_i$ (tokens)")
    ax.set_title(report.name if title is None else title)
    ax.legend(loc="upper left", fontsize=8)
    return ax
