"""Launch buttons from the one setting (repository.url): Binder, Colab and Kaggle open each chapter.

The page's launch menu is made as the site build makes it: tools/site/launch.py's
config-time settings, then the theme's own handler (sphinx_book_theme, html-page-context,
priority 501), then tools/site/launch.py's Binder rewrite (600) and Kaggle button (610). The context a
page gets from pydata-sphinx-theme for a GitHub repository (github_user, github_repo) is
written here as that theme writes it. The expected links are spelled out by hand.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from sphinx_book_theme.header_buttons.launch import add_launch_buttons

from tools.site import launch

ROOT = Path(__file__).resolve().parents[2]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
CHAPTERS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def launch_menu(url: str, pagename: str, tmp_path: Path) -> dict[str, str]:
    """The launch menu of page ``pagename`` (text -> link) with repository.url = url."""
    options: dict[str, Any] = {
        "repository_url": url,
        "repository_branch": CONFIG["repository"]["branch"],
        "path_to_docs": CONFIG["repository"]["path_to_book"],
        "launch_buttons": dict(CONFIG["launch_buttons"]),
    }
    config = SimpleNamespace(html_theme_options=options)
    launch.configure_launch_buttons(None, config)
    source = tmp_path / f"{pagename}.ipynb"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text("{}")
    app = SimpleNamespace(
        config=SimpleNamespace(html_theme_options=options),
        env=SimpleNamespace(
            doc2path=lambda name: str(tmp_path / f"{name}.ipynb"), metadata={pagename: {"kernelspec": {}}}
        ),
        srcdir=str(tmp_path),
        outdir=str(tmp_path / "_build" / "html"),
    )
    theme_app = SimpleNamespace(config={"html_theme_options": options}, env=app.env, outdir=app.outdir)
    context: dict[str, Any] = {"header_buttons": [], "pagename": pagename, "sourcename": f"{pagename}.ipynb"}
    if options.get("repository_url"):
        user, repo = options["repository_url"].removeprefix("https://github.com/").split("/")[:2]
        context.update(github_url="https://github.com", github_user=user, github_repo=repo)
    add_launch_buttons(theme_app, pagename, "page.html", context, None)  # type: ignore[arg-type]
    launch.open_student_copies(app, pagename, "page.html", context, None)  # priority 600
    launch.add_kaggle_button(app, pagename, "page.html", context, None)  # priority 610
    groups = [b for b in context["header_buttons"] if b.get("label") == "launch-buttons"]
    return {b["text"]: b["url"] for g in groups for b in g["buttons"] if b.get("type") == "link"}


def test_every_chapter_gets_binder_colab_and_kaggle(tmp_path: Path) -> None:
    assert len(CHAPTERS) == 14
    url = "https://github.com/you/posenc-book"
    for stem in CHAPTERS:
        menu = launch_menu(url, f"notebooks/{stem}", tmp_path)
        assert menu == {
            # Binder opens the chapter's working copy at its server's root (binder/postBuild)
            "Binder": f"https://mybinder.org/v2/gh/you/posenc-book/main?urlpath=lab/tree/{stem}.ipynb",
            "Colab": f"https://colab.research.google.com/github/you/posenc-book/blob/main/notebooks/{stem}.ipynb",
            "Kaggle": f"https://kaggle.com/kernels/welcome?src=https://github.com/you/posenc-book/blob/main/notebooks/{stem}.ipynb",
        }
        assert list(menu) == ["Binder", "Colab", "Kaggle"]  # Kaggle beside the others


@pytest.mark.parametrize("url", ["", "  "])
def test_no_repository_url_no_launch_links(tmp_path: Path, url: str) -> None:
    for stem in CHAPTERS:
        assert launch_menu(url, f"notebooks/{stem}", tmp_path) == {}


def test_the_shipped_config_has_the_three_services_and_one_repository_setting() -> None:
    buttons = CONFIG["launch_buttons"]
    assert buttons["binderhub_url"] == "https://mybinder.org"
    assert buttons["colab_url"] == "https://colab.research.google.com"
    assert buttons["kaggle_url"] == "https://kaggle.com"
    assert set(CONFIG["repository"]) == {"url", "branch", "path_to_book"}


def test_kaggle_link_only_for_github() -> None:
    assert launch.kaggle_link("https://kaggle.com/", "https://github.com/a/b/", "dev", "/x.ipynb") == (
        "https://kaggle.com/kernels/welcome?src=https://github.com/a/b/blob/dev/x.ipynb"
    )
    assert launch.kaggle_link("https://kaggle.com", "https://gitlab.com/a/b", "main", "x.ipynb") is None
    assert launch.kaggle_link("", "https://github.com/a/b", "main", "x.ipynb") is None
