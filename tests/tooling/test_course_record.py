"""The exercise record (tools/course/record.py) and the nbgrader metadata generated from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools import course
from tools.chapters import chapter_notebooks
from tools.course.record import Exercise, read_exercises


def _md(text, **meta):
    return {"cell_type": "markdown", "metadata": meta, "source": text}


def _code(text, **meta):
    return {"cell_type": "code", "metadata": meta, "source": text, "outputs": [], "execution_count": None}


def _ex(part, **keys):
    return {"exercise": {"part": part, **keys}}


BOOK = [
    _md("# Title\n\n## Exercises\n\n```{exercise-start}\n:label: ex-a\n:enumerator: 4.1\n```\n\n**Apply.** Do a."),
    _code("given = 3", **_ex("setup")),
    _code("more = 4", **_ex("setup")),
    _code("x = None  # your answer", **_ex("answer")),
    _code("check_a(x, given)", **_ex("check", points=3, answer=["x"], forbid=["helper"], require=["tool"])),
    _md("**In words:** why?\n\n*Your answer (a few sentences):*", tags=["remove-cell"], **_ex("words", points=1)),
    _md("```{exercise-end}\n```\n\n```{solution-start} ex-a\n:class: dropdown\n```\n\nBecause."),
    _code("x = given\ncheck_a(x, given)", tags=["solution"]),
    _md("```{solution-end}\n```\n\n```{exercise}\n:label: ex-b\n\nSay b.\n```\n\n```{solution} ex-b\nB.\n```"),
    _md("*Your answer (a few sentences):*", tags=["remove-cell"], **_ex("words", points=2)),
    _md("## Key takeaways\n\n- one"),
]


def test_one_record_per_exercise_with_its_cells_points_options_and_solution():
    sheet = read_exercises(BOOK, 4)
    assert sheet.exercises == (
        Exercise(
            label="ex-a",
            number="4.1",
            kind="code",
            setup=(1, 2),
            answer=3,
            check=4,
            words=5,
            points=3,
            words_points=1,
            answers=("x",),
            forbid=("helper",),
            require=("tool",),
            solution_code=("x = given\ncheck_a(x, given)",),
            solution_words=("Because.",),
        ),
        Exercise(label="ex-b", number="4.2", kind="prose", words=9, words_points=2, solution_words=("B.",)),
    )
    assert sheet.numbers == {"ex-a": "4.1", "ex-b": "4.2"}
    assert sheet.part(4) == (sheet.exercises[0], "check") and sheet.part(0) is None
    assert [index for index, _ in sheet.kept] == [0, 1, 2, 3, 4, 5, 6, 8, 9, 10]  # the solution's code cell goes
    schema = {"schema_version": 3, "task": False}
    assert course.nbgrader_metadata(sheet.exercises) == {
        1: {"grade": False, "grade_id": "ex-a-setup", "locked": True, "solution": False, **schema},
        2: {"grade": False, "grade_id": "ex-a-setup-2", "locked": True, "solution": False, **schema},
        3: {"grade": False, "grade_id": "ex-a-answer", "locked": False, "solution": True, **schema},
        4: {"grade": True, "grade_id": "ex-a", "locked": True, "points": 3, "solution": False, **schema},
        5: {"grade": True, "grade_id": "ex-a-words", "locked": False, "points": 1, "solution": True, **schema},
        9: {"grade": True, "grade_id": "ex-b", "locked": False, "points": 2, "solution": True, **schema},
    }


def _replace(index, cell):
    return [cell if i == index else c for i, c in enumerate(BOOK)]


@pytest.mark.parametrize(
    ("cells", "message"),
    [
        (_replace(1, _code("given = 3", nbgrader={"grade_id": "ex-a-setup"})), "cell 1 carries nbgrader metadata"),
        (_replace(1, _code("given = 3", **_ex("given"))), "needs a part, one of setup, answer, check, words"),
        (_replace(1, _code("given = 3", exercise=["setup"])), "needs a part"),
        (_replace(1, _code("given = 3", **_ex("setup", points=2))), "setup cell takes no points"),
        (_replace(4, _code("check_a(x)", **_ex("check", points=3, answer=["x"], forbids=["h"]))), "takes no forbids"),
        (_replace(4, _code("check_a(x)", **_ex("check", points=True, answer=["x"]))), "points must be a whole"),
        (_replace(4, _code("check_a(x)", **_ex("check", points=0, answer=["x"]))), "points must be a whole"),
        (_replace(4, _code("check_a(x)", **_ex("check", points=2, answer="x"))), "answer must be a non-empty list"),
        (_replace(4, _code("check_a(x)", **_ex("check", points=2))), "answer must be a non-empty list"),
        (_replace(4, _code("check_a(x)", **_ex("answer"))), "ex-a: two answer cells"),
        (_replace(4, _md("check_a(x)", **_ex("check", points=2, answer=["x"]))), "must be a code cell"),
        (_replace(5, _code("y = 1", **_ex("words", points=1))), "must be a markdown cell"),
        (_replace(4, _code("check_a(x)")), "ex-a: a code exercise needs both an answer cell and a check cell"),
        (_replace(10, _code("z = None", **_ex("answer"))), "cell 10: an exercise's answer cell outside"),
        (_replace(10, _md("*Your answer*", **_ex("words", points=1))), "ex-b: two words cells"),
        ([*BOOK, _md("```{solution} ex-c\nC.\n```")], "a solution for no exercise of the notebook: ex-c"),
        ([_md("```{exercise-end}\n```")], "an exercise-end without its exercise-start"),
        ([_md("```{exercise-start}\n:label: ex-z\n```")], "ex-z: its exercise-start has no exercise-end"),
        ([BOOK[0], _md("```{exercise}\n:label: ex-y\nY\n```")], "an exercise inside exercise ex-a"),
        ([_md("```{exercise}\n:label: ex-y\nY\n```"), _code("y = None", **_ex("answer"))], "answer cell outside"),
    ],
)
def test_an_inconsistent_exercise_is_refused_naming_the_cell_or_the_exercise(cells, message):
    with pytest.raises(ValueError, match=message):
        read_exercises(cells, 4)


def test_bad_arguments_are_refused():
    with pytest.raises(TypeError, match="cells must be a list"):
        read_exercises({"cells": []}, 4)
    with pytest.raises(ValueError, match="chapter must be a whole number"):
        read_exercises([], True)
    with pytest.raises(ValueError, match="path must be a chapter notebook"):
        course.read_notebook(Path("intro.ipynb"))


def test_the_book_writes_no_nbgrader_metadata_and_every_chapter_has_exercises():
    """Authors write only the exercise metadata (the parser refuses nbgrader's); every
    chapter has graded exercises."""
    paths = chapter_notebooks(course.NOTEBOOKS)
    for path in paths:
        assert '"nbgrader"' not in path.read_text(encoding="utf-8"), path.name
    assert len(paths) >= 12
    assert [path.name for path in course.chapters_with_exercises()] == [path.name for path in paths]


def test_the_checks_table_of_refused_helpers_is_written_from_the_notebooks(tmp_path):
    """posenc_helpers/data/graded_shortcuts.json is what make sync-setup writes from the
    check cells' metadata (one home: the notebooks), and writing it again changes nothing."""
    import json

    from tools.course.record import SHORTCUTS_PATH, graded_shortcuts, write_graded_shortcuts

    assert json.loads(SHORTCUTS_PATH.read_text()) == graded_shortcuts(), "run make sync-setup"
    out = tmp_path / "table.json"
    assert write_graded_shortcuts(out=out) and not write_graded_shortcuts(out=out)
    assert out.read_text() == SHORTCUTS_PATH.read_text()
