"""Write each script into a page once.

Under Jupyter Book 1 (Sphinx 7.4), inline scripts added with
``app.add_js_file(None, body=...)`` reach every page twice (fixed upstream in
sphinx-doc/sphinx#13402, in a Sphinx that Jupyter Book 1 cannot use). For
sphinx-thebe's ``const THEBE_JS_URL = ...`` the second copy is a JavaScript
error in every reader's console, which the browser tests fail on.
"""

from __future__ import annotations

from typing import Any


def deduplicate_scripts(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """Drop repeated script entries from a page (same file or inline body, any priority)."""
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        # The same file or inline body twice, whatever priority each was given.
        # (An inline script's file name is None in one registration and "" in the other.)
        key = (
            str(getattr(script, "filename", script) or ""),
            tuple(sorted((k, str(v)) for k, v in getattr(script, "attributes", {}).items())),
        )
        if key not in seen:
            seen.add(key)
            unique.append(script)
    scripts[:] = unique
