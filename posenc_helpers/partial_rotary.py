"""Which features turn in a partially rotary head: ordinary partial rotary against proportional p-RoPE.

Two schemes rotate only part of a head, and they are easily confused when a
model is ported:

``"partial"`` (GPT-NeoX ``rotary_pct``, Hugging Face ``partial_rotary_factor`` in
    Qwen3-Next / Qwen3.5 and most models)
    the first ``r = int(head_dim * partial_rotary_factor)`` features are a RoPE
    head of width ``r``: pair ``i`` joins features ``i`` and ``i + r/2`` and turns
    at ``base**(-2i / r)``; features ``r .. head_dim-1`` never turn.
``"proportional"`` (p-RoPE of Barbero et al.; Gemma 4's global layers,
    ``rope_type: "proportional"``)
    the whole head keeps its half-split pairing, feature ``i`` with
    ``i + head_dim/2``; only the first ``int(partial_rotary_factor * head_dim // 2)``
    pairs turn, at ``base**(-2i / head_dim)`` (the exponent's denominator is the
    full head width), and the other pairs have frequency zero.

The fastest pair turns at one radian per token in both; the slowest turning
pair of the proportional scheme is as slow as the pair of the same index in a
fully rotary head, while the partial scheme's slowest pair is as slow as the
slowest pair of the full head.
"""

from __future__ import annotations

import numpy as np

from ._validation import require_choice, require_even_width, require_positive_real
from .sinusoidal import geometric_frequencies

__all__ = ["partial_rotary_pairs", "proportional_frequencies"]

PARTIAL_ROTARY_STYLES = ("partial", "proportional")


def proportional_frequencies(head_dim: int, base: float, partial_rotary_factor: float, factor: float) -> np.ndarray:
    """Proportional RoPE's frequencies (no validation): Hugging Face's ``_compute_proportional_rope_parameters``.

    The first ``int(partial_rotary_factor * head_dim // 2)`` pairs turn at
    ``base**(-2i / head_dim)``, every other pair at 0, all divided by
    ``factor``; in float64. The one formula behind
    :func:`~posenc_helpers.scaled_rope_frequencies` (``method="proportional"``)
    and :func:`partial_rotary_pairs` (``style="proportional"``), which check
    their arguments and then call it: give it a positive even ``head_dim``,
    ``base > 0``, a share in ``(0, 1]`` and ``factor > 0``.

    Examples
    --------
    >>> proportional_frequencies(8, 10000.0, 0.5, 1.0)
    array([1. , 0.1, 0. , 0. ])
    """
    rope_angles = int(partial_rotary_factor * head_dim // 2)
    inv_freq = np.zeros(head_dim // 2, dtype=np.float64)
    inv_freq[:rope_angles] = 1.0 / base ** (np.arange(0, 2 * rope_angles, 2, dtype=np.float64) / head_dim)
    return inv_freq / factor


def partial_rotary_pairs(
    head_dim: int, partial_rotary_factor: float, *, base: float = 10000.0, style: str
) -> tuple[np.ndarray, np.ndarray]:
    """The feature pairs of a partially rotary head and the frequency each turns at.

    Parameters
    ----------
    head_dim : int
        Width of one attention head, a positive even integer.
    partial_rotary_factor : float
        The rotated share, in ``(0, 1]``.
    base : float, optional
        RoPE base ``rope_theta``, ``> 0``. Default 10000.
    style : {"partial", "proportional"}
        Ordinary partial rotary or proportional p-RoPE (module docstring).

    Returns
    -------
    pairs : numpy.ndarray
        Integer array of shape ``(head_dim // 2, 2)``: the two features of each
        pair, in the half-split layout the Hugging Face code uses. For
        ``"partial"`` the pairs past the rotary width are the untouched features
        ``(r + 2j, r + 2j + 1)``, listed so that every feature appears once.
    inv_freq : numpy.ndarray
        Shape ``(head_dim // 2,)``: radians per token of each pair, 0 for a pair
        that does not turn.

    Raises
    ------
    TypeError, ValueError
        If ``head_dim`` is not a positive even integer, ``partial_rotary_factor``
        is not in ``(0, 1]``, ``base`` is not ``> 0``, ``style`` is unknown, or
        the rotated width of ``"partial"`` is not a positive even number.

    References
    ----------
    .. [1] Hugging Face, transformers v5, ``src/transformers/modeling_rope_utils.py``:
       ``_compute_default_rope_parameters`` (``dim = head_dim * partial_rotary_factor``)
       and ``_compute_proportional_rope_parameters`` (``rope_angles =
       int(partial_rotary_factor * head_dim // 2)``, zeros after them).
    .. [2] F. Barbero et al., "Round and Round We Go! What makes Rotary
       Positional Encodings useful?", ICLR 2025 (arXiv:2410.06205).

    Examples
    --------
    A head of 8 features (4 pairs) with half of it rotary:

    >>> pairs, inv = partial_rotary_pairs(8, 0.5, style="proportional")
    >>> pairs.tolist(), inv.tolist()
    ([[0, 4], [1, 5], [2, 6], [3, 7]], [1.0, 0.1, 0.0, 0.0])
    >>> pairs, inv = partial_rotary_pairs(8, 0.5, style="partial")
    >>> pairs.tolist(), inv.tolist()
    ([[0, 2], [1, 3], [4, 5], [6, 7]], [1.0, 0.01, 0.0, 0.0])
    """
    head_dim = require_even_width(head_dim, "head_dim")
    share = require_positive_real(partial_rotary_factor, "partial_rotary_factor")
    if share > 1.0:
        raise ValueError(f"partial_rotary_factor must be in (0, 1] (the rotated share), got {share!r}")
    base = require_positive_real(base, "base")
    style = require_choice(style, "style", PARTIAL_ROTARY_STYLES)
    half = head_dim // 2
    if style == "proportional":  # scaled_rope_frequencies(method="proportional")'s frequencies
        pairs = np.stack([np.arange(half), np.arange(half) + half], axis=1)
        return pairs, proportional_frequencies(head_dim, base, share, 1.0)
    width = int(head_dim * share)
    if width <= 0 or width % 2:
        raise ValueError(
            f"the rotated width int(head_dim * partial_rotary_factor) = {width} must be a positive even number "
            f"for style='partial' (head_dim {head_dim}, partial_rotary_factor {share!r})"
        )
    rotated = width // 2
    inv_freq = np.zeros(half, dtype=np.float64)
    inv_freq[:rotated] = geometric_frequencies(width, base)  # RoPE over the rotated width (checked above)
    first = np.concatenate([np.arange(rotated), np.arange(width, head_dim, 2)])
    second = np.concatenate([np.arange(rotated) + rotated, np.arange(width + 1, head_dim, 2)])
    return np.stack([first, second], axis=1), inv_freq
