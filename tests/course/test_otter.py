"""otter-grader (Gradescope) grades chapter 04 with the same checks as nbgrader.

``make otter`` writes the otter master notebook and runs ``otter assign``; here
``otter run`` grades submissions locally with the autograder zip. Chapter 04's
autograded exercises are worth 2, 2 and 3 points (7). The scores come from the
course's otter plugin, which judges the answers the tests recorded outside the
kernel: the tampering submissions of ``_chapter04.TAMPERING`` earn 0 and each of
their exercises says "Tampering suspected"; honest ones never do.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _chapter04 import CHAPTER, CORRECT, PLACEHOLDER, SHORTCUT, TAMPERING

from tools.course import write_otter

ANSWERS = {PLACEHOLDER[label]: answer for label, answer in CORRECT.items()}  # by the line they replace
WRONG = {  # a helper call for the first, nothing for the second, the third right
    PLACEHOLDER["ex-04-row"]: SHORTCUT,
    PLACEHOLDER["ex-04-layout"]: CORRECT["ex-04-layout"],
}


@pytest.fixture(scope="module")
def assignment(tmp_path_factory):
    out = tmp_path_factory.mktemp("otter")
    (autograder,) = write_otter(out, [CHAPTER])
    return out / "ch04" / "dist" / "student" / CHAPTER.name, autograder


def _grade(student_nb: Path, autograder: Path, answers: dict[str, str], folder: Path) -> dict:
    nb = json.loads(student_nb.read_text())
    for cell in nb["cells"]:
        for start, answer in answers.items():
            if "".join(cell["source"]).startswith(start):
                cell["source"] = answer
    folder.mkdir()
    submission = folder / CHAPTER.name
    submission.write_text(json.dumps(nb))
    scripts = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{scripts}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(
        [str(scripts / "otter"), "run", "-a", str(autograder), "-o", str(folder), str(submission)],
        check=True,
        env=env,
        capture_output=True,
    )
    results = json.loads((folder / "results.json").read_text())
    return {test["name"]: test for test in results["tests"] if test["name"] != "Public Tests"}


def test_student_notebook_holds_no_answer_and_no_test(assignment):
    student_nb, _ = assignment
    text = student_nb.read_text()
    for line in ("w_interleaved[perm]", "np.sin(7 * omega_6)", "_grading", "BEGIN SOLUTION"):
        assert line not in text


def test_correct_submission_earns_every_point(assignment, tmp_path):
    tests = _grade(*assignment, ANSWERS, tmp_path / "correct")
    assert {name: t["score"] for name, t in tests.items()} == {
        "ex-04-row": 2.0,
        "ex-04-wavelength": 2.0,
        "ex-04-layout": 3.0,
    }


def test_shortcut_and_untouched_answers_earn_nothing(assignment, tmp_path):
    tests = _grade(*assignment, WRONG, tmp_path / "wrong")
    assert {name: t["score"] for name, t in tests.items()} == {
        "ex-04-row": 0.0,
        "ex-04-wavelength": 0.0,
        "ex-04-layout": 3.0,
    }
    assert "calls `sinusoidal_encoding`, which does it for you" in tests["ex-04-row"]["output"]


def test_correct_submission_is_not_flagged(assignment, tmp_path):
    tests = _grade(*assignment, ANSWERS, tmp_path / "honest")
    assert all("Tampering" not in t["output"] for t in tests.values()), tests
    assert [t["score"] for t in tests.values()] == [2.0, 2.0, 3.0]


@pytest.mark.parametrize("kind", list(TAMPERING))
def test_tampering_earns_nothing_and_is_flagged(assignment, tmp_path, kind):
    tests = _grade(*assignment, {PLACEHOLDER["ex-04-row"]: TAMPERING[kind]}, tmp_path / kind)
    assert {name: t["score"] for name, t in tests.items()} == {
        "ex-04-row": 0.0,
        "ex-04-wavelength": 0.0,
        "ex-04-layout": 0.0,
    }
    for name, test in tests.items():
        assert test["output"].count("Tampering suspected") == 1, (name, test["output"])
        assert f"Tampering suspected ({name}): " in test["output"], (name, test["output"])
