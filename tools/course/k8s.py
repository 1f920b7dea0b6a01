"""An assignment's submissions as a Kubernetes Indexed Job: ``make k8s-job A=ch04``.

::

    python -m tools.course.k8s ASSIGNMENT [--course _build/course] [--out _build/k8s]
        [--parallelism N] [--image IMAGE] [--pvc NAME] [--namespace NS]
        [--deadline SECONDS] [--runtime-class NAME] [--force]

It writes ``OUT/ASSIGNMENT/``:

* ``volume/``: what goes onto the shared ReadWriteMany volume under ``ASSIGNMENT/``:
  ``index.json`` (pod ``i`` grades the submission listed with ``"index": i``), the
  course bundle ``course/`` (the parts of the course the grader reads for this
  assignment: its configuration, its gradebook without any student, the release, the
  source with its solutions replaced by the release's cells, the grader's reference
  runs), ``submissions/i/NOTEBOOK`` and an empty ``results/``;
* ``job.yaml``: a NetworkPolicy that denies every connection to and from the Job's pods,
  and the Indexed Job (``completionMode: Indexed``; completions = submissions; each pod
  1 CPU and 2 GiB, requested and limited; non-root, read-only root filesystem, no
  privilege escalation, no capability, the runtime's default seccomp profile, no
  service account token; an ``activeDeadlineSeconds``; emptyDir scratch of its own).
  Each pod stages submission ``i`` into its own folder, grades it with
  ``python -m posenc_helpers.grading one`` without the shared volume, and publishes
  ``results/i/`` (:mod:`posenc_helpers.grading.pod`);
* ``submissions.tsv``: index, student, and the submissions left out (a folder with a link
  or a special file, as ``make grade`` refuses them).

The manifests are validated offline against the Kubernetes schema
(``kubernetes-validate``, :func:`validate`). ``make k8s-merge`` (:mod:`tools.course.merge`)
reads ``results/`` back into the course's gradebook.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import yaml

from posenc_helpers.grading.nbgrader import released_with_tests
from posenc_helpers.grading.submission import refused_entries
from tools.course.common import DEFAULT_OUT, ROOT
from tools.course.grade import prepare_reference, students

__all__ = ["KUBERNETES_VERSION", "bundle", "manifests", "render", "validate", "main"]

#: The Kubernetes version the manifests are validated against (kubernetes-validate's schemas).
KUBERNETES_VERSION = "1.33.0"
DEFAULT_IMAGE = "posenc-grading:latest"
DEFAULT_OUT_K8S = ROOT / "_build" / "k8s"
POD_UID = 10001  # the image's user (deploy/k8s/Containerfile)
LABEL = "posenc-grading"


def _notebooks(course: Path, assignment: str) -> list[Path]:
    return sorted((course / "release" / assignment).glob("*.ipynb"))


def _clean_gradebook(source: Path, target: Path) -> None:
    """The course's gradebook without students, submissions or the source of any answer cell
    that is not locked (a model answer): what a pod may read."""
    shutil.copyfile(source, target)
    with sqlite3.connect(target) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        for table in ("grade", "comment", "submitted_notebook", "submitted_assignment", "student"):
            if table in tables:
                db.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed names
        if "source_cell" in tables:
            db.execute("UPDATE source_cell SET source = '' WHERE locked = 0")
    with sqlite3.connect(target) as db:
        db.execute("VACUUM")


def bundle(course: Path, assignment: str, volume: Path) -> list[dict[str, Any]]:
    """Write the assignment's part of the shared volume into ``volume`` (see the module
    docstring); the index's entries."""
    names = students(course, assignment)
    notebooks = _notebooks(course, assignment)
    if len(notebooks) != 1:
        raise ValueError(f"{assignment} must release one notebook to run as a Job; it releases {len(notebooks)}")
    notebook = notebooks[0].name
    prepare_reference(course, assignment)  # every pod reads it back instead of running the release
    bundled = volume / "course"
    (bundled / "release").mkdir(parents=True)
    shutil.copy2(course / "nbgrader_config.py", bundled / "nbgrader_config.py")
    _clean_gradebook(course / "gradebook.db", bundled / "gradebook.db")
    shutil.copytree(course / "release" / assignment, bundled / "release" / assignment)
    source = json.loads((course / "source" / assignment / notebook).read_text(encoding="utf-8"))
    release = json.loads(notebooks[0].read_text(encoding="utf-8"))
    source["cells"] = released_with_tests(release["cells"], source["cells"])  # no model answer
    (bundled / "source" / assignment).mkdir(parents=True)
    (bundled / "source" / assignment / notebook).write_text(json.dumps(source, indent=1), encoding="utf-8")
    grading = course / ".grading"
    if (grading / assignment).is_dir():
        shutil.copytree(
            grading / assignment, bundled / ".grading" / assignment, ignore=shutil.ignore_patterns("*.lock")
        )
    if (grading / "lab-runs").is_dir() and assignment == "ch11":
        shutil.copytree(grading / "lab-runs", bundled / ".grading" / "lab-runs")
    entries: list[dict[str, Any]] = []
    left_out: list[str] = []
    for name in names:
        folder = course / "submitted" / name / assignment
        if refused := refused_entries(folder):
            left_out.append(f"{name}\tnot graded: {'; '.join(refused)}")
            continue
        if not (folder / notebook).is_file():
            left_out.append(f"{name}\tnot graded: no {notebook}")
            continue
        path = f"submissions/{len(entries)}/{notebook}"
        (volume / path).parent.mkdir(parents=True)
        shutil.copyfile(folder / notebook, volume / path)
        entries.append({"index": len(entries), "student": name, "assignment": assignment, "path": path})
    if not entries:
        raise ValueError(f"no submission of {assignment} to grade in {course / 'submitted'}")
    (volume / "results").mkdir()
    index = {"schema_version": 1, "assignment": assignment, "notebook": notebook, "submissions": entries}
    (volume / "index.json").write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
    lines = [f"{entry['index']}\t{entry['student']}" for entry in entries] + left_out
    (volume.parent / "submissions.tsv").write_text("index\tstudent\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return entries


def _container(name: str, args: list[str], mounts: list[dict[str, Any]], cpu: str, memory: str) -> dict[str, Any]:
    return {
        "name": name,
        "image": "IMAGE",
        "imagePullPolicy": "IfNotPresent",
        "command": ["python", "-m", "posenc_helpers.grading", *args],
        "env": [{"name": "HOME", "value": "/scratch"}, {"name": "TMPDIR", "value": "/scratch"}],
        "resources": {"requests": {"cpu": cpu, "memory": memory}, "limits": {"cpu": cpu, "memory": memory}},
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": POD_UID,
            "runAsGroup": POD_UID,
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "privileged": False,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "volumeMounts": mounts,
    }


def manifests(
    assignment: str,
    completions: int,
    *,
    parallelism: int = 10,
    image: str = DEFAULT_IMAGE,
    pvc: str = "posenc-grading",
    namespace: str = "posenc-grading",
    deadline: int = 3600,
    runtime_class: str | None = None,
) -> list[dict[str, Any]]:
    """The NetworkPolicy and the Indexed Job that grade ``completions`` submissions of
    ``assignment`` (see the module docstring)."""
    for name, value in (("completions", completions), ("parallelism", parallelism), ("deadline", deadline)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a whole number >= 1; got {value!r}")
    if not isinstance(image, str) or not image or any(c.isspace() for c in image):
        raise ValueError(f"image must be an image reference without spaces; got {image!r}")
    job = f"{LABEL}-{assignment}"
    labels = {"app.kubernetes.io/name": LABEL, "posenc/assignment": assignment}
    stage = _container(
        "stage", ["stage", "--data", "/data", "--to", "/inputs"],
        [{"name": "shared", "mountPath": "/data", "subPath": assignment, "readOnly": True},
         {"name": "inputs", "mountPath": "/inputs"}, {"name": "scratch", "mountPath": "/scratch"}],
        "250m", "512Mi",
    )  # fmt: skip
    grade = _container(
        "grade", ["one", "--release", "/inputs/course", "--index", "/inputs/index.json", "--out", "/out",
                  "--scratch", "/scratch"],
        [{"name": "inputs", "mountPath": "/inputs", "readOnly": True}, {"name": "out", "mountPath": "/out"},
         {"name": "scratch", "mountPath": "/scratch"}],
        "1", "2Gi",
    )  # fmt: skip
    publish = _container(
        "publish", ["publish", "--from", "/out", "--to", "/results"],
        [{"name": "out", "mountPath": "/out", "readOnly": True},
         {"name": "shared", "mountPath": "/results", "subPath": f"{assignment}/results"},
         {"name": "scratch", "mountPath": "/scratch"}],
        "250m", "512Mi",
    )  # fmt: skip
    for container in (stage, grade, publish):
        container["image"] = image
    pod: dict[str, Any] = {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": POD_UID,
            "runAsGroup": POD_UID,
            "fsGroup": POD_UID,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "initContainers": [stage, grade],
        "containers": [publish],
        "volumes": [
            {"name": "shared", "persistentVolumeClaim": {"claimName": pvc}},
            {"name": "inputs", "emptyDir": {"sizeLimit": "1Gi"}},
            {"name": "out", "emptyDir": {"sizeLimit": "256Mi"}},
            {"name": "scratch", "emptyDir": {"sizeLimit": "2Gi"}},
        ],
    }
    if runtime_class:
        pod["runtimeClassName"] = runtime_class
    policy = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": f"{job}-isolated", "namespace": namespace},
        "spec": {"podSelector": {"matchLabels": dict(labels)}, "policyTypes": ["Ingress", "Egress"]},
    }
    indexed = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": job, "namespace": namespace, "labels": dict(labels)},
        "spec": {
            "completionMode": "Indexed",
            "completions": completions,
            "parallelism": min(parallelism, completions),
            "backoffLimitPerIndex": 1,
            "maxFailedIndexes": completions,
            "activeDeadlineSeconds": deadline,
            "ttlSecondsAfterFinished": 7 * 24 * 3600,
            "template": {"metadata": {"labels": dict(labels)}, "spec": pod},
        },
    }
    return [policy, indexed]


def validate(documents: list[dict[str, Any]], version: str = KUBERNETES_VERSION) -> None:
    """Validate ``documents`` against the Kubernetes ``version`` schema, strictly (no unknown
    field), offline: kubernetes-validate ships the schemas. Raises its ValidationError."""
    import kubernetes_validate  # type: ignore[import-untyped]

    for document in documents:
        kubernetes_validate.validate(document, version, strict=True)


def render(
    course: Path, assignment: str, out: Path, *, force: bool = False, **options: Any
) -> tuple[Path, list[dict[str, Any]]]:
    """Write ``out/assignment`` (the volume's part and ``job.yaml``), validated; the manifest's
    path and the index's entries."""
    folder = out / assignment
    if folder.exists():
        if not force and not (folder / ".posenc-k8s").is_file():
            raise FileExistsError(f"{folder} exists and was not written by make k8s-job: FORCE=1 replaces it")
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / ".posenc-k8s").write_text("written by make k8s-job\n", encoding="utf-8")
    entries = bundle(course, assignment, folder / "volume")
    documents = manifests(assignment, len(entries), **options)
    validate(documents)
    path = folder / "job.yaml"
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False), encoding="utf-8")
    return path, entries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.course.k8s", description=__doc__.split("\n")[0])
    parser.add_argument("assignment", help="the assignment, e.g. ch04")
    parser.add_argument("--course", type=Path, default=DEFAULT_OUT, help="the course folder (default _build/course)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT_K8S, help="where to write (default _build/k8s)")
    parser.add_argument("--parallelism", type=int, default=10, help="pods at once (default 10)")
    parser.add_argument("--image", default=DEFAULT_IMAGE, help=f"the grading image (default {DEFAULT_IMAGE})")
    parser.add_argument("--pvc", default="posenc-grading", help="the ReadWriteMany claim's name")
    parser.add_argument("--namespace", default="posenc-grading", help="the namespace (default posenc-grading)")
    parser.add_argument("--deadline", type=int, default=3600, help="activeDeadlineSeconds of the Job (default 3600)")
    parser.add_argument("--runtime-class", default=None, help="a RuntimeClass whose pods have no network")
    parser.add_argument("--force", action="store_true", help="replace an output folder make k8s-job did not write")
    args = parser.parse_args(argv)
    try:
        path, entries = render(
            args.course.resolve(), args.assignment, args.out.resolve(), force=args.force,
            parallelism=args.parallelism, image=args.image, pvc=args.pvc, namespace=args.namespace,
            deadline=args.deadline, runtime_class=args.runtime_class,
        )  # fmt: skip
    except (ValueError, FileNotFoundError, FileExistsError) as error:
        print(error, file=sys.stderr)
        return 2
    print(f"{args.assignment}: {len(entries)} submissions; {path} (validated offline against Kubernetes "
          f"{KUBERNETES_VERSION}); copy {path.parent / 'volume'} to the volume as {args.assignment}/")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
