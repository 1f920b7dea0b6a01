"""A small base class for explorers: controls plus a matplotlib figure shown as a PNG.

The figure is a plain :class:`matplotlib.figure.Figure` on an Agg canvas (no
pyplot state, nothing displayed twice). Each change of a control updates the
existing artists and re-encodes one PNG into an :class:`ipywidgets.Image`,
which keeps a change well under 100 ms at the book's default sizes (measured
by ``make bench``).

Most of a redraw is spent on text: tick labels, titles, legends. An explorer
whose axes stay put while only some artists move can say so with
:meth:`FigureExplorer._dynamic_artists` and :meth:`FigureExplorer._background_key`:
the rest of the figure is then drawn once per key, kept as a bitmap, and each
update only draws the moving artists over it ("blitting").

After its kernel restarts or stops, an explorer's controls would still move in the
browser while nothing redraws (a slider reading 128 beside a picture of d = 64). The
widgets' own front end marks every widget whose kernel connection is gone with the class
``jupyter-widgets-disconnected`` (ipywidgets 8, ``DOMWidgetView._comm_live_update``); a
style sheet in the explorer's own HTML (:data:`OFFLINE_STYLE`) hides the controls of a
marked explorer and shows :data:`OFFLINE_NOTE` in their place, so the picture and its
status line, both drawn by the kernel, are all that is left, and they agree.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text
from PIL import Image

__all__ = ["FigureExplorer", "OFFLINE_NOTE", "OFFLINE_STYLE"]

#: What an explorer says in place of its controls once its kernel is gone.
OFFLINE_NOTE = (
    "The kernel this explorer ran in has restarted, so its controls are off: the "
    "picture below is the last one it drew. To bring the explorer back, run the cells above "
    "this one (<em>Run → Run All Above Selected Cell</em>), then this cell."
)
#: Hides a disconnected explorer's controls and shows :data:`OFFLINE_NOTE` (the class names
#: are set in :class:`FigureExplorer`; ``jupyter-widgets-disconnected`` by ipywidgets).
OFFLINE_STYLE = (
    "<style>"
    ".posenc-explorer .posenc-explorer-offline { display: none; }"
    ".posenc-explorer.jupyter-widgets-disconnected > .posenc-explorer-controls { display: none; }"
    ".posenc-explorer.jupyter-widgets-disconnected > .posenc-explorer-offline { display: block; }"
    "</style>"
)


@contextmanager
def _left_out(artists: Sequence[Artist]) -> Iterator[None]:
    """Leave ``artists`` out of the figure's drawing while the block runs (for a
    cached background), with the figure laid out as if they were there.

    A text is made transparent rather than invisible: an axes lays its title out
    only while the title is visible (a hidden one is moved far above the axes, and
    would be drawn there, off the figure, on every frame of that background).
    """
    texts = [artist for artist in artists if isinstance(artist, Text)]
    others = [artist for artist in artists if not isinstance(artist, Text)]
    alphas = [text.get_alpha() for text in texts]
    for text in texts:
        text.set_alpha(0.0)
    for artist in others:
        artist.set_visible(False)
    try:
        yield
    finally:
        for text, alpha in zip(texts, alphas, strict=True):
            text.set_alpha(alpha)
        for artist in others:
            artist.set_visible(True)


class FigureExplorer:
    """Controls, a figure and a one-line status, wired together.

    Subclasses implement :meth:`_setup` (create axes and artists once),
    :meth:`_update` (move the artists for the current control values and
    return a status line) and the classmethod :meth:`demo` (an instance at the
    chapter's default sizes plus a list of control changes), which
    ``make bench`` uses to time every explorer and the tests use to exercise it.

    Parameters
    ----------
    controls : mapping of str to ipywidgets.ValueWidget
        The controls, by the keyword their value is passed to :meth:`_update`.
    figsize : tuple of float
        Figure size in inches.
    dpi : int, optional
        Resolution of the PNG. Default 80.
    """

    def __init__(
        self, controls: Mapping[str, widgets.ValueWidget], *, figsize: tuple[float, float], dpi: int = 80
    ) -> None:
        self.controls = dict(controls)
        self.figure = Figure(figsize=figsize, dpi=dpi)
        FigureCanvasAgg(self.figure)
        self._image = widgets.Image(format="png")
        self.status = widgets.HTML()
        row = widgets.HBox(list(self.controls.values()))
        row.add_class("posenc-explorer-controls")
        self.offline = widgets.HTML(f'{OFFLINE_STYLE}<p role="status">{OFFLINE_NOTE}</p>')
        self.offline.add_class("posenc-explorer-offline")
        self.widget = widgets.VBox([row, self.offline, self._image, self.status])
        self.widget.add_class("posenc-explorer")
        self.render_count = 0
        self._setup()
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        self.refresh()

    @property
    def image(self) -> widgets.Image:
        """The PNG widget shown under the controls (read-only, so that a subclass
        cannot shadow it with, say, a matplotlib ``AxesImage``)."""
        return self._image

    # -- to be provided by subclasses -------------------------------------------------
    def _setup(self) -> None:
        raise NotImplementedError

    #: Move the artists for the control values (passed by keyword: each subclass names its
    #: controls as parameters) and return the status line.
    _update: Callable[..., str]

    @classmethod
    def demo(cls) -> tuple[FigureExplorer, list[dict[str, Any]]]:
        """An explorer at its chapter's default sizes and control changes to replay."""
        raise NotImplementedError

    # -- machinery ----------------------------------------------------------------------
    @property
    def values(self) -> dict[str, Any]:
        """Current value of every control."""
        return {name: control.value for name, control in self.controls.items()}

    def set(self, **values: Any) -> None:
        """Set controls programmatically (each change redraws, as a user's would)."""
        for name, value in values.items():
            if name not in self.controls:
                raise ValueError(f"unknown control {name!r}; controls are {sorted(self.controls)}")
            self.controls[name].value = value

    def _dynamic_artists(self) -> Sequence[Artist]:
        """Artists that :meth:`_update` changes while everything else stays put.

        Empty (the default) means every update redraws the whole figure.
        """
        return ()

    def _background_key(self) -> Hashable:
        """Which cached background the current values need (change it when axes, ticks
        or anything outside :meth:`_dynamic_artists` changes)."""
        return None

    def refresh(self) -> None:
        """Redraw the figure for the current values and update the status line."""
        self.status.value = self._update(**self.values)
        canvas = self.figure.canvas
        assert isinstance(canvas, FigureCanvasAgg)  # set in __init__: Agg's blitting and buffer
        dynamic = list(self._dynamic_artists())
        if not dynamic:
            canvas.draw()
        else:
            backgrounds = self.__dict__.setdefault("_backgrounds", {})
            key = self._background_key()
            if key not in backgrounds:
                with _left_out(dynamic):
                    canvas.draw()
                backgrounds[key] = canvas.copy_from_bbox(self.figure.bbox)
            else:
                canvas.restore_region(backgrounds[key])
            for artist in dynamic:
                self.figure.draw_artist(artist)
        # An opaque RGB PNG at zlib level 1: a little larger than the default level,
        # several milliseconds faster to encode, which is what an update waits for.
        rgb = np.ascontiguousarray(np.asarray(canvas.buffer_rgba())[..., :3])
        buffer = io.BytesIO()
        Image.fromarray(rgb).save(buffer, format="png", compress_level=1)
        self._image.value = buffer.getvalue()
        self.render_count += 1

    def _on_change(self, _change: Mapping[str, Any]) -> None:
        self.refresh()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
