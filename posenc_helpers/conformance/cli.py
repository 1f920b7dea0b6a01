"""``python -m posenc_helpers.conformance KIND MODULE:FUNCTION [spec options]``."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from .attention import ATTENTION_METHODS
from .diagnosis import diagnose
from .formats import DTYPES
from .sinusoidal import CONVENTIONS

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m posenc_helpers.conformance",
        description=(
            "Check a positional-encoding function against what it is meant to compute, and name the bug.\n\n"
            "What FUNCTION must look like, by KIND (numpy arrays in; numpy, torch or JAX arrays out):\n"
            "  sinusoidal        fn(positions, d_model) -> table, shape (n, d_model);\n"
            "                    positions: integers, shape (n,)\n"
            "  rope              fn(x, positions) -> x rotated, same shape as x;\n"
            "                    x: shape (batch, seq, head_dim); positions: integers, shape (seq,)\n"
            "  rope_frequencies  fn() -> inverse frequencies, shape (rotary_dim // 2,),\n"
            "                    or (inverse frequencies, attention factor)\n"
            "  alibi             fn(n_heads, seq_len) -> bias added to the logits,\n"
            "                    shape (n_heads, seq_len, seq_len)\n"
            "  attention         fn(q, k, v, positions) -> output, q's shape;\n"
            "                    q: (batch, n_heads, n_q, head_dim), k and v: (batch, n_heads, n_k, head_dim),\n"
            "                    n_q <= n_k; positions: the keys' integer positions, shape (n_k,); the\n"
            "                    queries are the last n_q tokens (a prefill, or a decode step with a KV\n"
            "                    cache). q, k, v come projected, not yet position-encoded: fn applies the\n"
            "                    method (--method), the scale 1/sqrt(head_dim) and the causal mask.\n\n"
            "What each kind can see: rope, sinusoidal, alibi and rope_frequencies check the position code\n"
            "alone (frequencies, layout, direction, offsets, precision, slopes); only attention sees what\n"
            "the code around it does (rotary on the values, queries and keys rotated differently, a cache\n"
            "offset on the keys only, ALiBi's bias on the wrong side of the scale, the causal mask), and it\n"
            "leaves the rotation's own details to the rope kind.\n\n"
            "Conventions the spec can declare (none of them is a bug when declared):\n"
            "  sinusoidal --convention vaswani (default: base**(-2k/d), interleaved) | tensor2tensor | fairseq\n"
            "             (base**(-k/(d/2 - 1)), sines then cosines); --downscale-freq-shift S: diffusers'\n"
            "             get_timestep_embedding, base**(-k/(d/2 - S)) (0: the paper's, 1: tensor2tensor's);\n"
            "             --layout interleaved | concat (sines, then cosines) | concat-cos-first (cosines,\n"
            "             then sines: diffusers' flip_sin_to_cos=True)\n"
            "  rope       --layout half (default: GPT-NeoX, Hugging Face) | interleaved (RoFormer, GPT-J,\n"
            "             Meta's Llama); --rotary-fraction / --rotary-dim; --scaling (rescalings)\n"
            "  all kinds that compute cos/sin: --dtype float32 (default) | bfloat16 | float16: the model's\n"
            "             dtype; cos/sin tables rounded to it conform, with a note of what that costs (a\n"
            "             bounded error); angles rounded to a low precision are a bug at every dtype\n"
            "  alibi      Press et al.'s slopes for any head count; --no-causal for a bias without a mask\n\n"
            "Probes: rope and sinusoidal reach positions 8193, 32769 and 131073 (and\n"
            "--max-position-embeddings - 1 when given), past where long contexts break."
        ),
        epilog=(
            "Example: python -m posenc_helpers.conformance rope mypackage.module:rope --head-dim 64 "
            "--base 10000 --layout half --dtype bfloat16\n"
            "Exit status: 0 when the function conforms, 1 when it does not (or raised), 2 for a usage error."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("kind", choices=("sinusoidal", "rope", "rope_frequencies", "alibi", "attention"))
    parser.add_argument("function", help="the function to check, as package.module:function")
    parser.add_argument("--method", choices=ATTENTION_METHODS, help="attention: rope (default), alibi or nope")
    parser.add_argument("--head-dim", type=int, help="rope, rope_frequencies, attention: width of one head")
    parser.add_argument("--d-model", type=int, help="sinusoidal: width of the encoding; rope: the model width")
    parser.add_argument("--base", type=float, help="the base (default 10000)")
    parser.add_argument(
        "--layout",
        help="rope, attention: half (default) or interleaved; sinusoidal: interleaved, concat or concat-cos-first",
    )
    parser.add_argument(
        "--convention",
        choices=CONVENTIONS,
        help="sinusoidal: the paper's table (default) or tensor2tensor's and fairseq's (sines | cosines, d/2 - 1)",
    )
    parser.add_argument(
        "--downscale-freq-shift",
        type=float,
        help="sinusoidal: diffusers' downscale_freq_shift S, the exponent over d/2 - S (overrides the convention's)",
    )
    parser.add_argument("--dtype", choices=DTYPES, help="rope, sinusoidal, attention: the model's dtype (float32)")
    parser.add_argument(
        "--max-position-embeddings", type=int, help="rope, sinusoidal: the context length; its last position is probed"
    )
    parser.add_argument("--rotary-fraction", type=float, help="rope, attention: fraction of the head that rotates")
    parser.add_argument("--rotary-dim", type=int, help="rope, attention: number of features that rotate")
    parser.add_argument(
        "--scaling",
        help=(
            "rope, rope_frequencies: the rescaling as a JSON object of scaled_rope_frequencies' arguments, e.g. "
            '\'{"method": "linear", "factor": 4}\', DeepSeek-style YaRN \'{"method": "yarn", "factor": 40, '
            '"original_max_len": 4096, "mscale": 1.0, "mscale_all_dim": 1.0}\' or p-RoPE '
            '\'{"method": "proportional", "partial_rotary_factor": 0.25}\'; a key the method does not read is refused'
        ),
    )
    parser.add_argument(
        "--no-causal", action="store_true", help="alibi, attention: the bias (attention) is meant without a causal mask"
    )
    parser.add_argument(
        "--n-heads", help="alibi: head counts to probe, comma-separated (default 4,8,6,12); attention: one count"
    )
    return parser


def _load(target: str) -> Callable[..., Any]:
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"function must be written package.module:function, got {target!r}")
    obj: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        obj = getattr(obj, part)
    return obj


def _scaling(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        example = '{"method": "linear", "factor": 4}'
        raise ValueError(f"--scaling must be a JSON object such as '{example}': {exc}") from None


def _spec(args: argparse.Namespace) -> dict[str, Any]:
    heads = None if not args.n_heads else [int(item) for item in args.n_heads.split(",")]
    if args.kind == "alibi":
        spec: dict[str, Any] = {"causal": not args.no_causal, "n_heads": heads}
    else:
        spec = {
            "method": args.method,
            "head_dim": args.head_dim,
            "d_model": args.d_model,
            "base": args.base,
            "layout": args.layout,
            "convention": args.convention,
            "downscale_freq_shift": args.downscale_freq_shift,
            "dtype": args.dtype,
            "max_position_embeddings": args.max_position_embeddings,
            "rotary_fraction": args.rotary_fraction,
            "rotary_dim": args.rotary_dim,
            "scaling": None if args.scaling is None else _scaling(args.scaling),
        }
        if args.kind == "attention":
            spec["causal"] = False if args.no_causal else None
            spec["n_heads"] = None if heads is None else (heads[0] if len(heads) == 1 else heads)
    return {key: value for key, value in spec.items() if value is not None}


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: diagnose a function named ``package.module:function`` and print the report.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name (default ``sys.argv[1:]``): the kind,
        the function, and the spec as options (``--head-dim 64 --base 10000
        --layout half``; ``--help`` lists them).

    Returns
    -------
    int
        0 when the function conforms; 1 when it does not, or raised on a probe;
        2 when the arguments, the spec or the function cannot be used (the
        reason goes to stderr).

    Raises
    ------
    SystemExit
        From argparse, for ``--help`` (status 0) and malformed options (status 2).

    Examples
    --------
    >>> main(["alibi", "posenc_helpers:alibi_bias"])
    ALiBi (causal=True): conforms on every probe up to position 5.
    0
    """
    args = _parser().parse_args(argv)
    try:
        fn = _load(args.function)
        report = diagnose(args.kind, fn, **_spec(args))
    except (ImportError, AttributeError, ValueError, TypeError) as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    print(report)
    return 0 if report.ok else 1
