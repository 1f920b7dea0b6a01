"""A reader's JupyterLab (issue 46, item 4).

Item 4: the student lab showed nbgrader's menu, Validate button and Create Assignment sidebar
once ``make test`` had installed nbgrader; ``make lab-student`` as root stopped with "Running as
root is not recommended"; ``make serve`` ignored ``PORT``. The command lines and settings are
read here (``tools/reader_lab.py --dry-run``, ``make -n``), not in a browser.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tools import reader_lab

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "notebooks" / "04_sine_cosine_pairs.ipynb"
MAKE = shutil.which("make")
needs_make = pytest.mark.skipif(MAKE is None, reason="make is not installed")


def _make(*args: str, cwd: Path = ROOT) -> str:
    done = subprocess.run(
        [MAKE, "-s", "-f", str(ROOT / "Makefile"), "-C", str(cwd), *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


# --------------------------------------------------------------------------- item 4: a student's lab
def test_the_command_passes_the_port_and_allow_root_as_root_only():
    as_root = reader_lab.lab_command(Path("copies"), Path("settings"), port=8890, uid=0, extra=["--no-browser"])
    assert as_root[1:3] == ["-m", "jupyterlab"]
    assert "--port=8890" in as_root and "--allow-root" in as_root and as_root[-1] == "--no-browser"
    as_user = reader_lab.lab_command(Path("copies"), Path("settings"), uid=1000)
    assert "--allow-root" not in as_user and not any(arg.startswith("--port") for arg in as_user)
    for bad in (0, 70000, "8890", True):
        with pytest.raises(ValueError, match="port"):
            reader_lab.lab_command(Path("copies"), Path("settings"), port=bad)


@pytest.mark.parametrize("uid", [0, 1000])
def test_the_student_lab_as_root_says_so_and_passes_allow_root(uid, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(reader_lab.os, "geteuid", lambda: uid)
    monkeypatch.setattr(reader_lab, "STUDENT_SETTINGS", tmp_path / "settings")
    monkeypatch.setattr(reader_lab, "write_student_settings", lambda: reader_lab.STUDENT_SETTINGS)
    monkeypatch.setattr(reader_lab, "write_copies", lambda notebooks, out, **_: ([out / CHAPTER.name], []))
    monkeypatch.setattr(reader_lab, "nbgrader_server_extensions", lambda: ["nbgrader.server_extensions.formgrader"])
    out = tmp_path / "student"
    args = ["--student", "--port", "8899", "--out", str(out), "--dry-run", str(CHAPTER), "--", "--no-browser"]
    assert reader_lab.main(args) == 0
    printed = capsys.readouterr().out.splitlines()
    command = shlex.split(printed[-1])
    assert f"--notebook-dir={out}" in command and "--port=8899" in command and command[-1] == "--no-browser"
    assert f"--LabApp.app_settings_dir={tmp_path / 'settings'}" in command
    assert "--ServerApp.jpserver_extensions=nbgrader.server_extensions.formgrader=False" in command
    assert ("--allow-root" in command) == (uid == 0)
    assert (reader_lab.ROOT_NOTE in printed) == (uid == 0)
    with pytest.raises(SystemExit):
        reader_lab.main(["--port", "none", "--out", str(out), str(CHAPTER)])


@pytest.mark.slow  # jupyterlab_server reads every installed labextension
def test_the_student_settings_disable_nbgraders_labextension(tmp_path):
    """JupyterLab's own page config, read from the settings folder as the server reads it."""
    from jupyter_core.paths import jupyter_path
    from jupyterlab_server.config import get_page_config

    settings = reader_lab.write_student_settings(tmp_path / "student")
    assert (settings / "overrides.json").read_text() == (reader_lab.LAB_SETTINGS / "overrides.json").read_text()
    extensions = jupyter_path("labextensions")
    student = get_page_config(extensions, app_settings_dir=str(settings))
    assert reader_lab.NBGRADER_LABEXTENSION in student["disabledExtensions"]
    book = get_page_config(extensions, app_settings_dir=str(reader_lab.LAB_SETTINGS))
    assert reader_lab.NBGRADER_LABEXTENSION not in book["disabledExtensions"]
    with pytest.raises(ValueError, match="source"):
        reader_lab.write_student_settings(tmp_path / "x", source=tmp_path / "missing")


@pytest.mark.slow  # jupyter_server's import
def test_the_student_lab_disables_nbgraders_server_extensions():
    """The server's own reading of the command line: nbgrader's extensions off, the rest as configured."""
    from jupyter_server.serverapp import ServerApp

    disabled = reader_lab.nbgrader_server_extensions()
    if not disabled:
        pytest.skip("nbgrader is not installed here: no server extension to disable")
    assert "nbgrader.server_extensions.formgrader" in disabled
    command = reader_lab.lab_command(Path("copies"), Path("settings"), disabled_server_extensions=disabled)
    app = ServerApp()
    app.parse_command_line([arg for arg in command if arg.startswith("--ServerApp.")])
    app.find_server_extensions()
    assert all(app.jpserver_extensions[name] is False for name in disabled)
    assert app.jpserver_extensions.get("jupyterlab") is True


@pytest.mark.slow  # four runs of make
@needs_make
def test_make_passes_port_to_lab_lab_student_and_serve():
    student = _make("-n", "lab-student", "PORT=8899", "LAB_ARGS=--no-browser")
    assert "-m tools.reader_lab --student --out _build/lab/student" in student
    assert "--port 8899" in student and student.rstrip().endswith("-- --no-browser")
    book = _make("-n", "lab", "PORT=8899")
    assert "-m tools.reader_lab --out _build/lab/book" in book and "--port 8899" in book
    assert "http.server 8123 --bind 127.0.0.1" in _make("-n", "serve", "PORT=8123")
    assert "http.server 8000 --bind 127.0.0.1" in _make("-n", "serve")
