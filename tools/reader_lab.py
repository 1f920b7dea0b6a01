"""JupyterLab for readers: what ``make lab``, ``make lab-student`` and Binder's build run.

1. The working copies (:mod:`tools.working_copies`): every chapter into ``_build/lab/book``
   (solutions folded) or, with ``--student``, ``_build/lab/student`` (no solutions). A copy
   that exists is kept: it holds the reader's answers (``--force``, ``FORCE=1``, renews it).
2. The settings JupyterLab reads (``--LabApp.app_settings_dir``): ``tools/jupyterlab``, for
   both labs: its ``overrides.json`` (why: that folder's README) and its ``page_config.json``,
   which disables nbgrader's JupyterLab extension (:data:`NBGRADER_LABEXTENSION`: the Nbgrader
   menu, the Validate button, the Create Assignment sidebar, the Formgrader). The command
   line disables the server extensions nbgrader enables in this environment
   (``--ServerApp.jpserver_extensions``): after ``make test`` or ``make course`` installs
   nbgrader, a reader or a self-taught student still never meets the instructor's tools,
   which the course's own commands (``make course``, ``make grade``, nbgrader's formgrader in
   ``_build/course``) keep. A reader can still enable them (*Settings → Extension Manager*).
3. The command: ``python -m jupyterlab`` of this environment, on the copies' folder, with
   ``--port`` when ``PORT`` is given and ``--allow-root`` (and a note saying so) when run as
   root, as in a container, where JupyterLab otherwise stops with "Running as root is not
   recommended"; then anything in ``LAB_ARGS``.

``--dry-run`` writes the copies and prints the command without starting JupyterLab (the
tests read it).

``--hub-config FILE`` is Binder's (``binder/postBuild``): it writes both editions, into
``OUT/student`` and ``OUT/book``, and a Jupyter server configuration ``FILE``
(:func:`server_config`) that gives the server the student copies as its root folder, so
that JupyterLab, however a hub starts it, opens them and shows nothing above them; the
environment variable :data:`EDITION_VARIABLE` set to ``book`` gives it the instructor's
edition instead. It starts nothing.

Usage::

    python -m tools.reader_lab [--student] [--force] [--port 8890] [--dry-run] \\
        --out _build/lab/student notebooks/[0-9][0-9]_*.ipynb [-- LAB_ARGS...]
    python -m tools.reader_lab --hub-config PREFIX/etc/jupyter/jupyter_server_config.py \\
        --out _build/lab notebooks/[0-9][0-9]_*.ipynb
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from .working_copies import copy_and_report

ROOT = Path(__file__).resolve().parents[1]
#: The reader settings of make lab and make lab-student (why: that folder's README).
LAB_SETTINGS = ROOT / "tools" / "jupyterlab"
#: nbgrader's JupyterLab extension (one package, every plugin of its UI), which
#: LAB_SETTINGS/page_config.json disables.
NBGRADER_LABEXTENSION = "@jupyter/nbgrader"
#: The editions a hub's server can open (--hub-config), the first its default.
EDITIONS = ("student", "book")
#: The environment variable that picks a hub's edition at the server's start.
EDITION_VARIABLE = "POSENC_LAB_EDITION"
#: The first line of a server configuration this module writes (and may replace).
CONFIG_MARKER = "# posenc-book: written by tools/reader_lab.py (binder/postBuild)"
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


def server_config(folders: Mapping[str, Path]) -> str:
    """The text of a Jupyter server configuration (``jupyter_server_config.py``) whose root
    folder is ``folders["student"]``, or ``folders["book"]`` when :data:`EDITION_VARIABLE` is
    ``book`` when the server starts.

    A value that names no edition opens the student copies and says so on stderr: a
    configuration file that raised would leave the server at its default root, the
    repository, solutions included. A folder that is not there (a hub that mounts a
    home over the image's) leaves the root at its default, with a message, rather than
    stopping the server.
    """
    if not isinstance(folders, Mapping) or sorted(folders) != sorted(EDITIONS):
        raise ValueError(f"folders must map each of {EDITIONS} to a folder, got {folders!r}")
    paths = {edition: str(Path(folders[edition]).resolve()) for edition in EDITIONS}
    return "\n".join(
        [
            CONFIG_MARKER,
            "# The server's root folder: the book's working copies, without solutions unless",
            f"# {EDITION_VARIABLE}=book asks for the instructor's edition (solutions folded).",
            "# Jupyter Server reads this file from <environment prefix>/etc/jupyter (jupyter --paths),",
            "# whoever starts it: BinderHub passes --ip, --port, --base_url and --token, never a root folder.",
            "import os",
            "import sys",
            "",
            f"_folders = {paths!r}",
            f'_edition = os.environ.get("{EDITION_VARIABLE}") or "{EDITIONS[0]}"',
            "if _edition not in _folders:",
            "    print(",
            f'        f"{EDITION_VARIABLE}={{_edition!r}} is none of {", ".join(EDITIONS)}: "',
            '        "opening the student copies",',
            "        file=sys.stderr,",
            "    )",
            f'    _edition = "{EDITIONS[0]}"',
            "if os.path.isdir(_folders[_edition]):",
            "    c.ServerApp.root_dir = _folders[_edition]  # c: the configuration Jupyter Server passes in",
            "else:  # a home mounted over the image's hides them: start where the server would anyway",
            '    print(f"{_folders[_edition]} is not there: the server opens its default folder", file=sys.stderr)',
            "",
        ]
    )


def write_hub_copies(notebooks: list[Path], out: Path, config: Path, *, force: bool = False) -> dict[str, Path]:
    """Binder's build: both editions' working copies, into ``out/student`` and ``out/book``,
    and :func:`server_config` at ``config``. Returns the editions' folders.

    A ``config`` that exists and was not written here is refused (``FileExistsError``):
    it holds someone else's server settings.
    """
    config = Path(config)
    if config.exists() and not config.read_text(encoding="utf-8").startswith(CONFIG_MARKER):
        raise FileExistsError(f"{config} exists and was not written by tools/reader_lab.py; not replacing it")
    folders = {edition: Path(out) / edition for edition in EDITIONS}
    for edition, folder in folders.items():
        copy_and_report(notebooks, folder, student=edition == "student", force=force)
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(server_config(folders), encoding="utf-8")
    print(f"{config}: Jupyter's server opens {folders['student']} ({EDITION_VARIABLE}=book: {folders['book']})")
    return folders


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
    parser.add_argument("--student", action="store_true", help="no solutions")
    parser.add_argument("--force", action="store_true", help="overwrite copies that exist (the reader's work)")
    parser.add_argument("--port", type=_port, help="JupyterLab's port")
    parser.add_argument("--dry-run", action="store_true", help="print the command instead of starting JupyterLab")
    parser.add_argument(
        "--hub-config", type=Path, help="write both editions under --out and this server configuration; start nothing"
    )
    args = parser.parse_args(argv)
    if args.hub_config is not None:
        if args.student or args.port is not None or args.dry_run or extra:
            parser.error("--hub-config writes both editions and starts nothing: no --student, --port, --dry-run or --")
        try:
            write_hub_copies(args.notebooks, args.out, args.hub_config, force=args.force)
        except FileExistsError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        return 0
    copy_and_report(args.notebooks, args.out, student=args.student, force=args.force)
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    if uid == 0:
        print(ROOT_NOTE)
    disabled = nbgrader_server_extensions()
    command = lab_command(
        args.out, LAB_SETTINGS, port=args.port, uid=uid, disabled_server_extensions=disabled, extra=extra
    )
    if args.dry_run:
        print(shlex.join(command))
        return 0
    sys.stdout.flush()
    os.execv(command[0], command)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
