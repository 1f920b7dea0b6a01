"""Working copies of the chapters for JupyterLab: ``make lab`` and ``make lab-student``.

Readers run the book in copies, never in the tracked notebooks: JupyterLab rewrites
a notebook it has open (its kernel's details, autosaved outputs, widget views), and a
tracked notebook so rewritten would conflict with the next ``git pull``.

* ``make lab`` copies every chapter, solutions included (folded, as on the website),
  into ``_build/lab/book`` and opens JupyterLab there;
* ``make lab-student`` copies them without solutions into ``_build/lab/student``:
  the exercises, their checks and everything else, as a self-taught student should
  meet them.

Their references read as on the website (:mod:`tools.references`): numbered headings,
``{numref}``, ``{ref}``, citations and references to other chapters written out, a
numbered caption under each figure, and display equations numbered as the website
numbers them; this needs the notebooks, ``_config.yml`` and ``book/``, not a built site.

The conformance kit's lines "Explained in the book: chapter 04, ... (notebooks/04_...html#...)"
point at the website's pages, which do not exist in JupyterLab. In a copy's stored outputs
they are written as a kernel running among the copies writes them
(:func:`posenc_helpers.conformance.notebook_reference`: the chapter, the section's number,
the notebook beside), and the folder gets the marker
(:data:`posenc_helpers.conformance.WORKING_COPIES_MARKER`) by which a kernel there knows it.

A copy that exists is never overwritten (it holds the reader's work) unless
``--force`` (``FORCE=1``) is given. The copies are not paired with a text twin.
Instructors' solution-free copies, made by nbgrader for a course, are
``make student`` (:mod:`tools.course.student`).

Usage::

    python -m tools.working_copies --out _build/lab/book notebooks/[0-9][0-9]_*.ipynb
    python -m tools.working_copies --student --out _build/lab/student [--force] notebooks/[0-9][0-9]_*.ipynb
"""

from __future__ import annotations

import argparse
import copy
import platform
import re
import sys
from collections.abc import Mapping
from pathlib import Path

import nbformat

from posenc_helpers.conformance import WORKING_COPIES_MARKER, notebook_reference

from .course.myst import SOLUTION_END, SOLUTION_START, cell_source
from .course.numbers import Target
from .course.record import split_solutions
from .references import resolved_for_jupyterlab, this_book

#: The kit's line on the website: a chapter, a section's title and its page's anchor.
SITE_SECTION = re.compile(
    r'chapter (?P<chapter>\d\d), "(?P<title>[^"\n]+)" \(notebooks/(?P<stem>\d\d_\w+)\.html#(?P<label>[\w-]+)\)'
)

ROOT = Path(__file__).resolve().parents[1]
BOOK_COPIES = ROOT / "_build" / "lab" / "book"
STUDENT_COPIES = ROOT / "_build" / "lab" / "student"


def without_solutions(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``nb`` with every solution removed, as the course's student copies cut
    them (:func:`tools.course.record.split_solutions`): the code cells of a gated
    solution, the Markdown from ``{solution-start}`` to its ``{solution-end}``, and every
    ``{solution}`` directive. A markdown cell left empty is dropped."""
    markdown = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")
    if len(SOLUTION_START.findall(markdown)) != len(SOLUTION_END.findall(markdown)):
        raise ValueError("nb: a solution block is not closed")
    kept, _ = split_solutions([dict(cell) for cell in nb.cells])
    out = copy.deepcopy(nb)
    out.cells = [nbformat.from_dict({**cell, "source": cell_source(cell).strip("\n")}) for _, cell in kept]
    return out


def sections_for_jupyterlab(text: str, targets: Mapping[str, Target]) -> str:
    """``text`` with each of the kit's references to a website page (:data:`SITE_SECTION`)
    written as a kernel among the working copies writes it (chapter, section number, notebook)."""

    def local(match: re.Match[str]) -> str:
        target = targets.get(match.group("label"))
        number = target.number if target is not None else None
        return notebook_reference(match.group("stem"), match.group("title"), number)

    return SITE_SECTION.sub(local, text)


def _outputs_for_jupyterlab(nb: nbformat.NotebookNode, targets: Mapping[str, Target]) -> None:
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                output["text"] = sections_for_jupyterlab(output["text"], targets)
            elif "text/plain" in output.get("data", {}):
                output["data"]["text/plain"] = sections_for_jupyterlab(output["data"]["text/plain"], targets)


def working_copy(nb: nbformat.NotebookNode, *, student: bool, page: str | None = None) -> nbformat.NotebookNode:
    """What a reader opens: ``nb`` unpaired from its text twin, without its solutions
    if ``student``, and with the Python version that its kernel (this environment's
    Python) will report, so that opening it changes nothing. (The tracked notebooks
    leave the version out, since it differs between machines; JupyterLab writes it
    in when the kernel starts, and the notebook would count as modified.)

    ``page``, the notebook's name (``04_sine_cosine_pairs``), has its references
    written as the website shows them (:func:`tools.references.resolved_for_jupyterlab`),
    before the solutions go, so that every number is the website's."""
    if not isinstance(nb, nbformat.NotebookNode):
        raise TypeError(f"nb must be a notebook (nbformat.NotebookNode), got {type(nb).__name__}")
    if page is not None:
        book = this_book()
        nb = nbformat.from_dict(resolved_for_jupyterlab(nb, page, book))
        _outputs_for_jupyterlab(nb, book.targets)
    out = without_solutions(nb) if student else copy.deepcopy(nb)
    out.metadata.pop("jupytext", None)
    out.metadata.setdefault("language_info", {})["version"] = platform.python_version()
    return out


def write_copies(
    notebooks: list[Path], out: Path, *, student: bool, force: bool = False
) -> tuple[list[Path], list[Path]]:
    """Write a working copy of each notebook into ``out``; return (written, kept): the
    copies written, and those that existed and were left as the reader left them."""
    if not notebooks:
        raise ValueError("notebooks: no notebook to copy")
    out.mkdir(parents=True, exist_ok=True)
    (out / WORKING_COPIES_MARKER).write_text(
        "A folder of the book's working copies (tools/working_copies.py): the conformance kit, run here,\n"
        "points at the chapters beside it, not at the website's pages.\n"
    )
    written, kept = [], []
    for path in notebooks:
        target = out / path.name
        if target.exists() and not force:
            kept.append(target)
            continue
        nb = nbformat.read(path, as_version=4)
        nbformat.write(working_copy(nb, student=student, page=path.stem), target)
        written.append(target)
    return written, kept


def copy_and_report(
    notebooks: list[Path], out: Path, *, student: bool, force: bool = False
) -> tuple[list[Path], list[Path]]:
    """:func:`write_copies`, then one line saying how many copies were written and kept.

    What ``make lab``, ``make lab-student`` (:mod:`tools.reader_lab`), Binder's build
    and this module's command line print; returns what :func:`write_copies` returns."""
    written, kept = write_copies(notebooks, out, student=student, force=force)
    kind = "without solutions" if student else "with the solutions folded"
    line = f"{out}: {len(written)} chapter(s) copied {kind}"
    if kept:
        line += f", {len(kept)} kept as you left them (FORCE=1 replaces them)"
    print(line + ". The tracked notebooks in notebooks/ are not opened.", flush=True)
    return written, kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True, help="folder of the copies")
    parser.add_argument("--student", action="store_true", help="leave the solutions out")
    parser.add_argument("--force", action="store_true", help="overwrite copies that exist (the reader's work)")
    args = parser.parse_args(argv)
    copy_and_report(args.notebooks, args.out, student=args.student, force=args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
