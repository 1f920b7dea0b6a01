"""Reading one field of a model's ``config.json``, checked: the config readers' shared vocabulary.

Every reader of :mod:`posenc_helpers.configs` takes a field through these, so a
wrong field is refused with the same message everywhere: the message names the
field by its path in the config (``rope_scaling.factor``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._validation import describe_value

__all__ = ["config_int", "config_real", "first_present"]


def config_int(config: Mapping[str, Any], key: str, *, path: str | None = None, minimum: int = 1) -> int:
    """The integer ``config[key]``, at least ``minimum``.

    Parameters
    ----------
    config : mapping
        The config (or a mapping inside it, such as ``rope_scaling``).
    key : str
        The field to read; it must be present.
    path : str, optional
        The field's name in messages (default ``key``).
    minimum : int, default 1
        The smallest allowed value.

    Returns
    -------
    int

    Raises
    ------
    TypeError
        If the field is not an integer (a bool is not).
    ValueError
        If it is below ``minimum``.

    Examples
    --------
    >>> config_int({"head_dim": 64}, "head_dim")
    64
    >>> config_int({"head_dim": 0}, "head_dim")
    Traceback (most recent call last):
    ...
    ValueError: config field head_dim must be an integer >= 1, got 0
    """
    value = config[key]
    where = path or key
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"config field {where} must be an integer >= {minimum}, got {describe_value(value)}")
    if value < minimum:
        raise ValueError(f"config field {where} must be an integer >= {minimum}, got {value}")
    return int(value)


def config_real(config: Mapping[str, Any], key: str, *, path: str | None = None) -> float:
    """The finite positive number ``config[key]``, as a float.

    Parameters
    ----------
    config : mapping
        The config (or a mapping inside it).
    key : str
        The field to read; it must be present.
    path : str, optional
        The field's name in messages (default ``key``).

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If the field is not a number (a bool is not).
    ValueError
        If it is not finite or not positive.

    Examples
    --------
    >>> config_real({"factor": 8}, "factor")
    8.0
    >>> config_real({"factor": -1.0}, "factor", path="rope_scaling.factor")
    Traceback (most recent call last):
    ...
    ValueError: config field rope_scaling.factor must be a finite number > 0, got -1.0
    """
    value = config[key]
    where = path or key
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"config field {where} must be a number > 0, got {describe_value(value)}")
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"config field {where} must be a finite number > 0, got {value!r}")
    return value


def first_present(config: Mapping[str, Any], *keys: str) -> str | None:
    """The first of ``keys`` that ``config`` holds with a value other than None, else None.

    Parameters
    ----------
    config : mapping
        The config (or a mapping inside it).
    *keys : str
        The names a field goes by, in order of preference.

    Returns
    -------
    str or None

    Examples
    --------
    >>> first_present({"rotary_emb_base": 10000, "rope_theta": None}, "rope_theta", "rotary_emb_base")
    'rotary_emb_base'
    """
    for key in keys:
        if config.get(key) is not None:
            return key
    return None
