"""Binder as repo2docker really builds it (issue 38, item 10).

repo2docker writes the Dockerfile that Binder builds; ``repo2docker --no-build --debug``
prints it without Docker. The repository root has a ``pyproject.toml``, so without
``binder/`` repo2docker adds ``pip install .`` after the requirements, which replaces the
editable install of ``posenc_helpers``. With ``binder/`` it reads that folder only. These
tests run repo2docker on a clean checkout (a ``git clone`` of HEAD with the working tree's
``binder/`` copied in) and read the Dockerfile; and they run ``binder/postBuild`` against a
temporary environment prefix and read its settings back with JupyterLab's own code.

Without repo2docker (``jupyter-repo2docker``, requirements-dev.txt) the Dockerfile tests are
skipped with a message, or fail where ``POSENC_REQUIRE_REPO2DOCKER=1`` (``.ci/run`` sets it).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"
OVERRIDES = ROOT / "tools" / "jupyterlab" / "overrides.json"
# The setting that overrides.json changes (tools/jupyterlab/README.md) and its plugin.
PLUGIN = "@jupyterlab/apputils-extension:kernels-settings"
SETTING = "commsOverSubshells"
# Binder (BinderHub) builds as this user; repo2docker's own default is whoever runs it.
BINDER_USER = ("1000", "jovyan")


def _require_repo2docker() -> None:
    if importlib.util.find_spec("repo2docker") is not None:
        return
    message = (
        "repo2docker is not installed (jupyter-repo2docker, pinned in requirements-dev.txt): "
        "the Dockerfile Binder builds is not checked"
    )
    if os.environ.get("POSENC_REQUIRE_REPO2DOCKER") == "1":
        pytest.fail(f"POSENC_REQUIRE_REPO2DOCKER=1 but {message}")
    pytest.skip(message)


def _clean_checkout(destination: Path, *, with_binder: bool) -> Path:
    """A clone of HEAD, with the working tree's binder/ (or none at all)."""
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(destination)], check=True, timeout=120)
    shutil.rmtree(destination / "binder", ignore_errors=True)
    if with_binder:
        shutil.copytree(BINDER, destination / "binder")
    return destination


def _dockerfile(checkout: Path) -> tuple[str, str]:
    """The Dockerfile repo2docker would build for ``checkout``, and what it logged."""
    uid, name = BINDER_USER
    result = subprocess.run(
        [sys.executable, "-m", "repo2docker", "--no-build", "--debug", "--user-id", uid, "--user-name", name, "."],
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "FROM " in result.stdout, f"repo2docker printed no Dockerfile:\n{result.stdout}\n{result.stderr}"
    return result.stdout, result.stderr


def _run_lines(dockerfile: str) -> list[str]:
    return [line.strip() for line in dockerfile.splitlines() if line.strip().startswith("RUN ")]


def _pip_installs(dockerfile: str) -> list[str]:
    return [line for line in _run_lines(dockerfile) if re.search(r"\bpip install\b", line)]


@pytest.fixture(scope="module")
def binder_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    _require_repo2docker()
    checkout = _clean_checkout(tmp_path_factory.mktemp("binder") / "checkout", with_binder=True)
    return _dockerfile(checkout)


def test_without_binder_folder_repo2docker_installs_the_root_as_a_package(tmp_path: Path) -> None:
    """The defect the folder is for: reproduced, so that the next test could fail."""
    _require_repo2docker()
    dockerfile, _ = _dockerfile(_clean_checkout(tmp_path / "checkout", with_binder=False))
    installs = _pip_installs(dockerfile)
    assert 'RUN ${KERNEL_PYTHON_PREFIX}/bin/pip install --no-cache-dir -r "requirements.txt"' in installs
    assert "RUN ${KERNEL_PYTHON_PREFIX}/bin/pip install --no-cache-dir ." in installs


def test_binder_folder_installs_its_requirements_and_nothing_else(binder_build: tuple[str, str]) -> None:
    dockerfile, _ = binder_build
    lines = [line.strip() for line in dockerfile.splitlines()]
    install = 'RUN ${KERNEL_PYTHON_PREFIX}/bin/pip install --no-cache-dir -r "binder/requirements.txt"'
    # The only pip install: no `pip install .` that would replace the editable install.
    assert _pip_installs(dockerfile) == [install]
    # It runs once the whole repository is there (its -r, -c and -e . name files outside binder/),
    # as the notebook user, from the repository root.
    copy_all = next(i for i, line in enumerate(lines) if re.fullmatch(r"COPY --chown=\S+ src/ \$\{REPO_DIR\}/", line))
    at = lines.index(install)
    assert copy_all < at
    assert [line for line in lines[:at] if line.startswith("USER ")][-1] == "USER ${NB_USER}"
    workdirs = [line for line in lines[:at] if line.startswith("WORKDIR ")]
    assert workdirs[-1] == "WORKDIR ${REPO_DIR}"


def test_binder_runs_post_build_after_the_requirements(binder_build: tuple[str, str]) -> None:
    dockerfile, _ = binder_build
    lines = [line.strip() for line in dockerfile.splitlines()]
    post_build = lines.index("RUN ./binder/postBuild")
    assert (
        lines.index('RUN ${KERNEL_PYTHON_PREFIX}/bin/pip install --no-cache-dir -r "binder/requirements.txt"')
        < post_build
    )
    assert [line for line in lines[:post_build] if line.startswith("USER ")][-1] == "USER ${NB_USER}"
    assert [line for line in lines[:post_build] if line.startswith("WORKDIR ")][-1] == "WORKDIR ${REPO_DIR}"


def test_binder_environment_is_the_one_post_build_writes_into(binder_build: tuple[str, str]) -> None:
    """pip installs JupyterLab into the kernel environment; postBuild writes under NB_PYTHON_PREFIX."""
    dockerfile, _ = binder_build
    assert "ENV KERNEL_PYTHON_PREFIX=${NB_PYTHON_PREFIX}" in dockerfile.splitlines()
    path = next(line for line in dockerfile.splitlines() if line.startswith("ENV PATH="))
    assert path.startswith("ENV PATH=${NB_PYTHON_PREFIX}/bin:")


def test_binder_python_is_the_one_runtime_txt_pins(binder_build: tuple[str, str]) -> None:
    _, log = binder_build
    pinned = (ROOT / "runtime.txt").read_text(encoding="utf-8").strip()
    assert (BINDER / "runtime.txt").read_text(encoding="utf-8").strip() == pinned
    assert re.fullmatch(r"python-\d+\.\d+", pinned), pinned
    assert f"Building conda environment for python={pinned.removeprefix('python-')}\n" in log


def test_binder_requirements_pins_agree_with_the_lock() -> None:
    """binder/requirements.txt names the reader layer and pins only what the lock pins, at its version."""
    lines = [
        line.split("#", 1)[0].strip() for line in (BINDER / "requirements.txt").read_text(encoding="utf-8").splitlines()
    ]
    lines = [line for line in lines if line]
    assert lines[0] == "-r ../requirements.txt"
    assert (BINDER / "../requirements.txt").resolve() == ROOT / "requirements.txt"
    locked = dict(
        line.split("==")
        for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines()
        if "==" in line and not line.startswith("#")
    )
    for line in lines[1:]:
        name, _, version = line.partition("==")
        assert version, f"binder/requirements.txt: {line!r} is not pinned exactly"
        assert locked.get(name) == version, f"binder/requirements.txt pins {line}, constraints.txt {locked.get(name)}"


# ----------------------------------------------------------------------------- postBuild


def _fake_prefix(prefix: Path, python: str) -> Path:
    """An environment prefix whose bin/python is the shell script ``python``."""
    (prefix / "bin").mkdir(parents=True)
    executable = prefix / "bin" / "python"
    executable.write_text(f"#!/bin/sh\n{python}\n", encoding="utf-8")
    executable.chmod(0o755)
    return prefix


def _post_build(prefix: Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """Run binder/postBuild from ``cwd``: by default the repository root, where this
    environment's posenc_helpers is installed editable. The working copies go to
    ``prefix``'s sibling ``lab`` (POSENC_LAB_COPIES), never into the repository's _build/lab."""
    environment = {key: value for key, value in os.environ.items() if key != "NB_PYTHON_PREFIX"}
    environment["NB_PYTHON_PREFIX"] = str(prefix)
    environment["POSENC_LAB_COPIES"] = str(prefix.parent / "lab")
    return subprocess.run(
        ["bash", str(cwd / "binder" / "postBuild")],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _jupyterlab_settings_dir() -> tuple[Path, Path]:
    """Where JupyterLab in this environment reads overrides.json, and the environment's prefix.

    Asked of JupyterLab itself (its LabApp's default ``app_settings_dir``, from
    ``get_app_dir()``), in a fresh process without ``JUPYTERLAB_DIR``, as Binder starts it.
    """
    code = (
        "import json, sys; from jupyterlab.labapp import LabApp; "
        "print(json.dumps([LabApp().app_settings_dir, sys.prefix]))"
    )
    environment = {key: value for key, value in os.environ.items() if key != "JUPYTERLAB_DIR"}
    result = subprocess.run(
        [sys.executable, "-c", code], env=environment, capture_output=True, text=True, timeout=120, check=True
    )
    settings, prefix = json.loads(result.stdout)
    return Path(settings), Path(prefix)


def _setting(app_settings_dir: Path) -> str:
    """The default of SETTING that JupyterLab's server gives the browser, with this settings folder."""
    from jupyterlab.commands import get_app_dir
    from jupyterlab_server.settings_utils import get_settings

    empty = app_settings_dir.parent / "user-settings"
    empty.mkdir(parents=True, exist_ok=True)
    result, _ = get_settings(
        str(app_settings_dir), str(Path(get_app_dir()) / "schemas"), str(empty), schema_name=PLUGIN
    )
    return result["schema"]["properties"][SETTING]["default"]


@pytest.fixture(scope="module")
def binder_build_output(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """binder/postBuild run once, as Binder runs it, into a temporary environment prefix:
    (the prefix, the folder of the working copies)."""
    pytest.importorskip("jupyterlab", reason="JupyterLab is installed by the reader layer (requirements.txt)")
    prefix = _fake_prefix(tmp_path_factory.mktemp("binder-build") / "prefix", f'exec "{sys.executable}" "$@"')
    result = _post_build(prefix)
    assert result.returncode == 0, result.stderr
    return prefix, prefix.parent / "lab"


@pytest.mark.slow  # postBuild writes every chapter twice
def test_post_build_puts_the_overrides_where_jupyterlab_reads_them(
    binder_build_output: tuple[Path, Path], tmp_path: Path
) -> None:
    settings, prefix = _jupyterlab_settings_dir()
    relative = settings.relative_to(prefix.resolve())
    assert relative == Path("share/jupyter/lab/settings")

    binder_prefix, copies = binder_build_output
    written = binder_prefix / relative / "overrides.json"
    assert written.read_bytes() == OVERRIDES.read_bytes()
    # Read back as JupyterLab's server reads it: the override changes the default it serves.
    wanted = json.loads(OVERRIDES.read_text(encoding="utf-8"))[PLUGIN][SETTING]
    assert _setting(binder_prefix / relative) == wanted
    assert _setting(tmp_path / "no-overrides" / "settings") != wanted
    # page_config.json beside it: nbgrader's extension off, as in make lab and make lab-student
    page_config = json.loads((binder_prefix / relative / "page_config.json").read_text(encoding="utf-8"))
    assert page_config == {"disabledExtensions": {"@jupyter/nbgrader": True}}
    # A second run (a rebuild) finds its own files and succeeds, keeping the copies it wrote.
    copy = copies / "student" / CHAPTER
    original = copy.read_bytes()
    copy.write_text("edited", encoding="utf-8")
    try:
        again = _post_build(binder_prefix)
        assert again.returncode == 0, again.stderr
        assert f"0 chapter(s) copied without solutions, {len(_chapters())} kept as you left them" in again.stdout
        assert copy.read_text(encoding="utf-8") == "edited"
    finally:
        copy.write_bytes(original)  # the other tests read the copy as postBuild wrote it


def test_post_build_keeps_other_overrides(tmp_path: Path) -> None:
    prefix = _fake_prefix(tmp_path / "prefix", f'exec "{sys.executable}" "$@"')
    existing = prefix / "share/jupyter/lab/settings/overrides.json"
    existing.parent.mkdir(parents=True)
    existing.write_text('{"@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"}}\n', encoding="utf-8")
    before = existing.read_bytes()
    result = _post_build(prefix)
    assert result.returncode == 1
    assert "exists with other settings" in result.stderr
    assert existing.read_bytes() == before


def test_post_build_fails_when_the_package_is_not_installed_editable(tmp_path: Path) -> None:
    """A Python that imports posenc_helpers from site-packages, as after `pip install .`."""
    elsewhere = tmp_path / "prefix" / "lib" / "python3.11" / "site-packages" / "posenc_helpers" / "__init__.py"
    prefix = _fake_prefix(tmp_path / "prefix", f'echo "{elsewhere}"')
    result = _post_build(prefix)
    assert result.returncode == 1
    assert "is not installed editable" in result.stderr
    assert str(elsewhere) in result.stderr


def test_post_build_does_not_take_the_package_folder_for_an_install(tmp_path: Path) -> None:
    """In another checkout this environment's posenc_helpers (editable from ROOT) is not that
    checkout's, although its folder sits in the working directory."""
    checkout = _clean_checkout(tmp_path / "checkout", with_binder=True)
    prefix = _fake_prefix(tmp_path / "prefix", f'exec "{sys.executable}" "$@"')
    result = _post_build(prefix, cwd=checkout)
    assert result.returncode == 1
    assert "is not installed editable" in result.stderr
    assert str(ROOT.resolve() / "posenc_helpers" / "__init__.py") in result.stderr


# --------------------------------------------------------- what a Binder student opens (issue 46, item 1)
CHAPTER = "04_sine_cosine_pairs.ipynb"
#: MyST markers of a solution in the tracked notebooks (the gated form and the plain directive).
SOLUTION_MARKER = re.compile(r"\{solution(?:-start)?\}")


def _chapters() -> list[str]:
    return sorted(path.name for path in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _solution_code(cells: list[dict]) -> list[str]:
    """The code cells between a ``{solution-start}`` and its ``{solution-end}`` (the gated form)."""
    inside, found = False, []
    for cell in cells:
        text = _source(cell)
        if cell["cell_type"] == "markdown" and "{solution-start}" in text:
            inside = "{solution-end}" not in text
        elif cell["cell_type"] == "markdown" and "{solution-end}" in text:
            inside = False
        elif inside and cell["cell_type"] == "code" and text.strip():
            found.append(text.strip())
    return found


@pytest.mark.slow  # postBuild writes every chapter twice
def test_post_build_writes_every_chapter_as_a_student_sees_it(binder_build_output: tuple[Path, Path]) -> None:
    _, copies = binder_build_output
    chapters = _chapters()
    assert len(chapters) >= 14
    assert sorted(path.name for path in (copies / "student").glob("*.ipynb")) == chapters
    assert sorted(path.name for path in (copies / "book").glob("*.ipynb")) == chapters
    markers = solution_cells = 0
    for name in chapters:
        tracked = _cells(ROOT / "notebooks" / name)
        student = _cells(copies / "student" / name)
        book = _cells(copies / "book" / name)
        tracked_markdown = "\n".join(_source(cell) for cell in tracked if cell["cell_type"] == "markdown")
        student_markdown = "\n".join(_source(cell) for cell in student if cell["cell_type"] == "markdown")
        book_markdown = "\n".join(_source(cell) for cell in book if cell["cell_type"] == "markdown")
        # no solution: not a marker, not a line of a solution's code (the instructor's edition keeps them)
        markers += len(SOLUTION_MARKER.findall(tracked_markdown))
        assert not SOLUTION_MARKER.search(student_markdown), name
        assert len(SOLUTION_MARKER.findall(book_markdown)) == len(SOLUTION_MARKER.findall(tracked_markdown)), name
        student_code = {_source(cell).strip() for cell in student if cell["cell_type"] == "code"}
        for code in _solution_code(tracked):
            solution_cells += 1
            assert code not in student_code, (name, code[:80])
        # the website's numbers: "# 4. Sine and cosine pairs" over "# Sine and cosine pairs", sections 4.1, ...
        number = int(name[:2])
        title = next(line for line in tracked_markdown.splitlines() if line.startswith("# "))[2:]
        assert f"\n# {number}. {title}\n" in f"\n{student_markdown}\n", name
        assert f"\n## {number}.1 " in student_markdown, name
        # references and citations written out: no role left, no "(section %s)", no citation key
        for raw in ("{cite", "{numref}", "{ref}", "{doc}", "%s"):
            assert raw not in student_markdown, (name, raw)
    assert markers > 20 and solution_cells > 10  # the tracked notebooks have solutions to leave out
    museum = "14_positional_bugs_museum.ipynb"
    assert "lytning2023llama" in (ROOT / "notebooks" / museum).read_text(encoding="utf-8")
    assert "lytning2023llama" not in (copies / "student" / museum).read_text(encoding="utf-8")
    assert "(section %s)" not in (copies / "student" / CHAPTER).read_text(encoding="utf-8")


def _server_root_dirs(config_dir: Path, editions: list[str]) -> tuple[list[str], str]:
    """The root folder Jupyter Server's own configuration loading gives, for each value of
    POSENC_LAB_EDITION, with ``config_dir`` as a configuration folder; and what it printed."""
    code = (
        "import json, os, sys\n"
        "from jupyter_server.serverapp import ServerApp\n"
        "roots = []\n"
        "for edition in json.loads(sys.argv[1]):\n"
        "    os.environ['POSENC_LAB_EDITION'] = edition\n"
        "    app = ServerApp()\n"
        "    app.load_config_file()\n"
        "    roots.append(app.root_dir)\n"
        "print(json.dumps(roots))\n"
    )
    environment = {key: value for key, value in os.environ.items() if not key.startswith("JUPYTER")}
    environment["JUPYTER_CONFIG_PATH"] = str(config_dir)
    environment["JUPYTER_CONFIG_DIR"] = str(config_dir.parent / "empty-user-config")
    result = subprocess.run(
        [sys.executable, "-c", code, json.dumps(editions)],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(result.stdout), result.stderr


@pytest.mark.slow  # postBuild writes every chapter twice
def test_post_build_points_jupyter_server_at_the_student_copies(binder_build_output: tuple[Path, Path]) -> None:
    prefix, copies = binder_build_output
    # where a server of an environment at prefix P reads its configuration: P/etc/jupyter (asked of jupyter_core)
    code = (
        "import json, sys; from jupyter_core.paths import jupyter_config_path; "
        "print(json.dumps([jupyter_config_path(), sys.prefix]))"
    )
    paths, env_prefix = json.loads(subprocess.check_output([sys.executable, "-c", code], text=True, timeout=60))
    assert str(Path(env_prefix) / "etc" / "jupyter") in paths
    config_dir = prefix / "etc" / "jupyter"
    assert (config_dir / "jupyter_server_config.py").is_file()
    roots, said = _server_root_dirs(config_dir, ["", "student", "book", "instructor"])
    student, book = str((copies / "student").resolve()), str((copies / "book").resolve())
    assert roots == [student, student, book, student]
    assert "POSENC_LAB_EDITION='instructor' is none of student, book: opening the student copies" in said
    # without the file, the server's root is where it starts (the repository on Binder, solutions and all)
    assert _server_root_dirs(prefix / "elsewhere", [""])[0] != [student]


def test_a_server_configuration_whose_copies_are_gone_still_starts_the_server(tmp_path: Path) -> None:
    """A hub that mounts a home over the image's hides the copies: the server keeps its default
    root (where it starts) and says why, instead of refusing to start for a missing folder."""
    from tools.reader_lab import server_config

    config_dir = tmp_path / "etc" / "jupyter"
    config_dir.mkdir(parents=True)
    missing = {"student": tmp_path / "gone" / "student", "book": tmp_path / "gone" / "book"}
    (config_dir / "jupyter_server_config.py").write_text(server_config(missing), encoding="utf-8")
    roots, said = _server_root_dirs(config_dir, [""])
    assert roots == [os.getcwd()]
    assert f"{(tmp_path / 'gone' / 'student').resolve()} is not there: the server opens its default folder" in said


def test_post_build_keeps_a_server_configuration_it_did_not_write(tmp_path: Path) -> None:
    prefix = _fake_prefix(tmp_path / "prefix", f'exec "{sys.executable}" "$@"')
    foreign = prefix / "etc" / "jupyter" / "jupyter_server_config.py"
    foreign.parent.mkdir(parents=True)
    foreign.write_text("c.ServerApp.root_dir = '/srv/data'\n", encoding="utf-8")
    result = _post_build(prefix)
    assert result.returncode == 1
    assert "exists and was not written by tools/reader_lab.py" in result.stderr
    assert foreign.read_text(encoding="utf-8") == "c.ServerApp.root_dir = '/srv/data'\n"
    assert not (tmp_path / "lab").exists()  # refused before a copy was written


def _theme_launch_buttons(*, student_edition: bool) -> dict[str, str]:
    """The launch buttons sphinx-book-theme makes for chapter 4's page of a book at
    github.com/you/posenc-book (branch main), then tools/site's handler: {text: url}."""
    from sphinx_book_theme.header_buttons.launch import add_launch_buttons

    from tools.site import launch

    pagename = "notebooks/04_sine_cosine_pairs"
    options = {
        "launch_buttons": {
            "notebook_interface": "jupyterlab",
            "binderhub_url": "https://mybinder.org",
            "colab_url": "https://colab.research.google.com",
        },
        "repository_branch": "main",
    }
    env = SimpleNamespace(doc2path=lambda name: str(ROOT / f"{name}.ipynb"), metadata={pagename: {"kernelspec": {}}})
    app = SimpleNamespace(
        env=env, config=_Config({"html_theme_options": options}, posenc_student_edition=student_edition)
    )
    context = {
        "pagename": pagename,
        "sourcename": f"{pagename}.ipynb.txt",
        "header_buttons": [],
        "github_url": "https://github.com",
        "github_user": "you",
        "github_repo": "posenc-book",
    }
    add_launch_buttons(app, pagename, "page.html", context, None)
    launch.open_student_copies(app, pagename, "page.html", context, None)
    (group,) = [group for group in context["header_buttons"] if group.get("label") == "launch-buttons"]
    return {button["text"]: button.get("url", "") for button in group["buttons"]}


class _Config(dict):
    """Sphinx's config as the theme reads it (``config["html_theme_options"]``) and as
    tools/site reads it (``config.posenc_student_edition``)."""

    def __init__(self, values: dict, **attributes: object) -> None:
        super().__init__(values)
        self.__dict__.update(attributes)


@pytest.mark.slow  # sphinx-book-theme's import
def test_the_binder_button_opens_the_student_copy(binder_build_output: tuple[Path, Path]) -> None:
    _, copies = binder_build_output
    buttons = _theme_launch_buttons(student_edition=False)
    assert (
        buttons["Binder"]
        == "https://mybinder.org/v2/gh/you/posenc-book/main?urlpath=lab/tree/04_sine_cosine_pairs.ipynb"
    )
    assert (copies / "student" / "04_sine_cosine_pairs.ipynb").is_file()  # at the server's root
    # Colab reads the tracked notebook from GitHub; the student edition opens the student
    # branch, whose Binder serves the repository (its notebooks/ hold the release)
    assert buttons["Colab"].endswith("/github/you/posenc-book/blob/main/notebooks/04_sine_cosine_pairs.ipynb")
    student = _theme_launch_buttons(student_edition=True)
    assert student["Binder"].endswith("?urlpath=lab/tree/notebooks/04_sine_cosine_pairs.ipynb")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.slow  # starts JupyterLab
def test_jupyterlab_started_as_binderhub_starts_it_serves_the_student_copies(
    binder_build_output: tuple[Path, Path], tmp_path: Path
) -> None:
    """JupyterLab from the repository root with BinderHub's arguments (BinderSpawnerMixin.get_args:
    address, port, base URL, token; no root folder) and the configuration postBuild wrote: its
    contents API, what the file browser lists, is the student copies and nothing above them."""
    prefix, _ = binder_build_output
    port, token, base = _free_port(), secrets.token_hex(16), "/user/student-x/"
    environment = {key: value for key, value in os.environ.items() if not key.startswith("JUPYTER")}
    environment["JUPYTER_CONFIG_PATH"] = str(prefix / "etc" / "jupyter")
    for name in ("CONFIG", "DATA", "RUNTIME"):
        environment[f"JUPYTER_{name}_DIR"] = str(tmp_path / name.lower())
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}"]
    command += [f"--ServerApp.base_url={base}", f"--ServerApp.token={token}"]
    command += ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    log = (tmp_path / "jupyterlab.log").open("w")
    server = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT)

    def get(path: str) -> tuple[int, dict]:
        request = urllib.request.Request(f"http://127.0.0.1:{port}{base}api/contents/{path}")
        request.add_header("Authorization", f"token {token}")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, {}

    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                status, root = get("")
                break
            except (urllib.error.URLError, ConnectionError):
                assert server.poll() is None, (tmp_path / "jupyterlab.log").read_text()
                assert time.monotonic() < deadline, "JupyterLab did not answer in 180 s"
                time.sleep(1)
        assert status == 200
        assert sorted(item["name"] for item in root["content"]) == _chapters()
        status, chapter = get(CHAPTER)
        assert status == 200 and chapter["type"] == "notebook"
        markdown = "\n".join(cell["source"] for cell in chapter["content"]["cells"] if cell["cell_type"] == "markdown")
        assert "# 4. " in markdown and not SOLUTION_MARKER.search(markdown)
        assert get("notebooks")[0] == 404 and get(f"../../notebooks/{CHAPTER}")[0] in (403, 404)
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def test_post_build_on_the_student_branch_leaves_its_notebooks_as_they_are(tmp_path: Path) -> None:
    """make student-branch copies binder/ and tools/jupyterlab/overrides.json alone (tools/course/
    student.py): its notebooks/ are the release, without solutions, and its Binder opens them as
    they are, with no tools/reader_lab.py to call and no server configuration written."""
    from tools.course import student

    branch = tmp_path / "branch"
    shutil.copytree(BINDER, branch / "binder")
    (branch / student.JUPYTERLAB_SETTINGS).parent.mkdir(parents=True)
    shutil.copyfile(ROOT / student.JUPYTERLAB_SETTINGS, branch / student.JUPYTERLAB_SETTINGS)
    installed = branch.resolve() / "posenc_helpers" / "__init__.py"  # as its requirements.txt installs it
    prefix = _fake_prefix(tmp_path / "prefix", f'echo "{installed}"')
    result = _post_build(prefix, cwd=branch)
    assert result.returncode == 0, result.stderr
    assert "no tools/reader_lab.py (the student branch)" in result.stdout
    assert (prefix / "share/jupyter/lab/settings/overrides.json").read_bytes() == OVERRIDES.read_bytes()
    assert not (prefix / "etc").exists() and not (tmp_path / "lab").exists()
