"""What the course's hidden tests run in the student's kernel: they record, never judge.

A verdict computed in the student's kernel can be forged by the student's code
(a patched check, a patched ``numpy``, an IPython hook that skips the test
cell). So the hidden test before each visible check (``tools/course/nbgrader.py``)
only calls :func:`record`, which displays the values the visible check is given as
one output of the test cell, with the MIME type
:data:`~posenc_helpers.grading.values.RECORD_MIME`. The grade comes later and
outside the kernel and its sandbox (:mod:`posenc_helpers.grading.verdict`).

Only the answer's values count: the data the exercise gives are taken from the
grader's own run of the released notebook (:mod:`posenc_helpers.grading.reference`),
whatever the record says they were. An answer that is a function is run here, in
the kernel, by the exercise's own check (:class:`~posenc_helpers.grading.values.CallLog`
keeps each call and its result), so that any function the student can call is an
answer; the verdict replays those calls.

A record also carries a report of the kernel (:func:`kernel_report`): what the
package, ``numpy`` and the builtins hold, and which IPython hooks are installed.
A kernel that was tampered with can forge this report too; it is one signal among
several, not the guarantee.
"""

from __future__ import annotations

import builtins
import sys
import types
from typing import Any

from .values import RECORD_MIME, CallLog, TooLarge, encode, is_function_answer

__all__ = ["record", "kernel_report", "describe_namespace", "notebook_defined", "PROTECTED_MODULES"]

#: the modules whose namespaces the kernel report describes (besides builtins)
PROTECTED_MODULES = (
    "numpy",
    "posenc_helpers",
    "posenc_helpers.checks",
    "posenc_helpers.checks._core",
    "posenc_helpers.checks._compare",
    "posenc_helpers.grading.record",
    "posenc_helpers.grading.values",
)


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
    """Name -> ``describe`` of every public name of ``module``, and of every class member of
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


def _run_check(check_name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """For an answer that is a function: run the exercise's check here with each function
    logged (:class:`~posenc_helpers.grading.values.CallLog`); the arguments to record."""
    logged_args = [CallLog(a) if is_function_answer(a) else a for a in args]
    logged_kwargs = {k: CallLog(v) if is_function_answer(v) else v for k, v in kwargs.items()}
    if not any(isinstance(v, CallLog) for v in [*logged_args, *logged_kwargs.values()]):
        return list(args), dict(kwargs)
    from posenc_helpers import checks

    check = getattr(checks, check_name, None)
    if callable(check):
        try:
            check(*logged_args, **logged_kwargs)
        except KeyboardInterrupt:
            raise
        except BaseException:  # noqa: BLE001 - the verdict runs the check again, on the log
            pass
    return logged_args, logged_kwargs


def record(spec: dict[str, Any], *args: Any, **kwargs: Any) -> None:
    """Display the values the visible check of exercise ``spec["label"]`` is given, for grading.

    ``spec`` also names the check and the answer variables; the grader reads them from the
    test cell as released, not from here.
    """
    from IPython.display import display

    label = str(spec.get("label", "")) if isinstance(spec, dict) else ""
    check = str(spec.get("check", "")) if isinstance(spec, dict) else ""
    try:
        logged_args, logged_kwargs = _run_check(check, args, kwargs)
        payload: dict[str, Any] = {
            "label": label,
            "args": [encode(value) for value in logged_args],
            "kwargs": {str(key): encode(value) for key, value in logged_kwargs.items()},
        }
    except TooLarge:
        payload = {"label": label, "too_large": True}
    payload["kernel"] = kernel_report()
    display({RECORD_MIME: payload, "text/plain": f"(answer to {label} recorded for grading)"}, raw=True)
