"""tools/site: one extension, one build-finished handler, each page read and written once."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

import tools.site as site_extension
from tools.site import accessibility, head, icons, images, layout, math, numbering, pipeline


class _App:
    """What setup() calls on Sphinx's application, recorded."""

    def __init__(self) -> None:
        self.config = SimpleNamespace(html_static_path=[])
        self.connected: list[tuple[str, object, int]] = []
        self.css: list[str] = []
        self.js: list[tuple[str | None, dict]] = []
        self.config_values: list[str] = []
        self.math_renderers: list[str] = []

    def connect(self, event, handler, priority=500):
        self.connected.append((event, handler, priority))

    def add_config_value(self, name, default, rebuild, types=()):
        self.config_values.append(name)

    def add_css_file(self, filename, **attributes):
        self.css.append(filename)

    def add_js_file(self, filename, **attributes):
        self.js.append((filename, attributes))

    def add_html_math_renderer(self, name, inline, block):
        self.math_renderers.append(name)

    def add_transform(self, transform):
        pass

    def add_search_language(self, language):
        self.search_languages = [*getattr(self, "search_languages", []), language]


def test_setup_registers_one_build_finished_handler_and_the_config_time_parts():
    app = _App()
    metadata = site_extension.setup(app)  # type: ignore[arg-type]
    events = [event for event, _, _ in app.connected]
    assert events.count("build-finished") == 1
    assert ("build-finished", site_extension.finish_site, 800) in app.connected  # after the theme's (500)
    assert sorted(set(events)) == [
        "build-finished",
        "builder-inited",
        "config-inited",
        "env-get-updated",
        "html-page-context",
        "source-read",  # the student edition reads a stub for the instructor guide
    ]
    # launch buttons before the student edition, which has the last word on them
    config_inited = sorted(
        ((handler.__name__, priority) for event, handler, priority in app.connected if event == "config-inited"),
        key=lambda item: item[1],  # Sphinx runs the handlers of an event by priority
    )
    assert config_inited[:2] == [("configure_launch_buttons", 100), ("configure_student_edition", 200)]
    assert ("use_scorer", 500) in config_inited  # the search scorer (tools/site/search.py)
    assert [language.__name__ for language in app.search_languages] == ["CompoundEnglish"]
    # the exercise numbers are put back before Sphinx numbers (500) and renumbered after it
    numbering_hooks = [(h, p) for e, h, p in app.connected if e == "env-get-updated"]
    assert numbering_hooks == [
        (numbering.restore_sphinx_numbers, 100),
        (numbering.number_sections, 600),
        (numbering.renumber_exercises, 900),
    ]
    assert app.css == ["accessibility.css", "layout.css", "print-light.css"]  # no MathJax 2 stylesheet
    assert (None, {"body": layout.EARLY_THEME_SCRIPT, "priority": 100}) in app.js
    assert app.math_renderers == ["prerendered"]
    assert str(Path("tools/site/static").resolve()) in app.config.html_static_path
    assert metadata["parallel_read_safe"] is True


def test_the_chain_keeps_the_order_its_steps_need():
    site_steps, page_steps = list(site_extension.SITE_STEPS), [s.__name__ for s in site_extension.PAGE_STEPS]
    # the print stylesheet reads every stylesheet after the formulas' is written, and
    # before proof.css is changed
    assert site_steps.index(math.typeset_formulas) < site_steps.index(layout.write_print_stylesheet)
    assert site_steps.index(layout.write_print_stylesheet) < site_steps.index(accessibility.select_proofs_by_class)
    # formulas first (the other steps see their final HTML), the root redirect last
    assert page_steps[0] == math.typeset_page.__name__
    assert page_steps[-1] == head.title_root_redirect.__name__
    assert page_steps.index(icons.drop_font_awesome_script.__name__) < page_steps.index(head.one_viewport.__name__)
    assert images.point_at_figures in site_extension.PAGE_STEPS
    assert site_extension.FINAL_STEPS[0] is math.prune_unused_fonts  # it reads the written pages


def test_each_page_is_read_once_and_written_once_only_if_it_changed(tmp_path, monkeypatch):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "index.html").write_text("<p>a</p>")
    (tmp_path / "notebooks" / "ch.html").write_text("<p>b</p>")
    (tmp_path / "same.html").write_text("<p>unchanged</p>")
    calls: list[str] = []
    writes: list[str] = []
    reads: list[str] = []
    real_write, real_read = Path.write_text, Path.read_text

    def counted_write(path, text, *args, **kwargs):
        writes.append(path.name)
        return real_write(path, text, *args, **kwargs)

    def counted_read(path, *args, **kwargs):
        reads.append(path.name)
        return real_read(path, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", counted_write)
    monkeypatch.setattr(Path, "read_text", counted_read)

    def site_step(site: pipeline.Site) -> None:
        calls.append("site")
        site.notes.append("seen " + ",".join(sorted(p.name for p in site.pages)))

    def upper(text: str, page: pipeline.Page) -> str:
        calls.append(f"upper {page.path.name}")
        return text if "unchanged" in text else text.upper()

    def prefix(text: str, page: pipeline.Page) -> str:
        calls.append(f"prefix {page.path.name}")
        return text if "unchanged" in text else f"[{page.static_prefix}]{text}"

    def final_step(site: pipeline.Site) -> None:
        calls.append("final")
        site.notes.append(site.pages[tmp_path / "index.html"])

    site = pipeline.read_site(tmp_path, tmp_path / "doctrees", None)
    assert pipeline.run(site, [site_step], [upper, pipeline.text_step(str.strip)], [final_step]) == 2
    assert sorted(reads) == ["ch.html", "index.html", "same.html"]  # once each
    assert sorted(writes) == ["ch.html", "index.html"]  # once each; the unchanged page not at all
    assert calls[0] == "site" and calls[-1] == "final"
    assert calls[1:4] == ["upper index.html", "upper ch.html", "upper same.html"]  # page by page, in path order
    assert site.notes == ["seen ch.html,index.html,same.html", "<P>A</P>"]  # the final step sees the new text
    site = pipeline.read_site(tmp_path, tmp_path / "doctrees", None)
    pipeline.run(site, [], [prefix], [])
    assert real_read(tmp_path / "notebooks" / "ch.html") == "[../_static]<P>B</P>"
    assert real_read(tmp_path / "index.html") == "[_static]<P>A</P>"


def test_the_root_redirect_gets_a_title_and_other_pages_are_left_alone(tmp_path):
    config = SimpleNamespace(html_title="Positional <Encoding>", project="p", posenc_description="About it")
    site = pipeline.Site(outdir=tmp_path, doctreedir=tmp_path, config=config, pages={})
    bare = '<html><head><meta http-equiv="Refresh" content="0; url=book/intro.html" /></head></html>'
    root = pipeline.Page(tmp_path / "index.html", site)
    out = head.title_root_redirect(bare, root)
    assert out == head.redirect_page("book/intro.html", "Positional <Encoding>", "About it")
    assert "<title>Positional &lt;Encoding&gt;</title>" in out
    assert head.title_root_redirect(out, root) == out  # titled already: unchanged
    assert head.title_root_redirect(bare, pipeline.Page(tmp_path / "book" / "index.html", site)) == bare


def test_exercises_are_numbered_by_chapter_in_their_order():
    # Sphinx numbered the book's exercises 11, 12, 14, 13 (ids in page order b, a, d, c)
    book_wide = {"b": (11,), "a": (12,), "d": (14,), "c": (13,)}
    assert numbering.chapter_numbers(book_wide, 4) == {"b": (4, 1), "a": (4, 2), "c": (4, 3), "d": (4, 4)}
    assert numbering.chapter_numbers({}, 4) == {}
    assert numbering.chapter_number("notebooks/04_sine_cosine_pairs") == 4
    assert numbering.chapter_number("book/intro") is None


def test_a_rebuild_sees_the_numbers_sphinx_assigned_so_no_page_is_rewritten_for_them():
    """Sphinx rewrites every page whose numbers differ from the previous build's: the
    environment must hold Sphinx's numbers when Sphinx compares, and ours after."""

    def sphinx_numbering():  # what the toctree collector assigns, every build
        return {"notebooks/04_x": {"exercise": {"b": (11,), "a": (12,)}, "figure": {"f": (4, 1)}}, "book/intro": {}}

    env = SimpleNamespace(toc_fignumbers=sphinx_numbering())
    assert numbering.renumber_exercises(None, env) == []  # type: ignore[arg-type]
    assert env.toc_fignumbers["notebooks/04_x"]["exercise"] == {"b": (4, 1), "a": (4, 2)}
    # the next build: numbers put back before Sphinx compares, so nothing differs
    assert numbering.restore_sphinx_numbers(None, env) == []  # type: ignore[arg-type]
    assert env.toc_fignumbers == sphinx_numbering()
    numbering.renumber_exercises(None, env)  # type: ignore[arg-type]
    assert env.toc_fignumbers["notebooks/04_x"]["exercise"] == {"b": (4, 1), "a": (4, 2)}


def test_a_chapter_out_of_place_stops_the_build():
    from docutils import nodes
    from sphinx.errors import ExtensionError

    def toc(*titles: str) -> nodes.bullet_list:
        tree = nodes.bullet_list()
        for title in titles:
            tree += nodes.reference(title, title, anchorname=f"#{title.lower()}", secnumber=(4, 1))
        return tree

    env = SimpleNamespace(
        toc_secnumbers={"notebooks/04_x": {"": (4,), "#formula": (4, 1), "#exercises": (4, 2)}},
        tocs={"notebooks/04_x": toc("Formula", "Exercises")},
    )
    assert numbering.number_sections(None, env) == []  # type: ignore[arg-type]
    assert env.toc_secnumbers["notebooks/04_x"] == {"": (4,), "#formula": (4, 1), "#exercises": ()}
    env.toc_secnumbers = {"notebooks/04_x": {"": (5,)}}
    with pytest.raises(ExtensionError, match="numbered 5 by its place in _toc.yml, but its file name says 4"):
        numbering.number_sections(None, env)  # type: ignore[arg-type]
    env.toc_secnumbers = {"book/intro": {"": (1,)}}
    with pytest.raises(ExtensionError, match="book/intro is numbered by _toc.yml but is not a chapter page"):
        numbering.number_sections(None, env)  # type: ignore[arg-type]
