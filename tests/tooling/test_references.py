"""References written out for JupyterLab (``tools/references.py``), on a tiny book of two
chapters whose numbers are worked out by hand, and on the working copies of the real one."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import nbformat
import pytest

from tools import references, working_copies
from tools.bibliography import citation
from tools.chapters import chapter_notebooks
from tools.references import resolved_for_jupyterlab, unnumbered_display_math

REPO = Path(__file__).resolve().parents[2]


def _md(source: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": source}


def _figure(name: str, caption: str, cell_id: str) -> dict:
    return {
        "cell_type": "code",
        "id": cell_id,
        "metadata": {"mystnb": {"figure": {"name": name, "caption": caption}}},
        "source": "plot()",
        "outputs": [],
        "execution_count": None,
    }


def _write(path: Path, cells: list[dict]) -> None:
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))


FIRST = [
    _md("# First steps\n\nIntro."),
    _md("(sec-one-a)=\n## Setting out\n\n$$\na = b\n$$ (eq-one-a)\n\n$$\nc = d\n$$\n\n$$\ne = f\n$$ (eq-one-b)"),
    _md("(sec-one-b)=\n## Going on\n\nText."),
]
SECOND = [
    _md("# Second steps\n\nAs {doc}`01_first` began, and {doc}`the notes <../book/notes>` say."),
    _md("(sec-two-a)=\n## Alpha\n\n$$ x = 1 $$\n\n$$\ny = 2\n$$ (eq-two-a)\n\nSee {eq}`eq-two-a`."),
    _figure("fig-two-a", "A curve of {cite}`smith2020`.", "abc"),
    _md(
        "## Beta\n\nSee {numref}`section %s <sec-two-a>`, {numref}`fig-two-a`, {numref}`sec-one-b`,"
        " {ref}`sec-one-a`, and chapter 01's {eq}`eq-one-b`."
    ),
    _md("As {cite:t}`smith2020` and {cite}`smith2020,jones2021` showed."),
    _md("## Exercises\n\n```python\n$$\nnot math\n$$\n```"),
]
BIB = """@article{smith2020,
  author = {Smith, Ann and Brown, Bob and Green, Cy},
  title = {A},
  year = {2020}
}
@article{jones2021,
  author = {Jones, Dee},
  title = {B},
  year = {2021}
}
"""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> references.Book:
    root = tmp_path_factory.mktemp("tiny")
    (root / "notebooks").mkdir()
    (root / "book").mkdir()
    _write(root / "notebooks" / "01_first.ipynb", FIRST)
    _write(root / "notebooks" / "02_second.ipynb", SECOND)
    (root / "book" / "notes.md").write_text("# Notes\n\nText.\n")
    (root / "refs.bib").write_text(BIB)
    (root / "_config.yml").write_text("sphinx:\n  config:\n    numfig_format:\n      figure: 'Figure %s'\n")
    return references.read_book(root / "notebooks", root / "book", root / "refs.bib", root / "_config.yml")


def _second(tiny) -> list[str]:
    out = resolved_for_jupyterlab({"cells": SECOND, "metadata": {}}, "02_second", tiny)
    return ["".join(cell["source"]) for cell in out["cells"]]


def test_headings_are_numbered_as_on_the_website(tiny):
    cells = _second(tiny)
    assert cells[0].startswith("# 2. Second steps\n")
    assert "## 2.1 Alpha" in cells[1]
    assert cells[4].startswith("## 2.2 Beta")
    assert cells[6].startswith("## Exercises")  # a closing section has no number


def test_references_across_pages_and_within_one_are_written_out(tiny):
    beta = _second(tiny)[4]
    # Sphinx's default "Section %s" for a bare numref; the config's "Figure %s"; a {ref}
    # reads the heading's title; chapter 01's eq-one-b is its second labelled equation.
    assert beta == ("## 2.2 Beta\n\nSee section 2.1, Figure 2.1, Section 1.2, Setting out, and chapter 01's (2).")


def test_a_local_equation_reference_is_left_to_jupyterlab_and_unlabelled_maths_is_unnumbered(tiny):
    alpha = _second(tiny)[1]
    assert "See {eq}`eq-two-a`." in alpha
    assert "$$\n\\begin{equation*}\n x = 1 \n\\end{equation*}\n$$" in alpha
    assert "$$\ny = 2\n$$ (eq-two-a)" in alpha


def test_a_figure_gets_its_number_and_caption_and_citations_read_as_text(tiny):
    cells = _second(tiny)
    assert cells[3] == "**Figure 2.1.** A curve of (Smith et al., 2020)."
    assert cells[5] == "As Smith et al. (2020) and (Smith et al., 2020; Jones, 2021) showed."
    out = resolved_for_jupyterlab({"cells": SECOND, "metadata": {}}, "02_second", tiny)
    assert out["cells"][3]["id"] == "abc-caption"
    assert out["cells"][2]["metadata"]["mystnb"]["figure"]["name"] == "fig-two-a"  # the code cell is kept


def test_links_to_chapters_and_pages(tiny):
    assert _second(tiny)[0].endswith("As [First steps](01_first.ipynb) began, and the notes say.")
    page = resolved_for_jupyterlab({"cells": [_md("See {doc}`../book/notes`.")], "metadata": {}}, "02_second", tiny)
    assert page["cells"][0]["source"] == "See Notes."


def test_math_inside_a_code_fence_is_left_alone(tiny):
    assert _second(tiny)[6] == "## Exercises\n\n```python\n$$\nnot math\n$$\n```"


def test_the_input_is_not_modified(tiny):
    before = json.dumps(SECOND)
    resolved_for_jupyterlab({"cells": SECOND, "metadata": {}}, "02_second", tiny)
    assert json.dumps(SECOND) == before


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$$ a $$", "$$\n\\begin{equation*}\n a \n\\end{equation*}\n$$"),
        ("  $$\n  a\n  $$", "  $$\n  \\begin{equation*}\n  a\n  \\end{equation*}\n  $$"),
        ("$$\na\n$$ (eq-x)", "$$\na\n$$ (eq-x)"),
        ("Text $$a$$ inline.", "Text $$a$$ inline."),
        ("~~~\n$$\n~~~", "~~~\n$$\n~~~"),
    ],
)
def test_unnumbered_display_math(text, expected):
    assert unnumbered_display_math(text) == expected


def test_an_unclosed_equation_is_an_error():
    with pytest.raises(ValueError, match="not closed"):
        unnumbered_display_math("$$\na = b\n")


def test_bad_references_and_input_name_what_is_wrong(tiny):
    def one(source: str) -> None:
        resolved_for_jupyterlab({"cells": [_md(source)], "metadata": {}}, "02_second", tiny)

    with pytest.raises(ValueError, match="nobody2000"):
        one("{cite}`nobody2000`")
    with pytest.raises(ValueError, match=r"cite:x"):
        citation("smith2020", "x", tiny.citations)
    with pytest.raises(ValueError, match="eq-none"):
        one("{eq}`eq-none`")
    with pytest.raises(ValueError, match="sec-none"):
        one("{numref}`sec-none`")
    with pytest.raises(ValueError, match="09_missing"):
        one("{doc}`09_missing`")
    with pytest.raises(TypeError, match="nb must be a notebook"):
        resolved_for_jupyterlab([], "02_second", tiny)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="page must be"):
        resolved_for_jupyterlab({"cells": []}, "", tiny)


def test_the_sections_left_unnumbered_are_the_websites():
    """The references' tools and the website read one set (issue 49: the two names were one
    object, so comparing them could not fail); its sections are AUTHORING.md's closing ones."""
    from tools import chapters
    from tools.course.numbers import UNNUMBERED_SECTIONS as numbered_here
    from tools.site.numbering import UNNUMBERED_SECTIONS as on_the_website

    assert numbered_here is chapters.UNNUMBERED_SECTIONS and on_the_website is chapters.UNNUMBERED_SECTIONS
    assert on_the_website == {"Exercises", "Key takeaways", "Suggested projects"}


# --------------------------------------------------------------------------- the real book

_LEFT = re.compile(r"\{(?:numref|ref|doc|cite(?::\w+)?)\}`|%s")


def test_working_copies_write_every_reference_out_and_leave_the_notebooks_alone(tmp_path):
    chapters = chapter_notebooks()
    digests = {path: hashlib.sha256(path.read_bytes()).hexdigest() for path in chapters}
    working_copies.write_copies(chapters, tmp_path, student=True)
    pages = {path.stem: path for path in chapters}
    equations = references.equation_pages(references.this_book())
    for copy in sorted(tmp_path.glob("*.ipynb")):
        nb = nbformat.read(copy, as_version=4)
        markdown = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")
        assert not _LEFT.search(markdown), f"{copy.name}: {_LEFT.search(markdown)}"
        for label in re.findall(r"\{eq\}`([^`]+)`", markdown):  # only this chapter's are left as roles
            assert equations[label] == copy.stem, (copy.name, label)
        chapter = int(copy.name[:2])
        assert markdown.startswith(f"# {chapter}. "), copy.name
        captions = re.findall(rf"^\*\*Figure {chapter}\.(\d+)\.\*\*", markdown, re.MULTILINE)
        assert captions == [str(k) for k in range(1, len(captions) + 1)] and captions, copy.name
        assert copy.stem in pages
    assert {path: hashlib.sha256(path.read_bytes()).hexdigest() for path in chapters} == digests


def test_maths_inside_a_directive_is_still_maths_but_not_inside_code():
    assert unnumbered_display_math("```{prf:proof}\n$$\na\n$$\n```") == (
        "```{prf:proof}\n$$\n\\begin{equation*}\na\n\\end{equation*}\n$$\n```"
    )
    assert "equation*" in unnumbered_display_math("````{prf:proof}\n$$\na\n$$\n````")
    for code in ("```{code-cell} ipython3\n$$\na\n$$\n```", "```python\n$$\na\n$$\n```", "````\n$$\n````"):
        assert unnumbered_display_math(code) == code
