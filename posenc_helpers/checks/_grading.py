"""Helpers for grading the course edition's answers (``make course``, ``make otter``).

A chapter's visible check is the student's feedback; an autograder must not trust
it, because the student's notebook can redefine it, and a check only sees the value
an answer produced, not how. Since the course grades outside the student's kernel
(:mod:`posenc_helpers.checks._verdict`), the grader uses :func:`answer_cell` and
:func:`names_used` on the notebook's cells to refuse an answer that calls a helper
computing it (or leaves out one the exercise asks for). :func:`original`,
:func:`require_correct` and :func:`require_own_code` judge inside a kernel; the
course's hidden tests no longer call them (a kernel that was tampered with could
answer for them), but they remain for notebooks that check themselves.

The messages say what the exercise asks for, never what the answer is.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ._core import CheckResult

__all__ = ["original", "require_correct", "require_own_code", "names_used", "answer_cell"]


def original(name: str) -> Callable[..., Any]:
    """The check ``name`` as the installed package defines it (its module reloaded)."""
    if not isinstance(name, str) or not name.startswith("check_"):
        raise ValueError(f"name must be the name of a check, 'check_...'; got {name!r}")
    package = importlib.import_module("posenc_helpers.checks")
    owner = getattr(package, name, None)
    module_name = getattr(owner, "__module__", None)
    if not isinstance(module_name, str) or not module_name.startswith("posenc_helpers.checks."):
        raise ValueError(f"name must be a check of posenc_helpers.checks; there is no {name!r}")
    module = importlib.reload(importlib.import_module(module_name))
    check = getattr(module, name)
    if not callable(check):
        raise TypeError(f"posenc_helpers.checks.{name} is not callable")
    return check


def require_correct(result: Any, label: str) -> None:
    """Fail unless ``result`` is a correct :class:`CheckResult` (a placeholder earns nothing)."""
    if not isinstance(result, CheckResult) or not result:
        raise AssertionError(f"{label}: not answered yet, so this exercise earns no points.")


def names_used(source: str) -> set[str]:
    """Every name and attribute name ``source`` refers to (``np.linalg.lstsq`` gives np, linalg, lstsq)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.add(node.name.rsplit(".", 1)[-1])
            if node.asname:
                names.add(node.asname)
    return names


def _assigns(source: str, answers: Iterable[str]) -> bool:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    wanted = set(answers)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in wanted:
            return True
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            for leaf in ast.walk(target):
                if isinstance(leaf, ast.Name) and leaf.id in wanted:
                    return True
    return False


def answer_cell(history: Sequence[str], answers: Sequence[str]) -> str:
    """The latest cell of ``history`` (IPython's ``In``, without the running cell) that
    assigns one of ``answers``; "" if there is none."""
    for source in reversed(list(history)):
        if isinstance(source, str) and _assigns(source, answers):
            return source
    return ""


def require_own_code(
    history: Sequence[str],
    label: str,
    *,
    answers: Sequence[str],
    forbid: Sequence[str] = (),
    require: Sequence[str] = (),
) -> None:
    """Fail if the answer cell uses a helper in ``forbid`` or leaves out one in ``require``.

    ``history`` is IPython's ``In`` as the hidden test sees it; its last entry (the
    test cell itself) is ignored.
    """
    source = answer_cell(list(history)[:-1], answers)
    used = names_used(source)
    shortcuts = sorted(used & set(forbid))
    if shortcuts:
        raise AssertionError(
            f"{label} asks you to write the computation out yourself; your answer calls "
            f"{', '.join(f'`{name}`' for name in shortcuts)}, which does it for you, so it earns no points."
        )
    missing = sorted(set(require) - used)
    if missing:
        raise AssertionError(
            f"{label} asks you to build the answer with {', '.join(f'`{name}`' for name in missing)}, "
            "and your answer does not use it, so it earns no points."
        )
