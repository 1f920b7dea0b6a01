"""A Kubernetes Job's results back into the course: ``make k8s-merge A=ch04``.

::

    python -m tools.course.merge ASSIGNMENT [--course _build/course] [--volume _build/k8s/ASSIGNMENT/volume]
                                 [--csv FILE]

``--volume`` is the assignment's folder of the shared volume, copied back (its
``index.json`` and ``results/i/``: each pod's ``result.json`` and autograded notebook,
:mod:`posenc_helpers.grading.one`). For each submission the index lists, this writes
what ``nbgrader autograde`` writes when ``make grade`` grades it:

* the autograded notebook, as ``COURSE/autograded/STUDENT/ASSIGNMENT/NOTEBOOK``;
* the student's submission in ``COURSE/gradebook.db``, through nbgrader's own API
  (:class:`nbgrader.api.Gradebook`): every grade's automatic score and whether it needs a
  person, every answer cell's automatic comment ("No response."), as nbgrader's
  ``SaveAutoGrades`` sets them.

Then ``nbgrader generate_feedback`` writes the feedback (``COURSE/feedback/``) and ``nbgrader
export`` the grades as CSV (``--csv``, default ``COURSE/grades-ASSIGNMENT.csv``). A result
that is missing (its pod never finished), refused, failed or not graded is listed and left
out: its student keeps what the gradebook held.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from posenc_helpers.grading.one import RESULT_NAME, SCHEMA_VERSION
from posenc_helpers.grading.pod import read_index
from tools.course.common import DEFAULT_OUT
from tools.course.nbgrader import run_nbgrader

__all__ = ["merge", "read_result", "main"]


def read_result(folder: Path) -> dict[str, Any]:
    """``folder/result.json``, checked for its schema version."""
    result = json.loads((folder / RESULT_NAME).read_text(encoding="utf-8"))
    if not isinstance(result, dict) or result.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"{folder / RESULT_NAME} is not a result of schema version {SCHEMA_VERSION}")
    return result


def _save(gradebook: Any, assignment: str, result: dict[str, Any]) -> None:
    student, notebook = result["student"], result["notebook"]
    gradebook.update_or_create_student(student)
    gradebook.update_or_create_submission(assignment, student)
    known = {row["grade_id"] for row in result["cells"]}
    for grade in gradebook.find_submission_notebook(notebook, assignment, student).grades:
        if grade.name not in known:
            raise ValueError(f"{student}'s result has no score for {grade.name}: not merged")
    for row in result["cells"]:
        grade = gradebook.find_grade(row["grade_id"], notebook, assignment, student)
        grade.auto_score = row["auto_score"]
        grade.needs_manual_grade = (grade.manual_score is not None) or (grade.auto_score is None)
    for row in result["comments"]:
        comment = gradebook.find_comment(row["grade_id"], notebook, assignment, student)
        comment.auto_comment = row["auto_comment"]
    gradebook.db.commit()


def merge(course: Path, assignment: str, volume: Path, csv: Path | None = None) -> tuple[list[str], list[str]]:
    """Merge the results in ``volume`` into ``course`` (see the module docstring); the students
    merged and a line for each submission left out."""
    from nbgrader.api import Gradebook  # type: ignore[import-untyped]

    if not (course / "gradebook.db").is_file():
        raise FileNotFoundError(f"{course} is not a course (no gradebook.db): run make course first")
    index = read_index(volume / "index.json")
    if index.get("assignment") != assignment:
        raise ValueError(f"{volume / 'index.json'} is the index of {index.get('assignment')!r}, not {assignment!r}")
    merged, left = [], []
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for entry in index["submissions"]:
            folder = volume / "results" / str(entry["index"])
            try:
                result = read_result(folder)
            except FileNotFoundError:
                left.append(f"{entry['student']}: no result (its pod did not finish)")
                continue
            if result.get("student") != entry["student"] or result.get("assignment") != assignment:
                left.append(f"{entry['student']}: results/{entry['index']} is another submission's result")
                continue
            if result["status"] != "graded":
                left.append(f"{entry['student']}: {result['status']}: {' '.join(result['messages'])[:300]}")
                continue
            name = f"{result['notebook']}.ipynb"
            target = course / "autograded" / entry["student"] / assignment
            target.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / name, target / name, follow_symlinks=False)
            _save(gradebook, assignment, result)
            merged.append(entry["student"])
    if merged:  # every autograded submission of the assignment (nbgrader's --student is one glob)
        run_nbgrader(["generate_feedback", assignment, "--force"], course)
    csv = csv or course / f"grades-{assignment}.csv"
    run_nbgrader(["export", f"--assignment=['{assignment}']", f"--to={csv}"], course)
    return merged, left


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.course.merge", description=__doc__.split("\n")[0])
    parser.add_argument("assignment", help="the assignment, e.g. ch04")
    parser.add_argument("--course", type=Path, default=DEFAULT_OUT, help="the course folder (default _build/course)")
    parser.add_argument("--volume", type=Path, default=None, help="the assignment's folder of the volume, copied back")
    parser.add_argument("--csv", type=Path, default=None, help="the grades' CSV (default COURSE/grades-A.csv)")
    args = parser.parse_args(argv)
    volume = args.volume or args.course.parent / "k8s" / args.assignment / "volume"
    try:
        merged, left = merge(args.course.resolve(), args.assignment, volume.resolve(), args.csv)
    except (ValueError, FileNotFoundError) as error:
        print(error, file=sys.stderr)
        return 2
    print(f"{args.assignment}: {len(merged)} results merged into {args.course / 'gradebook.db'}; feedback written")
    for line in left:
        print(f"  left out: {line}")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
