"""Automatic checks for the book's exercises.

Every check follows the same contract (see :mod:`posenc_helpers.checks._core`):
placeholder answers (``None`` or ``...``) give a falsy :class:`CheckResult`
reading "Not attempted yet"; wrong answers raise :class:`CheckFailed` with a
message that says what was expected and where the answer differs, without
revealing the answer; right answers give a truthy :class:`CheckResult`
reading "Correct: ...".

Checks are grouped by the idea they test, one module each.
"""

from ._core import CheckFailed, CheckResult
from .order import (
    check_equivariant_prediction,
    check_permutation_matrix,
    check_symmetry_preserving_signal,
)

__all__ = [
    "CheckFailed",
    "CheckResult",
    "check_permutation_matrix",
    "check_equivariant_prediction",
    "check_symmetry_preserving_signal",
]
