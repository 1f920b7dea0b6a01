"""The numbers Sphinx gives the website, written into the course's plain notebooks
(tools/course/numbers.py, markdown.py, nbgrader.py), on notebooks written by hand."""

from __future__ import annotations

import json

import pytest

from tools import course
from tools.course.numbers import UNNUMBERED_SECTIONS, Target, book_targets, numfig_formats, page_numbers

FORMATS = {"figure": "Figure %s", "section": "Section %s"}


def _md(text, **meta):
    return {"cell_type": "markdown", "metadata": meta, "source": text}


def _figure(caption, name, cell_id="code-1"):
    mystnb = {"figure": {"caption": caption, "name": name}, "image": {"alt": "A picture."}}
    return {
        "cell_type": "code",
        "execution_count": 1,
        "id": cell_id,
        "metadata": {"mystnb": mystnb, "tags": ["x"]},
        "outputs": [{"output_type": "stream", "name": "stdout", "text": "drawn\n"}],
        "source": "plt.show()",
    }


# A chapter as Sphinx numbers it: no typed number anywhere.
SPHINX = [
    _md("# Sine and cosine pairs\n\nWhy.\n\n**You will learn**\n\n- a"),
    _md("(pairs-formula)=\n## The formula\n\nText.\n\n### A worked example\n\nMore."),
    _figure("The first pair, as {numref}`section %s <pairs-table>` explains.", "fig-pairs-first"),
    _md("(pairs-table)=\n\n## The table\n\n```python\n## not a heading\n```"),
    _figure("The table.", "fig-pairs-table", cell_id="code-2"),
    _md(
        "{numref}`fig-pairs-table` and {numref}`Figure %s <fig-pairs-first>` show it; "
        "{numref}`section %s <pairs-formula>` has the formula, {ref}`pairs-table` the table, "
        "{numref}`Fig. {number}: {name} <fig-pairs-table>` the picture, {ref}`that part <pairs-formula>` "
        "the rest, {numref}`section %s <rope-where>` comes later and {ref}`rope-where` too."
    ),
    _md("(pairs-exercises)=\n## Exercises\n\n## Key takeaways\n\n- b\n\n## Suggested projects"),
]
OTHER_CHAPTER = {"rope-where": Target("rope-where", "section", "7.1", "Where RoPE sits", "07_rope")}


def test_a_chapter_numbers_its_sections_and_figures_in_order():
    page = page_numbers(SPHINX, 4, "04_pairs")
    assert page.targets == {
        "pairs-formula": Target("pairs-formula", "section", "4.1", "The formula", "04_pairs"),
        "fig-pairs-first": Target(
            "fig-pairs-first",
            "figure",
            "4.1",
            "The first pair, as {numref}`section %s <pairs-table>` explains.",
            "04_pairs",
        ),
        "pairs-table": Target("pairs-table", "section", "4.2", "The table", "04_pairs"),
        "fig-pairs-table": Target("fig-pairs-table", "figure", "4.2", "The table.", "04_pairs"),
        "pairs-exercises": Target("pairs-exercises", "section", None, "Exercises", "04_pairs"),
    }
    assert page.sources == {
        0: "# 4. Sine and cosine pairs\n\nWhy.\n\n**You will learn**\n\n- a",
        1: "## 4.1 The formula\n\nText.\n\n### A worked example\n\nMore.",
        3: "\n## 4.2 The table\n\n```python\n## not a heading\n```",
        6: "## Exercises\n\n## Key takeaways\n\n- b\n\n## Suggested projects",
    }
    assert sorted(page.figures) == [2, 4]
    assert page_numbers(SPHINX, None).sources == {  # a page that is not a chapter: labels go, no numbers
        1: "## The formula\n\nText.\n\n### A worked example\n\nMore.",
        3: "\n## The table\n\n```python\n## not a heading\n```",
        6: "## Exercises\n\n## Key takeaways\n\n- b\n\n## Suggested projects",
    }


def test_references_write_the_numbers_and_titles_the_website_shows():
    targets = {**page_numbers(SPHINX, 4).targets, **OTHER_CHAPTER}
    text = course.plain_markdown(SPHINX[5]["source"], {}, {}, {}, targets, FORMATS)
    assert text == (
        "Figure 4.2 and Figure 4.1 show it; section 4.1 has the formula, The table the table, "
        "Fig. 4.2: The table. the picture, that part the rest, section 7.1 comes later and Where RoPE sits too."
    )
    with pytest.raises(ValueError, match="no heading or figure of the book has this label"):
        course.plain_markdown("{numref}`fig-gone`", {}, {}, {}, targets, FORMATS)
    with pytest.raises(ValueError, match="gives this section no number"):
        course.plain_markdown("{numref}`pairs-exercises`", {}, {}, {}, targets, FORMATS)
    assert course.plain_markdown("{numref}`pairs-formula`", {}, {}, {}, targets, FORMATS) == "Section 4.1"


def test_the_course_notebook_shows_the_numbers_of_the_website():
    out = course.course_notebook({"cells": SPHINX, "metadata": {}}, 4, targets=OTHER_CHAPTER, formats=FORMATS)
    sources = ["".join(cell["source"]) for cell in out["cells"]]
    assert sources == [
        "# 4. Sine and cosine pairs\n\nWhy.\n\n**You will learn**\n\n- a\n",
        "## 4.1 The formula\n\nText.\n\n### A worked example\n\nMore.\n",
        "plt.show()",
        "**Figure 4.1.** The first pair, as section 4.2 explains.\n",
        "## 4.2 The table\n\n```python\n## not a heading\n```\n",
        "plt.show()",
        "**Figure 4.2.** The table.\n",
        "Figure 4.2 and Figure 4.1 show it; section 4.1 has the formula, The table the table, "
        "Fig. 4.2: The table. the picture, that part the rest, section 7.1 comes later and Where RoPE sits too.\n",
        "## Exercises\n\n## Key takeaways\n\n- b\n\n## Suggested projects\n",
    ]
    figure = out["cells"][2]
    assert figure["metadata"] == {"mystnb": {"image": {"alt": "A picture."}}, "tags": ["x"]}
    assert figure["outputs"] == [] and out["cells"][3]["id"] == "code-1-caption"
    assert out["cells"][3]["metadata"] == {} and out["cells"][3]["cell_type"] == "markdown"
    assert SPHINX[2]["metadata"]["mystnb"]["figure"]["name"] == "fig-pairs-first"  # the book's is left alone


def test_labels_of_other_chapters_and_pages_are_found(tmp_path):
    notebooks, pages = tmp_path / "notebooks", tmp_path / "book"
    notebooks.mkdir()
    pages.mkdir()
    (notebooks / "04_pairs.ipynb").write_text(json.dumps({"cells": SPHINX}))
    (notebooks / "07_rope.ipynb").write_text(
        json.dumps({"cells": [_md("# RoPE\n\n(rope-where)=\n## Where RoPE sits")]})
    )
    (pages / "notation.md").write_text("# Notation\n\n(notation-symbols)=\n## Symbols\n")
    found = book_targets(notebooks, pages)
    assert found["rope-where"] == OTHER_CHAPTER["rope-where"]
    assert found["notation-symbols"] == Target("notation-symbols", "section", None, "Symbols", "notation")
    assert found["fig-pairs-table"].number == "4.2"
    assert "rope-where" not in book_targets(notebooks, pages, exclude_chapter=7)


def test_numref_formats_come_from_the_book_configuration(tmp_path):
    config = tmp_path / "_config.yml"
    config.write_text("sphinx:\n  config:\n    numfig_format:\n      figure: 'Figure %s'\n")
    assert numfig_formats(config)["figure"] == "Figure %s"
    assert numfig_formats(config)["section"] == "Section %s"  # Sphinx's own
    config.write_text("title: x\n")
    assert numfig_formats(config)["figure"] == "Fig. %s"
    assert numfig_formats()["figure"] == "Figure %s"  # the book's _config.yml


def test_the_closing_sections_are_the_ones_the_website_leaves_unnumbered():
    """One set, in tools/chapters.py, read by both (issue 49: this compared the set with
    itself); its sections are AUTHORING.md's closing ones, written out here."""
    from tools import chapters
    from tools.site.numbering import UNNUMBERED_SECTIONS as WEBSITE

    assert WEBSITE is chapters.UNNUMBERED_SECTIONS and UNNUMBERED_SECTIONS is chapters.UNNUMBERED_SECTIONS
    assert {"Exercises", "Key takeaways", "Suggested projects"} == UNNUMBERED_SECTIONS
