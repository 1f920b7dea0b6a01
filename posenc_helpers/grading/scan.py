"""Reading the student's code: what the grader looks for in the cells a student could edit.

Two readings, both of the notebook as submitted (never of the kernel's history):

* :func:`~posenc_helpers.answer_cells.answer_cell` and
  :func:`~posenc_helpers.answer_cells.names_used` (from :mod:`posenc_helpers.answer_cells`,
  which the visible checks use too) find an exercise's answer cell and the names it
  calls, so the verdict can refuse an answer that calls a helper doing the exercise's
  work (``forbid``) or leaves out one it must use (``require``);
* :func:`scan_cells` reads every cell whose source is not one of the release's for
  code that reaches into the kernel: IPython hooks, ``exec``, ``sys.modules``,
  replacing ``numpy`` or a check. What it finds is reported as "Tampering
  suspected" for an instructor to look at. It is a signal: the points never rest on
  it, since the verdict runs outside the sandbox on the recorded values and on the
  data the release gives (changing the given data in the kernel changes nothing).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

from ..answer_cells import root_name

__all__ = ["scan_cells"]

# --------------------------------------------------------------------------- reading the student's code

_SUSPICIOUS_NAMES = {
    "get_ipython": "calls get_ipython()",
    "exec": "runs code from a string (exec)",
    "eval": "runs code from a string (eval)",
    "compile": "compiles code (compile)",
    "__import__": "imports through __import__",
    "globals": "reaches into the namespace (globals)",
    "locals": "reaches into the namespace (locals)",
    "vars": "reaches into a namespace (vars)",
    "setattr": "sets attributes by name (setattr)",
    "delattr": "deletes attributes by name (delattr)",
    "__builtins__": "touches __builtins__",
    "breakpoint": "calls breakpoint",
}
#: Modules whose use reaches into the kernel itself. Files, processes and the network are not on
#: the list: in the sandbox they reach nothing of the grader's, so an honest ``import os`` is fine.
_SUSPICIOUS_MODULES = {
    "importlib", "sys", "builtins", "ctypes", "gc", "inspect", "types", "atexit", "signal", "threading",
    "IPython", "ipykernel", "runpy", "code", "codeop", "site", "sysconfig", "traitlets", "zmq", "unittest",
    "posenc_helpers.checks._core", "posenc_helpers.checks._compare", "posenc_helpers.grading",
}  # fmt: skip
_SUSPICIOUS_ATTRIBUTES = {
    "__dict__", "__class__", "__code__", "__globals__", "__builtins__", "__subclasses__", "__bases__", "__mro__",
    "__getattribute__", "__setattr__", "__import__", "__loader__", "__spec__", "__closure__", "__defaults__",
    "__kwdefaults__", "f_globals", "f_locals", "f_back", "tb_frame", "gi_frame", "input_transformers_post",
    "input_transformers_cleanup", "ast_transformers", "events", "set_custom_exc", "register_magic_function",
    "run_cell", "displayhook", "excepthook", "settrace", "setprofile", "modules", "meta_path", "path_hooks",
    "_record", "_core", "_compare", "grading", "reload",
}  # fmt: skip
_HARMLESS_MAGICS = {"time", "timeit", "matplotlib", "precision", "who", "whos", "pprint"}


def _python(source: str) -> ast.Module | None:
    """A cell's source as Python (IPython's magics and shell escapes translated), or None."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        source = TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 - without IPython, or a cell it cannot read: parse as is
        pass
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def _imports(tree: ast.Module) -> tuple[set[str], set[str]]:
    """The names an import binds in ``tree``, and the import statements (unparsed) themselves."""
    names: set[str] = set()
    statements: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            statements.add(ast.unparse(node))
            for alias in node.names:
                if alias.name == "*" and isinstance(node, ast.ImportFrom) and node.module:
                    names.update(_star_names(node.module))
                else:
                    names.add(alias.asname or alias.name.split(".")[0])
    return names, statements


def _star_names(module: str) -> set[str]:
    """The names ``from module import *`` binds, for the package's own modules (read, not imported)."""
    if not module.startswith("posenc_helpers"):
        return set()
    import importlib

    try:
        return set(getattr(importlib.import_module(module), "__all__", []))
    except ImportError:
        return set()


def _scan_tree(tree: ast.Module, imported: set[str], import_statements: set[str], depth: int = 0) -> list[str]:
    found, magic_calls = _scan_harmless_magics(tree, imported, import_statements, depth)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in _SUSPICIOUS_NAMES and id(node) not in magic_calls:
            found.append(_SUSPICIOUS_NAMES[node.id])
        elif isinstance(node, ast.Attribute) and node.attr in _SUSPICIOUS_ATTRIBUTES:
            found.append(f"uses `.{node.attr}`")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            found += _scan_import(node, imported, import_statements)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name in imported:
            found.append(f"redefines `{node.name}`")
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete | ast.For | ast.withitem):
            found += _scan_binding(node, imported)
    return found


def _is_harmless_magic(node: ast.AST) -> bool:
    """``get_ipython().run_line_magic("time", "...")`` and the like (``%time``, ``%timeit``)."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "run_line_magic"
        and isinstance(node.func.value, ast.Call)
        and isinstance(node.func.value.func, ast.Name)
        and node.func.value.func.id == "get_ipython"
        and len(node.args) == 2
        and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args)
        and getattr(node.args[0], "value", None) in _HARMLESS_MAGICS
    )


def _scan_harmless_magics(
    tree: ast.Module, imported: set[str], import_statements: set[str], depth: int
) -> tuple[list[str], set[int]]:
    """What the code timed by %time / %timeit does (harmless magics: their code is scanned), and the
    ids of their ``get_ipython`` names, which are then not suspicious."""
    found: list[str] = []
    magic_calls: set[int] = set()
    for node in ast.walk(tree):
        if _is_harmless_magic(node):
            assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            assert isinstance(node.func.value, ast.Call)
            magic_calls.add(id(node.func.value.func))
            inner = _python(str(getattr(node.args[1], "value", "")))
            if inner is not None and depth < 3:
                found += _scan_tree(inner, imported, import_statements, depth + 1)
    return found, magic_calls


def _scan_import(node: ast.Import | ast.ImportFrom, imported: set[str], import_statements: set[str]) -> list[str]:
    """A suspicious module imported, or an imported name rebound by an import the released cells lack."""
    found: list[str] = []
    modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
    if isinstance(node, ast.ImportFrom):
        modules += [f"{node.module}.{alias.name}" for alias in node.names]
    for module in modules:
        if (
            module in _SUSPICIOUS_MODULES
            or module.split(".")[0] in _SUSPICIOUS_MODULES
            or any(module.startswith(f"{suspicious}.") for suspicious in _SUSPICIOUS_MODULES)
        ):
            found.append(f"imports `{module}`")
    if ast.unparse(node) not in import_statements:
        rebound = {alias.asname or alias.name.split(".")[0] for alias in node.names} & imported
        found += [f"rebinds `{name}` by another import" for name in sorted(rebound)]
    return found


def _binding_targets(node: ast.AST) -> list[Any]:
    """What an assignment, deletion, for loop or with item binds."""
    if isinstance(node, ast.Assign | ast.Delete):
        return list(node.targets)
    if isinstance(node, ast.For):
        return [node.target]
    if isinstance(node, ast.withitem):
        return [node.optional_vars] if node.optional_vars is not None else []
    return [getattr(node, "target", None)]


def _scan_binding(node: ast.AST, imported: set[str]) -> list[str]:
    """An imported name (a module, a check, a helper) redefined or changed."""
    found: list[str] = []
    for target in _binding_targets(node):
        if isinstance(target, ast.Name) and target.id in imported:
            found.append(f"redefines `{target.id}`")
        elif isinstance(target, ast.Attribute | ast.Subscript) and root_name(target) in imported:
            found.append(f"changes `{ast.unparse(target)}`")
    return found


def scan_cells(student: Sequence[str], trusted: Sequence[str]) -> list[list[str]]:
    """For each source in ``student`` (cells the student could edit), what it does to the kernel.

    ``trusted`` are the sources of the released cells (the grader restores them, or the
    student left them as handed out): the names their imports bind are names a student
    must not redefine.

    Examples
    --------
    >>> scan_cells(["x = np.sin(1.0)", "np.allclose = lambda *a: True"], ["import numpy as np"])
    [[], ['changes `np.allclose`']]
    """
    imported: set[str] = set()
    statements: set[str] = set()
    for source in trusted:
        tree = _python(source)
        if tree is not None:
            names, found = _imports(tree)
            imported |= names
            statements |= found
    out = []
    for source in student:
        tree = _python(source)
        out.append(sorted(set(_scan_tree(tree, imported, statements))) if tree is not None else [])
    return out
