"""Sphinx extension: refuse to build the book from notebooks that are not clean.

The book shows the outputs committed in the notebooks (execution is off in
``_config.yml``), which nbval has checked against a fresh run. This guard
makes the build itself fail if a notebook in ``notebooks/`` has a stored
error, stderr, unexecuted cells, out-of-order execution, widget state, a
machine path or a memory address, so a broken chapter cannot be published.
"""

from __future__ import annotations

from pathlib import Path

from nbtools import audit_paths
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError


def _check(app: Sphinx) -> None:
    notebooks = sorted(Path(app.srcdir, "notebooks").glob("*.ipynb"))
    report = audit_paths(notebooks)
    if report:
        lines = [
            f"{path.relative_to(app.srcdir)}: {problem}" for path, problems in report.items() for problem in problems
        ]
        raise ExtensionError("notebooks are not ready to publish:\n  " + "\n  ".join(lines))


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("builder-inited", _check)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
