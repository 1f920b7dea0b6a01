"""The JupyterLab tests tell the server's own shutdown noise from a failure of the book (issue 49).

Under load, ``tests/browser/test_jupyterlab_references.py`` failed on "Traceback" in the
server's log: a traitlets lookup in a tornado callback while a kernel shut down, every
chapter's references reading right. The tests now fail on a traceback only when a frame
is the book's code (``tests/browser/_jupyterlab.py``, ``project_tracebacks``). The logs
below are written by hand in the server's format.
"""

from __future__ import annotations

from pathlib import Path

from tests.browser._jupyterlab import REPO, project_tracebacks, tracebacks

SITE = "/usr/lib/python3.11/site-packages"
SHUTDOWN_NOISE = f"""[I 2026-11-29 03:12:01.101 ServerApp] Kernel shutdown: 5f1c
[E 2026-11-29 03:12:01.230 ServerApp] Exception in callback functools.partial(<function ...>)
    Traceback (most recent call last):
      File "{SITE}/tornado/ioloop.py", line 750, in _run_callback
        ret = callback()
      File "{SITE}/jupyter_client/ioloop/restarter.py", line 98, in poll
        if self.kernel_manager.is_alive():
      File "{SITE}/traitlets/traitlets.py", line 687, in get
        value = obj._trait_values[self.name]
    KeyError: 'kernel'
[I 2026-11-29 03:12:02.000 ServerApp] Saving file at /01_why_order_matters.ipynb
"""


def _book_traceback(path: Path) -> str:
    return f"""[E 2026-11-29 03:13:00.000 ServerApp] Uncaught exception GET /api/contents
    Traceback (most recent call last):
      File "{SITE}/jupyter_server/services/contents/handlers.py", line 120, in get
        model = await self.contents_manager.get(path)
      File "{path}", line 12, in get
        raise ValueError("no")
    ValueError: no
[I 2026-11-29 03:13:01.000 ServerApp] 500 GET /api/contents
"""


def test_the_servers_shutdown_noise_is_found_and_not_the_books(tmp_path):
    found = tracebacks(SHUTDOWN_NOISE)
    assert len(found) == 1 and found[0].splitlines()[-1].strip() == "KeyError: 'kernel'"
    assert "Saving file" not in found[0]
    assert project_tracebacks(SHUTDOWN_NOISE, tmp_path) == []


def test_a_traceback_through_the_books_code_fails(tmp_path):
    for path in (
        REPO / "posenc_helpers" / "widgets" / "ch01_why_order_matters.py",
        REPO / "tools" / "working_copies.py",
        Path(SITE) / "posenc_helpers" / "checks" / "_core.py",  # an installed package
        tmp_path / "01_why_order_matters.ipynb",  # a working copy the server serves
    ):
        log = SHUTDOWN_NOISE + _book_traceback(path)
        own = project_tracebacks(log, tmp_path)
        assert len(own) == 1 and str(path) in own[0] and own[0].splitlines()[-1].strip() == "ValueError: no"
    venv = REPO / ".venv" / "lib" / "python3.11" / "site-packages" / "traitlets" / "traitlets.py"
    assert project_tracebacks(_book_traceback(venv), tmp_path) == []  # the repository's .venv is not the book
