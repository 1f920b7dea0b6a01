"""The cells ``make sync-setup`` writes into every chapter: the Colab set-up cell and the explorer's restart note.

Both are generated (tagged ``remove-cell``: JupyterLab, Binder and Colab only) and
kept the same bytes on every run; :mod:`tools.nbtools` re-exports them and runs
them from its ``sync-setup`` command.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from . import release

ROOT = Path(__file__).resolve().parents[1]

__all__ = [
    "RESTART_MARKER",
    "RESTART_NOTE",
    "RESTART_NOTE_ID",
    "SETUP_MARKER",
    "is_explorer_cell",
    "repository_setting",
    "setup_cell_source",
    "sync_restart_note",
    "sync_setup_cell",
]


def is_explorer_cell(cell: nbformat.NotebookNode) -> bool:
    """True for the chapter's explorer: the code cell that imports ``posenc_helpers.widgets``."""
    return cell.cell_type == "code" and "posenc_helpers.widgets" in cell.source


# --------------------------------------------------------------------------- Colab set-up cell
SETUP_MARKER = "# Set-up for Colab and other fresh environments"


def repository_setting(config_path: Path = ROOT / "_config.yml") -> tuple[str, str]:
    """The repository URL and branch from ``_config.yml`` (the one launch-button setting)."""
    import yaml

    config = yaml.safe_load(config_path.read_text()) or {}
    repository = config.get("repository") or {}
    return str(repository.get("url") or "").strip().rstrip("/"), str(repository.get("branch") or "main").strip()


def setup_cell_source(url: str, branch: str) -> str:
    """The first code cell of every chapter: installs posenc_helpers only where it is missing.

    With a repository URL it installs the release the notebook belongs to, the tag
    ``v<version>`` (never a moving branch, so a notebook keeps working after the
    repository moves on); ``branch`` only drives the launch buttons. Without one it
    stops the notebook with a message saying how to install the package, instead of
    letting every later cell fail on the missing import.
    """
    version = release.package_version()
    if url:
        install = (
            '    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",\n'
            f'                    "posenc-helpers[widgets,lab] @ git+{url}@v{version}"], check=True)'
        )
    else:
        install = (
            "    raise SystemExit(\n"
            '        "This notebook needs the posenc_helpers package, which is not installed here. "\n'
            '        "In a clone of the book\'s repository run `pip install -e .`; elsewhere (Colab) run "\n'
            f'        "`pip install \\"posenc-helpers[widgets,lab] @ git+URL@v{version}\\"` in a cell, with URL "\n'
            '        "the repository your course gives, then run this notebook again."\n'
            "    )"
        )
    return (
        f"{SETUP_MARKER}: install posenc_helpers if it is\n"
        "# missing. Locally and on Binder it is already installed, and this does nothing.\n"
        "import importlib.util\n"
        "import subprocess\n"
        "import sys\n"
        "\n"
        'if importlib.util.find_spec("posenc_helpers") is None:\n'
        f"{install}\n"
        'if "google.colab" in sys.modules:  # Colab shows ipywidgets 8 through its custom manager\n'
        "    from google.colab import output\n"
        "\n"
        "    output.enable_custom_widget_manager()"
    )


def sync_setup_cell(nb: nbformat.NotebookNode, source: str) -> bool:
    """Insert or update the set-up cell (first code cell, tagged remove-cell); True if changed."""
    first_code = next((i for i, c in enumerate(nb.cells) if c.cell_type == "code"), None)
    if first_code is not None and nb.cells[first_code].source.startswith(SETUP_MARKER):
        cell = nb.cells[first_code]
        if cell.source == source and cell.metadata.get("tags") == ["remove-cell"]:
            return False
        cell.source = source
        cell.metadata["tags"] = ["remove-cell"]
        return True
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": ["remove-cell"]})
    nb.cells.insert(1 if nb.cells and nb.cells[0].cell_type == "markdown" else 0, cell)
    return True


# --------------------------------------------------------------------------- explorer's restart note
RESTART_MARKER = "**In JupyterLab, Binder or Colab**"
#: The markdown cell just before every chapter's explorer (tagged ``remove-cell``: the
#: website shows a static companion, not a live widget, so it leaves the note out).
RESTART_NOTE = (
    f"{RESTART_MARKER}: the explorer below lives in the running kernel. After the kernel "
    "restarts, its last picture stays but nothing redraws it: the Python that drew it is gone. "
    "JupyterLab and Binder then switch its controls off and say so (in Colab the controls may "
    "still move). When you reload the page or reopen a chapter "
    "you saved earlier, its place reads *Error displaying widget: model not found* instead. "
    "Either way nothing is broken: run the cells above it (*Run → Run All Above Selected "
    "Cell*) and then its own cell again."
)


RESTART_NOTE_ID = "explorer-restart-note"  # a fixed cell id: the same bytes on every run


def sync_restart_note(nb: nbformat.NotebookNode) -> bool:
    """Insert or update :data:`RESTART_NOTE` just before the explorer cell; True if changed.

    A notebook without an explorer is left as it is.
    """
    index = next((i for i, cell in enumerate(nb.cells) if is_explorer_cell(cell)), None)
    if index is None:
        return False
    previous = nb.cells[index - 1] if index > 0 else None
    if previous is not None and previous.cell_type == "markdown" and previous.source.startswith(RESTART_MARKER):
        wanted = (RESTART_NOTE, ["remove-cell"], RESTART_NOTE_ID)
        if (previous.source, previous.metadata.get("tags"), previous.get("id")) == wanted:
            return False
        previous.source, previous.metadata["tags"], previous["id"] = wanted
        return True
    note = nbformat.v4.new_markdown_cell(RESTART_NOTE, metadata={"tags": ["remove-cell"]}, id=RESTART_NOTE_ID)
    nb.cells.insert(index, note)
    return True


# --------------------------------------------------------------------------- CLI
