"""Project set-up: pins, table of contents, the commands README promises, and the release files."""

import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

import posenc_helpers
from tools import release
from tools.site import version

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
BOOK_CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())


def test_toc_files_exist():
    toc = (ROOT / "_toc.yml").read_text()
    for entry in re.findall(r"(?:root|file): (\S+)", toc):
        candidates = [ROOT / f"{entry}{ext}" for ext in (".md", ".ipynb")]
        assert any(c.exists() for c in candidates), entry


def test_readme_gives_the_two_commands():
    readme = (ROOT / "README.md").read_text()
    assert "make book" in readme and "make test" in readme


def test_make_help_names_every_target():
    """Every target a user may type (not the _private ones) has a line in `make help`, written
    from the `##` comment just above its rule: the list is the Makefile's own (issue 35)."""
    makefile = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([a-z][\w-]*):", makefile, flags=re.M)) - {"help"}
    documented = dict(re.findall(r"^## (.+)\n([a-z][\w-]*):", makefile, flags=re.M))
    assert set(documented.values()) == targets, (
        f"targets without a ## line: {sorted(targets - set(documented.values()))}"
    )
    listed = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    lines = dict(re.findall(r"^make (\S+)\s+(.+)$", listed, flags=re.M))
    assert set(lines) == targets
    for doc, target in documented.items():
        assert lines[target] == doc


def test_ci_runs_make_test():
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def _pins(name):
    return dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", (ROOT / name).read_text(), flags=re.M))


def _changelog_releases():
    """(version, date) of every released section of CHANGELOG.md, newest first."""
    return re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", (ROOT / "CHANGELOG.md").read_text(), re.M)


def test_the_version_is_written_once():
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "posenc_helpers.__version__"}
    assert release.package_version() == posenc_helpers.__version__


def test_citation_cff_matches_the_package():
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0"
    assert {"authors", "cff-version", "message", "title"} <= set(citation)
    assert citation["version"] == posenc_helpers.__version__
    assert citation["license"] == PYPROJECT["project"]["license"]
    assert citation["title"] == BOOK_CONFIG["title"]
    assert citation["authors"] == [{"name": BOOK_CONFIG["author"]}]
    # A repository address only where the project states one (_config.yml, repository.url).
    assert ("repository-code" in citation) == bool(BOOK_CONFIG["repository"]["url"])
    # Dates are strings in CFF (an unquoted YAML date would load as a datetime.date).
    assert isinstance(citation["date-released"], str)


def test_changelog_dates_the_current_version():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "## [Unreleased]" in text
    releases = _changelog_releases()
    assert releases, "CHANGELOG.md has no released section"
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert releases[0] == (posenc_helpers.__version__, citation["date-released"])
    assert text.index("## [Unreleased]") < text.index(f"## [{releases[0][0]}]")


def test_licence_files_ship_and_agree():
    assert PYPROJECT["project"]["license"] == "MIT"
    assert PYPROJECT["project"]["license-files"] == list(release.LICENSE_FILES)
    assert (ROOT / "LICENSE").read_text().startswith("MIT License\n")
    assert "https://creativecommons.org/licenses/by/4.0/" in (ROOT / "LICENSE-TEXT").read_text()
    for name in release.LICENSE_FILES:
        assert BOOK_CONFIG["author"] in (ROOT / name).read_text()
    # The build backend is pinned to the locked setuptools (>= 77 reads the SPDX licence and license-files).
    backend = PYPROJECT["build-system"]["requires"]
    assert backend == [f"setuptools=={_pins('constraints.txt')['setuptools']}"]


def test_release_tools_are_pinned_and_locked():
    release, locked = {**_pins("requirements-course.txt"), **_pins("requirements-dev.txt")}, _pins("constraints.txt")
    for name in ("build", "twine"):  # build in the course layer (make otter's wheel), twine in dev
        assert release[name] == locked[name]


def test_the_footer_shows_the_package_version_and_both_licences():
    # the book's one extension, which puts the version in the footer (tools/site/version.py)
    assert BOOK_CONFIG["sphinx"]["local_extensions"] == {"tools.site": "."}
    options = {"extra_footer": BOOK_CONFIG["html"]["extra_footer"]}
    config = SimpleNamespace(html_theme_options=options, version="", release="")
    version.configure_version(None, config)
    footer = options["extra_footer"]
    assert f"Version {posenc_helpers.__version__}." in footer and release.PLACEHOLDER not in footer
    assert config.version == config.release == posenc_helpers.__version__
    assert '<a href="https://creativecommons.org/licenses/by/4.0/">CC BY 4.0</a>' in footer
    assert '<a href="https://opensource.org/license/mit">MIT</a>' in footer


def test_a_footer_without_the_placeholder_fails_the_build():
    with pytest.raises(ValueError, match="placeholder"):
        release.footer_html("Code: MIT.", "1.2.3")


def test_release_check_names_what_a_distribution_lacks(tmp_path):
    version = release.package_version()
    expected = release.expected_files(version)
    for members in expected.values():
        assert any(member.endswith("posenc_helpers/data/model_configs.json") for member in members)
    assert len(release.dist_problems(tmp_path, version)) == 2  # neither file is there
    wheel, sdist = expected
    with zipfile.ZipFile(tmp_path / wheel, "w") as archive:
        for member in expected[wheel]:
            archive.writestr(member, "")
    with tarfile.open(tmp_path / sdist, "w:gz") as archive:
        for member in expected[sdist]:
            if not member.endswith("LICENSE-TEXT"):
                archive.addfile(tarfile.TarInfo(member))
    assert release.dist_problems(tmp_path, version) == [f"{sdist} lacks posenc_helpers-{version}/LICENSE-TEXT"]
    assert f"git tag -a v{version}" in release.next_steps(version)


def test_readme_names_every_chapter_by_its_title():
    """README's table of chapters is every chapter notebook's title, in order (issue 35)."""
    import json

    from tools.chapters import chapter_notebooks

    readme = (ROOT / "README.md").read_text()
    listed = re.findall(r"^\| (\d\d) \| (.+) \|$", readme, flags=re.M)
    titles = []
    for path in chapter_notebooks():
        first = "".join(json.loads(path.read_text())["cells"][0]["source"]).splitlines()[0]
        titles.append((path.name[:2], first.removeprefix("# ")))
    missing = [f"| {nn} | {title} |" for nn, title in titles if (nn, title) not in listed]
    extra = [f"| {nn} | {title} |" for nn, title in listed if (nn, title) not in titles]
    assert listed == titles, (
        "README.md's table of chapters must list each chapter notebook's title (its first line), in order: "
        f"add or correct the rows {missing or 'none'}, remove {extra or 'none'} (make chapter writes the row; "
        "a new title changes it), then rerun "
        "`.venv/bin/python -m pytest -p no:nbval tests/tooling/test_project.py -k readme`"
    )


def test_readme_names_both_command_lines():
    readme = (ROOT / "README.md").read_text()
    for module in ("posenc_helpers.configs", "posenc_helpers.conformance"):
        assert f"python -m {module}" in readme
        assert subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True).returncode == 0
