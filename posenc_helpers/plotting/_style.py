"""The book's figure style: colour-blind-safe colours, opaque white backgrounds."""

from __future__ import annotations

import matplotlib as mpl
from matplotlib.rcsetup import cycler  # what mpl.cycler is: validates the properties

__all__ = ["OKABE_ITO", "SEQUENTIAL_CMAP", "DIVERGING_CMAP", "use_book_style"]

#: Okabe & Ito's palette, distinguishable under the common colour-vision deficiencies.
OKABE_ITO: tuple[str, ...] = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#F0E442",  # yellow
    "#000000",  # black
)

#: For magnitudes (attention weights, distances): perceptually uniform and colour-blind safe.
SEQUENTIAL_CMAP = "cividis"
#: For signed values in [-1, 1] (encodings): ColorBrewer's colour-blind-safe red-blue.
DIVERGING_CMAP = "RdBu_r"


def use_book_style() -> None:
    """Set matplotlib's defaults to the book's style.

    White, opaque figure and axes backgrounds (figures stay readable when the
    website is in dark mode), the Okabe-Ito colour cycle, ``cividis`` as the
    default colormap and slightly larger text.

    References
    ----------
    .. [1] M. Okabe, K. Ito, "Color Universal Design (CUD): How to make figures
       and presentations that are friendly to colorblind people", 2008.
    .. [2] J. R. Nunez, C. R. Anderton, R. S. Renslow, "Optimizing colormaps with
       consideration for color vision deficiency to enable accurate
       interpretation of scientific data", PLOS ONE 13(7), 2018 (cividis).

    Examples
    --------
    >>> use_book_style()
    >>> import matplotlib as mpl
    >>> mpl.rcParams["image.cmap"]
    'cividis'
    """
    mpl.rcParams.update(
        {
            "figure.facecolor": "white",
            "axes.facecolor": "white",
            "savefig.facecolor": "white",
            "savefig.transparent": False,
            "figure.dpi": 100,
            "axes.prop_cycle": cycler(color=list(OKABE_ITO)),
            "image.cmap": SEQUENTIAL_CMAP,
            "font.size": 10,
            "axes.titlesize": 11,
            "axes.labelsize": 10,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "legend.frameon": False,
        }
    )
