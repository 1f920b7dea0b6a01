"""Fixtures for the browser test suite (pytest + Playwright, Chromium).

The suite reads an already built site; it never builds the book itself (the
Makefile target does that first). Environment variables:

``POSENC_SITE``
    folder of the built site (default: ``<repo>/_build/html``).
``POSENC_SCREENSHOTS``
    where the suite's artefacts go (default: ``<repo>/_build/screenshots``): every
    chapter at phone width (``<chapter>-phone.png``), chapter 05 printed to PDF,
    and full-page light and dark screenshots of every chapter; ``none`` saves
    nothing.
``POSENC_FULL_PAGE_SCREENSHOTS=0``
    checks light and dark mode on every chapter without saving the full-page
    screenshots (``make test`` does this: they take a third of the suite's time);
    the phone screenshots and the PDF are still saved.
``POSENC_REQUIRE_BROWSER=1``
    a missing Chromium is a failure instead of a skip (set it in CI).

One static server (127.0.0.1, free port) and one browser serve the whole
session. Every page is opened in a fresh tab that records console errors,
failed requests, HTTP errors and requests to any other host; requests to
other hosts are also aborted, so the site is checked exactly as a reader
without internet would see it.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

# The helper module sits next to this file; make it importable whatever
# pytest's import mode is.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _browser import INSTALL_HINT, REQUIRE_BROWSER, system_chromium, why_no_browser  # noqa: E402
from _server import SiteServer  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("POSENC_SITE") or REPO / "_build" / "html").resolve()
_SCREENSHOTS_SETTING = os.environ.get("POSENC_SCREENSHOTS") or str(REPO / "_build" / "screenshots")
SCREENSHOTS = None if _SCREENSHOTS_SETTING == "none" else Path(_SCREENSHOTS_SETTING).resolve()
FULL_PAGE_SCREENSHOTS = SCREENSHOTS is not None and os.environ.get("POSENC_FULL_PAGE_SCREENSHOTS", "1") != "0"

VIEWPORT = {"width": 1280, "height": 900}
TIMEOUT_MS = 30_000  # per action / wait: generous, for a loaded CI machine; pages need 1-5 s

# Pages with their own tests rather than the generic per-page check.
SPECIAL_PAGES = {"search.html"}


# --------------------------------------------------------------------------- no browser

HERE = Path(__file__).resolve().parent
NO_BROWSER = None if REQUIRE_BROWSER else why_no_browser()  # the skip reason, if any


def _in_suite(item) -> bool:
    return HERE in Path(str(item.path)).resolve().parents


def pytest_collection_modifyitems(config, items):
    """Without a browser, skip every browser test (test_site.py fails instead
    under POSENC_REQUIRE_BROWSER=1)."""
    if NO_BROWSER:
        for item in items:
            if _in_suite(item):
                item.add_marker(pytest.mark.skip(reason=NO_BROWSER))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Report those skips under one location, so ``-rs`` prints the message once."""
    outcome = yield
    report = outcome.get_result()
    if NO_BROWSER and report.skipped and _in_suite(item) and isinstance(report.longrepr, tuple):
        report.longrepr = (str(HERE), None, f"Skipped: {NO_BROWSER}")


# --------------------------------------------------------------------------- pages


def site_pages() -> list[str]:
    """Every HTML page of the site (relative paths), for parametrization.

    Folders starting with an underscore (``_static``, ``_sources``, ...) hold
    assets, not pages. If the site is not built, return one placeholder so the
    tests still run and the ``site_dir`` fixture fails with a clear message.
    """
    if not (SITE / "index.html").is_file():
        return ["index.html"]
    pages = []
    for path in sorted(SITE.rglob("*.html")):
        rel = path.relative_to(SITE)
        if any(part.startswith("_") for part in rel.parts[:-1]):
            continue
        if rel.as_posix() in SPECIAL_PAGES:
            continue
        pages.append(rel.as_posix())
    return pages


def pytest_generate_tests(metafunc):
    """``page_path``: every page of the site (test ids name the page)."""
    if "page_path" in metafunc.fixturenames:
        metafunc.parametrize("page_path", site_pages())


@pytest.fixture(scope="session")
def site_dir() -> Path:
    if not (SITE / "index.html").is_file():
        pytest.fail(
            f"no built site: {SITE / 'index.html'} does not exist. Build the book first "
            "('make book'), or point POSENC_SITE at a built _build/html folder.",
            pytrace=False,
        )
    return SITE


# --------------------------------------------------------------------------- server


@pytest.fixture(scope="session")
def server(site_dir: Path):
    with SiteServer(site_dir) as srv:
        yield srv


# --------------------------------------------------------------------------- browser


def _no_browser(reason: str):
    if REQUIRE_BROWSER:
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser():
    """One Chromium for the session: Playwright's own if installed, else the system one.

    (Without any browser the tests are skipped before they ask for this
    fixture; here a Playwright cache without a usable Chromium falls back to
    the system one, or skips/fails with the same message.)
    """
    reason = why_no_browser()
    if reason:
        _no_browser(reason)
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        try:
            browser = pw.chromium.launch(headless=True)
        except PlaywrightError as exc:
            if "Executable doesn't exist" not in str(exc):
                raise
            system = system_chromium()
            if system is None:
                _no_browser(f"{INSTALL_HINT} (Playwright's Chromium is incomplete and none is on PATH)")
            browser = pw.chromium.launch(headless=True, executable_path=system)
        yield browser
        browser.close()
    finally:
        pw.stop()


def _is_local(url: str, origin: str) -> bool:
    """True for URLs of the site itself (and data:/blob:/about: URLs)."""
    scheme = url.split(":", 1)[0].lower()
    if scheme in ("data", "blob", "about"):
        return True
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" == origin


def _new_context(browser, server: SiteServer, mode: str | None):
    """A browser context (its own cache and storage) for reading the site.

    ``mode`` ('light', 'dark' or 'auto') is stored in localStorage before any
    page script runs, the way pydata-sphinx-theme remembers a reader's choice;
    None leaves localStorage empty: a reader's first visit. The system
    preference is light unless ``mode`` is 'dark'.

    Every request that would leave the site is aborted (and reported by the
    page's listeners): the site must work without internet.
    """
    context = browser.new_context(
        viewport=VIEWPORT,
        color_scheme="dark" if mode == "dark" else "light",
        reduced_motion="reduce",
        service_workers="block",
    )
    context.set_default_timeout(TIMEOUT_MS)
    origin = server.origin
    context.route(lambda url: not _is_local(url, origin), lambda route: route.abort("blockedbyclient"))
    if mode is not None:
        theme = "light" if mode == "auto" else mode  # in auto mode pydata recomputes it at once
        context.add_init_script(
            f"try {{ localStorage.setItem('mode', {json.dumps(mode)}); "
            f"localStorage.setItem('theme', {json.dumps(theme)}); }}"
            " catch (e) {}"
        )
    return context


@pytest.fixture()
def fresh_context(browser, server):
    """A new context per test: a first-time reader with a light system theme.

    Every page is checked this way, so an error that only a first visit
    shows is reported on every page, whatever order the tests run in.
    """
    context = _new_context(browser, server, None)
    yield context
    context.close()


@pytest.fixture()
def new_context(browser, server):
    """A factory of contexts, ``new_context(mode)``, closed when the test ends."""
    opened = []

    def make(mode: str | None):
        context = _new_context(browser, server, mode)
        opened.append(context)
        return context

    yield make
    for context in opened:
        context.close()


@pytest.fixture(scope="session")
def light_context(browser, server):
    """A returning reader who chose light mode (shared by the interaction tests)."""
    context = _new_context(browser, server, "light")
    yield context
    context.close()


# --------------------------------------------------------------------------- visiting


@dataclass
class Visit:
    """What went wrong while a page was open, in the order it happened."""

    url: str
    problems: list[str] = field(default_factory=list)
    mathjax: str = "absent"  # absent | missing | done | timeout

    def mark(self) -> int:
        """A bookmark: ``since(mark)`` returns only the problems after it."""
        return len(self.problems)

    def since(self, mark: int) -> list[str]:
        return self.problems[mark:]


# Set a flag once MathJax 2 has finished its start-up typeset and everything
# queued after it. StartupHook("End") fires at once if start-up already ended.
# (The hook must not return the Queue's callback: MathJax would wait for it.)
_MATHJAX_DONE_JS = """
() => {
  window.__posencMathDone = false;
  MathJax.Hub.Register.StartupHook("End", () => {
    MathJax.Hub.Queue(() => { window.__posencMathDone = true; });
  });
}
"""


class Visitor:
    """Opens pages and records console errors, failed requests, HTTP errors and
    requests to other hosts."""

    def __init__(self, server: SiteServer) -> None:
        self.server = server

    def open(self, context, relpath: str, *, wait_for_images: bool = True):
        """Open ``relpath``; wait for load, MathJax, images and fonts; return (page, Visit)."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        origin = self.server.origin
        url = self.server.url(relpath)
        visit = Visit(url=url)
        page = context.new_page()
        _report_problems(page, visit, origin)

        page.goto(url, wait_until="load")
        # index.html is a meta-refresh redirect: follow it before checking. (Read
        # from disk: the live DOM may already be the redirect's target.)
        target = _meta_refresh_target(self.server.root / urllib.parse.urlsplit(relpath).path)
        if target is not None:
            page.wait_for_url(urllib.parse.urljoin(url, target), wait_until="load")

        has_mathjax = page.evaluate("() => !!document.querySelector('script[src*=\"MathJax.js\"]')")
        # The load event waits for async scripts, so MathJax.js has run by now or
        # never will (waiting longer would only waste the timeout).
        mathjax_ran = page.evaluate("() => !!(window.MathJax && MathJax.Hub && MathJax.Hub.Register)")
        if has_mathjax and not mathjax_ran:
            visit.mathjax = "missing"
            visit.problems.append("MathJax.js is referenced but did not load")
        elif has_mathjax:
            try:
                page.evaluate(_MATHJAX_DONE_JS)
                page.wait_for_function("() => window.__posencMathDone === true")
                visit.mathjax = "done"
            except PlaywrightTimeout:
                visit.mathjax = "timeout"
                visit.problems.append(f"MathJax did not finish typesetting within {TIMEOUT_MS / 1000:.0f} s")
        if wait_for_images:
            page.evaluate(_LOAD_IMAGES_JS)
        # Fonts (MathJax's web fonts) load lazily, once some text needs them: let
        # them finish, so their failures are reported here, deterministically.
        page.evaluate("() => document.fonts.ready.then(() => true)")
        return page, visit


def _report_problems(page, visit: Visit, origin: str) -> None:
    """Listen on ``page`` for console errors, uncaught exceptions, requests to other hosts,
    failed requests, HTTP errors and foreign websockets; add each to ``visit.problems``."""
    requested: set[str] = set()  # every URL the page asked for
    foreign: set[str] = set()  # ... that leaves the site
    http_errors: set[str] = set()  # ... that answered 4xx/5xx

    def on_console(msg):
        if msg.type != "error":
            return
        loc = msg.location or {}
        if msg.text.startswith("Failed to load resource") and loc.get("url") in requested:
            return  # the network listeners below report this request, with more detail
        where = f" [{loc['url']}:{loc.get('lineNumber', 0)}]" if loc.get("url") else ""
        visit.problems.append(f"console error: {msg.text}{where}")

    def on_request(request):
        requested.add(request.url)
        if not _is_local(request.url, origin):
            foreign.add(request.url)
            visit.problems.append(f"request to another host: {request.url}")

    def on_failed(request):
        if request.url not in foreign and request.url not in http_errors:  # reported already
            visit.problems.append(f"failed request: {request.url} ({request.failure})")

    def on_response(response):
        if response.status >= 400:
            http_errors.add(response.url)
            visit.problems.append(f"HTTP {response.status}: {response.url}")

    def on_websocket(ws):
        if not _is_local(ws.url.replace("ws", "http", 1), origin):
            visit.problems.append(f"websocket to another host: {ws.url}")

    page.on("console", on_console)
    page.on("websocket", on_websocket)
    page.on("pageerror", lambda exc: visit.problems.append(f"uncaught exception: {exc}"))
    page.on("request", on_request)
    page.on("requestfailed", on_failed)
    page.on("response", on_response)


_REFRESH_RE = re.compile(r"""<meta\s+http-equiv=["']?refresh["']?\s+content=["']\s*\d+\s*;\s*url=([^"']+)["']""", re.I)


def _meta_refresh_target(file: Path) -> str | None:
    """The target of an HTML ``<meta http-equiv="refresh">`` redirect, if any."""
    try:
        head = file.read_text(encoding="utf-8", errors="replace")[:4000]
    except OSError:
        return None
    match = _REFRESH_RE.search(head)
    return match.group(1).strip() if match else None


# Force lazy images to load and wait for each to load or fail (max 15 s).
_LOAD_IMAGES_JS = """
async () => {
  const imgs = [...document.images];
  imgs.forEach((img) => { img.loading = "eager"; });
  const settle = (img) => img.decode().catch(() => null);
  const timeout = new Promise((resolve) => setTimeout(resolve, 15000));
  await Promise.race([Promise.all(imgs.map(settle)), timeout]);
}
"""


@pytest.fixture(scope="session")
def visitor(server) -> Visitor:
    return Visitor(server)


# --------------------------------------------------------------------------- links


class _IdCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if (name == "id" or (tag == "a" and name == "name")) and value:
                self.ids.add(value)


class LinkChecker:
    """Checks internal link targets, each distinct target once per session."""

    def __init__(self, server: SiteServer) -> None:
        self.server = server
        self._status: dict[str, int] = {}
        self._ids: dict[str, set[str]] = {}

    def status(self, path: str) -> int:
        """HTTP status of a site path (``/notebooks/x.html``), cached."""
        if path not in self._status:
            request = urllib.request.Request(self.server.origin + path, method="HEAD")
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    self._status[path] = response.status
            except urllib.error.HTTPError as exc:
                self._status[path] = exc.code
                exc.close()
        return self._status[path]

    def ids(self, path: str) -> set[str]:
        """Element ids (and ``<a name>``) in the HTML file at a site path, cached."""
        if path not in self._ids:
            file = self.server.root / urllib.parse.unquote(path).lstrip("/")
            if file.is_dir():
                file = file / "index.html"
            parser = _IdCollector()
            parser.feed(file.read_text(encoding="utf-8"))
            parser.close()
            self._ids[path] = parser.ids
        return self._ids[path]

    @property
    def distinct_targets(self) -> int:
        return len(self._status)


@pytest.fixture(scope="session")
def link_checker(server) -> LinkChecker:
    return LinkChecker(server)


# --------------------------------------------------------------------------- summary

STATS: dict[str, object] = {
    "pages": 0,  # pages through test_page
    "math": 0,  # math elements checked
    "images": 0,
    "links": 0,  # internal links checked (per page)
    "targets": 0,  # ... distinct targets among them
    "downloads": 0,  # .ipynb download buttons fetched
    "screenshots": 0,
    "axe_pages": 0,  # pages through axe-core (test_accessibility)
    "tabs_to_solution": 0,  # presses of Tab from the top of chapter 05 to its first solution
    "focused_controls": 0,  # controls focused one by one, each showing a focus ring
}
_START = time.monotonic()


@pytest.fixture(scope="session")
def stats() -> dict[str, int]:
    return STATS


@pytest.fixture(scope="session")
def screenshot_dir() -> Path | None:
    """Where the suite's artefacts go; None when ``POSENC_SCREENSHOTS=none``."""
    if SCREENSHOTS is not None:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture(scope="session")
def full_page_dir(screenshot_dir) -> Path | None:
    """Where full-page chapter screenshots go; None when they are not wanted."""
    return screenshot_dir if FULL_PAGE_SCREENSHOTS else None


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if NO_BROWSER:
        terminalreporter.write_line(f"browser suite skipped: {NO_BROWSER}", yellow=True, bold=True)
        return
    if STATS.get("explorers"):
        terminalreporter.write_line(
            "explorers on the website (frames, bytes, frame change): " + "; ".join(STATS["explorers"])
        )
    if not STATS["pages"] and not STATS["screenshots"] and not STATS["axe_pages"]:
        return
    terminalreporter.write_line(
        f"browser suite: checked {STATS['pages']} pages of {SITE} "
        f"({STATS['math']} math elements, {STATS['images']} images, {STATS['links']} internal links "
        f"to {STATS['targets']} targets, {STATS['downloads']} .ipynb downloads), "
        + (
            f"artefacts ({STATS['screenshots']} full-page screenshots, phone screenshots, a PDF) in {SCREENSHOTS}, "
            if SCREENSHOTS
            else "no artefacts, "
        )
        + f"{time.monotonic() - _START:.1f} s"
    )
    if STATS.get("heaviest"):
        terminalreporter.write_line(
            f"weight: heaviest chapter {STATS['heaviest']}; worst layout shift {STATS['worst_cls']:.3f}"
        )
    if STATS["axe_pages"]:
        terminalreporter.write_line(
            f"accessibility: axe-core (WCAG 2.1 A/AA) on {STATS['axe_pages']} pages, "
            "light and dark, folds closed and opened; "
            f"{STATS['focused_controls']} controls focused, each with a visible ring; "
            f"chapter 05's first solution after {STATS['tabs_to_solution']} presses of Tab"
        )
