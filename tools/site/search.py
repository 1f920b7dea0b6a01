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
  The same file wraps ``Search.makeSearchSummary`` (Sphinx calls it with each result's
  page, fetched, and the query's stemmed words): a result whose link has no anchor gets
  that of the page's section holding the most query words (its heading breaking ties),
  and its summary comes from that section, so the result opens there and not at the top
  of a chapter tens of thousands of pixels long (issue 46, item 8).
- :func:`mark_whole_terms` (a site step): Sphinx's highlighter (``sphinx_highlight.js``,
  used on the results page and on the page a result opens, ``?highlight=``) marks every
  *substring* of the page equal to a query term: "rope" inside "properties", "European"
  and "LongRoPE". The step rewrites its one line that finds the term so that it finds
  the term only where no letter, digit or underscore touches it (Sphinx's index splits
  words the same way); a hyphenated term ("p-rope") is one term, and a hyphen is a
  boundary, so "rope" is marked in "RoPE-based".
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.search.en import SearchEnglish

from .pipeline import Site

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


#: The line of Sphinx's ``sphinx_highlight.js`` (7.4.7) that finds a term in a text node.
SUBSTRING_LINE = "const pos = val.toLowerCase().indexOf(text);"
WHOLE_TERM_LINE = "const pos = _posencWholeTerm(val.toLowerCase(), text);"
#: Where a term stands whole: no letter, digit or underscore on either side.
WHOLE_TERM_JS = r"""/* tools/site/search.py: a term is marked only where it stands whole. */
const _posencWholeTerm = (value, term) => {
  const inWord = /[\p{L}\p{N}_]/u;
  for (let pos = value.indexOf(term); pos >= 0; pos = value.indexOf(term, pos + 1)) {
    const end = pos + term.length;
    if (!(pos > 0 && inWord.test(value[pos - 1])) && !(end < value.length && inWord.test(value[end]))) return pos;
  }
  return -1;
};
"""


def whole_terms_highlighter(source: str) -> str:
    """``sphinx_highlight.js`` that marks a query term only where it stands as a whole word.

    Raises ``ValueError`` when the line to replace is not there (a Sphinx that changed
    the file): the ledger in ``tools/site/README.md`` says when to look again.
    """
    if WHOLE_TERM_LINE in source:
        return source
    if source.count(SUBSTRING_LINE) != 1:
        raise ValueError(f"sphinx_highlight.js: expected the line {SUBSTRING_LINE!r} once (Sphinx changed it?)")
    anchor = "const _highlight = "
    if anchor not in source:
        raise ValueError(f"sphinx_highlight.js: expected {anchor!r} (Sphinx changed it?)")
    source = source.replace(SUBSTRING_LINE, WHOLE_TERM_LINE)
    return source.replace(anchor, WHOLE_TERM_JS + anchor, 1)


def mark_whole_terms(site: Site) -> None:
    """Site step: the search highlighter marks whole terms only (see :func:`whole_terms_highlighter`)."""
    path = site.static / "sphinx_highlight.js"
    if path.is_file():
        path.write_text(whole_terms_highlighter(path.read_text(encoding="utf-8")), encoding="utf-8")
