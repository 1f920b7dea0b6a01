"""The same exercises as otter-grader assignments (Gradescope): ``make otter``.

Each chapter becomes an otter-grader master notebook (``OUT/chNN/``) made from its
nbgrader source (:func:`tools.course.nbgrader.course_notebook_with_roles`): the same
answer cells, the visible check kept, and the hidden tests as one exception-based
otter test per exercise that records the answer, judged by the course's otter plugin
(:mod:`posenc_helpers.checks._otter`, named with its configuration in the assignment
config); ``otter assign`` then writes the student notebook and the Gradescope
autograder zip into ``OUT/chNN/dist``, and ``otter run -a <zip> <submission>``
grades locally. Written answers are left for a person to grade.
"""

from __future__ import annotations

import ast
import builtins
import copy
import dataclasses
import json
import re
import shutil
from pathlib import Path
from typing import Any

from tools.course.common import RUNTIME, assignment_name, chapter_of, pins, prepare, run_script
from tools.course.myst import cell_source
from tools.course.nbgrader import TEXT_STUB, check_call, course_notebook_with_roles, record_call
from tools.nbtools import repository_setting
from tools.release import package_version

OTTER_CONFIG = """# ASSIGNMENT CONFIG
name: {name}
requirements: requirements.txt
init_cell: true
check_all_cell: false
export_cell: false
run_tests: true
generate:
  pdf: false
  show_stdout: true
tests:
  ok_format: false
"""
_BUILTINS = set(dir(builtins))


def _raw(text: str) -> dict[str, Any]:
    return {"cell_type": "raw", "metadata": {}, "source": text}


def _free_names(source: str) -> list[str]:
    """Names an expression reads, in order of first use (the test function's parameters)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in names:
            names.append(node.id)
    return [name for name in names if name not in _BUILTINS and not name.startswith("check_")]


def otter_test(check_source: str, label: str, exercise: dict[str, Any]) -> str:
    """An otter exception-based test that records the answer, as
    :func:`tools.course.nbgrader.hidden_tests` does.

    otter passes the notebook's variables to the function by parameter name. The test
    itself always fails: the points come from the course's otter plugin
    (:mod:`posenc_helpers.checks._otter`), which judges the record outside the kernel, so
    an autograder without the plugin gives nothing rather than everything.
    """
    call = check_call(check_source, label)
    written = ast.get_source_segment(check_source, call) or ast.unparse(call)
    parameters = _free_names(written)
    name = "test_" + re.sub(r"\W", "_", label)
    return (
        f'""" # BEGIN TEST CONFIG\nhidden: true\nfailure_message: "{label}: graded outside the notebook; '
        'run the visible check for a hint."\n""" # END TEST CONFIG\n'
        f"def {name}({', '.join(parameters)}):\n"
        "    from posenc_helpers.checks import _record\n\n"
        f"    {record_call(check_source, label, exercise)}\n"
        f"    raise AssertionError({label + ': awaiting the verdict of the grading plugin'!r})\n"
    )


def otter_notebook(book_nb: dict[str, Any], chapter: int) -> dict[str, Any]:
    """The otter-grader master notebook of a chapter (from the book's notebook)."""
    source, roles, _ = course_notebook_with_roles(book_nb, chapter)
    cells: list[dict[str, Any]] = [_raw(OTTER_CONFIG.format(name=f"ch{chapter:02d}"))]
    opened: set[str] = set()  # the exercises whose question has begun
    specs = {}
    from posenc_helpers.checks._verdict import released_spec, source_digest

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
                "source": otter_test(visible, label, exercise.options()),
            }
            cells += [plain, _raw("# BEGIN TESTS"), test, _raw("# END TESTS"), _raw("# END QUESTION")]
            spec = released_spec(record_call(visible, label, exercise.options()))
            if spec is None:
                raise ValueError(f"{label}: its check call cannot be recorded")
            specs[label] = dataclasses.asdict(spec)
        elif part == "words":  # written answers: graded by hand, the model answer left out
            plain["source"] = re.sub(r"### BEGIN SOLUTION.*?### END SOLUTION", TEXT_STUB, text, flags=re.DOTALL)
            cells.append(plain)
        else:
            cells.append(plain)
    released = sorted(
        {
            source_digest(cell_source(c))
            for c in cells
            if c["cell_type"] == "code"
            and not str(c.get("id", "")).endswith("-otter-test")
            and "# BEGIN SOLUTION" not in cell_source(c)
        }
    )
    plugin = {"posenc_helpers.checks._otter.GradeFromRecords": {"specs": specs, "released": released}}
    cells[0] = _raw(cell_source(cells[0]) + "plugins:\n  - " + json.dumps(plugin) + "\n")
    seen: set[str] = set()
    for index, cell in enumerate(cells):  # nbformat 4.5 wants a unique id on every cell
        if not cell.get("id") or cell["id"] in seen:
            cell["id"] = f"otter-{index}"
        seen.add(cell["id"])
    master = copy.deepcopy(source)
    master["cells"] = cells
    return master


def otter_requirements(url: str, version: str) -> str:
    """The grading image's requirements: the book's pins, and posenc_helpers at the release tag."""
    if url:
        package = f"posenc-helpers[widgets,lab] @ git+{url}@v{version}"
    else:
        package = (
            "# posenc-helpers: set repository.url in _config.yml (the release tag v"
            f"{version} is installed from it), or list a wheel of the package here"
        )
    return (
        "# Written by tools/course (make otter): what Gradescope installs to grade.\n"
        + "\n".join([*pins(RUNTIME), package])
        + "\n"
    )


def write_otter(out: Path, chapters: list[Path], *, force: bool = False) -> list[Path]:
    """Write each chapter's otter master notebook into ``out/chNN/`` and run ``otter assign``
    on it (into ``out/chNN/dist``); the autograder zip files."""
    prepare(out, force)
    zips = []
    for path in chapters:
        name = assignment_name(path)
        folder = out / name
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        (folder / "requirements.txt").write_text(
            otter_requirements(repository_setting()[0], package_version()), encoding="utf-8"
        )
        nb = json.loads(path.read_text(encoding="utf-8"))
        master = json.dumps(otter_notebook(nb, chapter_of(path)), indent=1, ensure_ascii=False) + "\n"
        (folder / path.name).write_text(master)
        run_script("otter", ["assign", path.name, "dist"], folder)
        zips += sorted((folder / "dist" / "autograder").glob("*.zip"))
    return zips
