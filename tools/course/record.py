"""One record per exercise, parsed once per notebook: :func:`read_exercises`.

An author describes an exercise once, in the chapter notebook: the directive fences
the website renders (a gated ``{exercise-start}`` ... ``{exercise-end}`` block for a
code exercise, a plain ``{exercise}`` directive for one in words, each with a
``:label:``), the folded solution after it, and on each cell that a grader must know
about, the project's own ``exercise`` cell metadata, saying which part of the
exercise the cell is:

===========  =========  =====================================================
``part``     cell       other keys
===========  =========  =====================================================
``setup``    code       (the exercise's given data; locked in the course)
``answer``   code       (the placeholder a student replaces)
``check``    code       ``points``; ``answer``: the names the check is given;
                        ``forbid`` / ``require``: helpers the answer must not /
                        must call (the hidden tests' options)
``words``    markdown   ``points`` (a written answer, graded by hand: the whole
                        answer of a prose exercise, or a code exercise's
                        written part)
===========  =========  =====================================================

The exercise a cell belongs to is the gated block it sits in, or, for a written
answer outside any block, the plain ``{exercise}`` directive just before it.
:func:`read_exercises` turns all this into one :class:`Exercise` per labelled
exercise, numbered by chapter ("4.2"), with the cells' indices, the points, the
hidden-test options and the solution; the course (nbgrader's metadata is generated
from it, :mod:`tools.course.nbgrader`), otter, the student copies and the exercise
numbers (:mod:`tools.course.numbers`) all read it.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.chapters import chapter_notebooks
from tools.course.common import NOTEBOOKS, ROOT, chapter_of
from tools.course.myst import (
    EXERCISE_END,
    EXERCISE_HEAD,
    SOLUTION_DIRECTIVE,
    SOLUTION_END,
    SOLUTION_START,
    cell_source,
    label_option,
    strip_option_lines,
)

#: The parts an exercise cell can be, and the other metadata keys each may carry.
PARTS: dict[str, frozenset[str]] = {
    "setup": frozenset(),
    "answer": frozenset(),
    "check": frozenset({"points", "answer", "forbid", "require"}),
    "words": frozenset({"points"}),
}
_CELL_TYPE = {"setup": "code", "answer": "code", "check": "code", "words": "markdown"}


@dataclass(frozen=True)
class Exercise:
    """One exercise of a chapter, as its notebook describes it.

    Cells are given by their index in the book's notebook. ``kind`` is ``"code"``
    for a gated exercise (set-up, answer and check cells) and ``"prose"`` for a plain
    ``{exercise}`` directive, whose whole answer is the written ``words`` cell.
    """

    label: str
    number: str  # "4.2": the chapter, then the place of the exercise in it
    kind: str  # "code" or "prose"
    setup: tuple[int, ...] = ()
    answer: int | None = None
    check: int | None = None
    words: int | None = None
    points: int = 0  # the check's (autograded)
    words_points: int = 0  # the written answer's (graded by a person)
    answers: tuple[str, ...] = ()  # the names the check is given
    forbid: tuple[str, ...] = ()  # helpers that would do the work
    require: tuple[str, ...] = ()  # helpers the answer must use
    solution_code: tuple[str, ...] = ()  # the gated solution's code cells
    solution_words: tuple[str, ...] = ()  # the solution's Markdown (the model answer in words)

    @property
    def graded(self) -> bool:
        """Whether a grader has anything to grade (a check or a written answer)."""
        return self.check is not None or self.words is not None

    def parts(self) -> dict[int, str]:
        """Cell index -> part (``setup``, ``answer``, ``check``, ``words``)."""
        found = dict.fromkeys(self.setup, "setup")
        for index, part in ((self.answer, "answer"), (self.check, "check"), (self.words, "words")):
            if index is not None:
                found[index] = part
        return found

    def options(self) -> dict[str, list[str]]:
        """The hidden tests' options, as the ``exercise`` metadata writes them."""
        return {"answer": list(self.answers), "forbid": list(self.forbid), "require": list(self.require)}


@dataclass(frozen=True)
class ChapterExercises:
    """The exercises of one chapter notebook, and its cells without the book's solutions."""

    chapter: int
    exercises: tuple[Exercise, ...]
    #: (index, cell) of every cell left once the folded solutions are cut out (copies).
    kept: tuple[tuple[int, dict[str, Any]], ...] = field(repr=False)

    @property
    def numbers(self) -> dict[str, str]:
        """Label -> "4.2" for every labelled exercise, in the order they appear."""
        return {exercise.label: exercise.number for exercise in self.exercises}

    def by_label(self, label: str) -> Exercise:
        """The exercise labelled ``label``."""
        for exercise in self.exercises:
            if exercise.label == label:
                return exercise
        raise KeyError(label)

    def part(self, index: int) -> tuple[Exercise, str] | None:
        """The exercise and part of the book's cell ``index``, or None."""
        for exercise in self.exercises:
            part = exercise.parts().get(index)
            if part is not None:
                return exercise, part
        return None


@dataclass
class Solutions:
    """What the book's folded solutions hold, per exercise label."""

    code: dict[str, list[str]] = field(default_factory=dict)
    words: dict[str, list[str]] = field(default_factory=dict)


def split_solutions(cells: list[dict[str, Any]]) -> tuple[list[tuple[int, dict[str, Any]]], Solutions]:
    """The cells without the book's solutions (with their index), and the solutions by label.

    A gated solution runs from a ``{solution-start} label`` directive to the next
    ``{solution-end}``, across cells; its code cells and the Markdown inside go.
    A plain ``{solution} label`` directive is cut out of its cell. A Markdown cell left
    empty goes too, unless it is part of an exercise.
    """
    kept: list[tuple[int, dict[str, Any]]] = []
    solutions = Solutions()
    current: str | None = None
    for index, cell in enumerate(cells):
        text = cell_source(cell)
        if cell["cell_type"] != "markdown":
            if current is not None:
                solutions.code.setdefault(current, []).append(text)
            else:
                kept.append((index, cell))
            continue
        out = []
        position = 0
        while position <= len(text):
            if current is None:
                start = SOLUTION_START.search(text, position)
                if start is None:
                    out.append(text[position:])
                    break
                out.append(text[position : start.start()])
                current = start.group("label")
                position = start.end()
                fence_end = re.compile(r"^" + re.escape(start.group("fence")) + r"[ \t]*(?:\n|$)", re.MULTILINE)
                options_end = fence_end.search(text, position)  # the directive's closing fence (options only)
                if options_end is not None:
                    position = options_end.end()
            else:
                end = SOLUTION_END.search(text, position)
                words = text[position : end.start() if end else len(text)]
                if words.strip():
                    solutions.words.setdefault(current, []).append(words.strip())
                if end is None:
                    break
                current = None
                position = end.end()
        remaining = "".join(out)

        def cut(match: re.Match[str]) -> str:
            body = strip_option_lines(match.group("body")).strip()
            solutions.words.setdefault(match.group("label"), []).append(body)
            return ""

        remaining = SOLUTION_DIRECTIVE.sub(cut, remaining)
        if remaining.strip() or cell.get("metadata", {}).get("exercise"):
            new = copy.deepcopy(cell)
            new["source"] = remaining.strip("\n") + ("\n" if remaining.strip() else "")
            kept.append((index, new))
    return kept, solutions


def _directive_events(text: str) -> list[tuple[int, str, str | None]]:
    """(position, "start" | "plain" | "end", label) of the exercise directives in ``text``."""
    events: list[tuple[int, str, str | None]] = []
    for head in EXERCISE_HEAD.finditer(text):
        kind = "start" if head.group("kind") == "exercise-start" else "plain"
        events.append((head.start(), kind, label_option(head.group("options"))))
    events += [(end.start(), "end", None) for end in EXERCISE_END.finditer(text)]
    return sorted(events, key=lambda event: event[0])


def _names(value: Any, key: str, where: str, *, required: bool = False) -> tuple[str, ...]:
    if value is None and not required:
        return ()
    if not isinstance(value, list) or not all(isinstance(name, str) and name for name in value) or not value:
        raise ValueError(f"{where}: the exercise metadata's {key} must be a non-empty list of names; got {value!r}")
    return tuple(value)


def _points(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{where}: the exercise metadata's points must be a whole number >= 1; got {value!r}")
    return value


def _metadata(cell: dict[str, Any], index: int) -> dict[str, Any] | None:
    """The cell's ``exercise`` metadata, checked against :data:`PARTS`; None if it has none."""
    metadata = cell.get("metadata", {})
    where = f"cell {index}"
    if "nbgrader" in metadata:
        raise ValueError(
            f"{where} carries nbgrader metadata: make course generates it; describe the cell with its "
            "'exercise' metadata only (CONTRIBUTING.md, Adding a chapter)"
        )
    meta = metadata.get("exercise")
    if meta is None:
        return None
    if not isinstance(meta, dict) or meta.get("part") not in PARTS:
        raise ValueError(f"{where}: the exercise metadata needs a part, one of {', '.join(PARTS)}; got {meta!r}")
    part = meta["part"]
    unknown = set(meta) - PARTS[part] - {"part"}
    if unknown:
        raise ValueError(f"{where}: an exercise's {part} cell takes no {', '.join(sorted(unknown))}")
    if cell.get("cell_type") != _CELL_TYPE[part]:
        raise ValueError(f"{where}: an exercise's {part} cell must be a {_CELL_TYPE[part]} cell")
    return meta


def read_exercises(cells: list[dict[str, Any]], chapter: int) -> ChapterExercises:
    """Every exercise of the chapter notebook ``cells`` (chapter number ``chapter``), parsed once.

    Raises ``ValueError`` naming the cell or the exercise when the notebook describes an
    exercise inconsistently: a part outside its exercise, a code exercise without its
    answer or check cell, or one of them twice, points or names of the wrong kind, a
    solution for no exercise, or hand-written nbgrader metadata.
    """
    if not isinstance(cells, list):
        raise TypeError(f"cells must be a list of notebook cells; got {type(cells).__name__}")
    if isinstance(chapter, bool) or not isinstance(chapter, int) or chapter < 0:
        raise ValueError(f"chapter must be a whole number >= 0; got {chapter!r}")
    order, found = _exercise_parts(cells)
    kept, solutions = split_solutions(cells)
    unknown = sorted((set(solutions.code) | set(solutions.words)) - set(found))
    if unknown:
        raise ValueError(f"a solution for no exercise of the notebook: {', '.join(unknown)}")
    exercises = [
        _exercise(label, kind, found[label], f"{chapter}.{place}", solutions)
        for place, (label, kind) in enumerate(order, start=1)
    ]
    return ChapterExercises(chapter=chapter, exercises=tuple(exercises), kept=tuple(kept))


def _exercise_parts(cells: list[dict[str, Any]]) -> tuple[list[tuple[str, str]], dict[str, dict[str, Any]]]:
    """The exercises' labels and kinds in the order their directives appear, and the cells
    each one's parts are (walking the directives and the cells' exercise metadata once)."""
    order: list[tuple[str, str]] = []  # (label, kind) in the order the directives appear
    found: dict[str, dict[str, Any]] = {}
    gated: str | None = None  # the label of the open {exercise-start} block ("" if it has none)
    plain: str | None = None  # the last plain {exercise}, which a written answer after it answers
    for index, cell in enumerate(cells):
        meta = _metadata(cell, index)
        if cell.get("cell_type") != "markdown":
            if meta is not None:
                _assign(found, gated, index, meta, f"cell {index}")
            continue
        # the part a written answer cell plays is decided before its own directives (it has none)
        if meta is not None:
            _assign(found, gated if gated is not None else plain, index, meta, f"cell {index}")
        for _, event, label in _directive_events(cell_source(cell)):
            if event == "end":
                if gated is None:
                    raise ValueError(f"cell {index}: an exercise-end without its exercise-start")
                gated = None
                continue
            if gated is not None:
                raise ValueError(f"cell {index}: an exercise inside exercise {gated or '(no label)'}")
            if label is not None and label not in found:
                order.append((label, "code" if event == "start" else "prose"))
                found[label] = {"setup": []}
            gated, plain = (label or "", None) if event == "start" else (gated, label)
    if gated is not None:
        raise ValueError(f"exercise {gated or '(no label)'}: its exercise-start has no exercise-end")
    return order, found


def _exercise(label: str, kind: str, parts: dict[str, Any], number: str, solutions: Any) -> Exercise:
    """One exercise's record from its parts, refusing parts that do not fit its kind."""
    if kind == "prose" and (parts["setup"] or "answer" in parts or "check" in parts):
        raise ValueError(f"{label}: a prose exercise has only a written answer cell (part 'words')")
    if ("answer" in parts) != ("check" in parts):
        raise ValueError(f"{label}: a code exercise needs both an answer cell and a check cell")
    check = parts.get("check", {})
    words = parts.get("words", {})
    return Exercise(
        label=label,
        number=number,
        kind=kind,
        setup=tuple(parts["setup"]),
        answer=parts.get("answer"),
        check=check.get("index"),
        words=words.get("index"),
        points=check.get("points", 0),
        words_points=words.get("points", 0),
        answers=check.get("answer", ()),
        forbid=check.get("forbid", ()),
        require=check.get("require", ()),
        solution_code=tuple(solutions.code.get(label, [])),
        solution_words=tuple(solutions.words.get(label, [])),
    )


def _assign(found: dict[str, dict[str, Any]], label: str | None, index: int, meta: dict[str, Any], where: str) -> None:
    """Record cell ``index`` as part ``meta['part']`` of exercise ``label``."""
    part = meta["part"]
    if not label:
        inside = "a labelled exercise-start block" if part != "words" else "an exercise (or after a plain one)"
        raise ValueError(f"{where}: an exercise's {part} cell outside {inside}")
    parts = found[label]
    if part == "setup":
        parts["setup"].append(index)
        return
    if part in parts:
        raise ValueError(f"{label}: two {part} cells (the second is cell {index})")
    if part == "answer":
        parts["answer"] = index
    elif part == "check":
        parts["check"] = {
            "index": index,
            "points": _points(meta.get("points"), where),
            "answer": _names(meta.get("answer"), "answer", where, required=True),
            "forbid": _names(meta.get("forbid"), "forbid", where),
            "require": _names(meta.get("require"), "require", where),
        }
    else:
        parts["words"] = {"index": index, "points": _points(meta.get("points"), where)}


def read_notebook(path: Path) -> ChapterExercises:
    """The exercises of the chapter notebook at ``path``; errors name the notebook."""
    chapter = chapter_of(Path(path))
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    try:
        return read_exercises(cells, chapter)
    except ValueError as error:
        raise ValueError(f"{Path(path).name}: {error}") from None


#: Where :func:`write_graded_shortcuts` writes the table the exercise checks read.
SHORTCUTS_PATH = ROOT / "posenc_helpers" / "data" / "graded_shortcuts.json"
_CHECK_CALL = re.compile(r"\b(check_\w+)\(")


def graded_shortcuts(folder: Path = NOTEBOOKS) -> dict[str, dict[str, list[str]]]:
    """Check name -> the answer names and the forbidden helpers of its exercise, for every
    exercise whose check cell's metadata forbids a helper: what the graded course refuses,
    which the visible check names too (``posenc_helpers.checks._core.passed``)."""
    table: dict[str, dict[str, list[str]]] = {}
    for path in chapter_notebooks(folder):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for exercise in read_notebook(path).exercises:
            if exercise.check is None or not exercise.forbid:
                continue
            call = _CHECK_CALL.search("".join(cells[exercise.check]["source"]))
            if call is None:
                raise ValueError(f"{path.name}: exercise {exercise.number}'s check cell calls no check_*()")
            table[call.group(1)] = {"answer": list(exercise.answers), "forbid": list(exercise.forbid)}
    return dict(sorted(table.items()))


def write_graded_shortcuts(folder: Path = NOTEBOOKS, out: Path = SHORTCUTS_PATH) -> bool:
    """Write :func:`graded_shortcuts` as JSON to ``out``; True if the file changed."""
    text = json.dumps(graded_shortcuts(folder), indent=1) + "\n"
    if out.is_file() and out.read_text(encoding="utf-8") == text:
        return False
    out.write_text(text, encoding="utf-8")
    return True


def chapters_with_exercises(folder: Path = NOTEBOOKS) -> list[Path]:
    """The chapter notebooks with at least one exercise to grade."""
    return [
        path for path in chapter_notebooks(folder) if any(exercise.graded for exercise in read_notebook(path).exercises)
    ]
