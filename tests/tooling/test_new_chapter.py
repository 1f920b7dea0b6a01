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
from tools.chapters import chapter_notebooks

ROOT = Path(__file__).resolve().parents[2]
# A number and a name no chapter of the book has (the book grows: chapter 13 exists now).
NN, NAME = 97, "scaffold_example"
STEM, MODULE = f"{NN}_{NAME}", f"ch{NN}_{NAME}"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of what the scaffold reads and edits: the package, the API pages, the toc."""
    shutil.copytree(ROOT / "posenc_helpers", tmp_path / "posenc_helpers", ignore=shutil.ignore_patterns("data", "lab"))
    (tmp_path / "posenc_helpers" / "data").mkdir()
    shutil.copy(ROOT / "posenc_helpers" / "data" / "graded_shortcuts.json", tmp_path / "posenc_helpers" / "data")
    shutil.copytree(ROOT / "book" / "api", tmp_path / "book" / "api")
    shutil.copy(ROOT / "_toc.yml", tmp_path / "_toc.yml")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")  # pytest's doctest options
    (tmp_path / "notebooks" / "text").mkdir(parents=True)
    for notebook in chapter_notebooks():
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


@pytest.mark.slow
def test_scaffold_writes_registers_and_runs(tree):
    toc_before = (tree / "_toc.yml").read_text()
    written = new_chapter.scaffold(tree, NN, NAME)
    relative = sorted(str(p.relative_to(tree)) for p in written)
    assert relative == [
        f"notebooks/{STEM}.ipynb",
        f"notebooks/text/{STEM}.md",
        f"posenc_helpers/checks/{MODULE}.py",
        f"posenc_helpers/plotting/{MODULE}.py",
        f"posenc_helpers/widgets/{MODULE}.py",
        f"tests/chapters/test_{MODULE}.py",
    ]
    # At the end of the last numbered part: right after the last chapter listed before it.
    numbered_parts = toc_before.split("    numbered: 2\n")
    last_chapter = numbered_parts[-1].split("  - caption:")[0].rstrip("\n").splitlines()[-1]
    assert f"{last_chapter}\n      - file: notebooks/{STEM}\n" in (tree / "_toc.yml").read_text()
    assert ".. autoclass:: ScaffoldExampleExplorer" in (tree / "book" / "api" / "widgets.md").read_text()
    text = (tree / "notebooks" / "text" / f"{STEM}.md").read_text()
    assert text.startswith("---\njupytext:") and "\n# Scaffold example\n" in text
    assert "{{" not in text and "TODO(author)" in text
    # The generated modules import from their subpackages, and their tests and doctests pass.
    env = {**os.environ, "PYTHONPATH": str(tree)}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--doctest-modules", "--rootdir", str(tree),
         f"tests/chapters/test_{MODULE}.py",
         f"posenc_helpers/checks/{MODULE}.py",
         f"posenc_helpers/plotting/{MODULE}.py",
         f"posenc_helpers/widgets/{MODULE}.py"],
        cwd=tree, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert "8 passed" in run.stdout


def test_nothing_is_overwritten_without_force(tree):
    new_chapter.scaffold(tree, NN, NAME)
    check = tree / "posenc_helpers" / "checks" / f"{MODULE}.py"
    check.write_text("# the author's work\n")
    with pytest.raises(FileExistsError, match="--force"):
        new_chapter.scaffold(tree, NN, NAME)
    assert check.read_text() == "# the author's work\n"
    new_chapter.scaffold(tree, NN, NAME, force=True)
    assert check.read_text() != "# the author's work\n"
    # Registering twice adds nothing twice.
    init = (tree / "posenc_helpers" / "checks" / "__init__.py").read_text()
    assert init.count(f"from .{MODULE} import check_{NAME}") == 1
    assert init.count(f'"check_{NAME}",') == 1


def test_a_named_new_part_goes_before_the_back_matter(tree):
    new_chapter.scaffold(tree, NN, NAME, part="Research")
    toc = (tree / "_toc.yml").read_text()
    new_part = f"  - caption: Research\n    numbered: 2\n    chapters:\n      - file: notebooks/{STEM}\n"
    assert new_part + "  - caption: Back matter\n" in toc
