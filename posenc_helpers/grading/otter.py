"""The course's otter-grader plugin: the submission runs in a sandbox, the grade comes from outside.

``make otter`` names it in each assignment's configuration, with what it needs:
``specs`` (per exercise its check, answer names and forbidden helpers), ``released``
(digests of the handed-out code cells), ``record_cells`` (per exercise, the hidden
test that records its answer), ``reference`` (the grader's own run of the release,
:mod:`posenc_helpers.grading.reference`) and ``reference_code`` (the digests of the
cells it ran, which key it to the package that ran them). Then, in ``otter run`` and on
Gradescope:

* ``before_grading`` reads the submitted notebook and removes every other file the
  submission brought (an ``.OTTER_LOG`` that otter would unpickle, a ``numpy.py``
  that otter's kernel would import), before otter touches them;
* ``before_execution`` runs the submitted notebook, with one recording cell per
  exercise appended, in the sandbox (:mod:`posenc_helpers.grading.execute`),
  grades the records outside it (:func:`posenc_helpers.grading.verdict.grade`), and
  hands otter an *empty* notebook: otter's own kernel then runs no line of the
  student's, so the results otter pickles and reads back are otter's alone;
* ``after_grading`` sets each exercise's score and its one-line message,
  "Tampering suspected: ..." included, in otter's results.

The sandbox is bubblewrap where it can make namespaces; in a container that cannot
(Gradescope's grades one submission per container), the kernel runs as a user of its
own with no capabilities (``isolation="user"``), which keeps it from the grader's
files, where that user can run the grading environment's Python
(:func:`~posenc_helpers.grading.sandbox.user_works`); else without isolation. The
plugin prints which one it used. Set ``isolation`` in the plugin's configuration to
require one.

Importing this module imports otter; the rest of the package does not need it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from otter.plugins import AbstractOtterPlugin  # type: ignore[import-untyped]
from otter.test_files.abstract_test import TestCase, TestCaseResult  # type: ignore[import-untyped]

from . import runtime, sandbox
from .execute import execute_notebook, graded_cells
from .reference import Reference, cell_timeouts, reference_key, wall_limit
from .verdict import ExerciseSpec, Verdict, grade, source_digest

__all__ = ["GradeFromRecords"]


def _keep_only(submission: Path) -> None:
    """Remove everything the student uploaded beside the notebook (an ``.OTTER_LOG`` that otter
    would unpickle, a ``numpy.py`` otter's kernel would import), then put back what otter itself
    placed there: its tests and the autograder's files (from ``../source``)."""
    folder = submission.parent
    for path in folder.iterdir():
        if path.resolve() == submission.resolve():
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    source = folder.parent / "source"
    if (source / "tests").is_dir():
        shutil.copytree(source / "tests", folder / "tests")
    if (source / "files").is_dir():
        for path in (source / "files").iterdir():
            if path.is_file():
                shutil.copy(path, folder / path.name)
    (folder / "__init__.py").touch()


class GradeFromRecords(AbstractOtterPlugin):
    """Runs the submission in the sandbox and sets each exercise's score from the verdict."""

    def _config(self) -> dict[str, Any]:
        config = self.plugin_config or {}
        for key, kind in (
            ("specs", dict),
            ("released", list),
            ("record_cells", dict),
            ("reference", dict),
            ("reference_code", list),
        ):
            if not isinstance(config.get(key), kind):
                raise ValueError(f"plugin_config must hold {key!r} (a {kind.__name__}); run make otter again")
        isolation = config.get("isolation", "auto")
        if isolation not in ("auto", *sandbox.ISOLATIONS):
            raise ValueError(f"plugin_config's isolation must be auto, bwrap, user or none; got {isolation!r}")
        return config

    def before_grading(self, config: Any) -> None:
        self._config()  # a broken configuration fails before any student code runs
        submission = Path(self.submission_path)
        self._submitted = json.loads(submission.read_text(encoding="utf-8")).get("cells", [])
        _keep_only(submission)
        self._environment = runtime.environment_digest()

    def before_execution(self, submission: Any) -> Any:
        import nbformat

        config = self._config()
        specs = {label: ExerciseSpec(**spec) for label, spec in config["specs"].items()}
        released = set(config["released"]) | {source_digest(s) for s in config["record_cells"].values()}
        cells, places = graded_cells(self._submitted, released, config["record_cells"])
        reference = Reference(**config["reference"])
        if reference.key != reference_key(config["reference_code"]):
            raise RuntimeError(
                "this autograder's posenc_helpers is not the one make otter ran the release with: build the "
                "autograder again (make otter CH=NN) and upload the new zip"
            )
        isolation = config.get("isolation", "auto")
        isolation = sandbox.best_isolation() if isolation == "auto" else isolation
        print(f"posenc_helpers.grading: this submission runs with isolation {isolation!r}", flush=True)
        executed = execute_notebook(
            cells,
            timeouts=cell_timeouts(cells, released, reference),
            release=Path(self.submission_path).parent.parent / "source" / "files",
            limits=sandbox.Limits(wall_seconds=wall_limit(reference)),
            isolation=isolation,
        )
        self._verdicts = grade(
            executed.cells,
            released_digests=released,
            reference=reference.records,
            specs=specs,
            test_cells=places,
            environment_changed=runtime.environment_digest() != getattr(self, "_environment", None),
        )
        if executed.problem is not None:
            for verdict in self._verdicts.values():
                if not verdict.earned and not verdict.tampering:
                    verdict.message = f"{executed.problem}; no points."
        # otter's own kernel runs only otter's cells: none of the student's, so what it pickles is otter's
        empty = nbformat.v4.new_notebook(metadata=dict(getattr(submission, "metadata", {}) or {}))
        empty.cells = [nbformat.v4.new_markdown_cell("Graded in a sandbox by the course's plugin.")]
        return empty

    def after_grading(self, results: Any) -> None:
        verdicts: dict[str, Verdict] = getattr(self, "_verdicts", {})
        for label in self._config()["specs"]:
            test_file = results.results.get(label)
            if test_file is None:
                continue
            verdict = verdicts.get(label) or Verdict(label, False, "the notebook was not graded; no points.")
            # One public case holding the verdict: otter's public summary (what Gradescope shows a
            # student) would otherwise read "All test cases passed!" over hidden cases that failed.
            case = TestCase(label, "", False, None, None, None)
            message = f"{label}: {verdict.message}" if verdict.earned else verdict.line
            test_file.test_case_results = [TestCaseResult(test_case=case, message=message, passed=verdict.earned)]
            test_file.update_score(test_file.possible if verdict.earned else 0)
