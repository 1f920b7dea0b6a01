"""AUTHORING's rules of structure, true of the code (issue 35): no module over 500 lines, and no
private name (``_name``) imported from another module."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 500


def _sources() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [
        ROOT / name
        for name in listed.stdout.split()
        if name.split("/")[0] in ("posenc_helpers", "tools", "benchmarks") and (ROOT / name).is_file()
    ]


def test_no_module_is_over_500_lines():
    long = {
        path.relative_to(ROOT).as_posix(): n for path in _sources() if (n := len(path.read_text().splitlines())) > LIMIT
    }
    assert not long, f"split along its ideas: {long}"


def test_no_private_name_is_imported_from_another_module():
    found = []
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                found += [
                    f"{path.relative_to(ROOT)}: from {'.' * node.level}{node.module or ''} import {alias.name}"
                    for alias in node.names
                    if alias.name.startswith("_") and not alias.name.startswith("__")
                ]
    assert not found, "make the shared piece public, or move it where both use it: " + "; ".join(found)
