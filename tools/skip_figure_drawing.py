"""IPython start-up file: show matplotlib figures without drawing them.

Used as ``PYTHONSTARTUP`` for the kernels of two checks in ``make test``: nbval's
second CPU profile and the student-copy run. Neither looks at pixels (nbval never
compares ``image/png`` data; the student run checks errors and check messages), and
drawing is half of every chapter's run time. The native nbval run, ``make
notebooks`` and the explorers still draw every figure.

A kernel started with it displays each figure as it always does, one
``display_data`` output with the same ``text/plain`` (``<Figure size ... with N
Axes>``), but its ``image/png`` is a fixed 1 x 1 pixel instead of the rendering.
It must run before ``matplotlib.pyplot`` is imported: IPython binds the PNG
formatter to ``IPython.core.pylabtools.print_figure`` when the inline backend loads.
"""

import base64 as _base64

import IPython.core.pylabtools as _pylabtools

# A valid 1 x 1 transparent PNG.
_PIXEL = _base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def _print_figure_without_drawing(fig, fmt="png", bbox_inches="tight", base64=False, **kwargs):
    if not fig.axes and not fig.lines:  # as IPython: an empty figure shows no image
        return None
    return _base64.b64encode(_PIXEL).decode("ascii") if base64 else _PIXEL


_pylabtools.print_figure = _print_figure_without_drawing
