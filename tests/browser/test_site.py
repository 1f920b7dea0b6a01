"""Browser tests of the built book: every page, search, interactions, screenshots.

Run against a built site (see conftest.py for the environment variables):

    POSENC_SITE=_build/html .venv/bin/python -m pytest tests/browser -q -rs

Every page is opened in Chromium from a local server, as a first-time reader
would open it; a page fails on any console error, failed request, HTTP error,
request to another host, math left unrendered, image that does not load, or
internal link (or ``#anchor``) to something that does not exist. Each failure
message lists every problem found on that page, not just the first. Chapter
pages (``notebooks/*.html``) are also saved as full-page screenshots in light
and dark mode (``$POSENC_SCREENSHOTS/<chapter>-light.png``, ``-dark.png``).
Search, a folded solution, the dark-mode button and the sidebar have their
own tests.
"""

from __future__ import annotations

import base64
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from _browser import REQUIRE_BROWSER, why_no_browser

# No browser: conftest.py marks every test here as skipped, with one message.
# CI sets POSENC_REQUIRE_BROWSER=1, which turns that into a collection error.
if REQUIRE_BROWSER and why_no_browser():
    pytest.fail(why_no_browser(), pytrace=False)
try:
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import expect
except ImportError:  # only without a browser, when all these tests are skipped
    PlaywrightError = expect = None

# --------------------------------------------------------------------------- in-page probes

# Math: every element Sphinx/MyST marked as math must hold MathJax output and
# no raw TeX; no MathJax error nodes anywhere; no TeX left in the prose
# (outside code), which would mean math that was never marked as math.
_MATH_PROBE_JS = r"""
() => {
  const RAW = /\\\(|\\\)|\\\[|\\\]|\$\$|\\begin\{/;
  const RENDERED = ".MathJax, .MathJax_Display, .MathJax_SVG, .MathJax_SVG_Display, "
                 + ".MathJax_CHTML, .mjx-chtml, .MathJax_MathML, mjx-container";
  const ERRORS = ".MathJax_Error, .merror, .noError";
  const snippet = (s) => s.replace(/\s+/g, " ").trim().slice(0, 100);
  const result = { total: 0, prerendered: 0, unrendered: [], undefined: [], errors: [], stray: [] };
  for (const el of document.querySelectorAll(".math")) {
    // MathJax's own output also uses class "math" (span.math inside .MathJax).
    if (el.parentElement && el.parentElement.closest("[class*='MathJax'], [class*='MJX']")) continue;
    result.total += 1;
    // Typeset at build time: MathJax 3 CommonHTML with its hidden MathML copy, no script.
    if (el.querySelector("mjx-container mjx-assistive-mml math")) result.prerendered += 1;
    const visible = el.cloneNode(true);
    visible.querySelectorAll("script, .MathJax_Preview, .MJX_Assistive_MathML, mjx-assistive-mml")
      .forEach((n) => n.remove());
    if (!el.querySelector(RENDERED) || RAW.test(visible.textContent)) {
      result.unrendered.push(snippet(el.textContent));
    } else if (/\\[A-Za-z]/.test(visible.textContent) && !el.querySelector(ERRORS)) {
      // MathJax's noUndefined extension shows an unknown \macro as red text.
      result.undefined.push(snippet(visible.textContent));
    }
  }
  for (const el of document.querySelectorAll(ERRORS)) {
    result.errors.push(snippet(el.textContent));
  }
  if (/Math Processing Error/.test(document.body ? document.body.innerText : "")) {
    result.errors.push("'Math Processing Error' shown on the page");
  }
  // Raw TeX in prose: \(...\), \[...\], $$...$$, \begin{...} or a TeX command
  // such as \alpha in text that is not code and not math.
  const STRAY = new RegExp(String.raw`\\\(|\\\[|\$\$|\\begin\{|`
    + String.raw`\\(?:frac|sum|sin|cos|theta|omega|alpha|mathbf|mathrm|cdot|left|right|pi)\b`);
  const SKIP = "pre, code, kbd, samp, script, style, textarea, .math, [class*='MathJax'], .highlight";
  const root = document.querySelector("main") || document.body;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement && node.parentElement.closest(SKIP)) continue;
    if (STRAY.test(node.textContent)) result.stray.push(snippet(node.textContent));
  }
  return result;
}
"""

# Images (already forced to load by the visitor): report those that failed.
_IMAGE_PROBE_JS = """
() => {
  const imgs = [...document.images];
  return {
    total: imgs.length,
    broken: imgs.filter((img) => !(img.complete && img.naturalWidth > 0))
                .map((img) => img.currentSrc || img.src || img.outerHTML.slice(0, 120)),
  };
}
"""

# Ids the page uses more than once, once its scripts have run (axe-core no longer
# reports duplicate ids: WCAG 2.2 made 4.1.1 obsolete, but a repeated id still
# breaks fragment links and label/aria references).
_DUPLICATE_ID_PROBE_JS = """
() => {
  const counts = {};
  for (const el of document.querySelectorAll("[id]")) counts[el.id] = (counts[el.id] || 0) + 1;
  return Object.entries(counts).filter(([, n]) => n > 1).map(([id, n]) => `${id} (${n} times)`);
}
"""

# Links: every anchor's resolved URL, and which same-page fragments exist.
_LINK_PROBE_JS = """
() => [...document.querySelectorAll("a[href], area[href]")].map((a) => a.href)
"""
_ID_EXISTS_JS = """
(frag) => !!(document.getElementById(frag) || document.getElementsByName(frag).length)
"""


def _check_links(page, page_url, server, link_checker, stats) -> list[str]:
    """Internal links must point to existing files (and ``#ids``); one HEAD per target."""
    problems = []
    page_path = urllib.parse.urlsplit(page_url).path
    for href in sorted(set(page.evaluate(_LINK_PROBE_JS))):
        parts = urllib.parse.urlsplit(href)
        if parts.scheme not in ("http", "https"):
            continue  # mailto:, javascript:, ...
        if f"{parts.scheme}://{parts.netloc}" != server.origin:
            continue  # external links (launch buttons, citations) are not followed
        stats["links"] += 1
        path = parts.path or "/"
        if path.endswith(".ipynb.txt"):
            problems.append(f"link to a .ipynb.txt file (should be .ipynb): {href}")
        status = link_checker.status(path)
        if status != 200:
            problems.append(f"broken internal link ({status}): {href}")
            continue
        fragment = urllib.parse.unquote(parts.fragment)
        if not fragment or not path.endswith((".html", "/")):
            continue
        exists = page.evaluate(_ID_EXISTS_JS, fragment) if path == page_path else fragment in link_checker.ids(path)
        if not exists:
            problems.append(f"link to a missing anchor: {href}")
    return problems


_ICON_PROBE_JS = """
() => [...document.querySelectorAll("link[rel~='icon']")].map((link) => link.href)
"""


def _check_icon(page, link_checker) -> list[str]:
    """The page declares a favicon that loads. (A page that declares none makes the
    browser ask for ``/favicon.ico`` by itself, whenever it gets round to it.)"""
    icons = page.evaluate(_ICON_PROBE_JS)
    if not icons:
        return ["declares no favicon (<link rel=icon>)"]
    return [
        f"favicon {href} answers {status}"
        for href in icons
        if (status := link_checker.status(urllib.parse.urlsplit(href).path)) != 200
    ]


def _check_download_buttons(page, stats) -> list[str]:
    """A notebook's download button must link to the ``.ipynb`` and serve it."""
    problems = []
    for link in page.locator("a.btn-download-source-button").all():
        href = link.get_attribute("href") or ""
        url = urllib.parse.urljoin(page.url, href)
        label = link.inner_text().strip()
        if ".ipynb" not in href and label != ".ipynb":
            continue  # a page built from Markdown offers its .md source
        if not urllib.parse.urlsplit(url).path.endswith(".ipynb"):
            problems.append(f"download button links to {href!r}, not to a .ipynb file")
            continue
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                ctype = response.headers.get_content_type()
                body = response.read()
        except urllib.error.HTTPError as exc:
            problems.append(f"download button target {url} answers {exc.code}")
            exc.close()
            continue
        if ctype != "application/x-ipynb+json":
            problems.append(f"{url} is served as {ctype}, not application/x-ipynb+json")
        try:
            notebook = json.loads(body)
        except ValueError:
            notebook = None
        if not (isinstance(notebook, dict) and "cells" in notebook and "nbformat" in notebook):
            problems.append(f"{url} is not a notebook (JSON with cells and nbformat)")
        stats["downloads"] += 1
    return problems


# --------------------------------------------------------------------------- helpers


def _listed(label: str, items: list[str], limit: int = 8) -> list[str]:
    """``label: item`` lines, at most ``limit`` of them plus a count of the rest."""
    lines = [f"{label}: {item}" for item in items[:limit]]
    if len(items) > limit:
        lines.append(f"{label}: ... and {len(items) - limit} more")
    return lines


def _fail_on(what: str, problems: list[str]) -> None:
    """Fail with every problem listed (one per line), naming the page."""
    if problems:
        pytest.fail(f"{what}: {len(problems)} problem(s):\n  " + "\n  ".join(problems), pytrace=False)


def _first_chapter_with(site_dir: Path, marker: str) -> str:
    """The first chapter page whose HTML contains ``marker``."""
    for path in sorted((site_dir / "notebooks").glob("*.html")):
        if marker in path.read_text(encoding="utf-8"):
            return path.relative_to(site_dir).as_posix()
    pytest.fail(f"no chapter page (notebooks/*.html) contains {marker!r}")


def _theme(page) -> str:
    return page.evaluate("() => document.documentElement.dataset.theme")


def _click_theme_button_until(page, wanted: str) -> list[str]:
    """Click the header's light/dark button until ``data-theme`` is ``wanted``
    (pydata-sphinx-theme cycles light/dark/auto; the order depends on the
    system preference); return the themes seen. Leaves no hover/focus tooltip."""
    button = page.locator(".theme-switch-button:visible").first
    seen = [_theme(page)]
    for _ in range(3):
        if seen[-1] == wanted:
            break
        button.click()
        seen.append(_theme(page))
    page.mouse.move(0, 0)
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    expect(page.locator(".tooltip")).to_have_count(0)
    return seen


def _background_luminance(page) -> float:
    """Relative luminance (0 black .. 1 white) of the page background."""
    rgb = page.evaluate(
        """() => {
          for (const el of [document.body, document.documentElement]) {
            const c = getComputedStyle(el).backgroundColor;
            const m = c.match(/[\\d.]+/g);
            if (m && (m.length < 4 || +m[3] > 0)) return m.slice(0, 3).map(Number);
          }
          return [255, 255, 255];
        }"""
    )
    return (0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]) / 255


# --------------------------------------------------------------------------- screenshots


def _full_page_png(page, out: Path) -> None:
    """Save a full-page PNG of ``page``.

    Chromium's DevTools protocol with ``optimizeForSpeed`` is about three times
    faster than ``page.screenshot(full_page=True)`` on these 10-25k px tall
    pages; fall back to the latter if the protocol call is refused.
    """
    try:
        cdp = page.context.new_cdp_session(page)
        try:
            size = cdp.send("Page.getLayoutMetrics")["cssContentSize"]
            shot = cdp.send(
                "Page.captureScreenshot",
                {
                    "format": "png",
                    "captureBeyondViewport": True,
                    "optimizeForSpeed": True,
                    "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1},
                },
            )
        finally:
            cdp.detach()
        out.write_bytes(base64.b64decode(shot["data"]))
    except PlaywrightError:
        page.screenshot(path=str(out), full_page=True, animations="disabled")


def _save_screenshots(page, page_path: str, screenshot_dir: Path | None, stats) -> list[str]:
    """Switch a chapter to light, then dark mode and save full-page screenshots
    (test artefacts) into ``<screenshot_dir>/<chapter>-light.png`` and ``-dark.png``.

    Dark mode is switched on with the theme's own button, as a reader would;
    the page's background must then really be dark. Without a ``screenshot_dir``
    the modes are checked and nothing is saved.
    """
    stem = page_path.rsplit("/", 1)[-1].removesuffix(".html")
    problems = []
    for mode in ("light", "dark"):
        seen = _click_theme_button_until(page, mode)
        luminance = _background_luminance(page)
        if seen[-1] != mode:
            problems.append(f"screenshot: the theme button went through {seen} without reaching {mode}")
            continue
        if (luminance >= 0.3) if mode == "dark" else (luminance <= 0.5):
            problems.append(f"screenshot: {mode} mode is on but the background has luminance {luminance:.2f}")
        if screenshot_dir is not None:
            _full_page_png(page, screenshot_dir / f"{stem}-{mode}.png")
            stats["screenshots"] += 1
    return problems


# --------------------------------------------------------------------------- every page


def test_page(page_path, fresh_context, visitor, server, link_checker, full_page_dir, stats):
    """Open one page as a first-time reader and check everything, offline;
    save light and dark screenshots of every chapter."""
    page, visit = visitor.open(fresh_context, page_path)
    try:
        problems = []
        math = page.evaluate(_MATH_PROBE_JS)
        stats["math"] += math["total"]
        problems += _listed("unrendered math", math["unrendered"])
        problems += _listed("undefined TeX command in rendered math", math["undefined"])
        problems += _listed("MathJax error", math["errors"])
        problems += _listed("raw TeX in the text", math["stray"])
        if math["total"] and visit.mathjax == "absent" and math["prerendered"] < math["total"]:
            problems.append(f"{math['total']} math elements, no MathJax on the page and not all prerendered")
        if math["prerendered"] and visit.mathjax != "absent":
            problems.append("prerendered math, yet MathJax is loaded too")

        images = page.evaluate(_IMAGE_PROBE_JS)
        stats["images"] += images["total"]
        problems += _listed("image did not load", images["broken"])
        problems += _listed("id used more than once", page.evaluate(_DUPLICATE_ID_PROBE_JS))

        problems += _check_icon(page, link_checker)
        problems += _check_links(page, page.url, server, link_checker, stats)
        stats["targets"] = link_checker.distinct_targets
        problems += _check_download_buttons(page, stats)

        if page_path.startswith("notebooks/"):  # a chapter
            problems += _save_screenshots(page, page_path, full_page_dir, stats)
    finally:
        page.close()
    stats["pages"] += 1
    # Console/network problems first (including any raised while the probes ran).
    problems = visit.problems + problems
    _fail_on(page_path, problems)


# --------------------------------------------------------------------------- search


def _search(context, visitor, query):
    page, visit = visitor.open(context, "search.html?q=" + urllib.parse.quote(query))
    # Sphinx's searchtools.js fills this paragraph once the search has finished.
    summary = page.locator("#search-results p.search-summary")
    expect(summary).not_to_have_text("")
    results = page.locator("#search-results ul.search li a").evaluate_all("els => els.map(a => a.href)")
    return page, visit, summary.inner_text(), results


@pytest.mark.parametrize("word", ["rotation", "sinusoidal"])
def test_search_finds_a_word_from_the_book(word, fresh_context, visitor, link_checker):
    page, visit, summary, results = _search(fresh_context, visitor, word)
    page.close()
    problems = list(visit.problems)
    if not results:
        problems.append(f"search for {word!r} found nothing: {summary!r}")
    for href in results:
        if link_checker.status(urllib.parse.urlsplit(href).path) != 200:
            problems.append(f"search result points to a missing page: {href}")
    _fail_on(f"search.html?q={word}", problems)


def test_search_for_nonsense_says_no_results(fresh_context, visitor):
    page, visit, summary, results = _search(fresh_context, visitor, "qzxwvjkplm")
    page.close()
    assert results == [], results
    assert "did not match any documents" in summary, summary
    _fail_on("search.html?q=qzxwvjkplm", visit.problems)


# --------------------------------------------------------------------------- interactions
#
# Errors while a page loads are test_page's business; these tests report only
# what goes wrong during the interaction itself (not while the next page loads).


def test_folded_solution_opens(site_dir, light_context, visitor):
    """A sphinx-exercise ``:class: dropdown`` solution is folded and opens on click."""
    chapter = _first_chapter_with(site_dir, 'class="solution dropdown')
    page, visit = visitor.open(light_context, chapter, wait_for_images=False)
    loaded = visit.mark()
    try:
        # sphinx-togglebutton folds ".admonition.dropdown" blocks: it adds
        # "toggle-hidden" and a button to the title, and the title toggles.
        solution = page.locator(".solution.dropdown").first
        body = solution.locator("> :not(.admonition-title)").first
        solution.scroll_into_view_if_needed()
        expect(solution).to_have_class(re.compile(r"\btoggle-hidden\b"))
        expect(body).to_be_hidden()

        solution.locator("> .admonition-title").click()
        expect(body).to_be_visible()
        expect(solution).not_to_have_class(re.compile(r"\btoggle-hidden\b"))
        expect(solution.locator("button.toggle-button")).to_have_attribute("aria-expanded", "true")
    finally:
        page.close()
    _fail_on(f"{chapter} (opening a solution)", visit.since(loaded))


def test_dark_mode_toggle_switches(site_dir, fresh_context, visitor):
    """The theme button cycles light/dark/auto; it reaches dark, which sticks."""
    chapter = _first_chapter_with(site_dir, "theme-switch-button")
    page, visit = visitor.open(fresh_context, chapter, wait_for_images=False)
    loaded = visit.mark()
    try:
        assert _theme(page) == "light", f"a reader who prefers light starts in {_theme(page)!r}"
        assert _background_luminance(page) > 0.5

        seen = _click_theme_button_until(page, "dark")
        assert len(seen) > 1, "the page was dark before any click"
        assert seen[-1] == "dark", f"the toggle went through {seen} without reaching dark"
        assert _background_luminance(page) < 0.3, "data-theme is dark but the background is not"
        assert page.evaluate("() => localStorage.getItem('theme')") == "dark"
        during = visit.since(loaded)

        page.reload(wait_until="load")  # the choice survives a reload
        assert _theme(page) == "dark"
    finally:
        page.close()
    _fail_on(f"{chapter} (toggling dark mode)", during)


def test_sidebar_navigates_to_next_chapter(site_dir, light_context, visitor):
    """Clicking the next chapter in the left sidebar opens it."""
    chapter = "notebooks/" + sorted(p.name for p in (site_dir / "notebooks").glob("*.html"))[0]
    page, visit = visitor.open(light_context, chapter, wait_for_images=False)
    loaded = visit.mark()
    try:
        h1_before = page.locator("main h1").first.inner_text()
        next_url = urllib.parse.urljoin(page.url, page.locator('link[rel="next"]').get_attribute("href"))

        sidebar_links = page.locator(".bd-sidebar-primary nav.bd-docs-nav a.reference.internal")
        hrefs = sidebar_links.evaluate_all("els => els.map(a => a.href.split('#')[0])")
        assert next_url in hrefs, f"the sidebar has no link to the next chapter {next_url}"
        link = sidebar_links.nth(hrefs.index(next_url))
        expect(link).to_be_visible()
        label = link.inner_text().strip()
        during = visit.since(loaded)  # what follows is the next page's load

        link.click()
        page.wait_for_url(next_url)
        h1_after = page.locator("main h1").first.inner_text()
        assert h1_after != h1_before
        # The sidebar label ("2. Naive positions") is the new page's title.
        assert label.split(". ", 1)[-1] in h1_after, (label, h1_after)
    finally:
        page.close()
    _fail_on(f"{chapter} (sidebar to next chapter)", during)


# --------------------------------------------------------------------------- favicon and logo


def test_favicon_at_the_site_root_and_logo(site_dir, fresh_context, visitor, server):
    """Browsers and feed readers ask for ``/favicon.ico`` whatever the page says:
    it must be there, as an icon; the sidebar logo must load and have alt text."""
    with urllib.request.urlopen(server.origin + "/favicon.ico", timeout=10) as response:
        assert response.status == 200
        assert response.read(4) == b"\x00\x00\x01\x00", "favicon.ico is not an ICO file"
    page, visit = visitor.open(fresh_context, "index.html")
    try:
        logos = page.locator("img.logo__image").evaluate_all(
            "els => els.map(img => [img.naturalWidth, img.getAttribute('alt')])"
        )
    finally:
        page.close()
    _fail_on("index.html", visit.problems)
    assert logos and all(width > 0 for width, _ in logos), logos
    assert all(alt and alt.strip() for _, alt in logos), f"a logo without alt text: {logos}"
