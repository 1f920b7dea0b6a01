"""The course's Kubernetes Job played here, pod by pod, and merged: the same gradebook as ``make grade``.

``make k8s-job`` (tools/course/k8s.py) renders the Job for chapter 04's submissions;
each pod is then played as the cluster would run it: its three steps' argv taken from the
rendered manifest (``stage``, ``one``, ``publish``), the mount paths mapped to folders
here, ``JOB_COMPLETION_INDEX`` set, a scratch folder of its own, the shared volume a
folder all pods share. ``make k8s-merge`` (tools/course/merge.py) writes the results into
the course's gradebook and feedback. The same submissions are graded by ``make grade``
(tools/course/grade.py) in a copy of the course taken before either ran, and the two
gradebooks, and nbgrader's CSV exports of them, must be equal.

The batch: honest (right; one mistake), blank (the release untouched), a kernel
tampering kind of ``_chapter04.TAMPERING`` and attacks on the grader of
``_chapter04.hostile`` (a ``.pth`` planted in the environment, the gradebook written by
its path, a snoop of the environment and the class). Expected points are worked out from
chapter 04's exercises (2, 2 and 3 points; 7 for a right submission).

Slow (each submission runs the chapter twice in a sandbox): ``make test-course``.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from _chapter04 import CHAPTER, CORRECT, POINTS, TAMPERING, hostile

from posenc_helpers.grading import sandbox
from tools.course import run_nbgrader, write_course

pytestmark = pytest.mark.skipif(sandbox.available() is not None, reason=f"no sandbox: {sandbox.available()}")

ASSIGNMENT = "ch04"
MARKER = f"k8s{os.getpid() % 10000:04d}"
ANSWERS = {f"{label}-answer": answer for label, answer in CORRECT.items()}
SWAPPED = ANSWERS["ex-04-row-answer"].replace("np.sin(7 * w), np.cos(7 * w)", "np.cos(7 * w), np.sin(7 * w)")
FULL, NOTHING = dict(POINTS), dict.fromkeys(POINTS, 0.0)
EXPECTED = {
    "correct": FULL,
    "mistake": {"ex-04-row": 0.0, "ex-04-wavelength": 2.0, "ex-04-layout": 3.0},
    "blank": NOTHING,
    "tamper-machinery": NOTHING,
    "hostile-pth": NOTHING,
    "hostile-gradebook": NOTHING,
    "hostile-snoop": NOTHING,
}


def _submit(course: Path, student: str, edits: dict[str, str]) -> None:
    nb = json.loads((course / "release" / ASSIGNMENT / CHAPTER.name).read_text())
    for cell in nb["cells"]:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in edits:
            cell["source"] = edits[grade_id]
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    (folder / CHAPTER.name).write_text(json.dumps(nb, indent=1))


def _pod_argv(container: dict, volume: Path, pod: Path) -> list[str]:
    """A container's command as this machine runs it: the image's python is this one, and each
    mount path is the folder that plays its volume."""
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    places = {"inputs": pod / "inputs", "out": pod / "out", "scratch": pod / "scratch"}
    paths = {}
    for path, mount in mounts.items():
        paths[path] = volume.parent / mount["subPath"] if mount["name"] == "shared" else places[mount["name"]]
    argv = []
    for arg in container["command"]:
        for path, here in paths.items():
            if arg == path or arg.startswith(path + "/"):
                arg = str(here) + arg[len(path) :]
        argv.append(arg)
    assert argv[:3] == ["python", "-m", "posenc_helpers.grading"]
    return [sys.executable, *argv[1:]]


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    from tools.course import grade, k8s, merge

    root = tmp_path_factory.mktemp("k8s")
    course = root / "course"
    write_course(course, [CHAPTER])
    attacks = hostile(str(course), MARKER)
    batch = {
        "correct": dict(ANSWERS),
        "mistake": {**ANSWERS, "ex-04-row-answer": SWAPPED},
        "blank": {},
        "tamper-machinery": {"ex-04-row-answer": TAMPERING["machinery"]},
        **{f"hostile-{kind}": {"ex-04-row-answer": attacks[kind]} for kind in ("pth", "gradebook", "snoop")},
    }
    for student, edits in batch.items():
        _submit(course, student, edits)
    path, entries = k8s.render(course, ASSIGNMENT, root / "k8s", parallelism=2)
    graded = root / "graded"  # make grade's copy: the course before either grader ran
    shutil.copytree(course, graded, symlinks=True)
    assert grade.main([ASSIGNMENT, "--course", str(graded), "--jobs", "1", "--timeout", "10"]) == 0
    run_nbgrader(["export", f"--to={graded / 'make-grade.csv'}"], graded)

    job = list(yaml.safe_load_all(path.read_text()))[1]
    spec = job["spec"]["template"]["spec"]
    steps = spec["initContainers"] + spec["containers"]
    volume = root / "k8s" / ASSIGNMENT / "volume"
    shared = root / "shared"  # the ReadWriteMany volume, holding ASSIGNMENT/ as the guide copies it
    shared.mkdir()
    shutil.copytree(volume, shared / ASSIGNMENT)
    logs = []
    for index in range(job["spec"]["completions"]):
        pod = root / "pods" / str(index)
        for name in ("inputs", "out", "scratch"):
            (pod / name).mkdir(parents=True)
        env = {**os.environ, "JOB_COMPLETION_INDEX": str(index), "HOME": str(pod / "scratch"),
               "TMPDIR": str(pod / "scratch")}  # fmt: skip
        for step in steps:
            ran = subprocess.run(_pod_argv(step, shared / ASSIGNMENT, pod), env=env, capture_output=True, text=True)
            logs.append((index, step["name"], ran.returncode, ran.stdout + ran.stderr))
    merged, left = merge.merge(course, ASSIGNMENT, shared / ASSIGNMENT)
    yield {"course": course, "graded": graded, "entries": entries, "logs": logs, "merged": merged, "left": left,
           "shared": shared / ASSIGNMENT}  # fmt: skip
    shutil.rmtree(root, ignore_errors=True)


def _gradebook(course: Path) -> dict[str, dict[str, tuple]]:
    from nbgrader.api import Gradebook

    found = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for student in EXPECTED:
            notebook = gradebook.find_submission_notebook(CHAPTER.stem, ASSIGNMENT, student)
            found[student] = {
                **{g.name: (g.score, g.auto_score, g.max_score, g.needs_manual_grade) for g in notebook.grades},
                **{f"{c.name}:comment": c.auto_comment for c in notebook.comments},
            }
    return found


def test_every_pod_step_succeeded(played):
    failed = [f"pod {i} {step}: {rc}\n{log[-1500:]}" for i, step, rc, log in played["logs"] if rc != 0]
    assert not failed, "\n".join(failed)
    assert len(played["logs"]) == 3 * len(EXPECTED)


def test_each_pod_graded_the_submission_its_index_names(played):
    for entry in played["entries"]:
        result = json.loads((played["shared"] / "results" / str(entry["index"]) / "result.json").read_text())
        assert result["student"] == entry["student"] and result["status"] == "graded"
        assert result["isolation"] == "bwrap" and result["schema_version"] == 1
        earned = {row["grade_id"]: row["score"] for row in result["cells"] if row["autograded"]}
        assert earned == EXPECTED[entry["student"]]
        assert result["total"] == sum(EXPECTED[entry["student"]].values())  # the written answer: 0 until read
        assert result["max"] == 9.0  # 7 autograded points and the written answer's 2


def test_the_merge_gives_the_gradebook_make_grade_gives(played):
    assert sorted(played["merged"]) == sorted(EXPECTED) and played["left"] == []
    merged, graded = _gradebook(played["course"]), _gradebook(played["graded"])
    assert merged == graded
    for student, points in EXPECTED.items():
        assert {grade_id: merged[student][grade_id][0] for grade_id in POINTS} == points


def test_the_merge_writes_the_csv_make_grade_s_export_writes(played):
    def rows(path):
        with path.open() as handle:
            return sorted(tuple(row.values()) for row in csv.DictReader(handle))

    merged = rows(played["course"] / f"grades-{ASSIGNMENT}.csv")
    assert merged == rows(played["graded"] / "make-grade.csv")
    assert {row[3]: float(row[7]) for row in merged} == {s: sum(p.values()) for s, p in EXPECTED.items()}


def test_the_merge_writes_each_student_s_feedback(played):
    for student in EXPECTED:
        feedback = played["course"] / "feedback" / student / ASSIGNMENT / f"{CHAPTER.stem}.html"
        assert feedback.is_file(), student
    assert (
        "Tampering suspected"
        in (played["course"] / "feedback" / "tamper-machinery" / ASSIGNMENT / f"{CHAPTER.stem}.html").read_text()
    )
