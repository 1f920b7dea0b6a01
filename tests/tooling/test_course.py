"""tools/course on small notebooks written by hand."""

from __future__ import annotations

import os
import re

import pytest

from tools import course
from tools.course.common import ROOT


def _md(text, **meta):
    return {"cell_type": "markdown", "metadata": meta, "source": text}


def _code(text, **meta):
    return {"cell_type": "code", "metadata": meta, "source": text, "outputs": [], "execution_count": 3}


def _ex(part, **keys):
    return {"exercise": {"part": part, **keys}}


BOOK = {
    "metadata": {},
    "nbformat": 4,
    "nbformat_minor": 5,
    "cells": [
        _md("# Title\n\n## Exercises\n\n```{exercise-start}\n:label: ex-a\n```\n\n**Apply.** Do a."),
        _code("x = None  # your answer", **_ex("answer")),
        _code("check_a(x, n=3)", **_ex("check", points=2, answer=["x"], forbid=["helper_a"])),
        _md("```{exercise-end}\n```\n\n```{solution-start} ex-a\n:class: dropdown\n```\n\nWhy a works."),
        _code("x = 2 + 1\ncheck_a(x, n=3)", tags=["solution"]),
        _md(
            "```{solution-end}\n```\n\n```{exercise}\n:label: ex-b\n\n**Explain.** Say b.\n```\n\n"
            "```{solution} ex-b\n:class: dropdown\n\nBecause b.\n```"
        ),
        _md("*Your answer (a few sentences):*\n", tags=["remove-cell"], **_ex("words", points=2)),
    ],
}


def test_course_notebook_moves_the_solution_into_the_answer_cell_and_adds_hidden_tests():
    out = course.course_notebook(BOOK, chapter=4)
    sources = ["".join(cell["source"]) for cell in out["cells"]]
    assert sources[0] == "# 4. Title\n\n## Exercises\n\n### Exercise 4.1\n\n**Apply.** Do a.\n"
    assert sources[1] == "x = None  # your answer\n### BEGIN SOLUTION\nx = 2 + 1\n### END SOLUTION"
    # the hidden tests come first and only record what the check is given; the grader judges it
    assert sources[2] == (
        "### BEGIN HIDDEN TESTS\nfrom posenc_helpers.grading import record as _record\n\n_record.record("
        "{'label': 'ex-a', 'check': 'check_a', 'answers': ['x'], 'forbid': ['helper_a'], 'require': []}, x, n=3)"
        "\n### END HIDDEN TESTS\ncheck_a(x, n=3)"
    )
    # the solution block is gone; the prose exercise becomes a heading; its model answer moves
    assert sources[3] == "### Exercise 4.2\n\n**Explain.** Say b.\n"
    assert sources[4] == "### BEGIN SOLUTION\nBecause b.\n### END SOLUTION"
    assert out["cells"][4]["metadata"]["tags"] == []  # shown in the course (hidden on the website)
    # nbgrader's metadata, generated from the exercise metadata (which goes)
    schema = {"schema_version": 3, "task": False}
    assert [cell["metadata"].get("nbgrader") for cell in out["cells"]] == [
        None,
        {"grade": False, "grade_id": "ex-a-answer", "locked": False, "solution": True, **schema},
        {"grade": True, "grade_id": "ex-a", "locked": True, "points": 2, "solution": False, **schema},
        None,
        {"grade": True, "grade_id": "ex-b", "locked": False, "points": 2, "solution": True, **schema},
    ]
    assert not any("exercise" in cell["metadata"] for cell in out["cells"])
    assert all(cell.get("outputs", []) == [] for cell in out["cells"])
    assert len(out["cells"]) == 5
    assert BOOK["cells"][1]["source"] == "x = None  # your answer"  # the book's notebook is left alone


def test_course_notebook_refuses_an_answer_cell_without_a_solution():
    book = {**BOOK, "cells": [*BOOK["cells"][:3], _md("```{exercise-end}\n```")]}
    with pytest.raises(ValueError, match="ex-a: an answer cell with no solution"):
        course.course_notebook(book, chapter=4)


def test_assignment_names_and_a_refused_folder(tmp_path):
    assert course.assignment_name(course.NOTEBOOKS / "04_sine_cosine_pairs.ipynb") == "ch04"
    with pytest.raises(ValueError, match="path must be a chapter notebook"):
        course.assignment_name(tmp_path / "intro.ipynb")
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="use --force"):
        course.write_course(tmp_path, [])
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_student_copies_never_overwrite_without_force(tmp_path):
    (tmp_path / "course" / "release" / "ch04").mkdir(parents=True)
    (tmp_path / "course" / "release" / "ch04" / "04_x.ipynb").write_text("{}")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "04_x.ipynb").write_text("my work")
    with pytest.raises(FileExistsError, match="04_x.ipynb"):
        course.write_student_copies(tmp_path / "course", tmp_path / "out")
    assert (tmp_path / "out" / "04_x.ipynb").read_text() == "my work"
    course.write_student_copies(tmp_path / "course", tmp_path / "out", force=True)
    assert (tmp_path / "out" / "04_x.ipynb").read_text() == "{}"


def test_myst_becomes_plain_markdown():
    cells = [_md("$$\na\n$$ (eq-a)\n\ntext\n\n$$\nb\n$$ (eq-b)"), _md("$$\nc\n$$ (eq-a)")]
    assert course.equation_numbers(cells) == {"eq-a": 1, "eq-b": 2}
    citations = {"vaswani2017attention": "Vaswani et al., 2017", "shaw2018relative": "Shaw et al., 2018"}
    text = (
        "By {eq}`eq-b`, see {cite}`vaswani2017attention, shaw2018relative` and "
        "{doc}`02_naive_positions`, {doc}`the references <../book/references>`.\n$$\nb\n$$ (eq-b)"
    )
    assert course.plain_markdown(text, {"eq-b": 2}, citations) == (
        "By (2), see (Vaswani et al., 2017; Shaw et al., 2018) and "
        "[02_naive_positions](02_naive_positions.ipynb), the book's *the references* page.\n$$\nb\n\\tag{2}\n$$"
    )


def test_student_branch_holds_the_release_the_package_and_binder_requirements(tmp_path):
    release = tmp_path / "course" / "release" / "ch04"
    release.mkdir(parents=True)
    (release / "04_x.ipynb").write_text("{}")
    out = tmp_path / "branch"
    course.write_student_branch(tmp_path / "course", out)
    assert (out / "notebooks" / "04_x.ipynb").read_text() == "{}"
    assert (out / "posenc_helpers" / "checks" / "_core.py").is_file()
    assert not list(out.rglob("__pycache__"))
    for name in ("pyproject.toml", "LICENSE", "LICENSE-TEXT", "README.md"):
        assert (out / name).is_file(), name
    requirements = (out / "requirements.txt").read_text().splitlines()
    assert requirements[-1] == "-e .[widgets,lab]" and any(
        line.startswith("jupyterlab-myst==") for line in requirements
    )
    # Binder on the student branch as on main (issue 38, item 10): its binder/ folder, whose
    # postBuild copies the settings file it names (present in the branch) and checks the
    # editable install that requirements.txt now makes
    post_build = (out / "binder" / "postBuild").read_text()
    assert os.access(out / "binder" / "postBuild", os.X_OK)
    settings = re.search(r"^source_file=(\S+)$", post_build, re.M).group(1)
    assert (out / settings).read_bytes() == (ROOT / settings).read_bytes()
    assert "-r ../requirements.txt" in (out / "binder" / "requirements.txt").read_text().splitlines()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.md").write_text("mine")
    with pytest.raises(FileExistsError, match="use --force"):
        course.write_student_branch(tmp_path / "course", tmp_path / "mine")
    course.write_student_branch(tmp_path / "course", out)  # its own earlier output: rewritten


def test_the_pages_workflow_publishes_what_make_student_book_builds():
    import yaml

    from tools.course import student

    workflow = yaml.safe_load((course.ROOT / ".github" / "workflows" / "student-site.yml").read_text())
    steps = workflow["jobs"]["build"]["steps"]
    assert any(step.get("run") == "make student-book" for step in steps)
    assert any("tests/site" in str(step.get("run", "")) for step in steps)  # no solution reaches it
    (upload,) = [step for step in steps if "upload-pages-artifact" in str(step.get("uses"))]
    built = (student.STUDENT_BOOK / "_build" / "html").relative_to(course.ROOT)
    assert upload["with"]["path"] == built.as_posix()
    assert workflow["jobs"]["deploy"]["needs"] == "build"


def test_proof_statements_become_plain_markdown():
    text = (
        "```{prf:theorem} Shifts rotate\n:label: thm-a\n\nFor every $t$, it holds.\n```\n\n"
        "```{prf:proof}\nBy the angle-sum identities.\n```\n\nSo {prf:ref}`thm-a` and {prf:ref}`that one <thm-a>`."
    )
    cells = [_md(text)]
    statements = course.statement_numbers(cells)
    assert statements == {"thm-a": "Theorem 1"}
    assert course.plain_markdown(text, {}, {}, statements) == (
        "**Theorem 1 (Shifts rotate).**\n\nFor every $t$, it holds.\n\n"
        "*Proof.* By the angle-sum identities. ∎\n\nSo Theorem 1 and that one."
    )


def _exercise_label(cells, index):
    """The label of the last exercise-start directive before cell ``index``."""
    import re

    text = "".join("".join(cell["source"]) for cell in cells[:index] if cell["cell_type"] == "markdown")
    return re.findall(r"\{exercise-start\}\n:label: (\S+)", text)[-1]


@pytest.mark.parametrize("path", course.chapters_with_exercises(), ids=lambda p: p.stem)
def test_every_graded_cell_of_every_chapter_has_its_hidden_tests(path):
    """So that the grader can judge every exercise of every chapter outside the kernel, as the
    graded submissions of chapter 04 show (tests/course): each test cell records its check's
    arguments and names the check, the answer variables and the forbidden helpers."""
    import json

    book = json.loads(path.read_text())
    source = course.course_notebook(book, int(path.name[:2]))
    exercises = {  # read from the book's cells here, not through tools.course
        _exercise_label(book["cells"], index): cell["metadata"]["exercise"]
        for index, cell in enumerate(book["cells"])
        if cell["metadata"].get("exercise", {}).get("part") == "check"
    }
    assert exercises, "a chapter with exercises has check cells"
    graded = {
        cell["metadata"]["nbgrader"]["grade_id"]: "".join(cell["source"])
        for cell in source["cells"]
        if cell["metadata"].get("nbgrader", {}).get("grade") and cell["cell_type"] == "code"
    }
    assert graded.keys() == exercises.keys()
    from posenc_helpers import checks
    from posenc_helpers.grading.verdict import released_spec

    for label, text in graded.items():
        assert text.startswith("### BEGIN HIDDEN TESTS\n")
        spec = released_spec(text)  # what the grader will read from the restored cell
        assert spec is not None and spec.label == label
        assert callable(getattr(checks, spec.check)) and text.rstrip().endswith(")")
        assert text.split("### END HIDDEN TESTS\n")[1].startswith(spec.check + "(")  # the visible check
        assert spec.answers == exercises[label]["answer"]
        assert spec.forbid == exercises[label].get("forbid", []) and spec.require == exercises[label].get("require", [])
    answers = [c for c in source["cells"] if c["metadata"].get("nbgrader", {}).get("solution")]
    assert all("### BEGIN SOLUTION" in "".join(c["source"]) for c in answers)


def test_enumerators_are_written_once_and_corrected():
    from tools.course import numbers as exercise_numbers

    cells = [
        _md("```{exercise-start}\n:label: ex-a\n:enumerator: 9.9\n```\n\ntext\n\n```{exercise-end}\n```"),
        _md("```{exercise}\n:label: ex-b\n\n**Explain.** b\n```\n\n```{solution} ex-b\nB\n```"),
    ]
    out = exercise_numbers.with_enumerators(cells, 4)
    assert out[0]["source"] == (
        "```{exercise-start}\n:label: ex-a\n:enumerator: 4.1\n```\n\ntext\n\n```{exercise-end}\n```"
    )
    assert out[1]["source"].startswith("```{exercise}\n:label: ex-b\n:enumerator: 4.2\n\n**Explain.** b")
    assert exercise_numbers.with_enumerators(out, 4) == out  # a second run changes nothing


@pytest.mark.parametrize("path", course.chapters_with_exercises(), ids=lambda p: p.stem)
def test_every_exercise_carries_its_chapter_number_for_jupyterlab(path):
    import json

    cells = json.loads(path.read_text())["cells"]
    assert course.with_enumerators(cells, int(path.name[:2])) == [
        {**cell, "source": "".join(cell["source"])} if cell["cell_type"] == "markdown" else cell for cell in cells
    ], f"run: python -m tools.course.numbers {path.relative_to(course.ROOT)}"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--otter", "not_a_chapter.ipynb"], "path must be a chapter notebook"),
        (["not_a_chapter.ipynb"], "path must be a chapter notebook"),
        (["--student-copies", "copies"], "holds no notebooks: run make course first"),
        (["--student-branch", "branch"], "holds no notebooks: run make course first"),
    ],
)
def test_the_command_line_reaches_every_mode_and_reports_bad_input(tmp_path, arguments, message):
    import os
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "tools.course", "--out", str(tmp_path / "out"), *arguments],
        cwd=tmp_path if arguments[0] != "--otter" else course.ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(course.ROOT)},
    )
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
