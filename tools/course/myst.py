"""The MyST syntax the course tools read: notebook cells, directive fences and options.

Everything here is syntax only; what an exercise, a number or a citation means is
in the modules that import it.
"""

from __future__ import annotations

import re
from typing import Any

#: The opening fence of a MyST directive, backticks or colons (``(?P=fence)`` closes it).
DIRECTIVE_FENCE = r"(?P<fence>`{3,}|:{3,})"

#: An exercise directive's opening line and its options (the label among them).
EXERCISE_HEAD = re.compile(
    r"^" + DIRECTIVE_FENCE + r"\{(?P<kind>exercise|exercise-start)\}[^\n]*\n(?P<options>(?:[ \t]*:[\w-]+:[^\n]*\n)*)",
    re.MULTILINE,
)
EXERCISE_START = re.compile(
    r"^"
    + DIRECTIVE_FENCE
    + r"\{exercise-start\}[^\n]*\n(?P<options>(?:[ \t]*:[\w-]+:[^\n]*\n)*)(?P=fence)[ \t]*(?:\n|$)",
    re.MULTILINE,
)
EXERCISE_END = re.compile(r"^" + DIRECTIVE_FENCE + r"\{exercise-end\}[^\n]*\n(?P=fence)[ \t]*(?:\n|$)", re.MULTILINE)
EXERCISE_DIRECTIVE = re.compile(
    r"^" + DIRECTIVE_FENCE + r"\{exercise\}[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*(?:\n|$)", re.MULTILINE | re.DOTALL
)
SOLUTION_DIRECTIVE = re.compile(
    r"^" + DIRECTIVE_FENCE + r"\{solution\}[ \t]*(?P<label>\S*)[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*(?:\n|$)",
    re.MULTILINE | re.DOTALL,
)
SOLUTION_START = re.compile(r"^" + DIRECTIVE_FENCE + r"\{solution-start\}[ \t]*(?P<label>\S+)[^\n]*\n", re.MULTILINE)
SOLUTION_END = re.compile(r"^" + DIRECTIVE_FENCE + r"\{solution-end\}[^\n]*\n(?P=fence)[ \t]*(?:\n|$)", re.MULTILINE)
#: A sphinx-proof statement (theorem, lemma, proof ...), its title and body.
PRF_DIRECTIVE = re.compile(
    r"^" + DIRECTIVE_FENCE + r"\{prf:(?P<kind>\w+)\}[ \t]*(?P<title>[^\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*(?:\n|$)",
    re.MULTILINE | re.DOTALL,
)
#: A labelled display equation's closing line, ``$$ (eq-label)``.
EQUATION_LABEL = re.compile(r"\$\$[ \t]*\((?P<label>[\w-]+)\)[ \t]*$", re.MULTILINE)
_OPTION = re.compile(r"^[ \t]*:(?P<key>[\w-]+):[ \t]*(?P<value>[^\n]*)$", re.MULTILINE)
_LABEL = re.compile(r"^[ \t]*:label:[ \t]*(?P<label>\S+)", re.MULTILINE)


def cell_source(cell: dict[str, Any]) -> str:
    """A notebook cell's source as one string (nbformat stores a string or a list of lines)."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def options(block: str) -> dict[str, str]:
    """The ``:key: value`` options of a directive's opening block."""
    return {m.group("key"): m.group("value").strip() for m in _OPTION.finditer(block)}


def label_option(block: str) -> str | None:
    """The ``:label:`` of a directive's options, or None."""
    match = _LABEL.search(block)
    return match.group("label") if match else None


def strip_option_lines(body: str) -> str:
    """A directive's body without its leading option lines."""
    return _OPTION.sub("", body, count=0).lstrip("\n") if body.lstrip().startswith(":") else body
