"""What grading the course costs: the ``grading`` section of ``make bench``.

* per chapter, the wall time of ``nbgrader autograde`` on one honest submission
  (the model answers in the release), kernel start and the grader's verdict
  process included; the submission must earn every autograded point;
* chapter 04 graded for four such submissions one at a time and then as many at
  a time as the machine has cores (``make grade``, :mod:`tools.course.grade`), and the
  speed-up;
* from those, the hours that grading 200 students x every measured chapter takes
  on this machine, one at a time and in parallel.

``POSENC_BENCH_GRADING_CHAPTERS=01,04`` measures only those chapters (chapter 11
trains its models once, into a store the other submissions read back).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

CLASS_SIZE = 200
PARALLEL_SUBMISSIONS = 4


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


def bench_grading() -> list[Any]:
    from benchmarks.bench import Row
    from tools.course import chapters_with_exercises, run_nbgrader, write_course
    from tools.course.grade import cores, grade_class

    wanted = {c for c in os.environ.get("POSENC_BENCH_GRADING_CHAPTERS", "").split(",") if c}
    chapters = [p for p in chapters_with_exercises() if not wanted or p.name[:2] in wanted]
    rows: list[Row] = []
    course = Path(tempfile.mkdtemp(prefix="posenc-grading-"))
    saved = os.environ.get("POSENC_LAB_CACHE")
    os.environ.setdefault("POSENC_LAB_CACHE", str(course / "lab-runs"))
    try:
        names = write_course(course, chapters)
        per_chapter = {}
        for name in names:
            points = _submit(course, name, "honest")
            start = time.perf_counter()
            run_nbgrader(["autograde", name, "--student=honest"], course, capture_output=True)
            per_chapter[name] = time.perf_counter() - start
            from nbgrader.api import Gradebook

            with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
                earned = gradebook.find_submission(name, "honest").code_score
            note = "" if earned == points else f" (earned {earned:g} of {points}: WRONG)"
            rows.append(Row("grading", f"{name}: autograde one honest submission{note}", per_chapter[name], "s", None))
        if "ch04" in names:
            for i in range(PARALLEL_SUBMISSIONS):
                _submit(course, "ch04", f"class-{i}")
            students = [f"class-{i}" for i in range(PARALLEL_SUBMISSIONS)]
            _, one = grade_class(course, "ch04", jobs=1, only=students)
            jobs = cores()
            _, many = grade_class(course, "ch04", jobs=jobs, only=students)
            rows.append(Row("grading", f"ch04: {PARALLEL_SUBMISSIONS} submissions, one at a time", one, "s", None))
            rows.append(Row("grading", f"ch04: {PARALLEL_SUBMISSIONS} submissions, {jobs} at a time", many, "s", None))
            speedup = one / many
            rows.append(Row("grading", f"speed-up of make grade JOBS={jobs}", speedup, "x", None, True))
        else:
            speedup = 1.0
        hours = CLASS_SIZE * sum(per_chapter.values()) / 3600
        label = f"{CLASS_SIZE} students x {len(names)} chapters"
        rows.append(Row("grading", f"{label}, one at a time", hours, "h", None))
        rows.append(Row("grading", f"{label}, make grade on this machine", hours / speedup, "h", None))
    finally:
        if saved is None:
            os.environ.pop("POSENC_LAB_CACHE", None)
        shutil.rmtree(course, ignore_errors=True)
    return rows
