"""The website's numbers hold together, on every chapter (read from the built site's HTML).

Sphinx numbers the book (``_toc.yml``'s ``numbered: 2`` parts, ``numfig``, and
``tools/site/numbering.py``); these tests pin no heading or caption text, only
invariants that any correct numbering keeps, so rewording a caption or adding a
section changes nothing here:

* a chapter page ``notebooks/NN_*.html`` has one numbered title, ``NN``; its ``##``
  sections are numbered ``NN.1``, ``NN.2`` ... with no gap or repeat, except the
  closing sections (``UNNUMBERED_SECTIONS`` of ``tools/site/numbering.py``: the anatomy's
  "Exercises", "Key takeaways", "Suggested projects"), which have no number and come
  after every numbered one; deeper headings have no number;
* its figures are ``Figure NN.1``, ``NN.2`` ..., its exercises ``Exercise NN.1`` ...,
  each shown once; its display equations (1), (2) ... (``math_numfig`` is off);
* a page that is not a chapter shows no section or figure number;
* the text of every ``{numref}`` link is its target's number (with the words of its
  format around it), and every ``{eq}`` link reads ``(n)`` for its equation's ``n``.

The functions below read a page's HTML; ``test_the_invariants_catch_*`` show that each
invariant fails on a hand-written page that breaks it. No browser is needed.
"""

from __future__ import annotations

import html
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tools.chapters import UNNUMBERED_SECTIONS, chapter_notebooks, chapter_number

REPO = Path(__file__).resolve().parents[2]
CHAPTERS = [path.stem for path in chapter_notebooks()]

_ARTICLE = re.compile(r'<article class="bd-article"[^>]*>(?P<body>.*)</article>', re.S)
_HEADING = re.compile(r"<h(?P<level>[1-6])>(?P<inner>.*?)</h(?P=level)>", re.S)
_SECTION_NUMBER = re.compile(r'^\s*<span class="section-number">(?P<number>[\d.]+?)\.? </span>')
_SECTION_START = re.compile(
    r'<section id="(?P<id>[^"]+)">\s*(?P<spans>(?:<span id="[^"]+"></span>\s*)*)<h[1-6]>(?P<inner>.*?)</h[1-6]>', re.S
)
_SPAN_ID = re.compile(r'<span id="(?P<id>[^"]+)"></span>')
_CAPTION_NUMBER = re.compile(r'<span class="caption-number">(?P<kind>[A-Z][a-z]+) (?P<number>[\d.]+) </span>')
_FIGURE = re.compile(r'<figure\b[^>]*\bid="(?P<id>[^"]+)"[^>]*>(?P<body>.*?)</figure>', re.S)
_EQUATION = re.compile(r'<div class="math[^"]*" id="(?P<id>[^"]+)">\s*<span class="eqno">\((?P<number>\d+)\)')
_LINK = re.compile(r'<a class="reference internal" href="(?P<href>[^"]*)"[^>]*>(?P<inner>.*?)</a>', re.S)
_NUMBER = re.compile(r"\d+(?:\.\d+)*")


def _text(fragment: str) -> str:
    """Visible text of an HTML fragment: tags gone, entities decoded, headerlink's '#' dropped."""
    fragment = re.sub(r'<a class="headerlink".*?</a>', "", fragment, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


@dataclass
class Page:
    """The numbers one built page shows, in page order."""

    headings: list[tuple[int, str | None, str]] = field(default_factory=list)  # (level, number, title)
    captions: dict[str, list[str]] = field(default_factory=dict)  # "Figure" -> ["4.1", ...]
    equations: list[str] = field(default_factory=list)
    targets: dict[str, str | None] = field(default_factory=dict)  # id -> the number a reference shows
    links: list[tuple[str, str, str]] = field(default_factory=list)  # ("numref" | "eq", href, text)


def read_page(page: str) -> Page:
    """The numbers of a page's article (the theme's sidebars, which repeat them, left out)."""
    found = _ARTICLE.search(page)
    body = found["body"] if found else page
    out = Page()
    for heading in _HEADING.finditer(body):
        number = _SECTION_NUMBER.match(heading["inner"])
        title = _text(heading["inner"][number.end() if number else 0 :])
        out.headings.append((int(heading["level"]), number["number"] if number else None, title))
    for caption in _CAPTION_NUMBER.finditer(body):
        out.captions.setdefault(caption["kind"], []).append(caption["number"])
    for section in _SECTION_START.finditer(body):
        number = _SECTION_NUMBER.match(section["inner"])
        for name in [section["id"], *_SPAN_ID.findall(section["spans"])]:
            out.targets[name] = number["number"] if number else None
    for figure in _FIGURE.finditer(body):
        caption = _CAPTION_NUMBER.search(figure["body"])
        out.targets[figure["id"]] = caption["number"] if caption else None
    for equation in _EQUATION.finditer(body):
        out.equations.append(equation["number"])
        out.targets[equation["id"]] = equation["number"]
    for link in _LINK.finditer(body):
        kind = "numref" if 'class="std std-numref"' in link["inner"] else "eq" if "#equation-" in link["href"] else ""
        if kind:
            out.links.append((kind, link["href"], _text(link["inner"])))
    return out


def _runs(numbers: list[str], prefix: str) -> list[str]:
    """What is wrong with ``numbers`` as ``prefix1``, ``prefix2`` ... (prefix "4." or "")."""
    expected = [f"{prefix}{k}" for k in range(1, len(numbers) + 1)]
    return [] if numbers == expected else [f"{numbers} where {expected} was due"]


def chapter_problems(chapter: int, page: Page) -> list[str]:
    """Every way the numbers of chapter ``chapter``'s page break the invariants (empty: none)."""
    problems = []
    titles = [(number, title) for level, number, title in page.headings if level == 1]
    if [number for number, _ in titles] != [str(chapter)]:
        problems.append(f"chapter titles {titles}, where one numbered {chapter} was due")
    sections = [(number, title) for level, number, title in page.headings if level == 2]
    for number, title in sections:
        if (number is None) != (title in UNNUMBERED_SECTIONS):
            state = "has no number" if number is None else f"is numbered {number}"
            problems.append(f"section {title!r} {state}: only the closing sections are unnumbered")
    numbered = [number for number, _ in sections if number is not None]
    problems += [f"sections: {problem}" for problem in _runs(numbered, f"{chapter}.")]
    closing = [index for index, (_, title) in enumerate(sections) if title in UNNUMBERED_SECTIONS]
    last_numbered = max((index for index, (number, _) in enumerate(sections) if number is not None), default=-1)
    if closing and min(closing) < last_numbered:
        problems.append(f"closing section {sections[min(closing)][1]!r} comes before numbered sections")
    deeper = [(number, title) for level, number, title in page.headings if level > 2 and number is not None]
    if deeper:
        problems.append(f"headings below ## are numbered: {deeper}")
    for kind, numbers in page.captions.items():
        problems += [f"{kind.lower()}s: {problem}" for problem in _runs(numbers, f"{chapter}.")]
    problems += [f"equations: {problem}" for problem in _runs(page.equations, "")]
    return problems


def other_page_problems(page: Page) -> list[str]:
    """A page that is not a chapter shows no section or figure number."""
    numbered = [(number, title) for _, number, title in page.headings if number is not None]
    problems = [f"numbered headings on a page that is no chapter: {numbered}"] if numbered else []
    if page.captions.get("Figure"):
        problems.append(f"numbered figures on a page that is no chapter: {page.captions['Figure']}")
    return problems


def reference_problems(pages: dict[str, Page]) -> list[str]:
    """Every ``{numref}`` or ``{eq}`` link of ``pages`` (keyed by path in the site) whose text
    is not its target's number: the first number a numref's text shows, "(n)" for an eq."""
    problems = []
    for name, page in pages.items():
        for kind, href, text in page.links:
            file, _, anchor = href.partition("#")
            target_page = posixpath.normpath(posixpath.join(posixpath.dirname(name), file)) if file else name
            if target_page not in pages or anchor not in pages[target_page].targets:
                problems.append(f"{name}: {kind} link {href!r} ({text!r}) points at no numbered target")
                continue
            number = pages[target_page].targets[anchor]
            shown = _NUMBER.search(text) if kind == "numref" else re.fullmatch(r"\((\d+)\)", text)
            if number is None or shown is None or shown.group(0 if kind == "numref" else 1) != number:
                problems.append(f"{name}: {kind} link {href!r} reads {text!r}, its target is numbered {number}")
    return problems


# --------------------------------------------------------------------------- the built site


@pytest.fixture(scope="module")
def site_pages(site_dir: Path) -> dict[str, Page]:
    return {
        path.relative_to(site_dir).as_posix(): read_page(path.read_text(encoding="utf-8"))
        for path in sorted(site_dir.rglob("*.html"))
        if not any(part.startswith("_") for part in path.relative_to(site_dir).parts)
    }


@pytest.mark.parametrize("stem", CHAPTERS)
def test_every_chapter_is_numbered_by_its_file_name(site_pages, stem):
    name = f"notebooks/{stem}.html"
    assert name in site_pages, f"{stem} is not in the built site"
    page = site_pages[name]
    assert chapter_problems(int(stem[:2]), page) == []
    numbered = [number for _, number, _ in page.headings if number is not None]
    assert len(numbered) >= 2 and page.captions.get("Figure"), "a chapter with no numbered section or figure"
    assert [title for level, _, title in page.headings if level == 2 and title in UNNUMBERED_SECTIONS]


def test_pages_that_are_not_chapters_show_no_number(site_pages):
    others = {name: page for name, page in site_pages.items() if chapter_number(name.removesuffix(".html")) is None}
    assert "book/notation.html" in others and len(others) < len(site_pages)
    assert {name: other_page_problems(page) for name, page in others.items() if other_page_problems(page)} == {}


def test_every_numref_and_eq_link_reads_its_targets_number(site_pages):
    assert reference_problems(site_pages) == []
    links = [link for page in site_pages.values() for link in page.links]
    assert sum(kind == "numref" for kind, _, _ in links) > 100 and sum(kind == "eq" for kind, _, _ in links) > 14
    assert any(href.split("#")[0] for kind, href, _ in links if kind == "eq"), "no {eq} across pages was checked"


# --------------------------------------------------------------------------- on hand-written pages


def _chapter(sections: str, figures: str = "", article: bool = True) -> str:
    """A chapter 4 page as Sphinx writes it, with the given section and caption HTML."""
    body = (
        '<section id="title"><h1><span class="section-number">4. </span>Title'
        '<a class="headerlink" href="#title">#</a></h1>'
        f"{sections}{figures}</section>"
    )
    sidebar = '<nav><h2><span class="section-number">9.9. </span>Sidebar</h2></nav>'
    return f'{sidebar}<article class="bd-article" role="main">{body}</article>' if article else body


def _h2(number: str | None, title: str, ident: str = "") -> str:
    shown = f'<span class="section-number">{number}. </span>' if number else ""
    return (
        f'<section id="{ident or title.lower()}"><h2>{shown}{title}<a class="headerlink" href="#x">#</a></h2></section>'
    )


def _figure(number: str, ident: str = "fig") -> str:
    return (
        f'<figure class="align-default" id="{ident}"><img src="a.png"/><figcaption><p>'
        f'<span class="caption-number">Figure {number} </span><span class="caption-text">A.</span></p>'
        "</figcaption></figure>"
    )


GOOD = _chapter(
    _h2("4.1", "One", "one") + _h2("4.2", "Two", "two") + _h2(None, "Exercises") + _h2(None, "Key takeaways"),
    _figure("4.1", "fig-a") + _figure("4.2", "fig-b"),
)


def test_a_well_numbered_page_is_read_and_passes():
    page = read_page(GOOD)
    assert page.headings == [
        (1, "4", "Title"),
        (2, "4.1", "One"),
        (2, "4.2", "Two"),
        (2, None, "Exercises"),
        (2, None, "Key takeaways"),
    ]  # the sidebar's "9.9" is outside the article
    assert page.captions == {"Figure": ["4.1", "4.2"]}
    assert page.targets == {
        "title": "4",
        "one": "4.1",
        "two": "4.2",
        "exercises": None,
        "key takeaways": None,
        "fig-a": "4.1",
        "fig-b": "4.2",
    }
    assert chapter_problems(4, page) == []


@pytest.mark.parametrize(
    ("html_page", "problem"),
    [
        (_chapter(_h2("4.1", "One") + _h2("4.3", "Three")), "sections: ['4.1', '4.3'] where ['4.1', '4.2']"),
        (_chapter(_h2("4.1", "One") + _h2("5.2", "Two")), "sections: ['4.1', '5.2'] where ['4.1', '4.2']"),
        (_chapter(_h2("4.1", "One") + _h2("4.1", "One")), "sections: ['4.1', '4.1'] where ['4.1', '4.2']"),
        (_chapter(_h2("4.2", "Two")), "sections: ['4.2'] where ['4.1'] was due"),
        (_chapter(_h2("4.1", "One") + _h2("4.2", "Exercises")), "section 'Exercises' is numbered 4.2"),
        (_chapter(_h2("4.1", "One") + _h2(None, "Two")), "section 'Two' has no number"),
        (_chapter(_h2(None, "Key takeaways") + _h2("4.1", "One")), "'Key takeaways' comes before numbered"),
        (_chapter(_h2("4.1", "One"), _figure("4.1") + _figure("4.3")), "figures: ['4.1', '4.3'] where"),
        (_chapter(_h2("4.1", "One"), _figure("1") + _figure("2")), "figures: ['1', '2'] where ['4.1', '4.2']"),
        (_chapter(_h2("4.1", "One"), _figure("4.1") + _figure("4.1")), "figures: ['4.1', '4.1'] where"),
        (GOOD.replace("4. </span>Title", "3. </span>Title"), "chapter titles [('3', 'Title')]"),
        (
            _chapter(_h2("4.1", "One") + '<h3><span class="section-number">4.1.1. </span>Deep</h3>'),
            "headings below ## are numbered: [('4.1.1', 'Deep')]",
        ),
    ],
)
def test_the_invariants_catch_a_broken_page(html_page, problem):
    problems = chapter_problems(4, read_page(html_page))
    assert any(problem in found for found in problems), problems


def _linking(*links: str) -> str:
    return _chapter(_h2("4.1", "One", "one") + "<p>" + "".join(links) + "</p>")


def test_the_invariants_catch_a_reference_that_reads_another_number():
    other = _chapter(
        _h2("4.1", "One", "one")
        + '<div class="math notranslate nohighlight" id="equation-e"><span class="eqno">(1)<a></a></span></div>',
        _figure("4.1", "fig-a"),
    )
    good = _linking(
        '<a class="reference internal" href="#one"><span class="std std-numref">Section 4.1</span></a>',
        '<a class="reference internal" href="b.html#fig-a"><span class="std std-numref">Figure 4.1</span></a>',
        '<a class="reference internal" href="../notebooks/b.html#equation-e">(1)</a>',
    )
    pages = {"notebooks/a.html": read_page(good), "notebooks/b.html": read_page(other)}
    assert [kind for kind, _, _ in pages["notebooks/a.html"].links] == ["numref", "numref", "eq"]
    assert reference_problems(pages) == []
    for wrong, expected in [
        (good.replace("Section 4.1", "Section 4.2"), "reads 'Section 4.2', its target is numbered 4.1"),
        (good.replace("Figure 4.1", "Figure 4"), "reads 'Figure 4', its target is numbered 4.1"),
        (good.replace(">(1)<", ">(2)<"), "reads '(2)', its target is numbered 1"),
        (good.replace("#fig-a", "#fig-gone"), "'b.html#fig-gone' ('Figure 4.1') points at no numbered target"),
    ]:
        problems = reference_problems({**pages, "notebooks/a.html": read_page(wrong)})
        assert len(problems) == 1 and expected in problems[0], problems


def test_a_page_that_is_no_chapter_may_show_no_number():
    assert other_page_problems(read_page("<h1>Notation</h1><h2>Symbols</h2>")) == []
    assert other_page_problems(read_page(GOOD)) == [
        "numbered headings on a page that is no chapter: [('4', 'Title'), ('4.1', 'One'), ('4.2', 'Two')]",
        "numbered figures on a page that is no chapter: ['4.1', '4.2']",
    ]
