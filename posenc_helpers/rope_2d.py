"""RoPE with more than one position axis: 2-D axial RoPE and multimodal RoPE (M-RoPE).

A token of an image has two coordinates, a row and a column; a frame of a video
three, time, row and column. Both schemes keep RoPE's rotations and give each
frequency pair one of the coordinates:

:func:`axial_rope`
    the first half of a head's features is rotated by the row, the second half
    by the column, each half as a 1-D RoPE of half the width (the "axial"
    variant of Heo et al.). The score of a query at ``(r1, c1)`` and a key at
    ``(r2, c2)`` then depends only on ``(r1 - r2, c1 - c2)``.
:func:`multimodal_rope`
    Qwen2-VL's M-RoPE: the head's ordinary RoPE frequencies, with consecutive
    sections of pairs following the temporal, height and width position. A text
    token has the same number on all three axes, and then M-RoPE is exactly
    1-D RoPE. Qwen3-VL and Qwen3.5 interleave the axes instead
    (``arrangement="interleaved"``: pairs 0, 3, 6, ... follow time, 1, 4, 7, ...
    height and 2, 5, 8, ... width, the leftover pairs time), so that every axis
    gets fast and slow frequencies; :func:`mrope_pair_axes` says which pair
    follows which axis.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from ._validation import (
    as_head_array,
    as_positions,
    as_real_array,
    describe_value,
    require_choice,
    require_positive_real,
)
from .rope import apply_rope, rope_frequencies

__all__ = ["axial_rope", "multimodal_rope", "mrope_pair_axes"]

MROPE_ARRANGEMENTS = ("sectioned", "interleaved")


def _require_coordinate(values: ArrayLike, name: str, seq: int) -> np.ndarray:
    t = as_positions(values, name)
    if t.shape[0] != seq:
        raise ValueError(
            f"{name} must have one entry per row of x's sequence axis (x.shape[-2] = {seq}), got {t.shape[0]}"
        )
    return t


def axial_rope(
    x: ArrayLike,
    rows: ArrayLike,
    cols: ArrayLike,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
) -> np.ndarray:
    """2-D axial RoPE: half of each head rotated by the row, half by the column.

    With ``h = head_dim / 2``, features ``0 .. h-1`` are rotated as 1-D RoPE of
    width ``h`` at position ``rows[n]`` and features ``h .. head_dim-1`` as 1-D
    RoPE of width ``h`` at position ``cols[n]``, both with frequencies
    ``base**(-2i / h)``. Each half is exactly
    :func:`~posenc_helpers.apply_rope` on that half.

    Parameters
    ----------
    x : array_like
        Queries or keys, shape ``(..., seq, head_dim)`` with ``head_dim`` a
        positive multiple of 4 (two halves of whole pairs).
    rows, cols : array_like
        The row and the column of each of the ``seq`` tokens: 1-D, finite,
        length ``seq`` (or a count ``seq`` meaning ``0 .. seq-1``).
    base : float, optional
        RoPE base of both halves, ``> 0``. Default 10000.
    layout : {"interleaved", "half"}, optional
        Pairing within each half, as in :func:`~posenc_helpers.apply_rope`.

    Returns
    -------
    numpy.ndarray
        The rotated array, same shape as ``x`` (float64 for integer input).

    Raises
    ------
    TypeError, ValueError
        If ``x`` is not a real array of at least two dimensions whose last
        axis is a positive multiple of 4, ``rows`` or ``cols`` is not a 1-D
        finite array of length ``seq``, ``base`` is not ``> 0`` or ``layout``
        is unknown.

    See Also
    --------
    multimodal_rope, posenc_helpers.apply_rope

    References
    ----------
    .. [1] B. Heo, S. Park, D. Han, S. Yun, "Rotary Position Embedding for
       Vision Transformer", ECCV 2024 (arXiv:2403.13298), section 3.2 (axial
       frequency).

    Examples
    --------
    A 4-feature head: the first pair turns by the row (1 radian per row), the
    second by the column (1 radian per column).

    >>> import numpy as np
    >>> out = axial_rope(np.array([[1.0, 0.0, 1.0, 0.0]]), rows=[1], cols=[2])
    >>> bool(np.allclose(out, [[np.cos(1), np.sin(1), np.cos(2), np.sin(2)]]))
    True

    Scores depend on the difference of rows and of columns only:

    >>> rng = np.random.default_rng(0)
    >>> q, k = rng.normal(size=(2, 1, 8))
    >>> s1 = axial_rope(q, [3], [5])[0] @ axial_rope(k, [1], [1])[0]
    >>> s2 = axial_rope(q, [12], [9])[0] @ axial_rope(k, [10], [5])[0]
    >>> bool(np.isclose(s1, s2))
    True
    """
    array = as_head_array(x, 4, "two halves, each of whole feature pairs")
    seq = array.shape[-2]
    r = _require_coordinate(rows, "rows", seq)
    c = _require_coordinate(cols, "cols", seq)
    base = require_positive_real(base, "base")
    half = array.shape[-1] // 2
    out = np.concatenate(
        [
            apply_rope(array[..., :half], r, base=base, layout=layout),
            apply_rope(array[..., half:], c, base=base, layout=layout),
        ],
        axis=-1,
    )
    return out


def _require_sections(sections: Sequence[int], pairs: int) -> tuple[int, ...]:
    if isinstance(sections, (str, bytes)) or not isinstance(sections, (Sequence, np.ndarray)):
        raise TypeError(f"sections must be a sequence of integers >= 0, got {describe_value(sections)}")
    items = list(sections)
    for item in items:
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, numbers.Integral):
            raise TypeError(f"sections must hold integers >= 0, got {describe_value(item)}")
        if item < 0:
            raise ValueError(f"sections must hold integers >= 0, got {item}")
    if sum(items) != pairs:
        raise ValueError(
            f"sections must add up to the number of frequency pairs head_dim // 2 = {pairs}, "
            f"got {tuple(int(n) for n in items)} (sum {sum(items)})"
        )
    return tuple(int(n) for n in items)


def mrope_pair_axes(sections: Sequence[int], *, arrangement: str = "sectioned") -> np.ndarray:
    """Which position axis each frequency pair of M-RoPE follows.

    Parameters
    ----------
    sections : sequence of int
        How many pairs follow each axis (Hugging Face's ``mrope_section``),
        integers ``>= 0``; their sum is the number of pairs ``head_dim // 2``.
    arrangement : {"sectioned", "interleaved"}, optional
        ``"sectioned"`` (Qwen2-VL, Qwen2.5-VL): consecutive blocks, axis 0 first.
        ``"interleaved"`` (Qwen3-VL, Qwen3.5; three axes only): pair ``i`` follows
        axis 1 if ``i % 3 == 1`` and ``i < 3 * sections[1]``, axis 2 if
        ``i % 3 == 2`` and ``i < 3 * sections[2]``, else axis 0. Default
        ``"sectioned"``.

    Returns
    -------
    numpy.ndarray
        int64, shape ``(sum(sections),)``: the axis of each pair.

    Raises
    ------
    TypeError, ValueError
        If ``sections`` is not a sequence of integers ``>= 0``, ``arrangement``
        is unknown, or an interleaved arrangement is not of three axes or does
        not give each axis exactly its section's count of pairs.

    References
    ----------
    .. [1] Hugging Face, transformers, ``models/qwen3_vl/modeling_qwen3_vl.py``
       (``Qwen3VLTextRotaryEmbedding.apply_interleaved_mrope``).

    Examples
    --------
    >>> mrope_pair_axes([2, 1, 1]).tolist()
    [0, 0, 1, 2]
    >>> mrope_pair_axes([3, 2, 2], arrangement="interleaved").tolist()
    [0, 1, 2, 0, 1, 2, 0]
    """
    arrangement = require_choice(arrangement, "arrangement", MROPE_ARRANGEMENTS)
    if isinstance(sections, (str, bytes)) or not isinstance(sections, (Sequence, np.ndarray)):
        raise TypeError(f"sections must be a sequence of integers >= 0, got {describe_value(sections)}")
    parts = _require_sections(sections, sum(int(n) for n in sections if isinstance(n, numbers.Integral)))
    pairs = sum(parts)
    if arrangement == "sectioned":
        return np.repeat(np.arange(len(parts)), parts).astype(np.int64)
    if len(parts) != 3:
        raise ValueError(f"sections must have three entries (time, height, width) when interleaved, got {parts}")
    axes = np.zeros(pairs, dtype=np.int64)
    for axis, offset in ((1, 1), (2, 2)):
        axes[offset : 3 * parts[axis] : 3] = axis
    counts = tuple(int(np.sum(axes == a)) for a in range(3))
    if counts != parts:
        raise ValueError(
            f"sections {parts} cannot be interleaved over {pairs} pairs: pairs 1, 4, 7, ... and 2, 5, 8, ... "
            f"up to 3 * section give the axes {counts} pairs"
        )
    return axes


def multimodal_rope(
    x: ArrayLike,
    positions: ArrayLike,
    sections: Sequence[int],
    *,
    base: float = 10000.0,
    layout: str = "half",
    arrangement: str = "sectioned",
) -> np.ndarray:
    """Multimodal RoPE (M-RoPE): consecutive sections of pairs follow different position axes.

    Pair ``i`` has the ordinary frequency ``theta_i = base**(-2i / head_dim)``
    and is rotated by ``positions[a, n] * theta_i``, where axis ``a`` is the
    section that pair ``i`` falls in: pairs ``0 .. sections[0]-1`` follow axis
    0, the next ``sections[1]`` pairs axis 1, and so on. Qwen2-VL uses three
    axes (temporal, height, width); a text token has the same position on all
    of them, which makes M-RoPE identical to 1-D RoPE.

    Parameters
    ----------
    x : array_like
        Queries or keys, shape ``(..., seq, head_dim)``, ``head_dim`` even.
    positions : array_like
        Shape ``(axes, seq)``: the position of each token along each axis,
        finite real numbers.
    sections : sequence of int
        How many consecutive pairs follow each axis: ``axes`` integers ``>= 0``
        adding up to ``head_dim // 2``.
    base : float, optional
        RoPE base, ``> 0``. Default 10000.
    layout : {"interleaved", "half"}, optional
        Which features form a pair, as in :func:`~posenc_helpers.apply_rope`.
        Default ``"half"``, the Hugging Face layout Qwen2-VL uses.
    arrangement : {"sectioned", "interleaved"}, optional
        How the pairs are shared between the axes (:func:`mrope_pair_axes`):
        consecutive sections (Qwen2-VL, default) or interleaved (Qwen3-VL).

    Returns
    -------
    numpy.ndarray
        The rotated array, same shape as ``x`` (float64 for integer input).

    Raises
    ------
    TypeError, ValueError
        If ``x`` is not a real array of at least two dimensions with an even
        last axis, ``positions`` is not a finite real array of shape
        ``(len(sections), seq)``, ``sections`` is not a sequence of integers
        ``>= 0`` adding up to ``head_dim // 2``, ``base`` is not ``> 0``,
        ``layout`` or ``arrangement`` is unknown, or the sections cannot be
        interleaved.

    See Also
    --------
    axial_rope, posenc_helpers.apply_rope

    Notes
    -----
    Rotations of different pairs act on different features and commute, so
    M-RoPE is computed as one :func:`~posenc_helpers.apply_rope` per axis with
    the frequencies of the other axes' pairs set to zero (a zero angle is the
    identity).

    References
    ----------
    .. [1] P. Wang et al., "Qwen2-VL: Enhancing Vision-Language Model's
       Perception of the World at Any Resolution", arXiv:2409.12191, 2024,
       section 2.1 (Multimodal Rotary Position Embedding).
    .. [2] Hugging Face, transformers, ``models/qwen2_vl/modeling_qwen2_vl.py``
       (``apply_multimodal_rotary_pos_emb``, ``mrope_section``).

    Examples
    --------
    A text token (equal positions on every axis) is rotated as by 1-D RoPE:

    >>> import numpy as np
    >>> from posenc_helpers import apply_rope
    >>> x = np.arange(16.0).reshape(2, 8)
    >>> same = np.array([[4.0, 5.0]] * 3)
    >>> bool(np.allclose(multimodal_rope(x, same, (1, 2, 1)), apply_rope(x, [4.0, 5.0], layout="half")))
    True
    >>> bool(np.allclose(multimodal_rope(x, same, (2, 1, 1), arrangement="interleaved"),
    ...                  apply_rope(x, [4.0, 5.0], layout="half")))
    True
    """
    array = as_head_array(x)
    head_dim = array.shape[-1]
    parts = _require_sections(sections, head_dim // 2)
    grid = as_real_array(positions, "positions").astype(np.float64)
    seq = array.shape[-2]
    if grid.shape != (len(parts), seq):
        raise ValueError(
            f"positions must have shape (len(sections), seq) = ({len(parts)}, {seq}), one row per axis, "
            f"got shape {grid.shape}"
        )
    if not np.all(np.isfinite(grid)):
        raise ValueError("positions must be finite (no NaN or inf)")
    base = require_positive_real(base, "base")
    theta = rope_frequencies(head_dim, base=base)
    axis_of_pair = mrope_pair_axes(parts, arrangement=arrangement)
    out = np.asarray(array, dtype=np.float64) if not np.issubdtype(array.dtype, np.floating) else array
    for axis in range(len(parts)):
        inv_freq = np.where(axis_of_pair == axis, theta, 0.0)
        out = apply_rope(out, grid[axis], inv_freq=inv_freq, layout=layout)
    return out
