"""Near-collisions of one sine over integer positions (chapter 03).

``sin(omega * t)`` is bounded but periodic. For ``omega = 1`` integer positions
never repeat exactly (pi is irrational), yet some come very close to the value
of another position, either on the same slope of the wave (a near-repeat) or on
the opposite slope (a mirror image, ``sin(x) = sin(pi - x)``).
"""

from __future__ import annotations

import numpy as np

from ._validation import require_count, require_positive_real

__all__ = ["collision_scan"]


def collision_scan(omega: float, n_positions: int, reference: int, threshold: float) -> dict[str, np.ndarray]:
    """Gaps ``|sin(omega t) - sin(omega r)|`` for ``t = 0 .. n_positions-1`` and who collides.

    Parameters
    ----------
    omega : float
        Angular frequency in radians per token, ``> 0``.
    n_positions : int
        Number of integer positions scanned, ``>= 2``.
    reference : int
        The position ``r`` the others are compared with, ``0 <= r < n_positions``.
    threshold : float
        A position ``t != r`` collides with ``r`` when its gap is below this, ``> 0``.

    Returns
    -------
    dict
        ``positions`` (float array), ``gaps`` (float array), ``same`` and
        ``opposite`` (integer arrays of the colliding positions whose slope
        ``cos(omega t)`` has the same or the opposite sign as at ``r``), each
        sorted by increasing position.

    Raises
    ------
    TypeError, ValueError
        If an argument is not of the kind or in the range above.

    Notes
    -----
    The scan finds near-collisions only: at a rational ``omega`` such as 1, two
    integer positions never collide exactly, since that would make pi rational.

    Examples
    --------
    >>> scan = collision_scan(1.0, 800, 0, 1e-3)
    >>> scan["same"].tolist(), scan["opposite"].tolist()
    ([710], [355])
    """
    omega = require_positive_real(omega, "omega")
    n_positions = require_count(n_positions, "n_positions", minimum=2)
    reference = require_count(reference, "reference", minimum=0)
    if reference >= n_positions:
        raise ValueError(f"reference must be a position in 0 .. {n_positions - 1}, got {reference}")
    threshold = require_positive_real(threshold, "threshold")
    positions = np.arange(n_positions, dtype=np.float64)
    angles = omega * positions
    values, slopes = np.sin(angles), np.cos(angles)
    gaps = np.abs(values - values[reference])
    collide = gaps < threshold
    collide[reference] = False
    same_sign = np.sign(slopes) == np.sign(slopes[reference])
    return {
        "positions": positions,
        "gaps": gaps,
        "same": np.flatnonzero(collide & same_sign),
        "opposite": np.flatnonzero(collide & ~same_sign),
    }
