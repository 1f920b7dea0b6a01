"""The book's bibliography (``book/references.bib``) and its citations written as text.

The website's citations are sphinxcontrib-bibtex's (``bibtex_reference_style:
author_year``). Two places write them without Sphinx, and both do it here, the same way:
the course's plain Markdown (:mod:`tools.course.markdown`: nbgrader and otter notebooks)
and JupyterLab's working copies (:mod:`tools.references`: ``make lab``, ``make
lab-student``).

* :func:`citation_labels` reads the bibliography: key -> "Vaswani et al., 2017", the
  label the website shows. Fields are read one after another, braced (nested to any
  depth: ``Veli{\\v{c}}kovi{\\'c}``, ``{{G}emma}``), quoted or bare (``year = 2025``),
  and joined by ``#``; TeX accents and letters become Unicode (:func:`plain_text`). Who
  is named is the first author's last name (with its "von" part), "A and B" for two,
  "A et al." for more, as the website writes it ("Dao and others" included); without
  authors, the editors, else the title.
* :func:`write_citations` writes every ``{cite}`` (or ``{cite:p}``) as "(Vaswani et al.,
  2017)" and ``{cite:t}`` as "Vaswani et al. (2017)"; several keys in one role read
  "(Shaw et al., 2018; Press et al., 2022)" and "Shaw et al. (2018), Press et al.
  (2022)". The website writes square brackets, and a comma between the references of
  a parenthetical citation. A key the bibliography lacks, or another form of the role,
  is an error, never a raw key in the text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIBLIOGRAPHY = ROOT / "book" / "references.bib"

#: A citation role: ``{cite}`key```, ``{cite:t}`a, b```.
CITE_ROLE = re.compile(r"\{cite(?::(?P<form>[a-z]+))?\}`(?P<keys>[^`]+)`")

_ENTRY = re.compile(r"@(?P<type>\w+)\s*\{")
_FIELD = re.compile(r"[\s,]*(?P<name>[A-Za-z][\w:.+/-]*)\s*=\s*")
_BARE = re.compile(r"[^\s,#{}\"]+")
_NOT_ENTRIES = ("comment", "string", "preamble")

_LETTER = {"L": "Ł", "l": "ł", "o": "ø", "O": "Ø", "ss": "ß", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ"}
_LETTER |= {"aa": "å", "AA": "Å", "i": "ı", "j": "ȷ"}
_COMBINING = {"'": "\u0301", "`": "\u0300", "~": "\u0303", '"': "\u0308", "^": "\u0302", "=": "\u0304", ".": "\u0307"}
_COMBINING |= {"v": "\u030c", "u": "\u0306", "H": "\u030b", "c": "\u0327", "k": "\u0328", "r": "\u030a"}
# \'e, \'{e}, {\'e}, \v{c}, \c c, \'\i (the dotless i takes the accent: í).
_TEX_ACCENT = re.compile(
    r"\\(?:(?P<symbol>['`~\"^=.])|(?P<named>[vuHckr])(?=[\s{]))\s*"
    r"(?:\{\s*(?P<braced>\\[ij](?![A-Za-z])|\w)\s*\}|(?P<letter>\\[ij](?![A-Za-z])|\w))"
)
_TEX_LETTER = re.compile(r"\\(?P<name>ss|ae|AE|oe|OE|aa|AA|[LlOoij])(?![A-Za-z])\s*(?:\{\})?")


def plain_text(tex: str) -> str:
    """BibTeX text as plain text: ``Nu{\\~n}ez`` -> ``Nuñez``, ``{\\L}ukasz`` -> ``Łukasz``,
    ``Veli{\\v{c}}kovi{\\'c}`` -> ``Veličković``, ``{{G}emma}`` -> ``Gemma``."""

    def accented(match: re.Match[str]) -> str:
        letter = match.group("braced") or match.group("letter")
        base = letter[1] if letter.startswith("\\") else letter
        return base + _COMBINING[match.group("symbol") or match.group("named")]

    text = _TEX_ACCENT.sub(accented, tex)
    text = _TEX_LETTER.sub(lambda m: _LETTER[m.group("name")], text)
    text = text.replace("\\&", "&").replace("~", " ")
    text = re.sub(r"\s+", " ", re.sub(r"[{}]", "", text))
    return unicodedata.normalize("NFC", text).strip()


# --------------------------------------------------------------------------- reading


def _closing(text: str, start: int) -> int:
    """The index of the brace that closes the one at ``text[start]``."""
    depth = 0
    for index in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return index
    raise ValueError(f"bibliography: a brace opened at character {start} is never closed")


def _value(body: str, start: int, key: str) -> tuple[str, int]:
    """The field value that starts at ``body[start]`` (its parts joined by ``#``), and
    where it ends."""
    parts = []
    index = start
    while True:
        if body.startswith("{", index):
            end = _closing(body, index)
            parts.append(body[index + 1 : end])
            index = end + 1
        elif body.startswith('"', index):
            end, depth = index + 1, 0
            while end < len(body) and (body[end] != '"' or depth):
                depth += {"{": 1, "}": -1}.get(body[end], 0)
                end += 1
            if end == len(body):
                raise ValueError(f"bibliography, entry {key}: a quoted value is never closed")
            parts.append(body[index + 1 : end])
            index = end + 1
        else:
            bare = _BARE.match(body, index)
            if bare is None:
                raise ValueError(f"bibliography, entry {key}: no value at {body[index : index + 40]!r}")
            parts.append(bare.group())
            index = bare.end()
        concatenated = re.compile(r"\s*#\s*").match(body, index)
        if concatenated is None:
            return "".join(parts), index
        index = concatenated.end()


def bib_fields(body: str) -> tuple[str, dict[str, str]]:
    """The key and the fields (lower-case name -> value as written) of an entry's body,
    the text between the braces of ``@type{...}``."""
    key, _, rest = body.partition(",")
    key = key.strip()
    fields: dict[str, str] = {}
    index = 0
    while rest[index:].strip(", \t\r\n"):
        field = _FIELD.match(rest, index)
        if field is None:
            raise ValueError(f"bibliography, entry {key}: no field at {rest[index : index + 40].strip()!r}")
        fields[field.group("name").lower()], index = _value(rest, field.end(), key)
    return key, fields


def bib_entries(text: str) -> dict[str, dict[str, str]]:
    """Key -> fields of every entry of a bibliography's text (``@comment``, ``@string``
    and ``@preamble`` left out)."""
    entries: dict[str, dict[str, str]] = {}
    index = 0
    while (entry := _ENTRY.search(text, index)) is not None:
        end = _closing(text, entry.end() - 1)
        if entry.group("type").lower() not in _NOT_ENTRIES:
            key, fields = bib_fields(text[entry.end() : end])
            entries[key] = fields
        index = end + 1
    return entries


# --------------------------------------------------------------------------- labels


def _split(text: str, separator: str) -> list[str]:
    """``text`` split at ``separator`` (a regular expression) outside braces."""
    parts, depth, start = [], 0, 0
    for match in re.finditer(rf"[{{}}]|{separator}", text):
        if match.group() in "{}":
            depth += 1 if match.group() == "{" else -1
        elif depth == 0:
            parts.append(text[start : match.start()])
            start = match.end()
    return [part.strip() for part in [*parts, text[start:]]]


def last_name(name: str) -> str:
    """The last name of a BibTeX name, with its "von" part: ``Smith, Ann`` and ``Ann
    Smith`` -> ``Smith``, ``Patrick von Platen`` -> ``von Platen``, ``{Qwen Team}`` ->
    ``Qwen Team``."""
    parts = _split(name, ",")
    if len(parts) > 1:  # "von Last, First" or "von Last, Jr, First"
        return plain_text(parts[0])
    words = [word for word in _split(name, r"\s+") if word]
    lower = [i for i, word in enumerate(words[:-1]) if plain_text(word)[:1].islower()]
    return plain_text(" ".join(words[lower[0] if lower else len(words) - 1 :]))


def author_year(fields: Mapping[str, str], key: str) -> str:
    """The label the website shows for an entry: "Vaswani et al., 2017", "Press and
    Smith, 2022", "Kazemnejad, 2019", "Qwen Team, 2025"."""
    people = fields.get("author") or fields.get("editor") or ""
    last = [last_name(name) for name in _split(people, r"\s+and\s+") if name]
    if not last:
        who = plain_text(fields.get("title", "")) or key
    elif len(last) == 1:
        who = last[0]
    elif len(last) == 2:
        who = f"{last[0]} and {last[1]}"
    else:
        who = f"{last[0]} et al."
    return f"{who}, {plain_text(fields.get('year', '')) or 'n.d.'}"


def citation_labels(bibliography: Path = BIBLIOGRAPHY) -> dict[str, str]:
    """Key -> "Vaswani et al., 2017" for every entry of ``bibliography``."""
    entries = bib_entries(bibliography.read_text(encoding="utf-8"))
    return {key: author_year(fields, key) for key, fields in entries.items()}


# --------------------------------------------------------------------------- citations


def citation(keys: str, form: str | None, citations: Mapping[str, str]) -> str:
    """The role ``{cite:form}`keys``` as text: ``{cite}`` (and ``{cite:p}``) as "(Vaswani
    et al., 2017)", ``{cite:t}`` as "Vaswani et al. (2017)"; ``citations`` are
    :func:`citation_labels`."""
    labels = []
    for key in (key.strip() for key in keys.split(",")):
        if key not in citations:
            raise ValueError(f"{{cite}}`{key}`: no entry of the bibliography has this key")
        labels.append(citations[key])
    if form in (None, "p"):
        return "(" + "; ".join(labels) + ")"
    if form == "t":
        return ", ".join(f"{who} ({year})" for who, _, year in (label.rpartition(", ") for label in labels))
    raise ValueError(f"{{cite:{form}}}: only {{cite}}, {{cite:p}} and {{cite:t}} are written out")


def write_citations(text: str, citations: Mapping[str, str]) -> str:
    """``text`` with every citation role written out (:func:`citation`)."""
    return CITE_ROLE.sub(lambda m: citation(m.group("keys"), m.group("form"), citations), text)


__all__ = [
    "BIBLIOGRAPHY",
    "CITE_ROLE",
    "author_year",
    "bib_entries",
    "bib_fields",
    "citation",
    "citation_labels",
    "last_name",
    "plain_text",
    "write_citations",
]
