"""Checks for chapter 14: a museum of positional bugs.

Both checks hand the reader's function to the book's conformance kit
(:func:`posenc_helpers.conformance.diagnose`) and pass when it conforms. A
function that does not conform fails with the kit's diagnosis, told as an
exercise must tell it: the named mistake, where it shows (probe, position,
pair or head) and the section of the book that explains it, but none of the
numbers the kit compares with (the frequencies, slopes, factors or feature
partners the spec implies), and no advice to print the kit's full report,
which shows them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .._validation import require_choice, require_even_width, require_positive_real
from ..conformance import Report, describe, diagnose, explained_in, formula_section
from ._core import CheckFailed, CheckResult, is_placeholder, not_attempted, passed

__all__ = ["check_conforming_alibi", "check_conforming_rope"]

#: What a mistake does, told as an exercise tells it, where the kit's own line (``describe``) spells
#: out the fix: the kit lists every variant of the slope mistake, down to which every-other slope of
#: the next power of two to take, which is exercise 14.2's answer.
_EXERCISE_WORDS = {
    "alibi-slopes-non-power-of-two": (
        "gives a head count that is not a power of two slopes the paper does not give it. For n heads "
        "between two powers of two, p < n < 2p, the paper does not use 2**(-8h/n) with n: it builds the "
        "list from the p-head slopes and some of the 2p-head slopes; which ones, and why the list it gives "
        "12 heads is not sorted, is the section on the slopes"
    ),
}
#: A parenthesis of the kit's evidence that names index slices (``[1::2] ... [0::2]``): the fix itself.
_SLICES = re.compile(r"\s*\([^()]*\[-?\d*:-?\d*(?::-?\d*)?\][^()]*\)")


def _told(bug: str, kind: str) -> str:
    return _EXERCISE_WORDS.get(bug) or describe(bug, kind)


def _verdict(report: Report, what: str) -> None:
    """Raise CheckFailed with the kit's diagnosis unless the report says the code conforms."""
    if report.ok:
        return
    if report.error is not None:
        raise CheckFailed(
            f"{what} raised an exception when the kit called it: {report.error}. Call it yourself on a small input."
        )
    lines = [f"{what} does not conform yet."]
    if report.bug is not None:
        lines.append(f"The kit names the mistake {report.bug!r}: it {_told(report.bug, report.kind)}.")
    elif len(report.bugs) > 1:
        named = " and ".join(repr(name) for name in report.bugs)
        lines.append(f"The kit finds several mistakes at once: {named}. Fix one, then run the check again.")
    elif report.bugs:
        lines.append(
            f"The kit names the mistake {report.bugs[0]!r}: it {_told(report.bugs[0], report.kind)}; "
            "and it sees a further difference it cannot name."
        )
    else:
        lines.append("The kit sees a difference no named mistake explains.")
    lines.extend(f"Where: {_SLICES.sub('', item.without_values())}." for item in report.evidence[:2])
    scaling = report.spec.get("scaling")
    variant = scaling.get("method") if isinstance(scaling, Mapping) else None  # p-RoPE's pairs: chapter 13
    lines.extend(f"The book explains {name!r} in {explained_in(name, report.kind, variant)}." for name in report.bugs)
    if report.unrecognised or not report.bugs:
        what_to_compare = "your slopes with the rule" if report.kind == "alibi" else "your code with the formula"
        lines.append(f"Compare {what_to_compare} of {formula_section(report.kind)}.")
    raise CheckFailed(" ".join(lines))


def _require_function(fn: Any, signature: str) -> None:
    if not callable(fn):
        raise CheckFailed(f"the answer should be a function {signature}; got {type(fn).__name__}.")


def check_conforming_rope(
    fn: Any, *, head_dim: int, base: float, layout: str, rotary_dim: int | None = None
) -> CheckResult:
    """Check a repaired RoPE function ``fn(x, positions)`` with the conformance kit.

    The exercise gives a RoPE ported with mistakes from the museum and asks for
    a version that rotates queries and keys as the model means: head width
    ``head_dim``, base ``base`` and layout ``layout``, with the first
    ``rotary_dim`` features rotated (ordinary partial rotary: frequencies over
    the rotated width, pairs formed within it) and the rest passed through.
    The check runs :func:`~posenc_helpers.conformance.diagnose` on the function
    (``kind="rope"``) and passes when it conforms on every probe; otherwise it
    names the mistake the kit finds (the layout, the base, positions ignored or
    counted from 1, low-precision angles, ...), where it shows (probe,
    position, pair) and the section of the book that explains it, without any
    number the spec implies.

    Parameters
    ----------
    fn : callable or None
        The student's function ``fn(x, positions)`` returning ``x`` rotated,
        for ``x`` of shape ``(batch, seq, head_dim)`` and integer positions of
        shape ``(seq,)`` (``None`` or ``...`` while not attempted).
    head_dim : int
        Width of one head, a positive even integer.
    base : float
        The RoPE base the model means, ``> 0``.
    layout : {"half", "interleaved"}
        Which features the model pairs.
    rotary_dim : int, optional
        How many features rotate, a positive even integer ``<= head_dim``.
        Default: all of them.

    Returns
    -------
    CheckResult
        Truthy if the function conforms, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If ``fn`` is not a function, raises on the kit's probes, returns the
        wrong shape, or does not conform (with the kit's diagnosis, never an
        expected number).
    TypeError, ValueError
        If ``head_dim``, ``base``, ``layout`` or ``rotary_dim`` is not valid.

    Examples
    --------
    >>> check_conforming_rope(None, head_dim=16, base=500000.0, layout="half")
    Not attempted yet.
    Replace the placeholder with your function fn(x, positions), then run the cell again.
    >>> check_conforming_rope(lambda x, positions: x, head_dim=16, base=500000.0, layout="half")
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: your function does not conform yet. The kit sees a difference no named mistake
    explains. Where: unit vectors at every probe position: no feature is rotated at any position. Compare your code
    with the formula of chapter 07, "The rotation and the relative score"
    (notebooks/07_rope.html#rope-rotation-relative-score).
    """
    head_dim = require_even_width(head_dim, "head_dim")
    base = require_positive_real(base, "base")
    layout = require_choice(layout, "layout", ("half", "interleaved"))
    spec: dict[str, Any] = {"head_dim": head_dim, "base": base, "layout": layout}
    if rotary_dim is not None:
        spec["rotary_dim"] = require_even_width(rotary_dim, "rotary_dim")
        if spec["rotary_dim"] > head_dim:
            raise ValueError(f"rotary_dim must be <= head_dim = {head_dim}, got {rotary_dim}")
    if is_placeholder(fn):
        return not_attempted("your function fn(x, positions)")
    _require_function(fn, "fn(x, positions)")
    try:
        report = diagnose("rope", fn, **spec)
    except (TypeError, ValueError) as exc:
        raise CheckFailed(f"the kit could not use your function: {exc}.") from None
    _verdict(report, "your function")
    rotated = "every feature" if rotary_dim is None else f"the first {spec['rotary_dim']} features"
    return passed(
        f"the kit finds a RoPE with head width {head_dim}, base {base:g}, the {layout} layout and {rotated} "
        "rotated, on every probe.",
        check="check_conforming_rope",
    )


def check_conforming_alibi(fn: Any) -> CheckResult:
    """Check a repaired ALiBi bias ``fn(n_heads, seq_len)`` with the conformance kit.

    The exercise gives an ALiBi bias from the museum whose slopes are right only
    for some head counts, and asks for one that is right for every head count
    (chapter 08's slopes: the power-of-two rule, and for other counts the slopes
    of the nearest lower power of two followed by every other slope of the next
    one). The check runs :func:`~posenc_helpers.conformance.diagnose` on the
    function (``kind="alibi"``, causal, head counts 4, 8, 6 and 12) and passes
    when it conforms; otherwise it names the mistake the kit finds (slopes for a
    head count that is not a power of two, heads counted from 0, the sign),
    where it shows (probe and head) and the section of the book that explains
    it, without any slope; a difference the kit cannot name is sent to chapter
    08's section on the slopes.

    Parameters
    ----------
    fn : callable or None
        The student's function ``fn(n_heads, seq_len)`` returning the bias
        added to the logits, shape ``(n_heads, seq_len, seq_len)`` (``None``
        or ``...`` while not attempted).

    Returns
    -------
    CheckResult
        Truthy if the function conforms, falsy if not attempted; displays its message.

    Raises
    ------
    CheckFailed
        If ``fn`` is not a function, raises on the kit's probes, returns the
        wrong shape, or does not conform (with the kit's diagnosis, never a
        slope).

    Examples
    --------
    >>> check_conforming_alibi(None)
    Not attempted yet.
    Replace the placeholder with your function fn(n_heads, seq_len), then run the cell again.
    >>> check_conforming_alibi("slopes")
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: the answer should be a function fn(n_heads, seq_len); got str.
    """
    if is_placeholder(fn):
        return not_attempted("your function fn(n_heads, seq_len)")
    _require_function(fn, "fn(n_heads, seq_len)")
    try:
        report = diagnose("alibi", fn)
    except (TypeError, ValueError) as exc:
        raise CheckFailed(f"the kit could not use your function: {exc}.") from None
    _verdict(report, "your function")
    return passed(
        "the kit finds ALiBi's slopes for 4, 8, 6 and 12 heads, and the bias they give.", check="check_conforming_alibi"
    )
