"""One automatic check per code exercise, across the book, and every check is tested.

A code exercise is a gated ``{exercise-start}`` ... ``{exercise-end}`` block with
code cells; its code must call exactly one ``check_*`` from
``posenc_helpers.checks``, no two exercises share a check, and no check is
left without an exercise. Each check must also be exercised by the unit tests,
in a module that tests that messages never reveal the expected values.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import posenc_helpers.checks as checks
from tools.chapters import chapter_notebooks

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = chapter_notebooks()
CHECKS = sorted(name for name in checks.__all__ if name.startswith("check_"))
_START = re.compile(r"^(`{3,}|:{3,})\{exercise-start\}[^\n]*\n(?:.*\n)*?:label:\s*(\S+)", re.M)
_END = re.compile(r"^(`{3,}|:{3,})\{exercise-end\}", re.M)
_CALL = re.compile(r"\b(check_\w+)\s*\(")


def code_exercises(path: Path) -> dict[str, set[str]]:
    """``{exercise label: names of the checks its code cells call}`` for gated exercises with code."""
    nb = json.loads(path.read_text())
    found: dict[str, set[str]] = {}
    label = None
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            start = _START.search(source)
            if start:
                label = start.group(2)
            if _END.search(source):
                label = None
        elif label is not None:
            found.setdefault(label, set()).update(_CALL.findall(source))
    return found


EXERCISES = {path.stem: code_exercises(path) for path in CHAPTERS}


@pytest.mark.parametrize("chapter", sorted(EXERCISES))
def test_every_code_exercise_calls_exactly_one_known_check(chapter):
    exercises = EXERCISES[chapter]
    assert exercises, f"{chapter} has no code exercise"
    for label, called in exercises.items():
        assert len(called) == 1, f"{label} calls {sorted(called) or 'no check'}"
        assert called <= set(CHECKS), f"{label} calls {called - set(CHECKS)}, not in posenc_helpers.checks"


def test_each_check_belongs_to_one_exercise():
    owners: dict[str, list[str]] = {}
    for exercises in EXERCISES.values():
        for label, called in exercises.items():
            for name in called:
                owners.setdefault(name, []).append(label)
    shared = {name: labels for name, labels in owners.items() if len(labels) > 1}
    assert not shared, shared
    assert set(owners) == set(CHECKS), set(CHECKS) ^ set(owners)


@pytest.mark.parametrize("name", CHECKS)
def test_each_check_has_unit_tests_including_a_never_reveals_test(name):
    modules = [
        p
        for p in (ROOT / "tests").rglob("test_*.py")
        if p.name != Path(__file__).name and re.search(rf"\b{name}\b", p.read_text())
    ]
    assert modules, f"no unit test calls {name}"
    # A test named for it, a no-leak helper, or an explicit "expected text not in the message".
    no_leak = re.compile(
        r"def test_\w*(reveal|never|leak|without_the_answer)\w*|_no_leak\(|not in message|not in str\(info\.value\)"
    )
    assert any(no_leak.search(p.read_text()) for p in modules), (
        f"the tests of {name} ({[p.name for p in modules]}) have no test that messages never reveal the answer"
    )


def test_placeholders_are_not_attempted_for_every_check():
    """Independent of each check's signature: the first argument None gives a falsy result."""
    import inspect

    for name in CHECKS:
        check = getattr(checks, name)
        required = [
            p
            for p in inspect.signature(check).parameters.values()
            if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        assert required and required[0].kind is required[0].POSITIONAL_OR_KEYWORD, name
        if len(required) == 1:  # checks that need more context are covered by their own tests
            result = check(None)
            assert not result and "Not attempted" in str(result), name
