"""Figures for the sinusoidal encoding (chapter 04): the table as a heatmap, the wavelengths."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from ._style import DIVERGING_CMAP, OKABE_ITO

__all__ = ["plot_encoding_heatmap", "plot_wavelengths"]


def plot_encoding_heatmap(
    table: np.ndarray,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    colorbar: bool = True,
    xlabel: str = "dimension i",
    ylabel: str = "position t (tokens)",
    limit: float = 1.0,
) -> Axes:
    """Heatmap of an encoding table: positions down, dimensions across.

    Values are drawn with the book's diverging colour-blind-safe colormap on
    the fixed range ``[-limit, limit]``, so zero is always the neutral colour
    and two heatmaps drawn with the same ``limit`` can be compared by eye.
    Position 0 is the top row.

    Parameters
    ----------
    table : array_like
        Shape ``(n_positions, n_dimensions)``, finite real values.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title.
    colorbar : bool, optional
        Add a colour bar next to the axes. Default True.
    xlabel, ylabel : str, optional
        Axis labels; the defaults suit an encoding table.
    limit : float, optional
        Half-width of the colour range, ``> 0``. Default 1 (the range of sine
        and cosine).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on; its first image is the heatmap.

    Raises
    ------
    TypeError
        If ``table`` does not hold real numbers.
    ValueError
        If ``table`` is not a finite 2-D array or ``limit`` is not ``> 0``.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017,
       section 3.5 (the encoding drawn here).
    .. [2] C. A. Brewer, ColorBrewer 2.0 (the ``RdBu`` diverging scheme).

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib.pyplot as plt
    >>> ax = plot_encoding_heatmap(np.zeros((5, 4)), title="zeros", colorbar=False)
    >>> ax.get_title(), ax.images[0].get_array().shape
    ('zeros', (5, 4))
    >>> ax.images[0].get_clim()
    (-1.0, 1.0)
    >>> plt.close("all")
    """
    try:
        array = np.asarray(table, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"table must be a 2-D array of real numbers, got {type(table).__name__}") from None
    if array.ndim != 2:
        raise ValueError(f"table must be 2-D (positions x dimensions), got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError("table must hold finite values only (no NaN or inf)")
    limit = float(limit)
    if not np.isfinite(limit) or limit <= 0:
        raise ValueError(f"limit must be a finite number > 0, got {limit!r}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6.0, 3.2), constrained_layout=True)
    image = ax.imshow(array, cmap=DIVERGING_CMAP, vmin=-limit, vmax=limit, aspect="auto", interpolation="nearest")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, label="value")
    return ax


def plot_wavelengths(
    curves: Mapping[str, np.ndarray],
    *,
    ax: Axes | None = None,
    title: str | None = None,
    references: Mapping[str, float] | None = None,
    legend_loc: str | None = "lower right",
) -> Axes:
    """Wavelength of each frequency pair against the pair index, on a log scale.

    A geometric progression ``lambda_k = lambda_0 * r**k`` is a straight line
    on these axes, with slope ``log r``.

    Parameters
    ----------
    curves : mapping of str to array_like
        Legend label to the wavelengths ``lambda_k`` (tokens) for
        ``k = 0, 1, ...``; each a 1-D array of positive finite numbers.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title.
    references : mapping of str to float, optional
        Horizontal reference lines (e.g. ``{"2 pi": 2 * np.pi}``), label to
        value in tokens, each ``> 0``.
    legend_loc : str or None, optional
        Where to put the legend (any matplotlib ``loc``); ``None`` draws no
        legend. Default ``"lower right"``, which is empty for rising curves.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    TypeError
        If a curve or a reference does not hold real numbers.
    ValueError
        If ``curves`` is empty, or a curve or reference is not positive and
        finite.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017,
       section 3.5 ("the wavelengths form a geometric progression").

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib.pyplot as plt
    >>> ax = plot_wavelengths({"d = 8": 2 * np.pi * 10.0 ** np.arange(4)},
    ...                       references={"2 pi": 2 * np.pi})
    >>> ax.get_yscale(), len(ax.lines), ax.get_legend() is not None
    ('log', 2, True)
    >>> plt.close("all")
    """
    if not curves:
        raise ValueError("curves must hold at least one curve (label -> wavelengths)")
    arrays = {}
    for label, values in curves.items():
        try:
            array = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"curves[{label!r}] must be an array of real numbers") from None
        if array.ndim != 1 or array.size == 0 or not np.all(np.isfinite(array)) or np.any(array <= 0):
            raise ValueError(f"curves[{label!r}] must be a non-empty 1-D array of positive finite wavelengths")
        arrays[label] = array
    references = dict(references or {})
    for label, value in references.items():
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"references[{label!r}] must be a number (tokens), got {type(value).__name__}")
        if not np.isfinite(value) or value <= 0:
            raise ValueError(f"references[{label!r}] must be a positive finite number, got {value!r}")
    if ax is None:
        _, ax = plt.subplots(figsize=(5.0, 3.2), constrained_layout=True)
    for index, (label, array) in enumerate(arrays.items()):
        ax.plot(
            np.arange(array.size),
            array,
            marker="o",
            markersize=2.5,
            linewidth=1.2,
            color=OKABE_ITO[index % len(OKABE_ITO)],
            label=label,
        )
    styles = ("--", ":", "-.")
    for index, (label, value) in enumerate(references.items()):
        ax.axhline(value, color="0.35", linewidth=0.9, linestyle=styles[index % len(styles)], label=label)
    ax.set_yscale("log")
    ax.set_xlabel("pair index k")
    ax.set_ylabel("wavelength $\\lambda_k$ (tokens)")
    if legend_loc is not None:
        ax.legend(loc=legend_loc, fontsize=8)
    if title:
        ax.set_title(title)
    return ax
