"""A reader's JupyterLab and what make keeps of it (issue 46, items 2 and 4).

Item 2: ``make clean`` deleted ``_build/lab``, where ``make lab`` and ``make lab-student`` keep
the working copies a student writes answers in, and ``_build/course``, the instructor's nbgrader
course with its gradebook, submissions, grades and feedback (and ``_build/student``,
``_build/otter``). Now it keeps them; ``make clean-working-copies FORCE=1`` deletes the copies,
``make clean-kept FORCE=1`` all of them, and without FORCE each lists what it would delete.

Item 4: the student lab showed nbgrader's menu, Validate button and Create Assignment sidebar
once ``make test`` had installed nbgrader, and so did ``make lab``; ``make lab-student`` as root
stopped with "Running as root is not recommended"; ``make serve`` ignored ``PORT``. The command
lines and settings are read here (``tools/reader_lab.py --dry-run``, ``make -n``), not in a
browser.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
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


# --------------------------------------------------------------------------- item 2: no lost work
@pytest.mark.slow  # a Python process that reads the book to write a copy
@needs_make
def test_what_a_person_wrote_survives_make_clean_and_the_copy_step(tmp_path):
    build = tmp_path / "_build"
    answer = build / "lab" / "book" / CHAPTER.name
    student = build / "lab" / "student" / "01_why_order_matters.ipynb"
    checkpoint = build / "lab" / "student" / ".ipynb_checkpoints" / "01_why_order_matters-checkpoint.ipynb"
    gradebook = build / "course" / "gradebook.db"
    submission = build / "course" / "submitted" / "alice" / "ch04" / CHAPTER.name
    graded = build / "course" / "autograded" / "alice" / "ch04" / CHAPTER.name
    handout = build / "student" / CHAPTER.name
    otter = build / "otter" / "ch04" / "autograder" / CHAPTER.name
    kept = [answer, student, checkpoint, gradebook, submission, graded, handout, otter]
    outputs = [build / "html" / "index.html", build / "jax-cache" / "entry", tmp_path / ".pytest_cache" / "x"]
    outputs += [build / "student-book" / "_build" / "html" / "index.html", build / "student-branch" / "README.md"]
    for path in [*kept, *outputs]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"written in {path.name}")

    said = _make("clean", cwd=tmp_path)
    assert not any(path.exists() for path in outputs) and not (build / "html").exists()
    for path in kept:
        assert path.read_text() == f"written in {path.name}", path
    for folder in ("_build/lab", "_build/course", "_build/student", "_build/otter"):
        assert f"kept {folder}: " in said, folder
    assert "gradebook.db" in said and "make clean-kept" in said

    # make lab's copy step (tools/reader_lab.py, as the Makefile runs it) keeps the copy as it is
    copied = subprocess.run(
        [sys.executable, "-m", "tools.reader_lab", "--out", str(answer.parent), "--dry-run", str(CHAPTER)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "0 chapter(s) copied" in copied.stdout and "1 kept as you left them" in copied.stdout
    assert answer.read_text() == f"written in {answer.name}"
    recipe = _make("-n", "lab")  # the step above is make lab's, which renews nothing without FORCE=1
    assert "-m tools.reader_lab --out _build/lab/book " in recipe and "--force" not in recipe

    # clean-working-copies without FORCE: says what it would delete, deletes nothing
    listed = _make("clean-working-copies", cwd=tmp_path)
    assert listed.startswith("would delete _build/lab, the working copies of make lab and make lab-student")
    assert f"  _build/lab/book/{CHAPTER.name}\n" in listed and f"  _build/lab/student/{student.name}\n" in listed
    assert "checkpoint" not in listed and "nothing deleted: make clean-working-copies FORCE=1" in listed
    assert answer.is_file() and student.is_file()

    # clean-kept without FORCE: every kept folder and what is in it, nothing deleted
    listed = _make("clean-kept", cwd=tmp_path)
    assert "would delete _build/course, make course's nbgrader course" in listed
    for line in (
        "  _build/course/gradebook.db",
        "  _build/course/submitted/ (1 files)",
        "  _build/course/autograded/ (1 files)",
    ):
        assert line + "\n" in listed, line
    assert f"  _build/student/{CHAPTER.name}\n" in listed and "  _build/otter/ch04/ (1 files)\n" in listed
    assert "  _build/lab/student/ (2 files)\n" in listed  # the checkpoint counted
    assert listed.rstrip().endswith("nothing deleted: make clean-kept FORCE=1 deletes them")
    assert all(path.is_file() for path in kept)

    deleted = _make("clean-working-copies", "FORCE=1", cwd=tmp_path)
    assert deleted.startswith("deleting _build/lab,") and deleted.rstrip().endswith("deleted _build/lab")
    assert not (build / "lab").exists() and gradebook.is_file() and handout.is_file()
    deleted = _make("clean-kept", "FORCE=1", cwd=tmp_path)
    for folder in ("_build/course", "_build/student", "_build/otter"):
        assert f"deleting {folder}, " in deleted and f"deleted {folder}\n" in deleted, folder
    assert "_build/lab" not in deleted  # already gone: not named
    assert not any(path.exists() for path in kept) and list(build.iterdir()) == []
    assert _make("clean-kept", cwd=tmp_path).startswith("nothing kept: none of _build/lab _build/course")


@needs_make
def test_make_help_says_what_clean_keeps_and_what_deletes_it():
    lines = {line.split()[1]: line for line in _make("help").splitlines() if line.startswith("make ")}
    assert "keeps .venv and what a person may have written in: _build/lab, _build/course" in lines["clean"]
    assert "FORCE=1" in lines["clean-working-copies"] and "only list them" in lines["clean-working-copies"]
    assert "FORCE=1" in lines["clean-kept"] and "gradebook" in lines["clean-kept"]
    for target in ("lab", "lab-student", "serve"):
        assert "[PORT=" in lines[target], lines[target]


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
@pytest.mark.parametrize("student", [True, False])
def test_both_labs_hide_nbgrader_and_as_root_say_so_and_pass_allow_root(uid, student, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(reader_lab.os, "geteuid", lambda: uid)
    copied = []
    monkeypatch.setattr(reader_lab, "copy_and_report", lambda notebooks, out, **kw: copied.append((out, kw)))
    monkeypatch.setattr(reader_lab, "nbgrader_server_extensions", lambda: ["nbgrader.server_extensions.formgrader"])
    out = tmp_path / "copies"
    args = [*(["--student"] if student else []), "--port", "8899", "--out", str(out), "--dry-run", str(CHAPTER)]
    assert reader_lab.main([*args, "--", "--no-browser"]) == 0
    assert copied == [(out, {"student": student, "force": False})]
    printed = capsys.readouterr().out.splitlines()
    command = shlex.split(printed[-1])
    assert f"--notebook-dir={out}" in command and "--port=8899" in command and command[-1] == "--no-browser"
    assert f"--LabApp.app_settings_dir={ROOT / 'tools' / 'jupyterlab'}" in command
    assert "--ServerApp.jpserver_extensions=nbgrader.server_extensions.formgrader=False" in command
    assert ("--allow-root" in command) == (uid == 0)
    assert (reader_lab.ROOT_NOTE in printed) == (uid == 0)
    with pytest.raises(SystemExit):
        reader_lab.main(["--port", "none", "--out", str(out), str(CHAPTER)])


@pytest.mark.slow  # jupyterlab_server reads every installed labextension
def test_the_labs_settings_disable_nbgraders_labextension(tmp_path):
    """JupyterLab's own page config, read from the settings folder as the server reads it:
    the folder make lab and make lab-student pass disables nbgrader's extension, a folder
    without its page_config.json does not."""
    from jupyter_core.paths import jupyter_path
    from jupyterlab_server.config import get_page_config

    extensions = jupyter_path("labextensions")
    lab = get_page_config(extensions, app_settings_dir=str(ROOT / "tools" / "jupyterlab"))
    assert "@jupyter/nbgrader" in lab["disabledExtensions"]
    (tmp_path / "overrides.json").write_text("{}")
    assert "@jupyter/nbgrader" not in get_page_config(extensions, app_settings_dir=str(tmp_path))["disabledExtensions"]


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


# --------------------------------------------------------------------------- Binder's edition (issue 46, item 1)
def test_hub_configuration_and_launch_url_refuse_what_they_cannot_use(tmp_path):
    from tools.site.launch import student_copy_url

    for folders in ({"student": tmp_path}, {"student": tmp_path, "book": tmp_path, "x": tmp_path}, [tmp_path]):
        with pytest.raises(ValueError, match="folders must map each of"):
            reader_lab.server_config(folders)
    with pytest.raises(SystemExit):  # --hub-config starts nothing: no --student, --port, --dry-run or LAB_ARGS
        reader_lab.main(["--hub-config", str(tmp_path / "c.py"), "--student", "--out", str(tmp_path), str(CHAPTER)])
    assert not (tmp_path / "c.py").exists()
    with pytest.raises(TypeError, match="url must be a string"):
        student_copy_url(None)
    # only a chapter of notebooks/ is moved to the server's root; the intro page, Colab, etc. are not
    for url in (
        "https://mybinder.org/v2/gh/o/r/main?urlpath=lab/tree/book/intro.md",
        "https://colab.research.google.com/github/o/r/blob/main/notebooks/04_x.ipynb",
    ):
        assert student_copy_url(url) == url
    assert student_copy_url("https://mybinder.org/v2/gh/o/r/main?urlpath=tree/notebooks/11_y_z.ipynb") == (
        "https://mybinder.org/v2/gh/o/r/main?urlpath=tree/11_y_z.ipynb"
    )
