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
"""

from __future__ import annotations

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
