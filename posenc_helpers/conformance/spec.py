"""What the user meant (the spec), checked once, and the guarded call of the user's function."""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import describe_value, require_choice, require_count, require_even_width, require_positive_real
from ..long_context import SCALING_METHODS, scaled_rope_frequencies
from ..rope import rope_frequencies
from .angles import FrequencyMeaning
from .formats import DTYPES

__all__ = [
    "KINDS",
    "SCALING_KEYS",
    "RotarySpec",
    "UserCall",
    "UserFunctionFailed",
    "normalise_spec",
    "require_dtype",
    "require_max_positions",
    "rotary_spec",
]

KINDS = ("sinusoidal", "rope", "rope_frequencies", "alibi", "attention")

_ROTARY_KEYS = ("head_dim", "base", "layout", "rotary_fraction", "rotary_dim", "scaling", "d_model")

#: The spec keys each kind accepts, and those it requires.
SPEC_KEYS: dict[str, tuple[str, ...]] = {
    "sinusoidal": (
        "d_model",
        "base",
        "layout",
        "convention",
        "downscale_freq_shift",
        "dtype",
        "max_position_embeddings",
    ),
    "rope": (*_ROTARY_KEYS, "dtype", "max_position_embeddings"),
    "rope_frequencies": ("head_dim", "base", "rotary_fraction", "rotary_dim", "scaling", "d_model"),
    "alibi": ("causal", "n_heads"),
    "attention": ("method", *_ROTARY_KEYS, "dtype", "max_position_embeddings", "causal", "n_heads"),
}
REQUIRED: dict[str, tuple[str, ...]] = {
    "sinusoidal": ("d_model",),
    "rope": ("head_dim",),
    "rope_frequencies": ("head_dim",),
    "alibi": (),
    "attention": ("head_dim",),
}


#: The keys ``scaling`` takes besides ``method``, by method: the
#: :func:`~posenc_helpers.scaled_rope_frequencies` arguments that method reads.
SCALING_KEYS: dict[str, tuple[str, ...]] = {
    "linear": ("factor", "original_max_len"),
    "ntk": ("factor", "original_max_len"),
    "dynamic": ("factor", "original_max_len", "seq_len"),
    "yarn": (
        "factor",
        "original_max_len",
        "beta_fast",
        "beta_slow",
        "truncate",
        "attention_factor",
        "mscale",
        "mscale_all_dim",
    ),
    "llama3": ("factor", "original_max_len", "low_freq_factor", "high_freq_factor"),
    "longrope": ("factor", "original_max_len", "short_factor", "long_factor", "seq_len", "attention_factor"),
    "proportional": ("factor", "partial_rotary_factor"),
}

#: Hugging Face config names a ``scaling`` mapping may carry by habit, and the kit's name for each.
_CONFIG_NAMES = {
    "rope_type": "method",
    "type": "method",
    "original_max_position_embeddings": "original_max_len",
    "rope_theta": "base (a spec key of its own, outside scaling)",
}

#: First-parameter names that say a RoPE function takes the positions first (the kit passes x first).
_POSITION_NAMES = frozenset({"positions", "position_ids", "pos", "position"})


class UserFunctionFailed(Exception):
    """The user's function raised on a probe; ``str()`` is the report's ``error`` line."""


def normalise_spec(kind: Any, spec: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """Check ``kind`` and that ``spec`` holds only the keys that kind takes, and the required ones."""
    if not isinstance(kind, str):
        raise TypeError(f"kind must be one of {', '.join(map(repr, KINDS))}, got {describe_value(kind)}")
    kind = require_choice(kind, "kind", KINDS)
    unknown = sorted(set(spec) - set(SPEC_KEYS[kind]))
    if unknown:
        raise TypeError(
            f"spec for kind={kind!r} takes {', '.join(SPEC_KEYS[kind])}; got the unknown key(s) {', '.join(unknown)}"
        )
    for name in REQUIRED[kind]:
        if spec.get(name) is None:
            raise TypeError(f"spec for kind={kind!r} requires {name}")
    return kind, {key: value for key, value in spec.items() if value is not None}


@dataclass(frozen=True)
class RotarySpec:
    """A RoPE spec, checked: widths, base, layout, the rescaling, and the frequencies it implies."""

    head_dim: int
    base: float
    layout: str
    rotary_dim: int
    d_model: int | None
    expected: np.ndarray
    attention_factor: float
    unscaled: np.ndarray | None
    shown: dict[str, Any]
    turning: int = 0
    dtype: str = "float32"
    max_position_embeddings: int | None = None

    def __post_init__(self) -> None:
        if not self.turning:  # every pair of the rotated width turns, unless p-RoPE says fewer
            object.__setattr__(self, "turning", self.rotary_dim // 2)

    @property
    def proportional(self) -> bool:
        """Whether only the first ``turning`` pairs of the whole head turn (p-RoPE, frequency 0 for the rest)."""
        return self.turning < self.rotary_dim // 2

    def other_widths(self) -> dict[int, str]:
        """Denominators a real code uses by mistake: d_model, or the head where the rotated width is meant.

        For p-RoPE, the reverse: the rotated width (ordinary partial rotary) where the whole head is meant.
        """
        widths: dict[int, str] = {}
        if self.d_model is not None and self.d_model != self.rotary_dim:
            widths[self.d_model] = "d_model"
        if self.rotary_dim != self.head_dim:
            widths[self.head_dim] = "head_dim (the whole head, where the rotated width is meant)"
        if self.proportional:
            widths[2 * self.turning] = "the rotated width (ordinary partial rotary, not p-RoPE's whole head)"
        return widths

    def meaning(self, pairs: int | None = None) -> FrequencyMeaning:
        """What the frequencies of the first ``pairs`` pairs that turn (default all) were meant to be."""
        count = self.turning if pairs is None else min(pairs, self.turning)
        unscaled = None if self.unscaled is None else self.unscaled[:count]
        return FrequencyMeaning(self.expected[:count], self.base, self.rotary_dim, self.other_widths(), unscaled)


def _rotary_dim(spec: Mapping[str, Any], head_dim: int) -> int:
    fraction = spec.get("rotary_fraction")
    given = spec.get("rotary_dim")
    from_fraction = None
    if fraction is not None:
        fraction = require_positive_real(fraction, "rotary_fraction")
        if fraction > 1:
            raise ValueError(f"rotary_fraction must be in (0, 1], got {fraction}")
        from_fraction = int(head_dim * fraction)
        if from_fraction < 2 or from_fraction % 2:
            raise ValueError(
                f"rotary_fraction={fraction} gives int(head_dim * rotary_fraction) = {from_fraction} rotated "
                "features; that must be a positive even number"
            )
    if given is not None:
        given = require_even_width(given, "rotary_dim")
        if given > head_dim:
            raise ValueError(f"rotary_dim must be <= head_dim = {head_dim}, got {given}")
        if from_fraction is not None and from_fraction != given:
            raise ValueError(
                f"rotary_dim={given} and rotary_fraction={fraction} contradict each other "
                f"(head_dim * rotary_fraction = {from_fraction}); give one"
            )
        return given
    return head_dim if from_fraction is None else from_fraction


def rotary_spec(kind: str, spec: Mapping[str, Any]) -> RotarySpec:
    """Check a RoPE spec and compute the frequencies (and attention factor) it means."""
    head_dim = require_even_width(spec["head_dim"], "head_dim")
    base = require_positive_real(spec.get("base", 10000.0), "base")
    layout = require_choice(spec.get("layout", "half"), "layout", ("interleaved", "half"))
    rotary_dim = _rotary_dim(spec, head_dim)
    dtype = require_dtype(spec.get("dtype"))
    max_positions = require_max_positions(spec.get("max_position_embeddings"))
    d_model = spec.get("d_model")
    if d_model is not None:
        d_model = require_even_width(d_model, "d_model")
        if d_model < head_dim:
            raise ValueError(f"d_model must be >= head_dim = {head_dim}, got {d_model}")
    unscaled = rope_frequencies(rotary_dim, base=base)
    scaling = spec.get("scaling")
    shown: dict[str, Any] = {"head_dim": head_dim, "base": base}
    if kind != "rope_frequencies":
        shown["layout"] = layout
    if rotary_dim != head_dim:
        shown["rotary_dim"] = rotary_dim
    if d_model is not None:
        shown["d_model"] = d_model
    if dtype != "float32":
        shown["dtype"] = dtype
    if max_positions is not None:
        shown["max_position_embeddings"] = max_positions
    if scaling is None:
        return RotarySpec(
            head_dim, base, layout, rotary_dim, d_model, unscaled, 1.0, None, shown, 0, dtype, max_positions
        )
    if not isinstance(scaling, Mapping) or "method" not in scaling:
        raise TypeError(
            "scaling must be a mapping of scaled_rope_frequencies' keyword arguments with a 'method', "
            f"e.g. {{'method': 'linear', 'factor': 4.0}}; got {describe_value(scaling)}"
        )
    method = _scaling_method(scaling)
    if method == "proportional" and rotary_dim != head_dim:
        raise ValueError(
            "scaling: method='proportional' (p-RoPE) keeps the whole head's pairs and sets how many turn with "
            "its own partial_rotary_factor; give that inside scaling, not rotary_fraction or rotary_dim "
            f"(which give ordinary partial rotary), got rotary_dim {rotary_dim} of head_dim {head_dim}"
        )
    try:
        expected, attention_factor = scaled_rope_frequencies(rotary_dim, base=base, **dict(scaling))
    except TypeError as exc:
        raise TypeError(f"scaling: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"scaling: {exc}") from None
    if expected.shape != unscaled.shape:
        raise ValueError(f"scaling: method {method!r} gives {expected.size} frequencies, not rotary_dim // 2")
    shown["scaling"] = dict(scaling)
    turning = int(np.count_nonzero(expected)) if method == "proportional" else rotary_dim // 2
    if turning == 0:
        raise ValueError(
            "scaling: partial_rotary_factor leaves no pair turning (int(partial_rotary_factor * head_dim // 2) "
            f"= 0 for head_dim {head_dim}); give a larger share"
        )
    return RotarySpec(
        head_dim,
        base,
        layout,
        rotary_dim,
        d_model,
        expected,
        float(attention_factor),
        unscaled,
        shown,
        turning,
        dtype,
        max_positions,
    )


def require_dtype(value: Any) -> str:
    """The declared dtype of the model's tables: one of :data:`~.formats.DTYPES` (default float32)."""
    if value is None:
        return "float32"
    if not isinstance(value, str):
        raise TypeError(f"dtype must be one of {', '.join(map(repr, DTYPES))}, got {describe_value(value)}")
    return require_choice(value, "dtype", DTYPES)


def require_max_positions(value: Any) -> int | None:
    """The model's context length (``max_position_embeddings``), an integer >= 1, or None."""
    if value is None:
        return None
    return require_count(value, "max_position_embeddings", minimum=1)


def _scaling_method(scaling: Mapping[str, Any]) -> str:
    """The rescaling's method, after every other key of ``scaling`` is checked to be one that method reads."""
    method = scaling["method"]
    if not isinstance(method, str):
        raise TypeError(f"scaling: method must be one of {', '.join(map(repr, SCALING_METHODS))}, got {method!r}")
    if method not in SCALING_KEYS:
        raise ValueError(f"scaling: method must be one of {', '.join(map(repr, SCALING_METHODS))}, got {method!r}")
    allowed = SCALING_KEYS[method]
    for key in scaling:
        if key == "method" or key in allowed:
            continue
        hint = f"; the kit's name for {key!r} is {_CONFIG_NAMES[key]}" if key in _CONFIG_NAMES else ""
        raise ValueError(
            f"scaling: method={method!r} takes {', '.join(allowed)}; got the key {key!r} it does not read{hint}"
        )
    return method


def require_alibi_heads(value: Any) -> tuple[int, ...]:
    """The head counts to probe: an int or a sequence of ints >= 1 (default 4, 8, 6, 12)."""
    if value is None:
        return (4, 8, 6, 12)
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return (require_count(value, "n_heads", minimum=1),)
    if isinstance(value, (list, tuple)) and value:
        return tuple(require_count(item, "n_heads", minimum=1) for item in value)
    raise TypeError(f"n_heads must be an integer >= 1 or a non-empty list of them, got {describe_value(value)}")


def _as_float_array(value: Any) -> np.ndarray:
    """Convert what a user function returned (numpy, torch, JAX, lists) to float64."""
    for method in ("detach", "cpu"):
        if hasattr(value, method) and callable(getattr(value, method)):
            value = getattr(value, method)()
    if "bfloat16" in str(getattr(value, "dtype", "")) and hasattr(value, "float"):
        value = value.float()
    return np.asarray(value, dtype=np.float64)


@dataclass(frozen=True)
class UserCall:
    """The user's function with the kit's conventions: its signature checked, inputs converted, outputs read."""

    fn: Callable[..., Any]
    accepts: str
    inputs_as: Callable[[np.ndarray], Any] | None = None

    @classmethod
    def checked(cls, fn: Any, accepts: str, arity: int, inputs_as: Callable[[np.ndarray], Any] | None) -> UserCall:
        """Refuse a non-callable, or one whose signature cannot take ``arity`` positional arguments."""
        if not callable(fn):
            raise TypeError(f"fn must be a callable {accepts}, got {describe_value(fn)}")
        if inputs_as is not None and not callable(inputs_as):
            raise TypeError(
                f"inputs_as must be a callable that converts a numpy array, got {describe_value(inputs_as)}"
            )
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError):  # builtins without a signature: find out by calling
            return cls(fn, accepts, inputs_as)
        name = getattr(fn, "__name__", type(fn).__name__)
        try:
            signature.bind(*range(arity))
        except TypeError:
            raise TypeError(f"fn must be a callable {accepts}; its signature is {name}{signature}") from None
        params = [
            p.name for p in signature.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        if accepts.startswith("fn(x, positions)") and params and params[0] in _POSITION_NAMES:
            raise TypeError(
                f"fn must be a callable {accepts}: the kit passes x first and the positions second, but "
                f"{name}{signature} takes {params[0]!r} first; wrap it, e.g. lambda x, positions: "
                f"{name}(positions, x)"
            )
        return cls(fn, accepts, inputs_as)

    def _called_as(self, args: tuple[Any, ...]) -> str:
        """``fn(x, positions) with x of shape (8, 10, 8) float64, positions of shape (10,) int64``."""
        names = self.accepts[self.accepts.index("(") + 1 : self.accepts.index(")")].split(", ")
        parts = []
        for arg_name, arg in zip(names, args, strict=False):
            if isinstance(arg, np.ndarray):
                parts.append(f"{arg_name} of shape {arg.shape} {arg.dtype}")
            else:
                parts.append(f"{arg_name} = {arg!r}")
        head = self.accepts.split(" -> ")[0]
        return head + (" with " + ", ".join(parts) if parts else "")

    def __call__(
        self, args: tuple[Any, ...], probe: str, shape: tuple[int, ...], finite_where: np.ndarray | None = None
    ) -> np.ndarray:
        """Call on the probe's arguments; check the output's shape and finiteness (where ``finite_where``)."""
        converted = tuple(
            self.inputs_as(arg) if self.inputs_as is not None and isinstance(arg, np.ndarray) else arg for arg in args
        )
        try:
            # the probes pass float16's range on purpose: an overflow there is evidence, not a warning
            with np.errstate(over="ignore", invalid="ignore"):
                out = self.fn(*converted)
        except Exception as exc:  # reported in the Report, with the probe, not swallowed
            raise UserFunctionFailed(
                f"{type(exc).__name__}: {exc} (on {probe}; the kit called {self._called_as(args)}, "
                f"and expects {self.accepts})"
            ) from exc
        try:
            array = _as_float_array(out)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"fn must return an array of real numbers ({self.accepts}); on {probe}: {exc}") from None
        if array.shape != shape:
            raise ValueError(
                f"fn returned shape {array.shape} on {probe}; a callable {self.accepts} must return shape {shape}"
            )
        finite = np.isfinite(array) | (np.zeros(shape, dtype=bool) if finite_where is None else ~finite_where)
        if not np.all(finite):
            where = tuple(int(i) for i in np.argwhere(~finite)[0])
            raise ValueError(f"fn returned {array[where]!r} at index {where} on {probe}; its output must be finite")
        return array
