"""``make chapter``: the scaffold of a new chapter (tools/new_chapter.py).

The scaffold is written into a copy of the files it reads and edits, so the tests
never touch the repository; the generated modules are imported and their tests run
from that copy, in a subprocess.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools import new_chapter

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of what the scaffold reads and edits: the package, the API pages, the toc."""
    shutil.copytree(ROOT / "posenc_helpers", tmp_path / "posenc_helpers", ignore=shutil.ignore_patterns("data", "lab"))
    (tmp_path / "posenc_helpers" / "data").mkdir()
    shutil.copytree(ROOT / "book" / "api", tmp_path / "book" / "api")
    shutil.copy(ROOT / "_toc.yml", tmp_path / "_toc.yml")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")  # pytest's doctest options
    (tmp_path / "notebooks" / "text").mkdir(parents=True)
    for notebook in ROOT.glob("notebooks/[0-9][0-9]_*.ipynb"):
        (tmp_path / "notebooks" / notebook.name).write_text("{}")  # only the names matter
    (tmp_path / "tests" / "chapters").mkdir(parents=True)
    return tmp_path


def test_names_follow_the_notebook():
    names = new_chapter.chapter_names(13, "positions_in_2026")
    assert names.stem == "13_positions_in_2026"
    assert names.module == "ch13_positions_in_2026"
    assert names.title == "Positions in 2026"
    assert names.exports == {
        "plotting": "plot_positions_in_2026",
        "widgets": "PositionsIn2026Explorer",
        "checks": "check_positions_in_2026",
    }


@pytest.mark.parametrize(
    ("number", "name", "argument"),
    [(0, "ok", "number"), (100, "ok", "number"), (True, "ok", "number"), (13, "Bad-Name", "name"), (13, "2x", "name")],
)
def test_bad_number_or_name_is_refused(number, name, argument):
    with pytest.raises(ValueError, match=rf"^{argument} must"):
        new_chapter.chapter_names(number, name)


def test_a_taken_number_is_refused(tree):
    with pytest.raises(ValueError, match="number 04 is taken by 04_sine_cosine_pairs.ipynb"):
        new_chapter.scaffold(tree, 4, "another_chapter")


def test_scaffold_writes_registers_and_runs(tree):
    written = new_chapter.scaffold(tree, 13, "positions_in_2026")
    relative = sorted(str(p.relative_to(tree)) for p in written)
    assert relative == [
        "notebooks/13_positions_in_2026.ipynb",
        "notebooks/text/13_positions_in_2026.md",
        "posenc_helpers/checks/ch13_positions_in_2026.py",
        "posenc_helpers/plotting/ch13_positions_in_2026.py",
        "posenc_helpers/widgets/ch13_positions_in_2026.py",
        "tests/chapters/test_ch13_positions_in_2026.py",
    ]
    toc = (tree / "_toc.yml").read_text()
    # At the end of the last numbered part, right after chapter 12.
    assert "- file: notebooks/12_positions_in_todays_models\n      - file: notebooks/13_positions_in_2026\n" in toc
    assert ".. autoclass:: PositionsIn2026Explorer" in (tree / "book" / "api" / "widgets.md").read_text()
    text = (tree / "notebooks" / "text" / "13_positions_in_2026.md").read_text()
    assert text.startswith("---\njupytext:") and "\n# Positions in 2026\n" in text
    assert "{{" not in text and "TODO(author)" in text
    # The generated modules import from their subpackages, and their tests and doctests pass.
    env = {**os.environ, "PYTHONPATH": str(tree)}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--doctest-modules", "--rootdir", str(tree),
         "tests/chapters/test_ch13_positions_in_2026.py",
         "posenc_helpers/checks/ch13_positions_in_2026.py",
         "posenc_helpers/plotting/ch13_positions_in_2026.py",
         "posenc_helpers/widgets/ch13_positions_in_2026.py"],
        cwd=tree, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert "8 passed" in run.stdout


def test_nothing_is_overwritten_without_force(tree):
    new_chapter.scaffold(tree, 13, "positions_in_2026")
    check = tree / "posenc_helpers" / "checks" / "ch13_positions_in_2026.py"
    check.write_text("# the author's work\n")
    with pytest.raises(FileExistsError, match="--force"):
        new_chapter.scaffold(tree, 13, "positions_in_2026")
    assert check.read_text() == "# the author's work\n"
    new_chapter.scaffold(tree, 13, "positions_in_2026", force=True)
    assert check.read_text() != "# the author's work\n"
    # Registering twice adds nothing twice.
    init = (tree / "posenc_helpers" / "checks" / "__init__.py").read_text()
    assert init.count("from .ch13_positions_in_2026 import check_positions_in_2026") == 1
    assert init.count('"check_positions_in_2026",') == 1


def test_a_named_new_part_goes_before_the_back_matter(tree):
    new_chapter.scaffold(tree, 13, "positions_in_2026", part="Research")
    toc = (tree / "_toc.yml").read_text()
    new_part = "  - caption: Research\n    numbered: 2\n    chapters:\n      - file: notebooks/13_positions_in_2026\n"
    assert new_part + "  - caption: Back matter\n" in toc
