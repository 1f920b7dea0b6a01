"""Autograde a class with nbgrader, several submissions at a time: ``make grade``.

Run it as a program, in (or with ``--course``) a course that ``make course`` wrote::

    python -m tools.course.grade ASSIGNMENT [--course _build/course] [--jobs N] [--student ID ...]
                                 [--timeout SECONDS] [--unsafe]

First it runs the release once in the sandbox (:mod:`posenc_helpers.grading.reference`;
kept in ``COURSE/.grading`` until the release or the package changes): the data each
exercise gives, each cell's time limit, and chapter 11's stored training runs, which
every submission then reads back. Then it runs ``nbgrader autograde ASSIGNMENT
--student=ID`` for up to ``--jobs`` students at once (default: the machine's cores),
each in its own process, whose kernel runs in a bubblewrap sandbox of its own
(:mod:`posenc_helpers.grading.nbgrader`), against the one gradebook (SQLite; nbgrader
writes it briefly at the start and end of each submission, and a write that meets a
lock is retried). Every grade comes from the course's own preprocessors, outside the
sandbox. Without bubblewrap it refuses to grade unless ``--unsafe`` (``make grade
UNSAFE=1``).

A submission whose folder holds a symbolic link, a hard link, a device, a FIFO or a
socket (:func:`posenc_helpers.grading.submission.refused_entries`) is not graded and
not read: nbgrader would follow the link when it copies the folder. It is listed with
what was found.

At the end it prints the wall time, the seconds per submission, each refused
submission and each "Tampering suspected" line found in the autograded notebooks.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tools.course.common import DEFAULT_OUT
from tools.course.nbgrader import run_nbgrader

UNSAFE_VARIABLE = "POSENC_GRADING_UNSAFE"  # posenc_helpers.grading.nbgrader reads it

_ASSIGNMENT = re.compile(r"^ch\d\d$")
RETRIES = 3


@dataclass
class Graded:
    student: str
    seconds: float
    returncode: int
    output: str


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def students(course: Path, assignment: str) -> list[str]:
    """The students with a submission of ``assignment`` in ``course/submitted``."""
    if not isinstance(assignment, str) or not _ASSIGNMENT.match(assignment):
        raise ValueError(f"assignment must be an assignment name such as 'ch04'; got {assignment!r}")
    return sorted(path.parent.name for path in (course / "submitted").glob(f"*/{assignment}") if path.is_dir())


def prepare_reference(course: Path, assignment: str) -> float:
    """Run the release of ``assignment`` in the sandbox once (unless it is stored and current);
    the seconds it took."""
    from posenc_helpers.grading.nbgrader import BeforeExecution

    start = time.perf_counter()
    for release in sorted((course / "release" / assignment).glob("*.ipynb")):
        resources = {"nbgrader": {"assignment": assignment, "notebook": release.stem}}
        BeforeExecution(course_root=str(course)).preprocess(None, resources)
    return time.perf_counter() - start


def _grade_one(course: Path, assignment: str, student: str, timeout: float | None) -> Graded:
    extra = [f"--SandboxedExecute.student_cell_timeout={timeout}"] if timeout else []
    start = time.perf_counter()
    result = None
    for _ in range(RETRIES):
        result = run_nbgrader(
            ["autograde", assignment, f"--student={student}", "--force", *extra],
            course,
            check=False,
            capture_output=True,
        )
        if result.returncode == 0 or "database is locked" not in result.stdout + result.stderr:
            break
        time.sleep(1.0)
    assert result is not None
    return Graded(student, time.perf_counter() - start, result.returncode, result.stdout + result.stderr)


def flags(course: Path, assignment: str, student: str) -> list[str]:
    """The "Tampering suspected" lines of a student's autograded notebooks."""
    found = []
    for path in sorted((course / "autograded" / student / assignment).glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            for output in cell.get("outputs", []):
                text = "".join(output.get("traceback", [])) or f"{output.get('ename', '')}: {output.get('evalue', '')}"
                if output.get("output_type") == "error" and text.startswith("Tampering suspected"):
                    found.append(text)
    return found


def sandbox_notes(course: Path, assignment: str, student: str) -> list[str]:
    """What went wrong with a student's sandboxes, from the autograded notebooks' metadata
    (:data:`~posenc_helpers.grading.nbgrader.SANDBOX_METADATA`): a notebook that did not finish,
    and one whose sandbox had no control group on a machine that offers them."""
    from posenc_helpers.grading import cgroups
    from posenc_helpers.grading.nbgrader import SANDBOX_METADATA

    notes = []
    for path in sorted((course / "autograded" / student / assignment).glob("*.ipynb")):
        ran = json.loads(path.read_text(encoding="utf-8")).get("metadata", {}).get(SANDBOX_METADATA, {})
        if ran.get("problem"):
            notes.append(f"{path.stem}: {ran['problem']}")
        if ran.get("budget") == "none" and cgroups.available() is None:
            notes.append(f"{path.stem}: its sandbox ran without a control group (no budget for the whole sandbox)")
    return notes


def refused(course: Path, assignment: str, names: list[str]) -> dict[str, list[str]]:
    """The students of ``names`` whose submission folder holds what a grader must not follow
    (:func:`posenc_helpers.grading.submission.refused_entries`), with what it holds."""
    from posenc_helpers.grading.submission import refused_entries

    found = {}
    for name in names:
        entries = refused_entries(course / "submitted" / name / assignment)
        if entries:
            found[name] = entries
    return found


def grade_class(
    course: Path,
    assignment: str,
    *,
    jobs: int | None = None,
    only: list[str] | None = None,
    timeout: float | None = None,
) -> tuple[list[Graded], float]:
    """Autograde every submission of ``assignment`` (or the students in ``only``), ``jobs`` at
    a time; the results in student order and the wall time in seconds. A refused submission
    (:func:`refused`) is not graded: its result has return code 0 and says why."""
    jobs = cores() if jobs is None else jobs
    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        raise ValueError(f"jobs must be a whole number >= 1; got {jobs!r}")
    if not (course / "nbgrader_config.py").is_file():
        raise FileNotFoundError(f"{course} is not a course (no nbgrader_config.py): run make course first")
    names = students(course, assignment)
    if only:
        missing = sorted(set(only) - set(names))
        if missing:
            raise ValueError(f"only names students without a submission of {assignment}: {', '.join(missing)}")
        names = [name for name in names if name in only]
    if not names:
        raise FileNotFoundError(f"no submissions of {assignment} in {course / 'submitted'}")
    prepare_reference(course, assignment)
    start = time.perf_counter()
    refusals = refused(course, assignment, names)
    graded = [name for name in names if name not in refusals]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        done = {r.student: r for r in pool.map(lambda name: _grade_one(course, assignment, name, timeout), graded)}
    for name, entries in refusals.items():
        done[name] = Graded(name, 0.0, 0, REFUSED + "; ".join(entries))
    return [done[name] for name in names], time.perf_counter() - start


#: How a refused submission's result starts (the rest names what its folder holds).
REFUSED = "not graded, nothing of it read: its folder holds what a grader must not follow: "


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.course.grade", description=__doc__.split("\n\n")[0])
    parser.add_argument("assignment", help="the assignment, e.g. ch04")
    parser.add_argument("--course", type=Path, default=DEFAULT_OUT, help="the course folder (default _build/course)")
    parser.add_argument("--jobs", type=int, default=None, help="submissions graded at once (default: the cores)")
    parser.add_argument("--student", action="append", default=None, help="grade only this student (repeatable)")
    parser.add_argument("--timeout", type=float, default=None, help="seconds per cell a student wrote")
    parser.add_argument(
        "--unsafe", action="store_true", help=f"grade without a sandbox (also {UNSAFE_VARIABLE}=1): trusted code only"
    )
    args = parser.parse_args(argv)
    if args.unsafe:
        os.environ[UNSAFE_VARIABLE] = "1"
        print("grading WITHOUT a sandbox: the students' code can reach this machine", file=sys.stderr)
    try:
        results, seconds = grade_class(
            args.course.resolve(), args.assignment, jobs=args.jobs, only=args.student, timeout=args.timeout
        )
    except (ValueError, FileNotFoundError) as error:
        print(error, file=sys.stderr)
        return 2
    except RuntimeError as error:  # posenc_helpers.grading.sandbox.SandboxUnavailable among them
        print(f"cannot grade: {error}", file=sys.stderr)
        return 2
    failed = [r for r in results if r.returncode != 0]
    for result in failed:
        print(f"{result.student}: nbgrader autograde failed\n{result.output[-2000:]}", file=sys.stderr)
    print(
        f"{args.assignment}: {len(results)} submissions in {seconds:.1f} s "
        f"({seconds / len(results):.1f} s each) with {args.jobs or cores()} at a time"
    )
    for result in results:
        if result.output.startswith(REFUSED):
            print(f"  {result.student}: {result.output}")
            continue
        print(f"  {result.student}: {result.seconds:.1f} s")
        for line in flags(args.course.resolve(), args.assignment, result.student):
            print(f"  {result.student}: {line}")
        for line in sandbox_notes(args.course.resolve(), args.assignment, result.student):
            print(f"  {result.student}: {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
