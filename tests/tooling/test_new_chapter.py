"""``make chapter``: the scaffold of a new chapter (tools/new_chapter.py).

The scaffold is written into a copy of the files it reads and edits, so the tests
never touch the repository; the generated modules are imported and their tests run
from that copy, in a subprocess.
"""

from __future__ import annotations

import os
import re
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
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    (tmp_path / "tools" / "site").mkdir(parents=True)
    shutil.copy(ROOT / "tools" / "site" / "explorer_grids.py", tmp_path / "tools" / "site" / "explorer_grids.py")
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
    readme_rows = re.findall(r"^\| \d\d \| .+ \|$", (ROOT / "README.md").read_text(), flags=re.M)
    assert f"{readme_rows[-1]}\n| {NN} | Scaffold example |\n" in (tree / "README.md").read_text()
    grids = (tree / "tools" / "site" / "explorer_grids.py").read_text()
    assert '    "ScaffoldExampleExplorer": Grid(\n' in grids and '"explorer = ScaffoldExampleExplorer()",\n' in grids
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


def test_the_readme_row_goes_in_number_order_once(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("Chapters:\n\n| | chapter |\n|---|---|\n| 02 | Two |\n| 04 | Four |\n\nMore.\n")
    new_chapter.add_readme_row(readme, "03", "Three")
    new_chapter.add_readme_row(readme, "03", "Three")
    new_chapter.add_readme_row(readme, "01", "One")
    new_chapter.add_readme_row(readme, "05", "Five")
    rows = "| 01 | One |\n| 02 | Two |\n| 03 | Three |\n| 04 | Four |\n| 05 | Five |\n"
    assert readme.read_text() == f"Chapters:\n\n| | chapter |\n|---|---|\n{rows}\nMore.\n"


def test_the_grid_is_added_to_grids_once(tmp_path):
    grids = tmp_path / "explorer_grids.py"
    grids.write_text('GRIDS: dict[str, Grid] = {\n    "AExplorer": Grid(\n        {},\n    ),\n}\n\nAFTER = 1\n')
    new_chapter.add_grid(grids, "BExplorer")
    new_chapter.add_grid(grids, "BExplorer")
    text = grids.read_text()
    assert text.count('    "BExplorer": Grid(\n') == 1
    assert text.index('"AExplorer"') < text.index('"BExplorer"') < text.index("}\n\nAFTER = 1\n")
    assert '        "explorer = BExplorer()",\n        _demo("BExplorer"),\n    ),\n}\n' in text


def test_a_named_new_part_goes_before_the_back_matter(tree):
    new_chapter.scaffold(tree, NN, NAME, part="Research")
    toc = (tree / "_toc.yml").read_text()
    new_part = f"  - caption: Research\n    numbered: 2\n    chapters:\n      - file: notebooks/{STEM}\n"
    assert new_part + "  - caption: Back matter\n" in toc


# The checks that read every chapter, run on the copy with the scaffolded one in it: the
# anatomy tests of the new chapter only (its own module tests and doctests run in
# test_scaffold_writes_registers_and_runs). A minute or so on an idle machine; the time-outs
# leave room for a loaded one.
STRUCTURAL = [
    "tests/tooling/test_notebook_anatomy.py",
    "tests/tooling/test_project.py::test_readme_names_every_chapter_by_its_title",
    "tests/tooling/test_site_explorers.py",
    "tests/tooling/test_course.py",
    "tests/chapters/test_checks_policy.py",
    "tests/chapters/test_exercise_checks.py",
    "tests/core/test_bad_input.py",
]
_NOT_COPIED = shutil.ignore_patterns(".git", ".venv", "_build", "node_modules", "__pycache__", ".*_cache", "*.egg-info")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("make") is None, reason="make chapter needs make")
def test_a_scaffolded_chapter_fails_only_for_what_is_left_to_write(tmp_path):
    """CONTRIBUTING's recipe, ``make chapter``, in a copy of the repository (issue 49): the
    structural checks pass on the new chapter but the two that list its ``TODO(author)``s,
    and those say what to do and what to rerun."""
    copy = tmp_path / "repo"
    shutil.copytree(ROOT, copy, ignore=_NOT_COPIED)
    nn = int(chapter_notebooks()[-1].name[:2]) + 1
    stem = f"{nn:02d}_{NAME}"
    env = {**os.environ, "PYTHONPATH": str(copy)}
    # The copy uses this environment as its .venv (VENV); STAMP= keeps make from installing into it.
    make = ["make", "--no-print-directory", "-C", str(copy), f"VENV={sys.prefix}", "STAMP=", "BOOK_STAMP="]
    made = subprocess.run(
        [*make, "chapter", f"NN={nn}", f"NAME={NAME}", "TITLE=Scaffold example"],
        env=env, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert made.returncode == 0, made.stdout + made.stderr
    assert f"| {nn} | Scaffold example |" in (copy / "README.md").read_text()
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:nbval", "-m", "not slow", "--rootdir", str(copy),
         "-k", f"{NAME} or in_the_code or not test_notebook_anatomy", *STRUCTURAL],
        cwd=copy, env=env, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    failed = sorted(set(re.findall(r"^FAILED (\S+?)(?: - .*)?$", run.stdout, flags=re.M)))
    assert failed == [
        f"tests/tooling/test_notebook_anatomy.py::test_no_author_placeholders_left[{stem}]",
        "tests/tooling/test_notebook_anatomy.py::test_no_author_placeholders_left_in_the_code",
    ], run.stdout[-6000:] + run.stderr[-2000:]
    assert re.search(rf"{stem}\.ipynb: \d+ TODO\(author\) left to write", run.stdout)
    assert f"tools.nbtools execute notebooks/{stem}.ipynb" in run.stdout
    assert f"posenc_helpers/checks/ch{stem}.py:" in run.stdout and "tools/site/explorer_grids.py:" in run.stdout
    assert "`.venv/bin/python -m pytest -p no:nbval tests/tooling/test_notebook_anatomy.py`" in run.stdout
