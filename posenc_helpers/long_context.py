"""Frequency rescaling that lets RoPE run past the context it was trained on.

Six methods are implemented, all returning ``(inv_freq, attention_factor)``
for :func:`~posenc_helpers.apply_rope` (``inv_freq``) and for the logits
(multiply queries and keys by ``attention_factor``, as the YaRN reference code
does through its cached cos/sin tables). The names are the ``rope_type``
strings of Hugging Face ``transformers`` configs where one exists.

``"linear"``  (position interpolation, Chen et al. 2023)
    every frequency divided by the scale ``s``: positions ``0 .. s*L`` are
    squeezed into the angles the model saw for ``0 .. L``.
``"ntk"``  (NTK-aware scaling, bloc97 2023)
    the base is raised to ``base * s**(d / (d - 2))``: the fastest pair is
    unchanged and the slowest pair is slowed by exactly ``s``.
``"dynamic"``  (dynamic NTK, emozilla 2023; Hugging Face ``"dynamic"``)
    NTK-aware scaling recomputed for the current length ``n``: nothing changes
    up to the anchor length ``L``; past it the base becomes
    ``base * (s*n/L - (s - 1))**(d / (d - 2))``.
``"yarn"``  (Peng et al., ICLR 2024)
    pairs that turn many times within the original context keep their
    frequency, pairs that turn less than once are interpolated by ``s``, with a
    linear ramp over the pair index in between; logits are scaled by
    ``0.1 * ln(s) + 1`` (DeepSeek's ``mscale`` keys: a ratio of two such terms).
``"llama3"``  (Llama 3.1, Grattafiori et al. 2024)
    the same idea with the bands set by wavelength: pairs whose wavelength is
    shorter than ``L / high_freq_factor`` are kept, pairs longer than
    ``L / low_freq_factor`` are divided by ``s``, and in between the frequency
    is blended smoothly in ``L / wavelength``. Logits are not rescaled.
``"longrope"``  (Ding et al. 2024; Phi-3)
    one searched factor per pair: ``short_factor`` up to the anchor length
    ``L``, ``long_factor`` beyond it, each dividing that pair's frequency;
    logits are scaled by ``sqrt(1 + ln(s) / ln(L))``. The switch happens at
    run time, once, so (like dynamic NTK) it is not a fixed rule: keys cached
    before it were rotated with the short factors.

``"proportional"``  (p-RoPE, Barbero et al., ICLR 2025; Gemma 4's global layers)
    only the first ``int(partial_rotary_factor * head_dim // 2)`` pairs turn,
    at ``base**(-2i / head_dim)``: the exponent's denominator stays the *full*
    head width, and the remaining pairs get frequency zero (they never turn).
    Every frequency is divided by ``factor`` (default 1). Ordinary partial
    rotary (GPT-NeoX, Qwen3-Next) instead rotates ``r = head_dim *
    partial_rotary_factor`` features at ``base**(-2i / r)``: see
    :func:`~posenc_helpers.partial_rotary_pairs` for the two side by side.

``L`` (``original_max_len``) is the length the rule is anchored to, Hugging
Face's ``original_max_position_embeddings``: the context of the model being
extended, not necessarily the length the released model was trained on.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ._validation import (
    require_choice,
    require_count,
    require_even_width,
    require_positive_real,
)
from .partial_rotary import proportional_frequencies
from .scaling_arguments import (
    require_attention_factor,
    require_betas,
    require_llama3_band,
    require_mscale,
    require_pair_factors,
    require_partial_rotary_factor,
)
from .sinusoidal import geometric_frequencies
from .unseen_angles import unseen_angle_pairs

__all__ = ["scaled_rope_frequencies", "unseen_angle_pairs"]  # unseen_angle_pairs: re-exported from .unseen_angles

SCALING_METHODS = ("linear", "ntk", "dynamic", "yarn", "llama3", "longrope", "proportional")

# Which keyword arguments each method cannot do without (factor is special for
# "longrope": an explicit attention_factor makes it unnecessary).
_REQUIRED = {
    "linear": ("factor",),
    "ntk": ("factor",),
    "dynamic": ("factor", "original_max_len"),
    "yarn": ("factor", "original_max_len"),
    "llama3": ("factor", "original_max_len", "low_freq_factor", "high_freq_factor"),
    "longrope": ("original_max_len", "short_factor", "long_factor"),
    "proportional": (),
}


def _yarn_correction_dim(rotations: float, head_dim: int, base: float, original_max_len: int) -> float:
    """Pair index (as a real number) whose wavelength fits ``rotations`` times in the context."""
    return head_dim * math.log(original_max_len / (rotations * 2.0 * math.pi)) / (2.0 * math.log(base))


def _yarn_mscale(factor: float, mscale: float = 1.0) -> float:  # transformers' get_mscale(scale, mscale)
    return 1.0 if factor <= 1.0 else 0.1 * mscale * math.log(factor) + 1.0


def _yarn_attention_factor(factor: float, mscale: float | None, mscale_all_dim: float | None) -> float:
    if mscale and mscale_all_dim:  # both given and non-zero: transformers tests them by truthiness
        return _yarn_mscale(factor, mscale) / _yarn_mscale(factor, mscale_all_dim)
    return _yarn_mscale(factor)


def _yarn(
    original: np.ndarray,
    head_dim: int,
    base: float,
    factor: float,
    original_max_len: int,
    beta_fast: float,
    beta_slow: float,
    truncate: bool,
) -> np.ndarray:
    low = _yarn_correction_dim(beta_fast, head_dim, base, original_max_len)
    high = _yarn_correction_dim(beta_slow, head_dim, base, original_max_len)
    if truncate:  # the reference code rounds the ramp's ends outwards to whole pair indices
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, head_dim - 1)
    span = (high - low) if high != low else 0.001
    pair_index = np.arange(head_dim // 2, dtype=np.float64)
    ramp = np.clip((pair_index - low) / span, 0.0, 1.0)
    return original * (1.0 - ramp) + (original / factor) * ramp


def _llama3(
    original: np.ndarray, factor: float, original_max_len: int, low_freq_factor: float, high_freq_factor: float
) -> np.ndarray:
    wavelength = 2.0 * math.pi / original
    longest_kept = original_max_len / high_freq_factor  # shorter wavelengths: kept
    shortest_divided = original_max_len / low_freq_factor  # longer wavelengths: divided by factor
    if high_freq_factor == low_freq_factor:  # Llama 4 Scout (both 1): a hard step at L, no band in between
        return np.where(wavelength > shortest_divided, original / factor, original)
    # Between the two edges, blend in L / wavelength (the turns a pair makes within the anchor length):
    smooth = (original_max_len / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)
    blended = (1.0 - smooth) * original / factor + smooth * original
    return np.where(
        wavelength < longest_kept,
        original,
        np.where(wavelength > shortest_divided, original / factor, blended),
    )


def _dynamic_ntk(head_dim: int, base: float, factor: float, original_max_len: int, seq_len: int) -> np.ndarray:
    if seq_len <= original_max_len or head_dim == 2:
        return geometric_frequencies(head_dim, base)  # (a single pair is the fastest: never rescaled)
    new_base = base * (factor * seq_len / original_max_len - (factor - 1.0)) ** (head_dim / (head_dim - 2))
    return geometric_frequencies(head_dim, new_base)


def _longrope(head_dim: int, base: float, pair_factors: np.ndarray) -> np.ndarray:
    exponent = np.arange(0, head_dim, 2, dtype=np.float64) / head_dim
    return 1.0 / (pair_factors * base**exponent)


def _longrope_attention_factor(factor: float, original_max_len: int) -> float:
    return 1.0 if factor <= 1.0 else math.sqrt(1.0 + math.log(factor) / math.log(original_max_len))


def scaled_rope_frequencies(
    head_dim: int,
    *,
    base: float = 10000.0,
    method: str,
    factor: float | None = None,
    original_max_len: int | None = None,
    beta_fast: float = 32,
    beta_slow: float = 1,
    truncate: bool = True,
    low_freq_factor: float | None = None,
    high_freq_factor: float | None = None,
    seq_len: int | None = None,
    short_factor: ArrayLike | None = None,
    long_factor: ArrayLike | None = None,
    attention_factor: float | None = None,
    partial_rotary_factor: float | None = None,
    mscale: float | None = None,
    mscale_all_dim: float | None = None,
) -> tuple[np.ndarray, float]:
    """RoPE frequencies rescaled for a context ``factor`` times longer, or proportional (p-RoPE).

    Parameters
    ----------
    head_dim : int
        Width of the rotated part of one attention head (the head width, or
        the rotary width of a partially rotary model); a positive even integer.
    base : float, optional
        RoPE base of the original model, ``> 0``. Default 10000.
    method : {"linear", "ntk", "dynamic", "yarn", "llama3", "longrope", "proportional"}
        The rescaling rule (see the module docstring).
    factor : float, optional
        The scale ``s > 0``: new context length over original context length.
        Required by every method except ``"proportional"`` (default 1 there:
        every frequency divided by it) and ``"longrope"``, which uses it only for
        its attention factor (give ``max_position_embeddings /
        original_max_position_embeddings`` there, as Hugging Face derives it
        for Phi-3 configs that state no factor).
    original_max_len : int, optional
        The length ``L`` the rule is anchored to, ``>= 1``: the context the
        model had when it was extended (Hugging Face's
        ``original_max_position_embeddings``), which need not be the length a
        released model was finally trained on. Required for ``"dynamic"``,
        ``"yarn"``, ``"llama3"`` and ``"longrope"``; validated but unused by
        ``"linear"`` and ``"ntk"``.
    beta_fast, beta_slow : float, optional
        YaRN's ramp bounds in rotations per original context (defaults 32 and
        1, as in the paper): pairs that rotate at least ``beta_fast`` times keep
        their frequency, pairs that rotate at most ``beta_slow`` times are
        interpolated. ``beta_fast > beta_slow > 0``.
    truncate : bool, optional
        YaRN only: round the ramp's ends outwards to whole pair indices, as the
        reference code does (default True). gpt-oss configs set it False.
    low_freq_factor, high_freq_factor : float, optional
        ``"llama3"`` only (and required there), ``0 < low <= high``: wavelengths
        above ``L / low_freq_factor`` are divided by ``factor``, wavelengths
        below ``L / high_freq_factor`` are kept. Llama 3.1 uses 1 and 4;
        Llama 4 Scout uses 1 and 1, a hard step at ``L`` with no blended band
        (Meta's ``apply_scaling`` in ``models/llama4/model.py``).
    seq_len : int, optional
        The current sequence length ``n >= 1``, for ``"dynamic"`` (the base is
        rescaled only when ``n > L``) and ``"longrope"`` (``long_factor`` when
        ``n > L``, else ``short_factor``). ``None`` means a sequence no longer
        than ``L``, which is what Hugging Face assumes when it builds the model.
    short_factor, long_factor : array_like, optional
        ``"longrope"`` only (and required there): one factor ``> 0`` per pair,
        ``head_dim // 2`` of each; pair ``i``'s frequency is divided by its factor.
    attention_factor : float, optional
        For ``"yarn"`` and ``"longrope"``: the logit scale to use instead of the
        method's default formula, ``> 0``; for ``"yarn"`` it wins over ``mscale``.
    partial_rotary_factor : float, optional
        ``"proportional"`` only: the share of the ``head_dim // 2`` pairs that
        turn, in ``(0, 1]`` (default 1, plain RoPE). Gemma 4's global layers use
        0.25 with ``head_dim`` 512: 64 of 256 pairs turn.
    mscale, mscale_all_dim : float, optional
        ``"yarn"`` only, finite reals ``>= 0``: DeepSeek-V2/V3's keys, which
        change the attention factor when both are non-zero (Notes).

    Returns
    -------
    inv_freq : numpy.ndarray
        Shape ``(head_dim // 2,)``, the frequencies to pass to
        :func:`~posenc_helpers.apply_rope` as ``inv_freq`` (for
        ``"proportional"``, zeros for the pairs that do not turn; use
        ``layout="half"`` for Gemma 4's pairing of feature ``i`` with
        ``i + head_dim/2``).
    attention_factor : float
        ``1.0`` for ``"linear"``, ``"ntk"``, ``"dynamic"``, ``"llama3"`` and
        ``"proportional"``;
        ``0.1 * ln(s) + 1`` for ``"yarn"`` (but see ``mscale``) and
        ``sqrt(1 + ln(s) / ln(L))`` for ``"longrope"`` when ``s > 1`` (1.0 when
        ``s <= 1``), unless given.

    Raises
    ------
    TypeError, ValueError
        For an invalid ``head_dim`` or ``base``, an unknown ``method``, a
        parameter the method requires that is missing (the message names it),
        a ``factor`` that is not ``> 0``, ``beta_fast <= beta_slow``,
        ``high_freq_factor <= low_freq_factor``, pair factors of the wrong
        length or not ``> 0``, an ``attention_factor`` for a method that has
        none, a ``partial_rotary_factor`` outside ``(0, 1]`` or given to a
        method other than ``"proportional"``, or ``mscale`` or ``mscale_all_dim``
        not ``>= 0`` or given to a method other than ``"yarn"``.

    Notes
    -----
    The formulas are those of Hugging Face ``transformers`` 4.56.0
    (``src/transformers/modeling_rope_utils.py``: ``_compute_yarn_parameters``,
    ``_compute_llama3_parameters``, ``_compute_dynamic_ntk_parameters``,
    ``_compute_longrope_parameters``; ``_compute_proportional_rope_parameters``
    of transformers v5, which Gemma 4 introduced) for the same parameter
    values, computed in float64 rather than float32. Which values a config yields is
    :func:`~posenc_helpers.describe`'s business; there the releases differ
    (before 4.56, YaRN replaced ``factor`` by ``max_position_embeddings /
    original_max_position_embeddings`` whenever the latter was given).

    YaRN follows the reference implementation of Peng et al.: the correction
    range is ``floor(c(beta_fast)), ceil(c(beta_slow))`` with
    ``c(r) = head_dim * ln(L / (2 pi r)) / (2 ln base)``, clamped to
    ``[0, head_dim - 1]``; the ramp ``clip((i - low) / (high - low), 0, 1)``
    over the pair index ``i`` blends the original frequency (ramp 0) into the
    interpolated one (ramp 1).

    YaRN's ``mscale`` and ``mscale_all_dim`` act as in transformers (ref. 8): with no
    ``attention_factor``, if both are non-zero the factor is ``g(mscale) /
    g(mscale_all_dim)`` with ``g(m) = 0.1 * m * ln(s) + 1`` (1 for ``s <= 1``),
    else ``g(1)``. Equal keys give exactly 1.0 (DeepSeek-V3: 1 and 1); one
    absent or 0 leaves ``0.1 * ln(s) + 1`` (``mscale=0.707`` alone is ignored).
    Whether equal keys *should* give 1.0 is contested (DeepSeek's attention also
    scales its softmax by ``g(mscale_all_dim)**2``, not returned here: see
    :func:`~posenc_helpers.describe`; exllamav3 issue #259 (ref. 9) reports the
    opposite symptom): this function computes it as transformers computes it.

    Llama 3 blends with ``smooth = (L / lambda_i - low) / (high - low)``:
    ``theta'_i = (1 - smooth) * theta_i / s + smooth * theta_i`` for
    ``L / high <= lambda_i <= L / low``, so the blend meets both bands.

    References
    ----------
    .. [1] S. Chen, S. Wong, L. Chen, Y. Tian, "Extending Context Window of Large
       Language Models via Positional Interpolation", arXiv:2306.15595, 2023.
    .. [2] bloc97, "NTK-Aware Scaled RoPE allows LLaMA models to have extended
       (8k+) context size without any fine-tuning", 2023 (online post);
       emozilla, "Dynamically Scaled RoPE further increases performance of long
       context LLaMA with zero fine-tuning", 2023 (online post).
    .. [3] B. Peng, J. Quesnelle, H. Fan, E. Shippole, "YaRN: Efficient Context
       Window Extension of Large Language Models", ICLR 2024 (arXiv:2309.00071).
    .. [4] A. Grattafiori et al., "The Llama 3 Herd of Models", arXiv:2407.21783,
       2024; Meta, llama-models, ``models/llama3/reference_impl/model.py``
       (``apply_scaling``).
    .. [5] Y. Ding, L. L. Zhang, C. Zhang, Y. Xu, N. Shang, J. Xu, F. Yang,
       M. Yang, "LongRoPE: Extending LLM Context Window Beyond 2 Million
       Tokens", ICML 2024 (arXiv:2402.13753).
    .. [6] Hugging Face, transformers 4.56.0, ``src/transformers/modeling_rope_utils.py``
       (the ``rope_type`` implementations); transformers v5 for ``"proportional"``.
    .. [7] F. Barbero, A. Vitvitskyi, C. Perivolaropoulos, R. Pascanu,
       P. Veličković, "Round and Round We Go! What makes Rotary Positional
       Encodings useful?", ICLR 2025 (arXiv:2410.06205): p-RoPE.
    .. [8] huggingface/transformers, ``src/transformers/modeling_rope_utils.py``
       (``_compute_yarn_parameters``), read in the forks zucchini-nlp/transformers
       at 26892c16b782513fdf938920653228ef63a19d7d and cyyever/transformers at
       89539b0672a0cdc52b29f9ea6f1554a179195e40 (the same mscale code).
    .. [9] turboderp-org/exllamav3, issue #259 (2026).

    Examples
    --------
    >>> import numpy as np
    >>> from posenc_helpers import rope_frequencies
    >>> inv, attn = scaled_rope_frequencies(4, method="linear", factor=4.0)
    >>> inv, attn
    (array([0.25  , 0.0025]), 1.0)
    >>> inv, attn = scaled_rope_frequencies(8, method="ntk", factor=2.0)
    >>> bool(np.isclose(inv[0], 1.0)), bool(np.isclose(inv[-1], rope_frequencies(8)[-1] / 2))
    (True, True)
    >>> inv, attn = scaled_rope_frequencies(
    ...     128, method="yarn", factor=16.0, original_max_len=4096)
    >>> round(attn, 4)
    1.2773

    DeepSeek-V3's keys give exactly 1:

    >>> scaled_rope_frequencies(64, method="yarn", factor=40.0, original_max_len=4096, mscale=1, mscale_all_dim=1)[1]
    1.0

    Llama 3.1: the fastest pair is kept, the slowest divided by 8.

    >>> inv, attn = scaled_rope_frequencies(128, base=500000.0, method="llama3", factor=8.0,
    ...     original_max_len=8192, low_freq_factor=1.0, high_freq_factor=4.0)
    >>> original = rope_frequencies(128, base=500000.0)
    >>> bool(inv[0] == original[0]), bool(np.isclose(inv[-1], original[-1] / 8)), attn
    (True, True, 1.0)

    Dynamic NTK changes nothing until the sequence outgrows the anchor length:

    >>> same, _ = scaled_rope_frequencies(8, method="dynamic", factor=2.0, original_max_len=16, seq_len=16)
    >>> bool(np.array_equal(same, rope_frequencies(8)))
    True

    LongRoPE divides each pair by its own factor (long ones past ``L``):

    >>> inv, attn = scaled_rope_frequencies(4, method="longrope", factor=32.0, original_max_len=4096,
    ...     short_factor=[1.0, 1.0], long_factor=[1.0, 4.0], seq_len=5000)
    >>> inv, round(attn, 4)
    (array([1.    , 0.0025]), 1.1902)

    Proportional (p-RoPE): half of 4 pairs turn, over the full width 8:

    >>> scaled_rope_frequencies(8, method="proportional", partial_rotary_factor=0.5)
    (array([1. , 0.1, 0. , 0. ]), 1.0)
    """
    head_dim = require_even_width(head_dim, "head_dim")
    base = require_positive_real(base, "base")
    method = require_choice(method, "method", SCALING_METHODS)
    given = {
        "factor": factor,
        "original_max_len": original_max_len,
        "low_freq_factor": low_freq_factor,
        "high_freq_factor": high_freq_factor,
        "short_factor": short_factor,
        "long_factor": long_factor,
    }
    for name in _REQUIRED[method]:
        if given[name] is None:
            raise ValueError(f"{name} is required for method={method!r}: {_WHAT[name]}")
    if factor is not None:
        factor = require_positive_real(factor, "factor")
    if original_max_len is not None:
        original_max_len = require_count(original_max_len, "original_max_len", minimum=1)
    beta_fast, beta_slow = require_betas(beta_fast, beta_slow)
    if not isinstance(truncate, (bool, np.bool_)):
        raise TypeError(f"truncate must be True or False, got {type(truncate).__name__} {truncate!r}")
    low_freq_factor, high_freq_factor = require_llama3_band(low_freq_factor, high_freq_factor)
    if seq_len is not None:
        seq_len = require_count(seq_len, "seq_len", minimum=1)
    pairs = head_dim // 2
    short = None if short_factor is None else require_pair_factors(short_factor, "short_factor", pairs)
    long = None if long_factor is None else require_pair_factors(long_factor, "long_factor", pairs)
    attention_factor = require_attention_factor(method, attention_factor, factor, original_max_len)
    partial_rotary_factor = require_partial_rotary_factor(method, partial_rotary_factor)
    mscale = require_mscale(method, mscale, "mscale")
    mscale_all_dim = require_mscale(method, mscale_all_dim, "mscale_all_dim")

    if method == "proportional":
        share = 1.0 if partial_rotary_factor is None else partial_rotary_factor
        return proportional_frequencies(head_dim, base, share, 1.0 if factor is None else factor), 1.0
    original = geometric_frequencies(head_dim, base)  # head_dim and base are checked above
    if method == "linear":
        assert factor is not None
        return original / factor, 1.0
    if method == "ntk":
        assert factor is not None
        ntk_base = base * factor ** (head_dim / (head_dim - 2)) if head_dim > 2 else base
        return geometric_frequencies(head_dim, ntk_base), 1.0
    assert original_max_len is not None
    if method == "dynamic":
        assert factor is not None
        length = original_max_len if seq_len is None else seq_len
        return _dynamic_ntk(head_dim, base, factor, original_max_len, length), 1.0
    if method == "yarn":
        assert factor is not None
        inv_freq = _yarn(original, head_dim, base, factor, original_max_len, beta_fast, beta_slow, bool(truncate))
        if attention_factor is None:
            attention_factor = _yarn_attention_factor(factor, mscale, mscale_all_dim)
        return inv_freq, attention_factor
    if method == "llama3":
        assert factor is not None and low_freq_factor is not None and high_freq_factor is not None
        return _llama3(original, factor, original_max_len, low_freq_factor, high_freq_factor), 1.0
    assert short is not None and long is not None
    beyond = seq_len is not None and seq_len > original_max_len
    inv_freq = _longrope(head_dim, base, long if beyond else short)
    if attention_factor is None:
        assert factor is not None
        attention_factor = _longrope_attention_factor(factor, original_max_len)
    return inv_freq, attention_factor


_WHAT = {
    "factor": "give the scale s > 0 (new context length over the anchor length)",
    "original_max_len": "give the length L (a positive integer) the rule is anchored to, "
    "Hugging Face's original_max_position_embeddings",
    "low_freq_factor": "give the Llama 3 band edge L / low_freq_factor beyond which pairs are divided (1 in Llama 3.1)",
    "high_freq_factor": "give the Llama 3 band edge L / high_freq_factor below which pairs are kept (4 in Llama 3.1)",
    "short_factor": "give one LongRoPE factor per frequency pair for sequences up to original_max_len",
    "long_factor": "give one LongRoPE factor per frequency pair for sequences beyond original_max_len",
}
