"""The steps of one pod of the course's Kubernetes Job: stage, grade, publish.

``make k8s-job`` (``tools.course.k8s``) renders an Indexed Job whose pod ``i`` grades
submission ``i``. Its three steps, each a container running this package's commands::

    python -m posenc_helpers.grading stage --data /data --to /inputs        # trusted
    python -m posenc_helpers.grading one --release /inputs/course \\
        --index /inputs/index.json --out /out --scratch /scratch             # the student's code
    python -m posenc_helpers.grading publish --from /out --to /results       # trusted

The index (``index.json``, written by ``make k8s-job``) maps ``JOB_COMPLETION_INDEX``,
which Kubernetes sets in each pod, to a submission. :func:`stage` copies the course
bundle and submission ``i`` alone from the shared volume (mounted read-only) into the
pod's own ``/inputs``: the grading step, which runs the student's code, never mounts the
shared volume, so it can read no classmate's notebook and change no other result.
:func:`publish` copies the result and the autograded notebook, regular files only and
within a size, to ``results/i/`` on the shared volume, after the grading step (and
every process it started) ended.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

from .submission import describe_mode, refused_entries

__all__ = ["INDEX_VARIABLE", "MAX_RESULT_BYTES", "entry_for", "job_index", "publish", "read_index", "stage"]

#: The environment variable Kubernetes sets in each pod of an Indexed Job.
INDEX_VARIABLE = "JOB_COMPLETION_INDEX"
#: The most a result or an autograded notebook may weigh to be published.
MAX_RESULT_BYTES = 64 * 2**20
INDEX_SCHEMA_VERSION = 1


def job_index(environ: dict[str, str] | None = None) -> int:
    """This pod's index, from ``JOB_COMPLETION_INDEX``.

    Examples
    --------
    >>> job_index({"JOB_COMPLETION_INDEX": "3"})
    3
    """
    value = (os.environ if environ is None else environ).get(INDEX_VARIABLE)
    if value is None or not value.isdigit():
        raise ValueError(f"{INDEX_VARIABLE} must be set to a whole number >= 0 (an Indexed Job sets it); got {value!r}")
    return int(value)


def read_index(path: Path) -> dict[str, Any]:
    """The index file ``path`` (``make k8s-job``'s), checked."""
    if not isinstance(path, Path):
        raise TypeError(f"path must be a pathlib.Path; got {type(path).__name__}")
    index = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(index, dict) or index.get("schema_version") != INDEX_SCHEMA_VERSION:
        raise ValueError(f"{path} is not an index of schema version {INDEX_SCHEMA_VERSION} (make k8s-job writes it)")
    return index


def entry_for(index: dict[str, Any], number: int) -> dict[str, Any]:
    """The submission of ``index`` whose ``"index"`` is ``number``."""
    found = [entry for entry in index.get("submissions", []) if entry.get("index") == number]
    if len(found) != 1:
        raise ValueError(f"the index lists no single submission for {INDEX_VARIABLE}={number}")
    entry = found[0]
    path = Path(str(entry.get("path", "")))
    if path.is_absolute() or ".." in path.parts or not path.parts:
        raise ValueError(f"the index's path for {number} must be relative, inside its folder; got {path}")
    return entry


def _copy_file(source: Path, target: Path, limit: int) -> None:
    """Copy the regular file ``source`` (no link followed) of at most ``limit`` bytes."""
    info = os.lstat(source)
    what = describe_mode(info.st_mode, info.st_nlink)
    if what is not None or not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{source.name} is {what or 'not a regular file'}: not copied")
    if info.st_size > limit:
        raise ValueError(f"{source.name} is larger than {limit} bytes: not copied")
    descriptor = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(descriptor, "rb") as handle:
        data = handle.read(limit + 1)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def stage(data: Path, inputs: Path, number: int | None = None) -> dict[str, Any]:
    """Copy the course bundle and submission ``number`` (default: this pod's) from ``data`` (the
    assignment's folder on the shared volume) into ``inputs``; write ``inputs/index.json`` with
    that one submission. The entry staged."""
    number = job_index() if number is None else number
    entry = entry_for(read_index(data / "index.json"), number)
    if refused := refused_entries(data / "course"):
        raise ValueError(f"the course bundle holds what a grader must not follow: {'; '.join(refused)}")
    shutil.copytree(data / "course", inputs / "course", symlinks=False)
    submission = Path(entry["path"])
    _copy_file(data / submission, inputs / submission, MAX_RESULT_BYTES)
    index = {"schema_version": INDEX_SCHEMA_VERSION, "submissions": [entry]}
    (inputs / "index.json").write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
    return entry


def publish(out: Path, results: Path, number: int | None = None) -> Path:
    """Copy ``out/result.json`` and the autograded notebook it names (regular files, each at most
    :data:`MAX_RESULT_BYTES`) into ``results/NUMBER/`` (default: this pod's index); that folder."""
    number = job_index() if number is None else number
    target = results / str(number)
    staging = results / f".{number}.partial"
    if staging.exists():
        shutil.rmtree(staging)
    _copy_file(out / "result.json", staging / "result.json", MAX_RESULT_BYTES)
    result = json.loads((staging / "result.json").read_text(encoding="utf-8"))
    name = f"{result.get('notebook')}.ipynb"
    if result.get("status") == "graded":
        if "/" in name or name.startswith("."):
            raise ValueError(f"the result names an odd notebook: {name!r}")
        _copy_file(out / name, staging / name, MAX_RESULT_BYTES)
    if target.exists():
        shutil.rmtree(target)
    os.replace(staging, target)
    return target
