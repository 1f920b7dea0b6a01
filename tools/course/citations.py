"""Citations as plain text for the course notebooks: ``{cite}`vaswani2017attention``` ->
"(Vaswani et al., 2017)", read from the book's bibliography."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from tools.course.common import ROOT

BIBLIOGRAPHY = ROOT / "book" / "references.bib"

_BIB_ENTRY = re.compile(r"@\w+\{(?P<key>[^,\s]+),(?P<body>.*?)\n\}", re.DOTALL)
_BIB_FIELD = r"\b{}\s*=\s*\{{(?P<value>(?:[^{{}}]|\{{[^{{}}]*\}})*)\}}"
_TEX_ACCENT = re.compile(r"\{?\\(?P<accent>['`~\"^v])\{?(?P<letter>\w)\}?\}?")
_TEX_LETTER = {"\\L": "Ł", "\\l": "ł", "\\o": "ø", "\\O": "Ø", "\\ss": "ß"}
_COMBINING = {"'": "\u0301", "`": "\u0300", "~": "\u0303", '"': "\u0308", "^": "\u0302", "v": "\u030c"}


def plain_name(tex: str) -> str:
    """A BibTeX name as text: ``Nu{\\~n}ez`` -> ``Nuñez``, ``{\\L}ukasz`` -> ``Łukasz``."""
    text = _TEX_ACCENT.sub(lambda m: m.group("letter") + _COMBINING[m.group("accent")], tex)
    for command, letter in _TEX_LETTER.items():
        text = text.replace(command, letter)
    return unicodedata.normalize("NFC", re.sub(r"[{}]", "", text)).strip()


def citation_labels(bib: Path = BIBLIOGRAPHY) -> dict[str, str]:
    """Key -> "Vaswani et al., 2017" for every entry of the bibliography."""
    labels = {}
    for entry in _BIB_ENTRY.finditer(bib.read_text(encoding="utf-8")):
        body = entry.group("body")
        author = re.search(_BIB_FIELD.format("author"), body)
        year = re.search(_BIB_FIELD.format("year"), body)
        names = [name.strip() for name in (author.group("value") if author else "").split(" and ") if name.strip()]
        last = [plain_name(name.split(",")[0]) for name in names]
        if not last:
            who = entry.group("key")
        elif len(last) == 1:
            who = last[0]
        elif len(last) == 2:
            who = f"{last[0]} and {last[1]}"
        else:
            who = f"{last[0]} et al."
        labels[entry.group("key")] = f"{who}, {year.group('value') if year else 'n.d.'}"
    return labels
