"""The same exercises as otter-grader assignments (Gradescope): ``make otter``.

Each chapter becomes an otter-grader master notebook (``OUT/chNN/``) made from its
nbgrader source (:func:`tools.course.nbgrader.course_notebook_with_roles`): the same
answer cells and visible checks, and one otter test per exercise that always fails,
so that an autograder without the course's plugin gives nothing rather than
everything. ``otter assign`` then writes the student notebook and the Gradescope
autograder zip into ``OUT/chNN/dist``. Then this module

* runs the student notebook, with one recording cell per exercise, in the sandbox:
  the grader's own run of the release (:mod:`posenc_helpers.grading.reference`);
* writes the course's plugin (:mod:`posenc_helpers.grading.otter`) and its
  configuration into the zip's ``otter_config.json``: the exercises, the digests of
  the handed-out cells, the recording cells and that run;
* puts a wheel of ``posenc_helpers`` (the plugin and the checks live in it) into the
  zip and its requirements, Python 3.11 (``runtime.txt``) into its environment, and
  bubblewrap into its ``setup.sh``.

``otter run -a <zip> <submission>`` grades locally; Gradescope grades the upload.
Written answers are left for a person to grade.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from posenc_helpers.grading.verdict import RECORD_IMPORT
from tools.course.common import GRADING, ROOT, RUNTIME, assignment_name, chapter_of, pins, prepare, run_script
from tools.course.myst import cell_source
from tools.course.nbgrader import TEXT_STUB, course_notebook_with_roles, record_call

PLUGIN = "posenc_helpers.grading.otter.GradeFromRecords"
OTTER_CONFIG = """# ASSIGNMENT CONFIG
name: {name}
requirements: requirements.txt
python_version: "{python}"
autograder_files:
  - {wheel}
init_cell: true
check_all_cell: false
export_cell: false
run_tests: false
generate:
  pdf: false
  show_stdout: true
tests:
  ok_format: false
"""
#: Where Gradescope unpacks the autograder zip's files.
AUTOGRADER_FILES = "/autograder/source/files"
#: Added to the zip's setup.sh: bubblewrap, for the sandbox where the container allows one.
SETUP_SANDBOX = (
    "\n# The course's plugin runs each submission in a bubblewrap sandbox where the container allows\n"
    "# one, else as a user of its own (posenc_helpers.grading.sandbox); that user must reach the\n"
    "# conda environment under /root to run Python (traverse only: /root's files stay unlisted).\n"
    "apt-get update && apt-get install -y bubblewrap || true\n"
    "chmod o+x /root\n"
)


def _raw(text: str) -> dict[str, Any]:
    return {"cell_type": "raw", "metadata": {}, "source": text}


def otter_test(label: str) -> str:
    """The otter test of exercise ``label``: it always fails.

    The points come from the course's otter plugin (:mod:`posenc_helpers.grading.otter`),
    which runs the submission in a sandbox and grades it from outside, so that an
    autograder without the plugin gives nothing rather than everything.
    """
    name = "test_" + re.sub(r"\W", "_", label)
    return (
        f'""" # BEGIN TEST CONFIG\nhidden: true\nfailure_message: "{label}: graded outside the notebook; '
        'run the visible check for a hint."\n""" # END TEST CONFIG\n'
        f"def {name}():\n"
        f"    raise AssertionError({label + ': awaiting the verdict of the grading plugin'!r})\n"
    )


def record_cell(check_source: str, label: str, exercise: dict[str, Any]) -> str:
    """The cell the plugin appends to a submission to record exercise ``label``'s answer."""
    return f"{RECORD_IMPORT}\n\n{record_call(check_source, label, exercise)}\n"


def otter_notebook(book_nb: dict[str, Any], chapter: int, *, wheel: str = "") -> tuple[dict[str, Any], dict[str, Any]]:
    """The otter-grader master notebook of a chapter (from the book's notebook), and the
    plugin's configuration so far: ``specs`` and ``record_cells`` per exercise. ``wheel``
    is the file name of the package's wheel, beside the notebook."""
    source, roles, _ = course_notebook_with_roles(book_nb, chapter)
    python = (ROOT / "runtime.txt").read_text().strip().removeprefix("python-")
    header = OTTER_CONFIG.format(name=f"ch{chapter:02d}", python=python, wheel=wheel)
    cells: list[dict[str, Any]] = [_raw(header)]
    opened: set[str] = set()  # the exercises whose question has begun
    specs: dict[str, Any] = {}
    record_cells: dict[str, str] = {}
    from posenc_helpers.grading.verdict import released_spec

    for cell, role in zip(source["cells"], roles, strict=True):
        text = cell_source(cell)
        plain = copy.deepcopy(cell)
        plain["metadata"] = {k: v for k, v in cell.get("metadata", {}).items() if k not in ("nbgrader", "exercise")}
        if role is None:
            cells.append(plain)
            continue
        exercise, part = role
        label = exercise.label
        if part in ("setup", "answer") and label not in opened:
            opened.add(label)
            prompt = cells.pop() if cells and cells[-1]["cell_type"] == "markdown" else None
            cells.append(_raw(f"# BEGIN QUESTION\nname: {label}\npoints: {exercise.points}"))
            if prompt is not None:
                cells.append(prompt)
        if part == "answer":
            plain["source"] = text.replace("### BEGIN SOLUTION", "# BEGIN SOLUTION").replace(
                "### END SOLUTION", "# END SOLUTION"
            )
            cells += [_raw("# BEGIN SOLUTION"), plain, _raw("# END SOLUTION")]
        elif part == "check":
            visible = text.split("### END HIDDEN TESTS")[-1].strip()
            plain["source"] = visible
            test: dict[str, Any] = {
                "cell_type": "code",
                "execution_count": None,
                "id": f"{label}-otter-test",
                "metadata": {},
                "outputs": [],
                "source": otter_test(label),
            }
            cells += [plain, _raw("# BEGIN TESTS"), test, _raw("# END TESTS"), _raw("# END QUESTION")]
            record_cells[label] = record_cell(visible, label, exercise.options())
            spec = released_spec(record_cells[label])
            if spec is None:
                raise ValueError(f"{label}: its check call cannot be recorded")
            specs[label] = dataclasses.asdict(spec)
        elif part == "words":  # written answers: graded by hand, the model answer left out
            plain["source"] = re.sub(r"### BEGIN SOLUTION.*?### END SOLUTION", TEXT_STUB, text, flags=re.DOTALL)
            cells.append(plain)
        else:
            cells.append(plain)
    cells[0] = _raw(cell_source(cells[0]) + "plugins:\n  - " + PLUGIN + "\n")
    seen: set[str] = set()
    for index, cell in enumerate(cells):  # nbformat 4.5 wants a unique id on every cell
        if not cell.get("id") or cell["id"] in seen:
            cell["id"] = f"otter-{index}"
        seen.add(cell["id"])
    master = copy.deepcopy(source)
    master["cells"] = cells
    return master, {"specs": specs, "record_cells": record_cells}


def otter_requirements(wheel: str) -> str:
    """The grading image's requirements: the book's pins, and the package's wheel from the zip."""
    return (
        "# Written by tools/course (make otter): what Gradescope installs to grade.\n"
        + "\n".join([*pins(RUNTIME), *pins(GRADING, "requirements-course.txt"), f"{AUTOGRADER_FILES}/{wheel}"])
        + "\n"
    )


def build_wheel(folder: Path) -> Path:
    """A wheel of posenc_helpers, built offline from a copy of the package (the repository stays
    untouched), into ``folder``."""
    with tempfile.TemporaryDirectory(prefix="posenc-wheel-") as scratch:
        tree = Path(scratch) / "tree"
        tree.mkdir()
        for name in ("pyproject.toml", "README.md", "LICENSE", "LICENSE-TEXT"):
            shutil.copy2(ROOT / name, tree / name)
        shutil.copytree(ROOT / "posenc_helpers", tree / "posenc_helpers", ignore=shutil.ignore_patterns("__pycache__"))
        subprocess.run(
            [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(folder), str(tree)],
            check=True,
            capture_output=True,
            text=True,
        )
    (wheel,) = folder.glob("posenc_helpers-*.whl")
    return wheel


def released_cells(student: dict[str, Any], record_cells: dict[str, str]) -> tuple[list[dict[str, Any]], list[str]]:
    """What the plugin's grader runs for the release (the student notebook as handed out,
    without otter's own cells, then the recording cells), and the digests of every code cell
    handed out."""
    from posenc_helpers.grading.execute import graded_cells
    from posenc_helpers.grading.verdict import source_digest

    digests = sorted({source_digest(cell_source(c)) for c in student["cells"] if c["cell_type"] == "code"})
    cells, _ = graded_cells(student["cells"], set(digests), record_cells)
    return cells, digests


def plugin_config(student: dict[str, Any], config: dict[str, Any], *, isolation: str) -> dict[str, Any]:
    """The plugin's whole configuration: ``config`` (specs, record cells), the released digests,
    and the grader's run of the release, made now in the sandbox."""
    from posenc_helpers.grading.reference import code_digests, run_reference

    cells, digests = released_cells(student, config["record_cells"])
    reference = run_reference(cells, isolation=isolation)
    return {
        **config,
        "released": digests,
        "reference": dataclasses.asdict(reference),
        "reference_code": code_digests(cells),
        "isolation": "auto",
    }


def _rewrite_zip(path: Path, plugin: dict[str, Any]) -> None:
    """The autograder zip with the plugin's configuration in otter_config.json and bubblewrap in setup.sh."""
    with zipfile.ZipFile(path) as old:
        members = {info.filename: old.read(info) for info in old.infolist()}
    config = json.loads(members["otter_config.json"])
    config["plugins"] = [{PLUGIN: plugin}]
    members["otter_config.json"] = json.dumps(config, indent=2).encode()
    setup = members["setup.sh"].decode()
    if SETUP_SANDBOX not in setup:
        members["setup.sh"] = (setup.rstrip("\n") + "\n" + SETUP_SANDBOX).encode()
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as new:
        for name, data in members.items():
            new.writestr(name, data)


def write_otter(out: Path, chapters: list[Path], *, force: bool = False, isolation: str = "bwrap") -> list[Path]:
    """Write each chapter's otter master notebook into ``out/chNN/``, run ``otter assign`` on it
    (into ``out/chNN/dist``), run the release in the sandbox (``isolation``) and complete the
    autograder zip (see the module docstring); the autograder zip files."""
    prepare(out, force)
    zips = []
    for path in chapters:
        name = assignment_name(path)
        folder = out / name
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        wheel = build_wheel(folder)
        (folder / "requirements.txt").write_text(otter_requirements(wheel.name), encoding="utf-8")
        nb = json.loads(path.read_text(encoding="utf-8"))
        master, config = otter_notebook(nb, chapter_of(path), wheel=wheel.name)
        (folder / path.name).write_text(json.dumps(master, indent=1, ensure_ascii=False) + "\n")
        run_script("otter", ["assign", path.name, "dist"], folder)
        student = json.loads((folder / "dist" / "student" / path.name).read_text(encoding="utf-8"))
        plugin = plugin_config(student, config, isolation=isolation)
        for autograder in sorted((folder / "dist" / "autograder").glob("*.zip")):
            _rewrite_zip(autograder, plugin)
            zips.append(autograder)
        beside = folder / "dist" / "autograder" / "otter_config.json"  # the copy otter leaves beside the zip
        if beside.is_file():
            config_beside = json.loads(beside.read_text(encoding="utf-8"))
            config_beside["plugins"] = [{PLUGIN: plugin}]
            beside.write_text(json.dumps(config_beside, indent=2), encoding="utf-8")
    return zips
