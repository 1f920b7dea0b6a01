"""Grade one submission, anywhere: ``python -m posenc_helpers.grading one``.

::

    python -m posenc_helpers.grading one --release COURSE --submission NB --out DIR
                                         [--assignment chNN] [--student ID] [--timeout S]
                                         [--scratch DIR] [--unsafe]
    python -m posenc_helpers.grading one --release COURSE --index INDEX.json --out DIR ...

With ``--index`` (a pod of ``make k8s-job``'s Job) the submission, the student and the
assignment are those the index lists for ``JOB_COMPLETION_INDEX``
(:mod:`posenc_helpers.grading.pod`).

``--release`` is a course folder that ``make course`` wrote (its ``nbgrader_config.py``,
``gradebook.db``, ``source/``, ``release/`` and the grader's reference runs in
``.grading/``), or a copy of its parts for one assignment (``make k8s-job`` writes one).
The submission is graded by the same code path as ``make grade``: a private copy of the
course in a scratch folder (``--scratch``, else a temporary folder) gets the notebook as
``submitted/ID/chNN/``, and ``nbgrader autograde chNN --student=ID`` runs there with the
course's own preprocessors (``posenc_helpers.grading.nbgrader``), whose verdict
(:mod:`posenc_helpers.grading.verdict`) sets the points. Then ``--out`` receives:

* the autograded notebook, under its own name;
* ``result.json`` (:data:`SCHEMA_VERSION`; never a pickle): every grade cell's score and
  maximum, the comments nbgrader records, the total, the maximum, the status, the
  isolation used and why, and the messages (each "NoPoints" or "Tampering suspected" line);
  ``tools.course.merge`` reads it back into the course's gradebook.

Isolation (:func:`posenc_helpers.grading.isolation.choose_isolation`): bubblewrap where it
can make namespaces; else the container itself, only where it is confined (non-root, a
read-only root filesystem, loopback only, the seccomp filter), said on standard error
and in the result; else the submission is not graded and the message names what is
missing (exit status 3). ``--unsafe`` (trusted submissions only) grades without a sandbox.

The status is ``graded``, ``refused`` (the submission is a link or a special file: not
read), ``failed`` (nbgrader could not grade it; its log's tail is in the messages) or
``not-graded`` (no sandbox). The exit status is 0 for ``graded`` and ``refused``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .isolation import NoConfinedSandbox, choose_isolation
from .processes import kill_strays
from .submission import describe_mode

__all__ = ["SCHEMA_VERSION", "RESULT_NAME", "grade_one", "main", "write_result"]

#: The version of ``result.json``'s layout; a reader refuses another.
SCHEMA_VERSION = 1
#: The result's file name in ``--out``.
RESULT_NAME = "result.json"
_UNSAFE_VARIABLE = "POSENC_GRADING_UNSAFE"  # posenc_helpers.grading.nbgrader's
_COURSE_PARTS = ("nbgrader_config.py", "gradebook.db")


def _assignment_of(release: Path, notebook: str, assignment: str | None) -> tuple[str, str]:
    """The assignment whose release holds ``notebook`` (or ``assignment``, checked) and the
    released notebook's name: ``notebook``, or the assignment's only notebook."""
    folder = release / "release"
    if assignment is not None:
        if not (folder / assignment).is_dir():
            raise ValueError(f"assignment {assignment!r} has no release in {folder}")
        if (folder / assignment / notebook).is_file():
            return assignment, notebook
        only = sorted(path.name for path in (folder / assignment).glob("*.ipynb"))
        if len(only) != 1:
            raise ValueError(f"assignment {assignment!r} has no released notebook {notebook!r} in {folder}")
        return assignment, only[0]
    found = sorted(path.parent.name for path in folder.glob(f"*/{notebook}"))
    if len(found) != 1:
        raise ValueError(
            f"the submission's name {notebook!r} matches {len(found)} released notebooks in {folder}: "
            "name the notebook as released, or pass --assignment"
        )
    return found[0], notebook


def _course_copy(release: Path, assignment: str, course: Path) -> None:
    """The parts of the course that grading ``assignment`` reads, copied into ``course``."""
    for name in _COURSE_PARTS:
        if not (release / name).is_file():
            raise ValueError(f"release must be a course folder written by make course; it has no {name}: {release}")
        shutil.copy2(release / name, course / name)
    for part in ("source", "release"):
        shutil.copytree(release / part / assignment, course / part / assignment)
    grading = release / ".grading"
    if (grading / assignment).is_dir():
        shutil.copytree(grading / assignment, course / ".grading" / assignment)
    if (grading / "lab-runs").is_dir():  # chapter 11's stored runs: large, only read
        (course / ".grading").mkdir(exist_ok=True)
        (course / ".grading" / "lab-runs").symlink_to((grading / "lab-runs").resolve())


def _messages(cells: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Each grade cell's error lines ("NoPoints: ...", "Tampering suspected: ...")."""
    found: dict[str, list[str]] = {}
    for cell in cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        for output in cell.get("outputs", []):
            if grade_id and output.get("output_type") == "error":
                line = "".join(output.get("traceback", [])) or f"{output.get('ename')}: {output.get('evalue')}"
                found.setdefault(grade_id, []).append(line)
    return found


def _maxima(pristine: Path, assignment: str, notebook: str) -> dict[str, float]:
    """Each grade cell's maximum, read from the course's gradebook ``pristine`` without writing to
    it (nbgrader's ``Gradebook`` would add a course row on opening; SQLite's read-only mode on a
    read-only volume too)."""
    query = (
        "SELECT base_cell.name, grade_cells.max_score FROM grade_cells "
        "JOIN base_cell ON base_cell.id = grade_cells.id JOIN notebook ON notebook.id = base_cell.notebook_id "
        "JOIN assignment ON assignment.id = notebook.assignment_id WHERE notebook.name = ? AND assignment.name = ?"
    )
    with contextlib.closing(sqlite3.connect(f"file:{pristine}?mode=ro&immutable=1", uri=True)) as db:
        return {name: float(points) for name, points in db.execute(query, (notebook, assignment))}


def _scores(
    course: Path, pristine: Path, assignment: str, notebook: str, student: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The grade and comment rows nbgrader wrote for the submission into the private copy
    ``course``, in the notebook's order. Each maximum is read from the course's own gradebook
    ``pristine`` (which no kernel could reach), each score is nbgrader's automatic one: in a
    fresh copy nothing else writes a score, and a manual score found there could only have
    been planted by the student's code while it ran (a container that is the sandbox)."""
    from nbgrader.api import Gradebook  # type: ignore[import-untyped]

    maxima = _maxima(pristine, assignment, notebook)
    grades, comments = [], []
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        submitted = gradebook.find_submission_notebook(notebook, assignment, student)
        for grade in submitted.grades:
            auto = None if grade.auto_score is None else float(grade.auto_score)
            grades.append({
                "grade_id": grade.name, "score": auto or 0.0, "max_score": maxima[grade.name],
                "auto_score": auto, "needs_manual_grade": bool(grade.needs_manual_grade),
                "autograded": grade.cell.cell_type == "code",
            })  # fmt: skip
        for comment in submitted.comments:
            comments.append({"grade_id": comment.name, "auto_comment": comment.auto_comment})
    return grades, comments


def write_result(out: Path, result: dict[str, Any]) -> Path:
    """Write ``result`` as ``out/result.json`` (through a temporary file and a rename)."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / RESULT_NAME
    with tempfile.NamedTemporaryFile("w", dir=out, delete=False, suffix=".tmp", encoding="utf-8") as handle:
        json.dump(result, handle, indent=1, sort_keys=True)
        handle.write("\n")
    os.replace(handle.name, path)
    return path


def grade_one(
    release: Path,
    submission: Path,
    out: Path,
    *,
    assignment: str | None = None,
    student: str = "student",
    timeout: float | None = None,
    unsafe: bool = False,
    scratch: Path | None = None,
) -> dict[str, Any]:
    """Grade ``submission`` against the course ``release``; write the autograded notebook and
    ``result.json`` into ``out``; return the result (see the module docstring).

    Raises
    ------
    TypeError, ValueError
        For an argument of the wrong kind or a course without the assignment.
    """
    for name, value in (("release", release), ("submission", submission), ("out", out)):
        if not isinstance(value, Path):
            raise TypeError(f"{name} must be a pathlib.Path; got {type(value).__name__}")
    if not isinstance(student, str) or not student or "/" in student or student.startswith("."):
        raise ValueError(f"student must be a name without '/' and not starting with '.'; got {student!r}")
    if not release.is_dir():
        raise ValueError(f"release must be a course folder written by make course; got {release}")
    start = time.perf_counter()
    notebook = submission.name
    chosen = assignment
    result: dict[str, Any] = {
        "schema": "posenc-grading-result", "schema_version": SCHEMA_VERSION, "student": student,
        "notebook": Path(notebook).stem, "status": "not-graded", "isolation": None, "isolation_notes": [],
        "cells": [], "comments": [], "total": 0.0, "max": 0.0, "messages": [],
    }  # fmt: skip
    try:
        info = os.lstat(submission)
    except FileNotFoundError:
        raise ValueError(f"submission must be a notebook file; there is none at {submission}") from None
    what = describe_mode(info.st_mode, info.st_nlink)
    chosen, notebook = _assignment_of(release, submission.name, assignment)
    result.update(assignment=chosen, notebook=Path(notebook).stem)
    if what is not None or not stat.S_ISREG(info.st_mode):
        result.update(status="refused", messages=[f"not graded, not read: the submission is {what or 'not a file'}"])
        write_result(out, result)
        return result
    try:
        isolation = choose_isolation(unsafe=unsafe)
    except NoConfinedSandbox as error:
        result["messages"] = [str(error)]
        write_result(out, result)
        raise
    result.update(isolation=isolation.kind, isolation_notes=isolation.notes)
    for note in isolation.notes:
        print(f"posenc_helpers.grading: {note}", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(prefix="posenc-one-", dir=scratch) as folder:
        course = Path(folder) / "course"
        course.mkdir()
        _course_copy(release, chosen, course)
        target = course / "submitted" / student / chosen
        target.mkdir(parents=True)
        shutil.copyfile(submission, target / notebook, follow_symlinks=False)
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        if isolation.kind == "none":
            env[_UNSAFE_VARIABLE] = "1"
        else:
            env.pop(_UNSAFE_VARIABLE, None)
        extra = [f"--SandboxedExecute.student_cell_timeout={timeout}"] if timeout else []
        ran = subprocess.run(
            [sys.executable, "-m", "nbgrader", "autograde", chosen, f"--student={student}", "--force",
             "--log-level=WARN", *extra],
            cwd=course, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if isolation.kind == "container":
            kill_strays()
        graded = course / "autograded" / student / chosen / notebook
        if ran.returncode != 0 or not graded.is_file():
            result.update(status="failed", messages=[(ran.stdout + ran.stderr)[-4000:]])
        else:
            cells = json.loads(graded.read_text(encoding="utf-8"))["cells"]
            grades, comments = _scores(course, release / "gradebook.db", chosen, Path(notebook).stem, student)
            lines = _messages(cells)
            for row in grades:
                row["messages"] = lines.get(row["grade_id"], [])
            result.update(
                status="graded", cells=grades, comments=comments,
                total=float(sum(row["score"] or 0.0 for row in grades)),
                max=float(sum(row["max_score"] or 0.0 for row in grades)),
                messages=[line for row in grades for line in row["messages"]],
            )  # fmt: skip
            out.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(graded, out / notebook)
    result["seconds"] = round(time.perf_counter() - start, 3)
    write_result(out, result)
    return result


def main(argv: list[str] | None = None) -> int:
    """``python -m posenc_helpers.grading one ...`` (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m posenc_helpers.grading one", description=__doc__.split("\n")[0])
    parser.add_argument("--release", type=Path, required=True, help="the course folder (make course's)")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--submission", type=Path, help="the submitted notebook")
    which.add_argument(
        "--index", type=Path, help="an index file (make k8s-job's): grade its submission JOB_COMPLETION_INDEX"
    )
    parser.add_argument("--out", type=Path, required=True, help="where the autograded notebook and result.json go")
    parser.add_argument("--assignment", default=None, help="the assignment (default: the one releasing the notebook)")
    parser.add_argument("--student", default="student", help="the student's id in the result (default 'student')")
    parser.add_argument("--timeout", type=float, default=None, help="seconds per cell a student wrote")
    parser.add_argument("--scratch", type=Path, default=None, help="a folder for the private course copy")
    parser.add_argument("--unsafe", action="store_true", help="grade without a sandbox: trusted submissions only")
    args = parser.parse_args(argv)
    try:
        submission, student, assignment = args.submission, args.student, args.assignment
        if args.index is not None:
            from .pod import entry_for, job_index, read_index

            entry = entry_for(read_index(args.index), job_index())
            submission = args.index.parent / entry["path"]
            student, assignment = str(entry["student"]), entry.get("assignment", assignment)
        result = grade_one(
            args.release.resolve(), submission.absolute(), args.out.absolute(),
            assignment=assignment, student=student, timeout=args.timeout, unsafe=args.unsafe,
            scratch=args.scratch,
        )  # fmt: skip
    except (TypeError, ValueError) as error:
        print(error, file=sys.stderr)
        return 2
    except NoConfinedSandbox as error:
        print(f"cannot grade: {error}", file=sys.stderr)
        return 3
    print(f"{result['student']}: {result['status']}, {result['total']:g} of {result['max']:g} points "
          f"({result['isolation']}, {result.get('seconds', 0):.1f} s)")  # fmt: skip
    return 0 if result["status"] in ("graded", "refused") else 1
