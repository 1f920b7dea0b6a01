"""A small threaded static file server for the built site, bound to 127.0.0.1.

The browser suite serves ``_build/html`` the way a reader's machine would
(``python -m http.server``), with two additions:

* ``.ipynb`` files are served as ``application/x-ipynb+json`` (the download
  button links to them; the default would be ``application/octet-stream``);
* the server is quiet: no access log on stderr, and clients that drop a
  connection (the browser does so routinely) are not reported as errors.
"""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path


class _SiteHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".ipynb": "application/x-ipynb+json",
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".json": "application/json",
        ".svg": "image/svg+xml",
        ".woff": "font/woff",
        ".woff2": "font/woff2",
        ".otf": "font/otf",
        ".ttf": "font/ttf",
        ".eot": "application/vnd.ms-fontobject",
        ".inv": "application/octet-stream",
    }

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass  # no access log: pytest output stays readable


class _QuietThreadingServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:  # type: ignore[override]
        import sys

        exc = sys.exc_info()[1]
        if isinstance(exc, (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)):
            return  # the browser closed the connection early: normal
        super().handle_error(request, client_address)


class SiteServer:
    """Serve ``root`` on 127.0.0.1 on a free port, in a background thread."""

    def __init__(self, root: Path) -> None:
        handler = functools.partial(_SiteHandler, directory=str(root))
        self._httpd = _QuietThreadingServer(("127.0.0.1", 0), handler)
        self.root = root
        self.host = "127.0.0.1"
        self.port = self._httpd.server_address[1]
        self.origin = f"http://{self.host}:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="posenc-site-server", daemon=True)

    def __enter__(self) -> SiteServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def url(self, relpath: str = "") -> str:
        return f"{self.origin}/{relpath.lstrip('/')}"
