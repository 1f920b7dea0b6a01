"""Figures for the book (matplotlib). Import explicitly: ``from posenc_helpers import plotting``.

Every function draws on a given ``ax`` (or makes its own figure) and returns
what it drew on, so notebooks can compose figures and add their own labels.
Call :func:`use_book_style` once in a notebook's setup cell.
"""

from ._style import DIVERGING_CMAP, OKABE_ITO, SEQUENTIAL_CMAP, use_book_style
from .attention import plot_attention_weights, plot_pooled_summaries

__all__ = [
    "OKABE_ITO",
    "SEQUENTIAL_CMAP",
    "DIVERGING_CMAP",
    "use_book_style",
    "plot_attention_weights",
    "plot_pooled_summaries",
]
