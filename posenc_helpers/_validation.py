"""Argument guards shared by the public functions.

``require_*`` returns the argument, normalised, if it is allowed; ``as_*`` converts
it to an array. Every guard raises ``TypeError`` when the kind of value is wrong and
``ValueError`` when the kind is right but the value is not allowed. Messages always
name the argument and say what is allowed, so a reader can fix the call without
reading this file. (In this book "check" means an exercise check,
:mod:`posenc_helpers.checks`; these are guards.)
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__: list[str] = []


def describe_value(value: Any) -> str:
    """Short description of a value for an error message."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def require_count(value: Any, name: str, *, minimum: int = 0) -> int:
    """Return ``value`` as a Python int if it is a whole number >= ``minimum``.

    Python and numpy integers are accepted; booleans, floats (even 5.0) and
    strings are not.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= {minimum}, got {describe_value(value)}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return value


def require_lengths(values: Any, name: str = "lengths", *, minimum: int = 2) -> list[int]:
    """Return a non-empty sequence of whole numbers ``>= minimum`` as a list of ints."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray, range)):
        raise TypeError(f"{name} must be a sequence of integers >= {minimum}, got {type(values).__name__}")
    items = list(values)
    if not items:
        raise ValueError(f"{name} must hold at least one length")
    for item in items:
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, numbers.Integral):
            raise TypeError(f"{name} must hold integers >= {minimum}, got {item!r}")
        if item < minimum:
            raise ValueError(f"{name} must hold integers >= {minimum}, got {item}")
    return [int(item) for item in items]


def require_even_width(value: Any, name: str) -> int:
    """Return ``value`` as a Python int if it is a positive even integer."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a positive even integer, got {describe_value(value)}")
    value = int(value)
    if value <= 0 or value % 2:
        raise ValueError(f"{name} must be a positive even integer, got {value}")
    return value


def require_positive_real(value: Any, name: str) -> float:
    """Return ``value`` as a float if it is a finite real number > 0."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a finite real number > 0, got {describe_value(value)}")
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite real number > 0, got {value!r}")
    return value


def require_real(value: Any, name: str) -> float:
    """Return ``value`` as a float if it is a finite real number."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a finite real number, got {describe_value(value)}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    return value


def require_choice(value: Any, name: str, allowed: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of the strings in ``allowed``."""
    options = ", ".join(repr(a) for a in allowed)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {options}, got {describe_value(value)}")
    if value not in allowed:
        raise ValueError(f"{name} must be one of {options}, got {value!r}")
    return value


def as_real_array(value: Any, name: str) -> np.ndarray:
    """Convert ``value`` to a float64 array of finite real numbers (any shape)."""
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be an array of real numbers, got {describe_value(value)}")
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged nested lists, for instance
        raise ValueError(f"{name} must be an array of real numbers: {exc}") from None
    if array.dtype == object or not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
        if array.dtype == bool:
            raise TypeError(f"{name} must hold real numbers, not booleans")
        raise TypeError(f"{name} must hold real numbers (integer or floating dtype), got dtype {array.dtype}")
    return array


def as_head_array(x: Any, multiple: int = 2, why: str = "") -> np.ndarray:
    """``x`` as a real array of shape ``(..., seq, head_dim)``, ``head_dim`` a positive multiple of ``multiple``."""
    array = as_real_array(x, "x")
    if array.ndim < 2:
        raise ValueError(f"x must have shape (..., seq, head_dim) with at least 2 dimensions, got shape {array.shape}")
    head_dim = array.shape[-1]
    if head_dim == 0 or head_dim % multiple:
        allowed = "a positive even size" if multiple == 2 else f"a positive multiple of {multiple}"
        reason = f" ({why})" if why else ""
        raise ValueError(f"x's last axis (head_dim) must be {allowed}{reason}, got {head_dim}")
    return array


def require_finite(array: np.ndarray, name: str) -> None:
    """Raise ``ValueError`` if ``array`` holds NaN or infinity."""
    if array.size and not np.all(np.isfinite(array)):
        bad = int(np.flatnonzero(~np.isfinite(array))[0])
        raise ValueError(f"{name} must be finite; entry {bad} (flat index) is {array.ravel()[bad]!r}")


def as_positions(positions: Any, name: str = "positions") -> np.ndarray:
    """Normalise a position argument to a 1-D float64 array.

    An integer ``n`` means the positions ``0 .. n-1``; anything else must be a
    1-D array-like of finite real numbers.
    """
    if isinstance(positions, numbers.Integral) and not isinstance(positions, (bool, np.bool_)):
        count = require_count(positions, name)
        return np.arange(count, dtype=np.float64)
    if isinstance(positions, (bool, np.bool_)):
        raise TypeError(
            f"{name} must be a count (int >= 0) or a 1-D array-like of real numbers, got {describe_value(positions)}"
        )
    if isinstance(positions, numbers.Real):
        raise TypeError(
            f"{name} must be a count (int >= 0) or a 1-D array-like of real numbers; "
            f"got the scalar {describe_value(positions)} (wrap one position in a list: [t])"
        )
    array = as_real_array(positions, name)
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one position per token), got an array of shape {array.shape}")
    array = array.astype(np.float64)
    require_finite(array, name)
    return array


def require_dtype_floating(dtype: Any, name: str = "dtype") -> np.dtype:
    """Return ``np.dtype(dtype)`` if it is a real floating dtype."""
    try:
        resolved = np.dtype(dtype)
    except TypeError:
        raise TypeError(
            f"{name} must be a numpy floating dtype such as np.float32 or np.float64, got {describe_value(dtype)}"
        ) from None
    if not np.issubdtype(resolved, np.floating):
        raise ValueError(f"{name} must be a real floating dtype (float16, float32, float64), got {resolved}")
    return resolved


def require_positive_frequencies(values: Any, name: str) -> np.ndarray:
    """Return ``values`` as a non-empty 1-D float64 array of finite numbers ``> 0`` (frequencies)."""
    array = as_real_array(values, name).astype(np.float64)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array (one frequency per pair), got shape {array.shape}")
    require_finite(array, name)
    if np.any(array <= 0):
        bad = int(np.flatnonzero(array <= 0)[0])
        raise ValueError(f"{name} must hold frequencies > 0; entry {bad} is {array[bad]!r}")
    return array


def as_integer_array(value: Any, name: str) -> np.ndarray:
    """Return ``value`` as an int64 array (any shape): the one policy for integer positions.

    Python and numpy integers are accepted, and so are floats that are whole
    numbers (``3.0``; positions often arrive as floats). Booleans, strings and
    other kinds are a ``TypeError``; fractional or non-finite values a
    ``ValueError`` that names the first one.
    """
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must hold integers, got {describe_value(value)}")
    if isinstance(value, numbers.Integral):
        return np.asarray(int(value), dtype=np.int64)
    array = as_real_array(value, name)
    if array.dtype.kind == "f":
        require_finite(array, name)
        fractional = array != np.round(array)
        if fractional.any():
            bad = array.ravel()[int(np.flatnonzero(fractional.ravel())[0])]
            raise ValueError(f"{name} must hold whole numbers (integer positions), got {float(bad)!r}")
    return array.astype(np.int64)
