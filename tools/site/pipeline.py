"""The build-finished chain: the site read once, whole-site steps, page steps, pages written once.

A **site step** takes the :class:`Site` and works on the output folder as a whole
(writes a stylesheet, converts the figures, renders every formula) and may leave
what the page steps need on the :class:`Site` (the rendered formulas, the converted
figures). A **page step** takes a page's HTML and the :class:`Page` and returns the
new HTML; page steps run in their order on each page, in memory, so each page is
read once and written once, and only if it changed. Final steps run after the pages
are written and see their final text. A page step that rewrites upstream markup does so
through a named :class:`~tools.site.patches.Patch`; the run counts its matches on the
pages written in this build and stops when one matched nothing where it should
(:func:`~tools.site.patches.require_matches`). ``tools/site/__init__.py`` lists the steps in
order; ``tools/site/README.md`` draws the chain.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import patches


@dataclass
class Site:
    """The built site while the chain runs.

    Attributes
    ----------
    outdir : pathlib.Path
        The HTML output folder (``_build/html``).
    doctreedir : pathlib.Path
        Sphinx's doctree folder, where caches that outlive one build are kept.
    config : Any
        Sphinx's configuration (``app.config``).
    pages : dict of pathlib.Path to str
        Every HTML page's text: as Sphinx wrote it before the page steps, as written
        after them.
    formulas : dict of str to str
        Rendered HTML for each formula, keyed by :func:`tools.site.math.formula_key`.
    figures : dict of str to tuple of (str, int, int)
        ``{stem: (suffix, width, height)}`` for every figure in ``_images``.
    explorers : dict of str to dict
        ``{page file name: manifest}`` for every chapter page whose explorer has frames
        (:mod:`tools.site.explorers`).
    notes : list of str
        What the steps did, for the build log.
    fresh : set of pathlib.Path or None
        The pages Sphinx wrote in this build (None: every page); the others were
        patched by an earlier build.
    """

    outdir: Path
    doctreedir: Path
    config: Any
    pages: dict[Path, str]
    formulas: dict[str, str] = field(default_factory=dict)
    figures: dict[str, tuple[str, int, int]] = field(default_factory=dict)
    explorers: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    fresh: set[Path] | None = None

    @property
    def static(self) -> Path:
        """The site's ``_static`` folder."""
        return self.outdir / "_static"


@dataclass(frozen=True)
class Page:
    """One HTML page of the :class:`Site`, as a page step sees it."""

    path: Path
    site: Site

    @property
    def static_prefix(self) -> str:
        """The relative URL of ``_static`` from this page (``../_static`` one level down)."""
        depth = len(self.path.relative_to(self.site.outdir).parts) - 1
        return "/".join([".."] * depth + ["_static"])

    @property
    def is_root_index(self) -> bool:
        """Whether this is the site's root ``index.html``."""
        return self.path == self.site.outdir / "index.html"


SiteStep = Callable[[Site], None]
PageStep = Callable[[str, Page], str]


def text_step(function: Callable[[str], str]) -> PageStep:
    """A page step made of a function of the page's text alone."""

    def step(text: str, page: Page) -> str:
        return function(text)

    step.__name__ = step.__qualname__ = function.__name__
    step.__doc__ = function.__doc__
    return step


def read_site(outdir: Path, doctreedir: Path, config: Any, since: float | None = None) -> Site:
    """The :class:`Site` with every HTML page under ``outdir`` read (once).

    ``since`` is when the build started (seconds since the epoch): a page written after it
    is fresh (:attr:`Site.fresh`). None: every page counts as fresh.
    """
    paths = sorted(outdir.rglob("*.html"))
    pages = {path: path.read_text(encoding="utf-8") for path in paths}
    fresh = None if since is None else {path for path in paths if path.stat().st_mtime >= since}
    return Site(outdir=outdir, doctreedir=doctreedir, config=config, pages=pages, fresh=fresh)


def run(
    site: Site,
    site_steps: Sequence[SiteStep],
    page_steps: Sequence[PageStep],
    final_steps: Sequence[SiteStep],
) -> int:
    """Run the chain on ``site``; return the number of pages written.

    Parameters
    ----------
    site : Site
        The site, its pages read.
    site_steps : sequence of callables
        Whole-site steps, run in order before the page steps.
    page_steps : sequence of callables
        ``(html, page) -> html``, run in order on each page.
    final_steps : sequence of callables
        Whole-site steps, run in order once the pages are written.

    Returns
    -------
    int
        How many pages changed (and were written).

    Raises
    ------
    tools.site.patches.PatchMatchedNothing
        When a patch matched nothing on the fresh pages though its marker is on one.
    """
    for site_step in site_steps:
        site_step(site)
    written = 0
    counts: Counter[str] = Counter()
    fresh_pages = []
    for path, original in site.pages.items():
        text = original
        page = Page(path, site)
        fresh = site.fresh is None or path in site.fresh
        if fresh:
            fresh_pages.append(original)
        with patches.counting(counts if fresh else None):
            for page_step in page_steps:
                text = page_step(text, page)
        if text != original:
            path.write_text(text, encoding="utf-8")
            site.pages[path] = text
            written += 1
    patches.require_matches(counts, fresh_pages)
    for final_step in final_steps:
        final_step(site)
    return written
