"""Student copies of the book's notebooks: the exercises without a line of their solutions.

Run it as a program::

    python -m tools.student SRC OUT [--force]

``SRC`` is a notebook or a folder of notebooks (``*.ipynb``, not recursive);
``OUT`` is the folder the copies go to, under the same file names. In every
copy

* every cell from a ``{solution-start}`` directive to its ``{solution-end}``
  (markdown and code) is dropped, and so is every cell tagged ``solution``
  elsewhere, except that a ``solution``-tagged code cell inside an exercise
  (between ``{exercise-start}`` and ``{exercise-end}``) is replaced by a stub
  that raises :class:`NotImplementedError`;
* plain ``{solution}`` directives are cut out of markdown cells (the text
  around them stays);
* every output and execution count goes, and so does every attachment the
  kept markdown no longer shows, and metadata is reduced to what a reader needs
  (cell ``tags`` and ``mystnb`` alt text; the notebook's ``kernelspec`` and
  ``language_info``).

Exercise cells (with their ``None`` placeholders) and the automatic-check
cells stay, so a student runs the notebook top to bottom and each check says
"Not attempted yet" until the answer is filled in.

``OUT`` must be empty or absent unless ``--force`` is given; with ``--force``
only the copies this tool writes are replaced, and no other file in ``OUT`` is
touched. The module needs only the standard library.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

__all__ = ["student_notebook", "write_student_copies", "main"]

_DIRECTIVE = r"^(?P<fence>`{3,}|:{3,})\{%s\}"
_SOLUTION_START = re.compile(_DIRECTIVE % r"solution-start", re.MULTILINE)
_SOLUTION_END = re.compile(_DIRECTIVE % r"solution-end", re.MULTILINE)
_EXERCISE_START = re.compile(_DIRECTIVE % r"exercise-start", re.MULTILINE)
_EXERCISE_END = re.compile(_DIRECTIVE % r"exercise-end", re.MULTILINE)
# A whole plain {solution} directive: opening fence, body, the same fence closing it.
_SOLUTION_DIRECTIVE = re.compile(
    r"^(?P<fence>`{3,}|:{3,})\{solution\}.*?^(?P=fence)[ \t]*$\n?", re.MULTILINE | re.DOTALL
)
_LABEL = re.compile(r"^:label:\s*(\S+)", re.MULTILINE)
_KEPT_CELL_METADATA = ("tags", "mystnb")
_KEPT_NOTEBOOK_METADATA = ("kernelspec", "language_info")


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _tags(cell: dict[str, Any]) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def _stub(label: str | None) -> str:
    which = f"Exercise {label}" if label else "This exercise"
    return (
        f"# {which}: replace the line below with your answer, then run the check cell.\n"
        f'raise NotImplementedError("{which}: write your answer here")'
    )


def _clean(cell: dict[str, Any]) -> dict[str, Any]:
    metadata = {key: cell["metadata"][key] for key in _KEPT_CELL_METADATA if key in cell.get("metadata", {})}
    clean: dict[str, Any] = {"cell_type": cell["cell_type"], "metadata": metadata, "source": _source(cell)}
    if "id" in cell:
        clean["id"] = cell["id"]
    if cell["cell_type"] == "code":
        clean["execution_count"] = None
        clean["outputs"] = []
    elif "attachments" in cell and cell["cell_type"] == "markdown":
        clean["attachments"] = cell["attachments"]
    return clean


def _directive_end(source: str, match: re.Match[str]) -> int:
    """Index just past the closing fence of the directive opened at ``match``."""
    closing = re.compile(rf"^{re.escape(match.group('fence'))}[ \t]*$\n?", re.MULTILINE)
    line_end = source.find("\n", match.end())
    after = closing.search(source, len(source) if line_end < 0 else line_end + 1)
    return len(source) if after is None else after.end()


def _outside_solutions(source: str, in_solution: bool) -> tuple[str, bool]:
    """The parts of a markdown cell outside gated solution blocks, and the state after it.

    A cell may hold the end of an exercise and the start of its solution, or
    the end of a solution and the next paragraph: only the text between
    ``{solution-start}`` and ``{solution-end}`` (directives included) goes.
    """
    kept: list[str] = []
    position = 0
    while True:
        if in_solution:
            end = _SOLUTION_END.search(source, position)
            if end is None:
                return "".join(kept), True
            position, in_solution = _directive_end(source, end), False
        else:
            start = _SOLUTION_START.search(source, position)
            stray_end = _SOLUTION_END.search(source, position)
            if stray_end is not None and (start is None or stray_end.start() < start.start()):
                raise ValueError("a {solution-end} has no matching {solution-start}")
            if start is None:
                kept.append(source[position:])
                return "".join(kept), False
            kept.append(source[position : start.start()])
            position, in_solution = start.end(), True


def student_notebook(notebook: dict[str, Any]) -> dict[str, Any]:
    """Return the student copy of a notebook given as its JSON dictionary.

    Parameters
    ----------
    notebook : dict
        A notebook in nbformat 4 JSON form (as ``json.load`` returns it).

    Returns
    -------
    dict
        A new notebook dictionary; the input is not modified.

    Raises
    ------
    TypeError
        If ``notebook`` is not a dictionary.
    ValueError
        If it is not an nbformat 4 notebook, or a ``{solution-start}`` or
        ``{exercise-start}`` has no matching end.

    Examples
    --------
    >>> notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
    ...     {"cell_type": "markdown", "metadata": {}, "source": "```{solution-start} ex-1\\n```"},
    ...     {"cell_type": "code", "metadata": {"tags": ["solution"]}, "source": "answer = 42",
    ...      "outputs": [], "execution_count": 3},
    ...     {"cell_type": "markdown", "metadata": {}, "source": "```{solution-end}\\n```"},
    ...     {"cell_type": "markdown", "metadata": {}, "source": "The end."}]}
    >>> [cell["source"] for cell in student_notebook(notebook)["cells"]]
    ['The end.']
    """
    if not isinstance(notebook, dict):
        raise TypeError(f"notebook must be a dict (a notebook's JSON), got {type(notebook).__name__}")
    if notebook.get("nbformat") != 4 or not isinstance(notebook.get("cells"), list):
        raise ValueError("notebook must be an nbformat 4 notebook with a list of cells")
    kept: list[dict[str, Any]] = []
    in_solution = False
    exercise: str | None = None  # label of the exercise block we are in, "" if unlabelled
    for cell in notebook["cells"]:
        source = _source(cell)
        if cell.get("cell_type") == "markdown":
            # The exercise block this cell opens or closes (labels read from the full text).
            if _EXERCISE_START.search(source):
                match = _LABEL.search(source)
                exercise = match.group(1) if match else ""
            text, in_solution = _outside_solutions(source, in_solution)
            if "solution" not in _tags(cell) and text.strip():
                clean = _clean(cell)
                clean["source"] = _SOLUTION_DIRECTIVE.sub("", text).strip("\n")
                # Only the attachments the kept text still shows.
                attachments = {
                    name: data
                    for name, data in clean.pop("attachments", {}).items()
                    if f"attachment:{name}" in clean["source"]
                }
                if attachments:
                    clean["attachments"] = attachments
                kept.append(clean)
            if _EXERCISE_END.search(source):
                exercise = None
        elif not in_solution:
            if "solution" not in _tags(cell):
                kept.append(_clean(cell))
            elif cell.get("cell_type") == "code" and exercise is not None:
                stub = _clean(cell)
                stub["source"] = _stub(exercise or None)
                stub["metadata"]["tags"] = [t for t in _tags(cell) if t != "solution"]
                kept.append(stub)
    if in_solution:
        raise ValueError("a {solution-start} has no matching {solution-end}")
    if exercise is not None:
        raise ValueError("an {exercise-start} has no matching {exercise-end}")
    metadata = notebook.get("metadata", {})
    return {
        "cells": kept,
        "metadata": {key: metadata[key] for key in _KEPT_NOTEBOOK_METADATA if key in metadata},
        "nbformat": 4,
        "nbformat_minor": notebook.get("nbformat_minor", 5),
    }


def _notebooks_in(src: Path) -> list[Path]:
    if not src.exists():
        raise FileNotFoundError(f"SRC {src} does not exist")
    if src.is_file():
        if src.suffix != ".ipynb":
            raise ValueError(f"SRC {src} is not a notebook (.ipynb)")
        return [src]
    notebooks = sorted(p for p in src.glob("*.ipynb") if p.is_file())
    if not notebooks:
        raise FileNotFoundError(f"SRC folder {src} holds no .ipynb notebooks")
    return notebooks


def _read(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read notebook {path}: {exc}") from None


def _dumps(notebook: dict[str, Any]) -> str:
    # The layout nbformat itself writes, so the copies diff cleanly.
    return json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def write_student_copies(src: str | Path, out: str | Path, *, force: bool = False) -> list[Path]:
    """Write the student copy of every notebook in ``src`` into the folder ``out``.

    Parameters
    ----------
    src : str or Path
        A notebook, or a folder whose ``*.ipynb`` files are converted.
    out : str or Path
        The folder for the copies (created if missing).
    force : bool, optional
        Replace the copies if ``out`` already holds files. Other files in
        ``out`` are never touched. Default False.

    Returns
    -------
    list of Path
        The files written.

    Raises
    ------
    FileNotFoundError
        If ``src`` does not exist or holds no notebooks.
    FileExistsError
        If ``out`` is an existing file, or holds files and ``force`` is false.
    ValueError
        If a notebook cannot be read or its solution blocks are unbalanced.
        Every notebook is converted before anything is written, so a bad one
        leaves ``out`` untouched.

    Examples
    --------
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.ipynb").write_text(json.dumps(
    ...     {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []}))
    >>> [p.name for p in write_student_copies(folder / "a.ipynb", folder / "out")]
    ['a.ipynb']
    >>> write_student_copies(folder / "a.ipynb", folder / "out")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    FileExistsError: OUT ... already holds files; pass --force (force=True) to replace the copies this tool writes
    """
    src, out = Path(src), Path(out)
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"OUT {out} is a file; give a folder for the student copies")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise FileExistsError(
            f"OUT {out} already holds files; pass --force (force=True) to replace the copies this tool writes"
        )
    paths = _notebooks_in(src)
    copies = {}
    for path in paths:
        try:
            copies[path.name] = _dumps(student_notebook(_read(path)))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path}: {exc}") from None
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in copies.items():
        target = out / name
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status (0, or 2 on an error)."""
    parser = argparse.ArgumentParser(
        prog="python -m tools.student",
        description="Write student copies of notebooks: exercises kept, solutions and outputs removed.",
    )
    parser.add_argument("src", type=Path, metavar="SRC", help="a notebook or a folder of notebooks")
    parser.add_argument("out", type=Path, metavar="OUT", help="folder for the student copies")
    parser.add_argument("--force", action="store_true", help="replace copies in a non-empty OUT")
    args = parser.parse_args(argv)
    try:
        written = write_student_copies(args.src, args.out, force=args.force)
    except (FileNotFoundError, FileExistsError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
