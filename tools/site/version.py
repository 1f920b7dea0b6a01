"""The book's version in the footer of every page.

The version is written in one place, ``__version__`` in ``posenc_helpers/__init__.py``,
and read from there without importing the package (:func:`tools.release.package_version`).
``html.extra_footer`` in ``_config.yml`` holds the placeholder ``{version}``, replaced
when the configuration is read; a footer without it fails the build, so the version
cannot silently disappear. Sphinx's own ``version`` and ``release`` get the same value.
"""

from __future__ import annotations

from typing import Any

from ..release import footer_html, package_version


def configure_version(app: Any, config: Any) -> None:
    """``config-inited``: the version in Sphinx's ``version``, ``release`` and the footer."""
    version = package_version()
    config.version = config.release = version
    options = config.html_theme_options
    options["extra_footer"] = footer_html(str(options.get("extra_footer") or ""), version)
