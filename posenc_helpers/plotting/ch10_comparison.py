"""Figures for chapter 10: the scored checklist as a grid, and attention maps of hand-built heads."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.image import AxesImage
from matplotlib.patches import Patch

from ..checklist import CHECKLIST
from ._style import OKABE_ITO, SEQUENTIAL_CMAP

__all__ = ["PASS_COLOUR", "FAIL_COLOUR", "NA_COLOUR", "plot_checklist_grid", "plot_head_weights"]

#: Cell colours of the checklist grid (Okabe-Ito blue and orange, light grey).
PASS_COLOUR = OKABE_ITO[0]
FAIL_COLOUR = OKABE_ITO[1]
NA_COLOUR = "#DDDDDD"


def plot_checklist_grid(
    grid: np.ndarray,
    methods: Sequence[str],
    *,
    criteria: Sequence[str] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """The scored checklist as a grid of coloured cells, each also marked in words.

    Passed cells are blue and read ``yes``, failed cells orange and read
    ``no``, criteria that do not apply grey and read ``n/a``: the words carry
    the result, so the figure does not rely on colour.

    Parameters
    ----------
    grid : numpy.ndarray
        Shape ``(criteria, methods)`` holding 1 (passed), 0 (failed) or NaN
        (not applicable), as from :func:`~posenc_helpers.checklist_grid`.
    methods : sequence of str
        Column labels, one per method.
    criteria : sequence of str, optional
        Row labels; default the names of :data:`~posenc_helpers.CHECKLIST`.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ValueError
        If ``grid`` is not 2-D, holds values other than 0, 1 and NaN, or the
        labels do not match its shape.

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib.pyplot as plt
    >>> grid = np.array([[1.0, 0.0], [np.nan, 1.0]])
    >>> ax = plot_checklist_grid(grid, ["a", "b"], criteria=["first", "second"], title="demo")
    >>> [t.get_text() for t in ax.texts]
    ['yes', 'no', 'n/a', 'yes']
    >>> plt.close("all")
    """
    values = np.asarray(grid, dtype=float)
    if values.ndim != 2:
        raise ValueError(f"grid must be 2-D (criteria x methods), got shape {values.shape}")
    known = np.isnan(values) | (values == 0.0) | (values == 1.0)
    if not known.all():
        raise ValueError("grid must hold only 1 (passed), 0 (failed) and NaN (not applicable)")
    labels = [c.name for c in CHECKLIST] if criteria is None else list(criteria)
    if len(labels) != values.shape[0]:
        raise ValueError(f"criteria must have {values.shape[0]} entries (one per row), got {len(labels)}")
    if len(methods) != values.shape[1]:
        raise ValueError(f"methods must have {values.shape[1]} entries (one per column), got {len(methods)}")
    if ax is None:
        _, ax = plt.subplots(figsize=(1.0 + 0.95 * values.shape[1], 0.6 + 0.45 * values.shape[0]))
    codes = np.where(np.isnan(values), 2, values).astype(int)  # 0 fail, 1 pass, 2 n/a
    cmap = ListedColormap([FAIL_COLOUR, PASS_COLOUR, NA_COLOUR])
    ax.imshow(codes, cmap=cmap, vmin=-0.5, vmax=2.5, aspect="auto")
    words = {0: ("no", "black"), 1: ("yes", "white"), 2: ("n/a", "black")}
    for (row, col), code in np.ndenumerate(codes):
        word, colour = words[int(code)]
        ax.text(
            col,
            row,
            word,
            ha="center",
            va="center",
            color=colour,
            fontsize=10,
            fontweight="bold" if code == 1 else "normal",
        )
    ax.set_xticks(np.arange(values.shape[1]), list(methods), rotation=30, ha="right")
    ax.set_yticks(np.arange(values.shape[0]), labels)
    ax.set_xticks(np.arange(values.shape[1] + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(values.shape[0] + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", linewidth=2)
    ax.tick_params(which="minor", length=0)
    ax.spines[:].set_visible(False)
    handles = [
        Patch(color=PASS_COLOUR, label="yes: check passed"),
        Patch(color=FAIL_COLOUR, label="no: check failed"),
        Patch(color=NA_COLOUR, label="n/a: does not apply"),
    ]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.32), ncol=3, fontsize=8)
    if title:
        ax.set_title(title)
    return ax


def plot_head_weights(
    weights: np.ndarray,
    *,
    offset: int | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    colorbar: bool = True,
) -> AxesImage:
    """Attention weights of a causal head as an image: queries down, keys across.

    Parameters
    ----------
    weights : numpy.ndarray
        Shape ``(n_queries, n_keys)``, values in ``[0, 1]``.
    offset : int, optional
        If given, a thin dashed line marks the diagonal ``j = i - offset``
        beside the cells (drawn just outside it, so it does not hide them).
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title.
    colorbar : bool, optional
        Add a colour bar labelled "attention weight". Default True.

    Returns
    -------
    matplotlib.image.AxesImage
        The image (``image.axes`` is the axes), so callers can update it.

    Raises
    ------
    ValueError
        If ``weights`` is not a 2-D array of values in ``[0, 1]`` or
        ``offset`` is negative.

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib.pyplot as plt
    >>> image = plot_head_weights(np.eye(4), offset=0, title="self")
    >>> image.axes.get_title(), image.axes.get_xlabel()
    ('self', 'key position j (tokens)')
    >>> plt.close("all")
    """
    values = np.asarray(weights, dtype=float)
    if values.ndim != 2:
        raise ValueError(f"weights must be 2-D (queries x keys), got shape {values.shape}")
    if values.size and (np.nanmin(values) < 0.0 or np.nanmax(values) > 1.0 + 1e-12):
        raise ValueError("weights must lie in [0, 1]")
    if offset is not None and (isinstance(offset, bool) or int(offset) != offset or offset < 0):
        raise ValueError(f"offset must be a whole number >= 0, got {offset!r}")
    if ax is None:
        _, ax = plt.subplots(figsize=(3.6, 3.2))
    image = ax.imshow(values, cmap=SEQUENTIAL_CMAP, vmin=0.0, vmax=1.0, interpolation="nearest")
    n_q, n_k = values.shape
    if offset is not None and n_q > offset:
        rows = np.arange(offset, n_q)
        ax.plot(rows - offset - 1.5, rows, color=OKABE_ITO[3], linewidth=0.9, linestyle="--")
    ax.set_xlim(-0.5, n_k - 0.5)
    ax.set_ylim(n_q - 0.5, -0.5)
    ax.set_xlabel("key position j (tokens)")
    ax.set_ylabel("query position i (tokens)")
    if colorbar:
        ax.figure.colorbar(image, ax=ax, label="attention weight", shrink=0.85)
    if title:
        ax.set_title(title)
    return image
