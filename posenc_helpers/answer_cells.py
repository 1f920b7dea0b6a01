"""Reading a notebook's cells as written: their source, the cell that answers, the names it uses.

Both the visible checks (``posenc_helpers.checks``, which warn in the student's
notebook that the graded course refuses a helper) and the grader
(``posenc_helpers.grading``, which withholds the points) read the student's answer
cell the same way; this module is that reading, below both:

* :func:`cell_source` is a cell's source as one string (nbformat keeps a list of lines
  or a string);
* :func:`answer_cell` is the latest cell that assigns one of an exercise's answers;
* :func:`names_used` are the names and attributes a source refers to, the names
  ``getattr`` looks up by a literal, and :data:`DYNAMIC_LOOKUP` for a name built at
  run time.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["DYNAMIC_LOOKUP", "answer_cell", "cell_source", "names_used", "root_name"]


def cell_source(cell: Mapping[str, Any]) -> str:
    """A notebook cell's source as one string, whether nbformat holds it as a string or a list of lines.

    Examples
    --------
    >>> cell_source({"source": ["x = 1\\n", "y = 2"]})
    'x = 1\\ny = 2'
    >>> cell_source({"cell_type": "markdown"})
    ''
    """
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


#: What :func:`names_used` adds for a name looked up from a string built at run time
#: (``getattr(ph, "apply_" + "rope")``, ``operator.attrgetter(name)``): no name of it can be read.
DYNAMIC_LOOKUP = "getattr(<a name built at run time>)"
_LOOKUPS = {"getattr", "attrgetter", "methodcaller"}


def names_used(source: str) -> set[str]:
    """Every name and attribute name ``source`` refers to (``np.linalg.lstsq`` gives np, linalg,
    lstsq), the names ``getattr`` looks up by a literal string (``getattr(ph, "apply_rope")``
    gives apply_rope), and :data:`DYNAMIC_LOOKUP` for a name it looks up from anything else.

    Examples
    --------
    >>> sorted(names_used("y = getattr(ph, 'apply_rope')(x)"))
    ['apply_rope', 'getattr', 'ph', 'x', 'y']
    >>> DYNAMIC_LOOKUP in names_used("y = getattr(ph, 'apply_' + 'rope')(x)")
    True
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and root_name(node.func) is not None and _callee(node.func) in _LOOKUPS:
            looked_up = node.args[1:2] if _callee(node.func) == "getattr" else node.args[:1]
            for argument in looked_up:
                if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                    names.add(argument.value.rsplit(".", 1)[-1])
                else:
                    names.add(DYNAMIC_LOOKUP)
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.add(node.name.rsplit(".", 1)[-1])
            if node.asname:
                names.add(node.asname)
    return names


def _assigns(source: str, answers: Iterable[str]) -> bool:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    wanted = set(answers)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in wanted:
            return True
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            for leaf in ast.walk(target):
                if isinstance(leaf, ast.Name) and leaf.id in wanted:
                    return True
    return False


def answer_cell(history: Sequence[str], answers: Sequence[str]) -> str:
    """The latest cell of ``history`` (IPython's ``In``, without the running cell) that
    assigns one of ``answers``; "" if there is none."""
    for source in reversed(list(history)):
        if isinstance(source, str) and _assigns(source, answers):
            return source
    return ""


def _callee(node: ast.AST) -> str | None:
    """The name a call calls: ``getattr`` for ``getattr(...)`` and ``builtins.getattr(...)``."""
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def root_name(node: ast.AST) -> str | None:
    """The name an expression starts from (``np`` for ``np.linalg.norm(x)[0]``), or None when
    it starts from anything else (a call, a literal).

    Examples
    --------
    >>> import ast
    >>> root_name(ast.parse("np.linalg.norm[0]", mode="eval").body)
    'np'
    >>> root_name(ast.parse("f().x", mode="eval").body) is None
    True
    """
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None
