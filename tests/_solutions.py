"""Where the solutions are in a notebook, worked out line by line, independently of
``tools.course`` (shared by the course and student-website tests)."""

from __future__ import annotations

import re

_FENCE = r"^(`{3,}|:{3,})"
_EXERCISE_LABEL = re.compile(_FENCE + r"\{exercise(?:-start)?\}[^\n]*\n(?::[a-z]+:[^\n]*\n)*?:label:\s*(\S+)", re.M)
_OPENING = re.compile(r"(`{3,}|:{3,})\{(solution-start|solution-end|solution)\}")


def split_lines(nb: dict) -> tuple[list[str], list[str]]:
    """Source lines inside solutions and outside them.

    A gated block runs from its ``{solution-start}`` line to the closing fence of its
    ``{solution-end}``; a plain ``{solution}`` directive to its closing fence; a cell
    tagged ``solution`` is inside as a whole.
    """
    inside, outside = [], []
    state = None  # None, "block", or (kind, fence) while waiting for a closing fence
    for cell in nb["cells"]:
        lines = "".join(cell["source"]).splitlines()
        if cell["cell_type"] != "markdown":
            in_solution = state is not None or "solution" in cell["metadata"].get("tags", [])
            (inside if in_solution else outside).extend(lines)
            continue
        for line in lines:
            opening = _OPENING.match(line)
            if state is None and opening and opening.group(2) == "solution-start":
                state = "block"
            elif state is None and opening and opening.group(2) == "solution":
                state = ("plain", opening.group(1))
            elif state == "block" and opening and opening.group(2) == "solution-end":
                state = ("end", opening.group(1))
            elif isinstance(state, tuple) and line.strip() == state[1]:
                inside.append(line)
                state = None
                continue
            (inside if state is not None else outside).append(line)
    return inside, outside


def solution_lines(nb: dict, min_length: int = 4) -> set[str]:
    """Stripped lines that occur only inside solutions (and are longer than fences)."""
    inside, outside = split_lines(nb)
    shared = {line.strip() for line in outside}
    return {line.strip() for line in inside if len(line.strip()) >= min_length} - shared


def exercise_labels(nb: dict) -> list[str]:
    """Labels of every exercise (gated or plain) in the notebook."""
    return [
        m.group(2)
        for c in nb["cells"]
        if c["cell_type"] == "markdown"
        for m in _EXERCISE_LABEL.finditer("".join(c["source"]))
    ]


def strings_in(value) -> list[str]:
    """Every string anywhere in a JSON value (sources, outputs, metadata, attachments)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *strings_in(v)]]
    if isinstance(value, list):
        return [s for item in value for s in strings_in(item)]
    return []
