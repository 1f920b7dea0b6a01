"""Plotting and widget modules: import boundaries, rendering and explorer behaviour.

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


def test_plot_functions_validate_and_draw():
    from posenc_helpers.plotting import plot_attention_weights, plot_pooled_summaries

    ax = plot_attention_weights(np.eye(3), ["a", "b", "c"], title="t")
    assert ax.get_title() == "t" and len(ax.texts) == 9
    with pytest.raises(ValueError, match="square"):
        plot_attention_weights(np.ones((2, 3)), ["a", "b"])
    with pytest.raises(ValueError, match="labels"):
        plot_attention_weights(np.eye(2), ["a"])
    with pytest.raises(ValueError, match="same length"):
        plot_pooled_summaries({"a": np.ones(2), "b": np.ones(3)})
    plt.close("all")


def _explorer():
    from posenc_helpers.widgets import WordOrderExplorer

    return WordOrderExplorer.demo()[0]


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


def test_word_order_explorer_reacts_to_controls():
    explorer = _explorer()
    first_png = explorer.image.value
    assert first_png[:8] == b"\x89PNG\r\n\x1a\n"
    assert "(identical)" in explorer.status.value and "man bites dog" in explorer.status.value
    explorer.set(order=(1, 0, 2))
    assert "(identical)" in explorer.status.value and "bites dog man" in explorer.status.value
    explorer.set(strength=1.0)
    assert "(different)" in explorer.status.value
    assert explorer.render_count == 3
    assert explorer.image.value != first_png
    with pytest.raises(ValueError, match="unknown control"):
        explorer.set(speed=3)
    bundle = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_word_order_explorer_rejects_bad_sentences():
    from posenc_helpers.widgets import WordOrderExplorer

    with pytest.raises(ValueError, match="distinct"):
        WordOrderExplorer(["a", "a"], np.ones((2, 2)), np.eye(2), np.eye(2), np.eye(2), np.ones((2, 2)))
