"""Figures about attention weights and pooled summaries (chapter 01 and later)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from ._style import OKABE_ITO, SEQUENTIAL_CMAP

__all__ = ["plot_attention_weights", "plot_pooled_summaries"]


def plot_attention_weights(
    weights: np.ndarray,
    labels: Sequence[str],
    *,
    ax: Axes | None = None,
    title: str | None = None,
    annotate: bool = True,
) -> Axes:
    """Heatmap of attention weights: queries down, keys across, each row sums to 1.

    Parameters
    ----------
    weights : numpy.ndarray
        Shape ``(n, n)``, rows are queries, columns keys.
    labels : sequence of str
        One label per token, used on both axes.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made if omitted.
    title : str, optional
        Axes title.
    annotate : bool, optional
        Write each weight in its cell. Default True.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ValueError
        If ``weights`` is not square or ``labels`` has the wrong length.

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib.pyplot as plt
    >>> ax = plot_attention_weights(np.full((2, 2), 0.5), ["a", "b"], title="uniform")
    >>> ax.get_title(), [t.get_text() for t in ax.get_xticklabels()]
    ('uniform', ['a', 'b'])
    >>> plt.close("all")
    """
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 2 or weights.shape[0] != weights.shape[1]:
        raise ValueError(f"weights must be a square 2-D array, got shape {weights.shape}")
    if len(labels) != weights.shape[0]:
        raise ValueError(f"labels must have {weights.shape[0]} entries, got {len(labels)}")
    if ax is None:
        _, ax = plt.subplots(figsize=(3.2, 3.0))
    ax.imshow(weights, cmap=SEQUENTIAL_CMAP, vmin=0.0, vmax=1.0)
    ticks = np.arange(len(labels))
    ax.set_xticks(ticks, labels)
    ax.set_yticks(ticks, labels)
    ax.set_xlabel("key (attended-to token)")
    ax.set_ylabel("query token")
    ax.spines[:].set_visible(False)
    if annotate:
        for (i, j), value in np.ndenumerate(weights):
            colour = "black" if value > 0.55 else "white"
            ax.text(j, i, f"{value:.2f}", ha="center", va="center", color=colour, fontsize=9)
    if title:
        ax.set_title(title)
    return ax


def plot_pooled_summaries(
    summaries: Mapping[str, np.ndarray],
    *,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Grouped bars comparing pooled (mean over tokens) attention outputs.

    Parameters
    ----------
    summaries : mapping of str to numpy.ndarray
        Sentence label to its pooled summary, each of shape ``(d,)``.
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
        If ``summaries`` is empty or its vectors differ in length.

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib.pyplot as plt
    >>> ax = plot_pooled_summaries({"a": np.zeros(3), "b": np.ones(3)})
    >>> len(ax.patches)
    6
    >>> plt.close("all")
    """
    if not summaries:
        raise ValueError("summaries must hold at least one sentence")
    vectors = [np.asarray(v, dtype=float) for v in summaries.values()]
    width = vectors[0].shape[0]
    if any(v.shape != (width,) for v in vectors):
        raise ValueError("every summary must be a 1-D array of the same length")
    if ax is None:
        _, ax = plt.subplots(figsize=(5.0, 2.6))
    features = np.arange(width)
    bar = 0.8 / len(vectors)
    for index, (label, vector) in enumerate(zip(summaries, vectors, strict=True)):
        offset = (index - (len(vectors) - 1) / 2) * bar
        hatch = "//" if index % 2 else None
        ax.bar(
            features + offset,
            vector,
            width=bar,
            label=label,
            color=OKABE_ITO[index % len(OKABE_ITO)],
            hatch=hatch,
            edgecolor="white",
        )
    ax.axhline(0.0, color="0.3", linewidth=0.8)
    ax.set_xticks(features)
    ax.set_xlabel("feature of the pooled output")
    ax.set_ylabel("value")
    ax.legend(loc="best", fontsize=8)
    if title:
        ax.set_title(title)
    return ax
