"""The course's otter-grader plugin: grades from the recorded answers, outside the kernel.

``make otter`` names it in each assignment's configuration, with what it needs
(``specs``: per exercise its check, answer names and forbidden helpers;
``released``: digests of the handed-out cells). otter runs the hidden tests in
the student's kernel, where each only records the answer and fails; then

* ``before_grading`` (before the submission runs) reads the submitted notebook and
  fingerprints the grading environment's ``posenc_helpers``;
* ``after_grading`` judges the records found in the executed notebook with
  :func:`posenc_helpers.checks._verdict.grade` (a fresh ``python -I`` process) and
  sets each exercise's score and its one-line message, "Tampering suspected: ..."
  included, in otter's results.

Importing this module imports otter; the rest of the package does not need it.
"""

from __future__ import annotations

import json
from typing import Any

from otter.plugins import AbstractOtterPlugin  # type: ignore[import-untyped]
from otter.test_files.abstract_test import TestCase, TestCaseResult  # type: ignore[import-untyped]

from ._verdict import ExerciseSpec, grade, package_digest

__all__ = ["GradeFromRecords"]


class GradeFromRecords(AbstractOtterPlugin):
    """Sets the score of each of the course's exercises from the verdict on its record."""

    def _config(self) -> tuple[dict[str, ExerciseSpec], list[str]]:
        config = self.plugin_config or {}
        specs = config.get("specs")
        released = config.get("released")
        if not isinstance(specs, dict) or not isinstance(released, list):
            raise ValueError("plugin_config must hold 'specs' (a dict) and 'released' (a list of digests)")
        return {label: ExerciseSpec(**spec) for label, spec in specs.items()}, [str(d) for d in released]

    def before_grading(self, config: Any) -> None:
        self._config()  # a broken configuration fails before any student code runs
        with open(self.submission_path, encoding="utf-8") as handle:
            self._submitted = json.load(handle).get("cells", [])
        self._package = package_digest()

    def after_grading(self, results: Any) -> None:
        specs, released = self._config()
        notebook = getattr(results, "notebook", None)
        cells = list(notebook.cells) if notebook is not None else []
        verdicts = grade(
            cells,
            released_digests=released,
            submitted=getattr(self, "_submitted", None) or [],
            records_anywhere=True,
            specs=specs,
            package_changed=package_digest() != getattr(self, "_package", None),
        )
        for label, verdict in verdicts.items():
            test_file = results.results.get(label)
            if test_file is None:
                continue
            case = test_file.test_cases[0] if test_file.test_cases else TestCase(label, "", True, None, None, None)
            message = "" if verdict.earned and not verdict.tampering else verdict.line
            if verdict.earned:
                message = f"{label}: {verdict.message}"
            test_file.test_case_results = [TestCaseResult(test_case=case, message=message, passed=verdict.earned)]
            test_file.update_score(test_file.possible if verdict.earned else 0)
