"""Machinery shared by the exercise checks.

A check is called with the student's answer (and whatever context the
exercise defines). It

* returns a :class:`CheckResult` that reads ``Not attempted yet ...`` and is
  falsy when the answer is still the placeholder (``None`` or ``...``), so
  "Run all" works on an untouched notebook;
* raises :class:`CheckFailed` (an ``AssertionError``) with a helpful message
  when the answer is wrong: what was expected (shape, meaning) and where the
  answer first differs, never the expected values themselves;
* returns a truthy :class:`CheckResult` that reads ``Correct: ...`` when the
  answer is right.

Placed last in a cell, the result shows its message; a grader can use
``bool(result)`` or ``result.status``.

What a check must never show
----------------------------
The answer appears nowhere a student can see it: not in a message, not in a
traceback (IPython shows a failed check as the single line
``CheckFailed: <message>``, see :meth:`CheckFailed._render_traceback_`), not in a
docstring or signature (their examples show a placeholder and a named mistake,
never a right answer), and the reference computations live in private helpers.

Comparing answers (the precision policy, answers a student may type) is
:mod:`posenc_helpers.checks._compare`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "CheckFailed",
    "CheckResult",
    "is_placeholder",
    "not_attempted",
    "passed",
]


class CheckFailed(AssertionError):
    """Raised by a check when an answer is wrong; the message says how, not what is right.

    In IPython and Jupyter a failed check shows only ``CheckFailed: <message>``,
    not a traceback through the check's source (which would show how the
    reference answer is computed). Outside IPython it is an ordinary
    ``AssertionError``.
    """

    def _render_traceback_(self) -> list[str]:
        """The lines IPython shows instead of a traceback: the message alone."""
        return [f"{type(self).__name__}: {self}"]


# Shown (and pickled) under the name students import it by.
CheckFailed.__module__ = "posenc_helpers.checks"


class CheckResult:
    """Outcome of a check that did not fail: ``status`` is ``"correct"`` or ``"not attempted"``.

    Truthy only when correct; its ``repr`` is the message, so a check placed
    last in a notebook cell displays one readable line.
    """

    __slots__ = ("status", "message")

    def __init__(self, status: str, message: str) -> None:
        if status not in ("correct", "not attempted"):
            raise ValueError(f"status must be 'correct' or 'not attempted', got {status!r}")
        self.status = status
        self.message = message

    def __bool__(self) -> bool:
        return self.status == "correct"

    def __repr__(self) -> str:
        return self.message


CheckResult.__module__ = "posenc_helpers.checks"


def is_placeholder(answer: Any) -> bool:
    """True for the exercise placeholders ``None`` and ``...`` (Ellipsis)."""
    return answer is None or answer is Ellipsis


def not_attempted(what: str) -> CheckResult:
    """The result for an untouched exercise (falsy)."""
    return CheckResult(
        "not attempted",
        f"Not attempted yet.\nReplace the placeholder with {what}, then run the cell again.",
    )


#: Where the table of refused helpers lives: package data, written by ``make sync-setup``
#: (``tools/course/record.py``) from every check cell's ``answer`` and ``forbid`` metadata,
#: which the grader reads; ``tests/chapters/test_checks_policy.py`` keeps it equal to them.
SHORTCUTS_FILE = Path(__file__).resolve().parents[1] / "data" / "graded_shortcuts.json"


def _read_shortcuts() -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    table = json.loads(SHORTCUTS_FILE.read_text(encoding="utf-8"))
    return {check: (tuple(entry["answer"]), tuple(entry["forbid"])) for check, entry in table.items()}


#: What the graded course refuses, by check: ``{check name: (answer names, forbidden helpers)}``.
#: A check that passes an answer calling one of them says so (:func:`passed`), so that
#: "Correct" never turns into no points unseen.
GRADED_SHORTCUTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = _read_shortcuts()


def _kernel_history() -> list[str]:
    """IPython's ``In`` without the running cell, or [] outside IPython."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    history = getattr(shell, "user_ns", {}).get("In", [])
    return [source for source in history[:-1] if isinstance(source, str)]


def graded_shortcuts(check: str, history: Sequence[str]) -> list[str]:
    """The helpers that the graded course refuses and that the answer cell calls.

    Parameters
    ----------
    check : str
        The check's name, a key of :data:`GRADED_SHORTCUTS` (any other name has none).
    history : sequence of str
        The cells run so far, oldest first, without the running one (IPython's ``In``);
        the answer cell is the latest that assigns one of the exercise's answer names,
        as the grader finds it.

    Returns
    -------
    list of str
        The refused helpers the answer calls, sorted; empty when there are none.

    Examples
    --------
    >>> graded_shortcuts("check_encoding_row", ["pe_7 = None", "pe_7 = table_row(7)"])
    []
    """
    if not isinstance(check, str):
        raise TypeError(f"check must be a check's name (str), got {type(check).__name__}")
    if isinstance(history, str) or not all(isinstance(source, str) for source in history):
        raise TypeError("history must be a sequence of cell sources (str)")
    if check not in GRADED_SHORTCUTS:
        return []
    from ..answer_cells import answer_cell, names_used

    answers, forbid = GRADED_SHORTCUTS[check]
    return sorted(names_used(answer_cell(list(history), answers)) & set(forbid))


def passed(message: str, *, check: str | None = None) -> CheckResult:
    """The result for a right answer (truthy).

    ``check`` is the name of the check that passes it. When that check is listed in
    :data:`GRADED_SHORTCUTS`, runs in IPython, and the answer cell calls a helper that
    the graded course refuses, the message says so (naming the helper, never the
    answer): the value is right, and graded it earns no points.
    """
    shortcuts = graded_shortcuts(check, _kernel_history()) if check else []
    note = ""
    if shortcuts:
        names = ", ".join(f"`{name}`" for name in shortcuts)
        note = (
            f"\nGraded, this answer earns no points: it calls {names}, which does the computation "
            "for you. Write the computation out yourself."
        )
    return CheckResult("correct", f"Correct: {message}{note}")
