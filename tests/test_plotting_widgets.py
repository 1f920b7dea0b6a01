"""Plotting and widget modules: import boundaries, rendering and explorer behaviour.

Speed of the explorers is measured by `make bench`, not asserted here.
"""

import subprocess
import sys

import matplotlib.pyplot as plt
import numpy as np
import pytest

from posenc_helpers import sinusoidal_encoding


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

    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 8))
    wq, wk, wv = rng.normal(size=(3, 8, 8)) / np.sqrt(8)
    return WordOrderExplorer(["dog", "bites", "man"], x, wq, wk, wv, sinusoidal_encoding(3, 8))


def test_word_order_explorer_reacts_to_controls():
    explorer = _explorer()
    first_png = explorer.image.value
    assert first_png[:8] == b"\x89PNG\r\n\x1a\n"
    explorer.set(order=(2, 1, 0))
    assert "(identical)" in explorer.status.value and "man bites dog" in explorer.status.value
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
