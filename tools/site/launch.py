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
"""

from __future__ import annotations

import re
from typing import Any

LAUNCH_KEYS = ("binderhub_url", "colab_url", "jupyterhub_url", "thebe")


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
