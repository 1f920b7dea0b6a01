"""Grading outside the student's kernel: the verdict on the answers the hidden tests recorded.

The course's hidden tests only record the values each visible check is given
(:mod:`posenc_helpers.checks._record`). After the submission has run, the grader
(the nbgrader preprocessor in :mod:`posenc_helpers.checks._nbgrader`, the otter
plugin in :mod:`posenc_helpers.checks._otter`) calls :func:`grade`, which

* reads each exercise's check, answer names and forbidden helpers from the test
  cell *as released* (restored by the grader), never from the record;
* takes exactly one record per exercise from the executed notebook; a missing,
  extra, malformed or misplaced record earns nothing;
* decodes the values and runs the package's own check on them in a fresh
  ``python -I`` process (:func:`judge`), which imports ``posenc_helpers`` from the
  grading environment; a function answer runs in a second process that only
  returns values;
* reads the cells the student could edit (every code cell whose source is not one
  the release holds) for code that reaches into the kernel: IPython hooks,
  ``exec``, ``sys.modules``, replacing ``numpy`` or a check, changing the data an
  exercise gives (:func:`scan_cells`), and compares the kernel's own report with
  a fresh import;
* gives the points only to a correct answer from an untampered kernel, and says
  "Tampering suspected: ..." in one line when something above was seen.

Nothing here imports nbgrader or otter.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._grading import answer_cell, names_used
from ._record import MIME

__all__ = [
    "TAMPERING",
    "Verdict",
    "ExerciseSpec",
    "released_spec",
    "scan_cells",
    "package_digest",
    "judge",
    "grade",
    "source_digest",
]

TAMPERING = "Tampering suspected"
VERDICT_TIMEOUT = 120  # seconds for the checks of one notebook
CALL_TIMEOUT = 30  # seconds for one call of a function the student wrote
RECORD_CALL = "_record.record"


@dataclass
class Verdict:
    """The grade of one exercise: ``earned`` and one line for the feedback."""

    label: str
    earned: bool
    message: str
    tampering: list[str] = field(default_factory=list)

    @property
    def line(self) -> str:
        if self.tampering:
            return (
                f"{TAMPERING} ({self.label}): " + "; ".join(dict.fromkeys(self.tampering))[:600] + ". This exercise "
                "earns no points until an instructor has looked at the notebook."
            )
        return f"{self.label}: {self.message}"


@dataclass
class ExerciseSpec:
    """What the released test cell of one exercise records: read from its source, not its outputs."""

    label: str
    check: str
    answers: list[str]
    forbid: list[str]
    require: list[str]
    literals: dict[str, Any]  # argument position ("0") or keyword -> the value written in the cell


# --------------------------------------------------------------------------- the released test cell


def released_spec(test_source: str) -> ExerciseSpec | None:
    """The exercise a test cell records, from its ``_record.record({...}, ...)`` call; None if it has none."""
    if not isinstance(test_source, str):
        raise TypeError(f"test_source must be a str; got {type(test_source).__name__}")
    try:
        tree = ast.parse(test_source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == RECORD_CALL and node.args:
            try:
                spec = ast.literal_eval(node.args[0])
            except ValueError:
                return None
            literals: dict[str, Any] = {}
            for index, argument in enumerate(node.args[1:]):
                with contextlib.suppress(ValueError):
                    literals[str(index)] = ast.literal_eval(argument)
            for keyword in node.keywords:
                if keyword.arg is not None:
                    with contextlib.suppress(ValueError):
                        literals[keyword.arg] = ast.literal_eval(keyword.value)
            return ExerciseSpec(
                label=str(spec["label"]),
                check=str(spec["check"]),
                answers=list(spec.get("answers", [])),
                forbid=list(spec.get("forbid", [])),
                require=list(spec.get("require", [])),
                literals=literals,
            )
    return None


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
_SUSPICIOUS_MODULES = {
    "importlib", "sys", "builtins", "ctypes", "gc", "inspect", "types", "atexit", "signal", "threading",
    "multiprocessing", "subprocess", "os", "IPython", "ipykernel", "pickle", "marshal", "runpy", "code",
    "codeop", "shutil", "pathlib", "io", "tempfile", "site", "sysconfig", "traitlets", "zmq", "unittest",
    "posenc_helpers.checks._core", "posenc_helpers.checks._grading", "posenc_helpers.checks._record",
    "posenc_helpers.checks._verdict",
}  # fmt: skip
_SUSPICIOUS_ATTRIBUTES = {
    "__dict__", "__class__", "__code__", "__globals__", "__builtins__", "__subclasses__", "__bases__", "__mro__",
    "__getattribute__", "__setattr__", "__import__", "__loader__", "__spec__", "__closure__", "__defaults__",
    "__kwdefaults__", "f_globals", "f_locals", "f_back", "tb_frame", "gi_frame", "input_transformers_post",
    "input_transformers_cleanup", "ast_transformers", "events", "set_custom_exc", "register_magic_function",
    "run_cell", "displayhook", "excepthook", "settrace", "setprofile", "modules", "meta_path", "path_hooks",
    "_record", "_grading", "_core", "_verdict", "reload",
}  # fmt: skip
_KERNEL_BUILTINS = {"input", "exit", "quit", "help", "copyright", "credits", "license"}  # ipykernel's own
_HARMLESS_MAGICS = {"time", "timeit", "matplotlib", "precision", "who", "whos", "pprint"}
_MUTATING_METHODS = {
    "fill", "sort", "put", "resize", "setflags", "itemset", "partition", "byteswap", "__setitem__", "__delitem__",
    "append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "popitem", "reverse",
}  # fmt: skip
_MUTATING_FUNCTIONS = {"copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis"}


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


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _bound(target: ast.AST) -> list[str]:
    return [leaf.id for leaf in ast.walk(target) if isinstance(leaf, ast.Name) and isinstance(leaf.ctx, ast.Store)]


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


def _data_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names.update(_bound(target))
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names


def _scan_tree(
    tree: ast.Module, imported: set[str], import_statements: set[str], given: set[str], depth: int = 0
) -> list[str]:
    found, magic_calls = _scan_harmless_magics(tree, imported, import_statements, given, depth)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in _SUSPICIOUS_NAMES and id(node) not in magic_calls:
            found.append(_SUSPICIOUS_NAMES[node.id])
        elif isinstance(node, ast.Attribute) and node.attr in _SUSPICIOUS_ATTRIBUTES:
            found.append(f"uses `.{node.attr}`")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found += _scan_import(node, imported, import_statements)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in imported:
            found.append(f"redefines `{node.name}`")
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete, ast.For, ast.withitem)):
            found += _scan_binding(node, imported, given)
        elif isinstance(node, ast.Call):
            found += _scan_call(node, given)
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
    tree: ast.Module, imported: set[str], import_statements: set[str], given: set[str], depth: int
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
                found += _scan_tree(inner, imported, import_statements, given, depth + 1)
    return found, magic_calls


def _scan_import(node: ast.Import | ast.ImportFrom, imported: set[str], import_statements: set[str]) -> list[str]:
    """A suspicious module imported, or an imported name rebound by an import the released cells lack."""
    found: list[str] = []
    modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
    if isinstance(node, ast.ImportFrom):
        modules += [f"{node.module}.{alias.name}" for alias in node.names]
    for module in modules:
        if module in _SUSPICIOUS_MODULES or module.split(".")[0] in _SUSPICIOUS_MODULES:
            found.append(f"imports `{module}`")
    if ast.unparse(node) not in import_statements:
        rebound = {alias.asname or alias.name.split(".")[0] for alias in node.names} & imported
        found += [f"rebinds `{name}` by another import" for name in sorted(rebound)]
    return found


def _binding_targets(node: ast.AST) -> list[Any]:
    """What an assignment, deletion, for loop or with item binds (``None`` for a with item without ``as``)."""
    if isinstance(node, (ast.Assign, ast.Delete)):
        return list(node.targets)
    if isinstance(node, ast.For):
        return [node.target]
    if isinstance(node, ast.withitem):
        return [node.optional_vars] if node.optional_vars is not None else []
    return [getattr(node, "target", None)]


def _scan_binding(node: ast.AST, imported: set[str], given: set[str]) -> list[str]:
    """An imported name redefined or changed, or a given name replaced or changed."""
    found: list[str] = []
    for target in _binding_targets(node):
        root = _root(target)
        if isinstance(target, ast.Name) and target.id in imported:
            found.append(f"redefines `{target.id}`")
        elif isinstance(target, (ast.Attribute, ast.Subscript)) and root in imported:
            found.append(f"changes `{ast.unparse(target)}`")
        elif root in given and (isinstance(node, (ast.AugAssign, ast.Delete)) or target is not None):
            if isinstance(target, ast.Name) and not isinstance(node, (ast.AugAssign, ast.Delete)):
                found.append(f"replaces the given `{root}`")
            else:
                found.append(f"changes the given `{root}`")
    return found


def _scan_call(node: ast.Call, given: set[str]) -> list[str]:
    """A given name changed in place: by a mutating method or function, or with ``out=``."""
    found: list[str] = []
    owner = _root(node.func.value) if isinstance(node.func, ast.Attribute) else None
    method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
    if method in _MUTATING_METHODS and owner is not None and owner in given:
        found.append(f"changes the given `{owner}` in place")
    if method in _MUTATING_FUNCTIONS and node.args and _root(node.args[0]) in given:
        found.append(f"changes the given `{_root(node.args[0])}` in place")
    for keyword in node.keywords:
        if keyword.arg == "out" and any(
            isinstance(leaf, ast.Name) and leaf.id in given for leaf in ast.walk(keyword.value)
        ):
            found.append("writes into given data with out=")
    return found


def scan_cells(student: Sequence[str], trusted: Sequence[str], given_cells: Sequence[str] = ()) -> list[list[str]]:
    """For each source in ``student`` (cells the student could edit), what it does to the kernel.

    ``trusted`` are the sources of the released cells the grader restores or that the
    student left as handed out (their imports are the names a student must not
    redefine); ``given_cells`` the locked cells that set up the exercises (the names
    they bind are data the student must not change).
    """
    imported: set[str] = set()
    statements: set[str] = set()
    for source in trusted:
        tree = _python(source)
        if tree is not None:
            names, found = _imports(tree)
            imported |= names
            statements |= found
    given: set[str] = set()
    for source in given_cells:
        tree = _python(source)
        if tree is not None:
            given |= _data_names(tree)
    out = []
    for source in student:
        tree = _python(source)
        out.append(sorted(set(_scan_tree(tree, imported, statements, given))) if tree is not None else [])
    return out


def package_digest() -> str:
    """SHA-256 over the grading environment's ``posenc_helpers`` sources (a kernel must not change them)."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


# --------------------------------------------------------------------------- the fresh process


def _decode(data: Any, functions: list[Any]) -> Any:
    import numpy as np

    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        raise ValueError("a bare list in a record")
    if not isinstance(data, dict) or len(data) == 0:
        raise ValueError("malformed value in a record")
    if "__ndarray__" in data:
        dtype = np.dtype(str(data["dtype"]))
        if dtype.kind not in "biufc":
            raise ValueError("array of an unsupported dtype")
        shape = tuple(int(n) for n in data["shape"])
        array = np.frombuffer(base64.b64decode(data["__ndarray__"]), dtype=dtype).reshape(shape).copy()
        return array[()] if data.get("scalar") else array
    if "__list__" in data:
        return [_decode(item, functions) for item in data["__list__"]]
    if "__tuple__" in data:
        return tuple(_decode(item, functions) for item in data["__tuple__"])
    if "__dict__" in data:
        return {_decode(k, functions): _decode(v, functions) for k, v in data["__dict__"]}
    if "__ellipsis__" in data:
        return Ellipsis
    if "__int__" in data:
        return int(str(data["__int__"]))
    if "__float__" in data:
        return float(str(data["__float__"]))
    if "__complex__" in data:
        real, imag = data["__complex__"]
        return complex(_decode(real, functions), _decode(imag, functions))
    if "__function__" in data:
        proxy = _FunctionProxy(data["__function__"])
        functions.append(proxy)
        return proxy
    if "__unsupported__" in data:
        return _Unsupported(str(data["__unsupported__"]))
    raise ValueError("malformed value in a record")


class _Unsupported:
    """A value the kernel could not record (an object of a type no answer has)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __repr__(self) -> str:
        return f"<a {self.kind}>"


class _FunctionProxy:
    """A function the student wrote, run in its own ``python -I`` process that only returns values."""

    def __init__(self, record: dict[str, Any]) -> None:
        self.__name__ = str(record.get("name", "function"))
        self._record = record
        self._process: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        if self._process is None:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-m", "posenc_helpers.checks._verdict", "--worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            assert self._process.stdin is not None
            self._process.stdin.write(json.dumps(self._record) + "\n")
            self._process.stdin.flush()
        return self._process

    def __call__(self, *args: Any) -> Any:
        from ._record import encode

        process = self._start()
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps({"args": [encode(a) for a in args]}) + "\n")
        process.stdin.flush()
        import selectors

        selector = selectors.DefaultSelector()
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(CALL_TIMEOUT):
            self.close()
            raise TimeoutError(f"it ran for more than {CALL_TIMEOUT} s")
        line = process.stdout.readline()
        if not line:
            self.close()
            raise RuntimeError("it stopped the process that ran it")
        reply = json.loads(line)
        if "error" in reply:  # raised under the name of the student's exception, for the check's message
            kind, _, message = str(reply["error"]).partition(": ")
            raise type(kind if kind.isidentifier() else "Error", (_StudentError,), {})(message)
        return _decode(reply["result"], [])

    def close(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            for stream in (self._process.stdin, self._process.stdout):
                if stream is not None:
                    stream.close()
            self._process = None


class _StudentError(Exception):
    """An exception the student's function raised (its type and message, as text)."""


def _worker() -> None:
    """Run one function the student wrote: its source, then one call per line of input."""
    import importlib

    from ._record import encode

    record = json.loads(sys.stdin.readline())
    namespace: dict[str, Any] = {"__name__": "__student__"}

    def load(item: dict[str, Any]) -> None:
        for name, where in item.get("modules", {}).items():
            module_name, _, qualname = str(where).partition(":")
            value: Any = importlib.import_module(module_name)
            for part in qualname.split(".") if qualname else []:
                value = getattr(value, part)
            namespace[name] = value
        for name, value in item.get("context", {}).items():
            if isinstance(value, dict) and "__function__" in value:
                load(value["__function__"])
            else:
                namespace[name] = _decode(value, [])
        before = set(namespace)
        exec(compile(item.get("source", ""), "<answer>", "exec"), namespace)  # noqa: S102 - the student's function
        if item.get("name") not in namespace or item.get("name") == "<lambda>":
            new = [k for k in namespace if k not in before and callable(namespace[k])]
            if new:
                namespace[item.get("name", "")] = namespace[new[-1]]

    try:
        load(record)
        function = namespace[record.get("name", "")]
    except BaseException as error:  # noqa: BLE001 - reported as the call's failure
        function = None
        failure = f"{type(error).__name__}: {error}"
    for line in sys.stdin:
        try:
            if function is None:
                raise _StudentError(failure)
            args = [_decode(a, []) for a in json.loads(line)["args"]]
            reply = {"result": encode(function(*args))}
        except BaseException as error:  # noqa: BLE001
            reply = {"error": f"{error}" if isinstance(error, _StudentError) else f"{type(error).__name__}: {error}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def _namespace_changes(kernel: dict[str, dict[str, str]]) -> list[str]:
    """What the kernel's report says its protected namespaces hold that a fresh import does not."""
    import builtins
    import importlib

    from ._record import PROTECTED_MODULES, describe_namespace

    changed: list[str] = []
    fresh = {"builtins": describe_namespace(builtins)}
    for name in PROTECTED_MODULES:
        fresh[name] = describe_namespace(importlib.import_module(name))
    for module, names in fresh.items():
        seen = kernel.get(module)
        if not isinstance(seen, dict):
            if module in ("builtins", "numpy", "posenc_helpers.checks._record"):
                changed.append(f"the kernel did not report `{module}`")
            continue
        for name, description in names.items():
            if module == "builtins" and name in _KERNEL_BUILTINS:
                continue
            if seen.get(name) != description:
                changed.append(
                    f"`{module}.{name}` was replaced" if module != "builtins" else f"builtin `{name}` was replaced"
                )
        if module != "builtins":
            extra = sorted(set(seen) - set(names))
            changed += [f"`{module}.{name}` was added" for name in extra[:3]]
    return changed


def _judge_one(item: dict[str, Any]) -> dict[str, Any]:
    from posenc_helpers import checks

    from ._core import CheckFailed, CheckResult

    out: dict[str, Any] = {"label": item["label"], "tampering": []}
    report = item.get("kernel")
    if not isinstance(report, dict) or not isinstance(report.get("namespaces"), dict):
        out["tampering"].append("the record has no report of the kernel")
    else:
        out["tampering"] += [str(hook) for hook in report.get("hooks", [])][:5]
        out["tampering"] += _namespace_changes(report["namespaces"])[:5]
    functions: list[_FunctionProxy] = []
    try:
        args = [_decode(value, functions) for value in item["args"]]
        kwargs = {str(key): _decode(value, functions) for key, value in item["kwargs"].items()}
    except (KeyError, TypeError, ValueError) as error:
        out.update(status="malformed", message=f"the recorded answer could not be read ({error})")
        out["tampering"].append("a malformed record")
        return out
    for key, value in item.get("literals", {}).items():  # what the released cell wrote, not what was recorded
        if key.isdigit() and int(key) < len(args):
            args[int(key)] = value
        elif not key.isdigit():
            kwargs[key] = value
    check = getattr(checks, item["check"], None)
    if not (isinstance(item["check"], str) and item["check"].startswith("check_") and callable(check)):
        out.update(status="error", message=f"no check named {item['check']!r}")
        return out
    try:
        result = check(*args, **kwargs)
    except CheckFailed as error:
        out.update(status="wrong", message=str(error))
    except Exception as error:  # noqa: BLE001 - an answer the check cannot read
        out.update(status="wrong", message=f"the check could not read the answer ({type(error).__name__})")
    else:
        if isinstance(result, CheckResult) and result.status == "correct":
            out.update(status="correct", message=result.message)
        else:
            out.update(status="not attempted", message="not answered yet, so this exercise earns no points.")
    finally:
        for proxy in functions:
            proxy.close()
    return out


def _main() -> None:
    if "--worker" in sys.argv:
        _worker()
        return
    items = json.loads(sys.stdin.read())
    json.dump([_judge_one(item) for item in items], sys.stdout)


def judge(items: Sequence[dict[str, Any]], *, timeout: float = VERDICT_TIMEOUT) -> list[dict[str, Any]]:
    """The verdicts on ``items`` (label, check, literals, args, kwargs, kernel), from a fresh
    ``python -I`` process that imports this package as the grading environment has it."""
    if not items:
        return []
    process = subprocess.run(
        [sys.executable, "-I", "-m", "posenc_helpers.checks._verdict"],
        input=json.dumps(list(items)),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=Path(sys.executable).parent,
        env={key: value for key, value in os.environ.items() if not key.startswith("PYTHON")},
    )
    if process.returncode != 0:
        raise RuntimeError(f"the verdict process failed: {process.stderr[-2000:]}")
    return json.loads(process.stdout)


# --------------------------------------------------------------------------- one notebook


def _source(cell: Any) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _nbgrader(cell: Any) -> dict[str, Any]:
    return dict(cell.get("metadata", {}).get("nbgrader", {}) or {})


def _records(cell: Any) -> list[Any]:
    found = []
    for output in cell.get("outputs", []) or []:
        data = output.get("data", {}) if isinstance(output, dict) else {}
        if isinstance(data, dict) and MIME in data:
            found.append(data[MIME])
    return found


def source_digest(source: str) -> str:
    """SHA-256 of a cell's source, without its leading and trailing blank space."""
    if not isinstance(source, str):
        raise TypeError(f"source must be a str; got {type(source).__name__}")
    return hashlib.sha256(source.strip().encode("utf-8")).hexdigest()


def grade(
    cells: Sequence[Any],
    released: Iterable[str] = (),
    *,
    released_digests: Iterable[str] = (),
    submitted: Sequence[Any] | None = None,
    records_anywhere: bool = False,
    specs: dict[str, ExerciseSpec] | None = None,
    package_changed: bool = False,
) -> dict[str, Verdict]:
    """The verdict on every exercise of an executed notebook (its ``cells``).

    ``released`` are the sources of the release's cells (or ``released_digests`` their
    :func:`source_digest`): a code cell with one of these sources is the book's, any other
    the student's. Under nbgrader each exercise's record must come from its own test cell
    (``records_anywhere=False``) and ``specs`` is read from the restored test cells. otter
    runs its tests in cells it adds, so there any one cell may hold a record, ``specs``
    come from the autograder's configuration and the code read is the notebook as
    ``submitted`` (read before it ran), not the executed one with otter's own cells.
    """
    if isinstance(released, str):
        raise TypeError("released must be an iterable of cell sources, not one str")
    known = {source_digest(source) for source in released} | set(released_digests)

    def is_released(cell: Any) -> bool:
        return source_digest(_source(cell)) in known

    code = [(index, cell) for index, cell in enumerate(cells) if cell.get("cell_type") == "code"]
    test_cells: dict[str, int] = {}
    if specs is None:
        specs, test_cells = _specs_of_test_cells(code)
    read = code if submitted is None else [(i, c) for i, c in enumerate(submitted) if c.get("cell_type") == "code"]
    student = [(index, _source(cell)) for index, cell in read if not is_released(cell)]
    student = [(i, s) for i, s in student if not (submitted is None and i in test_cells.values())]
    trusted = [_source(cell) for _, cell in read if is_released(cell)]
    given = [_source(cell) for _, cell in read if _nbgrader(cell).get("locked") and not _nbgrader(cell).get("grade")]
    findings = scan_cells([s for _, s in student], trusted, given)
    flagged = [(index, found) for (index, _), found in zip(student, findings, strict=True) if found]
    records = _records_by_label(code)
    unexpected = sorted(set(records) - set(specs))
    end = len(cells) if submitted is None else len(submitted)

    items = []
    verdicts: dict[str, Verdict] = {}
    for label, spec in specs.items():
        place = test_cells.get(label, end)
        tampering = [f for index, found in flagged if index < place for f in found]
        if package_changed:
            tampering.append("the grading environment's posenc_helpers changed while the notebook ran")
        if unexpected:
            tampering.append("the notebook holds records of exercises it does not have")
        mine = _own_records(records.get(label, []), place, records_anywhere, tampering)
        if not mine:
            if not _stopped_before_recording(cells, place, read, spec, records_anywhere):
                tampering.append("the test cell did not record the answer, so it did not run as released")
            verdicts[label] = Verdict(
                label, False, "the test cell stopped before your answer was recorded; no points.", tampering
            )
            continue
        payload = mine[0][1]
        if not isinstance(payload, dict) or payload.get("too_large"):
            verdicts[label] = Verdict(label, False, "the answer is too large to grade; no points.", tampering)
            continue
        items.append(
            {
                "label": label,
                "check": spec.check,
                "literals": spec.literals,
                "args": payload.get("args", []),
                "kwargs": payload.get("kwargs", {}),
                "kernel": payload.get("kernel"),
            }
        )
        verdicts[label] = Verdict(label, False, "", tampering)
    for result in judge(items):
        verdict = verdicts[result["label"]]
        verdict.tampering += result.get("tampering", [])
        verdict.message = str(result.get("message", ""))
        verdict.earned = result.get("status") == "correct"
    for label, verdict in verdicts.items():  # the exercise's own code: read from the notebook, not the kernel
        history = [_source(cell) for index, cell in read if index < test_cells.get(label, end)]
        _hold_to_forbid_and_require(verdict, specs[label], history)
    for verdict in verdicts.values():
        if verdict.tampering:
            verdict.earned = False
    return verdicts


def _specs_of_test_cells(code: list[tuple[int, Any]]) -> tuple[dict[str, ExerciseSpec], dict[str, int]]:
    """Under nbgrader: each exercise's spec, read from its restored test cell, and that cell's index."""
    specs: dict[str, ExerciseSpec] = {}
    test_cells: dict[str, int] = {}
    for index, cell in code:
        meta = _nbgrader(cell)
        if meta.get("grade") and not meta.get("solution"):
            spec = released_spec(_source(cell))
            if spec is not None and spec.label == meta.get("grade_id"):
                specs[spec.label] = spec
                test_cells[spec.label] = index
    return specs, test_cells


def _records_by_label(code: list[tuple[int, Any]]) -> dict[str, list[tuple[int, Any]]]:
    """Every record in the executed cells, with the index of its cell, by the label it claims."""
    records: dict[str, list[tuple[int, Any]]] = {}
    for index, cell in code:
        for payload in _records(cell):
            label = payload.get("label") if isinstance(payload, dict) else None
            records.setdefault(str(label), []).append((index, payload))
    return records


def _own_records(
    mine: list[tuple[int, Any]], place: int, records_anywhere: bool, tampering: list[str]
) -> list[tuple[int, Any]]:
    """An exercise's records that count (under nbgrader only its test cell's); misplaced or repeated
    records are noted in ``tampering``."""
    if not records_anywhere:
        if any(index != place for index, _ in mine):
            tampering.append("a record outside its test cell")
        mine = [(index, payload) for index, payload in mine if index == place]
    if len(mine) > 1:
        tampering.append("more than one record")
    return mine


def _stopped_before_recording(
    cells: Sequence[Any], place: int, read: list[tuple[int, Any]], spec: ExerciseSpec, records_anywhere: bool
) -> bool:
    """Whether a missing record is explained: the test cell raised (nbgrader), or the answer was
    never assigned (otter runs the tests at the end)."""
    if records_anywhere:
        history = [_source(cell) for index, cell in read]
        return not answer_cell(history, spec.answers)
    return place < len(cells) and any(o.get("output_type") == "error" for o in cells[place].get("outputs", []) or [])


def _hold_to_forbid_and_require(verdict: Verdict, spec: ExerciseSpec, history: list[str]) -> None:
    """Take the points of an earned verdict whose answer calls a forbidden helper or skips a required one."""
    if not verdict.earned or not (spec.forbid or spec.require):
        return
    label = verdict.label
    used = names_used(answer_cell(history, spec.answers))
    shortcuts = sorted(used & set(spec.forbid))
    missing = sorted(set(spec.require) - used)
    if shortcuts:
        verdict.earned = False
        verdict.message = (
            f"{label} asks you to write the computation out yourself; your answer calls "
            f"{', '.join(f'`{name}`' for name in shortcuts)}, which does it for you, so it earns no points."
        )
    elif missing:
        verdict.earned = False
        verdict.message = (
            f"{label} asks you to build the answer with {', '.join(f'`{name}`' for name in missing)}, "
            "and your answer does not use it, so it earns no points."
        )


if __name__ == "__main__":
    _main()
