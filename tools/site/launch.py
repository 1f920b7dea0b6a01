"""Launch buttons driven by one setting: ``repository.url`` (and ``branch``) in ``_config.yml``.

With a repository URL, every notebook page gets the launch buttons configured
under ``launch_buttons`` in ``_config.yml`` (Binder, Colab, JupyterHub when a
hub address is given, and Thebe live code), all pointing at that repository
and branch. With the URL empty (the default, for a fork that has not set it)
the launch buttons are removed, so the theme does not try to build links to an
unknown repository and the build stays free of warnings. Nothing is loaded
from another site when a page is read; the buttons are plain links, and
Thebe fetches its library and a Binder kernel only when the reader clicks
"Live code".

The Binder entry opens the chapter's working copy, not the tracked notebook: Binder's build
(``binder/postBuild``) writes the student copies and makes their folder the Jupyter server's
root, so :func:`open_student_copies` rewrites the theme's ``?urlpath=lab/tree/notebooks/NN_x.ipynb``
to ``?urlpath=lab/tree/NN_x.ipynb``. The student edition's buttons open the student branch,
whose Binder opens the repository (its ``notebooks/`` hold the release): left as they are.

Kaggle is not one of the theme's launch services: :func:`add_kaggle_button` adds it to
the theme's launch menu, beside Binder and Colab, when ``launch_buttons.kaggle_url`` is
set. Kaggle opens a notebook from GitHub by the URL form
``https://kaggle.com/kernels/welcome?src=<the notebook's github.com blob URL>``, the
"Run in Kaggle" link of Google's own notebooks (for instance every notebook of
https://github.com/google-gemma/cookbook, e.g. docs/core/huggingface_text_finetune_qlora.ipynb)
and of Kaggle's "Open in Kaggle" badge (https://kaggle.com/static/images/open-in-kaggle.svg).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

LAUNCH_KEYS = ("binderhub_url", "colab_url", "jupyterhub_url", "kaggle_url", "thebe")
GROUP_LABEL = "launch-buttons"  # the theme's launch menu in the page's header_buttons


def launch_settings(theme_options: dict[str, Any]) -> dict[str, Any]:
    """The ``launch_buttons`` theme option to use, given the theme options Jupyter Book made."""
    url = str(theme_options.get("repository_url") or "").strip()
    buttons = dict(theme_options.get("launch_buttons") or {})
    if not url:
        return {key: value for key, value in buttons.items() if key not in LAUNCH_KEYS}
    return buttons


def configure_launch_buttons(app: Any, config: Any) -> None:
    """``config-inited``: the theme's ``launch_buttons`` from :func:`launch_settings`."""
    options = config.html_theme_options
    options["launch_buttons"] = launch_settings(options)
    if not str(options.get("repository_url") or "").strip():
        options.pop("repository_url", None)


#: The theme's Binder link to a tracked chapter: ``?urlpath=<ui>/notebooks/<name>.ipynb``.
TRACKED_CHAPTER = re.compile(r"([?&]urlpath=(?:lab/tree|tree)/)notebooks/(\d\d_[\w-]+\.ipynb)$")


def student_copy_url(url: str) -> str:
    """The Binder ``url`` of a tracked chapter, made to open the chapter's student copy at the
    root of Binder's server (``binder/postBuild``); any other URL unchanged.

    Examples
    --------
    >>> student_copy_url("https://mybinder.org/v2/gh/o/r/main?urlpath=lab/tree/notebooks/04_x.ipynb")
    'https://mybinder.org/v2/gh/o/r/main?urlpath=lab/tree/04_x.ipynb'
    """
    if not isinstance(url, str):
        raise TypeError(f"url must be a string, got {type(url).__name__}")
    return TRACKED_CHAPTER.sub(r"\1\2", url)


def open_student_copies(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """``html-page-context``, after the theme's launch buttons (priority 501): the Binder entry
    opens the student copy (:func:`student_copy_url`), except in the student edition."""
    if getattr(app.config, "posenc_student_edition", False):
        return
    for group in context.get("header_buttons", []):
        if group.get("label") != "launch-buttons":
            continue
        for button in group.get("buttons", []):
            if button.get("text") == "Binder" and "url" in button:
                button["url"] = student_copy_url(button["url"])


def kaggle_link(kaggle_url: str, repository_url: str, branch: str, path: str) -> str | None:
    """The Kaggle link that opens the notebook ``path`` of a GitHub repository; None elsewhere.

    >>> kaggle_link("https://kaggle.com", "https://github.com/you/book", "main", "notebooks/07_rope.ipynb")
    'https://kaggle.com/kernels/welcome?src=https://github.com/you/book/blob/main/notebooks/07_rope.ipynb'
    """
    repository_url = repository_url.strip().rstrip("/")
    if not kaggle_url.strip() or not repository_url.startswith("https://github.com/"):
        return None
    return f"{kaggle_url.strip().rstrip('/')}/kernels/welcome?src={repository_url}/blob/{branch}/{path.lstrip('/')}"


def add_kaggle_button(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """``html-page-context`` (after the theme's launch buttons): Kaggle in the launch menu."""
    options = app.config.html_theme_options
    group = next((b for b in context.get("header_buttons", []) if b.get("label") == GROUP_LABEL), None)
    if group is None:  # not a notebook page, or no repository URL: no launch menu
        return
    source = Path(app.env.doc2path(pagename)).relative_to(app.srcdir).with_suffix(".ipynb").as_posix()
    prefix = str(options.get("path_to_docs") or "").strip("/")
    url = kaggle_link(
        str((options.get("launch_buttons") or {}).get("kaggle_url") or ""),
        str(options.get("repository_url") or ""),
        str(options.get("repository_branch") or "main"),
        f"{prefix}/{source}" if prefix else source,
    )
    if url is None:
        return
    links = [b for b in group["buttons"] if b.get("type") == "link"]
    index = group["buttons"].index(links[-1]) + 1 if links else len(group["buttons"])
    button = {"type": "link", "text": "Kaggle", "tooltip": "Launch on Kaggle", "icon": "fab fa-kaggle", "url": url}
    group["buttons"].insert(index, button)
