"""Figures for chapter 11: what trained models do at and past their training length.

These take plain numpy arrays (the lab's measurements), so they import neither JAX
nor the lab.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..binning import log_binned
from ._labels import edge_labels
from ._style import OKABE_ITO

__all__ = [
    "METHOD_STYLES",
    "log_binned",  # numerics (posenc_helpers.binning), exported here too because the chapter's figures use it
    "plot_length_curves",
    "plot_interval_curves",
    "plot_interval_panels",
    "plot_position_losses",
    "plot_pair_norms",
]

#: Colour, line style and marker of each lab method: told apart by colour and by shape.
METHOD_STYLES: dict[str, dict[str, Any]] = {
    "nope": {"color": "#555555", "linestyle": ":", "marker": "x"},
    "sinusoidal": {"color": OKABE_ITO[0], "linestyle": "-", "marker": "o"},
    "learned": {"color": OKABE_ITO[4], "linestyle": "--", "marker": "s"},
    "t5": {"color": OKABE_ITO[1], "linestyle": "-.", "marker": "^"},
    "rope": {"color": OKABE_ITO[3], "linestyle": "-", "marker": "D"},
    "alibi": {"color": OKABE_ITO[2], "linestyle": "--", "marker": "v"},
}
_LABELS = {
    "nope": "NoPE",
    "sinusoidal": "sinusoidal",
    "learned": "learned",
    "t5": "T5 bias",
    "rope": "RoPE",
    "alibi": "ALiBi",
}


def _style(name: str) -> dict[str, Any]:
    return METHOD_STYLES.get(name, {"color": "0.3", "linestyle": "-", "marker": "."})


def method_label(name: str) -> str:
    return _LABELS.get(name, name)


def _as_curve(values: object, name: str, size: int | None = None) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be an array of real numbers") from None
    if array.ndim != 1 or (size is not None and array.size != size):
        want = f"{size} values" if size is not None else "a 1-D array"
        raise ValueError(f"{name} must be {want}, got shape {array.shape}")
    return array


def plot_length_curves(
    curves: Mapping[tuple[str, int], np.ndarray],
    lengths: np.ndarray,
    train_len: int,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    legend_loc: str = "upper left",
) -> Axes:
    """Held-out loss against evaluation length, one line per (method, seed).

    Each method has its colour, line style and marker (:data:`METHOD_STYLES`);
    the first seed of a method is drawn solid and labelled, later seeds faint.
    The x axis is logarithmic, with the training length marked.

    Parameters
    ----------
    curves : mapping of (str, int) to array_like
        ``(method, seed)`` to losses (nats) at ``lengths``.
    lengths : array_like
        Evaluation lengths (tokens), increasing.
    train_len : int
        The training length, drawn as a vertical line.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title.
    legend_loc : str, optional
        Where the legend goes (any matplotlib ``loc``), default ``"upper left"``.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    TypeError, ValueError
        If a curve is not a 1-D array of ``len(lengths)`` numbers or ``curves`` is empty.

    Examples
    --------
    >>> import numpy as np
    >>> curves = {("alibi", 0): np.array([2.3, 2.3, 2.3]), ("sinusoidal", 0): np.array([2.3, 2.9, 3.0])}
    >>> ax = plot_length_curves(curves, np.array([64, 128, 256]), 64, title="test")
    >>> [line.get_label() for line in ax.lines if not line.get_label().startswith("_")]
    ['ALiBi', 'sinusoidal', 'training length']
    >>> plt.close("all")
    """
    lengths = _as_curve(lengths, "lengths")
    if not curves:
        raise ValueError("curves must hold at least one (method, seed) curve")
    if ax is None:
        _, ax = plt.subplots(figsize=(7.0, 4.0), constrained_layout=True)
    seen: set[str] = set()
    for (method, seed), values in curves.items():
        values = _as_curve(values, f"curves[{(method, seed)!r}]", lengths.size)
        first = method not in seen
        seen.add(method)
        ax.plot(
            lengths,
            values,
            **_style(method),
            alpha=1.0 if first else 0.45,
            linewidth=1.8 if first else 1.0,
            markersize=5 if first else 3,
            label=method_label(method) if first else f"_{method} seed {seed}",
        )
    ax.axvline(train_len, color="0.4", linewidth=1.0, linestyle=(0, (1, 2)), label="training length")
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, [f"{int(length)}" for length in lengths])
    ax.set_xlabel("evaluation length (tokens, log scale)")
    ax.set_ylabel("held-out loss (nats per byte)")
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8, loc=legend_loc, ncol=2)
    return ax


def plot_position_losses(
    losses: Mapping[str, np.ndarray],
    train_len: int,
    *,
    bins_per_octave: int = 4,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Loss at each position of long windows, one line per method, averaged in log-spaced bins.

    Parameters
    ----------
    losses : mapping of str to array_like
        Method to the mean loss (nats) at positions ``0 .. n - 1``.
    train_len : int
        The training length, drawn as a vertical line.
    bins_per_octave : int, optional
        Resolution of the averaging (:func:`~posenc_helpers.log_binned`), default 4.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    TypeError, ValueError
        If a curve is not a 1-D array of at least 2 numbers, ``losses`` is empty
        or ``bins_per_octave < 1``.

    Examples
    --------
    >>> import numpy as np
    >>> ax = plot_position_losses({"rope": np.linspace(2, 3, 256)}, 64, title="test")
    >>> len(ax.lines), ax.get_xscale()
    (2, 'log')
    >>> plt.close("all")
    """
    if not losses:
        raise ValueError("losses must hold at least one method")
    if ax is None:
        _, ax = plt.subplots(figsize=(7.0, 4.0), constrained_layout=True)
    longest = 2
    for method, values in losses.items():
        values = _as_curve(values, f"losses[{method!r}]")
        centres, means = log_binned(values, bins_per_octave)
        longest = max(longest, values.size)
        style = {key: value for key, value in _style(method).items() if key != "marker"}
        ax.plot(centres, means, **style, linewidth=1.6, label=method_label(method))
    ax.axvline(train_len, color="0.4", linewidth=1.0, linestyle=(0, (1, 2)), label="training length")
    log2_axis(ax, longest)
    ax.set_xlabel("position in the window (tokens, log scale)")
    ax.set_ylabel("loss (nats per byte)")
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8, loc="upper left", ncol=2)
    return ax


def log2_axis(ax: Axes, longest: int) -> None:
    """A log x axis from 1 to ``longest`` with ticks at the powers of two, written out."""
    ax.set_xscale("log", base=2)
    ticks = 2 ** np.arange(0, int(np.log2(longest)) + 1)
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.set_xlim(0.9, longest * 1.05)


def plot_pair_norms(
    norms: Mapping[str, np.ndarray],
    wavelengths: np.ndarray,
    train_len: int,
    *,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Mean norm of each RoPE pair against its wavelength, one line per series.

    Parameters
    ----------
    norms : mapping of str to array_like
        Label (e.g. ``"layer 2, keys"``) to one mean norm per pair.
    wavelengths : array_like
        Wavelength ``2 pi / theta_i`` of each pair (tokens), increasing.
    train_len : int
        The training length, drawn as a vertical line.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    TypeError, ValueError
        If a series is not a 1-D array with one number per pair, or ``norms`` is empty.

    Examples
    --------
    >>> import numpy as np
    >>> ax = plot_pair_norms({"keys": np.array([3.0, 2.0, 1.0])}, np.array([6.3, 63.0, 630.0]), 64, title="t")
    >>> ax.get_xscale()
    'log'
    >>> plt.close("all")
    """
    wavelengths = _as_curve(wavelengths, "wavelengths")
    if not norms:
        raise ValueError("norms must hold at least one series")
    if ax is None:
        _, ax = plt.subplots(figsize=(7.0, 4.0), constrained_layout=True)
    markers = ("o", "s", "^", "D", "v", "x")
    styles = ("-", "--", "-.", ":")
    for index, (label, values) in enumerate(norms.items()):
        values = _as_curve(values, f"norms[{label!r}]", wavelengths.size)
        ax.plot(
            wavelengths,
            values,
            color=OKABE_ITO[index % len(OKABE_ITO)],
            linestyle=styles[index % len(styles)],
            marker=markers[index % len(markers)],
            label=label,
        )
    ax.axvline(train_len, color="0.4", linewidth=1.0, linestyle=(0, (1, 2)), label="training length")
    ax.set_xscale("log")
    ax.set_xlabel("wavelength of the pair (tokens, log scale)")
    ax.set_ylabel("mean norm of the pair")
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8)
    return ax


def plot_interval_curves(
    means: Mapping[str, np.ndarray],
    halves: Mapping[str, np.ndarray],
    x: np.ndarray,
    *,
    train_len: int | None = None,
    references: Mapping[str, float] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    xlabel: str = "evaluation length (tokens, log scale)",
    ylabel: str = "held-out loss (nats per byte)",
    legend_loc: str = "upper left",
) -> Axes:
    """Mean over seeds with its 95 % interval as error bars, one line per method, on a log2 x axis.

    Parameters
    ----------
    means, halves : mapping of str to array_like
        Method to the mean at each ``x``, and to the half-width of its interval, or
        to its extent below and above the mean, ``(2, len(x))``, for an interval that
        is not symmetric (an accuracy clipped at 1).
    x : array_like
        Positions on the x axis (lengths or budgets), increasing.
    train_len : int, optional
        Drawn as a dotted vertical line when given.
    references : mapping of str to float, optional
        Horizontal reference lines (baselines, chance), labelled at the right edge.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title, xlabel, ylabel : str, optional
        Texts of the axes.
    legend_loc : str, optional
        Where the legend goes, default ``"upper left"``.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    TypeError, ValueError
        If ``means`` is empty, a method has no half-widths, or a series does not
        have one number per ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> ax = plot_interval_curves({"alibi": [2.0, 2.0]}, {"alibi": [0.1, 0.1]}, np.array([64, 128]),
    ...                           train_len=64, references={"4-gram": 1.7})
    >>> [line.get_label() for line in ax.lines if not line.get_label().startswith("_")]
    ['training length']
    >>> sorted(text.get_text() for text in ax.texts)
    ['4-gram']
    >>> plt.close("all")
    """
    x = _as_curve(x, "x")
    if not means:
        raise ValueError("means must hold at least one method")
    if ax is None:
        _, ax = plt.subplots(figsize=(7.0, 4.0), constrained_layout=True)
    for method, values in means.items():
        if method not in halves:
            raise ValueError(f"halves must hold a half-width for every method of means, missing {method!r}")
        values = _as_curve(values, f"means[{method!r}]", x.size)
        half = np.asarray(halves[method], dtype=float)
        if half.ndim == 2:
            if half.shape != (2, x.size) or not np.isfinite(half).all() or (half < 0).any():
                raise ValueError(f"halves[{method!r}] must be {x.size} half-widths, or (2, {x.size}) extents >= 0")
        else:
            half = _as_curve(half, f"halves[{method!r}]", x.size)
        style = _style(method)
        ax.errorbar(
            x, values, yerr=half, color=style["color"], linestyle=style["linestyle"], marker=style["marker"],
            markersize=5, capsize=3, linewidth=1.6, label=method_label(method),
        )  # fmt: skip
    for value in (references or {}).values():
        ax.axhline(value, color="0.55", linewidth=0.9, linestyle=(0, (4, 3)))
    edge_labels(ax, references or {})  # placed when drawn: two close lines never share a label's place
    if train_len is not None:
        ax.axvline(train_len, color="0.4", linewidth=1.0, linestyle=(0, (1, 2)), label="training length")
    ax.set_xscale("log", base=2)
    ax.set_xticks(x, [f"{int(v)}" for v in x])
    ax.set_xlim(x[0] / 2**0.3, x[-1] * 2**0.3)  # a little room beside the first and last points, no more
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8, loc=legend_loc, ncol=2)
    return ax


def plot_interval_panels(
    panels: Sequence[Mapping[str, Any]],
    x: np.ndarray,
    *,
    train_len: int | None = None,
    title: str | None = None,
    xlabel: str = "evaluation length (tokens, log scale)",
    ylabel: str = "fraction answered",
    ylim: tuple[float, float] | None = None,
    width: float = 4.4,
    panel_height: float = 2.2,
    dpi: float = 90,
) -> Figure:
    """:func:`plot_interval_curves` panels one above the other, sharing x, with one legend below them.

    One panel per row keeps each panel as wide as a phone's screen when the figure is
    shrunk to fit one (about 340 CSS px), and the legend below the panels covers no data.
    Reference lines are labelled at the right edge of their panel, placed when drawn so
    that no two labels overlap.

    Parameters
    ----------
    panels : sequence of mapping
        One per row, top first: ``"means"`` and ``"halves"`` as for
        :func:`plot_interval_curves`, and optionally ``"title"`` (str) and
        ``"references"`` (mapping of label to height).
    x : array_like
        Positions on the shared x axis, increasing.
    train_len : int, optional
        Drawn as a dotted vertical line in every panel when given.
    title : str, optional
        The figure's title, above the panels (each panel's own is its ``"title"``).
    xlabel, ylabel : str, optional
        Texts of the axes (the x label under the bottom panel only).
    ylim : (float, float), optional
        Limits of every panel's y axis.
    width, panel_height : float, optional
        The figure's width and each panel's height, in inches (4.4 and 2.2).
    dpi : float, optional
        Pixels per inch, default 90 (the book's other figures: 100): the same layout in
        fewer pixels, drawn about 400 px wide, so that a phone shrinks it less (its text at
        about 10 px in a 342 px column) and three such figures weigh what one 2 x 3 grid
        did (chapter 11 is the site's heaviest page, with a budget of 700 KB).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    TypeError, ValueError
        If ``panels`` is empty, a panel is not a mapping with ``"means"`` and
        ``"halves"``, or a series does not fit ``x`` (as :func:`plot_interval_curves`).

    Examples
    --------
    >>> import numpy as np
    >>> panel = {"means": {"alibi": [1.0, 0.5]}, "halves": {"alibi": [0.1, 0.1]}, "references": {"guessing": 0.03}}
    >>> panels = [dict(panel, title="far"), dict(panel, title="near")]
    >>> fig = plot_interval_panels(panels, np.array([64, 128]), title="after the marker")
    >>> fig.get_suptitle(), [ax.get_title() for ax in fig.axes], len(fig.legends)
    ('after the marker', ['far', 'near'], 1)
    >>> plt.close(fig)
    """
    if isinstance(panels, Mapping) or not isinstance(panels, Sequence) or not panels:
        raise ValueError("panels must be a non-empty sequence of mappings, one per row")
    for index, panel in enumerate(panels):
        if not isinstance(panel, Mapping) or "means" not in panel or "halves" not in panel:
            raise TypeError(f"panels[{index}] must be a mapping with 'means' and 'halves'")
    fig, axes = plt.subplots(
        len(panels), 1, figsize=(width, panel_height * len(panels) + 0.9), sharex=True, squeeze=False,
        layout="constrained", dpi=dpi,
    )  # fmt: skip
    for index, (ax, panel) in enumerate(zip(axes[:, 0], panels, strict=True)):
        plot_interval_curves(
            panel["means"], panel["halves"], x, train_len=train_len, references=panel.get("references"), ax=ax,
            title=panel.get("title"), ylabel=ylabel, xlabel=xlabel if index == len(panels) - 1 else "",
        )  # fmt: skip
        ax.get_legend().remove()
        if ylim is not None:
            ax.set_ylim(*ylim)
    if title:
        fig.suptitle(title)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=min(3, len(labels)), fontsize=9)
    return fig
