"""Geometry of an encoding table: how far apart its rows are."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_real_array, require_count, require_finite

__all__ = ["min_pairwise_distance", "linear_shift_fit"]

_BLOCK_ROWS = 512  # rows per block: a 512 x 10 000 float64 block is 41 MB


def min_pairwise_distance(encodings: ArrayLike) -> float:
    """Smallest Euclidean distance between two distinct rows of a table.

    "Distinct" means two different row indices: duplicated rows give 0. The
    search is blocked, so 10 000 rows need about 40 MB rather than the
    800 MB of a full distance matrix. Distances are first screened with the
    Gram identity ``|a - b|^2 = |a|^2 + |b|^2 - 2 a.b`` and the closest
    candidates are then recomputed directly as ``|a - b|``, so the result is
    accurate even for nearly equal rows.

    Parameters
    ----------
    encodings : array_like
        Shape ``(n, d)`` with ``n >= 2``, finite real values; one row per
        position.

    Returns
    -------
    float
        The minimum of ``|encodings[i] - encodings[j]|`` over ``i != j``.

    Raises
    ------
    TypeError, ValueError
        If ``encodings`` is not a finite real 2-D array with at least 2 rows.

    Examples
    --------
    >>> min_pairwise_distance([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])
    1.0
    >>> min_pairwise_distance([[1.0, 2.0], [1.0, 2.0]])
    0.0
    """
    table = as_real_array(encodings, "encodings").astype(np.float64)
    if table.ndim != 2:
        raise ValueError(f"encodings must be 2-D (positions x features), got shape {table.shape}")
    n = table.shape[0]
    if n < 2:
        raise ValueError(f"encodings must have at least 2 rows to compare, got {n}")
    require_finite(table, "encodings")

    sq_norms = np.einsum("ij,ij->i", table, table)
    # Rounding error of the Gram identity is at most a few eps * (|a|^2 + |b|^2) * d.
    slack = 8.0 * np.finfo(np.float64).eps * max(table.shape[1], 1) * 2.0 * float(sq_norms.max(initial=0.0))
    best_sq = np.inf
    for start in range(0, n - 1, _BLOCK_ROWS):
        stop = min(start + _BLOCK_ROWS, n)
        rows = table[start:stop]
        # Compare each row in the block with every later row (j > i).
        others = table[start + 1 :]
        gram_sq = sq_norms[start:stop, None] + sq_norms[None, start + 1 :] - 2.0 * rows @ others.T
        row_idx = np.arange(start, stop)[:, None]
        col_idx = np.arange(start + 1, n)[None, :]
        gram_sq[col_idx <= row_idx] = np.inf
        block_min = float(gram_sq.min())
        if block_min > best_sq + 2.0 * slack:
            continue
        threshold = min(block_min, best_sq) + 2.0 * slack
        cand_i, cand_j = np.nonzero(gram_sq <= threshold)
        if cand_i.size > 4096:  # many near-ties: any of them is within slack of the minimum
            keep = np.argpartition(gram_sq[cand_i, cand_j], 4096)[:4096]
            cand_i, cand_j = cand_i[keep], cand_j[keep]
        diffs = rows[cand_i] - others[cand_j]
        exact_sq = float(np.einsum("ij,ij->i", diffs, diffs).min())
        best_sq = min(best_sq, exact_sq)
    return float(np.sqrt(best_sq))


def linear_shift_fit(encodings: ArrayLike, offset: int) -> tuple[np.ndarray, float]:
    """Best single matrix that shifts every row of a table by ``offset`` positions.

    Solves the least-squares problem ``min_M sum_t |M @ E[t] - E[t + offset]|^2``
    over all ``t`` with both rows in the table. If an encoding admits a fixed
    shift map (checklist item "offsets are a fixed map"), the residual is at
    rounding level; if not, no matrix can do better than the residual reported.

    Parameters
    ----------
    encodings : array_like
        Table ``E`` of shape ``(n, d)``, row ``t`` encoding position ``t``.
    offset : int
        The shift in rows, ``1 <= offset < n``.

    Returns
    -------
    matrix : numpy.ndarray
        Shape ``(d, d)``, acting on column vectors: ``E[t + offset] ~ matrix @ E[t]``.
        Unique when the rows ``E[0 .. n - offset - 1]`` span ``R^d``.
    relative_residual : float
        ``|E[:-offset] @ matrix.T - E[offset:]|_F / |E[offset:]|_F`` (0 when the
        target rows are all zero).

    Raises
    ------
    TypeError, ValueError
        If ``encodings`` is not a finite real 2-D array, or ``offset`` is not an
        integer in ``[1, n - 1]``.

    Examples
    --------
    The sinusoidal table is shifted exactly by the rotation ``M(phi)``:

    >>> import numpy as np
    >>> from posenc_helpers import shift_matrix, sinusoidal_encoding
    >>> matrix, residual = linear_shift_fit(sinusoidal_encoding(200, 8), 3)
    >>> bool(np.allclose(matrix, shift_matrix(3, 8))), residual < 1e-12
    (True, True)
    """
    table = as_real_array(encodings, "encodings").astype(np.float64)
    if table.ndim != 2:
        raise ValueError(f"encodings must be 2-D (positions x features), got shape {table.shape}")
    require_finite(table, "encodings")
    n = table.shape[0]
    offset = require_count(offset, "offset", minimum=1)
    if offset >= n:
        raise ValueError(f"offset must be smaller than the number of rows ({n}), got {offset}")
    source, target = table[:-offset], table[offset:]
    solution, *_ = np.linalg.lstsq(source, target, rcond=None)
    scale = float(np.linalg.norm(target))
    residual = float(np.linalg.norm(source @ solution - target))
    return solution.T, (residual / scale if scale > 0 else residual)
