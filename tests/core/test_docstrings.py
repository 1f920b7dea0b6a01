"""Every public function documents itself numpydoc-style with runnable examples."""

import inspect
import re

import pytest

import posenc_helpers
import posenc_helpers.checks
import posenc_helpers.plotting
import posenc_helpers.widgets

EXEMPT = {"FigureExplorer", "CheckFailed", "CheckResult", "Criterion", "CriterionResult"}


def _public(module):
    for name in module.__all__:
        obj = getattr(module, name)
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and name not in EXEMPT:
            yield f"{module.__name__}.{name}", obj


ALL = [
    item
    for module in (posenc_helpers, posenc_helpers.plotting, posenc_helpers.widgets, posenc_helpers.checks)
    for item in _public(module)
]
CORE = [item for item in _public(posenc_helpers) if inspect.isfunction(item[1])]


@pytest.mark.parametrize("name, obj", ALL, ids=[n for n, _ in ALL])
def test_has_examples(name, obj):
    doc = inspect.getdoc(obj) or ""
    assert "Examples\n--------" in doc and ">>>" in doc, f"{name} needs a runnable Examples section"


@pytest.mark.parametrize("name, obj", CORE, ids=[n for n, _ in CORE])
def test_core_functions_are_fully_documented(name, obj):
    """Parameters, Returns and Raises always; References only where the code implements
    a source (so none is forced on, say, a wrapper of np.arange)."""
    doc = inspect.getdoc(obj) or ""
    for section in ("Parameters\n----------", "Returns\n-------", "Raises\n------"):
        assert section in doc, f"{name} lacks {section.splitlines()[0]}"
    if "References\n----------" in doc:
        references = doc.split("References\n----------")[1].split("Examples\n--------")[0]
        assert re.search(r"\.\. \[1\] \S", references), f"{name}: an empty References section"
    hints = inspect.get_annotations(obj)
    assert "return" in hints, f"{name} needs a return type hint"
