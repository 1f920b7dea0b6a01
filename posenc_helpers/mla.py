"""Multi-head latent attention (MLA) with decoupled RoPE: DeepSeek-V2, V3 and V3.2.

MLA caches one small latent vector ``c`` per token instead of full keys and
values; a head's key content is ``W_uk^T c``. A rotation by position between
the query and ``W_uk`` would make the product ``q^T W_uk^T c`` depend on the
positions, and ``W_uk`` could no longer be folded into the query. So the
latent part carries *no* position. Position enters through a separate, narrow
rotary slice: each head's query has ``qk_rope_head_dim`` (64) extra features
and all heads share one rotated key slice ``k_pe``. The logit of query ``m``
and key ``n`` is the sum of a position-free content term and a RoPE term that
depends on ``m - n`` only.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_real_array, require_finite
from .rope import apply_rope

__all__ = ["mla_scores"]


def _matrix(value: ArrayLike, name: str) -> np.ndarray:
    array = as_real_array(value, name).astype(np.float64)
    if array.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {array.shape}")
    require_finite(array, name)
    return array


def mla_scores(
    q_nope: ArrayLike,
    q_pe: ArrayLike,
    latent: ArrayLike,
    w_uk: ArrayLike,
    k_pe: ArrayLike,
    q_positions: int | ArrayLike,
    k_positions: int | ArrayLike,
    *,
    base: float = 10000.0,
    layout: str = "half",
) -> tuple[np.ndarray, np.ndarray]:
    """One MLA head's logits, split into the position-free content term and the decoupled RoPE term.

    ``content[m, n] = q_nope[m] . (latent[n] @ w_uk)`` and
    ``rotary[m, n] = (R(q_positions[m]) q_pe[m]) . (R(k_positions[n]) k_pe[n])``;
    the logit (before the softmax scale) is their sum.

    Parameters
    ----------
    q_nope : array_like
        Content part of the queries, ``(n_q, d_nope)`` (DeepSeek-V3: 128).
    q_pe : array_like
        Rotary part of the queries, ``(n_q, d_rope)``, ``d_rope`` even (64).
    latent : array_like
        The cached latent vectors ``c``, ``(n_k, d_latent)`` (512): no position.
    w_uk : array_like
        The head's up-projection from latent to key content, ``(d_latent, d_nope)``.
    k_pe : array_like
        The rotary key slice shared by all heads, ``(n_k, d_rope)``.
    q_positions, k_positions : int or array_like
        Positions of the queries and keys, as for :func:`~posenc_helpers.apply_rope`.
    base : float, optional
        RoPE base, ``> 0``. Default 10000 (DeepSeek-V3's ``rope_theta``).
    layout : {"half", "interleaved"}, optional
        Pairing of the rotary features; ``"interleaved"`` is what a checkpoint
        with ``rope_interleave: true`` stores. Default ``"half"``.

    Returns
    -------
    content : numpy.ndarray
        ``(n_q, n_k)``, the content term; it does not depend on any position.
    rotary : numpy.ndarray
        ``(n_q, n_k)``, the RoPE term; it depends on ``q_positions[m] - k_positions[n]`` only.

    Raises
    ------
    TypeError, ValueError
        If an array is not real, finite and 2-D, the widths do not match
        (``q_nope`` against ``w_uk``, ``latent`` against ``w_uk``, ``q_pe``
        against ``k_pe``), the rows of queries or keys disagree, ``d_rope`` is
        odd, or a RoPE argument is invalid.

    References
    ----------
    .. [1] DeepSeek-AI, "DeepSeek-V2: A Strong, Economical, and Efficient
       Mixture-of-Experts Language Model", arXiv:2405.04434, 2024, section
       2.1.3 (decoupled rotary position embedding).
    .. [2] Hugging Face, transformers, ``models/deepseek_v3/modeling_deepseek_v3.py``
       (``q_pe``, ``k_pe``, ``rope_interleave``).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> qn, qp, c, w, kp = (rng.normal(size=s) for s in [(2, 4), (2, 4), (3, 6), (6, 4), (3, 4)])
    >>> content, rotary = mla_scores(qn, qp, c, w, kp, [5, 6], [0, 1, 2])
    >>> content2, rotary2 = mla_scores(qn, qp, c, w, kp, [105, 106], [100, 101, 102])
    >>> bool(np.array_equal(content, content2)), bool(np.allclose(rotary, rotary2))
    (True, True)
    """
    qn, qp = _matrix(q_nope, "q_nope"), _matrix(q_pe, "q_pe")
    c, w, kp = _matrix(latent, "latent"), _matrix(w_uk, "w_uk"), _matrix(k_pe, "k_pe")
    if c.shape[1] != w.shape[0]:
        raise ValueError(
            f"w_uk must have latent.shape[1] = {c.shape[1]} rows (one per latent feature), got {w.shape[0]}"
        )
    if qn.shape[1] != w.shape[1]:
        raise ValueError(
            f"q_nope must have w_uk.shape[1] = {w.shape[1]} features (the key content width), got {qn.shape[1]}"
        )
    if qp.shape[1] != kp.shape[1] or qp.shape[1] % 2:
        raise ValueError(
            f"q_pe and k_pe must have the same even number of rotary features, got {qp.shape[1]} and {kp.shape[1]}"
        )
    if qn.shape[0] != qp.shape[0]:
        raise ValueError(f"q_nope and q_pe must have one row per query each, got {qn.shape[0]} and {qp.shape[0]}")
    if c.shape[0] != kp.shape[0]:
        raise ValueError(f"latent and k_pe must have one row per key each, got {c.shape[0]} and {kp.shape[0]}")
    content = qn @ (c @ w).T
    rotated_q = apply_rope(qp, q_positions, base=base, layout=layout)
    rotated_k = apply_rope(kp, k_positions, base=base, layout=layout)
    return content, rotated_q @ rotated_k.T
