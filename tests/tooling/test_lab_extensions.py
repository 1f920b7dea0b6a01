"""The pinned JupyterLab and its extensions agree.

``jupyter labextension list`` says "OK" for an extension built against a newer
JupyterLab: the mismatch shows only in the browser, where the extension asks the
page for a newer ``@jupyterlab/*`` package than the pinned JupyterLab provides.
A module shared as a singleton is used anyway (a console warning); any other one
has no fallback, and the extension fails to load ("Failed to create module ...
#RUNTIME-012": jupytext 1.19.6's extension in JupyterLab 4.5, issue 25).

This test reads JupyterLab's own list of installed (federated) extensions, and in
each extension's compiled JavaScript the version of every ``@jupyterlab/*`` package
it requires, and compares them with the versions this JupyterLab ships.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

jupyterlab = pytest.importorskip("jupyterlab", reason="JupyterLab is installed by the reader layer (requirements.txt)")
from jupyter_core.paths import jupyter_path  # noqa: E402
from jupyterlab.commands import get_federated_extensions  # noqa: E402

# How a build of an extension writes each shared package it requires:
# rspack (module federation 2): shareKey:"@jupyterlab/notebook",import:null,requiredVersion:"^4.6.0-beta.0",
#   strictVersion:!1,singleton:!0   -- singleton:!1 and import:null means no fallback;
# webpack 5: loadSingletonVersion("default", "@jupyterlab/notebook", false, [1,4,4,6]) or, minified,
#   ("default","@jupyterlab/notebook",!1,[1,4,4,6]) -- [1, x, y, z] is the range ^x.y.z.
_RSPACK = re.compile(
    r'shareKey:"(?P<package>@jupyterlab/[\w-]+)",import:(?P<fallback>[^,]+),'
    r'requiredVersion:"(?P<range>[^"]+)"(?:,strictVersion:![01])?,singleton:!(?P<singleton>[01])'
)
_WEBPACK = re.compile(r'"default",\s*"(?P<package>@jupyterlab/[\w-]+)",\s*(?:!\d|false|true),\s*\[(?P<range>[\d,]+)\]')

# Extensions that require a newer JupyterLab for some packages and still load (the
# JupyterLab test in tests/browser sees no module fail), each with why it is pinned as
# it is. Every entry must still be needed (the test fails on one that no longer
# mismatches).
KNOWN_WARNINGS = {
    # ipywidgets 8.1.9 requires jupyterlab_widgets 3.0.17, whose extension asks for
    # JupyterLab ^4.6.2 (jupyterlab_widgets 3.0.16 was built for 4.4). It loads with
    # version warnings and every explorer renders; the book uses no Output widget,
    # the one part that needs @jupyterlab/outputarea 4.6.
    "@jupyter-widgets/jupyterlab-manager",
    # Instructors only (requirements-course.txt; not in the reader layer): nbgrader
    # 0.9.6's extension asks for ^4.6.4.
    "@jupyter/nbgrader",
}


def _version(text: str) -> tuple[int, int, int]:
    match = re.match(r"[~^]?(\d+)\.(\d+)\.(\d+)", text)
    assert match, f"not a version: {text!r}"
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


def satisfies(version: str, requirement: str) -> bool:
    """Whether ``version`` (x.y.z) meets a caret or tilde range (a pre-release bound
    such as ^4.6.0-beta.0 counts as 4.6.0)."""
    have, need = _version(version), _version(requirement)
    if requirement.startswith("~"):
        return have[:2] == need[:2] and have >= need
    return have[0] == need[0] and have >= need


def required_packages(folder: Path) -> list[tuple[str, str, bool]]:
    """(package, range, has_fallback_or_singleton) for every @jupyterlab package that an
    extension's compiled JavaScript in ``folder`` requires."""
    found = set()
    for script in sorted(folder.glob("static/*.js")):
        text = script.read_text(encoding="utf-8", errors="replace")
        for m in _RSPACK.finditer(text):
            tolerated = m["singleton"] == "1" or m["fallback"] not in ("null", "!1", "false")
            found.add((m["package"], m["range"], tolerated))
        for m in _WEBPACK.finditer(text):
            parts = [int(part) for part in m["range"].split(",")]
            if parts[0] == 1 and len(parts) == 4:  # webpack's encoding of ^x.y.z
                found.add((m["package"], "^{}.{}.{}".format(*parts[1:]), True))
    return sorted(found)


def _core_versions() -> dict[str, str]:
    """The version of every package the pinned JupyterLab ships (its own resolutions)."""
    package = json.loads((Path(jupyterlab.__file__).parent / "static" / "package.json").read_text())
    return {name: spec.lstrip("~^") for name, spec in package["resolutions"].items() if name.startswith("@jupyterlab/")}


EXTENSIONS = get_federated_extensions(jupyter_path("labextensions"))


def test_the_reader_extensions_are_installed():
    for name in ("jupyterlab-jupytext", "jupyterlab-myst", "@jupyter-widgets/jupyterlab-manager"):
        assert name in EXTENSIONS, f"{name} is not installed: JupyterLab lists {sorted(EXTENSIONS)}"


def test_the_requirement_reader_understands_both_builds():
    rspack = (
        'x={shareKey:"@jupyterlab/docregistry",import:null,'
        'requiredVersion:"^4.6.0-beta.0",strictVersion:!1,singleton:!1}'
    )
    webpack = 'm("default","@jupyterlab/notebook",!1,[1,4,4,9])'
    assert _RSPACK.search(rspack)["range"] == "^4.6.0-beta.0"
    assert _WEBPACK.search(webpack)["range"] == "1,4,4,9"
    assert satisfies("4.5.11", "^4.4.9") and satisfies("4.5.11", "~4.5.0")
    assert not satisfies("4.5.11", "^4.6.0-beta.0") and not satisfies("5.0.0", "^4.4.9")
    assert not satisfies("4.6.0", "~4.5.0")


@pytest.mark.parametrize("name", sorted(EXTENSIONS))
def test_each_extension_gets_the_jupyterlab_it_was_built_for(name):
    core = _core_versions()
    required = [(p, r, t) for p, r, t in required_packages(Path(EXTENSIONS[name]["ext_path"])) if p in core]
    unmet = [(p, r, t) for p, r, t in required if not satisfies(core[p], r)]
    fatal = [f"{p} {r} (JupyterLab has {core[p]}, no fallback)" for p, r, t in unmet if not t]
    if name in KNOWN_WARNINGS:  # loads: the JupyterLab browser test opens a chapter and its widgets
        assert unmet, f"{name} now agrees with JupyterLab: remove it from KNOWN_WARNINGS"
        unmet, fatal = [], []
    assert not fatal, f"{name} fails to load in JupyterLab {core['@jupyterlab/application']}: {fatal}"
    assert not unmet, f"{name} asks for a newer JupyterLab: {[(p, r, core[p]) for p, r, _ in unmet]}"
