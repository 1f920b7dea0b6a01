"""Answers as data: how a recorded value travels from the student's kernel to the verdict.

Values travel as JSON: ``None``, booleans, numbers, strings, lists, tuples, dicts,
numpy arrays of numeric or boolean dtype (as base64 of their bytes) and, for an
answer that is a function, the calls the exercise's check made to it in the
kernel, each with its arguments and what it returned or raised
(:class:`CallLog`). Nothing is pickled, so reading a record runs no code from it;
a function is never sent anywhere, so any function the student can call (a
closure, a ``functools.partial``, ``numpy.sin`` imported by name, one that
prints) is an answer like any other.

:func:`encode` runs in the kernel; :func:`decode` in the verdict process, where a
recorded function becomes a :class:`Replay` that answers the check's calls from
the log, and fails if the check calls it with anything else.
"""

from __future__ import annotations

import base64
import json
import math
import types
from collections.abc import Callable
from typing import Any

__all__ = [
    "RECORD_MIME",
    "MAX_BYTES",
    "TooLarge",
    "encode",
    "decode",
    "CallLog",
    "Replay",
    "ReplayMismatch",
    "StudentError",
    "Unsupported",
]

#: The MIME type of a grading record in a test cell's outputs.
RECORD_MIME = "application/vnd.posenc.record+json"
MAX_BYTES = 32 * 2**20  # a record's values may hold this many bytes (an answer is a few kilobytes)
MAX_DEPTH = 16
MAX_CALLS = 64  # calls of one function a record keeps


class TooLarge(ValueError):
    """The values are larger than a record may hold."""


_NOT_EXACT = object()


def _encode_exact_scalar(value: Any, budget: list[int]) -> Any:
    """None, a bool, a str, Ellipsis, or a number of exactly the type int, float or complex,
    encoded; :data:`_NOT_EXACT` for anything else (subclasses included)."""
    if value is None or type(value) is bool:
        return value
    if type(value) is str:
        budget[0] -= len(value)
        if budget[0] < 0:
            raise TooLarge
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
        raise TooLarge
    return {
        "__ndarray__": base64.b64encode(array.tobytes()).decode("ascii"),
        "dtype": array.dtype.str,
        "shape": list(array.shape),
        "scalar": isinstance(value, np.generic),
    }


def encode(value: Any, depth: int = 0, budget: list[int] | None = None) -> Any:
    """``value`` as JSON-ready data (see the module docstring); what it cannot encode becomes
    ``{"__unsupported__": type name}``, which no check accepts.

    Subclasses of the built-in types are recorded as the plain type: whatever their
    methods claim (an ``__eq__`` that is always true, say), the verdict sees only the data.

    Examples
    --------
    >>> import numpy as np
    >>> encode([1, 2.5, None])
    {'__list__': [1, 2.5, None]}
    >>> decode(encode(np.arange(3.0))).tolist()
    [0.0, 1.0, 2.0]
    """
    import numpy as np

    budget = budget if budget is not None else [MAX_BYTES]
    if depth > MAX_DEPTH:
        return {"__unsupported__": "nested too deeply"}
    exact = _encode_exact_scalar(value, budget)
    if exact is not _NOT_EXACT:
        return exact
    if isinstance(value, CallLog):
        return value.encode(budget)
    if isinstance(value, np.ndarray | np.generic):
        return _encode_array(value, budget)
    if isinstance(value, list | tuple):
        budget[0] -= 8 * len(value)
        if budget[0] < 0:
            raise TooLarge
        items = [encode(item, depth + 1, budget) for item in list.__iter__(list(value))]
        return {"__list__": items} if isinstance(value, list) else {"__tuple__": items}
    if isinstance(value, dict):
        pairs = list(dict.items(value))
        return {"__dict__": [[encode(k, depth + 1, budget), encode(v, depth + 1, budget)] for k, v in pairs]}
    if isinstance(value, int | float | complex | str):
        plain: type = next(kind for kind in (int, float, complex, str) if isinstance(value, kind))
        return encode(plain(value), depth + 1, budget)
    if hasattr(type(value), "__array__") and not isinstance(value, type):  # a JAX array, say: its values
        try:
            return encode(np.asarray(value), depth + 1, budget)
        except Exception:  # noqa: BLE001 - recorded as unsupported below
            pass
    return {"__unsupported__": type(value).__name__}


# --------------------------------------------------------------------------- function answers


class CallLog:
    """A function answer, in the kernel: it calls the function and logs each call.

    The exercise's check runs in the kernel with this in place of the student's
    function; the record keeps the log (arguments, and the result or the exception's
    type and message), never the function.
    """

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function
        self.__name__ = str(getattr(function, "__name__", "function"))
        self.calls: list[dict[str, Any]] = []  # args, then result or error, and args changed in place
        self.overflow = False

    def __call__(self, *args: Any) -> Any:
        encoded = [encode(arg) for arg in args]
        call: dict[str, Any] = {"args": encoded}
        try:
            result = self.function(*args)
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # SystemExit included: the check reports it
            call["error"] = f"{type(error).__name__}: {error}"[:2000]
            raise
        else:
            call["result"] = encode(result)
            return result
        finally:
            after = [encode(arg) for arg in args]
            if not _same(after, encoded):  # the function changed an argument in place
                call["after"] = after
            if len(self.calls) < MAX_CALLS:
                self.calls.append(call)
            else:
                self.overflow = True

    def encode(self, budget: list[int]) -> dict[str, Any]:
        budget[0] -= len(json.dumps(self.calls))
        if budget[0] < 0:
            raise TooLarge
        return {"__calls__": self.calls, "name": self.__name__, "overflow": self.overflow}


class StudentError(Exception):
    """An exception the student's function raised in the kernel (its type and message, as text)."""


class ReplayMismatch(BaseException):
    """The verdict's check called a recorded function in a way the kernel's check did not.

    A ``BaseException``, so that a check that reports what a student's function raises
    (``except Exception``) lets it through to the verdict."""


class Replay:
    """A function answer in the verdict: it answers each call from the kernel's log, in order.

    The check is deterministic, so the verdict's check makes exactly the calls the
    kernel's check made; a call with other arguments, or one more than were logged,
    raises :class:`ReplayMismatch` (the kernel's check was not the package's, or the
    function changed its arguments).
    """

    def __init__(self, data: dict[str, Any]) -> None:
        self.__name__ = str(data.get("name", "function"))
        calls = data.get("__calls__")
        if not isinstance(calls, list) or not all(isinstance(c, dict) and "args" in c for c in calls):
            raise ValueError("a malformed function record")
        self._calls = calls
        self._next = 0

    def __call__(self, *args: Any) -> Any:
        if self._next >= len(self._calls):
            raise ReplayMismatch("the function was called more often than in the notebook")
        call = self._calls[self._next]
        self._next += 1
        if not _same(call["args"], [encode(arg) for arg in args]):
            raise ReplayMismatch("the function was called with other arguments than in the notebook")
        if isinstance(call.get("after"), list) and len(call["after"]) == len(args):
            _change_in_place(args, call["after"])
        if "error" in call:
            kind, _, message = str(call["error"]).partition(": ")
            raise type(kind if kind.isidentifier() else "Error", (StudentError,), {})(message)
        return decode(call.get("result"))


def _change_in_place(args: tuple[Any, ...], after: list[Any]) -> None:
    """Make the arrays among ``args`` hold what the function left in them in the kernel."""
    import numpy as np

    for arg, value in zip(args, after, strict=True):
        if isinstance(arg, np.ndarray) and arg.flags.writeable:
            changed = decode(value)
            if isinstance(changed, np.ndarray) and changed.shape == arg.shape:
                np.copyto(arg, changed, casting="unsafe")


def _same(recorded: Any, now: Any) -> bool:
    """Whether two encoded argument lists hold the same values (arrays by dtype, shape and bytes)."""
    return json.dumps(recorded, sort_keys=True) == json.dumps(now, sort_keys=True)


class Unsupported:
    """A value the kernel could not record (an object of a type no answer has)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __repr__(self) -> str:
        return f"<a {self.kind}>"


# --------------------------------------------------------------------------- reading a record


def decode(data: Any) -> Any:
    """The value :func:`encode` wrote (a recorded function as a :class:`Replay`).

    Raises
    ------
    ValueError
        If ``data`` is not something :func:`encode` writes.
    """
    import numpy as np

    if data is None or isinstance(data, bool | int | float | str):
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
        return [decode(item) for item in data["__list__"]]
    if "__tuple__" in data:
        return tuple(decode(item) for item in data["__tuple__"])
    if "__dict__" in data:
        return {decode(k): decode(v) for k, v in data["__dict__"]}
    if "__ellipsis__" in data:
        return Ellipsis
    if "__int__" in data:
        return int(str(data["__int__"]))
    if "__float__" in data:
        return float(str(data["__float__"]))
    if "__complex__" in data:
        real, imag = data["__complex__"]
        return complex(decode(real), decode(imag))
    if "__calls__" in data:
        return Replay(data)
    if "__unsupported__" in data:
        return Unsupported(str(data["__unsupported__"]))
    raise ValueError("malformed value in a record")


def is_function_answer(value: Any) -> bool:
    """Whether an answer is something to call (a function, a partial, a ufunc), not data."""
    return callable(value) and not isinstance(value, type | types.ModuleType)
