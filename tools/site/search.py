"""Search that keeps hyphenated terms whole and ranks by how much of the query a page's headings hold.

Sphinx's own extension points, nothing patched:

- :class:`CompoundEnglish`, registered with ``app.add_search_language`` for ``en``:
  Sphinx's English search language, whose index also holds each hyphenated term whole
  (``p-RoPE`` as ``p-rope``, beside ``p`` and ``rope``) and whose query splitter
  (``js_splitter_code``) keeps it whole. Sphinx's splitter cut the query ``p-RoPE``
  into ``p`` and ``rope`` and highlighted every letter p of every summary.
- ``search_scorer.js`` (Sphinx's ``html_search_scorer``, set at ``config-inited``
  unless the configuration names another): a result's score
  gains, for every word of the query, 15 if a heading of its page holds the word and
  5 if its text does (Sphinx's own weights), and pages the book reaches first win ties.
  Sphinx scores a page by its best word alone, so "YaRN attention factor" ranked four
  pages alike (each has one of the words in a heading) and listed chapter 11 first,
  chapter 09, whose headings hold all three, fourth.
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.search.en import SearchEnglish

_COMPOUND = re.compile(r"\w+(?:-\w+)+")

# Sphinx's splitter, with a run of words joined by hyphens kept as one term.
SPLITTER = r"""
function splitQuery(query) {
  return query
    .split(/[^\p{Letter}\p{Number}_\p{Emoji_Presentation}-]+/gu)
    .map((term) => term.replace(/^-+(?=-)|-+$/g, ""))
    .filter((term) => term && term !== "-");
}
"""


class CompoundEnglish(SearchEnglish):
    """English, with hyphenated terms indexed whole as well as word by word."""

    js_splitter_code = SPLITTER

    def split(self, input: str) -> list[str]:  # noqa: A002 (Sphinx's name)
        return super().split(input) + _COMPOUND.findall(input)


def setup_search(app: Sphinx) -> None:
    """The search language (English, hyphenated terms whole) and the scorer."""
    app.add_search_language(CompoundEnglish)
    app.connect("config-inited", use_scorer)


SCORER = Path(__file__).resolve().parent / "search_scorer.js"


def use_scorer(app: Sphinx, config: Config) -> None:
    """``config-inited``: :data:`SCORER` as ``html_search_scorer`` unless the configuration names one."""
    if not config.html_search_scorer:
        config.html_search_scorer = str(SCORER)
