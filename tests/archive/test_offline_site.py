"""The release's site archive (make release-editions) read from file:// in Chromium.

The archive in _build/editions is unpacked and its pages opened by file:// URL, as a
reader who double-clicks index.html opens them: no console error, no failed request,
search finds pages, an explorer's slider changes its frame and the frame loads, MathJax's
fonts load. The same pages of the site as built (not made for file://) fail the first
check: that is what the archive's changes are for. Chromium as in tests/browser: Debian's
(or Playwright's own); without one, skipped with a message, or failed where
POSENC_REQUIRE_BROWSER=1 (CI).
"""

from __future__ import annotations

import os
import shutil
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARCHIVES = sorted((ROOT / "_build" / "editions").glob("posenc-book-site-*.tar.gz"))
PAGES = ("index.html", "book/intro.html", "notebooks/04_sine_cosine_pairs.html", "notebooks/07_rope.html")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        if os.environ.get("POSENC_REQUIRE_BROWSER") == "1":
            pytest.fail("POSENC_REQUIRE_BROWSER=1 but Chromium is not installed")
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(headless=True, executable_path=chromium)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if len(ARCHIVES) != 1:
        pytest.fail(f"expected one site archive in _build/editions, found {ARCHIVES}: run make release-editions")
    folder = tmp_path_factory.mktemp("offline")
    with tarfile.open(ARCHIVES[0]) as tar:
        tar.extractall(folder, filter="data")
    (root,) = folder.iterdir()
    return root


def problems(browser: Any, url: str, act: Any = None) -> list[str]:
    """Console errors, page errors and failed requests while ``url`` loads (and ``act`` runs)."""
    page = browser.new_page()
    found: list[str] = []
    page.on("console", lambda m: found.append(f"console: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: found.append(f"pageerror: {e}"))
    page.on("requestfailed", lambda r: found.append(f"failed: {r.url} {r.failure}"))
    page.goto(url, wait_until="load")
    if act is not None:
        act(page)
    page.wait_for_timeout(500)
    page.close()
    return found


def test_pages_load_from_file_urls_without_errors(browser: Any, site: Path) -> None:
    for name in PAGES:
        assert problems(browser, (site / name).as_uri()) == [], name


def test_search_works_from_file_urls(browser: Any, site: Path) -> None:
    def search(page: Any) -> None:
        page.wait_for_selector("#search-results li a", timeout=20_000)
        titles = page.locator("#search-results li a").all_inner_texts()
        assert any("Rotary position embedding" in t for t in titles), titles

    assert problems(browser, (site / "search.html").as_uri() + "?q=rotary", search) == []


def test_explorer_and_math_fonts_from_file_urls(browser: Any, site: Path) -> None:
    def slide(page: Any) -> None:
        frame = page.locator("img.posenc-player-frame").first
        before = frame.get_attribute("src")
        page.locator(".posenc-player input[type=range]").first.focus()
        page.keyboard.press("ArrowLeft")
        page.wait_for_function(
            "(src) => document.querySelector('img.posenc-player-frame').src.indexOf(src) < 0", arg=before.split("/")[-1]
        )
        page.wait_for_function(
            "() => { const i = document.querySelector('img.posenc-player-frame');"
            " return i.complete && i.naturalWidth > 0; }"
        )
        page.evaluate("() => document.fonts.ready")
        loaded = page.evaluate("() => [...document.fonts].filter(f => f.status === 'loaded').map(f => f.family)")
        assert any("MJXZERO" in f or "MJXTEX" in f for f in loaded), loaded

    assert problems(browser, (site / "notebooks/04_sine_cosine_pairs.html").as_uri(), slide) == []


def test_the_site_as_built_does_not_work_from_file_urls(browser: Any) -> None:
    built = ROOT / "_build" / "html"
    if not (built / "search.html").is_file():
        pytest.skip("no built site in _build/html")
    found = problems(browser, (built / "notebooks/07_rope.html").as_uri())
    assert any("font" in p.lower() for p in found), found
