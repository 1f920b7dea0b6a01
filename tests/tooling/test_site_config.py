"""tools/site's configuration-time parts: launch buttons, the student edition, scripts written once."""

from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from tools.site import launch, student
from tools.site import scripts as page_scripts

ROOT = Path(__file__).resolve().parents[2]

BUTTONS = {
    "notebook_interface": "jupyterlab",
    "binderhub_url": "https://mybinder.org",
    "colab_url": "https://colab.research.google.com",
    "jupyterhub_url": "",
    "thebe": True,
}


def test_no_repository_url_means_no_launch_buttons():
    for url in ("", "   ", None):
        options = {"repository_url": url, "launch_buttons": dict(BUTTONS)}
        assert launch.launch_settings(options) == {"notebook_interface": "jupyterlab"}
        config = SimpleNamespace(html_theme_options=options)
        launch.configure_launch_buttons(None, config)
        assert "repository_url" not in options  # the theme builds no links to nowhere


def test_a_repository_url_keeps_every_configured_button():
    options = {"repository_url": "https://github.com/you/posenc-book", "launch_buttons": dict(BUTTONS)}
    assert launch.launch_settings(options) == BUTTONS
    launch.configure_launch_buttons(None, SimpleNamespace(html_theme_options=options))
    assert options["repository_url"] == "https://github.com/you/posenc-book"


def test_each_script_is_written_once():
    def script(filename, **attributes):
        return SimpleNamespace(filename=filename, attributes=attributes)

    thebe = "const THEBE_JS_URL = 'x'"
    scripts = [
        script("_static/a.js"),
        script(None, body=thebe),
        script("_static/b.js", **{"async": "async"}),
        script("", body=thebe),
        script("_static/a.js"),
        script(None, body="let other = 1"),
    ]
    context = {"script_files": scripts}
    page_scripts.deduplicate_scripts(None, "page", "page.html", context, None)
    kept = [(s.filename, s.attributes.get("body")) for s in context["script_files"]]
    assert kept == [("_static/a.js", None), (None, thebe), ("_static/b.js", None), (None, "let other = 1")]


def test_student_edition_keeps_launch_buttons_pointed_at_the_student_branch(monkeypatch):
    from tools.course import student as course_student

    monkeypatch.delenv("POSENC_STUDENT_BRANCH", raising=False)
    assert course_student.student_config()["repository"]["branch"] == "student"
    assert course_student.student_config("handout")["repository"]["branch"] == "handout"
    options = {"repository_url": "https://github.com/you/posenc-book", "launch_buttons": dict(BUTTONS)}
    config = SimpleNamespace(
        hide_solutions=True, posenc_student_edition=True, html_copy_source=True, html_theme_options=options
    )
    student.configure_student_edition(None, config)
    assert options["launch_buttons"] == BUTTONS and options["use_download_button"] is False
    assert config.html_copy_source is False and config.posenc_hide_solutions is True


@pytest.mark.parametrize("config", ["_config.yml", "tests/books/numbering/_config.yml"])
def test_dot_folders_are_not_pages(config, tmp_path):
    """Issue 49: a Markdown file in a dot-folder (pytest's ``.pytest_cache/README.md``) stopped
    the build ("document isn't included in any toctree"). Sphinx's own search for sources,
    with the patterns the book gives it, leaves every dot-folder out and the pages in."""
    from sphinx.util.matching import get_matching_files

    patterns = yaml.safe_load((ROOT / config).read_text(encoding="utf-8"))["exclude_patterns"]
    files = [".pytest_cache/README.md", ".github/ISSUE.md", "notebooks/.hidden/01_x.ipynb", "intro.md"]
    files += ["notebooks/01_basics.md", "notebooks/02_more.ipynb"]
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("# A page\n")
    found = sorted(get_matching_files(tmp_path, exclude_patterns=patterns))
    assert found == ["intro.md", "notebooks/01_basics.md", "notebooks/02_more.ipynb"]
