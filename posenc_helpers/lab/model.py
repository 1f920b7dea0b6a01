"""A tiny decoder-only transformer in JAX whose position method is one argument.

Every position method of the book enters the model at one of three places, which
the model calls *hooks*:

1. **add** a vector to each token's embedding: sinusoidal (fixed, from
   :func:`~posenc_helpers.sinusoidal_encoding`) or learned (a trained table);
2. **rotate** queries and keys, in every layer: RoPE (angles from
   :func:`~posenc_helpers.rope_frequencies`, or rescaled ones from
   :func:`~posenc_helpers.scaled_rope_frequencies`);
3. **bias** the attention logits, in every layer: ALiBi (from
   :func:`~posenc_helpers.alibi_bias`) or T5's learned bucket biases (buckets from
   :func:`~posenc_helpers.t5_relative_bucket`).

``"nope"`` uses none of them: only the causal mask, which is part of the bias.
:func:`position_hooks` builds the hooks with the book's own helpers, in numpy;
:func:`forward` is the whole model. A method's unused hooks are neutral (zeros,
a rotation by 0), so one compiled function serves all six methods.

Two choices are for speed on a CPU, with the same numbers: the MLP uses ReLU, as the
original Transformer did, rather than GELU (on the reference CPU the tanh-GELU took
about 40 % of a training step), and the token embedding is a product with one-hot rows
rather than an indexed lookup (its gradient is then a matrix product, not a scatter).
``make bench`` reports the training throughput as a fraction of a 2048² float32 matrix
product timed in the same run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from .._validation import require_choice, require_count, require_positive_real
from ..alibi import alibi_bias
from ..relative import t5_relative_bucket
from ..rope import rope_frequencies
from ..sinusoidal import sinusoidal_encoding

__all__ = ["METHODS", "ModelConfig", "Hooks", "position_hooks", "init_params", "forward", "rotate_pairs"]

#: The position methods, in the order the chapter shows them.
METHODS: tuple[str, ...] = ("nope", "sinusoidal", "learned", "t5", "rope", "alibi")


@dataclass(frozen=True)
class ModelConfig:
    """Sizes of the model. The defaults are the lab's text model: about 0.59 M weights.

    ``t5_max_distance`` is where T5's logarithmic buckets end; every distance from
    there on shares the last bucket. The default 32 is half the lab's training
    length, so every bucket, the last included, is trained (T5 itself used 128 with
    512-token inputs). ``table_std`` is the standard deviation of the learned
    table's initial rows, 0.02 by default (the ``initializer_range`` Hugging Face's
    GPT-2 applies to every weight; OpenAI's own GPT-2 code draws its position table
    with 0.01): rows that training never reaches stay near zero.
    """

    d_model: int = 128
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int = 512
    vocab: int = 256
    max_positions: int = 1024  # rows of the learned table (those past train_len stay untrained)
    t5_buckets: int = 32
    t5_max_distance: int = 32
    table_std: float = 0.02

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    def __post_init__(self) -> None:
        for name in (
            "d_model",
            "n_layers",
            "n_heads",
            "d_ff",
            "vocab",
            "max_positions",
            "t5_buckets",
            "t5_max_distance",
        ):
            require_count(getattr(self, name), name, minimum=1)
        require_positive_real(self.table_std, "table_std")
        if self.d_model % self.n_heads or self.head_dim % 2:
            raise ValueError(
                f"d_model must split into n_heads heads of even width, got d_model={self.d_model}, "
                f"n_heads={self.n_heads}"
            )


class Hooks(NamedTuple):
    """Where positions enter the model, for one sequence length ``L`` (see the module docstring)."""

    add: np.ndarray  # (L, d_model): added to the embeddings (sinusoidal; else 0)
    use_table: np.ndarray  # () 1.0 for "learned": also add the trained table's first L rows
    cos: np.ndarray  # (L, head_dim/2): RoPE's cos(m θ_i) (1 for the other methods)
    sin: np.ndarray  # (L, head_dim/2): RoPE's sin(m θ_i) (0 for the other methods)
    bias: np.ndarray  # (n_heads, L, L): ALiBi's bias (else 0) plus the causal mask (-inf)
    bucket: np.ndarray  # (L, L) int: T5's bucket of key - query
    use_buckets: np.ndarray  # () 1.0 for "t5": also add the trained bias of each bucket


def position_hooks(
    method: str,
    length: int,
    config: ModelConfig = ModelConfig(),
    *,
    inv_freq: np.ndarray | None = None,
    attention_factor: float = 1.0,
) -> Hooks:
    """The hooks of ``method`` for sequences of ``length`` tokens, built with the book's helpers.

    Parameters
    ----------
    method : {"nope", "sinusoidal", "learned", "t5", "rope", "alibi"}
        The position method.
    length : int
        Sequence length ``L >= 1``.
    config : ModelConfig, optional
        The model's sizes.
    inv_freq : numpy.ndarray, optional
        RoPE frequencies to use instead of ``rope_frequencies(head_dim)``, for
        instance rescaled by :func:`~posenc_helpers.scaled_rope_frequencies`.
    attention_factor : float, optional
        YaRN's factor: cos and sin are multiplied by it, so that every logit is
        multiplied by its square (as in Hugging Face's implementation). Default 1.

    Returns
    -------
    Hooks
        float32 arrays (``bucket`` int32).

    Examples
    --------
    >>> hooks = position_hooks("alibi", 3, ModelConfig(n_heads=4))
    >>> hooks.bias[0]
    array([[ 0.  , -inf, -inf],
           [-0.25,  0.  , -inf],
           [-0.5 , -0.25,  0.  ]], dtype=float32)
    >>> position_hooks("rope", 3).cos.shape, float(position_hooks("nope", 3).sin.max())
    ((3, 16), 0.0)
    """
    method = require_choice(method, "method", METHODS)
    length = require_count(length, "length", minimum=1)
    attention_factor = require_positive_real(attention_factor, "attention_factor")
    half = config.head_dim // 2
    add = np.zeros((length, config.d_model))
    angles = np.zeros((length, half))
    bias = np.zeros((config.n_heads, length, length))
    bucket = np.zeros((length, length), dtype=np.int32)
    positions = np.arange(length)

    if method == "sinusoidal":
        add = sinusoidal_encoding(length, config.d_model)
    elif method == "rope":
        theta = rope_frequencies(config.head_dim) if inv_freq is None else np.asarray(inv_freq, float)
        if theta.shape != (half,):
            raise ValueError(f"inv_freq must have shape ({half},), got {theta.shape}")
        angles = positions[:, None] * theta[None, :]
    elif method == "alibi":
        bias = alibi_bias(config.n_heads, length)  # -m_h (i - j), and -inf above the diagonal
    elif method == "t5":
        key_minus_query = positions[None, :] - positions[:, None]
        bucket = t5_relative_bucket(
            key_minus_query, bidirectional=False, num_buckets=config.t5_buckets, max_distance=config.t5_max_distance
        ).astype(np.int32)
    causal = np.where(positions[None, :] > positions[:, None], -np.inf, 0.0)
    bias = bias + causal  # alibi_bias is already masked; -inf + -inf stays -inf
    rope_scale = attention_factor if method == "rope" else 1.0
    return Hooks(
        add=add.astype(np.float32),
        use_table=np.asarray(method == "learned", dtype=np.float32),
        cos=(rope_scale * np.cos(angles)).astype(np.float32),
        sin=(rope_scale * np.sin(angles)).astype(np.float32),
        bias=bias.astype(np.float32),
        bucket=bucket,
        use_buckets=np.asarray(method == "t5", dtype=np.float32),
    )


def init_params(key: jax.Array, config: ModelConfig = ModelConfig()) -> dict:
    """Random initial weights (a pytree of float32 arrays).

    Embeddings are N(0, 1); the learned position table N(0, ``config.table_std``²)
    (0.02 by default, Hugging Face's GPT-2 ``initializer_range``; ``sqrt(0.5)`` gives
    rows the norm sqrt(d_model / 2) of sinusoidal rows); matrices are scaled by
    1/sqrt(fan in), the two that write into the residual stream also by
    1/sqrt(2 n_layers); T5's bucket biases start at 0.

    Examples
    --------
    >>> import jax
    >>> params = init_params(jax.random.PRNGKey(0), ModelConfig(n_layers=1))
    >>> params["embed"].shape, params["table"].shape, len(params["layers"])
    ((256, 128), (1024, 128), 1)
    """
    d, f, v = config.d_model, config.d_ff, config.vocab
    keys = iter(jax.random.split(key, 4 + 4 * config.n_layers))

    def normal(shape: tuple[int, ...], scale: float) -> jax.Array:
        return scale * jax.random.normal(next(keys), shape, dtype=jnp.float32)

    residual = 1.0 / math.sqrt(2 * config.n_layers)
    return {
        "embed": normal((v, d), 1.0),
        "table": normal((config.max_positions, d), config.table_std),
        "buckets": jnp.zeros((config.t5_buckets, config.n_heads), jnp.float32),
        "layers": [
            {
                "norm1": jnp.ones(d),
                "qkv": normal((d, 3 * d), d**-0.5),
                "out": normal((d, d), d**-0.5 * residual),
                "norm2": jnp.ones(d),
                "up": normal((d, f), d**-0.5),
                "down": normal((f, d), f**-0.5 * residual),
            }
            for _ in range(config.n_layers)
        ],
        "norm": jnp.ones(d),
        "unembed": normal((d, v), d**-0.5),
    }


def rotate_pairs(x: ArrayLike, cos: ArrayLike, sin: ArrayLike) -> jax.Array:
    """RoPE on ``x`` of shape (..., L, head_dim): pair (2i, 2i+1) turned by the angle of (cos, sin)[:, i].

    The interleaved layout of :func:`~posenc_helpers.apply_rope`.

    Examples
    --------
    A pair turned by a quarter circle:

    >>> import numpy as np
    >>> out = rotate_pairs(np.array([[1.0, 0.0]]), np.array([[0.0]]), np.array([[1.0]]))
    >>> np.asarray(out).tolist()
    [[0.0, 1.0]]
    """
    x = jnp.asarray(x)
    a, b = x[..., 0::2], x[..., 1::2]
    return jnp.stack([a * cos - b * sin, a * sin + b * cos], axis=-1).reshape(x.shape)


def _layer_norm(x: jax.Array, scale: jax.Array) -> jax.Array:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * scale


def forward(
    params: dict, tokens: jax.Array, hooks: Hooks, n_heads: int, *, trace: bool = False
) -> jax.Array | tuple[jax.Array, list[dict]]:
    """Next-token logits ``(batch, L, vocab)`` for ``tokens`` of shape ``(batch, L)``.

    With ``trace=True`` also, for every layer, a dict with the queries and keys
    before rotation (``"q"``, ``"k"``, each ``(batch, n_heads, L, head_dim)``)
    and the attention weights (``"attention"``, ``(batch, n_heads, L, L)``).

    Examples
    --------
    >>> import jax, numpy as np
    >>> config = ModelConfig(d_model=16, n_layers=1, n_heads=2, d_ff=32, max_positions=64)
    >>> params = init_params(jax.random.PRNGKey(0), config)
    >>> tokens = np.array([[104, 105, 33]])   # b"hi!"
    >>> forward(params, tokens, position_hooks("rope", 3, config), config.n_heads).shape
    (1, 3, 256)
    """
    batch, length = tokens.shape
    # The embedding as a product with one-hot rows: the same numbers as indexing, and its
    # gradient is a matrix product too (indexing's is a scatter, three times slower here).
    x = jax.nn.one_hot(tokens, params["embed"].shape[0], dtype=params["embed"].dtype) @ params["embed"]
    x = x + hooks.add + hooks.use_table * params["table"][:length]  # hook 1: add
    bias = hooks.bias + hooks.use_buckets * params["buckets"][hooks.bucket].transpose(2, 0, 1)
    traced = []
    for layer in params["layers"]:
        h = _layer_norm(x, layer["norm1"]) @ layer["qkv"]  # (batch, L, 3 d)
        q, k, v = h.reshape(batch, length, 3, n_heads, -1).transpose(2, 0, 3, 1, 4)
        q_rot, k_rot = rotate_pairs(q, hooks.cos, hooks.sin), rotate_pairs(k, hooks.cos, hooks.sin)  # hook 2
        logits = q_rot @ k_rot.swapaxes(-1, -2) / math.sqrt(q.shape[-1]) + bias  # hook 3: bias
        attention = jax.nn.softmax(logits, axis=-1)
        traced.append({"q": q, "k": k, "attention": attention})
        heads = (attention @ v).transpose(0, 2, 1, 3).reshape(batch, length, -1)
        x = x + heads @ layer["out"]
        x = x + jax.nn.relu(_layer_norm(x, layer["norm2"]) @ layer["up"]) @ layer["down"]  # ReLU, as in Vaswani et al.
    logits = _layer_norm(x, params["norm"]) @ params["unembed"]
    return (logits, traced) if trace else logits
