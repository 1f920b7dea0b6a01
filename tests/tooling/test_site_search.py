"""tools.site.search: Sphinx's highlighter marks a query term only where it stands whole.

The browser suite (tests/browser/test_search.py) checks the marks on the built site;
these tests check the rewrite of Sphinx's own ``sphinx_highlight.js`` and the rule it
adds, on words worked out by hand.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import sphinx

from tools.site import search

SPHINX_HIGHLIGHT = Path(sphinx.__file__).resolve().parent / "themes" / "basic" / "static" / "sphinx_highlight.js"


def test_the_pinned_sphinx_highlighter_is_rewritten_once_and_stays_so():
    source = SPHINX_HIGHLIGHT.read_text(encoding="utf-8")
    patched = search.whole_terms_highlighter(source)
    assert search.SUBSTRING_LINE in source and search.SUBSTRING_LINE not in patched
    assert patched.count(search.WHOLE_TERM_LINE) == 1
    assert patched.index("const _posencWholeTerm") < patched.index("const _highlight = ")
    assert search.whole_terms_highlighter(patched) == patched  # a second build changes nothing


def test_a_highlighter_without_the_line_is_refused():
    with pytest.raises(ValueError, match="Sphinx changed it"):
        search.whole_terms_highlighter("const _highlight = () => {};\n")


# (text as lower-cased by Sphinx, term) -> where the first whole occurrence starts, by hand.
CASES = {
    ("properties", "rope"): -1,  # inside a word
    ("european rope", "rope"): 9,  # the inner "rope" of "european" skipped, the word found
    ("longrope and apply_rope", "rope"): -1,  # letters and underscores are part of a word
    ("the rope", "rope"): 4,
    ("rope-based", "rope"): 0,  # a hyphen ends a word
    ("a p-rope", "p-rope"): 2,  # a hyphenated term is one term
    ("up-rope", "p-rope"): -1,
    ("ropes", "rope"): -1,
    ("rope's", "rope"): 0,
    ("(rope)", "rope"): 1,
    ("ωrope rope", "rope"): 6,  # any script's letters count
}


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is required to build the book")
def test_a_term_is_found_only_where_no_letter_digit_or_underscore_touches_it():
    script = (
        f"const find = new Function({json.dumps(search.WHOLE_TERM_JS)} + '; return _posencWholeTerm;')();"
        f"console.log(JSON.stringify({json.dumps([list(case) for case in CASES])}.map(([v, t]) => find(v, t))));"
    )
    found = json.loads(subprocess.run(["node", "-e", script], capture_output=True, text=True, check=True).stdout)
    assert dict(zip(CASES, found, strict=True)) == CASES
