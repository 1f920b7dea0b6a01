"""Comparing a student's answer with the expected one: the precision policy, the answers a
student may type, and the messages that say where an answer differs without saying what is
right (the contract every check keeps is :mod:`posenc_helpers.checks._core`).

Precision
---------
One policy for every check (:func:`tolerances`): an answer held in float64, or
in an exact type (integers, booleans), is compared with the check's own
tolerances; an answer held in float32 is compared with a relative tolerance of
at least :data:`SINGLE_PRECISION_RTOL` and, where the check allows an absolute
error at all, an absolute tolerance of that much times the largest magnitude
it expects. Narrower formats (float16, bfloat16) get the float32 tolerance and,
when they fail, a hint to compute in float32 or float64.

Answers a student may type
--------------------------
An exercise whose answer is one real number states the precision it asks for
in its question ("to two decimal places"), and its check compares with
:func:`compare_number` at that :class:`Precision`: an answer passes when it
rounds, at that many decimals, to the value rounded there (the value itself
and more digits of it pass; 2.71 for e = 2.71828... does not, nor does a
truncation that is not the rounding); an answer typed with fewer decimals than
asked for and right to the digits it has is told "close: give more digits"; any
other wrong answer gets one message whichever side of the answer it lies on,
naming no number and no direction (a "too long" or "too short", or a "close"
for anything within some distance of the answer, would let a student bisect
their way to full marks: the edges of a band give away its middle). A
named-mistake hint is given only when the answer matches that mistake at the
same precision. An answer that is one whole number (a position) is compared
exactly, and its messages name no direction either. A number typed as a string
is refused as a string; an array whose every entry is the right one rounded (or
truncated) to a few decimals is told "right to N decimals; give more digits".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._core import CheckFailed

__all__ = [
    "SINGLE_PRECISION_RTOL",
    "answer_eps",
    "tolerances",
    "precision_hint",
    "as_answer_array",
    "as_whole_number",
    "as_real_number",
    "call_student_function",
    "compare_arrays",
    "Precision",
    "compare_number",
    "rounded_decimals",
    "rounds_right",
    "typed_decimals",
]

#: Relative tolerance for answers held in float32 (or narrower): a few hundred times
#: float32's machine epsilon, room for the rounding of a short float32 computation.
SINGLE_PRECISION_RTOL = 1e-5

_FLOAT64_EPS = float(np.finfo(np.float64).eps)
_FLOAT32_EPS = float(np.finfo(np.float32).eps)


# --------------------------------------------------------------------------- precision policy
def _dtype_of(answer: Any) -> np.dtype | None:
    if isinstance(answer, np.ndarray | np.generic):
        return answer.dtype
    try:
        return np.asarray(answer).dtype
    except (TypeError, ValueError):
        return None


def answer_eps(answer: Any) -> float:
    """Machine epsilon of the number format ``answer`` is held in.

    0.0 for exact formats (integers, booleans); float64's epsilon for Python
    floats, lists of them and anything numpy does not see as numbers; the
    format's own epsilon for numpy floats, including types such as bfloat16
    that numpy only knows as extensions.
    """
    dtype = _dtype_of(answer)
    if dtype is None or dtype.kind in "OUSmM":
        return _FLOAT64_EPS
    if dtype.kind in "biu":
        return 0.0
    if dtype.kind in "fc":
        return float(np.finfo(dtype).eps)
    # A float type numpy does not know (bfloat16 from ml_dtypes): find its epsilon by rounding.
    try:
        for bits in range(1, 64):
            if float(np.asarray(1.0 + 2.0**-bits).astype(dtype)) == 1.0:
                return 2.0 ** -(bits - 1)
    except (TypeError, ValueError):
        pass
    return _FLOAT64_EPS


def tolerances(answer: Any, *, atol: float, rtol: float, scale: float = 1.0) -> tuple[float, float]:
    """The ``(atol, rtol)`` to compare ``answer`` with, by the book's precision policy.

    Parameters
    ----------
    answer : object
        The student's answer as given (before any conversion), or a value held
        in the same number format.
    atol, rtol : float
        The check's tolerances for a float64 answer. ``atol = 0`` means the
        check compares relatively only (values that span many orders of
        magnitude, such as frequencies).
    scale : float, optional
        The largest magnitude among the expected values; it sets the absolute
        tolerance of a float32 answer.

    Returns
    -------
    tuple of float
        ``(atol, rtol)`` unchanged for exact and float64 answers; for float32
        and narrower answers ``rtol`` at least :data:`SINGLE_PRECISION_RTOL`
        and ``atol`` (if not 0) at least that times ``scale``.
    """
    if answer_eps(answer) <= _FLOAT64_EPS:
        return atol, rtol
    single_atol = SINGLE_PRECISION_RTOL * (scale if np.isfinite(scale) and scale > 0 else 1.0)
    return (max(atol, single_atol) if atol > 0 else 0.0), max(rtol, SINGLE_PRECISION_RTOL)


def precision_hint(answer: Any) -> str:
    """A sentence for a wrong answer held in a format narrower than float32, else ``""``."""
    eps = answer_eps(answer)
    if eps <= _FLOAT32_EPS:
        return ""
    dtype = _dtype_of(answer)
    digits = int(np.floor(-np.log10(eps)))
    return (
        f" Your answer is stored in {dtype}, which keeps only about {digits} significant digits: "
        "compute it in float32 or float64."
    )


def _scale(expected: np.ndarray) -> float:
    finite = np.abs(expected[np.isfinite(expected)])
    return float(finite.max()) if finite.size else 1.0


# --------------------------------------------------------------------------- answers
def _format_index(index: tuple[int, ...], axes: Sequence[str]) -> str:
    names = list(axes) + [f"axis {i}" for i in range(len(axes), len(index))]
    return ", ".join(f"{name} {i}" for name, i in zip(names, index, strict=False))


def _holds_text(answer: Any) -> bool:
    """Whether ``answer`` is a string, or an array or list holding one (numpy would convert it)."""
    try:
        array = np.asarray(answer) if isinstance(answer, np.ndarray | list | tuple | str | bytes) else np.asarray(0)
    except (TypeError, ValueError):
        return False
    return array.dtype.kind in "US" or (array.dtype.kind == "O" and any(isinstance(x, str) for x in array.ravel()))


def as_answer_array(answer: Any, name: str) -> np.ndarray:
    """Convert an answer to a float array or fail with a message about its type (a number typed
    as a string, ``'0.5'``, is refused: the answer is a number, a string is text)."""
    if _holds_text(answer):
        text = "a string" if np.ndim(answer) == 0 else "strings"
        raise CheckFailed(f"{name} should be a numpy array of numbers, not {text}: write the numbers without quotes.")
    try:
        array = np.asarray(answer, dtype=np.float64)
    except (TypeError, ValueError):
        raise CheckFailed(
            f"{name} should be a numpy array of numbers; got {type(answer).__name__}, which cannot be converted to one."
        ) from None
    return array


def as_whole_number(answer: Any, name: str, what: str = "number") -> int:
    """Convert an answer that should be one whole number, or fail saying why it is not one.

    Integers, whole floats of any precision and arrays holding one of them are
    accepted; booleans, other shapes, fractions and non-finite values fail.
    ``what`` names the number in messages, e.g. ``"position"``.
    """
    value = _one_number(answer, name, what, "whole number")
    if value != round(value):
        raise CheckFailed(f"{name} should be a whole number (a {what}); yours is {value:.6g}.")
    return int(round(value))


def as_real_number(answer: Any, name: str, what: str = "number") -> float:
    """Convert an answer that should be one real number, or fail saying why it is not one.

    Numbers of any precision and arrays holding one are accepted; booleans,
    strings, other shapes and non-finite values fail. ``what`` names the
    number in messages, e.g. ``"wavelength in tokens"``.
    """
    return _one_number(answer, name, what, "number")


def _one_number(answer: Any, name: str, what: str, kind: str) -> float:
    """One finite number from an answer, or CheckFailed saying why it is not one (``kind``:
    "number" or "whole number")."""
    if isinstance(answer, bool | np.bool_):
        raise CheckFailed(f"{name} should be a {kind} (a {what}), not a boolean.")
    if _holds_text(answer):
        raise CheckFailed(f"{name} should be a {kind}, not a string: write the {kind} without quotes.")
    array = as_answer_array(answer, name)
    if array.size != 1:
        raise CheckFailed(f"{name} should be one {what} (a single {kind}); yours has shape {array.shape}.")
    value = float(array.ravel()[0])
    if not np.isfinite(value):
        raise CheckFailed(f"{name} should be a {kind} (a {what}); yours is not a finite number (NaN or inf).")
    return value


def call_student_function(function: Callable[..., Any], *args: Any, call: str) -> Any:
    """Call a function the student wrote; if it raises, fail with a message naming the call.

    ``call`` is how the call reads in the message, e.g. ``"your function with s = 3"``.
    """
    try:
        return function(*args)
    except Exception as exc:  # noqa: BLE001 - report any failure of the student's code
        raise CheckFailed(
            f"calling {call} raised {type(exc).__name__}: {exc}. Call it yourself to see where it fails."
        ) from None


def compare_arrays(
    answer: Any,
    expected: np.ndarray,
    *,
    name: str,
    description: str,
    axes: Sequence[str] = (),
    atol: float = 1e-8,
    rtol: float = 1e-6,
    known_mistakes: Sequence[tuple[np.ndarray, str]] = (),
    plural: bool = False,
    locate: Callable[[tuple[int, ...]], str] | None = None,
    given: Any = None,
) -> None:
    """Raise :class:`CheckFailed` unless ``answer`` matches ``expected``.

    Parameters
    ----------
    answer : array_like
        The student's answer.
    expected : numpy.ndarray
        The reference (never shown in messages).
    name : str
        How the answer is called in the exercise, e.g. ``"P"``.
    description : str
        What the answer should be, e.g. ``"the 3 x 3 permutation matrix"``.
    axes : sequence of str, optional
        Names of the axes, used to say where the first difference is.
    atol, rtol : float, optional
        Tolerances for a float64 answer, as in :func:`numpy.allclose`; float32
        answers are compared by :func:`tolerances`.
    known_mistakes : sequence of (array, str), optional
        Wrong answers that a common mistake produces, each with a hint. If the
        answer equals one of them, the hint is added to the message.
    plural : bool, optional
        Whether ``name`` is a plural ("your weights are ..."). Default False.
    locate : callable, optional
        Turns the index of an entry into the words for it that follow "The
        first is", e.g. ``"the key at position 280"``. Default: ``"at "``
        followed by the axes and indices.
    given : object, optional
        The answer as the student gave it, when ``answer`` is already a
        conversion of it; its number format sets the tolerances. Default:
        ``answer`` itself.
    """
    original = answer if given is None else given
    array = as_answer_array(answer, name)
    verb = "are" if plural else "is"

    def where(index: tuple[int, ...]) -> str:
        return locate(index) if locate is not None else f"at {_format_index(index, axes)}"

    if array.shape != expected.shape:
        hint = ""
        if array.ndim == 2 and array.shape == expected.shape[::-1]:
            hint = " It looks transposed."
        raise CheckFailed(
            f"{name} should be {description}, of shape {expected.shape}; yours has shape {array.shape}.{hint}"
        )
    if not np.all(np.isfinite(array)):
        if array.ndim == 0:
            raise CheckFailed(f"{name} is not a finite number (NaN or inf).")
        first_bad = tuple(int(i) for i in np.argwhere(~np.isfinite(array))[0])
        raise CheckFailed(f"{name} holds a non-finite value (NaN or inf); the first is {where(first_bad)}.")
    atol, rtol = tolerances(original, atol=atol, rtol=rtol, scale=_scale(expected))
    close = np.isclose(array, expected, atol=atol, rtol=rtol)
    if close.all():
        return
    for mistake, hint in known_mistakes:
        if mistake.shape == array.shape and np.allclose(array, mistake, atol=atol, rtol=rtol):
            raise CheckFailed(f"{name} {verb} not yet {description}. Hint: {hint}")
    low_precision = precision_hint(original)
    decimals = None if low_precision else rounded_decimals(array, expected)
    if decimals is not None:
        places = "decimal" if decimals == 1 else "decimals"
        raise CheckFailed(
            f"{name} {verb} not yet {description}: {'they are' if plural else 'it is'} right to {decimals} "
            f"{places}; give more digits (compute the values in numpy instead of typing them rounded)."
        )
    if array.ndim == 0:
        raise CheckFailed(f"{name} {verb} not yet {description}: yours is {float(array):.6g}.{low_precision}")
    first = tuple(int(i) for i in np.argwhere(~close)[0])
    count = int((~close).sum())
    raise CheckFailed(
        f"{name} {verb} not yet {description}: {count} of {close.size} entries differ. "
        f"The first is {where(first)}, where yours is {array[first]:.6g}.{low_precision}"
    )


def rounded_decimals(answer: np.ndarray, expected: np.ndarray, most: int = 8) -> int | None:
    """The fewest decimals ``n`` (1 to ``most``) at which every entry of ``answer`` is the
    entry of ``expected`` rounded or truncated to ``n`` decimals, or None.

    >>> exact = np.array([0.6569866, 0.75390225, 0.99988628])
    >>> rounded_decimals(np.round(exact, 3), exact), rounded_decimals(np.trunc(exact * 100) / 100, exact)
    (3, 2)
    """
    if answer.shape != expected.shape or not np.all(np.isfinite(expected)):
        return None
    for decimals in range(1, most + 1):
        unit = 10.0**-decimals
        slack = 1e-6 * unit + 1e-7 * np.abs(expected)  # a float32 answer holds 0.657 as 0.65700001
        rounded = np.abs(answer - np.round(expected, decimals)) <= slack
        truncated = np.abs(answer - np.trunc(expected / unit) * unit) <= slack
        if np.all(rounded | truncated):
            return decimals
    return None


# --------------------------------------------------------------------------- one real number
_NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


@dataclass(frozen=True)
class Precision:
    """The precision an exercise asks a real-number answer to: a number of decimal places.

    An answer passes when it rounds to the right value at that many places
    (:func:`rounds_right`); the question states it in the same words (``words``).

    Examples
    --------
    >>> Precision(2).words, Precision(2).tolerance
    ('two decimal places', 0.01)
    """

    decimals: int

    def __post_init__(self) -> None:
        if not isinstance(self.decimals, int) or isinstance(self.decimals, bool) or not 1 <= self.decimals <= 9:
            raise ValueError(f"decimals must be an integer from 1 to 9, got {self.decimals!r}")

    @property
    def tolerance(self) -> float:
        """One unit of the last decimal asked for (named mistakes are recognised within it)."""
        return 10.0**-self.decimals

    @property
    def words(self) -> str:
        """The precision as the question says it, e.g. ``"two decimal places"``."""
        return f"{_NUMBER_WORDS[self.decimals]} decimal {'place' if self.decimals == 1 else 'places'}"


def compare_number(
    answer: Any,
    expected: float,
    *,
    name: str,
    description: str,
    precision: Precision,
    what: str = "number",
    known_mistakes: Sequence[tuple[float, str]] = (),
    advice: str = "",
) -> None:
    """Raise :class:`CheckFailed` unless ``answer`` is ``expected`` at the precision the question asks for.

    Parameters
    ----------
    answer : float or array_like
        The student's answer: one number (an array holding one is accepted).
    expected : float
        The exact value (never shown in messages).
    name : str
        How the answer is called in messages, e.g. ``"your wavelength"``.
    description : str
        What the answer should be, after "is not yet", e.g. ``"the wavelength of dimension 3"``.
    precision : Precision
        The precision the exercise's question states. An answer passes when it
        rounds, at its decimals, to ``expected`` rounded there
        (:func:`rounds_right`).
    what : str, optional
        What kind of number the answer is, for messages about its type.
    known_mistakes : sequence of (float, str), optional
        Values that common mistakes give, each with a hint. The hint is given
        when the answer matches the mistake at the same precision, and never for
        a mistake that is itself within that precision of ``expected``.
    advice : str, optional
        A sentence added to the message for any other wrong answer: what to
        compute, in words (it must not depend on where the answer lies).

    Raises
    ------
    CheckFailed
        If the answer is not one finite number, or not ``expected`` at the
        precision: with a hint for a named mistake; "close: give more digits"
        for an answer typed with fewer decimals than asked for that is
        ``expected`` rounded or truncated to those decimals
        (:func:`typed_decimals`); otherwise one message whichever side the
        answer lies on, naming no number.

    Examples
    --------
    >>> import math
    >>> compare_number(3.14, math.pi, name="your angle", description="half a turn in radians",
    ...                precision=Precision(2))
    >>> compare_number(3.1, math.pi, name="your angle", description="half a turn in radians",
    ...                precision=Precision(2))
    Traceback (most recent call last):
        ...
    posenc_helpers.checks.CheckFailed: your angle is close: it is right to the digits it has; give more digits (the
    question asks for two decimal places).
    """
    value = as_real_number(answer, name, what)
    atol, rtol = tolerances(answer, atol=precision.tolerance, rtol=0.0, scale=abs(expected))
    atol *= 1.0 + 1e-9  # a mistake typed at exactly one unit of the last decimal away is still named

    def matches(a: float, b: float) -> bool:
        return abs(a - b) <= atol + rtol * abs(b)

    if rounds_right(answer, expected, precision):
        return
    for mistake, hint in known_mistakes:
        if np.isfinite(mistake) and not matches(mistake, expected) and matches(value, mistake):
            raise CheckFailed(f"{name} is not yet {description}. Hint: {hint}")
    low_precision = precision_hint(answer)
    if _right_to_its_digits(answer, value, expected, precision):
        raise CheckFailed(
            f"{name} is close: it is right to the digits it has; give more digits (the question asks for "
            f"{precision.words}).{low_precision}"
        )
    raise CheckFailed(f"{name} is not yet {description}.{' ' + advice if advice else ''}{low_precision}")


def rounds_right(answer: Any, expected: float, precision: Precision) -> bool:
    """Whether ``answer`` rounds, at ``precision``'s decimals, to ``expected`` rounded there (the
    value itself passes in the precision it is held in; at a tie either rounding does).

    >>> [rounds_right(typed, 2.7182818, Precision(2)) for typed in (2.72, 2.718, 2.71, 2.73)]
    [True, True, False, False]
    """
    value = float(np.asarray(answer, dtype=np.float64).ravel()[0])
    held = min(max(answer_eps(answer), _FLOAT64_EPS), _FLOAT32_EPS)  # float16 is no excuse for a digit
    if abs(value - expected) <= 4.0 * held * max(1.0, abs(expected)):
        return True
    unit = precision.tolerance
    return abs(round(value / unit) * unit - expected) <= 0.5 * unit * (1.0 + 1e-9)


def typed_decimals(answer: Any) -> int:
    """How many decimals a number was typed with: those of the shortest decimal that is it.

    Examples
    --------
    >>> typed_decimals(2.7), typed_decimals(3.0), typed_decimals(np.float32(2.72))
    (1, 0, 2)
    """
    item = np.asarray(answer).ravel()[0]
    if item.dtype.kind not in "fiu" or not np.isfinite(item):
        return 0
    if item.dtype.kind in "iu":
        return 0
    text = np.format_float_positional(item, unique=True, trim="-")
    return len(text.split(".")[1]) if "." in text else 0


def _right_to_its_digits(answer: Any, value: float, expected: float, precision: Precision) -> bool:
    """Whether ``value`` has fewer decimals than asked for and is ``expected`` rounded or
    truncated to the decimals it has."""
    digits = typed_decimals(answer)
    if digits >= precision.decimals:
        return False
    unit = 10.0**-digits
    rounded = round(expected / unit) * unit
    truncated = math.trunc(expected / unit) * unit
    return any(abs(value - target) <= 1e-9 * max(1.0, abs(target)) for target in (rounded, truncated))
