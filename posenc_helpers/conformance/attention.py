"""Probe for a whole attention function ``fn(q, k, v, positions)``: the bugs ``fn(x, positions)`` cannot see.

A rotary function checked alone (:mod:`.rope`) cannot tell whether the caller
rotates the values too, rotates queries and keys by different code paths, gives
the keys a cache offset the queries miss, adds ALiBi's bias on the wrong side of
the softmax scale or builds the causal mask wrongly. This probe calls the whole
attention on four small inputs:

``uniform``
    queries and keys zero, values random, at positions ``40 .. 40+n-1``: every score is 0 (plus ALiBi's bias),
    so the output is the values averaged by the mask (and the bias) alone;
``prefill at 0`` and ``prefill at 600``
    the same random queries, keys and values at positions ``0 .. n-1`` and
    ``600 .. 600+n-1``: a rotation queries and keys share gives both the same
    output (the scores read offsets only);
``decode``
    one query, the last of ``n`` cached keys at ``600 .. 600+n-1``, as in a
    decode step with a KV cache.

Each named mistake is a variant of the spec's attention (the reference, written
from the formula with the book's numerics) that the kit computes on the same
probes; a function whose outputs match a variant on every probe gets its name.
When none matches, the kit reads the attention weights off the uniform probe
(the values are full-rank, so ``weights = out @ pinv(values)``) and the prefill
pair, and says what it sees without a name.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..alibi import alibi_slopes
from ..rope import apply_rope
from .report import Evidence
from .spec import RotarySpec, UserCall

__all__ = ["ATTENTION_METHODS", "FAR", "AttentionSpec", "diagnose_attention", "probe_length", "reference_attention"]

#: The position methods the attention kind knows.
ATTENTION_METHODS = ("rope", "alibi", "nope")

#: Output tolerance per declared dtype (outputs are averages of values of size about 1).
_TOLERANCE = {"float32": 2e-4, "float16": 2e-2, "bfloat16": 1e-1}

#: Positions of the two prefill probes' first tokens, and of the decode probe's cache.
FAR = 600


@dataclass(frozen=True)
class AttentionSpec:
    """An attention spec, checked: the method, the head, its rotation or slopes, the mask and the dtype."""

    method: str
    head_dim: int
    n_heads: int
    causal: bool
    dtype: str
    rotary: RotarySpec | None = None

    @property
    def slopes(self) -> np.ndarray:
        """ALiBi's slope per head (Press et al.'s), or zeros for the other methods."""
        return alibi_slopes(self.n_heads) if self.method == "alibi" else np.zeros(self.n_heads)


@dataclass(frozen=True)
class Variant:
    """One way to compute attention: the spec's (all defaults) or one named slip."""

    q_at: str = "positions"  # "positions" (the last n_q), "rows" (0 .. n_q - 1), "first" (the first n_q)
    rotate_q: str = "same"  # "same", "none", "other-layout", "backwards"
    rotate_k: str = "same"
    rotate_v: bool = False
    bias_factor: float = 1.0
    mask: str = "causal"  # "causal", "none", "next" (one key too many), "top-left" (aligned to row 0)


def _rotate(rotary: RotarySpec, x: np.ndarray, positions: np.ndarray, how: str) -> np.ndarray:
    if how == "none":
        return x
    layout = rotary.layout
    if how == "other-layout":
        layout = "interleaved" if layout == "half" else "half"
    turned = -positions if how == "backwards" else positions
    out = apply_rope(
        x, turned.astype(np.float64), layout=layout, inv_freq=rotary.expected, rotary_dim=rotary.rotary_dim
    )
    out = np.array(out, dtype=np.float64)
    out[..., : rotary.rotary_dim] *= rotary.attention_factor
    return out


def _visible(spec: AttentionSpec, variant: Variant, n_q: int, positions: np.ndarray) -> np.ndarray:
    """Which keys each query may read, shape (n_q, n_k)."""
    n_k = positions.size
    rows = np.arange(n_q)[:, None]
    index = np.arange(n_k)[None, :]
    if variant.mask == "none" or (not spec.causal and variant.mask == "causal"):
        return np.ones((n_q, n_k), dtype=bool)
    if variant.mask == "next":
        return index <= rows + (n_k - n_q) + 1
    if variant.mask == "top-left":
        return index <= rows
    return positions[None, :] <= positions[-n_q:][:, None]


def reference_attention(
    spec: AttentionSpec,
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    positions: np.ndarray,
    variant: Variant = Variant(),
) -> np.ndarray:
    """softmax(q k^T / sqrt(d) + bias + mask) v, with the spec's method, or with one named slip."""
    n_q = q.shape[-2]
    q_pos = {"positions": positions[-n_q:], "rows": np.arange(n_q), "first": positions[:n_q]}[variant.q_at]
    if spec.rotary is not None:
        q = _rotate(spec.rotary, q, q_pos, variant.rotate_q)
        k = _rotate(spec.rotary, k, positions, variant.rotate_k)
        if variant.rotate_v:
            v = _rotate(spec.rotary, v, positions, "same")
    scale = 1.0 / np.sqrt(spec.head_dim)
    logits = np.einsum("bhid,bhjd->bhij", q, k) * scale
    distance = positions[-n_q:][:, None] - positions[None, :]
    if spec.method == "alibi":
        offset = distance if spec.causal else np.abs(distance)
        logits = logits - variant.bias_factor * spec.slopes[None, :, None, None] * offset[None, None]
    logits = np.where(_visible(spec, variant, n_q, positions)[None, None], logits, -np.inf)
    weights = np.exp(logits - logits.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return np.einsum("bhij,bhjd->bhid", weights, v)


@dataclass(frozen=True)
class Probe:
    """One call of the user's function: its name and inputs."""

    name: str
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    positions: np.ndarray


def probe_length(head_dim: int) -> int:
    """Tokens per probe: at most 6, and no more than the features (the values must be full-rank)."""
    return min(head_dim, 6)


def _probes(spec: AttentionSpec) -> list[Probe]:
    """The four probes of the module docstring (seeded: the same numbers on every run)."""
    n = probe_length(spec.head_dim)
    heads = spec.n_heads
    rng = np.random.default_rng(45)
    q, k, v = rng.normal(size=(3, 1, heads, n, spec.head_dim))
    zeros = np.zeros_like(q)
    near, far = np.arange(n, dtype=np.int64), FAR + np.arange(n, dtype=np.int64)
    return [
        Probe(f"uniform: zero queries and keys at positions 40 .. {40 + n - 1}", zeros, zeros, v, 40 + near),
        Probe(f"prefill at positions 0 .. {n - 1}", q, k, v, near),
        Probe(f"prefill at positions {FAR} .. {FAR + n - 1}", q, k, v, far),
        Probe(f"decode: one query at position {FAR + n - 1} over {n} cached keys", q[:, :, -1:], k, v, far),
    ]


#: The named slips, by method: (bug, variant, what it does).
_SLIPS: dict[str, list[tuple[str, Variant, str]]] = {
    "rope": [
        ("rope-on-values", Variant(rotate_v=True), "the values come back rotated by their keys' positions"),
        ("offset-keys-only", Variant(q_at="rows"), "the queries are rotated as rows 0, 1, ... of their block"),
        ("offset-keys-only", Variant(q_at="first"), "the queries are rotated at the block's first positions"),
        ("qk-rotated-differently", Variant(rotate_q="none"), "the keys are rotated and the queries are not"),
        ("qk-rotated-differently", Variant(rotate_k="none"), "the queries are rotated and the keys are not"),
        ("qk-rotated-differently", Variant(rotate_q="other-layout"), "the queries are rotated in the other layout"),
        ("qk-rotated-differently", Variant(rotate_k="other-layout"), "the keys are rotated in the other layout"),
        ("qk-rotated-differently", Variant(rotate_q="backwards"), "the queries are rotated by minus the angle"),
    ],
    "alibi": [],
    "nope": [],
}
_MASKS = [
    ("causal-mask", Variant(mask="none"), "no causal mask: every query reads every key, later ones included"),
    ("causal-mask", Variant(mask="next"), "the mask lets each query read one key past its own position"),
    ("causal-mask", Variant(mask="top-left"), "the mask is aligned to the top left: a decoded query reads key 0 only"),
]


def _slips(spec: AttentionSpec) -> list[tuple[str, Variant, str]]:
    """The named slips to try for this spec: the method's, ALiBi's scale side (sqrt(d) of this head), masks."""
    slips = list(_SLIPS[spec.method])
    if spec.method == "alibi":
        root = float(np.sqrt(spec.head_dim))
        slips += [
            ("bias-outside-scale", Variant(bias_factor=1 / root), "the bias is divided by sqrt(d) with the scores"),
            ("bias-outside-scale", Variant(bias_factor=root), "the bias is multiplied by sqrt(d)"),
        ]
    return slips + (_MASKS if spec.causal else [])


def _close(spec: AttentionSpec, got: np.ndarray, meant: np.ndarray) -> bool:
    return bool(np.all(np.abs(got - meant) <= _TOLERANCE[spec.dtype] * max(1.0, float(np.max(np.abs(meant))))))


def _weights(out: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Attention weights read off ``out = weights @ v`` (v full-rank, keys no more than features)."""
    return np.einsum("bhid,bhdj->bhij", out, np.linalg.pinv(v))


def _unnamed(spec: AttentionSpec, probes: list[Probe], outs: list[np.ndarray]) -> Evidence:
    """What the kit sees when no named slip explains the outputs."""
    uniform, near, far = probes[0], probes[1], probes[2]
    if not _close(spec, outs[0], reference_attention(spec, uniform.q, uniform.k, uniform.v, uniform.positions)):
        weights = _weights(outs[0], uniform.v)
        rows_ok = np.allclose(weights.sum(axis=-1), 1.0, atol=1e-2) and np.min(weights) > -1e-2
        if not rows_ok:
            note = "with zero queries and keys the output is not an average of the values: the values are changed"
            return Evidence(uniform.name, note)
        n = uniform.positions.size
        future = np.triu(np.ones((n, n), dtype=bool), 1)
        if spec.causal and np.max(weights[..., future]) > 1e-2:
            note = "with zero queries and keys, queries put weight on later keys: the causal mask leaks"
            return Evidence(uniform.name, note, bug="causal-mask")
        what = "the bias" if spec.method == "alibi" else "the mask"
        note = f"with zero queries and keys the weights differ from the spec's: {what} is not the spec's"
        if spec.method == "alibi":
            note += "; check the bias alone with the alibi kind"
        return Evidence(uniform.name, note)
    if spec.method == "rope" and not _close(spec, outs[1], outs[2]):
        note = (
            "the same queries and keys give other outputs at positions 0 .. and 600 ..: the scores depend on "
            "where the tokens sit, not only on their offsets, so queries and keys are not rotated alike"
        )
        return Evidence(f"{near.name} and {far.name}", note, bug="qk-rotated-differently")
    if spec.method == "rope":
        note = "the rotation queries and keys share differs from the spec's: check it with the rope kind"
        return Evidence(near.name, note)
    return Evidence(near.name, "the outputs differ from the spec's attention in a way no named slip explains")


def diagnose_attention(call: UserCall, spec: AttentionSpec) -> tuple[list[Evidence], bool, list[str]]:
    """Run the probes; return the evidence (empty when the function conforms), whether it is named, notes."""
    probes = _probes(spec)
    outs = [call((p.q, p.k, p.v, p.positions.copy()), p.name, p.q.shape) for p in probes]
    meant = [reference_attention(spec, p.q, p.k, p.v, p.positions) for p in probes]
    failing = [i for i, (got, ref) in enumerate(zip(outs, meant, strict=True)) if not _close(spec, got, ref)]
    if not failing:
        return [], True, []
    for bug, variant, note in _slips(spec):
        if all(
            _close(spec, got, reference_attention(spec, p.q, p.k, p.v, p.positions, variant))
            for p, got in zip(probes, outs, strict=True)
        ):
            return [Evidence(probes[failing[0]].name, note, bug=bug)], True, []
    found = _unnamed(spec, probes, outs)
    return [found], found.bug is not None, []
