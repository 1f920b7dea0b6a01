"""Which Chromium the browser suite can use, found without starting one.

Playwright's own Chromium (``python -m playwright install chromium``) is
preferred; otherwise a system Chromium on PATH (Debian's ``chromium``
package) is driven through Playwright's ``executable_path``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

REQUIRE_BROWSER = os.environ.get("POSENC_REQUIRE_BROWSER", "") not in ("", "0")

INSTALL_HINT = (
    "No Chromium for the browser tests. Install one with 'apt-get install chromium' "
    "(Debian/Ubuntu) or '.venv/bin/python -m playwright install chromium'; "
    "set POSENC_REQUIRE_BROWSER=1 to make this a failure instead of a skip"
)

SYSTEM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def system_chromium() -> str | None:
    """Path of a Chromium/Chrome on PATH, or None."""
    for name in SYSTEM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def _playwright_browsers_dir() -> Path:
    configured = os.environ.get("PLAYWRIGHT_BROWSERS_PATH")
    if configured == "0":  # browsers installed inside the package
        import playwright

        return Path(playwright.__file__).parent / "driver" / "package" / ".local-browsers"
    if configured:
        return Path(configured)
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "ms-playwright"
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA", Path.home())) / "ms-playwright"
    return Path.home() / ".cache" / "ms-playwright"


def playwright_chromium_installed() -> bool:
    """Whether ``playwright install chromium`` has put a Chromium in its cache."""
    folder = _playwright_browsers_dir()
    return folder.is_dir() and any(folder.glob("chromium*-*"))


def why_no_browser() -> str | None:
    """None if a browser is likely usable, else the reason (for skip/fail)."""
    if importlib.util.find_spec("playwright") is None:
        return f"{INSTALL_HINT} (the Python package 'playwright' is not installed: pip install playwright)"
    if not playwright_chromium_installed() and system_chromium() is None:
        names = "/".join(SYSTEM_NAMES)
        return f"{INSTALL_HINT} (neither Playwright's Chromium nor {names} on PATH)"
    return None
