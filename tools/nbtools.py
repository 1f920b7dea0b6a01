"""Notebook tooling for the book: execute, normalise, audit and measure.

Usage (from the repository root, inside the project's virtual environment)::

    python -m tools.nbtools execute notebooks/*.ipynb       # re-run in place, fresh kernel each
    python -m tools.nbtools audit notebooks/*.ipynb         # report problems, exit 1 if any
    python -m tools.nbtools measure notebooks/*.ipynb       # time and peak memory, nothing written
    python -m tools.nbtools sync-setup notebooks/*.ipynb    # (re)write the Colab set-up cell from _config.yml
                                                            # and the explorer's restart note, fold the
                                                            # solution cells in JupyterLab
    python -m tools.nbtools text notebooks/*.ipynb          # (re)write the MyST Markdown twin of each notebook

Every notebook ``notebooks/NN_name.ipynb`` has a text twin
``notebooks/text/NN_name.md`` (MyST Markdown, written by jupytext) that holds the
same cells without outputs, so that every change to prose and code can be
reviewed as text. ``execute`` rewrites it; ``audit`` fails when it is out of date.
To edit a chapter as text, change the ``.md`` and run
``jupytext --sync notebooks/text/NN_name.md`` (the notebook keeps its outputs),
then ``make notebooks``.

``execute`` runs each notebook top to bottom in one fresh kernel and then
normalises it (see :func:`normalize`), so that committing the result gives the
same bytes on every machine. Student copies are made by
``python -m tools.course`` (``make course``, ``make student``).
"""

from __future__ import annotations

import argparse
import re
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import nbformat

from . import generated_cells
from .generated_cells import is_explorer_cell, repository_setting, sync_restart_note, sync_setup_cell

# make sync-setup's cells live in generated_cells; their names stay readable here too
SETUP_MARKER, setup_cell_source = generated_cells.SETUP_MARKER, generated_cells.setup_cell_source
RESTART_MARKER, RESTART_NOTE, RESTART_NOTE_ID = (
    generated_cells.RESTART_MARKER,
    generated_cells.RESTART_NOTE,
    generated_cells.RESTART_NOTE_ID,
)

ROOT = Path(__file__).resolve().parents[1]
KERNEL_NAME = "python3"
EXECUTION_TIMEOUT = 300  # seconds per cell
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
MAX_BYTES = 3_000_000
CANONICAL_KERNELSPEC = {
    "display_name": "Python 3 (ipykernel)",
    "language": "python",
    "name": KERNEL_NAME,
}
#: JupyterLab's own cell metadata for a folded cell: input and outputs collapsed until the
#: reader clicks them open. Every solution cell carries it (:func:`fold_solutions`), so
#: that JupyterLab folds the solutions as the website does; the website ignores it.
SOLUTION_FOLD = {"outputs_hidden": True, "source_hidden": True}
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
TEXT_DIR = "text"  # the twins live in notebooks/text/
TEXT_FORMAT = "md:myst"
PAIRED_FORMATS = f"ipynb,{TEXT_DIR}//{TEXT_FORMAT}"
_MACHINE_PATH = re.compile(r"(?<![\w.])/(?:work|tmp|root|home|Users|private|var/folders)/[A-Za-z0-9_.-]")
_ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]{6,}\b|<[^<>]* object at 0x[0-9a-fA-F]+>")
# A figure at the level of float64 rounding (a residual of 3.8e-12, say) comes out
# different on another CPU: numpy and OpenBLAS pick their kernels by CPU, so the last
# bits of sin, exp and matrix products differ. Outputs print the bound that was
# asserted instead ("below 1e-12"). A number written in scientific notation or with
# many leading zeros and smaller than ROUNDING_LEVEL is such a figure, unless it is
# a power of ten that the text just before calls a bound.
ROUNDING_LEVEL = 1e-9
_SMALL_NUMBER = re.compile(r"(?<![\w.])(?P<number>[-+]?(?:\d+(?:\.\d*)?|\.\d+)[eE][-+]?\d+|[-+]?0\.0{8,}\d+)(?![\w.])")
_BOUND_WORDS = re.compile(r"(?:below|under|than|within|at most|tolerance|bound|<|≤|<=)\s*$", re.IGNORECASE)
_TEXT_MIMETYPES = ("text/plain", "text/markdown", "text/html", "text/latex")


# --------------------------------------------------------------------------- normalise
def normalize(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Strip what differs between runs and machines, in place, and return ``nb``.

    Removed: widget views and saved widget state (their model ids are random;
    the book shows a static companion instead), per-cell execution timestamps,
    and the Python patch version. Consecutive outputs of the same stream are
    merged into one (how they are split depends on timing). The kernelspec is set to the canonical
    ``python3``, and the solution cells are folded (:func:`fold_solutions`).
    """
    fold_solutions(nb)
    nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = dict(CANONICAL_KERNELSPEC)
    nb.metadata["jupytext"] = {"formats": PAIRED_FORMATS}
    language_info = nb.metadata.get("language_info", {})
    language_info.pop("version", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        outputs: list[nbformat.NotebookNode] = []
        for output in cell.outputs:
            if WIDGET_VIEW in output.get("data", {}):
                continue
            previous = outputs[-1] if outputs else None
            # How print() output is cut into stream messages depends on flush timing;
            # one stream output per run of the same stream makes the file deterministic.
            if (
                output.output_type == "stream"
                and previous is not None
                and previous.output_type == "stream"
                and previous.name == output.name
            ):
                previous.text += output.text
                continue
            outputs.append(output)
        cell.outputs = outputs
    return nb


def stray_widget_views(nb: nbformat.NotebookNode) -> list[str]:
    """Widget views left in the outputs of cells other than the explorer, as run.

    A progress bar that is closed when its work is done still leaves its view in the
    cell's output; JupyterLab saves that view, and on reopening (or after a kernel
    restart) draws "Error displaying widget: model not found" in its place. Cells that
    show progress clear their output once the work is done, so a run leaves no such
    view behind. Checked on the notebook as executed, before :func:`normalize` strips
    every widget view.
    """
    return [
        f"cell {index}: a widget view left in the output after the run"
        for index, cell in enumerate(nb.cells)
        if cell.cell_type == "code"
        and not is_explorer_cell(cell)
        and any(WIDGET_VIEW in output.get("data", {}) for output in cell.get("outputs", []))
    ]


def fold_solutions(nb: nbformat.NotebookNode) -> bool:
    """Fold every solution cell in JupyterLab, and no other cell; True if anything changed.

    A code cell tagged ``solution`` gets JupyterLab's ``jupyter`` metadata
    :data:`SOLUTION_FOLD` (input and outputs collapsed: the reader clicks to open
    them, as the website's dropdown does); the same metadata is removed from any
    other cell.
    """
    changed = False
    for cell in nb.cells:
        folded = cell.cell_type == "code" and "solution" in cell.metadata.get("tags", [])
        if folded and cell.metadata.get("jupyter") != SOLUTION_FOLD:
            # In the order nbformat writes keys, so that the text twin written from this
            # notebook equals the one written from the file.
            metadata = sorted({**cell.metadata, "jupyter": dict(SOLUTION_FOLD)}.items())
            cell.metadata.clear()
            cell.metadata.update(metadata)
            changed = True
        elif not folded and "jupyter" in cell.metadata:
            del cell.metadata["jupyter"]
            changed = True
    return changed


# --------------------------------------------------------------------------- audit
def audit(nb: nbformat.NotebookNode, *, raw_text: str = "") -> list[str]:
    """Problems that would make the committed notebook wrong for the book or for nbval."""
    problems: list[str] = []
    code_cells = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    counts = [c.get("execution_count") for c in code_cells]
    if any(count is None for count in counts):
        problems.append("has unexecuted code cells (run `make notebooks`)")
    elif counts != list(range(1, len(counts) + 1)):
        problems.append("was not run top to bottom in one fresh kernel (run `make notebooks`)")
    for index, cell in enumerate(nb.cells):
        control = _CONTROL.search(cell.source)  # e.g. "\v" from "\varphi" typed into a Python string
        if control:
            problems.append(f"cell {index}: a control character {control.group(0)!r} in the source")
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.get("tags", [])
        for output in cell.outputs:
            kind = output.get("output_type")
            if kind == "error" and "raises-exception" not in tags:
                problems.append(f"cell {index}: stored error output ({output.get('ename')})")
            if kind == "stream" and output.get("name") == "stderr" and "remove-stderr" not in tags:
                problems.append(f"cell {index}: stored stderr output")
            if WIDGET_VIEW in output.get("data", {}):
                problems.append(f"cell {index}: stored widget view (random model id)")
        figures = [figure for text in output_texts(cell) for figure in rounding_level_figures(text)]
        if figures:
            problems.append(
                f"cell {index}: rounding-level figure(s) {', '.join(figures)} in the output; they differ "
                "from CPU to CPU: print the bound that was asserted (e.g. 'below 1e-12')"
            )
    if "widgets" in nb.metadata:
        problems.append("notebook metadata holds saved widget state")
    text = raw_text or nbformat.writes(nb)
    if machine_path := _MACHINE_PATH.search(text):
        problems.append(f"contains a machine path: {machine_path.group(0)!r}")
    if address := _ADDRESS.search(text):
        problems.append(f"contains a memory address: {address.group(0)!r}")
    if len(text.encode()) > MAX_BYTES:
        problems.append(f"is {len(text.encode()) / 1e6:.1f} MB (limit {MAX_BYTES / 1e6:.0f} MB)")
    return problems


def output_texts(cell: nbformat.NotebookNode) -> list[str]:
    """The text a reader sees in a code cell's outputs: streams, tracebacks, text data."""
    texts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            texts.append(output.get("text", ""))
        elif output.get("output_type") == "error":
            texts.append(f"{output.get('ename')}: {output.get('evalue')}")
        for mimetype in _TEXT_MIMETYPES:
            value = output.get("data", {}).get(mimetype)
            if value is not None:
                texts.append(value if isinstance(value, str) else "".join(value))
    return texts


def rounding_level_figures(text: str) -> list[str]:
    """Numbers in ``text`` small enough to be float64 rounding noise (see ``ROUNDING_LEVEL``).

    >>> rounding_level_figures("residual 2.3e-13; below 1e-12; exactly 0.0e+00; gap 1.3e-07")
    ['2.3e-13']
    """
    found = []
    for match in _SMALL_NUMBER.finditer(text):
        number = match.group("number")
        value = abs(float(number))
        if value == 0 or value >= ROUNDING_LEVEL:
            continue
        mantissa = float(re.split("[eE]", number)[0]) if "e" in number.lower() else None
        is_power_of_ten = mantissa is not None and abs(mantissa) == 1.0
        if is_power_of_ten and _BOUND_WORDS.search(text[max(0, match.start() - 20) : match.start()]):
            continue
        found.append(number)
    return found


def text_path(path: Path) -> Path:
    """Where the text twin of the notebook at ``path`` lives."""
    return path.parent / TEXT_DIR / f"{path.stem}.md"


def text_of(nb: nbformat.NotebookNode) -> str:
    """The notebook as MyST Markdown: every cell, no outputs (what its twin must hold)."""
    import jupytext

    return jupytext.writes(nb, fmt=TEXT_FORMAT)


def write_text(path: Path, nb: nbformat.NotebookNode | None = None) -> Path:
    """Write the text twin of the notebook at ``path``; return its path."""
    nb = nb if nb is not None else nbformat.read(path, as_version=4)
    target = text_path(path)
    target.parent.mkdir(exist_ok=True)
    target.write_text(text_of(nb), encoding="utf-8")
    return target


def audit_paths(paths: list[Path]) -> dict[Path, list[str]]:
    """Audit notebook files; returns only the ones with problems."""
    report = {}
    for path in paths:
        text = path.read_text(encoding="utf-8")
        nb = nbformat.reads(text, as_version=4)
        problems = audit(nb, raw_text=text)
        twin = text_path(path)
        if not twin.exists() or twin.read_text(encoding="utf-8") != text_of(nb):
            problems.append(f"its text twin {twin.name} in {TEXT_DIR}/ is missing or out of date (run `make text`)")
        if problems:
            report[path] = problems
    return report


# --------------------------------------------------------------------------- execute
def execute(path: Path, *, write: bool = True) -> tuple[float, nbformat.NotebookNode]:
    """Run a notebook top to bottom in a fresh kernel; return (seconds, notebook)."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:  # start from a clean slate so no stale output survives
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    client = NotebookClient(
        nb,
        kernel_name=KERNEL_NAME,
        timeout=EXECUTION_TIMEOUT,
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,
        allow_errors=False,
    )
    start = time.perf_counter()
    client.execute()
    elapsed = time.perf_counter() - start
    stray = stray_widget_views(nb)
    if stray:
        raise RuntimeError(
            f"{path}: " + "; ".join(stray) + " (JupyterLab saves such a view, and a reopened notebook "
            "shows 'Error displaying widget: model not found' in its place: clear_output() once it is done)"
        )
    normalize(nb)
    if write:
        nbformat.write(nb, path)
        write_text(path, nb)
    return elapsed, nb


def _measure_one(path: Path) -> None:
    """Child-process entry point: run one notebook, print seconds and kernel peak RSS."""
    elapsed, _ = execute(path, write=False)
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # kernel, once reaped
    print(f"{elapsed:.3f} {peak_kib / 1024:.1f}")


def measure(paths: list[Path]) -> list[tuple[Path, float, float]]:
    """Execution time and kernel peak memory (MiB) of each notebook, one fresh process each."""
    rows = []
    for path in paths:
        result = subprocess.run(
            [sys.executable, "-m", "tools.nbtools", "_measure_one", str(path.resolve())],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        )
        seconds, mib = result.stdout.split()[-2:]
        rows.append((path, float(seconds), float(mib)))
    return rows


def _cli_execute(notebooks: list[Path]) -> int:
    for path in notebooks:
        elapsed, nb = execute(path)
        problems = audit(nb)
        print(f"{path}: executed in {elapsed:.1f} s" + (f"; PROBLEMS: {problems}" if problems else ""))
        if problems:
            return 1
    return 0


def _cli_audit(notebooks: list[Path]) -> int:
    report = audit_paths(notebooks)
    for path, problems in report.items():
        for problem in problems:
            print(f"{path}: {problem}")
    if not report:
        print(f"{len(notebooks)} notebook(s) clean")
    return 1 if report else 0


def _cli_measure(notebooks: list[Path]) -> int:
    for path, seconds, mib in measure(notebooks):
        print(f"{path}: {seconds:.2f} s, kernel peak {mib:.0f} MiB")
    return 0


def _cli_sync_setup(notebooks: list[Path]) -> int:
    from .course.record import SHORTCUTS_PATH, write_graded_shortcuts  # noqa: PLC0415 (the course layer)

    if write_graded_shortcuts():
        print(f"{SHORTCUTS_PATH.relative_to(ROOT)}: the checks' table of refused helpers rewritten")
    source = setup_cell_source(*repository_setting())
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        if sync_setup_cell(nb, source):
            nbformat.write(nb, path)
            print(f"{path}: set-up cell written (re-run `make notebooks` before committing)")
        if sync_restart_note(nb):
            nbformat.write(nb, path)
            write_text(path, nb)
            print(f"{path}: the explorer's restart note written (and its text twin rewritten)")
        if fold_solutions(nb):
            nbformat.write(nb, path)
            write_text(path, nb)
            print(f"{path}: solution cells folded for JupyterLab (and its text twin rewritten)")
    return 0


def _cli_text(notebooks: list[Path]) -> int:
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        if nb.metadata.get("jupytext", {}).get("formats") != PAIRED_FORMATS:
            nb.metadata["jupytext"] = {"formats": PAIRED_FORMATS}
            nbformat.write(nb, path)
        print(f"{write_text(path, nb)}")
    return 0


#: Each command of ``python -m tools.nbtools COMMAND NOTEBOOK...`` and what runs it.
_COMMANDS: dict[str, Callable[[list[Path]], int]] = {
    "execute": _cli_execute,
    "audit": _cli_audit,
    "measure": _cli_measure,
    "sync-setup": _cli_sync_setup,
    "text": _cli_text,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in _COMMANDS:
        sub.add_parser(name).add_argument("notebooks", nargs="+", type=Path)
    sub.add_parser("_measure_one").add_argument("notebook", type=Path)
    args = parser.parse_args(argv)
    if args.command == "_measure_one":
        _measure_one(args.notebook)
        return 0
    return _COMMANDS[args.command](args.notebooks)


if __name__ == "__main__":
    sys.exit(main())
