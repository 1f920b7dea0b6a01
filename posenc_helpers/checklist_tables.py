"""The scored checklist as tables: Markdown for the chapters, numbers for the figures.

:func:`checklist_markdown` lists the criteria of :data:`~posenc_helpers.CHECKLIST`
(and, given scores, a column per method); :func:`checklist_grid` turns the scores of
:func:`~posenc_helpers.score_encoding` into numbers (1 passed, 0 failed, NaN not
applicable), and :func:`comparison_markdown` into a table with each method's
mechanism, ``n/a`` and ``yes (by construction)`` cells, by the rules of
:mod:`.checklist`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ._validation import describe_value, require_choice
from .checklist import BY_CONSTRUCTION, CHECKLIST, HEURISTIC, MECHANISMS, NOT_APPLICABLE, CriterionResult

__all__ = ["checklist_grid", "checklist_markdown", "comparison_markdown"]


def checklist_markdown(scores: dict[str, dict[str, CriterionResult]] | None = None) -> str:
    """The checklist as a Markdown table, optionally with a scored column per method.

    Parameters
    ----------
    scores : dict, optional
        ``{method name: score_encoding(...) result}``. Without it the table
        lists the criteria and their questions.

    Returns
    -------
    str
        A Markdown table (display it with ``IPython.display.Markdown``).
        Scored cells read ``yes`` or ``no``.

    Raises
    ------
    TypeError, ValueError
        If ``scores`` is not a mapping of method names to complete results.

    References
    ----------
    .. [1] A. Kazemnejad, "Transformer Architecture: The Positional Encoding", 2019
       (the checklist).

    See Also
    --------
    comparison_markdown : the same scored table with mechanisms, n/a and extra rows.

    Examples
    --------
    >>> print(checklist_markdown().splitlines()[0])
    | property | question |
    """
    if scores is None:
        lines = ["| property | question |", "|---|---|"]
        lines += [f"| {c.name} | {c.question} |" for c in CHECKLIST]
        return "\n".join(lines)
    return comparison_markdown(scores)


def _require_scores(scores: Any, mechanisms: Any) -> tuple[list[str], dict[str, str]]:
    keys = [c.key for c in CHECKLIST]
    if not isinstance(scores, Mapping) or not scores:
        raise TypeError("scores must be a non-empty dict {method name: score_encoding result}")
    for method, result in scores.items():
        if not isinstance(result, Mapping):
            raise TypeError(
                f"scores[{method!r}] must be a score_encoding result (a dict), got {describe_value(result)}"
            )
        missing = [key for key in keys if key not in result]
        if missing:
            raise ValueError(f"scores[{method!r}] lacks the criteria {missing}")
        for key in keys:
            if not isinstance(result[key], CriterionResult):
                raise TypeError(
                    f"scores[{method!r}][{key!r}] must be a CriterionResult from score_encoding, "
                    f"got {describe_value(result[key])}"
                )
    methods = list(scores)
    if mechanisms is None:
        return methods, {m: MECHANISMS[0] for m in methods}
    if not isinstance(mechanisms, Mapping):
        raise TypeError(
            f"mechanisms must be a dict {{method name: mechanism}} or None, got {describe_value(mechanisms)}"
        )
    resolved = {}
    for method in methods:
        if method not in mechanisms:
            raise ValueError(f"mechanisms lacks the method {method!r}")
        resolved[method] = require_choice(mechanisms[method], f"mechanisms[{method!r}]", MECHANISMS)
    return methods, resolved


def checklist_grid(
    scores: Mapping[str, Mapping[str, CriterionResult]],
    mechanisms: Mapping[str, str] | None = None,
) -> np.ndarray:
    """The scored checklist as numbers: 1 passed (or met by construction), 0 failed, NaN not applicable.

    Parameters
    ----------
    scores : dict
        ``{method name: score_encoding(...) result}``.
    mechanisms : dict, optional
        ``{method name: mechanism}`` with mechanisms from :data:`MECHANISMS`;
        a criterion that does not apply (:func:`criterion_applies`) gives NaN
        and one met by construction (:data:`BY_CONSTRUCTION`) gives 1, whatever
        its check found. Without it every criterion is scored by its check.

    Returns
    -------
    numpy.ndarray
        Shape ``(len(CHECKLIST), len(scores))``: rows in checklist order,
        columns in the order of ``scores``.

    Raises
    ------
    TypeError, ValueError
        If ``scores`` is not a non-empty mapping of complete score results or
        ``mechanisms`` lacks a method or names an unknown mechanism.

    References
    ----------
    .. [1] A. Kazemnejad, "Transformer Architecture: The Positional Encoding", 2019
       (the checklist).

    Examples
    --------
    >>> from posenc_helpers import method_encoders, score_encoding
    >>> enc = method_encoders(d_model=4, n_heads=2)
    >>> scores = {name: score_encoding(enc[name]) for name in ("integer", "ALiBi")}
    >>> checklist_grid(scores, {name: enc[name].mechanism for name in scores})
    array([[ 1.,  1.],
           [ 0., nan],
           [ 1.,  1.],
           [ 1.,  1.],
           [ 1.,  1.],
           [ 0.,  1.]])
    """
    methods, resolved = _require_scores(scores, mechanisms)
    return _grid(scores, methods, resolved)


def _grid(
    scores: Mapping[str, Mapping[str, CriterionResult]], methods: list[str], resolved: dict[str, str]
) -> np.ndarray:
    """:func:`checklist_grid` on scores and mechanisms already checked by :func:`_require_scores`."""
    grid = np.empty((len(CHECKLIST), len(methods)))
    for col, method in enumerate(methods):
        for row, criterion in enumerate(CHECKLIST):
            if criterion.key in NOT_APPLICABLE.get(resolved[method], ()):  # the rule of criterion_applies
                grid[row, col] = np.nan
            elif criterion.key in BY_CONSTRUCTION.get(resolved[method], {}):
                grid[row, col] = 1.0
            else:
                grid[row, col] = 1.0 if scores[method][criterion.key].passed else 0.0
    return grid


def comparison_markdown(
    scores: Mapping[str, Mapping[str, CriterionResult]],
    mechanisms: Mapping[str, str] | None = None,
    extra_rows: Mapping[str, Mapping[str, str]] | None = None,
) -> str:
    """The scored checklist as a Markdown table with ``yes``, ``no`` and ``n/a`` cells.

    Like :func:`~posenc_helpers.checklist_markdown`, plus a first row naming
    each method's mechanism, ``n/a`` where :func:`criterion_applies` says a
    criterion does not apply and ``yes (by construction)`` where
    :data:`BY_CONSTRUCTION` says a mechanism meets it. Every cell comes from
    :func:`checklist_grid`.

    Parameters
    ----------
    scores : dict
        ``{method name: score_encoding(...) result}``.
    mechanisms : dict, optional
        ``{method name: mechanism}``; see :func:`checklist_grid`.
    extra_rows : dict, optional
        ``{row name: {method name: cell text}}``: rows appended below the checklist,
        such as measured results; a method missing from a row gets an em dash.

    Returns
    -------
    str
        A Markdown table (display it with ``IPython.display.Markdown``).

    Raises
    ------
    TypeError, ValueError
        As :func:`checklist_grid`, or if ``extra_rows`` is not a mapping of mappings.

    References
    ----------
    .. [1] A. Kazemnejad, "Transformer Architecture: The Positional Encoding", 2019
       (the checklist).

    Examples
    --------
    >>> from posenc_helpers import method_encoders, score_encoding
    >>> enc = method_encoders(d_model=4, n_heads=2)
    >>> table = comparison_markdown({"ALiBi": score_encoding(enc["ALiBi"])}, {"ALiBi": enc["ALiBi"].mechanism},
    ...                             extra_rows={"Trained: works long": {"ALiBi": "yes"}})
    >>> for i in (4, 8, 9):
    ...     print(table.splitlines()[i])
    | Bounded (heuristic) | n/a |
    | Offsets are a fixed map | yes (by construction) |
    | Trained: works long | yes |
    """
    methods, resolved = _require_scores(scores, mechanisms)
    grid = _grid(scores, methods, resolved)
    if extra_rows is not None and not (
        isinstance(extra_rows, Mapping) and all(isinstance(row, Mapping) for row in extra_rows.values())
    ):
        raise TypeError("extra_rows must be a dict {row name: {method name: cell text}}")
    words = {1.0: "yes", 0.0: "no"}
    lines = [
        "| property | " + " | ".join(methods) + " |",
        "|---|" + "---|" * len(methods),
    ]
    if mechanisms is not None:
        lines.append("| *mechanism* | " + " | ".join(f"*{resolved[m]}*" for m in methods) + " |")
    for row, criterion in enumerate(CHECKLIST):
        cells = []
        for method, value in zip(methods, grid[row], strict=True):
            if np.isnan(value):
                cells.append("n/a")
            elif criterion.key in BY_CONSTRUCTION.get(resolved[method], {}) and mechanisms is not None:
                cells.append("yes (by construction)")
            else:
                cells.append(words[float(value)])
        name = f"{criterion.name} (heuristic)" if criterion.key in HEURISTIC else criterion.name
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    for name, cells_by_method in (extra_rows or {}).items():
        lines.append(f"| {name} | " + " | ".join(str(cells_by_method.get(m, "—")) for m in methods) + " |")
    return "\n".join(lines)
