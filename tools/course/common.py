"""What every course tool shares: the repository's folders, chapter names, the output
folders it may write, the pinned requirements and the environment's scripts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tools.chapters import chapter_number

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
DEFAULT_OUT = ROOT / "_build" / "course"
MARKER = ".posenc-course"  # written into an output folder: this folder is one the course tools made

#: What the notebooks import (the student branch's and the grading image's requirements).
RUNTIME = ("numpy", "matplotlib", "ipywidgets", "jax", "jaxlib", "optax", "tqdm")
#: What the grader itself needs beside the package, in a grading image (requirements-course.txt).
GRADING = ("pyseccomp",)


def chapter_of(path: Path) -> int:
    """``notebooks/04_sine_cosine_pairs.ipynb`` -> 4 (:func:`tools.chapters.chapter_number`, required)."""
    number = chapter_number(Path(path).name)
    if number is None:
        raise ValueError(f"path must be a chapter notebook named NN_title.ipynb; got {Path(path).name!r}")
    return number


def assignment_name(path: Path) -> str:
    """``notebooks/04_sine_cosine_pairs.ipynb`` -> ``ch04``."""
    return f"ch{chapter_of(path):02d}"


def is_chapter_name(name: str) -> bool:
    """Whether ``name`` (a file name or a page's name) is a chapter's, ``NN_title``."""
    return "/" not in name and chapter_number(name) is not None


def refuse_foreign(out: Path, force: bool) -> None:
    """Refuse a non-empty ``out`` that the course tools did not write, unless ``force``."""
    if out.exists() and any(out.iterdir()) and not (out / MARKER).exists() and not force:
        raise FileExistsError(f"{out} is not empty and was not written by tools/course; use --force")


def prepare(out: Path, force: bool) -> None:
    """Make ``out`` (refusing a foreign one) and mark it as the course tools'."""
    refuse_foreign(out, force)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text("Made by tools/course; make course rewrites source/ and release/.\n")


def pins(names: tuple[str, ...], source: str = "requirements.txt") -> list[str]:
    """The exact pins of ``names`` in ``source`` (a requirements file of the repository), in its order."""
    lines = [line.strip() for line in (ROOT / source).read_text().splitlines()]
    return [line for line in lines if "==" in line and line.split("==")[0] in names]


def run_script(name: str, arguments: list[str], cwd: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run this environment's script ``name`` with its folder first on PATH (nbgrader runs
    ``alembic``, otter runs ``jupyter``, from PATH)."""
    scripts = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{scripts}{os.pathsep}{os.environ.get('PATH', '')}"}
    kwargs.setdefault("check", True)
    return subprocess.run([str(scripts / name), *arguments], cwd=cwd, env=env, text=True, **kwargs)
