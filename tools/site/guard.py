"""No build from notebooks that are not clean.

The book shows the outputs committed in the notebooks (execution is off in
``_config.yml``), which nbval has checked against a fresh run. This guard makes the
build itself fail if a notebook in ``notebooks/`` has a stored error, stderr,
unexecuted cells, out-of-order execution, widget state, a machine path or a memory
address (:func:`tools.nbtools.audit_paths`), so a broken chapter cannot be published.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

from ..nbtools import audit_paths


def refuse_unclean_notebooks(app: Sphinx) -> None:
    """``builder-inited``: stop the build if a chapter notebook is not ready to publish."""
    notebooks = sorted(Path(app.srcdir, "notebooks").glob("*.ipynb"))
    report = audit_paths(notebooks)
    if report:
        lines = [
            f"{path.relative_to(app.srcdir)}: {problem}" for path, problems in report.items() for problem in problems
        ]
        raise ExtensionError("notebooks are not ready to publish:\n  " + "\n  ".join(lines))
