"""nbgrader grades real submissions of chapter 04 as an instructor expects.

``make course`` (tools/course) turns the chapter into an nbgrader assignment;
here students submit it and ``nbgrader autograde`` (with a short per-cell timeout)
and ``nbgrader generate_feedback`` run on the lot. Chapter 04 has three autograded
exercises worth 2, 2 and 3 points (7) and one written answer (graded by hand, 2
points). The expected scores are worked out from those points.

Five submissions are honest (right, untouched, with mistakes, with a helper
shortcut and an endless loop); the others tamper with the kernel in the ways of
``_chapter04.TAMPERING`` and answer nothing. The grade comes from outside the
kernel (``posenc_helpers.checks._verdict``): honest submissions score as they did
before, every tampering one earns 0 and its feedback says "Tampering suspected"
once per exercise.

Slow (each submission runs the whole chapter): ``make test-course``, part of
``make test``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _chapter04 import CHAPTER, POINTS, SHORTCUT, TAMPERING
from _chapter04 import CORRECT as ANSWERS

from tools.course import run_nbgrader, write_course

ASSIGNMENT = "ch04"
CORRECT = {f"{label}-answer": answer for label, answer in ANSWERS.items()}  # by nbgrader grade_id
SWAPPED = CORRECT["ex-04-row-answer"].replace("np.sin(7 * w), np.cos(7 * w)", "np.cos(7 * w), np.sin(7 * w)")

SUBMISSIONS = {
    # every answer right: every autograded point
    "correct": dict(CORRECT),
    # the release as handed out: nothing
    "untouched": {},
    # one mistake the check names, one answer left out that prints "Correct:" instead
    "mistakes": {
        **CORRECT,
        "ex-04-row-answer": SWAPPED,
        "ex-04-wavelength-answer": 'wavelength_301 = None\nprint("Correct: ")',
    },
    # the checks redefined, and a test cell edited to check nothing
    "tricks": {
        "ex-04-row-answer": "pe_7 = np.zeros(6)\ncheck_encoding_row = lambda *args, **kwargs: 'Correct: yes'",
        "ex-04-wavelength": "wavelength_301 = 1.0\nprint('Correct: ')",
        "ex-04-layout-answer": "w_concat = np.zeros((8, 3))\ncheck_concat_readout = print",
    },
    # a helper call instead of the formula, and an endless loop
    "shortcut-and-loop": {
        **CORRECT,
        "ex-04-row-answer": SHORTCUT,
        "ex-04-wavelength-answer": "while True:\n    pass",
    },
}
HONEST = [student for student in SUBMISSIONS if student != "tricks"]  # "tricks" redefines the checks
SUBMISSIONS.update({f"tamper-{kind}": {"ex-04-row-answer": source} for kind, source in TAMPERING.items()})
EXPECTED = {
    "correct": {"ex-04-row": 2.0, "ex-04-wavelength": 2.0, "ex-04-layout": 3.0},
    "untouched": {"ex-04-row": 0.0, "ex-04-wavelength": 0.0, "ex-04-layout": 0.0},
    "mistakes": {"ex-04-row": 0.0, "ex-04-wavelength": 0.0, "ex-04-layout": 3.0},
    "tricks": {"ex-04-row": 0.0, "ex-04-wavelength": 0.0, "ex-04-layout": 0.0},
    "shortcut-and-loop": {"ex-04-row": 0.0, "ex-04-wavelength": 0.0, "ex-04-layout": 3.0},
    **{f"tamper-{kind}": {"ex-04-row": 0.0, "ex-04-wavelength": 0.0, "ex-04-layout": 0.0} for kind in TAMPERING},
}
TAMPERED = {student for student in SUBMISSIONS if student.startswith("tamper-")} | {"tricks"}


def _submit(course: Path, student: str, edits: dict[str, str]) -> None:
    release = course / "release" / ASSIGNMENT / CHAPTER.name
    nb = json.loads(release.read_text())
    for cell in nb["cells"]:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in edits:
            cell["source"] = edits[grade_id]
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    (folder / CHAPTER.name).write_text(json.dumps(nb, indent=1))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course = tmp_path_factory.mktemp("course")
    write_course(course, [CHAPTER])
    for student, edits in SUBMISSIONS.items():
        _submit(course, student, edits)
    result = run_nbgrader(["autograde", ASSIGNMENT, "--Execute.timeout=30"], course, check=False, capture_output=True)
    assert result.returncode == 0, result.stdout + result.stderr
    run_nbgrader(["generate_feedback", ASSIGNMENT], course)
    yield course
    shutil.rmtree(course, ignore_errors=True)


def _scores(course: Path, student: str) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        return {
            grade_id: gradebook.find_grade(grade_id, CHAPTER.stem, ASSIGNMENT, student).score for grade_id in POINTS
        }


def _feedback(course: Path, student: str) -> str:
    return (course / "feedback" / student / ASSIGNMENT / f"{CHAPTER.stem}.html").read_text()


@pytest.mark.parametrize("student", list(SUBMISSIONS))
def test_autograded_scores(graded, student):
    assert _scores(graded, student) == EXPECTED[student]


def test_the_release_has_no_solution_and_no_hidden_test(graded):
    text = (graded / "release" / ASSIGNMENT / CHAPTER.name).read_text()
    for line in ("w_interleaved[perm]", "np.sin(7 * omega_6)", "BEGIN HIDDEN TESTS", "_grading", "BEGIN SOLUTION"):
        assert line not in text


def test_feedback_names_the_mistake_and_the_shortcut(graded):
    mistakes = _feedback(graded, "mistakes")
    assert "sine and cosine are swapped" in mistakes
    shortcut = _feedback(graded, "shortcut-and-loop")
    assert "calls `sinusoidal_encoding`, which does it for you" in shortcut.replace("&#x60;", "`")
    assert "CellTimeoutError" in shortcut


def _flag_lines(course: Path, student: str) -> list[str]:
    """The feedback's "Tampering suspected" lines (one per exercise that has one)."""
    import html
    import re

    text = html.unescape(re.sub(r"<[^>]+>", "", _feedback(course, student)))
    return [line for line in text.splitlines() if "Tampering suspected (ex-04-" in line]


@pytest.mark.parametrize("student", sorted(TAMPERED))
def test_tampering_is_flagged_once_per_exercise(graded, student):
    lines = _flag_lines(graded, student)
    assert sorted(line.split("(")[1].split(")")[0] for line in lines) == sorted(POINTS), lines


@pytest.mark.parametrize("student", HONEST)
def test_honest_submissions_are_never_flagged(graded, student):
    assert student not in TAMPERED
    assert _flag_lines(graded, student) == []
    assert "Tampering" not in _feedback(graded, student)


def test_tampering_is_named_in_the_feedback(graded):
    """What each kind did, in its words, so that an instructor knows where to look."""
    seen = {
        "tamper-machinery": "CheckResult.__bool__` was replaced",
        "tamper-input-transformer": "the test cell did not record the answer",
        "tamper-exception-handler": "custom exception handler",
        "tamper-numpy-patched": "`numpy.allclose` was replaced",
        "tamper-fake-module": "sys.modules",
        "tamper-import-hook": "__import__",
        "tamper-forged-record": "a record outside its test cell",
        "tricks": "redefines `check_encoding_row`",
    }
    for student, words in seen.items():
        assert any(words in line for line in _flag_lines(graded, student)), (student, _flag_lines(graded, student))


def test_feedback_shows_each_message_and_never_the_answer(graded):
    import html

    import numpy as np

    from posenc_helpers import sinusoidal_encoding

    text = html.unescape(_feedback(graded, "mistakes"))
    assert "sine and cosine are swapped" in text
    assert "ex-04-wavelength: not answered yet" in text
    assert "Correct: the [sines | cosines] table" in text  # the visible check's message on the right answer
    row = sinusoidal_encoding(np.array([7]), 6)[0]
    for student in SUBMISSIONS:
        feedback = html.unescape(_feedback(graded, student))
        for value in row[:2]:  # the answer to ex-04-row, as the feedback would print it
            assert f"{value:.4f}" not in feedback and repr(float(value)) not in feedback, student
        assert "recorded for grading" not in feedback, student  # the records do not reach students


def test_written_answers_wait_for_a_person(graded):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{graded / 'gradebook.db'}") as gradebook:
        answered = gradebook.find_grade("ex-04-norm", CHAPTER.stem, ASSIGNMENT, "untouched")
        assert answered.score == 0  # untouched answer cell: nbgrader gives 0 by its checksum
        assert gradebook.find_submission(ASSIGNMENT, "correct").max_score == sum(POINTS.values()) + 2


def test_make_grade_regrades_in_parallel_with_the_same_scores(graded, capsys):
    """tools/course/grade.py (make grade) runs nbgrader autograde for two students at once."""
    from tools.course import grade

    chosen = ["correct", "tamper-machinery"]
    assert (
        grade.main(
            [
                ASSIGNMENT,
                "--course",
                str(graded),
                "--jobs",
                "2",
                "--timeout",
                "30",
                *sum([["--student", s] for s in chosen], []),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "ch04: 2 submissions in " in printed and "with 2 at a time" in printed
    for student in chosen:
        assert _scores(graded, student) == EXPECTED[student]
    assert sum("tamper-machinery: Tampering suspected (ex-04-" in line for line in printed.splitlines()) == 3
    assert "correct: Tampering" not in printed


@pytest.mark.parametrize(
    ("arguments", "words"),
    [(["ch4"], "assignment"), (["ch04", "--jobs", "0"], "jobs"), (["ch04", "--student", "nobody"], "nobody")],
)
def test_make_grade_reports_bad_input(graded, capsys, arguments, words):
    from tools.course import grade

    assert grade.main([*arguments, "--course", str(graded)]) == 2
    assert words in capsys.readouterr().err
