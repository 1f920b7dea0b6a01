"""The named mistakes the kit can diagnose, and where the book explains each.

:data:`BUGS` maps a bug's name to one line that says what the code does wrong.
:data:`EXPLAINED_IN` maps it to the book section that explains the right thing,
as ``(notebook stem, section label, section title)``; :func:`explained_in` writes
that as the line a report ends with.

Where the line points depends on where the kit runs. On the website (and in any kernel
whose folder is not a folder of the book's working copies) it names the page and its
anchor, ``notebooks/04_sine_cosine_pairs.html#pairs-formula-k-indexing``. In the
working copies that ``make lab`` and ``make lab-student`` open (``tools/working_copies.py``
marks their folder with :data:`WORKING_COPIES_MARKER`), a page of the website does not
exist: the line names the chapter, the section's number as the working copy's heading
shows it, and the notebook beside the running one (:func:`notebook_reference`).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

__all__ = [
    "BUGS",
    "BUGS_BY_KIND",
    "EXPLAINED_IN",
    "EXPLAINED_IN_BY_KIND",
    "EXPLAINED_IN_BY_VARIANT",
    "FORMULA_SECTION",
    "describe",
    "explained_in",
    "formula_section",
    "notebook_reference",
    "WORKING_COPIES_MARKER",
]

#: The file ``tools/working_copies.py`` writes into a folder of working copies: a kernel running
#: there (JupyterLab starts it in the notebook's folder) points at the notebooks beside it.
WORKING_COPIES_MARKER = ".posenc-working-copies"

#: Bug name -> what the implementation does wrong, in one line.
BUGS: dict[str, str] = {
    "layout": (
        "pairs the wrong features: interleaved pairs (2i, 2i+1) where half-split pairs (i, i + d/2) are meant, "
        "or the reverse (for RoPE a checkpoint then needs its q/k weights permuted; for a sinusoidal table "
        "the columns come in another order)"
    ),
    "convention": (
        "follows another published convention than the spec names: tensor2tensor's and fairseq's sinusoidal "
        "table (all sines, then all cosines, frequencies base**(-k/(d/2 - 1))) where the paper's interleaved "
        "pairs with base**(-2k/d) are meant, or the reverse; not a bug in itself, but a model trained with one "
        "reads the other as other positions (give convention= as the model was trained)"
    ),
    "dimension-index-exponent": (
        "puts the dimension index j into the exponent where the pair index k is meant: base**(-2j/d) instead of "
        "base**(-2k/d), so the frequencies fall twice as fast (or a pair's sine and cosine get different ones)"
    ),
    "model-dim-denominator": (
        "divides the exponent by the wrong width: d_model, or the whole head where only the rotated width is meant "
        "(and the reverse: ordinary against proportional partial rotary)"
    ),
    "half-exponent": (
        "drops the factor 2 of the exponent: base**(-k/d) with the pair index k where base**(-2k/d) is meant, "
        "so the frequencies fall half as fast (numerically the same as a base of sqrt(base))"
    ),
    "denominator-minus-one": (
        "divides the exponent by d/2 - 1 steps where d/2 are meant: base**(-linspace(0, 1, d/2)), or "
        "tensor2tensor's spacing where the paper's is meant, so the last pair turns at exactly 1/base "
        "(numerically the same as a base of base**(n/(n - 1)) for n = d/2)"
    ),
    "base": "uses another base than the one meant (a hard-coded or defaulted 10000, a rope_theta not read)",
    "off-by-one": (
        "counts an index from the wrong start: positions shifted by one, pair index k + 1 for k, "
        "or ALiBi heads numbered from 0"
    ),
    "rotation-direction": (
        "rotates by minus the angle (a conjugate, a sine's sign flipped): scores then depend on n - m"
    ),
    "sin-cos-swapped": "puts the sine where the cosine belongs and the cosine where the sine belongs",
    "low-precision-angles": (
        "computes the angles in float16 or bfloat16 (the positions, the frequencies, their product, or any of "
        "them together): the angle errors grow with the position, to about a radian at a few thousand tokens"
    ),
    "low-precision-tables": (
        "rounds the cos/sin tables to float16 or bfloat16 while the angles are exact, in a model the spec declares "
        "in a finer dtype: a bounded error of about one unit in the last place (near 1e-3 for bfloat16) at every "
        "position, not growing with it (declare dtype= as the model runs, and it conforms)"
    ),
    "offset-applied-twice": (
        "adds a cache or chunk offset to positions that already hold it (positions + positions[0]): "
        "right when a block starts at 0, wrong at every later prefill chunk and decode step"
    ),
    "pass-through-changed": (
        "changes the features outside the rotated width (zeroes, negates or scales them, or mixes them in) "
        "where partial rotary passes them through unchanged"
    ),
    "scaling-applied-twice": (
        "applies a rescaling on top of itself: frequencies rescaled twice, or the attention factor squared"
    ),
    "scaling-ignored": "leaves out the rescaling the spec asks for: frequencies as if no rescaling were configured",
    "attention-factor": (
        "scales the rotation wrongly: a YaRN/LongRoPE attention factor missing, wrong, or present where none is meant"
    ),
    "rotation-applied-twice": "rotates queries and keys twice: every angle doubled (and an attention factor squared)",
    "positions-ignored": (
        "ignores the positions it is given and numbers the rows 0, 1, 2, ...: wrong under left padding, "
        "packing and a KV cache"
    ),
    "rotary-width": (
        "rotates another set of features than the rotary fraction says: more or fewer of them, "
        "or the last ones where the first are meant"
    ),
    "alibi-slopes-non-power-of-two": (
        "gives a head count that is not a power of two the wrong slopes (the power-of-two formula 2**(-8h/n) "
        "applied as it is, the next power of two's slopes cut short, or the lower power's slopes repeated for "
        "the extra heads; the evidence says which)"
    ),
    "alibi-head-order": (
        "gives the heads the right slopes in the wrong order (reversed, or sorted, where head h is meant to get "
        "the h-th slope of the paper's list): each head then looks as far as another head was trained to"
    ),
    "alibi-sign": "adds the ALiBi bias with the wrong sign: distant keys are favoured instead of penalised",
    "rope-on-values": (
        "rotates the values as well as the queries and keys: each value comes back turned by its key's position, "
        "which no score can undo"
    ),
    "qk-rotated-differently": (
        "rotates queries and keys by different code paths (one layout, base, direction or position for the "
        "queries, another for the keys, or one of them not at all): scores then depend on where a pair of "
        "tokens sits, not only on how far apart"
    ),
    "offset-keys-only": (
        "applies the cache offset to the keys but not to the queries: a prefill from position 0 is exact, "
        "and every decoded query is rotated as if its block started at 0"
    ),
    "bias-outside-scale": (
        "adds the ALiBi bias on the wrong side of the 1/sqrt(d) softmax scale: (q.k + bias)/sqrt(d) where "
        "q.k/sqrt(d) + bias is meant (or the reverse), so every slope is sqrt(d) times too small (or too large)"
    ),
    "causal-mask": (
        "masks the wrong keys: no causal mask, a mask that lets the next token or a little weight through, "
        "one that hides a query's own token, or one aligned to the top left of a KV cache"
    ),
}

#: Bug name -> (notebook stem, section label, section title) of the section that explains it.
EXPLAINED_IN: dict[str, tuple[str, str, str]] = {
    "layout": ("07_rope", "rope-layouts-permutation-apart", "Two layouts, one permutation apart"),
    "dimension-index-exponent": (
        "04_sine_cosine_pairs",
        "pairs-formula-k-indexing",
        "The formula, with k indexing pairs",
    ),
    "model-dim-denominator": ("12_positions_in_todays_models", "practice-partial-rotary", "Partial rotary"),
    "base": ("12_positions_in_todays_models", "practice-choosing-base", "Choosing the base"),
    "off-by-one": ("14_positional_bugs_museum", "museum-invisible-off-by-one", "An off-by-one that hides"),
    "rotation-direction": ("07_rope", "rope-rotation-relative-score", "The rotation and the relative score"),
    "sin-cos-swapped": ("04_sine_cosine_pairs", "pairs-formula-k-indexing", "The formula, with k indexing pairs"),
    "low-precision-angles": ("09_long_context", "long-context-angle-errors-grow", "Angle errors grow with position"),
    "low-precision-tables": ("09_long_context", "long-context-many-bits-position", "How many bits a position gets"),
    "convention": ("04_sine_cosine_pairs", "pairs-layouts-real-code", "Two layouts in real code"),
    "offset-applied-twice": (
        "12_positions_in_todays_models",
        "practice-positions-decode-time",
        "Positions at decode time",
    ),
    "pass-through-changed": ("12_positions_in_todays_models", "practice-partial-rotary", "Partial rotary"),
    "scaling-applied-twice": ("09_long_context", "long-context-three-ways-slow", "Three ways to slow the pairs down"),
    "scaling-ignored": ("09_long_context", "long-context-three-ways-slow", "Three ways to slow the pairs down"),
    "attention-factor": ("09_long_context", "long-context-yarn-s-attention", "YaRN's attention temperature"),
    "rotation-applied-twice": ("07_rope", "rope-where-rope-sits", "Where RoPE sits"),
    "positions-ignored": (
        "12_positions_in_todays_models",
        "practice-positions-decode-time",
        "Positions at decode time",
    ),
    "rotary-width": ("12_positions_in_todays_models", "practice-partial-rotary", "Partial rotary"),
    "alibi-slopes-non-power-of-two": ("08_alibi", "alibi-slopes", "The slopes"),
    "alibi-sign": ("08_alibi", "alibi-bias-logits-nothing", "A bias on the logits, nothing on the input"),
    "half-exponent": ("14_positional_bugs_museum", "museum-exponent-slips", "Two slips in the exponent"),
    "denominator-minus-one": ("14_positional_bugs_museum", "museum-exponent-slips", "Two slips in the exponent"),
    "alibi-head-order": ("08_alibi", "alibi-slopes", "The slopes"),
    "rope-on-values": ("07_rope", "rope-where-rope-sits", "Where RoPE sits"),
    "qk-rotated-differently": ("14_positional_bugs_museum", "museum-attention-level", "Bugs only attention can show"),
    "offset-keys-only": ("14_positional_bugs_museum", "museum-attention-level", "Bugs only attention can show"),
    "bias-outside-scale": ("14_positional_bugs_museum", "museum-attention-level", "Bugs only attention can show"),
    "causal-mask": ("14_positional_bugs_museum", "museum-attention-level", "Bugs only attention can show"),
}


#: (bug, kind) -> the one line for that kind, where the generic line of :data:`BUGS` would mislead.
BUGS_BY_KIND: dict[tuple[str, str], str] = {
    ("layout", "rope"): (
        "pairs the wrong features: interleaved pairs (2i, 2i+1) where half-split pairs (i, i + d/2) are meant, "
        "or the reverse (a checkpoint then needs its q/k weights permuted)"
    ),
    ("layout", "sinusoidal"): (
        "orders the columns in the other layout: sine and cosine interleaved (sin, cos, sin, cos, ...) where "
        "all sines then all cosines are meant, or the reverse (a model trained on one table reads the other "
        "as other positions)"
    ),
}

#: (bug, kind) -> the section that explains it for that kind, where it differs from :data:`EXPLAINED_IN`.
EXPLAINED_IN_BY_KIND: dict[tuple[str, str], tuple[str, str, str]] = {
    ("layout", "sinusoidal"): ("04_sine_cosine_pairs", "pairs-layouts-real-code", "Two layouts in real code"),
    ("model-dim-denominator", "sinusoidal"): (
        "04_sine_cosine_pairs",
        "pairs-layouts-real-code",
        "Two layouts in real code",
    ),
    ("denominator-minus-one", "sinusoidal"): (
        "04_sine_cosine_pairs",
        "pairs-layouts-real-code",
        "Two layouts in real code",
    ),
}

_PROPORTIONAL = (
    "13_positions_in_2026",
    "positions-2026-proportional",
    "Proportional p-RoPE against ordinary partial rotary",
)

#: (bug, variant) -> the section that explains it when the spec asks for that variant: the scaling's
#: method (``"proportional"``: p-RoPE), where the difference lies; it takes precedence over the kind's.
EXPLAINED_IN_BY_VARIANT: dict[tuple[str, str], tuple[str, str, str]] = {
    ("rotary-width", "proportional"): _PROPORTIONAL,
    ("model-dim-denominator", "proportional"): _PROPORTIONAL,
    ("pass-through-changed", "proportional"): _PROPORTIONAL,
}

#: kind -> the section that holds the right formula, for a difference no named bug explains.
FORMULA_SECTION: dict[str, tuple[str, str, str]] = {
    "rope": ("07_rope", "rope-rotation-relative-score", "The rotation and the relative score"),
    "rope_frequencies": ("07_rope", "rope-rotation-relative-score", "The rotation and the relative score"),
    "sinusoidal": ("04_sine_cosine_pairs", "pairs-formula-k-indexing", "The formula, with k indexing pairs"),
    "alibi": ("08_alibi", "alibi-slopes", "The slopes"),
    "attention": ("14_positional_bugs_museum", "museum-attention-level", "Bugs only attention can show"),
}


def describe(bug: str, kind: str | None = None) -> str:
    """What ``bug`` does wrong, in one line, worded for ``kind`` where that matters.

    Parameters
    ----------
    bug : str
        A key of :data:`BUGS`.
    kind : {"sinusoidal", "rope", "rope_frequencies", "alibi", "attention"}, optional
        The kind of code diagnosed; ``None`` gives the generic line of :data:`BUGS`.

    Returns
    -------
    str
        The line for that kind.

    Raises
    ------
    TypeError, ValueError
        If ``bug`` is not a string naming one of :data:`BUGS`.

    Examples
    --------
    >>> "q/k weights" in describe("layout", "sinusoidal")
    False
    >>> "q/k weights" in describe("layout", "rope")
    True
    """
    _require_bug(bug)
    return BUGS_BY_KIND.get((bug, str(kind)), BUGS[bug])


def _require_bug(bug: object) -> None:
    if not isinstance(bug, str):
        raise TypeError(f"bug must be a string naming one of BUGS, got {type(bug).__name__}")
    if bug not in EXPLAINED_IN:
        raise ValueError(f"bug must be one of {', '.join(sorted(BUGS))}; got {bug!r}")


def notebook_reference(stem: str, title: str, number: str | None = None) -> str:
    """Where a working copy's reader finds a section: chapter, section and the notebook beside.

    Parameters
    ----------
    stem : str
        The chapter's notebook name, ``NN_name`` (``"04_sine_cosine_pairs"``).
    title : str
        The section's title.
    number : str, optional
        The section's number as its heading shows it (``"4.1"``); left out when ``None``.

    Returns
    -------
    str
        The line that follows "Explained in the book:" in JupyterLab.

    Raises
    ------
    TypeError, ValueError
        If ``stem`` is not a chapter's notebook name, or ``title`` or ``number`` not a string.

    Examples
    --------
    >>> notebook_reference("04_sine_cosine_pairs", "The formula, with k indexing pairs", "4.1")
    'chapter 4, section 4.1, "The formula, with k indexing pairs" (04_sine_cosine_pairs.ipynb, in this folder)'
    """
    if not isinstance(stem, str) or not re.fullmatch(r"\d\d_\w+", stem):
        raise ValueError(f"stem must be a chapter's notebook name such as '04_sine_cosine_pairs', got {stem!r}")
    if not isinstance(title, str):
        raise TypeError(f"title must be a string, got {type(title).__name__}")
    if number is not None and not isinstance(number, str):
        raise TypeError(f"number must be a string such as '4.1' or None, got {type(number).__name__}")
    section = f"section {number}, " if number else ""
    return f'chapter {int(stem[:2])}, {section}"{title}" ({stem}.ipynb, in this folder)'


def _plain(text: str) -> str:
    """A heading or title without MyST's math and code marks, spaces collapsed."""
    return " ".join(re.sub(r"[$`*]", "", text).split())


@lru_cache(maxsize=64)
def _heading_number(path: Path, _stamp: int, title: str) -> str | None:
    """The number of the heading ``## N.k title`` in the notebook at ``path`` (its working copy)."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError):
        return None
    for cell in cells:
        if cell.get("cell_type") != "markdown":
            continue
        source = "".join(cell.get("source", ""))
        for match in re.finditer(r"^#{1,3}[ \t]+(\d+(?:\.\d+)*)\.?[ \t]+(.+?)[ \t]*$", source, re.MULTILINE):
            if _plain(match.group(2)) == _plain(title):
                return match.group(1)
    return None


def _section_line(section: tuple[str, str, str]) -> str:
    stem, label, title = section
    here = Path.cwd()
    copy = here / f"{stem}.ipynb"
    if (here / WORKING_COPIES_MARKER).is_file() and copy.is_file():
        return notebook_reference(stem, title, _heading_number(copy, copy.stat().st_mtime_ns, title))
    return f'chapter {stem[:2]}, "{title}" (notebooks/{stem}.html#{label})'


def formula_section(kind: str) -> str:
    """Where the book gives the right formula of ``kind``, for a difference no named bug explains.

    Parameters
    ----------
    kind : {"sinusoidal", "rope", "rope_frequencies", "alibi", "attention"}
        The kind of code diagnosed.

    Returns
    -------
    str
        The chapter, section title and page anchor, in one line.

    Raises
    ------
    ValueError
        If ``kind`` is not one of the five.

    Examples
    --------
    >>> formula_section("alibi")
    'chapter 08, "The slopes" (notebooks/08_alibi.html#alibi-slopes)'
    """
    if kind not in FORMULA_SECTION:
        raise ValueError(f"kind must be one of {', '.join(FORMULA_SECTION)}; got {kind!r}")
    return _section_line(FORMULA_SECTION[kind])


def explained_in(bug: str, kind: str | None = None, variant: str | None = None) -> str:
    """Where the book explains ``bug``: chapter, section title and page anchor, in one line.

    Parameters
    ----------
    bug : str
        A key of :data:`BUGS`.
    kind : str, optional
        The kind of code diagnosed: a sinusoidal table's layout is explained in
        chapter 04, RoPE's in chapter 07.
    variant : str, optional
        The spec's rescaling method, where it moves the explanation
        (``EXPLAINED_IN_BY_VARIANT``: p-RoPE's rotated pairs are explained
        in chapter 13, ordinary partial rotary's in chapter 12).

    Returns
    -------
    str
        For instance ``'chapter 07, "Two layouts, one permutation apart"
        (notebooks/07_rope.html#rope-layouts-permutation-apart)'``; in a folder of
        the book's working copies (JupyterLab), the chapter, the section's number and
        the notebook beside instead (:func:`notebook_reference`).

    Raises
    ------
    TypeError, ValueError
        If ``bug`` is not a string naming one of :data:`BUGS`.

    Examples
    --------
    >>> explained_in("alibi-sign")
    'chapter 08, "A bias on the logits, nothing on the input" (notebooks/08_alibi.html#alibi-bias-logits-nothing)'
    >>> explained_in("rotary-width", "rope", variant="proportional")[:11]
    'chapter 13,'
    """
    _require_bug(bug)
    section = EXPLAINED_IN_BY_VARIANT.get((bug, str(variant)))
    if section is None:
        section = EXPLAINED_IN_BY_KIND.get((bug, str(kind)), EXPLAINED_IN[bug])
    return _section_line(section)
