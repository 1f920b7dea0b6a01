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
import shutil
import subprocess
import sys
from pathlib import Path

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
    environment's posenc_helpers is installed editable."""
    environment = {key: value for key, value in os.environ.items() if key != "NB_PYTHON_PREFIX"}
    environment["NB_PYTHON_PREFIX"] = str(prefix)
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


def test_post_build_puts_the_overrides_where_jupyterlab_reads_them(tmp_path: Path) -> None:
    pytest.importorskip("jupyterlab", reason="JupyterLab is installed by the reader layer (requirements.txt)")
    settings, prefix = _jupyterlab_settings_dir()
    relative = settings.relative_to(prefix.resolve())
    assert relative == Path("share/jupyter/lab/settings")

    binder_prefix = _fake_prefix(tmp_path / "prefix", f'exec "{sys.executable}" "$@"')
    result = _post_build(binder_prefix)
    assert result.returncode == 0, result.stderr
    written = binder_prefix / relative / "overrides.json"
    assert written.read_bytes() == OVERRIDES.read_bytes()
    # Read back as JupyterLab's server reads it: the override changes the default it serves.
    wanted = json.loads(OVERRIDES.read_text(encoding="utf-8"))[PLUGIN][SETTING]
    assert _setting(binder_prefix / relative) == wanted
    assert _setting(tmp_path / "no-overrides" / "settings") != wanted
    # A second run (a rebuild) finds its own file and succeeds.
    assert _post_build(binder_prefix).returncode == 0


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
