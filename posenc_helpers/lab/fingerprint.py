"""What a lab result depends on, as one digest: code by meaning, not by bytes.

A record (``make record-lab``) or a stored training run (``POSENC_LAB_CACHE``) is valid as
long as the code that computed it would compute it again. Raw source bytes are the
wrong key for that: a docstring or a comment changes them and nothing else. This
module keys on the *syntax tree* of each module with its docstrings removed
(:func:`code_fingerprint`: comments, blank lines, line breaks and docstrings do not
count; every statement, name and number does), over every module of the package the
lab's code reaches, followed to the end (:func:`training_modules`): the numerics
the model runs on (``alibi_bias``, ``t5_relative_bucket``, ``rope_frequencies``,
``sinusoidal_encoding``, ``scaled_rope_frequencies``) included. The walk resolves
every way of importing (``_Walk``): through an ``__init__``'s re-exports, ``import
pkg.x as y``, attributes of an imported package, ``import_module`` of a written name;
what it cannot read by name (a package handed to ``getattr``, a star import) it keys
whole. The package's ``__init__`` files only hand names on (a test holds them to it),
so no code runs at import that the key would miss.

:data:`LAB_VERSION` is for what the code does not show (a change of meaning in the
data, a fix of a library's behaviour the lab relies on): raise it and every record
and stored run is stale.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import platform
import threading
from collections.abc import Iterable, Sequence
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


def _parse(path: Path) -> ast.Module:
    """The syntax tree of the module at ``path``, read only (shared between walks of the same text)."""
    return _parsed(path.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=1024)
def _parsed(source: str) -> ast.Module:
    """``ast.parse(source)``, one parse at a time (:data:`_PARSING`), kept for the next walk."""
    with _PARSING:
        return ast.parse(source)


def _module_file(root: Path, parts: Sequence[str]) -> Path | None:
    """The file of the package's module ``parts`` (names below ``root``): ``x.py``, ``x/__init__.py`` or None."""
    base = root.joinpath(*parts)
    if parts and base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    return base / "__init__.py" if (base / "__init__.py").is_file() else None


def _target(root: Path, path: Path, module: str | None, level: int) -> tuple[str, ...] | None:
    """The module an import in ``path`` names, as names below ``root``; None when it is outside the package."""
    dotted = tuple(module.split(".")) if module else ()
    if not level:
        return dotted[1:] if dotted and dotted[0] == root.name else None
    package = path.relative_to(root).parts[:-1]  # a module's package; an __init__'s own folder
    if level - 1 > len(package):
        return None
    return (*package[: len(package) - (level - 1)], *dotted)


def _dynamic_import(node: ast.Call) -> bool:
    """Whether ``node`` calls ``importlib.import_module`` or ``__import__``."""
    function = node.func
    name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)
    return name in ("import_module", "__import__")


def _binds(statement: ast.stmt, name: str) -> bool:
    """Whether ``statement`` (not an import) defines ``name`` at the top of its module."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return statement.name == name
    targets = [*getattr(statement, "targets", ()), getattr(statement, "target", None)]
    return any(
        isinstance(node, ast.Name) and node.id == name for target in targets if target for node in ast.walk(target)
    )


class _Walk:
    """The package modules each module's code reaches, through every way of importing one.

    A name is resolved as Python binds it: ``from . import x``, ``from pkg.sub import x``
    (through the ``__init__`` that re-exports ``x``, to the module that defines it),
    ``import pkg.x as y``, ``import pkg`` then ``pkg.x.f`` or ``pkg.f`` (attribute chains
    on a package, resolved link by link), ``import_module("pkg.x")``. Where code could
    reach a name the walk cannot read (a package passed around or read with
    ``getattr``, ``from pkg import *``, ``import_module`` of a computed name) it takes
    the whole package: a key may be broader than needed, never narrower.
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def whole(self, parts: Sequence[str]) -> set[Path]:
        """Every module of the (sub)package ``parts``."""
        return {path for path in self.root.joinpath(*parts).rglob("*.py") if "__pycache__" not in path.parts}

    def module(self, parts: tuple[str, ...]) -> set[Path] | tuple[str, ...]:
        """What importing module ``parts`` gives: a module's file, or a package (its names, for attributes)."""
        file = _module_file(self.root, parts)
        if file is None:
            return set()  # not in the package: the import fails when it runs
        return parts if file.name == "__init__.py" else {file}

    def member(self, parts: tuple[str, ...], name: str, seen: frozenset = frozenset()) -> set[Path] | tuple[str, ...]:
        """What ``from <parts> import name`` (or ``<parts>.name``) reaches: files, or a package."""
        file = _module_file(self.root, parts)
        if file is None:
            return set()
        if file.name != "__init__.py":
            return {file}  # a name of a plain module: the module (whose own imports the walk follows)
        if (parts, name) in seen:
            return {file}
        bound = self.bound_in_init(file, parts, name, seen | {(parts, name)})
        if bound is not None:
            return bound
        return self.module((*parts, name)) or {file}  # a submodule, else the __init__ walked whole

    def bound_in_init(
        self, file: Path, parts: tuple[str, ...], name: str, seen: frozenset
    ) -> set[Path] | tuple[str, ...] | None:
        """What package ``parts``'s ``__init__`` binds to ``name`` (the last binding wins); None if nothing."""
        found: set[Path] | tuple[str, ...] | None = None
        stars: list[tuple[str, ...]] = []
        for statement in _parse(file).body:
            if isinstance(statement, ast.ImportFrom):
                target = _target(self.root, file, statement.module, statement.level)
                for alias in statement.names:
                    if alias.name == "*" and target is not None:
                        stars.append(target)
                    elif (alias.asname or alias.name) == name:
                        found = set() if target is None else self.member(target, alias.name, seen)
            elif isinstance(statement, ast.Import):
                for alias in statement.names:
                    if (alias.asname or alias.name.split(".")[0]) == name:
                        target = _target(self.root, file, alias.name, 0)
                        found = set() if target is None else self.module(target if alias.asname else target[:0])
            elif _binds(statement, name):
                found = {file}  # defined in the __init__ itself
        if found is None and stars:
            found = set().union(*(self.whole(target) for target in stars))
        return found

    def imports(self, path: Path) -> set[Path]:
        """The package's modules that the code of the module at ``path`` reaches."""
        tree = _parse(path)
        found: set[Path] = set()
        packages: dict[str, tuple[str, ...]] = {}  # local names bound to a package

        def take(reached: set[Path] | tuple[str, ...], local: str | None) -> None:
            if isinstance(reached, set):
                found.update(reached)
            elif local is None:
                found.update(self.whole(reached))
            else:
                packages[local] = reached

        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _target(self.root, path, node.module, node.level)
                if target is None:
                    continue
                for alias in node.names:
                    if alias.name == "*":
                        take(self.whole(target) if _module_file(self.root, target) else set(), None)
                    else:
                        take(self.member(target, alias.name), alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    target = _target(self.root, path, alias.name, 0)
                    if target is None:
                        continue
                    named = self.module(target)  # the module named runs: its code counts
                    if alias.asname:
                        take(named, alias.asname)
                    else:  # ``import pkg.x`` binds ``pkg``; its code reaches ``pkg.x`` by attributes
                        found.update(named if isinstance(named, set) else set())
                        packages[alias.name.split(".")[0]] = ()
            elif isinstance(node, ast.Call) and _dynamic_import(node) and node.args:
                take(self.dynamic(path, node), None)
        found.update(self.attributes(tree, packages))
        return found

    def dynamic(self, path: Path, node: ast.Call) -> set[Path] | tuple[str, ...]:
        """What ``import_module(...)`` or ``__import__(...)`` in ``path`` reaches: a named module, or everything."""
        name = node.args[0]
        if isinstance(name, ast.Constant) and isinstance(name.value, str) and not name.value.startswith("."):
            target = _target(self.root, path, name.value, 0)
            return set() if target is None else self.module(target)
        return self.whole(())

    def attributes(self, tree: ast.Module, packages: dict[str, tuple[str, ...]]) -> set[Path]:
        """The modules reached by attribute chains on names bound to a package (``pkg.sub.f``, ``pkg.f``)."""
        if not packages:
            return set()
        parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
        found: set[Path] = set()
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Name) and node.id in packages):
                continue
            parts = packages[node.id]
            current: ast.expr = node
            while True:
                parent = parents.get(current)
                if not (isinstance(parent, ast.Attribute) and parent.value is current):
                    found.update(self.whole(parts))  # a package used whole: passed on, read with getattr
                    break
                reached = self.member(parts, parent.attr)
                if isinstance(reached, set):
                    found.update(reached)
                    break
                parts, current = reached, parent
        return found


def training_modules(start: Iterable[str] | None = None, *, package: Path | str | None = None) -> list[Path]:
    """The modules a lab result depends on: ``start`` and every package module their code reaches, transitively.

    Every way of importing counts (``_Walk``): ``from ..alibi import alibi_bias``,
    ``from posenc_helpers import alibi_bias`` (followed through the ``__init__`` that
    re-exports it to ``alibi.py``), ``from .. import alibi``, ``import posenc_helpers.alibi
    as a``, ``posenc_helpers.alibi_bias`` after ``import posenc_helpers``. An ``__init__``
    that only hands names on is not part of the result; one that defines a name the
    code uses is.

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
        Sorted by their path in the package; ``NOT_COMPUTING`` (``measured.py``) left out.

    Raises
    ------
    TypeError
        If ``start`` is one string instead of an iterable of them.
    ValueError
        If ``start`` names a file that is not in the package.

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
    walk = _Walk(root)
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen or path.name in NOT_COMPUTING:
            continue
        seen.add(path)
        todo += sorted(walk.imports(path))
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
