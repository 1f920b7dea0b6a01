"""Plotting and widget modules across the chapters: import boundaries, and every explorer's demo,
rendering and blitting. Each chapter's own figures and explorer are tested in its ``test_chNN_*.py``.

Speed of the explorers is measured by `make bench`, not asserted here.
"""

import subprocess
import sys

import matplotlib.pyplot as plt
import numpy as np
import pytest


def test_core_package_imports_neither_matplotlib_nor_ipywidgets():
    code = (
        "import sys, posenc_helpers, posenc_helpers.checks\n"
        "bad = [m for m in ('matplotlib', 'ipywidgets') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_plotting_does_not_import_ipywidgets():
    code = "import sys, posenc_helpers.plotting\nassert 'ipywidgets' not in sys.modules\n"
    subprocess.run([sys.executable, "-c", code], check=True)


def _explorer_classes():
    import posenc_helpers.widgets as widgets

    return [
        getattr(widgets, name)
        for name in widgets.__all__
        if isinstance(getattr(widgets, name), type)
        and issubclass(getattr(widgets, name), widgets.FigureExplorer)
        and getattr(widgets, name) is not widgets.FigureExplorer
    ]


@pytest.mark.parametrize("cls", _explorer_classes(), ids=lambda c: c.__name__)
def test_every_explorer_replays_its_demo(cls):
    import io

    import ipywidgets
    from PIL import Image

    explorer, changes = cls.demo()
    assert changes, "demo() must return control changes to replay"
    # The PNG goes into the Image widget that is actually displayed (a subclass must not
    # shadow `image` with, say, a matplotlib AxesImage).
    assert isinstance(explorer.image, ipywidgets.Image)
    assert explorer.image in explorer.widget.children
    shown = {explorer.image.value}
    for change in changes:
        explorer.set(**change)
        shown.add(explorer.image.value)
    assert explorer.render_count >= 2
    assert len(shown) >= 2, "the picture never changed"
    png = Image.open(io.BytesIO(explorer.image.value))
    width, height = explorer.figure.canvas.get_width_height()
    assert png.format == "PNG" and png.size == (width, height)
    assert explorer.status.value
    plt.close("all")


def _blitting_explorers() -> list[type]:
    import posenc_helpers.widgets as widgets

    found = []
    for name in widgets.__all__:
        cls = getattr(widgets, name)
        explorer = isinstance(cls, type) and issubclass(cls, widgets.FigureExplorer)
        if explorer and cls._dynamic_artists is not widgets.FigureExplorer._dynamic_artists:
            found.append(cls)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("cls", _blitting_explorers(), ids=lambda c: c.__name__)
def test_blitted_frames_differ_from_full_redraws_only_under_moving_artists(cls):
    """An explorer that redraws only its moving artists shows what a full redraw shows,
    except where a moving artist overlaps a still one (the blit draws it on top): every
    pixel that differs lies inside a moving artist's bounding box, so nothing still on
    screen is stale; and a moving text (a title that names the values) is drawn
    exactly as the full redraw draws it, on every frame, the first one of each cached
    background included (chapter 04's heatmap title was missing from those)."""
    import io

    from matplotlib.text import Text
    from PIL import Image

    explorer, changes = cls.demo()
    for change in changes + changes[:3]:  # the second visits reuse cached backgrounds
        explorer.set(**change)
        blitted = np.asarray(Image.open(io.BytesIO(explorer.image.value)).convert("RGB")).astype(int)
        buffer = io.BytesIO()
        explorer.figure.savefig(buffer, format="png")  # a full redraw from scratch
        full = np.asarray(Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")).astype(int)
        assert blitted.shape == full.shape
        renderer = explorer.figure.canvas.get_renderer()
        moving = np.zeros(full.shape[:2], dtype=bool)
        height = full.shape[0]
        for artist in explorer._dynamic_artists():
            box = artist.get_window_extent(renderer)
            if not np.all(np.isfinite(box.extents)):  # an empty artist draws nothing
                continue
            x0, x1 = int(np.floor(box.x0)) - 2, int(np.ceil(box.x1)) + 2
            y0, y1 = height - int(np.ceil(box.y1)) - 2, height - int(np.floor(box.y0)) + 2
            region = (slice(max(y0, 0), max(y1, 0)), slice(max(x0, 0), max(x1, 0)))
            moving[region] = True
            if isinstance(artist, Text) and artist.get_text():
                assert full[region].min() < 128, f"{cls.__name__}: the full redraw shows no text at the title's place"
                np.testing.assert_array_equal(
                    blitted[region], full[region], err_msg=f"{cls.__name__} {change}: text {artist.get_text()!r}"
                )
        stale = (np.abs(blitted - full).max(axis=2) > 0) & ~moving
        assert not stale.any(), f"{cls.__name__} {change}: {int(stale.sum())} pixels outside the moving artists differ"
    plt.close("all")


@pytest.mark.parametrize("cls", _explorer_classes(), ids=lambda c: c.__name__)
def test_every_explorer_switches_its_controls_off_without_its_kernel(cls):
    """Issue 46, item 8: after a kernel restart a slider read 128 beside a picture of d = 64.
    ipywidgets' front end marks a widget whose kernel is gone ``jupyter-widgets-disconnected``;
    the explorer's style hides its controls then and shows a note saying why (tested in a
    browser by tests/browser/test_jupyterlab.py). Here: the classes the style needs are on
    the widgets it names, every control is inside the row it hides, and the note is there."""
    import ipywidgets

    from posenc_helpers.widgets._explorer import OFFLINE_NOTE

    explorer, _ = cls.demo()
    box = explorer.widget
    assert "posenc-explorer" in box._dom_classes
    rows = [child for child in box.children if "posenc-explorer-controls" in child._dom_classes]
    notes = [child for child in box.children if "posenc-explorer-offline" in child._dom_classes]
    assert len(rows) == 1 and len(notes) == 1
    inside = set(rows[0].children)
    assert all(control in inside for control in explorer.controls.values()), "a control outside the hidden row"
    assert explorer.image in box.children and explorer.status in box.children  # what stays
    assert isinstance(notes[0], ipywidgets.HTML) and OFFLINE_NOTE in notes[0].value
    style = notes[0].value
    assert ".posenc-explorer.jupyter-widgets-disconnected > .posenc-explorer-controls { display: none; }" in style
    assert ".posenc-explorer.jupyter-widgets-disconnected > .posenc-explorer-offline { display: block; }" in style
    assert ".posenc-explorer .posenc-explorer-offline { display: none; }" in style
    plt.close("all")
