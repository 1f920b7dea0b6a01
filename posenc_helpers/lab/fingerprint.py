"""What a lab result depends on, as one digest: code by meaning, not by bytes.

A record (``make record-lab``) or a stored training run (``POSENC_LAB_CACHE``) is valid as
long as the code that computed it would compute it again. Raw source bytes are the
wrong key for that: a docstring or a comment changes them and nothing else. This
module keys on the *syntax tree* of each module with its docstrings removed
(:func:`code_fingerprint`: comments, blank lines, line breaks and docstrings do not
count; every statement, name and number does), over every module of the package the
lab's code imports, followed to the end (:func:`training_modules`): the numerics
the model runs on (``alibi_bias``, ``t5_relative_bucket``, ``rope_frequencies``,
``sinusoidal_encoding``, ``scaled_rope_frequencies``) included.

:data:`LAB_VERSION` is for what the code does not show (a change of meaning in the
data, a fix of a library's behaviour the lab relies on): raise it and every record
and stored run is stale.
"""

from __future__ import annotations

import ast
import hashlib
import json
import platform
import threading
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

__all__ = ["LAB_VERSION", "LIBRARIES", "code_fingerprint", "training_modules", "fingerprint"]

#: Raise to make every record and stored training run stale at once.
LAB_VERSION = 1

#: The libraries whose versions a result depends on (the requirements pin each).
LIBRARIES = ("numpy", "jax", "jaxlib", "optax")

#: The package's root folder (``posenc_helpers``).
PACKAGE = Path(__file__).resolve().parents[1]

#: One parse at a time: CPython 3.11's ``ast.parse`` raised ``SystemError: AST constructor
#: recursion depth mismatch`` when two of the lab's training threads keyed their runs at once.
_PARSING = threading.Lock()

#: Modules the lab imports that compute nothing a result holds: ``measured`` only
#: says where the record lives and reads it back.
NOT_COMPUTING = frozenset({"measured.py"})


def _without_docstrings(tree: ast.AST) -> ast.AST:
    """``tree`` with every statement that is a bare string (docstrings) removed."""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        kept = [
            statement
            for statement in body
            if not (
                isinstance(statement, ast.Expr)
                and isinstance(statement.value, ast.Constant)
                and isinstance(statement.value.value, str)
            )
        ]
        node.body = kept or [ast.Pass()]  # type: ignore[attr-defined]
    return tree


def code_fingerprint(source: str) -> str:
    """SHA-256 of the syntax tree of Python ``source``, docstrings and comments left out.

    Parameters
    ----------
    source : str
        The text of a Python module.

    Returns
    -------
    str
        64 hexadecimal digits: equal for two sources that differ only in comments,
        docstrings, blank lines or how lines are broken.

    Raises
    ------
    TypeError
        If ``source`` is not a string.
    SyntaxError
        If ``source`` is not valid Python.

    Examples
    --------
    >>> a = code_fingerprint('def f(x):\\n    "Twice x."\\n    return 2 * x\\n')
    >>> a == code_fingerprint("def f(x):  # doubles\\n    return (2 *\\n            x)\\n")
    True
    >>> a == code_fingerprint("def f(x):\\n    return 3 * x\\n")
    False
    """
    if not isinstance(source, str):
        raise TypeError(f"source must be a string of Python, got {type(source).__name__}")
    with _PARSING:
        tree = _without_docstrings(ast.parse(source))
        dumped = ast.dump(tree, annotate_fields=True, include_attributes=False)
    return hashlib.sha256(dumped.encode()).hexdigest()


def _imported_modules(path: Path, package: Path) -> list[Path]:
    """The package's modules that the module at ``path`` imports (relative or absolute)."""
    found = []
    with _PARSING:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        module = node.module
        if node.level:
            base = path.parent
            for _ in range(node.level - 1):
                base = base.parent
        elif module and module.split(".")[0] == package.name:
            base, module = package, ".".join(module.split(".")[1:])
        else:
            continue
        if module:
            base = base.joinpath(*module.split("."))
        candidates = [base.with_suffix(".py"), base / "__init__.py"]
        candidates += [(base / alias.name).with_suffix(".py") for alias in node.names]
        found += [candidate for candidate in candidates if candidate.is_file()]
    return found


def training_modules(start: Iterable[str] | None = None, *, package: Path | str | None = None) -> list[Path]:
    """The modules a lab result depends on: ``start`` and every package module they import, transitively.

    Parameters
    ----------
    start : iterable of str, optional
        Module files relative to the package root (default: every module of
        ``lab/`` but its ``__init__``).
    package : path, optional
        The package's root folder (default: this installation's ``posenc_helpers``;
        tests pass an edited copy).

    Returns
    -------
    list of pathlib.Path
        Sorted; the package's ``__init__`` files and ``NOT_COMPUTING`` (``measured.py``) left out.

    Examples
    --------
    >>> names = [path.name for path in training_modules(["lab/model.py"])]
    >>> names
    ['_validation.py', 'alibi.py', 'model.py', 'relative.py', 'rope.py', 'sinusoidal.py']
    """
    root = Path(package).resolve() if package is not None else PACKAGE
    if start is None:
        todo = [path for path in (root / "lab").glob("*.py") if path.name != "__init__.py"]
    else:
        if isinstance(start, str):
            raise TypeError("start must be an iterable of module paths such as ['lab/model.py'], not one string")
        todo = [root / name for name in start]
        missing = [str(path) for path in todo if not path.is_file()]
        if missing:
            raise ValueError(f"start must name module files under {root}; not found: {', '.join(missing)}")
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen or path.name == "__init__.py" or path.name in NOT_COMPUTING:
            continue
        seen.add(path)
        todo += _imported_modules(path, root)
    return sorted(seen, key=lambda path: path.relative_to(root).as_posix())


def fingerprint(modules: Iterable[Path], *, package: Path | str | None = None, **settings: object) -> str:
    """SHA-256 of :data:`LAB_VERSION`, the libraries' versions, ``settings`` and the code of ``modules``.

    ``settings`` must be JSON values (the protocol as a dict, a corpus digest).
    Python counts by its minor version (the runtime pins it); each library by its
    full version.

    Examples
    --------
    >>> modules = training_modules(["lab/tasks.py"])
    >>> fingerprint(modules, seeds=[0, 1]) == fingerprint(modules, seeds=[0, 1])
    True
    >>> fingerprint(modules, seeds=[0, 1]) == fingerprint(modules, seeds=[0, 2])
    False
    """
    root = Path(package).resolve() if package is not None else PACKAGE
    key = {
        "lab_version": LAB_VERSION,
        "python": ".".join(platform.python_version_tuple()[:2]),
        "libraries": {name: metadata.version(name) for name in LIBRARIES},
        "settings": settings,
        "code": {
            Path(path).resolve().relative_to(root).as_posix(): code_fingerprint(Path(path).read_text(encoding="utf-8"))
            for path in modules
        },
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()
