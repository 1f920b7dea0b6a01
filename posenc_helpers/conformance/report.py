"""What a diagnosis returns: :class:`Report`, made of :class:`Evidence`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .bugs import BUGS, explained_in

__all__ = ["Evidence", "Report"]

_KIND_TITLES = {
    "sinusoidal": "Sinusoidal encoding",
    "rope": "RoPE",
    "rope_frequencies": "RoPE frequencies",
    "alibi": "ALiBi",
}


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
        What was checked: ``"sinusoidal"``, ``"rope"``, ``"rope_frequencies"`` or ``"alibi"``.
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

    Examples
    --------
    >>> report = Report("alibi", {"causal": True}, ok=True)
    >>> report.ok, report.bug
    (True, None)
    >>> print(report)
    ALiBi (causal=True): conforms on every probe.
    """

    kind: str
    spec: Mapping[str, Any]
    ok: bool
    bug: str | None = None
    bugs: tuple[str, ...] = ()
    unrecognised: bool = False
    evidence: tuple[Evidence, ...] = field(default_factory=tuple)
    error: str | None = None

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
        lines = [self.title() + ": " + ("conforms on every probe." if self.ok else "does not conform.")]
        if self.error is not None:
            lines.append(f"The function raised an exception on a probe: {self.error}")
            return "\n".join(lines)
        if self.ok:
            return lines[0]
        if self.bug is not None:
            lines.append(f"Bug: {self.bug}: {BUGS[self.bug]}.")
        elif self.bugs:
            named = " + ".join(self.bugs)
            more = ", and something no named bug explains" if self.unrecognised else ""
            lines.append(f"Combined bugs: {named}{more}.")
            lines.extend(f"  {name}: {BUGS[name]}." for name in self.bugs)
        else:
            lines.append("Unrecognised: the differences below match no named bug.")
        lines.extend(f"Where: {item}" for item in self.evidence[:6])
        if len(self.evidence) > 6:
            lines.append(f"... and {len(self.evidence) - 6} more differences.")
        for name in self.bugs:
            lines.append(f"Explained in the book: {explained_in(name)}.")
        if not self.bugs:
            lines.append("Explained in the book: compare with the reference numerics of posenc_helpers.")
        return "\n".join(lines)
