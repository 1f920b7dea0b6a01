"""The named mistakes the kit can diagnose, and where the book explains each.

:data:`BUGS` maps a bug's name to one line that says what the code does wrong.
:data:`EXPLAINED_IN` maps it to the book section that explains the right thing,
as ``(notebook stem, section label, section title)``; :func:`explained_in` writes
that as the line a report ends with.
"""

from __future__ import annotations

__all__ = ["BUGS", "EXPLAINED_IN", "explained_in"]

#: Bug name -> what the implementation does wrong, in one line.
BUGS: dict[str, str] = {
    "layout": (
        "pairs the wrong features: interleaved pairs (2i, 2i+1) where half-split pairs (i, i + d/2) are meant, "
        "or the reverse (a checkpoint then needs its q/k weights permuted)"
    ),
    "dimension-index-exponent": (
        "puts the dimension index j into the exponent where the pair index k is meant: base**(-2j/d) instead of "
        "base**(-2k/d), so the frequencies fall twice as fast (or a pair's sine and cosine get different ones)"
    ),
    "model-dim-denominator": (
        "divides the exponent by the wrong width: d_model, or the whole head where only the rotated width is meant "
        "(and the reverse: ordinary against proportional partial rotary)"
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
        "computes the angles (positions, frequencies or their product), or their cos/sin tables, "
        "in float16 or bfloat16: errors grow with the position"
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
    "rotary-width": "rotates another set of features than the rotary fraction says",
    "alibi-slopes-non-power-of-two": (
        "gives a head count that is not a power of two the wrong slopes (the power-of-two formula 2**(-8h/n) "
        "applied as it is, or the reference slopes in another order)"
    ),
    "alibi-sign": "adds the ALiBi bias with the wrong sign: distant keys are favoured instead of penalised",
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
}


def explained_in(bug: str) -> str:
    """Where the book explains ``bug``: chapter, section title and page anchor, in one line.

    Parameters
    ----------
    bug : str
        A key of :data:`BUGS`.

    Returns
    -------
    str
        For instance ``'chapter 07, "Two layouts, one permutation apart"
        (notebooks/07_rope.html#rope-layouts-permutation-apart)'``.

    Raises
    ------
    TypeError, ValueError
        If ``bug`` is not a string naming one of :data:`BUGS`.

    Examples
    --------
    >>> explained_in("alibi-sign")
    'chapter 08, "A bias on the logits, nothing on the input" (notebooks/08_alibi.html#alibi-bias-logits-nothing)'
    """
    if not isinstance(bug, str):
        raise TypeError(f"bug must be a string naming one of BUGS, got {type(bug).__name__}")
    if bug not in EXPLAINED_IN:
        raise ValueError(f"bug must be one of {', '.join(sorted(BUGS))}; got {bug!r}")
    stem, label, title = EXPLAINED_IN[bug]
    return f'chapter {stem[:2]}, "{title}" (notebooks/{stem}.html#{label})'
