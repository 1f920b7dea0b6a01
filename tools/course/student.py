"""What students get: the release notebooks (``make student``), the student branch
(``make student-branch``) and the website without solutions (``make student-book``).

* ``make student`` copies the course's release (nbgrader's student version, made by
  ``make course``) into one flat folder, never overwriting a copy without ``--force``.
* ``make student-branch`` writes the tree to publish as the repository's ``student``
  branch, which the student website's launch buttons open: the release notebooks at
  the paths the book uses (``notebooks/NN_*.ipynb``), the package, its licences and
  Binder's set-up (the main branch's ``binder/`` folder, with the JupyterLab settings
  its ``postBuild`` installs).
* ``make student-book`` writes ``_build/student-book/_config.yml`` (the book's
  configuration with ``hide_solutions: true`` and ``posenc_student_edition: true``,
  which the Sphinx extension ``tools/site/student.py`` acts on) and builds the book
  with it, warnings as errors, into ``_build/student-book/_build/html``;
  ``tests/site/test_student_book.py`` then checks that no line of any solution made it
  into the site. With ``repository.url`` set, its launch buttons open the notebooks of
  the repository's student branch (``POSENC_STUDENT_BRANCH``, default ``student``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tools.course.common import MARKER, ROOT, RUNTIME, pins, refuse_foreign

STUDENT_BOOK = ROOT / "_build" / "student-book"
#: JupyterLab's reader settings, which binder/postBuild installs (tools/jupyterlab/README.md).
JUPYTERLAB_SETTINGS = Path("tools") / "jupyterlab" / "overrides.json"

STUDENT_BRANCH_README = """# {title}: student notebooks

The chapters of the book as exercises, without solutions: open a notebook in
`notebooks/`, replace each `None` placeholder with your answer, and run the check
below it; it says what is wrong, if anything, without giving the answer away.
Run the notebooks on Binder or Colab from the launch buttons of the student
website, or locally:

```bash
python -m pip install -r requirements.txt
jupyter lab notebooks/
```

Written by `make student-branch` (tools/course/student.py) from the course's release;
do not edit by hand. The text is under CC BY 4.0 (LICENSE-TEXT), the code under
the MIT licence (LICENSE).
"""


def write_student_copies(course: Path, out: Path, *, force: bool = False) -> list[Path]:
    """Copy the release's notebooks into ``out`` (flat); an existing file only with ``force``."""
    release = sorted((course / "release").glob("ch[0-9][0-9]/*.ipynb"))
    if not release:
        raise FileNotFoundError(f"{course / 'release'} holds no notebooks: run make course first")
    targets = [(path, out / path.name) for path in release]
    existing = [target.name for _, target in targets if target.exists()]
    if existing and not force:
        raise FileExistsError(f"{out} already holds {', '.join(existing)}; use --force to replace them")
    out.mkdir(parents=True, exist_ok=True)
    for path, target in targets:
        shutil.copyfile(path, target)
    return [target for _, target in targets]


def student_requirements() -> str:
    """What Binder installs for the student branch: the book's pins, then the package itself."""
    return (
        "# Written by tools/course (make student-branch): the notebooks' environment.\n"
        + "\n".join([*pins((*RUNTIME, "ipykernel", "jupyterlab", "jupyterlab-myst")), "-e .[widgets,lab]"])
        + "\n"
    )


def write_student_branch(course: Path, out: Path, *, force: bool = False) -> list[Path]:
    """The tree to publish as the repository's student branch (see the module docstring)."""
    refuse_foreign(out, force)
    if not list((course / "release").glob("ch[0-9][0-9]/*.ipynb")):
        raise FileNotFoundError(f"{course / 'release'} holds no notebooks: run make course first")
    if out.exists():
        shutil.rmtree(out)
    notebooks = write_student_copies(course, out / "notebooks")
    shutil.copytree(ROOT / "posenc_helpers", out / "posenc_helpers", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "LICENSE", "LICENSE-TEXT"):
        shutil.copyfile(ROOT / name, out / name)
    # Binder as on the main branch (binder/: the Notebook pin, JupyterLab's reader settings,
    # the check that the package is installed editable), with the settings file it copies.
    shutil.copytree(ROOT / "binder", out / "binder")
    (out / JUPYTERLAB_SETTINGS).parent.mkdir(parents=True)
    shutil.copyfile(ROOT / JUPYTERLAB_SETTINGS, out / JUPYTERLAB_SETTINGS)
    title = (yaml.safe_load((ROOT / "_config.yml").read_text()) or {}).get("title", "The book")
    (out / "README.md").write_text(STUDENT_BRANCH_README.format(title=title), encoding="utf-8")
    (out / "requirements.txt").write_text(student_requirements(), encoding="utf-8")
    (out / MARKER).write_text("Made by tools/course (make student-branch).\n")
    return notebooks


def student_config(branch: str | None = None) -> dict[str, Any]:
    """The book's configuration for the student edition; its launch buttons open ``branch``
    (default: ``$POSENC_STUDENT_BRANCH`` or ``student``), the published student branch."""
    config: dict[str, Any] = yaml.safe_load((ROOT / "_config.yml").read_text())
    config["title"] = f"{config['title']} (student edition)"
    repository = dict(config.get("repository") or {})
    repository["branch"] = branch or os.environ.get("POSENC_STUDENT_BRANCH", "student")
    config["repository"] = repository
    sphinx = config.setdefault("sphinx", {})
    sphinx.setdefault("config", {}).update(hide_solutions=True, posenc_student_edition=True)
    # Jupyter Book resolves local extension folders relative to the configuration file.
    sphinx["local_extensions"] = {
        name: str((ROOT / folder).resolve()) for name, folder in (sphinx.get("local_extensions") or {}).items()
    }
    return config


def build_student_book(out: Path = STUDENT_BOOK) -> int:
    """Build the student edition of the website into ``out/_build/html``; the build's exit status."""
    out.mkdir(parents=True, exist_ok=True)
    config_path = out / "_config.yml"
    config_path.write_text(
        "# Generated by tools/course/student.py from ../../_config.yml; do not edit.\n"
        + yaml.safe_dump(student_config(), sort_keys=False, allow_unicode=True)
    )
    command = [
        str(Path(sys.executable).with_name("jupyter-book")),
        "build",
        str(ROOT),
        "--config",
        str(config_path),
        "--path-output",
        str(out),
        "-W",
        "-n",
        "--keep-going",
    ]
    result = subprocess.run(command, cwd=ROOT)
    if result.returncode == 0:
        print(f"student edition: {out / '_build' / 'html' / 'index.html'}")
    return result.returncode
