"""MyST as plain Markdown, for the course notebooks (Colab, classic Jupyter).

The website renders MyST; a course notebook must read cleanly without it. So the
exercise directives become headings numbered by chapter ("### Exercise 4.2"),
labelled equations get their number as a ``\\tag`` and references to them that
number, sphinx-proof statements become bold headings ("**Theorem 1 (title).**"),
citations read "(Vaswani et al., 2017)" (``{cite:t}``: "Vaswani et al. (2017)"; written by
:mod:`tools.bibliography`, as JupyterLab's working copies write them), links to other
chapters point at their notebooks, and ``{numref}`` / ``{ref}`` write the number or the title the website
shows ("Figure 4.4", "section 4.6"; :mod:`tools.course.numbers`). Headings and
figure captions get their numbers in :func:`tools.course.nbgrader.course_notebook`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from tools.bibliography import write_citations
from tools.course.common import is_chapter_name
from tools.course.myst import (
    EQUATION_LABEL,
    EXERCISE_DIRECTIVE,
    EXERCISE_END,
    EXERCISE_START,
    PRF_DIRECTIVE,
    options,
    strip_option_lines,
)
from tools.course.numbers import SPHINX_NUMFIG_FORMAT, Target

_EQ_ROLE = re.compile(r"\{eq\}`(?P<label>[^`]+)`")
_TITLED = r"`(?:(?P<text>[^`<]*?)\s*<(?P<target>[^`>]+)>|(?P<bare>[^`]+))`"
_DOC_ROLE = re.compile(r"\{doc\}" + _TITLED)
_PRF_ROLE = re.compile(r"\{prf:ref\}" + _TITLED)
_NUMREF_ROLE = re.compile(r"\{numref\}" + _TITLED)
_REF_ROLE = re.compile(r"\{ref\}" + _TITLED)


def plain_exercises(text: str, numbers: Mapping[str, str]) -> str:
    """Exercise directives as plain Markdown: a numbered heading, then the text."""

    def heading(label: str | None) -> str:
        number = numbers.get(label or "", "")
        return f"### Exercise {number}".rstrip() + "\n\n"

    text = EXERCISE_START.sub(lambda m: heading(options(m.group("options")).get("label")), text)
    text = EXERCISE_END.sub("", text)
    return EXERCISE_DIRECTIVE.sub(
        lambda m: heading(options(m.group("body")).get("label")) + strip_option_lines(m.group("body")).strip() + "\n",
        text,
    )


def _plain_statement(match: re.Match[str], statements: Mapping[str, str]) -> str:
    kind, title = match.group("kind"), match.group("title").strip()
    body = strip_option_lines(match.group("body")).strip()
    if kind == "proof":
        return f"*Proof.* {body} ∎\n"
    label = options(match.group("body")).get("label", "")
    name = statements.get(label, kind.capitalize())
    return f"**{name}" + (f" ({title})" if title else "") + f".**\n\n{body}\n"


def _target(match: re.Match[str], targets: Mapping[str, Target], role: str) -> tuple[Target, str]:
    label = (match.group("target") or match.group("bare")).strip()
    if label not in targets:
        raise ValueError(f"{{{role}}}`{label}`: no heading or figure of the book has this label")
    return targets[label], (match.group("text") or "").strip()


def numbered_reference(match: re.Match[str], targets: Mapping[str, Target], formats: Mapping[str, str]) -> str:
    """A ``{numref}`` as the website writes it: "Figure 4.4", "section 4.6"."""
    target, text = _target(match, targets, "numref")
    if target.number is None:
        raise ValueError(f"{{numref}}`{target.label}`: the website gives this {target.kind} no number")
    template = text or formats.get(target.kind, SPHINX_NUMFIG_FORMAT["section"])
    return template.replace("%s", target.number).replace("{number}", target.number).replace("{name}", target.title)


def reference(match: re.Match[str], targets: Mapping[str, Target]) -> str:
    """A ``{ref}`` as the website writes it: its own text, or the heading's title or the caption."""
    target, text = _target(match, targets, "ref")
    if not (text or target.title):
        raise ValueError(f"{{ref}}`{target.label}`: a reference to this place needs its own text")
    return text or target.title


def plain_markdown(
    text: str,
    equations: Mapping[str, int],
    citations: Mapping[str, str],
    statements: Mapping[str, str] | None = None,
    targets: Mapping[str, Target] | None = None,
    formats: Mapping[str, str] | None = None,
) -> str:
    """``text`` with the MyST roles, equation labels and sphinx-proof statements the book
    uses as plain Markdown; ``{numref}`` and ``{ref}`` are resolved through ``targets``
    (label -> :class:`~tools.course.numbers.Target`) and ``formats`` (``numfig_format``),
    citations through ``citations`` (:func:`tools.bibliography.citation_labels`: a key it
    lacks is an error)."""
    statements = statements or {}
    targets = targets or {}
    formats = formats or SPHINX_NUMFIG_FORMAT
    text = PRF_DIRECTIVE.sub(lambda m: _plain_statement(m, statements), text)
    text = _PRF_ROLE.sub(
        lambda m: (
            (m.group("text") or "").strip()
            or statements.get((m.group("target") or m.group("bare")).strip(), "the statement above")
        ),
        text,
    )
    text = _NUMREF_ROLE.sub(lambda m: numbered_reference(m, targets, formats), text)
    text = _REF_ROLE.sub(lambda m: reference(m, targets), text)
    text = EQUATION_LABEL.sub(lambda m: f"\\tag{{{equations.get(m.group('label'), '?')}}}\n$$", text)
    text = _EQ_ROLE.sub(lambda m: f"({equations.get(m.group('label'), '?')})", text)
    text = write_citations(text, citations)

    def link(match: re.Match[str]) -> str:
        target = (match.group("target") or match.group("bare")).strip()
        name = Path(target).name
        if is_chapter_name(name):  # another chapter: its notebook sits next to this one
            return f"[{(match.group('text') or '').strip() or name}]({name}.ipynb)"
        shown = (match.group("text") or "").strip() or name.replace("_", " ")
        return f"the book's *{shown}* page"

    return _DOC_ROLE.sub(link, text)
