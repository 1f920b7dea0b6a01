"""JupyterLab for readers: what ``make lab`` and ``make lab-student`` run.

1. The working copies (:mod:`tools.working_copies`): every chapter into ``_build/lab/book``
   (solutions folded) or, with ``--student``, ``_build/lab/student`` (no solutions). A copy
   that exists is kept: it holds the reader's answers (``--force``, ``FORCE=1``, renews it).
2. The settings JupyterLab reads (``--LabApp.app_settings_dir``): ``tools/jupyterlab`` for
   ``make lab``. The student lab gets a copy of them in ``_build/jupyterlab-settings/student``
   with a ``page_config.json`` that disables nbgrader's JupyterLab extension
   (:data:`NBGRADER_LABEXTENSION`: the Nbgrader menu, the Validate button, the Create
   Assignment sidebar, the Formgrader), and the command line disables the server extensions
   nbgrader enables in this environment (``--ServerApp.jpserver_extensions``): after
   ``make test`` or ``make course`` installs nbgrader, a self-taught student still never meets
   the instructor's tools. A reader can still enable them (*Settings → Extension Manager*).
3. The command: ``python -m jupyterlab`` of this environment, on the copies' folder, with
   ``--port`` when ``PORT`` is given and ``--allow-root`` (and a note saying so) when run as
   root, as in a container, where JupyterLab otherwise stops with "Running as root is not
   recommended"; then anything in ``LAB_ARGS``.

``--dry-run`` writes the copies and the settings and prints the command without starting
JupyterLab (the tests read it).

Usage::

    python -m tools.reader_lab [--student] [--force] [--port 8890] [--dry-run] \\
        --out _build/lab/student notebooks/[0-9][0-9]_*.ipynb [-- LAB_ARGS...]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from .working_copies import write_copies

ROOT = Path(__file__).resolve().parents[1]
#: The reader settings of make lab (overrides.json: why, in that folder's README).
LAB_SETTINGS = ROOT / "tools" / "jupyterlab"
#: Where the student lab's settings are written: LAB_SETTINGS, plus nbgrader disabled.
STUDENT_SETTINGS = ROOT / "_build" / "jupyterlab-settings" / "student"
#: nbgrader's JupyterLab extension (one package, every plugin of its UI).
NBGRADER_LABEXTENSION = "@jupyter/nbgrader"
ROOT_NOTE = (
    "Note: running as root (a container?): JupyterLab is started with --allow-root, "
    "which it needs to run as root at all."
)


def nbgrader_server_extensions() -> list[str]:
    """The server extensions of nbgrader that this environment's Jupyter config enables."""
    try:
        from jupyter_core.paths import jupyter_config_path
        from jupyter_server.extension.config import ExtensionConfigManager
    except ImportError:  # no Jupyter server here: nothing to disable
        return []
    manager = ExtensionConfigManager(read_config_path=jupyter_config_path())
    found = manager.get_jpserver_extensions()
    return sorted(name for name, enabled in found.items() if enabled and name.split(".")[0] == "nbgrader")


def write_student_settings(folder: Path = STUDENT_SETTINGS, source: Path = LAB_SETTINGS) -> Path:
    """Write the student lab's settings into ``folder``: ``source``'s files, and a
    ``page_config.json`` that disables :data:`NBGRADER_LABEXTENSION`. Returns ``folder``."""
    folder = Path(folder)
    if not Path(source).is_dir():
        raise ValueError(f"source must be a folder of JupyterLab settings, got {source}")
    folder.mkdir(parents=True, exist_ok=True)
    for path in sorted(Path(source).glob("*.json")):
        shutil.copyfile(path, folder / path.name)
    page_config = {"disabledExtensions": {NBGRADER_LABEXTENSION: True}}
    (folder / "page_config.json").write_text(json.dumps(page_config, indent=2) + "\n")
    return folder


def lab_command(
    notebook_dir: Path,
    settings: Path,
    *,
    port: int | None = None,
    uid: int | None = None,
    disabled_server_extensions: Sequence[str] = (),
    extra: Sequence[str] = (),
) -> list[str]:
    """The command line that starts JupyterLab on ``notebook_dir`` with ``settings``.

    Examples
    --------
    >>> lab_command(Path("copies"), Path("settings"), port=8890, uid=0)[3:]
    ['--LabApp.app_settings_dir=settings', '--notebook-dir=copies', '--port=8890', '--allow-root']
    """
    if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535):
        raise ValueError(f"port must be an integer from 1 to 65535, got {port!r}")
    command = [sys.executable, "-m", "jupyterlab", f"--LabApp.app_settings_dir={settings}"]
    command.append(f"--notebook-dir={notebook_dir}")
    if port is not None:
        command.append(f"--port={port}")
    if uid == 0:
        command.append("--allow-root")
    command += [f"--ServerApp.jpserver_extensions={name}=False" for name in disabled_server_extensions]
    return command + list(extra)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"port must be an integer from 1 to 65535, got {text!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port must be an integer from 1 to 65535, got {text!r}")
    return port


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True, help="the folder of the working copies")
    parser.add_argument("--student", action="store_true", help="no solutions, and no nbgrader UI")
    parser.add_argument("--force", action="store_true", help="overwrite copies that exist (the reader's work)")
    parser.add_argument("--port", type=_port, help="JupyterLab's port")
    parser.add_argument("--dry-run", action="store_true", help="print the command instead of starting JupyterLab")
    args = parser.parse_args(argv)
    written, kept = write_copies(args.notebooks, args.out, student=args.student, force=args.force)
    kind = "without solutions" if args.student else "with the solutions folded"
    print(f"{args.out}: {len(written)} chapter(s) copied {kind}", end="")
    if kept:
        print(f", {len(kept)} kept as you left them (FORCE=1 replaces them)", end="")
    print(". The tracked notebooks in notebooks/ are not opened.")
    settings = write_student_settings() if args.student else LAB_SETTINGS
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    if uid == 0:
        print(ROOT_NOTE)
    disabled = nbgrader_server_extensions() if args.student else []
    command = lab_command(args.out, settings, port=args.port, uid=uid, disabled_server_extensions=disabled, extra=extra)
    if args.dry_run:
        print(shlex.join(command))
        return 0
    sys.stdout.flush()
    os.execv(command[0], command)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
