"""The website's Sphinx extension: one name in ``_config.yml`` (``tools.site``), every site step in order.

:func:`setup` registers the parts that act while Sphinx configures, reads and writes
(below, by event), and **one** ``build-finished`` handler that runs the chain of
:mod:`tools.site.pipeline` on the finished site: :data:`SITE_STEPS`, then
:data:`PAGE_STEPS` on each page (each page read once, written once), then
:data:`FINAL_STEPS`. ``tools/site/README.md`` draws the chain and keeps the ledger of
what patches an upstream gap, and until when.

==========================  ==============================================================
module                      what it is for
==========================  ==============================================================
:mod:`.guard`               no build from notebooks with errors, stderr or stale outputs
:mod:`.numbering`           chapters, sections, figures and exercises numbered by chapter
:mod:`.numref_cache`        each page's doctree read once for all numbered references
:mod:`.math`                formulas typeset at build time (MathJax 3 in Node.js)
:mod:`.accessibility`       WCAG 2.1 AA repairs of the theme's HTML, CSS and JS
:mod:`.layout`              phones, paper, and nothing moving while a page loads
:mod:`.icons`               Font Awesome cut to the icons the site draws
:mod:`.images`              figures as WebP, sized before they arrive
:mod:`.explorers`           every chapter's explorer on the website, frames drawn by its Python
:mod:`.explorer_grids`      the settings each explorer is drawn at (one grid per explorer)
:mod:`.explorer_player`     the web player of an explorer's frames, after its cell
:mod:`.head`                one viewport tag, plain descriptions, the titled root redirect
:mod:`.unused`              source maps and TrueType fonts removed
:mod:`.launch`              launch buttons from ``repository.url``
:mod:`.student`             the student edition's switches
:mod:`.scripts`             each script written into a page once
:mod:`.version`             the package's version in every page's footer
:mod:`.pipeline`            the chain's types and runner
:mod:`.patches`             rewrites of upstream HTML, counted: the build stops when one matches nothing
:mod:`.css`                 stylesheets read as rules
==========================  ==============================================================

It is loaded as ``tools.site`` (``local_extensions: {tools.site: .}`` puts the repository
root on ``sys.path``); a top-level module named ``site`` would be Python's own.
"""

from __future__ import annotations

import time
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from . import (
    accessibility,
    explorer_player,
    explorers,
    guard,
    head,
    icons,
    images,
    launch,
    layout,
    math,
    numbering,
    numref_cache,
    scripts,
    search,
    student,
    unused,
    version,
)
from .pipeline import PageStep, SiteStep, read_site, run, text_step

LOGGER = logging.getLogger(__name__)

#: Whole-site steps, in order, before the pages are rewritten.
SITE_STEPS: tuple[SiteStep, ...] = (
    math.typeset_formulas,  # every formula rendered at once; mathjax-chtml.css and fonts written
    layout.write_print_stylesheet,  # reads every stylesheet, mathjax-chtml.css included
    accessibility.select_proofs_by_class,  # proof.css, after the print stylesheet has read it
    icons.slim_site_icons,  # Font Awesome's CSS and fonts cut to the icons the pages name
    images.convert_site_figures,  # _images/*.png -> .webp where smaller
    explorers.render_explorer_frames,  # each chapter's explorer drawn on its grid (cached)
    search.mark_whole_terms,  # sphinx_highlight.js marks whole terms, not substrings
)

#: Page steps, in order, applied to each page's HTML in memory.
PAGE_STEPS: tuple[PageStep, ...] = (
    math.typeset_page,  # TeX -> CommonHTML + MathML; the formula stylesheet and font preloads
    layout.zero_font_early,  # MathJax's zero-size font from the page, before the first layout
    explorer_player.insert_players,  # the explorer's web player after its cell (repaired with the page)
    text_step(layout.scroll_sidebar_early),  # the sidebar's scroll before the first paint
    text_step(accessibility.repair),  # names, unique ids, roles
    text_step(icons.drop_font_awesome_script),  # no all.min.js, one font preload
    text_step(head.one_viewport),
    text_step(head.describe_plainly),
    images.point_at_figures,  # <img> at the WebP, with its size and a link to enlarge it
    images.size_logo,  # the logo's size before it arrives
    head.title_root_redirect,  # index.html: a titled redirect
)

#: Whole-site steps, in order, once every page is written.
FINAL_STEPS: tuple[SiteStep, ...] = (
    math.prune_unused_fonts,  # MathJax fonts no written page uses
    unused.remove_unused_files,  # source maps, TrueType fonts
)


#: When each build started (``builder-inited``): the pages written after it are this build's.
_STARTED: dict[int, float] = {}


def note_start(app: Sphinx) -> None:
    """``builder-inited``: note the time, so that the chain knows which pages this build wrote."""
    _STARTED[id(app)] = time.time()


def finish_site(app: Sphinx, exception: Exception | None) -> None:
    """``build-finished``: the chain (:data:`SITE_STEPS`, :data:`PAGE_STEPS`, :data:`FINAL_STEPS`)."""
    numref_cache.forget_doctrees(app, exception)  # every reference is resolved by now
    if exception is not None or app.builder.format != "html":
        return
    site = read_site(Path(app.outdir), Path(app.doctreedir), app.config, since=_STARTED.pop(id(app), None))
    written = run(site, SITE_STEPS, PAGE_STEPS, FINAL_STEPS)
    LOGGER.info("tools.site: %d of %d pages rewritten; %s", written, len(site.pages), "; ".join(site.notes))


def setup(app: Sphinx) -> dict[str, object]:
    """Register every part of the website's extension (see the module docstring)."""
    # Configuration values and what is fixed before any page is read.
    app.add_config_value("posenc_description", "", "html")  # the root redirect's description
    app.add_config_value("posenc_student_edition", False, "env", [bool])
    app.add_config_value("posenc_hide_solutions", False, "env", [bool])
    math.register_renderer(app)
    numbering.accept_enumerator_option()
    app.add_transform(student.RemoveSolutions)
    app.add_transform(layout.WrapPrintedProse)  # printed prose wraps at the column (layout.css)
    search.setup_search(app)  # hyphenated terms kept whole; the book's scorer
    # Assets on every page (in this order in each page's head).
    accessibility.add_static_files(app)
    layout.add_static_files(app)
    # config-inited: launch buttons, then the student edition (its word is last), then the rest.
    app.connect("config-inited", launch.configure_launch_buttons, priority=100)
    app.connect("config-inited", student.configure_student_edition, priority=200)
    app.connect("config-inited", math.require_node)
    app.connect("config-inited", version.configure_version)
    # builder-inited: the notebooks are clean; the explorers' missing frames start drawing on
    # the other core. source-read: the student edition's guide.
    app.connect("builder-inited", note_start, priority=100)
    app.connect("builder-inited", guard.refuse_unclean_notebooks)
    app.connect("builder-inited", explorers.start_drawing, priority=900)
    app.connect("builder-inited", numref_cache.cache_numref_doctrees)
    app.connect("source-read", student.replace_instructor_guide)
    # env-get-updated: around Sphinx's own numbering (the toctree collector, priority 500).
    app.connect("env-get-updated", numbering.restore_sphinx_numbers, priority=100)
    app.connect("env-get-updated", numbering.number_sections, priority=600)
    app.connect("env-get-updated", numbering.renumber_exercises, priority=900)
    # html-page-context: the Binder button opens the student copy (after the theme's launch
    # buttons, priority 501); each script once (after every extension has added its own).
    app.connect("html-page-context", launch.open_student_copies, priority=600)
    app.connect("html-page-context", launch.add_kaggle_button, priority=610)  # Kaggle beside them
    app.connect("html-page-context", scripts.deduplicate_scripts, priority=900)
    # build-finished: the one post-build chain, after the theme's and the other extensions'
    # handlers (default priority 500: pydata-sphinx-theme writes pygments.css then).
    app.connect("build-finished", finish_site, priority=800)
    # env_version: raised when a transform changes what every page's doctree holds, so that
    # Sphinx reads every page again (2: printed prose marked by layout.WrapPrintedProse).
    return {"version": "1.0", "env_version": 2, "parallel_read_safe": True, "parallel_write_safe": True}
