"""Project set-up: pins, table of contents, and the commands README promises."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_jupyter_book_pinned_below_2():
    pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", (ROOT / "requirements.txt").read_text(), flags=re.M))
    assert pins["jupyter-book"].startswith("1.")


def test_direct_requirements_are_pinned_exactly():
    for name in ("requirements.txt", "requirements-dev.txt"):
        for line in (ROOT / name).read_text().splitlines():
            line = line.strip()
            if not line or line.startswith(("#", "-c", "-r", "-e")):
                continue
            assert re.fullmatch(r"[A-Za-z0-9_.-]+==[\w.]+", line), f"{name}: {line!r} is not an exact pin"


def test_toc_files_exist():
    toc = (ROOT / "_toc.yml").read_text()
    for entry in re.findall(r"(?:root|file): (\S+)", toc):
        candidates = [ROOT / f"{entry}{ext}" for ext in (".md", ".ipynb")]
        assert any(c.exists() for c in candidates), entry


def test_readme_gives_the_two_commands():
    readme = (ROOT / "README.md").read_text()
    assert "make book" in readme and "make test" in readme


def test_ci_runs_make_test():
    assert "make test" in (ROOT / ".ci" / "run").read_text()
