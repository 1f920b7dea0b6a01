"""A JupyterLab server as ``make lab`` starts it, for the browser suite's JupyterLab tests
(``test_jupyterlab.py``, ``test_jupyterlab_references.py``).

The server runs the Python of ``POSENC_READER_PYTHON`` (default: the one running the
tests) on a free port of 127.0.0.1 with a random token, with the book's settings
(``tools/jupyterlab``, as ``make lab`` passes them), and its configuration, settings,
workspaces and runtime files in a folder of its own (nothing of the machine's own
JupyterLab set-up is read or written). Nothing is set here that the book's settings do
not set: every cell is in the page because ``tools/jupyterlab/overrides.json`` turns
JupyterLab's windowing off, as readers get it (``test_jupyterlab_run_all.py``).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
READER_PYTHON = os.environ.get("POSENC_READER_PYTHON") or sys.executable
LAB_SETTINGS = REPO / "tools" / "jupyterlab"  # as make lab passes it
START_TIMEOUT_S = 180


_TRACEBACK = re.compile(r"^(?P<indent>[ \t]*)Traceback \(most recent call last\):$", re.M)
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line \d+')


def tracebacks(log: str) -> list[str]:
    """Each traceback in a server log: its lines up to the exception's own (chained parts apart)."""
    lines = log.splitlines()
    found = []
    for start, line in enumerate(lines):
        match = _TRACEBACK.match(line)
        if match is None:
            continue
        indent = len(match.group("indent"))
        end = start + 1
        while end < len(lines) and (len(lines[end]) - len(lines[end].lstrip()) > indent or not lines[end].strip()):
            end += 1
        found.append("\n".join(lines[start : end + 1]))
    return found


def project_tracebacks(log: str, working_copies: Path) -> list[str]:
    """The tracebacks of a server log that pass through the book's code.

    A frame in the repository (``posenc_helpers``, ``tools``, but not ``.venv``), in any
    installed ``posenc_helpers``, or in the working copies the server serves names the
    book; a traceback of JupyterLab's own machinery alone (the server's, traitlets',
    tornado's callbacks while kernels shut down, issue 49) does not: what such noise
    could hide, the tests read on the page.
    """
    own = []
    for text in tracebacks(log):
        for path in (Path(m.group("path")) for m in map(_FRAME.match, text.splitlines()) if m):
            inside_repo = path.is_relative_to(REPO) and not path.is_relative_to(REPO / ".venv")
            if inside_repo or "posenc_helpers" in path.parts or path.is_relative_to(working_copies):
                own.append(text)
                break
    return own


class LabDidNotStart(RuntimeError):
    """The server did not answer within :data:`START_TIMEOUT_S` (the message holds its log)."""


@dataclass(frozen=True)
class Lab:
    base: str  # http://127.0.0.1:PORT
    token: str
    root: Path  # the folder JupyterLab serves
    log: Path

    def url(self, notebook: str) -> str:
        """The address that opens ``notebook`` (a file name in :attr:`root`)."""
        return f"{self.base}/lab/tree/{notebook}?token={self.token}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def running_lab(root: Path, home: Path) -> Iterator[Lab]:
    """JupyterLab serving ``root``, with its own set-up in ``home`` (an empty folder)."""
    port, token = free_port(), secrets.token_hex(16)
    env = dict(os.environ)
    for name, folder in {
        "JUPYTER_CONFIG_DIR": "config",
        "JUPYTER_RUNTIME_DIR": "runtime",
        "JUPYTERLAB_SETTINGS_DIR": "settings",
        "JUPYTERLAB_WORKSPACES_DIR": "workspaces",
        "IPYTHONDIR": "ipython",
    }.items():
        (home / folder).mkdir()
        env[name] = str(home / folder)
    log = home / "server.log"
    command = [
        READER_PYTHON,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        f"--port={port}",
        "--ServerApp.ip=127.0.0.1",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.app_settings_dir={LAB_SETTINGS}",
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp, to read the notebook's model
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    with log.open("w") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=root)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5).close()
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise LabDidNotStart(f"JupyterLab did not start:\n{log.read_text()[-3000:]}") from error
                time.sleep(1)
        yield Lab(base, token, root, log)
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
