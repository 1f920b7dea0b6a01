"""``diagnose``: run the probes for a kind of positional code and name what is wrong."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._validation import describe_value, require_choice, require_even_width, require_positive_real, require_real
from .alibi import SEQ_LEN, diagnose_alibi
from .attention import ATTENTION_METHODS, FAR, AttentionSpec, diagnose_attention, probe_length
from .report import Evidence, Report
from .rope import OFFSET_BLOCKS, diagnose_rope, probe_positions
from .rope_frequencies import diagnose_rope_frequencies
from .sinusoidal import CONVENTION_SHIFT, CONVENTIONS, DEFAULT_LAYOUT, LAYOUTS, SinusoidalSpec, diagnose_sinusoidal
from .spec import (
    UserCall,
    UserFunctionFailed,
    normalise_spec,
    require_alibi_heads,
    require_dtype,
    require_max_positions,
    rotary_spec,
)

__all__ = ["diagnose"]

_ACCEPTS = {
    "sinusoidal": ("fn(positions, d_model) -> table of shape (n, d_model), for integer positions of shape (n,)", 2),
    "rope": (
        "fn(x, positions) -> x rotated, same shape as x, for x of shape (batch, seq, head_dim) and integer "
        "positions of shape (seq,)",
        2,
    ),
    "rope_frequencies": ("fn() -> inverse frequencies (rotary_dim // 2,)", 0),
    "alibi": ("fn(n_heads, seq_len) -> bias (n_heads, seq_len, seq_len)", 2),
    "attention": (
        "fn(q, k, v, positions) -> output of q's shape, for q of shape (batch, n_heads, n_q, head_dim), k and v "
        "of shape (batch, n_heads, n_k, head_dim), n_q <= n_k, and the keys' integer positions of shape (n_k,) "
        "(the queries are the last n_q tokens)",
        4,
    ),
}

Outcome = tuple[dict[str, Any], list[Evidence], bool, list[str], "int | None"]


def _sinusoidal(call: UserCall, spec: dict[str, Any]) -> Outcome:
    d_model = require_even_width(spec["d_model"], "d_model")
    base = require_positive_real(spec.get("base", 10000.0), "base")
    convention = require_choice(spec.get("convention", "vaswani"), "convention", CONVENTIONS)
    layout = require_choice(spec.get("layout", DEFAULT_LAYOUT[convention]), "layout", LAYOUTS)
    shift = spec.get("downscale_freq_shift")
    shift = CONVENTION_SHIFT[convention] if shift is None else require_real(shift, "downscale_freq_shift")
    if d_model // 2 - shift <= 0 and d_model > 2:
        raise ValueError(f"downscale_freq_shift must be below d_model / 2 = {d_model // 2}, got {shift:g}")
    dtype = require_dtype(spec.get("dtype"))
    max_positions = require_max_positions(spec.get("max_position_embeddings"))
    shown: dict[str, Any] = {"d_model": d_model, "base": base, "layout": layout}
    if convention != "vaswani":
        shown["convention"] = convention
    if "downscale_freq_shift" in spec:
        shown["downscale_freq_shift"] = shift
    if dtype != "float32":
        shown["dtype"] = dtype
    if max_positions is not None:
        shown["max_position_embeddings"] = max_positions
    checked = SinusoidalSpec(d_model, base, convention, layout, float(shift), dtype, max_positions)
    reach = int(probe_positions(max_positions)[-1])
    return (shown, *diagnose_sinusoidal(call, checked), reach)


def _attention(call: UserCall, spec: dict[str, Any]) -> Outcome:
    method = spec.get("method", "rope")
    if not isinstance(method, str):
        raise TypeError(
            f"method must be one of {', '.join(map(repr, ATTENTION_METHODS))}, got {describe_value(method)}"
        )
    method = require_choice(method, "method", ATTENTION_METHODS)
    causal = spec.get("causal", True)
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"causal must be True or False, got {type(causal).__name__} {causal!r}")
    heads = require_alibi_heads(spec.get("n_heads", 8 if method == "alibi" else 2))
    if len(heads) != 1:
        raise ValueError(f"n_heads must be one head count for kind='attention', got {list(heads)}")
    rotary_keys = ("base", "layout", "rotary_fraction", "rotary_dim", "scaling", "d_model", "max_position_embeddings")
    if method != "rope" and any(key in spec for key in rotary_keys):
        given = ", ".join(key for key in rotary_keys if key in spec)
        raise ValueError(f"{given}: only method='rope' reads these; method={method!r} does not")
    if method == "rope":
        rotary = rotary_spec("attention", spec)
        shown = {"method": method, **rotary.shown}
        head_dim, dtype = rotary.head_dim, rotary.dtype
    else:
        rotary, head_dim = None, require_even_width(spec["head_dim"], "head_dim")
        dtype = require_dtype(spec.get("dtype"))
        shown = {"method": method, "head_dim": head_dim} | ({"dtype": dtype} if dtype != "float32" else {})
    shown["n_heads"] = heads[0]
    if not causal:
        shown["causal"] = False
    checked = AttentionSpec(method, head_dim, heads[0], bool(causal), dtype, rotary)
    return (shown, *diagnose_attention(call, checked), FAR + probe_length(head_dim) - 1)


def _run(kind: str, call: UserCall, spec: dict[str, Any]) -> Outcome:
    if kind == "rope":
        rotary = rotary_spec(kind, spec)
        evidence, explained, notes = diagnose_rope(call, rotary)
        reach = max(
            int(probe_positions(rotary.max_position_embeddings)[-1]), *(int(b[-1]) for b in OFFSET_BLOCKS.values())
        )
        return rotary.shown, evidence, explained, notes, reach
    if kind == "rope_frequencies":
        rotary = rotary_spec(kind, spec)
        return (rotary.shown, *diagnose_rope_frequencies(call, rotary), [], None)
    if kind == "sinusoidal":
        return _sinusoidal(call, spec)
    if kind == "attention":
        return _attention(call, spec)
    causal = spec.get("causal", True)
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"causal must be True or False, got {type(causal).__name__} {causal!r}")
    heads = require_alibi_heads(spec.get("n_heads"))
    return ({"causal": bool(causal)}, *diagnose_alibi(call, heads, bool(causal)), [], SEQ_LEN - 1)


def diagnose(
    kind: str, fn: Callable[..., Any], *, inputs_as: Callable[[np.ndarray], Any] | None = None, **spec: Any
) -> Report:
    """Tell whether ``fn`` implements a positional encoding as meant, and if not, which named mistake it makes.

    The kit calls ``fn`` on small probes designed to tell the mistakes apart
    (unit vectors in one feature, positions 0, 1, 2 and far ones with gaps,
    head counts that are and are not powers of two), measures what the code
    does (which features it pairs, each pair's angle, direction, phase, offset,
    frequency law and scale, each head's slope) and compares that with what the
    spec means, computed by the book's reference numerics. One difference gets
    its bug's name; several get every name (``bug`` is then ``None`` and
    ``bugs`` lists them); a difference no named bug explains is reported as
    unrecognised, with the evidence, rather than given a wrong name.

    Parameters
    ----------
    kind : {"sinusoidal", "rope", "rope_frequencies", "alibi", "attention"}
        What ``fn`` computes. The first four check the position code alone; only
        ``"attention"`` sees how it is called (values rotated too, queries and keys
        rotated differently, a cache offset on the keys only, ALiBi's bias on the
        wrong side of the scale, the causal mask), and it leaves a rotation that
        queries and keys share to ``"rope"``. ``dtype`` (``"float32"``, the default,
        ``"bfloat16"`` or ``"float16"``: the model's) is a spec key of ``"rope"``,
        ``"sinusoidal"`` and ``"attention"``: cos/sin tables rounded to it conform,
        and the report carries a note of what that costs; rounded angles are named
        ``low-precision-angles`` at every dtype. ``max_position_embeddings`` adds
        the last position of that context to the probes of ``"rope"`` and
        ``"sinusoidal"``, which reach position 131073 in any case.

        ``"sinusoidal"``
            ``fn(positions, d_model)`` returns the encoding table, shape
            ``(len(positions), d_model)``. Spec: ``d_model`` (required), ``base``
            (10000), ``convention`` (``"vaswani"``, the paper's frequencies
            ``base**(-2k/d)``; or ``"tensor2tensor"``, alias ``"fairseq"``: their
            ``base**(-k/(d/2 - 1))``, concatenated by default) and ``layout``
            (``"interleaved"`` as in the paper; ``"concat"``: all sines, then all
            cosines; ``"concat-cos-first"``: all cosines, then all sines, as
            diffusers' ``flip_sin_to_cos=True``), and ``downscale_freq_shift``
            (diffusers' name: the exponent divides by ``d/2 - shift``; 0 is the
            paper's, 1 tensor2tensor's). A table the spec could declare is reported
            as ``convention`` (another frequency law) or ``layout``, with the option
            to give, not as a bug of the exponent.
        ``"rope"``
            ``fn(x, positions)`` returns ``x`` rotated, for ``x`` of shape
            ``(batch, seq, head_dim)`` and integer ``positions`` of shape ``(seq,)``.
            Spec: ``head_dim`` (required), ``base`` (10000), ``layout`` (``"half"``,
            Hugging Face's and GPT-NeoX's, or ``"interleaved"``), ``rotary_fraction``
            or ``rotary_dim`` (ordinary partial rotary: the first features rotate,
            with frequencies over the rotated width), ``scaling`` (a mapping of
            :func:`~posenc_helpers.scaled_rope_frequencies` arguments with a
            ``method``, for instance DeepSeek's YaRN ``{"method": "yarn",
            "factor": 40, "original_max_len": 4096, "mscale": 1.0,
            "mscale_all_dim": 1.0}`` or p-RoPE ``{"method": "proportional",
            "partial_rotary_factor": 0.25}``, whose pairs past the first
            ``int(partial_rotary_factor * head_dim // 2)`` must not turn; a key
            the method does not read is a ValueError naming it, a wrong value
            the error of that function naming it; the attention factor is
            expected to scale the rotation, as
            in Hugging Face's cos/sin tables) and ``d_model`` (optional: lets the kit
            recognise the model width used as the exponent's denominator). The
            features outside the rotated width must come back unchanged, and
            blocks that start after position 0 (a prefill chunk, a decode step)
            are probed too.
        ``"rope_frequencies"``
            ``fn()`` returns the inverse frequencies, shape ``(rotary_dim // 2,)``,
            or ``(inv_freq, attention_factor)``. Spec as for ``"rope"``, without
            ``layout``.
        ``"alibi"``
            ``fn(n_heads, seq_len)`` returns the bias added to the logits, shape
            ``(n_heads, seq_len, seq_len)``; a constant per row is allowed, as
            softmax ignores it. Spec: ``causal`` (True: entries above the diagonal
            are masked and not read) and ``n_heads`` (the head counts to probe,
            default 4, 8, 6 and 12).
        ``"attention"``
            ``fn(q, k, v, positions)`` returns the attention output, shape of ``q``,
            for ``q`` of shape ``(batch, n_heads, n_q, head_dim)``, ``k`` and ``v``
            of shape ``(batch, n_heads, n_k, head_dim)`` with ``n_q <= n_k``, and
            the keys' integer ``positions`` of shape ``(n_k,)``; the queries are the
            last ``n_q`` tokens (a prefill, or a decode step with a KV cache).
            ``q``, ``k``, ``v`` come projected, not position-encoded: ``fn``
            applies the method, the scale ``1/sqrt(head_dim)`` and the causal mask
            (a query reads the keys at positions up to its own). Spec: ``method``
            (``"rope"``, the default, ``"alibi"`` with Press et al.'s slopes, or
            ``"nope"``), ``head_dim`` (required), for ``"rope"`` the keys of
            ``"rope"``; ``n_heads`` (one count: 2, or 8 for ALiBi), ``causal``
            (True) and ``dtype``.
    fn : callable
        The implementation. It is called on small inputs only (at most a few
        hundred thousand numbers). Its output may be anything ``np.asarray``
        converts (torch tensors are detached and moved to the CPU first).
    inputs_as : callable, optional
        Applied to every array the kit passes to ``fn`` (e.g. ``torch.from_numpy``
        for a torch implementation). Default: numpy arrays as they are.
    **spec
        What ``fn`` is meant to compute, by kind (above).

    Returns
    -------
    Report
        ``ok``, ``bug``, ``bugs``, ``unrecognised``, ``evidence``; ``str(report)``
        says it in a few lines ending with the book section that explains each bug.
        When ``fn`` raises on a probe, the report carries the exception in
        ``error`` (``ok`` False): it is reported, not swallowed.

    Raises
    ------
    TypeError, ValueError
        For an unknown ``kind``; ``fn`` not callable or unable to take the kind's
        arguments; a spec key the kind does not take, a required one missing, or
        values that are invalid or contradict each other (``rotary_dim`` and
        ``rotary_fraction``); an output of the wrong shape, or with NaN or
        infinity where values are read.

    See Also
    --------
    posenc_helpers.conformance.BUGS : the named mistakes.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017, section 3.5.
    .. [2] J. Su et al., "RoFormer: Enhanced Transformer with Rotary Position
       Embedding", Neurocomputing 568, 2024 (arXiv:2104.09864).
    .. [3] O. Press, N. A. Smith, M. Lewis, "Train Short, Test Long: Attention with
       Linear Biases Enables Input Length Extrapolation", ICLR 2022.

    Examples
    --------
    The book's own RoPE conforms; the same code with half-split pairs where
    interleaved ones are meant does not:

    >>> import numpy as np
    >>> from posenc_helpers import apply_rope
    >>> diagnose("rope", lambda x, t: apply_rope(x, t, layout="half"), head_dim=8, layout="half").ok
    True
    >>> report = diagnose("rope", lambda x, t: apply_rope(x, t, layout="half"), head_dim=8, layout="interleaved")
    >>> report.ok, report.bug
    (False, 'layout')

    The seed tutorials' mistake, the dimension index in the exponent:

    >>> def tutorial(positions, d_model):
    ...     j = np.arange(d_model)
    ...     angles = np.asarray(positions)[:, None] / 10000 ** (2 * j / d_model)
    ...     return np.where(j % 2 == 0, np.sin(angles), np.cos(angles))
    >>> diagnose("sinusoidal", tutorial, d_model=16).bug
    'dimension-index-exponent'
    """
    kind, spec = normalise_spec(kind, spec)
    accepts, arity = _ACCEPTS[kind]
    call = UserCall.checked(fn, accepts, arity, inputs_as)
    try:
        shown, evidence, explained, notes, reach = _run(kind, call, spec)
    except UserFunctionFailed as failure:
        shown = dict(spec)
        return Report(kind, shown, ok=False, error=str(failure))
    if not evidence:
        return Report(kind, shown, ok=True, notes=tuple(notes), reach=reach)
    bugs = tuple(dict.fromkeys(item.bug for item in evidence if item.bug is not None))
    unrecognised = not explained or any(item.bug is None for item in evidence)
    bug = bugs[0] if len(bugs) == 1 and not unrecognised else None
    return Report(
        kind, shown, ok=False, bug=bug, bugs=bugs, unrecognised=unrecognised, evidence=tuple(evidence), reach=reach
    )
