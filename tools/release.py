"""The version in the book, and the check of a built release: ``make release``.

The version is written in one place, ``__version__`` in ``posenc_helpers/__init__.py``.
``pyproject.toml`` reads it from there, and so does this module, without importing the package.

The website puts the version into the footer of every page with :func:`footer_html`
(``tools/site/version.py``).

As a command, ``python -m tools.release check DIST`` checks what ``python -m build`` wrote into
DIST: a wheel and an sdist named with the package's version, each holding the licence files and
every data file of ``posenc_helpers/data``. It then prints the steps that stay manual (tagging,
pushing, publishing), which CONTRIBUTING.md ("Cutting a release") explains.
"""

from __future__ import annotations

import ast
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLACEHOLDER = "{version}"
LICENSE_FILES = ("LICENSE", "LICENSE-TEXT")
DIST_NAME = "posenc_helpers"  # the normalised distribution name of posenc-helpers, in file names


def package_version(root: Path = ROOT) -> str:
    """``posenc_helpers.__version__``, read from the package's source without importing it."""
    path = root / "posenc_helpers" / "__init__.py"
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if (
            isinstance(node, ast.Assign)
            and [getattr(target, "id", None) for target in node.targets] == ["__version__"]
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    raise ValueError(f"{path} assigns no string literal to __version__")


def footer_html(template: str, version: str) -> str:
    """The footer with ``{version}`` replaced by ``version``."""
    if PLACEHOLDER not in template:
        raise ValueError(f"html.extra_footer in _config.yml has no {PLACEHOLDER} placeholder for the book's version")
    return template.replace(PLACEHOLDER, version)


def expected_files(version: str, root: Path = ROOT) -> dict[str, list[str]]:
    """The file names of the wheel and the sdist, each with the members it must contain."""
    data = sorted(f"posenc_helpers/data/{path.name}" for path in (root / "posenc_helpers" / "data").glob("*.json"))
    stem = f"{DIST_NAME}-{version}"
    return {
        f"{stem}-py3-none-any.whl": [f"{stem}.dist-info/licenses/{name}" for name in LICENSE_FILES] + data,
        f"{stem}.tar.gz": [f"{stem}/{name}" for name in (*LICENSE_FILES, "PKG-INFO")] + [f"{stem}/{d}" for d in data],
    }


def _members(path: Path) -> set[str]:
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as archive:
            return set(archive.namelist())
    with tarfile.open(path) as archive:
        return set(archive.getnames())


def dist_problems(dist: Path, version: str, root: Path = ROOT) -> list[str]:
    """What is missing from the wheel and sdist in ``dist``; empty when both are complete."""
    problems = []
    for filename, members in expected_files(version, root).items():
        path = dist / filename
        if not path.is_file():
            found = ", ".join(sorted(p.name for p in dist.glob("*"))) or "nothing"
            problems.append(f"{path} is missing (found: {found})")
            continue
        missing = sorted(set(members) - _members(path))
        problems.extend(f"{filename} lacks {member}" for member in missing)
    return problems


def next_steps(version: str) -> str:
    """The manual steps after ``make release``, for this version."""
    tag = f"v{version}"
    return "\n".join(
        [
            "Next steps, by hand (CONTRIBUTING.md, 'Cutting a release'):",
            "  1. make test, if not run on this commit; the student edition: make student-book, make student",
            f'  2. git tag -a {tag} -m "posenc-book {version}"   (on the commit these files were built from)',
            f"  3. git push origin {tag}",
            "  4. publish: deploy _build/html (the book) and the student edition where your readers get them;",
            "     upload _build/dist/* with twine upload only if the package is published on a package index",
        ]
    )


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "check":
        print("usage: python -m tools.release check DIST", file=sys.stderr)
        return 2
    dist = Path(argv[1])
    version = package_version()
    problems = dist_problems(dist, version)
    if problems:
        print("\n".join(["the release is incomplete:", *problems]), file=sys.stderr)
        return 1
    print(f"posenc-helpers {version}: wheel and sdist hold {', '.join(LICENSE_FILES)} and posenc_helpers/data/*.json")
    for filename in expected_files(version):
        print(f"  {dist / filename}")
    print(next_steps(version))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
