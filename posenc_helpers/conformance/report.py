"""What a diagnosis returns: :class:`Report`, made of :class:`Evidence`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .bugs import BUGS, describe, explained_in, formula_section

__all__ = ["Evidence", "Report"]

_KIND_TITLES = {
    "sinusoidal": "Sinusoidal encoding",
    "rope": "RoPE",
    "rope_frequencies": "RoPE frequencies",
    "alibi": "ALiBi",
    "attention": "Attention",
}


_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?"
# Parts of the kit's notes that state what the spec implies: cut where values must not show.
_SPEC_CLAUSES = (
    re.compile(r",?\s*\bexpected\b.*$"),  # "..., expected feature 4 (half layout)"
    re.compile(rf",?\s+where\s+(?:the spec\b|{_NUMBER}\s+(?:is|are)\s+meant\b).*$"),  # "... where 8 is meant"
)
_RATIO = re.compile(rf"\b{_NUMBER} times the meant one")  # the spec's value, given the answer's own


def _shows(text: str, number: float) -> bool:
    """Whether ``text`` holds ``number`` written to two or more significant digits."""
    for found in re.findall(_NUMBER, text):
        digits = len(re.sub(r"e.*$|[-+.]", "", found).lstrip("0"))
        if digits >= 2 and f"{float(found):.{digits}g}" == f"{number:.{digits}g}":
            return True
    return False


@dataclass(frozen=True)
class Evidence:
    """One place where the implementation differs from what the spec means.

    Attributes
    ----------
    probe : str
        What the kit fed the function (for instance ``"unit vectors at positions
        0 .. 4097"``).
    note : str
        What was seen there, in words.
    position, pair, head : int or None
        Where: the token position, the frequency pair (or, for ALiBi, ``None``)
        and the head, when they apply.
    expected, got : float or None
        The number the spec implies and the one the function gave, when one
        number says it.
    bug : str or None
        The key of :data:`~posenc_helpers.conformance.BUGS` this evidence points
        to; ``None`` for a difference no named bug explains.

    Examples
    --------
    >>> print(Evidence("positions 0, 1, 2", "pair 0 turns the wrong way", position=1, pair=0,
    ...                expected=1.0, got=-1.0, bug="rotation-direction"))
    positions 0, 1, 2: pair 0 turns the wrong way (position 1, pair 0; expected 1, got -1)
    """

    probe: str
    note: str
    position: int | None = None
    pair: int | None = None
    head: int | None = None
    expected: float | None = None
    got: float | None = None
    bug: str | None = None

    def without_values(self) -> str:
        """What was seen and where, without any number the spec implies (for exercises).

        The note's clauses that state what the spec means ("expected feature 4",
        "where 8 is meant", "0.5 times the meant one") are cut, and a note that still
        shows the expected number is replaced by a plain statement.

        Returns
        -------
        str
            ``"probe: note (position t, pair k)"``.

        Raises
        ------
        Nothing.

        Examples
        --------
        >>> Evidence("fn()", "the frequencies follow base 10000 where 500000 is meant", pair=7,
        ...          expected=1.03e-05, got=3.2e-04, bug="base").without_values()
        'fn(): the frequencies follow base 10000 (pair 7)'
        """
        note = self.note
        for clause in _SPEC_CLAUSES:
            note = clause.sub("", note)
        note = _RATIO.sub("the meant one times one constant factor", note)
        if self.expected is not None and _shows(note, self.expected):
            note = "the numbers differ from what the spec means"
        place = ", ".join(
            f"{name} {value}"
            for name, value in (("position", self.position), ("pair", self.pair), ("head", self.head))
            if value is not None
        )
        return f"{self.probe}: {note}" + (f" ({place})" if place else "")

    def __str__(self) -> str:
        place = ", ".join(
            f"{name} {value}"
            for name, value in (("position", self.position), ("pair", self.pair), ("head", self.head))
            if value is not None
        )
        numbers = (
            "" if self.expected is None or self.got is None else f"expected {self.expected:.6g}, got {self.got:.6g}"
        )
        detail = "; ".join(part for part in (place, numbers) if part)
        return f"{self.probe}: {self.note}" + (f" ({detail})" if detail else "")


@dataclass(frozen=True)
class Report:
    """The verdict of :func:`~posenc_helpers.conformance.diagnose`.

    Attributes
    ----------
    kind : str
        What was checked: ``"sinusoidal"``, ``"rope"``, ``"rope_frequencies"``, ``"alibi"`` or
        ``"attention"``.
    spec : mapping
        What the implementation was meant to do, as given (normalised).
    ok : bool
        True when the function conforms to the spec on every probe.
    bug : str or None
        The one named mistake, a key of :data:`~posenc_helpers.conformance.BUGS`, when the
        differences are explained by exactly one; ``None`` when the code conforms,
        when several bugs combine, or when something is unrecognised.
    bugs : tuple of str
        Every named mistake found (several when bugs combine).
    unrecognised : bool
        True when some difference is explained by no named bug (see the evidence).
    evidence : tuple of Evidence
        Where the function differs: probe, position, pair or head, numbers.
    error : str or None
        The exception the function raised on a probe, reported as
        ``"ExceptionType: message (probe)"``; then ``ok`` is False and no bug is named.
    notes : tuple of str
        What a conforming function's output costs where the spec allows it (tables
        rounded to the declared dtype: a bounded error), printed after the first line.
    reach : int or None
        The largest position the probes reached, where the kind takes positions
        (the report then says "conforms on every probe up to position N").

    Examples
    --------
    >>> report = Report("alibi", {"causal": True}, ok=True, reach=5)
    >>> report.ok, report.bug
    (True, None)
    >>> print(report)
    ALiBi (causal=True): conforms on every probe up to position 5.
    """

    kind: str
    spec: Mapping[str, Any]
    ok: bool
    bug: str | None = None
    bugs: tuple[str, ...] = ()
    unrecognised: bool = False
    evidence: tuple[Evidence, ...] = field(default_factory=tuple)
    error: str | None = None
    notes: tuple[str, ...] = ()
    reach: int | None = None

    def __post_init__(self) -> None:
        for name in self.bugs + ((self.bug,) if self.bug else ()):
            if name not in BUGS:
                raise ValueError(f"bugs must be keys of BUGS, got {name!r}")

    def title(self) -> str:
        """The first line's subject: the kind and the spec, e.g. ``RoPE (head_dim=64, ...)``.

        Returns
        -------
        str
            The kind's name followed by the spec in parentheses.

        Raises
        ------
        Nothing.

        Examples
        --------
        >>> Report("rope", {"head_dim": 8, "layout": "half"}, ok=True).title()
        "RoPE (head_dim=8, layout='half')"
        """
        settings = ", ".join(f"{key}={value!r}" for key, value in self.spec.items())
        return f"{_KIND_TITLES.get(self.kind, self.kind)} ({settings})"

    def __str__(self) -> str:
        reach = "" if self.reach is None else f" up to position {self.reach}"
        lines = [self.title() + ": " + (f"conforms on every probe{reach}." if self.ok else "does not conform.")]
        if self.error is not None:
            lines.append(f"The function raised an exception on a probe: {self.error}")
            return "\n".join(lines)
        lines.extend(f"Note: {note}." for note in self.notes)
        if self.ok:
            return "\n".join(lines)
        if self.bug is not None:
            lines.append(f"Bug: {self.bug}: {describe(self.bug, self.kind)}.")
        elif self.bugs:
            named = " + ".join(self.bugs)
            more = ", and something no named bug explains" if self.unrecognised else ""
            lines.append(f"Combined bugs: {named}{more}.")
            lines.extend(f"  {name}: {describe(name, self.kind)}." for name in self.bugs)
        else:
            lines.append("Unrecognised: the differences below match no named bug.")
        lines.extend(f"Where: {item}" for item in self.evidence[:6])
        if len(self.evidence) > 6:
            lines.append(f"... and {len(self.evidence) - 6} more differences.")
        scaling = self.spec.get("scaling")
        variant = scaling.get("method") if isinstance(scaling, Mapping) else None
        for name in self.bugs:
            lines.append(f"Explained in the book: {explained_in(name, self.kind, variant)}.")
        if self.unrecognised and self.kind in _KIND_TITLES:
            lines.append(f"The right formula is in the book: {formula_section(self.kind)}.")
        return "\n".join(lines)
