"""Notebook tooling for the book: execute, normalise, audit and export for students.

Usage (from the repository root, inside the project's virtual environment)::

    python tools/nbtools.py execute notebooks/*.ipynb       # re-run in place, fresh kernel each
    python tools/nbtools.py audit notebooks/*.ipynb         # report problems, exit 1 if any
    python tools/nbtools.py measure notebooks/*.ipynb       # time and peak memory, nothing written
    python tools/nbtools.py student notebooks/*.ipynb --out DIR [--force]

``execute`` runs each notebook top to bottom in one fresh kernel and then
normalises it (see :func:`normalize`), so that committing the result gives the
same bytes on every machine. ``student`` writes copies without the solution
blocks and without outputs; it refuses to overwrite an existing file unless
``--force`` is given.
"""

from __future__ import annotations

import argparse
import copy
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import nbformat

KERNEL_NAME = "python3"
EXECUTION_TIMEOUT = 300  # seconds per cell
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
MAX_BYTES = 3_000_000
CANONICAL_KERNELSPEC = {
    "display_name": "Python 3 (ipykernel)",
    "language": "python",
    "name": KERNEL_NAME,
}
_MACHINE_PATH = re.compile(r"(?<![\w.])/(?:work|tmp|root|home|Users|private|var/folders)/[A-Za-z0-9_.-]")
_ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]{6,}\b|<[^<>]* object at 0x[0-9a-fA-F]+>")
_SOLUTION_START = re.compile(r"\{solution-start\}")
# A plain (non-gated) solution directive inside a markdown cell, fenced with backticks or colons:
# the opening fence, everything up to the matching closing fence of the same length.
_SOLUTION_DIRECTIVE = re.compile(
    r"^(?P<fence>`{3,}|:{3,})\{solution\}.*?^(?P=fence)[ \t]*$\n?", re.MULTILINE | re.DOTALL
)
_SOLUTION_END = re.compile(r"\{solution-end\}")


# --------------------------------------------------------------------------- normalise
def normalize(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Strip what differs between runs and machines, in place, and return ``nb``.

    Removed: widget views and saved widget state (their model ids are random;
    the book shows a static companion instead), per-cell execution timestamps,
    and the Python patch version. The kernelspec is set to the canonical
    ``python3``.
    """
    nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = dict(CANONICAL_KERNELSPEC)
    language_info = nb.metadata.get("language_info", {})
    language_info.pop("version", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        cell.outputs = [
            output for output in cell.outputs if WIDGET_VIEW not in output.get("data", {})
        ]
    return nb


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
    if "widgets" in nb.metadata:
        problems.append("notebook metadata holds saved widget state")
    text = raw_text or nbformat.writes(nb)
    if _MACHINE_PATH.search(text):
        problems.append(f"contains a machine path: {_MACHINE_PATH.search(text).group(0)!r}")
    if _ADDRESS.search(text):
        problems.append(f"contains a memory address: {_ADDRESS.search(text).group(0)!r}")
    if len(text.encode()) > MAX_BYTES:
        problems.append(f"is {len(text.encode()) / 1e6:.1f} MB (limit {MAX_BYTES / 1e6:.0f} MB)")
    return problems


def audit_paths(paths: list[Path]) -> dict[Path, list[str]]:
    """Audit notebook files; returns only the ones with problems."""
    report = {}
    for path in paths:
        text = path.read_text(encoding="utf-8")
        problems = audit(nbformat.reads(text, as_version=4), raw_text=text)
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
    normalize(nb)
    if write:
        nbformat.write(nb, path)
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
            [sys.executable, __file__, "_measure_one", str(path)],
            check=True, capture_output=True, text=True,
        )
        seconds, mib = result.stdout.split()[-2:]
        rows.append((path, float(seconds), float(mib)))
    return rows


# --------------------------------------------------------------------------- student
def student_version(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy without solutions and without outputs, for handing out.

    Removed: every cell from a ``{solution-start}`` to its ``{solution-end}``,
    every cell tagged ``solution``, and plain ``{solution}`` directives inside
    markdown cells (the exercise text around them stays).
    """
    out = copy.deepcopy(nb)
    kept = []
    inside = False
    for cell in out.cells:
        source = cell.source
        if cell.cell_type == "markdown" and _SOLUTION_START.search(source):
            inside = True
        tagged = "solution" in cell.metadata.get("tags", [])
        if not inside and not tagged:
            if cell.cell_type == "markdown" and _SOLUTION_DIRECTIVE.search(source):
                cell.source = _SOLUTION_DIRECTIVE.sub("", source).rstrip() + "\n"
            kept.append(cell)
        if cell.cell_type == "markdown" and _SOLUTION_END.search(source):
            inside = False
    if inside:
        raise ValueError("a {solution-start} has no matching {solution-end}")
    for cell in kept:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    out.cells = kept
    return out


def write_student_versions(paths: list[Path], out_dir: Path, *, force: bool) -> list[Path]:
    """Write student copies into ``out_dir``; never overwrite without ``force``."""
    targets = [out_dir / path.name for path in paths]
    existing = [t for t in targets if t.exists()]
    if existing and not force:
        names = ", ".join(str(t) for t in existing)
        raise FileExistsError(f"refusing to overwrite {names}; pass --force to replace them")
    out_dir.mkdir(parents=True, exist_ok=True)
    for path, target in zip(paths, targets):
        nbformat.write(student_version(nbformat.read(path, as_version=4)), target)
    return targets


# --------------------------------------------------------------------------- CLI
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("execute", "audit", "measure"):
        sub.add_parser(name).add_argument("notebooks", nargs="+", type=Path)
    student = sub.add_parser("student")
    student.add_argument("notebooks", nargs="+", type=Path)
    student.add_argument("--out", type=Path, required=True, help="directory for the copies")
    student.add_argument("--force", action="store_true", help="overwrite existing copies")
    sub.add_parser("_measure_one").add_argument("notebook", type=Path)
    args = parser.parse_args(argv)

    if args.command == "execute":
        for path in args.notebooks:
            elapsed, nb = execute(path)
            problems = audit(nb)
            print(f"{path}: executed in {elapsed:.1f} s" + (f"; PROBLEMS: {problems}" if problems else ""))
            if problems:
                return 1
        return 0
    if args.command == "audit":
        report = audit_paths(args.notebooks)
        for path, problems in report.items():
            for problem in problems:
                print(f"{path}: {problem}")
        if not report:
            print(f"{len(args.notebooks)} notebook(s) clean")
        return 1 if report else 0
    if args.command == "measure":
        for path, seconds, mib in measure(args.notebooks):
            print(f"{path}: {seconds:.2f} s, kernel peak {mib:.0f} MiB")
        return 0
    if args.command == "student":
        try:
            targets = write_student_versions(args.notebooks, args.out, force=args.force)
        except FileExistsError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        for target in targets:
            print(f"wrote {target}")
        return 0
    if args.command == "_measure_one":
        _measure_one(args.notebook)
        return 0
    return 2  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())
