"""What grading the course costs: the ``grading`` section of ``make bench``.

* per chapter, the grader's own run of the release in the sandbox (once per
  assignment: it fills chapter 11's store of trained models, which every submission
  then reads back) and the wall time of ``nbgrader autograde`` on one honest
  submission (the model answers in the release) in its sandbox, kernel start and the
  verdict process included; the submission must earn every autograded point;
* chapter 04's honest submission graded three times in the sandbox and three times
  without (``UNSAFE``): the sandbox's cost per submission;
* chapter 04 graded for six such submissions one at a time and then as many at a
  time as the machine has cores (``make grade``, :mod:`tools.course.grade`), and the
  speed-up (budget: at least 1.7 on two cores);
* from those, the hours that grading 200 students x every measured chapter takes
  on this machine, one at a time and in parallel.

``POSENC_BENCH_GRADING_CHAPTERS=01,04`` measures only those chapters.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

CLASS_SIZE = 200
PARALLEL_SUBMISSIONS = 6
SPEEDUP_BUDGET = 1.7  # on two cores (make grade JOBS=2)


class Measurement(NamedTuple):
    """One line of the grading section; :mod:`benchmarks.bench` makes it a ``Row``."""

    item: str
    measured: float
    unit: str
    budget: float | None  # None: reported, not budgeted
    higher_is_better: bool = False


def honest_submission(source: dict[str, Any], release: dict[str, Any]) -> dict[str, Any]:
    """The release with each code answer cell holding the source's model answer."""
    answers = {
        cell["metadata"]["nbgrader"]["grade_id"]: "".join(cell["source"])
        for cell in source["cells"]
        if cell["cell_type"] == "code" and cell.get("metadata", {}).get("nbgrader", {}).get("solution")
    }
    for cell in release["cells"]:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if cell["cell_type"] == "code" and grade_id in answers:
            cell["source"] = re.sub(r"^### (BEGIN|END) SOLUTION\n?", "", answers[grade_id], flags=re.MULTILINE)
    return release


def _submit(course: Path, name: str, student: str) -> int:
    """Write the honest submission of assignment ``name`` for ``student``; its autograded points."""
    total = 0
    for path in sorted((course / "release" / name).glob("*.ipynb")):
        source = json.loads((course / "source" / name / path.name).read_text(encoding="utf-8"))
        release = json.loads(path.read_text(encoding="utf-8"))
        folder = course / "submitted" / student / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / path.name).write_text(json.dumps(honest_submission(source, release)), encoding="utf-8")
        total += sum(
            int(cell["metadata"]["nbgrader"].get("points", 0))
            for cell in source["cells"]
            if cell["cell_type"] == "code" and cell.get("metadata", {}).get("nbgrader", {}).get("grade")
        )
    return total


def _autograde(course: Path, name: str, student: str, *, unsafe: bool = False) -> float:
    """Seconds of ``nbgrader autograde`` on one submission (in its sandbox unless ``unsafe``)."""
    from tools.course import run_nbgrader

    saved = os.environ.pop("POSENC_GRADING_UNSAFE", None)
    if unsafe:
        os.environ["POSENC_GRADING_UNSAFE"] = "1"  # nbgrader's process inherits it
    try:
        start = time.perf_counter()
        run_nbgrader(["autograde", name, f"--student={student}", "--force"], course, capture_output=True)
        return time.perf_counter() - start
    finally:
        os.environ.pop("POSENC_GRADING_UNSAFE", None)
        if saved is not None:
            os.environ["POSENC_GRADING_UNSAFE"] = saved


def bench_grading() -> list[Measurement]:
    """Measure grading the course: one :class:`Measurement` per line of the report."""
    from tools.course import chapters_with_exercises, write_course
    from tools.course.grade import cores, grade_class, prepare_reference

    wanted = {c for c in os.environ.get("POSENC_BENCH_GRADING_CHAPTERS", "").split(",") if c}
    chapters = [p for p in chapters_with_exercises() if not wanted or p.name[:2] in wanted]
    rows: list[Measurement] = []
    course = Path(tempfile.mkdtemp(prefix="posenc-grading-"))
    try:
        names = write_course(course, chapters)
        per_chapter = {}
        for name in names:
            points = _submit(course, name, "honest")
            reference = prepare_reference(course, name)
            rows.append(Measurement(f"{name}: the release run in the sandbox (once)", reference, "s", None))
            per_chapter[name] = _autograde(course, name, "honest")
            from nbgrader.api import Gradebook  # type: ignore[import-untyped]

            with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
                earned = gradebook.find_submission(name, "honest").code_score
            note = "" if earned == points else f" (earned {earned:g} of {points}: WRONG)"
            rows.append(Measurement(f"{name}: autograde one honest submission{note}", per_chapter[name], "s", None))
        if "ch04" in names:
            sandboxed = min(_autograde(course, "ch04", "honest") for _ in range(3))
            bare = min(_autograde(course, "ch04", "honest", unsafe=True) for _ in range(3))
            rows.append(Measurement("ch04: one submission in the sandbox (best of 3)", sandboxed, "s", None))
            rows.append(Measurement("ch04: the same without it, UNSAFE (best of 3)", bare, "s", None))
            rows.append(Measurement("the sandbox's cost per submission", sandboxed - bare, "s", None))
            for i in range(PARALLEL_SUBMISSIONS):
                _submit(course, "ch04", f"class-{i}")
            students = [f"class-{i}" for i in range(PARALLEL_SUBMISSIONS)]
            _, one = grade_class(course, "ch04", jobs=1, only=students)
            jobs = cores()
            _, many = grade_class(course, "ch04", jobs=jobs, only=students)
            rows.append(Measurement(f"ch04: {PARALLEL_SUBMISSIONS} submissions, one at a time", one, "s", None))
            rows.append(Measurement(f"ch04: {PARALLEL_SUBMISSIONS} submissions, {jobs} at a time", many, "s", None))
            speedup = one / many
            budget = SPEEDUP_BUDGET if jobs == 2 else None
            rows.append(Measurement(f"speed-up of make grade JOBS={jobs}", speedup, "x", budget, True))
        else:
            speedup = 1.0
        hours = CLASS_SIZE * sum(per_chapter.values()) / 3600
        label = f"{CLASS_SIZE} students x {len(names)} chapters"
        rows.append(Measurement(f"{label}, one at a time", hours, "h", None))
        rows.append(Measurement(f"{label}, make grade on this machine", hours / speedup, "h", None))
    finally:
        shutil.rmtree(course, ignore_errors=True)
    return rows
