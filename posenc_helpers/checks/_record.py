"""What the course's hidden tests run in the student's kernel: they record, never judge.

A verdict computed in the student's kernel can be forged by the student's code
(a patched check, a patched ``numpy``, an IPython hook that skips the test
cell). So the hidden test after each exercise (``tools/course/nbgrader.py``) only calls
:func:`record`, which displays the values the visible check is given as one
output of the test cell, with the MIME type :data:`MIME`. The grade comes later
and outside the kernel (:mod:`posenc_helpers.checks._verdict`): a fresh ``python
-I`` process decodes those values and runs the package's own check on them.

A record also carries a report of the kernel (:func:`kernel_report`): what the
package, ``numpy`` and the builtins hold, and which IPython hooks are installed.
A kernel that was tampered with can forge this report too; it is one signal among
several, not the guarantee (the guarantee is that points come only from the
values, checked outside).

Values travel as JSON: numbers, strings, lists, tuples, dicts, numpy arrays of
numeric or boolean dtype (as bytes), and functions as their source. Nothing is
pickled, so decoding a record runs no code from it.
"""

from __future__ import annotations

import base64
import builtins
import inspect
import math
import sys
import textwrap
import types
from typing import Any

__all__ = ["MIME", "record", "encode", "kernel_report", "describe_namespace", "PROTECTED_MODULES"]

MIME = "application/vnd.posenc.record+json"
MAX_BYTES = 32 * 2**20  # a record larger than this is refused (an answer is a few kilobytes)
MAX_DEPTH = 16

#: the modules whose namespaces the kernel report describes (besides builtins)
PROTECTED_MODULES = (
    "numpy",
    "posenc_helpers",
    "posenc_helpers.checks",
    "posenc_helpers.checks._core",
    "posenc_helpers.checks._grading",
    "posenc_helpers.checks._record",
)


class _TooLarge(ValueError):
    pass


def _function(value: types.FunctionType, depth: int, budget: list[int]) -> dict[str, Any]:
    """A function answer as its source and the data and helper functions it reads."""
    code = value.__code__
    name = value.__name__
    try:
        source = textwrap.dedent(inspect.getsource(value))
    except (OSError, TypeError):
        source = ""
    if name == "<lambda>":  # its source is the line it sits in: keep the lambda alone
        name, source = "_lambda_answer", _lambda_source(source, code)
    names = set(code.co_names)
    for const in code.co_consts:  # names read by nested functions and comprehensions
        if isinstance(const, types.CodeType):
            names.update(const.co_names)
    context: dict[str, Any] = {}
    modules: dict[str, str] = {}
    for read in sorted(names):
        if read not in value.__globals__:
            continue
        item = value.__globals__[read]
        if isinstance(item, types.ModuleType):
            modules[read] = item.__name__
        elif isinstance(item, (types.FunctionType, types.BuiltinFunctionType, type)) and str(
            getattr(item, "__module__", "") or ""
        ).split(".")[0] in ("posenc_helpers", "numpy", "math", "builtins"):
            modules[read] = f"{item.__module__}:{item.__qualname__}"
        elif item is not value:
            context[read] = encode(item, depth + 1, budget)
    return {"__function__": {"name": name, "source": source, "context": context, "modules": modules}}


def _lambda_source(source: str, code: types.CodeType) -> str:
    """``_lambda_answer = lambda ...`` for the one lambda of ``source`` with ``code``'s parameters."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        try:
            tree = ast.parse("(" + source.strip().rstrip(",;") + ")")
        except SyntaxError:
            return ""
    wanted = list(code.co_varnames[: code.co_argcount])
    found = [
        node for node in ast.walk(tree) if isinstance(node, ast.Lambda) and [a.arg for a in node.args.args] == wanted
    ]
    return f"_lambda_answer = {ast.unparse(found[0])}\n" if len(found) == 1 else ""


_NOT_EXACT = object()  # what _encode_exact_scalar returns for anything else


def _encode_exact_scalar(value: Any, budget: list[int]) -> Any:
    """None, a bool, a str, Ellipsis, or a number of exactly the type int, float or complex, encoded;
    :data:`_NOT_EXACT` for anything else (subclasses included)."""
    if value is None or type(value) is bool or type(value) is str:
        if type(value) is str:
            budget[0] -= len(value)
        return value
    if value is Ellipsis:
        return {"__ellipsis__": True}
    if type(value) is int:
        return value if abs(value) < 2**53 else {"__int__": str(value)}
    if type(value) is float:
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if type(value) is complex:
        return {"__complex__": [encode(value.real), encode(value.imag)]}
    return _NOT_EXACT


def _encode_array(value: Any, budget: list[int]) -> dict[str, Any]:
    """A numpy array or scalar of booleans or numbers, as base64 of its bytes, dtype and shape."""
    import numpy as np

    array = np.asarray(value)
    if array.dtype.kind not in "biufc" or array.dtype.byteorder not in "=|<>":
        return {"__unsupported__": f"array of {array.dtype}"}
    array = np.array(array, order="C", copy=True)  # ascontiguousarray would make a 0-d array 1-d
    budget[0] -= array.nbytes
    if budget[0] < 0:
        raise _TooLarge
    return {
        "__ndarray__": base64.b64encode(array.tobytes()).decode("ascii"),
        "dtype": array.dtype.str,
        "shape": list(array.shape),
        "scalar": isinstance(value, np.generic),
    }


def encode(value: Any, depth: int = 0, budget: list[int] | None = None) -> Any:
    """``value`` as JSON-ready data (see the module docstring); what it cannot encode becomes
    ``{"__unsupported__": type name}``, which no check accepts."""
    import numpy as np

    budget = budget if budget is not None else [MAX_BYTES]
    if depth > MAX_DEPTH:
        return {"__unsupported__": "nested too deeply"}
    exact = _encode_exact_scalar(value, budget)
    if exact is not _NOT_EXACT:
        return exact
    if isinstance(value, (np.ndarray, np.generic)):
        return _encode_array(value, budget)
    # Subclasses are recorded as the plain type: whatever their methods claim (an __eq__
    # that is always true, say), the grader sees only the data.
    if isinstance(value, (list, tuple)):
        budget[0] -= 8 * len(value)
        if budget[0] < 0:
            raise _TooLarge
        items = [encode(item, depth + 1, budget) for item in list.__iter__(list(value))]
        return {"__list__": items} if isinstance(value, list) else {"__tuple__": items}
    if isinstance(value, dict):
        pairs = list(dict.items(value))
        return {"__dict__": [[encode(k, depth + 1, budget), encode(v, depth + 1, budget)] for k, v in pairs]}
    if type(value) is types.FunctionType:
        return _function(value, depth, budget)
    if isinstance(value, (int, float, complex, str)):
        plain: type = next(kind for kind in (int, float, complex, str) if isinstance(value, kind))
        return encode(plain(value), depth + 1, budget)
    if hasattr(type(value), "__array__"):  # other array libraries (a JAX array): their values
        try:
            return encode(np.asarray(value), depth + 1, budget)
        except Exception:  # noqa: BLE001 - recorded as unsupported below
            pass
    return {"__unsupported__": type(value).__name__}


# --------------------------------------------------------------------------- the kernel's state


def _code_file(value: Any) -> str | None:
    """The file of the Python code behind ``value`` (a function, method, partial or callable
    object), or None for code not written in Python."""
    seen = 0
    while seen < 8:
        seen += 1
        if isinstance(value, types.MethodType):
            value = value.__func__
        elif hasattr(value, "func") and callable(getattr(value, "func", None)):  # functools.partial
            value = value.func
        elif isinstance(value, types.FunctionType):
            return value.__code__.co_filename
        elif callable(value) and not isinstance(value, (type, types.BuiltinFunctionType)):
            call = vars(type(value)).get("__call__") or next(
                (vars(kind)["__call__"] for kind in type(value).__mro__ if "__call__" in vars(kind)), None
            )
            if isinstance(call, types.FunctionType):
                return call.__code__.co_filename
            return None
        else:
            return None
    return None


def notebook_defined(value: Any) -> bool:
    """True when ``value`` is (or wraps) code written in the notebook rather than installed code."""
    filename = _code_file(value)
    if filename is None:
        module = getattr(value, "__module__", None) or getattr(type(value), "__module__", None)
        return module == "__main__"
    if filename.startswith("<frozen "):  # the interpreter's own import machinery
        return False
    return filename.startswith("<") or "ipykernel_" in filename or "ipython-input" in filename


def describe(value: Any) -> str:
    """A short, address-free description of ``value``: what it is and where its code lives."""
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    kind = type(value).__name__
    filename = _code_file(value)
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    module = getattr(value, "__module__", None)
    if isinstance(value, type) or callable(value):
        return f"{kind} {module}.{name} @ {filename}" if filename else f"{kind} {module}.{name}"
    if isinstance(value, (int, float, str, bool, bytes, tuple, frozenset)) or value is None:
        text = repr(value)
        return f"{kind} {text[:200]}"
    return kind


def describe_namespace(module: types.ModuleType) -> dict[str, str]:
    """Name -> :func:`describe` of every public name of ``module``, and of every class member of
    the classes it defines (``CheckResult.__bool__``)."""
    out: dict[str, str] = {}
    for name, value in list(vars(module).items()):
        if name.startswith("__") and name not in ("__import__", "__build_class__"):
            continue
        if isinstance(value, types.ModuleType):
            continue
        out[name] = describe(value)
        if isinstance(value, type) and getattr(value, "__module__", "") == module.__name__:
            for member, item in list(vars(value).items()):
                if member in ("__dict__", "__weakref__", "__doc__", "__module__"):
                    continue
                out[f"{name}.{member}"] = describe(item)
    return out


def _hooks() -> list[str]:
    """IPython and interpreter hooks that run code written in the notebook."""
    found = _interpreter_hooks()
    shell = getattr(builtins, "get_ipython", lambda: None)()
    return found if shell is None else found + _ipython_hooks(shell)


def _interpreter_hooks() -> list[str]:
    """Tracing, profiling, exception and display hooks, and import hooks, set from the notebook."""
    found: list[str] = []
    for name in ("settrace", "setprofile"):
        if getattr(sys, name.replace("set", "get"))() is not None:
            found.append(f"sys.{name} is set")
    for name in ("excepthook", "displayhook"):
        if notebook_defined(getattr(sys, name, None)):
            found.append(f"sys.{name} is replaced")
    for finder in list(sys.meta_path) + list(sys.path_hooks):
        if notebook_defined(finder) or getattr(type(finder), "__module__", "") == "__main__":
            found.append("an import hook (sys.meta_path)")
    return found


def _ipython_hooks(shell: Any) -> list[str]:
    """IPython's input transformers, event callbacks, exception handler and replaced methods."""
    found: list[str] = []
    for attribute in ("input_transformers_cleanup", "input_transformers_post", "ast_transformers"):
        for hook in list(getattr(shell, attribute, []) or []):
            if notebook_defined(hook):
                found.append(f"an IPython hook ({attribute})")
    for event, callbacks in dict(getattr(getattr(shell, "events", None), "callbacks", {}) or {}).items():
        if any(notebook_defined(callback) for callback in callbacks):
            found.append(f"an IPython event callback ({event})")
    if tuple(getattr(shell, "custom_exceptions", ()) or ()):
        found.append("a custom exception handler (set_custom_exc)")
    for attribute in ("run_cell", "run_ast_nodes", "run_code", "showtraceback", "transform_cell"):
        if notebook_defined(getattr(shell, attribute, None)):
            found.append(f"IPython's {attribute} is replaced")
    return found


def kernel_report() -> dict[str, Any]:
    """The kernel's hooks and what the protected namespaces hold (see :func:`describe_namespace`)."""
    namespaces = {"builtins": describe_namespace(builtins)}
    for name in PROTECTED_MODULES:
        module = sys.modules.get(name)
        if module is not None:
            namespaces[name] = describe_namespace(module)
    return {"hooks": _hooks(), "namespaces": namespaces}


def record(spec: dict[str, Any], *args: Any, **kwargs: Any) -> None:
    """Display the values the visible check of exercise ``spec["label"]`` is given, for grading.

    ``spec`` also names the check and the answer variables; the grader reads them from the
    test cell as released, not from here.
    """
    from IPython.display import display

    label = str(spec.get("label", "")) if isinstance(spec, dict) else ""
    try:
        payload: dict[str, Any] = {
            "label": label,
            "args": [encode(value) for value in args],
            "kwargs": {str(key): encode(value) for key, value in kwargs.items()},
        }
    except _TooLarge:
        payload = {"label": label, "too_large": True}
    payload["kernel"] = kernel_report()
    display({MIME: payload, "text/plain": f"(answer to {label} recorded for grading)"}, raw=True)
